"""leapgram as SGLang's grammar backend: ``--grammar-backend leapgram``.

:func:`register` (the ``sglang.srt.plugins`` entry point, which SGLang loads in every process
before it parses arguments) adds ``"leapgram"`` to SGLang's backend choices and to its public
registry (``register_grammar_backend``), on the versions in :data:`TESTED_SGLANG` only. Requests:
``json_schema`` (``json_object`` too), ``regex``, ``ebnf`` (GBNF, or Lark) and structural tags;
a grammar leapgram refuses fails its request (HTTP 400) with leapgram's message. How and why:
``docs/design/sglang.md``.
"""

from __future__ import annotations

import logging
import warnings
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

import leapgram
from leapgram import Grammar, LeapgramError, Matcher
from leapgram.integrations.vllm import (
    LeapgramGrammar,
    cache_budget,
    cache_count,
    grammar_for,
    precompute_budget,
    precompute_for_server,
    trim_cache,
    vocabulary_for,
    warm_first_masks,
    warm_up,
)

TESTED_SGLANG = ("0.5.23", "0.5.24")
"""SGLang versions :func:`register` installs the backend on: from the first (included) to the
second (excluded). SGLang's grammar classes change between patch releases."""

BACKEND_NAME = "leapgram"
DEFAULT_CACHE_SIZE = 128
"""Grammars a backend keeps (``LEAPGRAM_SGLANG_CACHE_SIZE`` overrides), most recently used first."""
DEFAULT_CACHE_MB = 64
"""... and at most this many MB of compiled grammars (``LEAPGRAM_SGLANG_CACHE_MB`` overrides, ``0``:
no bound), as the vLLM backend (``docs/design/memory.md``)."""

ANY_JSON = "$$ANY$$"
"""SGLang's ``json_schema`` key for any JSON value (its xgrammar backend's builtin JSON grammar)."""

logger = logging.getLogger("sglang.leapgram")  # under SGLang's logger, so that its handlers print it

_REQUEST_TYPES = {"json": "JSON", "regex": "REGEX", "ebnf": "GRAMMAR", "full_assistant_ebnf": "GRAMMAR",
                  "structural_tag": "STRUCTURAL_TAG"}


def grammar_for_key(key_type: str, key_string: str, *, compact: bool = False) -> Grammar:
    """The :class:`leapgram.Grammar` of one SGLang grammar key (``"json"``, ``"regex"``,
    ``"ebnf"``, ``"full_assistant_ebnf"`` or ``"structural_tag"``, and its text). ``ebnf`` is GBNF
    (``root ::= ...``, what SGLang's xgrammar backend reads); text without ``::=`` is read as Lark.
    Raises :class:`leapgram.GrammarError` (or ``UnsupportedError``) for malformed or unsupported input."""
    if key_type == "json" and key_string == ANY_JSON:
        return Grammar.from_json_schema({}, whitespace="compact" if compact else "flexible")
    request_type = _REQUEST_TYPES.get(key_type)
    if request_type is None:
        raise leapgram.UnsupportedError(key_type, "leapgram's SGLang backend knows json, regex, ebnf and "
                                        "structural_tag grammars")
    return grammar_for(request_type, key_string, compact=compact)


# ----- the per-request grammar and the backend (subclasses of SGLang's, made on first use) -----

