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
from ..regex.expr import ExprPool, PoolFamily
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
MIN_GROWTH = 1  # expressions and memo entries the last grammar's pool must have gained to be taken in
_shared: dict[Limits, ExprPool] = {}
_last: dict[Limits, ExprPool] = {}  # the pool of the last grammar built (share_pool registers it)
_shared_lock = threading.Lock()


def cfg_pool(limits: Limits) -> ExprPool:
    """A new pool for one Lark or GBNF grammar: a copy of the shared pool of these front ends.

    The shared pool starts as the JSON Schema base pool (:func:`schema_pool`) and takes in the
    lexemes of each grammar with new ones (:func:`share_pool`), and then, at the next call, what
    the last grammar's pool gained while its masks were computed (the derivatives of the lexer
    states it reached, the expressions and emptiness results of its slice checks). A lexeme an
    earlier grammar had (the same expression: expressions are hash-consed) then has that work
    done once per process instead of once per grammar, and its row templates and lexer blocks
    come from the pool family's memo."""
    with _shared_lock:
        _take_in_last(limits)
        base = _shared.get(limits)
        if base is None or 4 * len(base) > limits.max_regex_nodes:
            pool = schema_pool(limits, formats=True)  # a %json schema may use any format
        else:
            pool = base.copy()
    return pool


def _take_in_last(limits: Limits) -> None:
    """Make the shared pool a copy of the pool of the last grammar built (holding
    ``_shared_lock``) when that pool is a copy of the shared pool and has gained ``MIN_GROWTH``
    expressions and memo entries (results such as the slicer's ``class_within``) since, within
    ``MAX_SHARED_EXPRESSIONS``. The same grammar compiled again soon gains nothing: no copy.

    Only a built grammar's pool is registered (by :func:`share_pool`): a front end fills its
    pool without the pool's lock, so copying one still being built (another thread compiling)
    would tear it. Built, its pool grows only under its lock (lexer rows, slice checks), which
    the copy takes; when another thread holds it, the pool is taken in at a later call."""
    last, base = _last.get(limits), _shared.get(limits)
    if (last is None or base is None or last.family is not base.family or len(last) > MAX_SHARED_EXPRESSIONS
            or len(last) + len(last.memo) < len(base) + len(base.memo) + MIN_GROWTH):
        return
    if not last.lock.acquire(blocking=False):
        return
    try:
        grown = last.copy()
    finally:
        last.lock.release()
    _shared[limits] = _new_family(grown, base.family)
    del _last[limits]


def _new_family(base: ExprPool, previous: PoolFamily | None, memos: dict[tuple, dict] | None = None) -> ExprPool:
    """``base`` made the head of a new pool family (its per-expression caches filled), whose memo
    keeps ``previous``'s (the expressions below its size keep their ids in ``base``) and ``memos``."""
    base.warm_caches()
    memo = base.family.memo
    if previous is not None:
        memo.update((key, dict(value) if isinstance(value, dict) else value) for key, value in previous.memo.items())
    for key, entries in (memos or {}).items():
        memo[key] = {**memo.get(key, {}), **entries}
    return base


def share_pool(ir: GrammarIR, limits: Limits, memos: dict[tuple, dict] | None = None) -> None:
    """Called by the front ends once ``ir`` is built. Make the shared pool a copy of ``ir``'s (a
    pool :func:`cfg_pool` gave) when some lexeme of ``ir`` is new to it, else register ``ir``'s
    pool as the last one built (see :func:`_take_in_last`): the lexemes' derivative states are taken first (up to
    ``MAX_WARM_STATES`` each, in ``ir``'s pool, whose lexer finds them), so later grammars with
    these lexemes get their rows from the family's templates. The new pool family keeps the
    previous one's memo plus ``memos`` (a front end's results keyed by expressions of ``ir``'s
    pool, such as the GBNF lexeme overlaps). Nothing is done past ``MAX_SHARED_EXPRESSIONS``
    expressions or a quarter of ``limits.max_regex_nodes``."""
    pool = ir.pool
    family = pool.family
    novel = [lexeme.expr for lexeme in ir.lexemes if family is None or lexeme.expr >= family.size]
    if not novel:
        with _shared_lock:  # built: what it gains from here on may be taken in by the next cfg_pool
            _last[limits] = pool
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
    base = _new_family(base, family, memos)
    with _shared_lock:
        _shared[limits] = base
        _last.pop(limits, None)  # base holds the newest lexemes; an older last pool is of the old family


def shared_memo(pool: ExprPool, key: tuple) -> dict:
    """A copy of the dict :func:`share_pool` kept under ``key`` in ``pool``'s family memo
    (empty when there is none)."""
    family = pool.family
    found = family.memo.get(key) if family is not None else None
    return dict(found) if isinstance(found, dict) else {}
