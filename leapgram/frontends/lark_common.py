"""The terminals of Lark's ``common`` library, for ``%import common.NAME``.

Each terminal is one self-contained regex (leapgram syntax) with the language Lark's own
definition produces *as a token*. Where Lark relies on lazy matching (``ESCAPED_STRING``,
``C_COMMENT``) the regex spells out the shortest-match language instead: a string ends at its
first unescaped quote, a comment at its first ``*/``, which is what Lark's lexer produces and
what a longest-match lexer needs.

It also keeps the pool that Lark and GBNF grammars start from (:func:`cfg_pool`), shared across
grammars by :func:`share_pool`.
"""

from __future__ import annotations

import threading

from ..errors import BudgetExceededError
from ..grammar.ir import GrammarIR
from ..limits import Limits
from ..regex.expr import ExprPool
from .json_schema.common import schema_pool, warm_derivatives

_INT = r"[0-9]+"
_EXP = r"[eE][+-]?[0-9]+"
_DECIMAL = r"(?:[0-9]+\.[0-9]*|\.[0-9]+)"
_FLOAT = rf"(?:{_INT}{_EXP}|{_DECIMAL}(?:{_EXP})?)"
_NUMBER = rf"(?:{_FLOAT}|{_INT})"

COMMON_TERMINALS: dict[str, str] = {
    "DIGIT": r"[0-9]",
    "HEXDIGIT": r"[0-9a-fA-F]",
    "INT": _INT,
    "SIGNED_INT": rf"[+-]?{_INT}",
    "DECIMAL": _DECIMAL,
    "_EXP": _EXP,
    "FLOAT": _FLOAT,
    "SIGNED_FLOAT": rf"[+-]?{_FLOAT}",
    "NUMBER": _NUMBER,
    "SIGNED_NUMBER": rf"[+-]?{_NUMBER}",
    "_STRING_INNER": r".*",
    "_STRING_ESC_INNER": r"(?:[^\\\n]|\\.)*",
    "ESCAPED_STRING": r'"(?:[^"\\\n]|\\.)*"',
    "LCASE_LETTER": r"[a-z]",
    "UCASE_LETTER": r"[A-Z]",
    "LETTER": r"[A-Za-z]",
    "WORD": r"[A-Za-z]+",
    "CNAME": r"[_A-Za-z][_A-Za-z0-9]*",
    "WS_INLINE": r"[ \t]+",
    "WS": r"[ \t\f\r\n]+",
    "CR": r"\r",
    "LF": r"\n",
    "NEWLINE": r"(?:\r?\n)+",
    "SH_COMMENT": r"#[^\n]*",
    "CPP_COMMENT": r"//[^\n]*",
    "C_COMMENT": r"/\*(?:[^*]|\*+[^*/])*\*+/",
    "SQL_COMMENT": r"--[^\n]*",
}
"""Terminal name → regex, for every terminal of Lark's ``common.lark``."""


# ----- the pool Lark and GBNF grammars start from ------------------------------------------------

MAX_SHARED_EXPRESSIONS = 8_000  # the shared pool stops growing past this many (every grammar copies it)
_shared: dict[Limits, ExprPool] = {}
_shared_lock = threading.Lock()


def cfg_pool(limits: Limits) -> ExprPool:
    """A new pool for one Lark or GBNF grammar: a copy of the shared pool of these front ends,
    which starts as the JSON Schema base pool (:func:`schema_pool`) and takes in the lexemes of
    the grammars compiled before (:func:`share_pool`). A lexeme another grammar already had
    (the same expression: expressions are hash-consed) then has its derivatives taken and its
    lexer rows, row templates and slice checks worked out once per process (in the pool
    family's memo) instead of once per grammar."""
    base = _shared.get(limits)
    if base is None or 4 * len(base) > limits.max_regex_nodes:
        return schema_pool(limits)
    return base.copy()


def share_pool(ir: GrammarIR, limits: Limits, memos: dict[tuple, dict] | None = None) -> None:
    """Make the shared pool a copy of ``ir``'s (a pool :func:`cfg_pool` gave) when some lexeme
    of ``ir`` is new to it: the lexemes' derivative states are taken first (up to
    ``MAX_WARM_STATES`` each, in ``ir``'s pool, whose lexer finds them), so later grammars with
    these lexemes get their rows from the family's templates. The new pool family keeps the
    previous one's memo (its expressions keep their ids) plus ``memos`` (a front end's results
    keyed by expressions of ``ir``'s pool, such as the GBNF lexeme overlaps). Nothing is done
    past ``MAX_SHARED_EXPRESSIONS`` expressions or a quarter of ``limits.max_regex_nodes``."""
    pool = ir.pool
    family = pool.family
    novel = [lexeme.expr for lexeme in ir.lexemes if family is None or lexeme.expr >= family.size]
    if not novel:
        return
    with pool.lock:
        if len(pool) > MAX_SHARED_EXPRESSIONS or 4 * len(pool) > limits.max_regex_nodes:
            return
        try:
            for expr in novel:
                warm_derivatives(pool, expr)
        except BudgetExceededError:  # too small a budget to warm them: the grammar is not shared
            return
        base = pool.copy()
    base.warm_caches()  # a new family: the first len(base) expressions of every later copy
    if family is not None:  # same ids below family.size: the results stay valid
        base.family.memo.update((key, dict(value) if isinstance(value, dict) else value)
                                for key, value in family.memo.items())
    for key, memo in (memos or {}).items():
        base.family.memo[key] = {**base.family.memo.get(key, {}), **memo}
    with _shared_lock:
        _shared[limits] = base


def shared_memo(pool: ExprPool, key: tuple) -> dict:
    """A copy of the dict :func:`share_pool` kept under ``key`` in ``pool``'s family memo
    (empty when there is none)."""
    family = pool.family
    found = family.memo.get(key) if family is not None else None
    return dict(found) if isinstance(found, dict) else {}
