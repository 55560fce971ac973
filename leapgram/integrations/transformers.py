"""Constrained generation with Hugging Face transformers models.

:class:`LeapgramLogitsProcessor` plugs into ``model.generate(logits_processor=[...])`` (one
matcher per batch row, masks applied with bit operations). :func:`generate` is leapgram's own
loop over a KV cache: forced tokens are appended without sampling, and by default
(``jump_forward="draft"``) drafts from :mod:`leapgram.drafts` are verified in one pass, so the
output is that of plain decoding in fewer passes. Design: docs/design/generation.md.
Needs the ``torch`` extra (torch and transformers).
"""

from __future__ import annotations

import functools
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from transformers import LogitsProcessor

import leapgram
from leapgram import CompiledGrammar, Grammar, Matcher, Vocabulary, allocate_token_bitmask
from leapgram.compiler import compiler_for
from leapgram.drafts import Drafter, DraftPolicy, draft_length

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
        grammar = Grammar.from_json_schema(grammar)
    if not isinstance(grammar, Grammar):
        raise ValueError(f"grammar must be a leapgram.Grammar, CompiledGrammar or JSON Schema dict, "
                         f"not {type(grammar).__name__}")
    return compiler_for(vocab).compile(grammar)  # kept with the vocabulary: a schema compiles once


def _cache_argument(model: Any) -> str:
    """The name under which the model's ``forward`` takes the KV cache: ``cache`` from transformers
    5.x on (``past_key_values`` there is deprecated, with a warning per call), else ``past_key_values``."""
    return _cache_argument_of(type(model))


@functools.cache
def _cache_argument_of(model_class: type) -> str:
    import inspect

    return "cache" if "cache" in inspect.signature(model_class.forward).parameters else "past_key_values"


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
    drafted_tokens: int = 0
    accepted_tokens: int = 0
    forced_tokens: int = 0
    draft_kinds: dict[str, list[int]] = field(default_factory=dict)

    @property
    def output_tokens(self) -> int:
        """Tokens appended to the output, sampled or fast-forwarded (EOS not counted)."""
        return self.sampled_tokens + self.fast_forwarded_tokens

    def count_draft(self, kind: str, accepted: bool) -> None:
        """A draft token of ``kind`` fed to the model, and whether it was kept."""
        counts = self.draft_kinds.setdefault(kind, [0, 0])
        counts[0] += 1
        counts[1] += accepted
        self.drafted_tokens += 1
        self.accepted_tokens += accepted
        self.forced_tokens += accepted and kind == "forced"

    def __add__(self, other: GenerationStats) -> GenerationStats:
        kinds = {kind: [a + b for a, b in zip(self.draft_kinds.get(kind, [0, 0]), other.draft_kinds.get(kind, [0, 0]))]
                 for kind in {**self.draft_kinds, **other.draft_kinds}}
        return GenerationStats(*(getattr(self, f) + getattr(other, f) for f in self.__dataclass_fields__
                                 if f != "draft_kinds"), draft_kinds=kinds)

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
    """Greedy at ``temperature`` 0; otherwise one uniform draw per output position, turned into a
    token by the inverse of the (nucleus) distribution. A draft is kept exactly when that token
    is the draft, and a token the grammar forces still takes its draw, so a seeded run writes
    the same tokens with or without jump-forward and drafts (up to float differences between a
    wide and a narrow forward pass). Each row draws from its own generator, seeded in prompt
    order from ``generator``: how many tokens another row takes per step changes nothing."""

    temperature: float
    top_p: float
    generator: torch.Generator | None

    def row_generator(self) -> torch.Generator | None:
        if self.generator is None or self.temperature <= 0.0:
            return None
        return torch.Generator().manual_seed(int(torch.randint(0, 2**62, (1,), generator=self.generator)))

    def __call__(self, logits: torch.Tensor, generator: torch.Generator | None = None) -> int:
        if self.temperature <= 0.0:
            return int(torch.argmax(logits))
        probs = torch.softmax(logits.float() / self.temperature, dim=-1)
        if self.top_p < 1.0:
            probs = _top_p(probs, self.top_p)
        cumulative = torch.cumsum(probs.double(), dim=-1)
        point = float(torch.rand(1, generator=generator, dtype=torch.float64)) * float(cumulative[-1])
        return min(int(torch.searchsorted(cumulative, torch.tensor([point], dtype=torch.float64), right=True)),
                   probs.shape[-1] - 1)

    def skip(self, generator: torch.Generator | None = None) -> None:
        """A forced token's position: its draw is taken, as a sample of it would have taken it."""
        if self.temperature > 0.0:
            torch.rand(1, generator=generator, dtype=torch.float64)


