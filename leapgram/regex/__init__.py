"""Regular expressions over bytes: syntax, hash-consed expressions, derivatives, a lazy DFA."""

from __future__ import annotations

from ..limits import DEFAULT_LIMITS, Limits
from .dfa import DEAD, UNKNOWN, LazyDfa
from .expr import EMPTY, EPSILON, ExprPool
from .syntax import parse_regex

__all__ = ["DEAD", "EMPTY", "EPSILON", "UNKNOWN", "ExprPool", "LazyDfa", "fullmatch", "parse_regex"]


def fullmatch(pattern: str, data: bytes, *, ignore_case: bool = False, limits: Limits = DEFAULT_LIMITS) -> bool:
    """Whether ``pattern`` matches all of ``data`` (a convenience over a fresh pool and DFA)."""
    pool = ExprPool(limits)
    dfa = LazyDfa(pool, parse_regex(pattern, pool, ignore_case=ignore_case))
    return dfa.is_accepting(dfa.run(dfa.initial, data))
