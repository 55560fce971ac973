"""Adapters for peer engines, so benchmarks can time them next to leapgram.

Each adapter exposes the same small surface as the leapgram side of a benchmark:
``compile(regex)``, ``new_matcher(compiled)``, ``consume(matcher, token)``,
``fill(matcher, bitmask)`` and ``allocate_bitmask()``. Peers are imported lazily,
so importing this module never requires them.

What llguidance caches (measured on llguidance 1.9.1 with the Llama-3 vocabulary,
see ``benchmarks/bench_regex_masks.py``):

- Per ``LLTokenizer`` (about 1 s to build): the token trie and the slicer's
  precomputed token sets for ``LLTokenizer.general_slices()``. Shared by all matchers.
- Per ``LLMatcher(tokenizer, grammar)``: a full compile of the grammar (about 0.8 ms
  for a one-regex grammar). Nothing is reused between two constructions, whether the
  grammar text is the same or not; the Python API has no compiled-grammar object.
- The lexer DFA (derivre) is built lazily during mask computation and is shared,
  behind a mutex, between a matcher and its ``deep_copy()`` clones. A clone of an
  already-used matcher computes its first mask faster than a fresh matcher does.
- Per matcher, a one-entry mask cache keyed by (lexer state, Earley row, pending
  bytes): filling again at the same state only copies the cached mask (about 5-10 µs),
  and so does filling after consuming tokens that leave the lexer state unchanged
  (for example inside a string). ``deep_copy()`` copies this cache too.

So a fair "fresh state" mask is the first fill of a matcher built by a fresh
``LLMatcher`` construction; :meth:`LlguidanceEngine.compile` returns such a matcher
(never filled) and :meth:`LlguidanceEngine.new_matcher` clones it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np


class LlguidanceEngine:
    """Regex masks from llguidance over a ``tokenizer.json``, offline."""

    name = "llguidance"

    def __init__(self, tokenizer_json_path: str | Path, *, use_slicer: bool = True) -> None:
        """Load the tokenizer (trie and slicer tables); ``load_seconds`` records the time.

        ``use_slicer=False`` passes ``slices=[]``, turning off llguidance's slicer so
        every mask is a plain trie walk.
        """
        import llguidance
        import llguidance.numpy

        self._llg = llguidance
        self._fill = llguidance.numpy.fill_next_token_bitmask
        self._allocate = llguidance.numpy.allocate_token_bitmask
        self.path = str(tokenizer_json_path)
        self.use_slicer = use_slicer
        start = time.perf_counter()
        self.tokenizer = self.load_tokenizer()
        self.load_seconds = time.perf_counter() - start

    def load_tokenizer(self) -> Any:
        """Build a fresh ``LLTokenizer`` from the tokenizer.json path (no network)."""
        slices = None if self.use_slicer else []
        return self._llg.LLTokenizer(self.path, slices=slices)

    @property
    def version(self) -> str:
        """The installed llguidance version."""
        return str(self._llg.__version__)

    @property
    def vocab_size(self) -> int:
        """Number of token ids, the width of a mask in bits."""
        return int(self.tokenizer.vocab_size)

    @property
    def eos_token_ids(self) -> list[int]:
        """The EOS token ids llguidance allows when the grammar accepts."""
        return [int(t) for t in self.tokenizer.eos_tokens]

    def compile(self, regex: str) -> Any:
        """Compile ``regex`` (Rust regex syntax) into a fresh, never-filled matcher.

        Raises ``ValueError`` with llguidance's message if the regex is invalid.
        """
        grammar = self._llg.LLMatcher.grammar_from_regex(regex)
        matcher = self._llg.LLMatcher(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise ValueError(f"llguidance rejected {regex!r}: {matcher.get_error()}")
        return matcher

    def new_matcher(self, compiled: Any) -> Any:
        """A matcher at the start state; shares ``compiled``'s lexer DFA."""
        return compiled.deep_copy()

    def consume(self, matcher: Any, token: int) -> bool:
        """Advance ``matcher`` by one token; False if the token is not allowed."""
        return bool(matcher.consume_token(token))

    def fill(self, matcher: Any, bitmask: np.ndarray) -> None:
        """Write the next-token mask of ``matcher`` into row 0 of ``bitmask``."""
        self._fill(matcher, bitmask, 0)

    def allocate_bitmask(self) -> np.ndarray:
        """An int32 array of shape ``(1, ceil(vocab_size / 32))``."""
        return self._allocate(1, self.vocab_size)


