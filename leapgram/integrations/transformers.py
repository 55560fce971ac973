"""Constrained generation with Hugging Face transformers models.

Two ways in:

* :class:`LeapgramLogitsProcessor` plugs into ``model.generate(logits_processor=[...])``: one
  matcher per batch row, each consuming the token its row produced at the previous step, the
  masks applied on the tensor with bit operations (no Python loop over the vocabulary).
* :func:`generate` is leapgram's own decoding loop over a KV cache. Where the grammar forces the
  next tokens (``Matcher.fast_forward_tokens()``, or a mask that allows a single token) they are
  appended without sampling and fed to the model together with the token sampled before them,
  in one forward pass that extends the cache ("jump-forward" decoding). Prompts of a batch are
  decoded one after another with batch size 1: rows of one batch would jump forward by different
  lengths at different steps, and on the CPU a batch of one keeps the loop simple and exact.

Needs the ``torch`` extra (torch and transformers).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from transformers import LogitsProcessor

import leapgram
from leapgram import CompiledGrammar, Grammar, Matcher, Vocabulary, allocate_token_bitmask

from .torch import apply_token_bitmask_torch


# ----- vocabularies and grammars ---------------------------------------------------------------

def vocabulary_of(tokenizer: Any) -> Vocabulary:
    """The leapgram vocabulary of a transformers tokenizer, built once and kept on the tokenizer."""
    vocab = getattr(tokenizer, "_leapgram_vocabulary", None)
    if vocab is None:
        vocab = Vocabulary.from_huggingface(tokenizer)
        try:
            tokenizer._leapgram_vocabulary = vocab
        except AttributeError:
            pass
    return vocab


def compile_for(grammar: Grammar | CompiledGrammar | dict, vocab: Vocabulary) -> CompiledGrammar:
    """``grammar`` compiled for ``vocab``; a dict is a JSON Schema (needs ``Grammar.from_json_schema``)."""
    if isinstance(grammar, CompiledGrammar):
        if grammar.vocab is not vocab and grammar.vocab.size != vocab.size:
            raise ValueError(f"grammar compiled for a vocabulary of {grammar.vocab.size} tokens, "
                             f"the tokenizer has {vocab.size}")
        return grammar
    if isinstance(grammar, dict):
        from_schema = getattr(Grammar, "from_json_schema", None)
        if from_schema is None:
            raise leapgram.UnsupportedError("JSON Schema", "this version has no Grammar.from_json_schema; "
                                            "pass an equivalent Grammar.from_lark grammar")
        grammar = from_schema(grammar)
    if not isinstance(grammar, Grammar):
        raise ValueError(f"grammar must be a leapgram.Grammar, CompiledGrammar or JSON Schema dict, "
                         f"not {type(grammar).__name__}")
    return leapgram.compile(grammar, vocab)


# ----- logits processor ------------------------------------------------------------------------

class LeapgramLogitsProcessor(LogitsProcessor):
    """Masks ``model.generate`` scores so that each row of the batch follows ``grammar``.

    The first call sees the prompts and creates one matcher per row; every later call first
    feeds each row's last token (the one generated at the previous step) to its matcher. A row
    whose matcher terminated (EOS) allows only EOS, so padding after it is harmless. Beam search
    reorders rows and is not supported; create a new processor (or call :meth:`reset`) for each
    ``generate`` call.
    """

    def __init__(self, grammar: Grammar | CompiledGrammar | dict, tokenizer: Any = None, *,
                 vocab: Vocabulary | None = None) -> None:
        if vocab is None:
            if tokenizer is None:
                raise ValueError("LeapgramLogitsProcessor needs a tokenizer or vocab=")
            vocab = vocabulary_of(tokenizer)
        self.vocab = vocab
        self.compiled = compile_for(grammar, vocab)
        self.matchers: list[Matcher] = []
        self._prompt_length: int | None = None
        self._bitmask: np.ndarray | None = None

    def reset(self) -> None:
        """Forget the batch, ready for another ``generate`` call."""
        self.matchers = []
        self._prompt_length = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        batch = input_ids.shape[0]
        if self._prompt_length is None:
            self._start(batch, input_ids.shape[1])
        elif batch != len(self.matchers):
            raise ValueError(f"the batch changed from {len(self.matchers)} to {batch} rows "
                             "(beam search is not supported)")
        else:
            self._consume_last(input_ids[:, -1].tolist())
        for row, matcher in enumerate(self.matchers):
            matcher.fill_next_token_bitmask(self._bitmask, row)
        return apply_token_bitmask_torch(scores, self._bitmask)

    def _start(self, batch: int, prompt_length: int) -> None:
        self._prompt_length = prompt_length
        self.matchers = [Matcher(self.compiled) for _ in range(batch)]
        self._bitmask = allocate_token_bitmask(batch, self.vocab.size)

    def _consume_last(self, tokens: list[int]) -> None:
        for matcher, token in zip(self.matchers, tokens):
            if not (matcher.is_terminated() or matcher.is_error()):
                matcher.consume_token(token)


# ----- our own decoding loop -------------------------------------------------------------------

@dataclass
class GenerationStats:
    """Counters and timers of :func:`generate` (summed over prompts with ``+``).

    ``model_seconds`` is all forward passes, ``prefill_seconds`` the first one (the prompt, with
    any tokens fast-forwarded before the first sample), ``mask_seconds`` the matcher's work
    (masks, fast-forward tokens), ``total_seconds`` the whole call for the prompt."""

    prompt_tokens: int = 0
    forward_passes: int = 0
    sampled_tokens: int = 0
    fast_forwarded_tokens: int = 0
    mask_seconds: float = 0.0
    model_seconds: float = 0.0
    prefill_seconds: float = 0.0
    total_seconds: float = 0.0

    @property
    def output_tokens(self) -> int:
        """Tokens appended to the output, sampled or fast-forwarded (EOS not counted)."""
        return self.sampled_tokens + self.fast_forwarded_tokens

    def __add__(self, other: GenerationStats) -> GenerationStats:
        return GenerationStats(*(getattr(self, f) + getattr(other, f) for f in self.__dataclass_fields__))

    def as_dict(self) -> dict[str, float]:
        fields = {f: getattr(self, f) for f in self.__dataclass_fields__}
        return {**fields, "output_tokens": self.output_tokens}


@dataclass
class GenerationResult:
    """One prompt's output: ``text`` (decoded, without EOS), ``tokens`` (ids, EOS excluded),
    ``finish_reason`` (``"eos"``, ``"grammar"`` when the grammar allowed only EOS, ``"length"``,
    or ``"error"``), ``is_complete`` (the output is a full sentence of the grammar)."""

    text: str
    tokens: list[int]
    finish_reason: str
    is_complete: bool
    stats: GenerationStats = field(default_factory=GenerationStats)


@dataclass
class _Sampler:
    temperature: float
    top_p: float
    generator: torch.Generator | None

    def __call__(self, logits: torch.Tensor) -> int:
        if self.temperature <= 0.0:
            return int(torch.argmax(logits))
        probs = torch.softmax(logits.float() / self.temperature, dim=-1)
        if self.top_p < 1.0:
            probs = _top_p(probs, self.top_p)
        return int(torch.multinomial(probs, 1, generator=self.generator))


def _top_p(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    sorted_probs, order = torch.sort(probs, descending=True)
    outside = torch.cumsum(sorted_probs, dim=-1) - sorted_probs > top_p
    sorted_probs[outside] = 0.0
    return torch.zeros_like(probs).scatter_(-1, order, sorted_probs)


def generate(model: Any, tokenizer: Any, prompts: str | Sequence[str],
             grammar: Grammar | CompiledGrammar | dict | None, *, max_new_tokens: int,
             temperature: float = 0.0, top_p: float = 1.0, seed: int | None = None,
             jump_forward: bool = True, heal_prompt: bool = True) -> list[GenerationResult]:
    """Generate one output per prompt that follows ``grammar`` (``None``: unconstrained).

    ``prompts`` are already formatted (apply the chat template first, e.g. with
    :func:`leapgram.integrations.smollm2.chat_prompt`). Greedy at ``temperature`` 0, otherwise
    sampling with nucleus ``top_p`` from a generator seeded with ``seed``. With ``jump_forward``
    the tokens the grammar forces are appended without sampling and fed in one forward pass;
    the greedy output is the same either way when the fast-forward tokens are canonical.
    ``heal_prompt`` backs the prompt off its last tokens where leapgram's prompt healing is
    available, so the output may start with a token that crosses the prompt's end.

    Prompts are decoded one after another (batch size 1 each); returns one
    :class:`GenerationResult` per prompt.
    """
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    vocab = vocabulary_of(tokenizer)
    compiled = None if grammar is None else compile_for(grammar, vocab)
    generator = None if seed is None else torch.Generator().manual_seed(seed)
    decoder = _Decoder(model, vocab, compiled, _Sampler(temperature, top_p, generator),
                       jump_forward=jump_forward, eos=_eos_ids(tokenizer, vocab))
    texts = [prompts] if isinstance(prompts, str) else list(prompts)
    results = []
    for text in texts:
        prompt_ids = tokenizer(text, add_special_tokens=True)["input_ids"]
        results.append(decoder.run(prompt_ids, max_new_tokens, heal=heal_prompt and compiled is not None))
    return results


def _eos_ids(tokenizer: Any, vocab: Vocabulary) -> frozenset[int]:
    ids = set(vocab.eos_token_ids)
    if getattr(tokenizer, "eos_token_id", None) is not None:
        ids.add(int(tokenizer.eos_token_id))
    return frozenset(ids)


def fast_forward_tokens(matcher: Matcher) -> list[int]:
    """The matcher's canonical forced tokens, or ``[]`` where this version cannot compute them."""
    method = getattr(matcher, "fast_forward_tokens", None)
    return list(method()) if method is not None else []