def _top_p(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    sorted_probs, order = torch.sort(probs, descending=True)
    outside = torch.cumsum(sorted_probs, dim=-1) - sorted_probs > top_p
    sorted_probs[outside] = 0.0
    return torch.zeros_like(probs).scatter_(-1, order, sorted_probs)


def generate(model: Any, tokenizer: Any, prompts: str | Sequence[str],
             grammar: Grammar | CompiledGrammar | dict | None, *, max_new_tokens: int,
             temperature: float = 0.0, top_p: float = 1.0, seed: int | None = None,
             jump_forward: bool | str = "draft", heal_prompt: bool = True,
             batch_size: int = 1) -> list[GenerationResult]:
    """Generate one output per prompt that follows ``grammar`` (``None``: unconstrained).

    ``prompts`` are already formatted (apply the chat template first, e.g. with
    :func:`leapgram.integrations.smollm2.chat_prompt`). Greedy at ``temperature`` 0, otherwise
    sampling with nucleus ``top_p`` from a generator seeded with ``seed``. With ``jump_forward``
    the tokens the grammar forces are appended without sampling and fed in one forward pass;
    the output is the same as without when the model itself would choose those tokens — which a
    canonical tokenization does not guarantee: a small model under a grammar often spells words
    in other tokens. ``jump_forward="verify"`` keeps exactly the output of ``False``
    (greedy tokens, or the sampling distribution): forced tokens are fed as a draft in the same
    single forward pass, kept while the model agrees, and the rest is masked out of the cache.
    ``jump_forward="draft"`` (the default) feeds a longer draft the same way, with the same output: the forced tokens, the whitespace
    this document wrote at the same separator and depth, and the tokens that followed the
    output's tail in the prompt or earlier in the output (:mod:`leapgram.drafts`), as many as the
    measured cost of a wider forward pass and the recent acceptance rate pay for.
    ``heal_prompt`` backs the prompt off its last tokens where leapgram's prompt healing is
    available, so the output may start with a token that crosses the prompt's end.

    Prompts are decoded ``batch_size`` at a time (default 1, one after another), a batch sharing
    one KV cache and one forward pass per step; with several rows, the time of a forward pass is
    split evenly among the rows it served. Returns one :class:`GenerationResult` per prompt.
    """
    if max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be at least 1, got {max_new_tokens}")
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if jump_forward not in JUMP_FORWARD_MODES:
        raise ValueError(f"jump_forward must be True, False, 'verify' or 'draft', not {jump_forward!r}")
    vocab = vocabulary_of(tokenizer)
    compiled = None if grammar is None else compile_for(grammar, vocab)
    generator = None if seed is None else torch.Generator().manual_seed(seed)
    eos = _eos_ids(tokenizer, vocab)
    pad_id = tokenizer.pad_token_id if getattr(tokenizer, "pad_token_id", None) is not None else min(eos)
    decoder = _Decoder(model, vocab, compiled, _Sampler(temperature, top_p, generator),
                       jump_forward=jump_forward, eos=eos, pad_id=pad_id)
    texts = [prompts] if isinstance(prompts, str) else list(prompts)
    encoded = [tokenizer(text, add_special_tokens=True)["input_ids"] for text in texts]
    heal = heal_prompt and compiled is not None
    results = []
    for first in range(0, len(encoded), batch_size):
        results.extend(decoder.run(encoded[first:first + batch_size], max_new_tokens, heal=heal))
    return results


JUMP_FORWARD_MODES = (True, False, "verify", "draft")
MAX_DRAFT = 24
"""Most tokens one draft feeds (the pass cost keeps growing with its width)."""

_POLICIES: weakref.WeakKeyDictionary[Any, DraftPolicy] = weakref.WeakKeyDictionary()


def draft_policy(model: Any) -> DraftPolicy:
    """The pass costs and acceptance rates measured for ``model`` so far in this process (kept
    while the model lives)."""
    policy = _POLICIES.get(model)
    if policy is None:
        policy = _POLICIES[model] = DraftPolicy()
    return policy


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
        ids = _first_attribute(healed, ("tokens", "token_ids", "prompt_tokens"))
        prefix = _first_attribute(healed, ("prefix", "required_prefix"))
    return list(ids), bytes(prefix)


def _first_attribute(value: object, names: tuple[str, ...]) -> Any:
    for name in names:
        if hasattr(value, name):
            return getattr(value, name)
    raise TypeError(f"heal_prompt returned {type(value).__name__}, with none of {names}")


@dataclass
class _Row:
    """One prompt in flight: its matcher, the tokens not yet fed to the model (``pending``), the
    output so far, its counters and, once it stops, why."""

    index: int
    matcher: Matcher | None
    prefix: bytes
    pending: list[int]
    began: float
    output: list[int] = field(default_factory=list)
    stats: GenerationStats = field(default_factory=GenerationStats)
    reason: str | None = None
    fed: bool = False
    draft: list[int] = field(default_factory=list)
    draft_kinds: list[str] = field(default_factory=list)
    logits: torch.Tensor | None = None
    drafter: Drafter | None = None
    generator: torch.Generator | None = None

    def append(self, token: int) -> None:
        self.pending.append(token)
        self.took(token)

    def extend(self, tokens: list[int]) -> None:
        for token in tokens:
            self.append(token)

    def took(self, token: int) -> None:
        """Add ``token`` to the output (already fed to the model, or pending)."""
        self.output.append(token)
        if self.drafter is not None:
            self.drafter.append(token)


class _Decoder:
    """The loop of :func:`generate` for one batch of prompts sharing a KV cache.

    Each step, every running row first takes what the grammar forces (jump-forward) and fills its
    mask row; then one forward pass feeds every row its pending tokens — the last sampled token
    and any forced ones, the whole prompt at the first step. Rows with fewer pending tokens are
    padded on the left of the step's block and the padding is masked out of attention, so
    positions (from the attention mask's running count) stay those of an unpadded sequence.
    """

    def __init__(self, model: Any, vocab: Vocabulary, compiled: CompiledGrammar | None, sampler: _Sampler,
                 *, jump_forward: bool | str, eos: frozenset[int], pad_id: int) -> None:
        self.model = model
        self.vocab = vocab
        self.compiled = compiled
        self.sample = sampler
        self.jump_forward = bool(jump_forward)
        self.verify = jump_forward in ("verify", "draft")
        self.drafts = jump_forward == "draft"
        self.policy = draft_policy(model)
        self.eos = eos
        self.pad_id = pad_id

    def run(self, prompts: list[list[int]], max_new_tokens: int, *, heal: bool) -> list[GenerationResult]:
        began = time.perf_counter()
        rows = [self._row(i, ids, heal, began) for i, ids in enumerate(prompts)]
        self.bitmask = allocate_token_bitmask(len(rows), self.vocab.size)
        self.cache: Any = None
        self.attention: torch.Tensor | None = None
        while True:
            ready = [row for row in rows if row.reason is None and self._prepare(row, max_new_tokens)]
            if not ready:
                break
            fresh = [row for row in ready if row.logits is None]
            if fresh:
                logits = self._forward(rows, fresh)
                for row in fresh:
                    row.logits = logits[row.index]
            for row in ready:
                logits, row.logits = row.logits, None
                self._take(row, logits)
        return [self._result(row) for row in rows]

    def _row(self, index: int, prompt_ids: list[int], heal: bool, began: float) -> _Row:
        if not prompt_ids:
            raise ValueError("a prompt encoded to no tokens: the model needs at least one "
                             "(a tokenizer that adds no BOS token needs a non-empty prompt)")
        ids, prefix = healed_prompt(self.vocab, prompt_ids) if heal else (list(prompt_ids), b"")
        if not ids:  # healing would leave the model nothing to read: keep the prompt whole
            ids, prefix = list(prompt_ids), b""
        matcher = self._matcher(prefix)
        if matcher is None and self.compiled is not None:
            ids, prefix, matcher = list(prompt_ids), b"", self._matcher(b"")
        row = _Row(index, matcher, prefix, list(ids), began)
        row.generator = self.sample.row_generator()
        if self.drafts and matcher is not None:
            row.drafter = Drafter(self.vocab, ids)
        row.stats.prompt_tokens = len(ids)
        return row

    def _matcher(self, prefix: bytes) -> Matcher | None:
        if self.compiled is None:
            return None
        if not prefix:
            return Matcher(self.compiled)
        try:
            return Matcher(self.compiled, required_prefix=prefix)
        except TypeError:
            return None

    def _result(self, row: _Row) -> GenerationResult:
        data = self.vocab.decode(row.output)
        text = data.removeprefix(row.prefix)
        matcher = row.matcher
        complete = matcher is None or matcher.is_terminated() or matcher.is_accepting()
        return GenerationResult(text.decode("utf-8", "replace"), row.output, row.reason or "length", complete,
                                row.stats)

    def _finish(self, row: _Row, reason: str) -> bool:
        row.reason = reason
        row.stats.total_seconds = time.perf_counter() - row.began
        return False

    def _prepare(self, row: _Row, limit: int) -> bool:
        """Take forced tokens and fill the row's mask; whether the row needs the model's logits."""
        matcher = row.matcher
        while len(row.output) < limit:
            if matcher is None or row.draft:
                return True
            if self.jump_forward and row.logits is None and self._jump(row, limit):
                continue
            if matcher.is_terminated():
                return self._finish(row, "grammar")
            if matcher.is_error():
                return self._finish(row, "error")
            reason = self._mask(row)
            if reason == "jumped":
                row.logits = None
                continue
            return True if reason is None else self._finish(row, reason)
        return self._finish(row, "length")

    def _jump(self, row: _Row, limit: int) -> bool:
        began = time.perf_counter()
        if row.drafter is not None:
            forced, kinds = row.drafter.propose(row.matcher, min(limit - len(row.output), MAX_DRAFT))
            keep = draft_length(kinds, self.policy)
            forced, kinds = forced[:keep], kinds[:keep]
        else:
            forced = fast_forward_tokens(row.matcher)[: limit - len(row.output)]
            forced = forced[: row.matcher.validate_tokens(forced)] if forced else forced
            kinds = ["forced"] * len(forced)
        row.stats.mask_seconds += time.perf_counter() - began
        if not forced:
            return False
        if self.verify:
            row.draft, row.draft_kinds = forced, kinds
            row.pending.extend(forced)
            return True
        for _ in forced:  # their positions' draws, as a sample of them would take them
            self.sample.skip(row.generator)
        row.matcher.consume_tokens(forced)
        row.extend(forced)
        row.stats.fast_forwarded_tokens += len(forced)
        return True

    def _mask(self, row: _Row) -> str | None:
        """Fill the row's bitmask; stop where only EOS (or nothing) is allowed; with jump-forward,
        append a token that is the only one allowed without asking the model."""
        began = time.perf_counter()
        row.matcher.fill_next_token_bitmask(self.bitmask, row.index)
        sole = _few_allowed(self.bitmask[row.index], self.vocab.size, len(self.eos) + 1)
        row.stats.mask_seconds += time.perf_counter() - began
        if sole is None:
            return None
        if not sole:
            return "error"
        if self.eos.issuperset(sole):
            row.matcher.consume_token(sole[0])
            return "grammar"
        if self.jump_forward and len(sole) == 1:
            self.sample.skip(row.generator)
            row.matcher.consume_token(sole[0])
            row.append(sole[0])
            row.stats.fast_forwarded_tokens += 1
            row.stats.forced_tokens += 1
            return "jumped"
        return None

    def _take(self, row: _Row, logits: torch.Tensor) -> None:
        """Sample from the last of ``logits`` (positions, vocab), or verify the row's draft."""
        if row.draft:
            self._check_draft(row, logits)
            return
        if row.matcher is not None:
            apply_token_bitmask_torch(logits[-1], self.bitmask[row.index])
        self._commit(row, self.sample(logits[-1], row.generator))

    def _check_draft(self, row: _Row, logits: torch.Tensor) -> None:
        """Keep the draft's tokens while the model would have chosen them; at the first it would
        not, take the model's choice and mask the rest of the draft out of the cache. After a
        whole draft, the last position's logits wait for the next mask."""
        draft, row.draft = row.draft, []
        kinds, row.draft_kinds = row.draft_kinds, []
        for j, token in enumerate(draft):
            step = logits[j - len(draft) - 1]
            began = time.perf_counter()
            row.matcher.fill_next_token_bitmask(self.bitmask, row.index)
            row.stats.mask_seconds += time.perf_counter() - began
            # the draw a plain run takes here: the draft is kept exactly when it is the model's choice
            choice = self.sample(apply_token_bitmask_torch(step, self.bitmask[row.index]), row.generator)
            self.policy.observe_draft(kinds[j], choice == token)
            if choice != token:
                for kind in kinds[j:]:
                    row.stats.count_draft(kind, False)
                self._drop(row, len(draft) - j)
                self._commit(row, choice)
                return
            row.stats.count_draft(kinds[j], True)
            row.matcher.consume_token(token)
            row.took(token)
            row.stats.fast_forwarded_tokens += 1
        row.logits = logits

    def _drop(self, row: _Row, count: int) -> None:
        """Take the last ``count`` positions of the row's sequence out of the model's sight: a
        single row crops them off the cache, a batch masks them out of attention."""
        layers = getattr(self.cache, "layers", None)
        if self.attention.shape[0] == 1 and layers and all(getattr(layer, "is_croppable", False) for layer in layers):
            self.cache.crop(-count)  # a negative length removes that many positions
            self.attention = self.attention[:, :-count]
            return
        self.attention[row.index, self.attention.shape[1] - count:] = 0

    def _commit(self, row: _Row, token: int) -> None:
        if token in self.eos:
            if row.matcher is not None:
                row.matcher.consume_token(token)
            self._finish(row, "eos")
            return
        row.stats.sampled_tokens += 1
        if row.matcher is not None and not row.matcher.consume_token(token):
            self._finish(row, "error")
            return
        row.append(token)

    def _forward(self, rows: list[_Row], ready: list[_Row]) -> torch.Tensor:
        began, began_cpu = time.perf_counter(), time.process_time()
        width = max(len(row.pending) for row in ready)
        keep = 1 + max(len(row.draft) for row in ready)
        ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        block = torch.zeros((len(rows), width), dtype=torch.long)
        for row in ready:
            count = len(row.pending)
            ids[row.index, width - count:] = torch.tensor(row.pending, dtype=torch.long)
            block[row.index, width - count:] = 1
            row.pending = []
        device = _device_of(self.model)
        ids, block = ids.to(device), block.to(device)
        self.attention = block if self.attention is None else torch.cat([self.attention, block], dim=1)
        positions = (self.attention.cumsum(dim=1) - 1).clamp(min=0)[:, -width:]
        with torch.inference_mode():
            out = self.model(input_ids=ids, attention_mask=self.attention, position_ids=positions,
                             use_cache=True, logits_to_keep=keep, **{_cache_argument(self.model): self.cache})
        self.cache = out.cache if "cache" in out else out.past_key_values
        seconds = time.perf_counter() - began
        if all(row.fed for row in ready):  # CPU time: the pass's own cost, whatever else runs on the machine
            self.policy.observe_pass(width, time.process_time() - began_cpu)
        share = seconds / len(ready)
        for row in ready:
            row.stats.forward_passes += 1
            row.stats.model_seconds += share
            if not row.fed:
                row.stats.prefill_seconds += share
                row.fed = True
        # the kept positions' logits come back to the CPU once per pass (masks, sampling and the
        # draft checks run there; at most MAX_DRAFT + 1 positions a row)
        return out.logits.to("cpu", torch.float32, copy=True)


def _device_of(model: Any) -> torch.device:
    """Where ``model``'s inputs go: its ``device`` attribute, else that of its first parameter."""
    device = getattr(model, "device", None)
    if isinstance(device, torch.device):
        return device
    for parameter in model.parameters():
        return parameter.device
    return torch.device("cpu")


def _few_allowed(row: np.ndarray, vocab_size: int, at_most: int) -> list[int] | None:
    """The allowed token ids of a bitmask row when there are at most ``at_most``, else ``None``."""
    words = row.view(np.uint32)
    count = int(np.bitwise_count(words).sum()) if hasattr(np, "bitwise_count") else None
    if count is not None and count > at_most:
        return None
    ids = np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little")[:vocab_size])
    return ids.tolist() if len(ids) <= at_most else None
