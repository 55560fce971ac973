"""Regular expression → grammar IR."""

from __future__ import annotations

from ..grammar.ir import GrammarIR, Lexeme
from ..limits import DEFAULT_LIMITS, Limits
from ..regex.expr import ExprPool
from ..regex.syntax import parse_regex


def regex_to_ir(pattern: str, *, ignore_case: bool = False, dotall: bool = False,
                limits: Limits = DEFAULT_LIMITS) -> GrammarIR:
    """A grammar whose whole output must match ``pattern`` (see :mod:`leapgram.regex.syntax`)."""
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be str, not {type(pattern).__name__}")
    pool = ExprPool(limits)
    expr = parse_regex(pattern, pool, ignore_case=ignore_case, dotall=dotall)
    return GrammarIR(pool, (Lexeme("start", expr),))