def _make_classes() -> dict[str, type]:
    """``LeapgramSglangGrammar`` and ``LeapgramGrammarBackend`` (made on first use so that
    importing this module imports neither SGLang nor torch)."""
    import torch
    from sglang.srt.constrained.base_grammar_backend import (
        BaseGrammarBackend,
        BaseGrammarObject,
        InvalidGrammarObject,
    )

    from leapgram.integrations.torch import apply_token_bitmask_torch

    class LeapgramSglangGrammar(LeapgramGrammar, BaseGrammarObject):
        """One request's state for SGLang (``BaseGrammarObject``) over a :class:`leapgram.Matcher`:
        :class:`~leapgram.integrations.vllm.LeapgramGrammar`'s stop-token handling, masks and
        rollback, with SGLang's method names."""

        def __init__(self, matcher: Matcher, stop_ids: Iterable[int]) -> None:
            BaseGrammarObject.__init__(self)
            self.stop_ids = frozenset(stop_ids)
            LeapgramGrammar.__init__(self, matcher, self.stop_ids)

        def accept_token(self, token: int) -> None:
            """Advance by one token; a token the grammar forbids is a ``ValueError`` (SGLang then
            aborts the request). Tokens after a stop token are ignored, as in SGLang's xgrammar backend."""
            if self.is_terminated():
                return
            self.current_token = token
            if not self._accept(int(token)):
                raise ValueError(f"leapgram: token {token} is not allowed here "
                                 f"(after {self.matcher.num_tokens} tokens)")

        def allocate_vocab_mask(self, vocab_size: int, batch_size: int, device: Any) -> torch.Tensor:
            return torch.full((batch_size, (vocab_size + 31) // 32), -1, dtype=torch.int32)

        def fill_vocab_mask(self, vocab_mask: torch.Tensor, idx: int) -> None:
            self.fill_bitmask(vocab_mask, idx)

        @staticmethod
        def reset_vocab_mask(vocab_mask: torch.Tensor) -> None:
            vocab_mask.fill_(-1)

        @staticmethod
        def move_vocab_mask(vocab_mask: torch.Tensor, device: Any) -> torch.Tensor:
            return vocab_mask.to(device, non_blocking=True)

        @staticmethod
        def apply_vocab_mask(logits: torch.Tensor, vocab_mask: torch.Tensor) -> None:
            apply_token_bitmask_torch(logits, vocab_mask)

        def copy(self) -> LeapgramSglangGrammar:
            """A fresh request state on the same compiled grammar (SGLang caches one pristine copy
            per grammar key and copies it for each request)."""
            return type(self)(Matcher(self.matcher.compiled), self.stop_ids)

        def try_jump_forward(self, tokenizer: Any) -> None:
            return None  # SGLang 0.5 no longer jumps forward

    class LeapgramGrammarBackend(BaseGrammarBackend):
        """SGLang's engine-level backend: one vocabulary, compiled grammars kept for the
        ``cache_size`` most recently used keys (SGLang's own cache has no bound), fewer when they
        keep more than ``max_bytes`` (default ``LEAPGRAM_SGLANG_CACHE_MB``) together."""

        def __init__(self, tokenizer: Any, vocab_size: int, eos_token_ids: Iterable[int] | int | None = None,
                     *, compact: bool = False, cache_size: int | None = None,
                     max_bytes: int | None = None) -> None:
            super().__init__()
            self.cache: OrderedDict[tuple[str, str], Any] = OrderedDict()
            vocab = vocabulary_for(tokenizer, vocab_size)
            self.compiler = leapgram.GrammarCompiler(vocab, cache_size=0)  # the backend's cache bounds it
            if isinstance(eos_token_ids, int):
                eos_token_ids = [eos_token_ids]
            self.stop_ids = frozenset(eos_token_ids or vocab.eos_token_ids)
            self.compact = compact
            self.cache_size = cache_size or cache_count("LEAPGRAM_SGLANG_CACHE_SIZE", DEFAULT_CACHE_SIZE)
            self.max_bytes = (cache_budget("LEAPGRAM_SGLANG_CACHE_MB", DEFAULT_CACHE_MB) if max_bytes is None
                              else max_bytes or None)  # max_bytes=0: no memory bound
            self.precompute_ms = precompute_budget("LEAPGRAM_SGLANG_PRECOMPUTE_MS")
            warm_up(self.compiler)

        def compile_key(self, key_type: str, key_string: str) -> Any:
            """A ``LeapgramSglangGrammar`` for one key, or SGLang's ``InvalidGrammarObject``
            carrying leapgram's message (SGLang fails the request with it: HTTP 400)."""
            try:
                compiled = self.compiler.compile(grammar_for_key(key_type, key_string, compact=self.compact))
            except (LeapgramError, ValueError, TypeError, RecursionError) as exc:  # any malformed request: its own 400
                logger.error("leapgram: invalid %s grammar: %s", key_type, exc)
                return InvalidGrammarObject(f"leapgram: {exc}")
            if self.precompute_ms > 0:  # in SGLang's compile threads too
                precompute_for_server(compiled, self.precompute_ms, compact=self.compact)
            matcher = Matcher(compiled)
            warm_first_masks(matcher)  # in SGLang's compile threads, not on the first step
            return LeapgramSglangGrammar(matcher, self.stop_ids)

        def dispatch_json(self, key_string: str) -> Any:
            return self.compile_key("json", key_string)

        def dispatch_regex(self, key_string: str) -> Any:
            return self.compile_key("regex", key_string)

        def dispatch_ebnf(self, key_string: str) -> Any:
            return self.compile_key("ebnf", key_string)

        def dispatch_structural_tag(self, key_string: str) -> Any:
            return self.compile_key("structural_tag", key_string)

        def get_cached_or_future_value(self, key: tuple[str, str], require_reasoning: bool) -> Any:
            if key in self.cache:
                self.cache.move_to_end(key)
            return super().get_cached_or_future_value(key, require_reasoning)

        def set_cache(self, key: tuple[str, str], value: Any) -> None:
            self.cache[key] = value
            self.cache.move_to_end(key)
            trim_cache(self.cache, self.cache_size, self.max_bytes, _compiled_of)

    return {"LeapgramSglangGrammar": LeapgramSglangGrammar, "LeapgramGrammarBackend": LeapgramGrammarBackend}


def _compiled_of(value: Any) -> Any:
    """The compiled grammar a cached SGLang grammar object holds (``None`` for an invalid one)."""
    matcher = getattr(value, "matcher", None)
    return None if matcher is None else matcher.compiled


def __getattr__(name: str) -> Any:
    """``LeapgramSglangGrammar`` and ``LeapgramGrammarBackend`` are made on first access (they
    subclass SGLang classes)."""
    if name in ("LeapgramSglangGrammar", "LeapgramGrammarBackend"):
        if "LeapgramGrammarBackend" not in globals():
            globals().update(_make_classes())
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def create_backend(server_args: Any, tokenizer: Any, vocab_size: int,
                   eos_token_ids: Iterable[int] | int | None = None) -> Any:
    """The function registered with SGLang's ``register_grammar_backend``: SGLang's scheduler
    calls it once with its tokenizer, the model's vocabulary size and EOS ids."""
    import time

    from sglang.srt.runtime_context import get_serving

    serving = get_serving()
    if getattr(serving, "constrained_json_whitespace_pattern", None):
        logger.warning("leapgram: --constrained-json-whitespace-pattern is ignored (leapgram's JSON "
                       "whitespace is flexible, or compact with --constrained-json-disable-any-whitespace)")
    start = time.perf_counter()
    backend = __getattr__("LeapgramGrammarBackend")(
        tokenizer, vocab_size, eos_token_ids,
        compact=bool(getattr(serving, "constrained_json_disable_any_whitespace", False)))
    logger.info("leapgram grammar backend ready in %.2f s (kernels warmed)", time.perf_counter() - start)
    return backend


# ----- the plugin -----------------------------------------------------------------------------

def register() -> bool:
    """Make ``"leapgram"`` a grammar backend of the running SGLang (idempotent).

    The ``sglang.srt.plugins`` entry point; call it yourself before building an ``Engine`` in a
    process that did not load plugins. Returns whether the backend is installed: outside
    :data:`TESTED_SGLANG` it warns and does nothing.
    """
    if not _sglang_is_tested():
        return False
    from sglang.srt.arg_groups.choices import GRAMMAR_BACKEND_CHOICES, add_grammar_backend_choices
    from sglang.srt.constrained.base_grammar_backend import register_grammar_backend

    if BACKEND_NAME not in GRAMMAR_BACKEND_CHOICES:
        add_grammar_backend_choices([BACKEND_NAME])
    register_grammar_backend(BACKEND_NAME, create_backend)
    return True


def _sglang_is_tested() -> bool:
    """Whether SGLang is importable at a version in :data:`TESTED_SGLANG`; if not, a warning says so."""
    try:
        from sglang import __version__ as version
    except ImportError:
        problem = "SGLang is not installed"
    else:
        if _is_tested(version):
            return True
        problem = (f"leapgram's SGLang backend was tested with SGLang >= {TESTED_SGLANG[0]}, < {TESTED_SGLANG[1]}; "
                   f"this is SGLang {version}, so the 'leapgram' grammar backend is NOT installed. Upgrade "
                   "leapgram or pin SGLang to a tested version")
    warnings.warn(f"leapgram.integrations.sglang.register: {problem}", RuntimeWarning, stacklevel=3)
    return False


def _is_tested(version: str) -> bool:
    """Whether ``version``'s release numbers (local and post parts aside) lie in :data:`TESTED_SGLANG`."""
    from packaging.version import InvalidVersion, Version

    try:
        release = Version(version).release
    except InvalidVersion:
        return False
    return Version(TESTED_SGLANG[0]).release <= release < Version(TESTED_SGLANG[1]).release