class LlguidanceLarkEngine(LlguidanceEngine):
    """Context-free masks from llguidance: ``compile`` takes a Lark grammar text.

    Same caching as the regex adapter (module docstring): each ``compile`` is a full
    ``LLMatcher`` construction, nothing is reused between two of them.
    """

    name = "llguidance"

    def compile(self, lark_text: str) -> Any:  # type: ignore[override]
        """Compile ``lark_text`` (llguidance's Lark dialect) into a fresh, never-filled matcher.

        Raises ``ValueError`` with llguidance's message if the grammar is invalid.
        """
        grammar = self._llg.LLMatcher.grammar_from_lark(lark_text)
        matcher = self._llg.LLMatcher(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise ValueError(f"llguidance rejected the Lark grammar: {matcher.get_error()}")
        return matcher

    def fill_row(self, matcher: Any, bitmask: np.ndarray, index: int) -> None:
        """Write the next-token mask of ``matcher`` into row ``index`` of ``bitmask``."""
        self._fill(matcher, bitmask, index)

    def tokenize(self, data: bytes) -> list[int]:
        """llguidance's own tokenization of ``data`` (no special tokens)."""
        return [int(t) for t in self.tokenizer.tokenize_bytes(data)]


# ----- JSON Schema adapters (``benchmarks/bench_schemas.py``) -------------------------------

WARMUP_SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


class PeerGrammarError(Exception):
    """A peer refused the schema."""


class LlguidanceSchemaEngine:
    """llguidance's ``grammar_from_json_schema`` with its defaults; a fresh ``LLMatcher`` per case.

    The surface of ``bench_schemas.LeapgramEngine``: ``compile(schema text)`` (a never-filled
    matcher), ``matcher``, ``fill`` (row 0 of ``bitmask``), ``consume``, ``first_error``,
    ``classify``, ``prepare``, ``eos``."""

    name = "llguidance"
    checks_key_order = False

    def __init__(self, tokenizer_json: Path) -> None:
        import json

        import llguidance
        import llguidance.numpy

        self.llg = llguidance
        self._fill = llguidance.numpy.fill_next_token_bitmask
        self.tokenizer = llguidance.LLTokenizer(str(tokenizer_json))
        self.eos = [int(t) for t in self.tokenizer.eos_tokens]
        self.bitmask = llguidance.numpy.allocate_token_bitmask(1, self.tokenizer.vocab_size)
        self.fill(self.compile(json.dumps(WARMUP_SCHEMA)))

    def compile(self, schema: str) -> Any:
        grammar = self.llg.LLMatcher.grammar_from_json_schema(schema)
        matcher = self.llg.LLMatcher(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise PeerGrammarError(matcher.get_error())
        return matcher

    def prepare(self) -> None:
        """Nothing to clear: every ``LLMatcher`` construction compiles from scratch."""

    def matcher(self, compiled: Any) -> Any:
        return compiled.deep_copy()

    def fill(self, matcher: Any) -> None:
        self._fill(matcher, self.bitmask, 0)

    def consume(self, matcher: Any, token: int) -> bool:
        return bool(matcher.consume_token(token))

    def first_error(self, matcher: Any) -> str | None:
        return matcher.get_error() or "error" if matcher.is_error() else None

    def classify(self, exc: BaseException) -> str:
        return "GrammarError" if isinstance(exc, PeerGrammarError) else f"crash: {type(exc).__name__}"


class XgrammarSchemaEngine(LlguidanceSchemaEngine):
    """xgrammar's ``compile_json_schema`` with its defaults, compiler cache off, one thread."""

    name = "xgrammar"

    def __init__(self, tokenizer_json: Path) -> None:
        import json
        import warnings

        warnings.filterwarnings("ignore")
        import xgrammar
        from transformers import PreTrainedTokenizerFast

        self.xgr = xgrammar
        info = xgrammar.TokenizerInfo.from_huggingface(PreTrainedTokenizerFast(tokenizer_file=str(tokenizer_json)))
        self.compiler = xgrammar.GrammarCompiler(info, max_threads=1, cache_enabled=False)
        self.eos = [int(t) for t in info.stop_token_ids]
        self.bitmask = xgrammar.allocate_token_bitmask(1, info.vocab_size)
        self.fill(self.matcher(self.compile(json.dumps(WARMUP_SCHEMA))))

    def compile(self, schema: str) -> Any:
        try:
            return self.compiler.compile_json_schema(schema)
        except RuntimeError as exc:
            raise PeerGrammarError(str(exc)) from None

    def matcher(self, compiled: Any) -> Any:
        return self.xgr.GrammarMatcher(compiled)

    def fill(self, matcher: Any) -> None:
        matcher.fill_next_token_bitmask(self.bitmask)

    def consume(self, matcher: Any, token: int) -> bool:
        return bool(matcher.accept_token(token))

    def first_error(self, matcher: Any) -> str | None:
        return None  # xgrammar raises instead of entering an error state


def all_three_compile(schema_text: str) -> bool:
    """Whether leapgram, XGrammar and llguidance all take this JSON Schema (the benchmarks compare
    the three on such schemas only)."""
    import llguidance
    import xgrammar as xgr

    from leapgram import Grammar

    try:
        Grammar.from_json_schema(schema_text)
        xgr.Grammar.from_json_schema(schema_text)
        error = llguidance.LLMatcher.validate_grammar(llguidance.LLMatcher.grammar_from_json_schema(schema_text))
    except Exception:  # noqa: BLE001 -- a schema one library refuses is left out for all
        return False
    return not error
