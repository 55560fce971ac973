"""leapgram: token masks that keep a language model's output inside a grammar.

    compiler = leapgram.GrammarCompiler(vocab)      # one per vocabulary
    compiled = compiler.compile(grammar)            # one per grammar; shareable across threads
    matcher = leapgram.Matcher(compiled)            # one per request

Import cost: numpy and numba only. Frameworks (torch, transformers, vLLM) live in
``leapgram.integrations`` and are imported on use.
"""

from __future__ import annotations

import warnings as _warnings
from typing import TYPE_CHECKING

from ._gc import collections_deferred as _collections_deferred

with _collections_deferred():  # numpy, numba and leapgram's modules: no collection scans them now
    from . import pool_cache as _pool_cache  # noqa: F401 - registers the on-disk store of the JSON Schema base pools
    from .bitmask import allocate_token_bitmask, allowed_tokens, apply_token_bitmask, unpack_bitmask
    from .compiler import CompiledGrammar, GrammarCompiler
    from .errors import BudgetExceededError, GrammarError, LeapgramError, TokenizerError, UnsupportedError
    from .grammars import Grammar
    from .limits import Limits
    from .matcher import Matcher
    from .vocab import Vocabulary

    if TYPE_CHECKING:
        from .batch import fill_next_token_bitmasks
        from .frontends.structural_tag import Tag
        from .precompute import precompute_masks
        from .vocab.partial import heal_prompt
        from .warmup import warm_up

    from ._kernels import start_loading_cached_kernels as _start_loading_cached_kernels

__version__ = "0.2.0"

__all__ = [
    "BudgetExceededError",
    "CompiledGrammar",
    "Grammar",
    "GrammarCompiler",
    "GrammarError",
    "LeapgramError",
    "Limits",
    "Matcher",
    "Tag",
    "TokenizerError",
    "UnsupportedError",
    "Vocabulary",
    "allocate_token_bitmask",
    "allowed_tokens",
    "apply_token_bitmask",
    "fill_next_token_bitmasks",
    "heal_prompt",
    "precompute_masks",
    "unpack_bitmask",
    "warm_up",
]

# Imported on first use: a first request needs none of them (about 15 ms of ``import leapgram``).
_LAZY = {
    "fill_next_token_bitmasks": "leapgram.batch",
    "Tag": "leapgram.frontends.structural_tag",
    "heal_prompt": "leapgram.vocab.partial",
    "precompute_masks": "leapgram.precompute",
    "warm_up": "leapgram.warmup",
}

_DEPRECATED = {
    "compile": ("leapgram.compiler", "compile", None),  # warns when called
    "clear_cache": ("leapgram.compiler", "clear_cache", None),
    "TokenTrie": ("leapgram.vocab.trie", "TokenTrie", "it is internal (leapgram.vocab.trie.TokenTrie)"),
}


def __getattr__(name: str):
    """The names imported on first use, and those of 0.1 kept for one release with a DeprecationWarning."""
    import importlib

    if name in _LAZY:
        value = globals()[name] = getattr(importlib.import_module(_LAZY[name]), name)
        return value
    if name not in _DEPRECATED:
        raise AttributeError(f"module 'leapgram' has no attribute {name!r}")
    module, attribute, advice = _DEPRECATED[name]
    if advice:
        _warnings.warn(f"leapgram.{name} is deprecated and will be removed in 0.3: {advice}", DeprecationWarning,
                       stacklevel=2)
    return getattr(importlib.import_module(module), attribute)


def __dir__() -> list[str]:
    return sorted(__all__)


_start_loading_cached_kernels()