def healed_prompt(vocab: Vocabulary, prompt_ids: list[int]) -> tuple[list[int], bytes]:
    """``(prompt ids, required output prefix)`` after leapgram's prompt healing, where available."""
    heal = getattr(leapgram, "heal_prompt", None)
    if heal is None:
        return list(prompt_ids), b""
    healed = heal(vocab, list(prompt_ids))
    if isinstance(healed, tuple):
        ids, prefix = healed
    else:
        ids, prefix = healed.tokens, healed.prefix
    return list(ids), bytes(prefix)


class _Decoder:
    """The loop of :func:`generate` for one prompt at a time."""

    def __init__(self, model: Any, vocab: Vocabulary, compiled: CompiledGrammar | None, sampler: _Sampler,
                 *, jump_forward: bool, eos: frozenset[int]) -> None:
        self.model = model
        self.vocab = vocab
        self.compiled = compiled
        self.sample = sampler
        self.jump_forward = jump_forward
        self.eos = eos
        self.bitmask = allocate_token_bitmask(1, vocab.size)

    def run(self, prompt_ids: list[int], max_new_tokens: int, *, heal: bool) -> GenerationResult:
        began = time.perf_counter()
        stats = GenerationStats()
        prompt_ids, prefix = healed_prompt(self.vocab, prompt_ids) if heal else (list(prompt_ids), b"")
        matcher = self._matcher(prefix)
        if matcher is None:
            prompt_ids, prefix, matcher = list(prompt_ids), b"", self._matcher(b"")
        stats.prompt_tokens = len(prompt_ids)
        state = _State(pending=list(prompt_ids))
        reason = self._loop(matcher, state, stats, max_new_tokens)
        stats.total_seconds = time.perf_counter() - began
        data = self.vocab.decode(state.output)
        text = data[len(prefix):] if data.startswith(prefix) else data
        complete = matcher is None or matcher.is_terminated() or matcher.is_accepting()
        return GenerationResult(text.decode("utf-8", "replace"), state.output, reason, complete, stats)

    def _matcher(self, prefix: bytes) -> Matcher | None:
        if self.compiled is None:
            return None
        if not prefix:
            return Matcher(self.compiled)
        try:
            return Matcher(self.compiled, required_prefix=prefix)
        except TypeError:
            return None

    def _loop(self, matcher: Matcher | None, state: _State, stats: GenerationStats, limit: int) -> str:
        while len(state.output) < limit:
            if matcher is not None:
                if self.jump_forward and self._jump(matcher, state, stats, limit):
                    continue
                if matcher.is_terminated():
                    return "grammar"
                if matcher.is_error():
                    return "error"
                reason = self._mask(matcher, state, stats, limit)
                if reason == "jumped":
                    continue
                if reason is not None:
                    return reason
            logits = self._forward(state, stats)
            if matcher is not None:
                apply_token_bitmask_torch(logits, self.bitmask)
            token = self.sample(logits)
            stats.sampled_tokens += token not in self.eos
            if token in self.eos:
                if matcher is not None:
                    matcher.consume_token(token)
                return "eos"
            if matcher is not None and not matcher.consume_token(token):
                return "error"
            state.append(token)
        return "length"

    def _jump(self, matcher: Matcher, state: _State, stats: GenerationStats, limit: int) -> bool:
        began = time.perf_counter()
        forced = fast_forward_tokens(matcher)[: limit - len(state.output)]
        forced = forced[: matcher.validate_tokens(forced)] if forced else forced
        stats.mask_seconds += time.perf_counter() - began
        if not forced:
            return False
        matcher.consume_tokens(forced)
        state.extend(forced)
        stats.fast_forwarded_tokens += len(forced)
        return True

    def _mask(self, matcher: Matcher, state: _State, stats: GenerationStats, limit: int) -> str | None:
        """Fill the bitmask; stop where only EOS (or nothing) is allowed; with jump-forward, append
        a token that is the only one allowed without asking the model."""
        began = time.perf_counter()
        matcher.fill_next_token_bitmask(self.bitmask, 0)
        sole = _few_allowed(self.bitmask[0], self.vocab.size, len(self.eos) + 1)
        stats.mask_seconds += time.perf_counter() - began
        if sole is None:
            return None
        if not sole:
            return "error"
        if self.eos.issuperset(sole):
            matcher.consume_token(sole[0])
            return "grammar"
        if self.jump_forward and len(sole) == 1:
            matcher.consume_token(sole[0])
            state.append(sole[0])
            stats.fast_forwarded_tokens += 1
            return "jumped"
        return None

    def _forward(self, state: _State, stats: GenerationStats) -> torch.Tensor:
        began = time.perf_counter()
        ids = torch.tensor([state.pending], dtype=torch.long)
        with torch.inference_mode():
            out = self.model(input_ids=ids, past_key_values=state.cache, use_cache=True, logits_to_keep=1)
        elapsed = time.perf_counter() - began
        if state.cache is None:
            stats.prefill_seconds += elapsed
        state.cache = out.past_key_values
        state.pending = []
        stats.forward_passes += 1
        stats.model_seconds += elapsed
        return out.logits[0, -1].float().clone()


@dataclass
class _State:
    """Tokens not yet fed to the model (``pending``), the KV cache and the output so far."""

    pending: list[int]
    cache: Any = None
    output: list[int] = field(default_factory=list)

    def append(self, token: int) -> None:
        self.pending.append(token)
        self.output.append(token)

    def extend(self, tokens: list[int]) -> None:
        self.pending.extend(tokens)
        self.output.extend(tokens)


def _few_allowed(row: np.ndarray, vocab_size: int, at_most: int) -> list[int] | None:
    """The allowed token ids of a bitmask row when there are at most ``at_most``, else ``None``."""
    words = row.view(np.uint32)
    count = int(np.bitwise_count(words).sum()) if hasattr(np, "bitwise_count") else None
    if count is not None and count > at_most:
        return None
    ids = np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little")[:vocab_size])
    return ids.tolist() if len(ids) <= at_most else None
