"""The expressions every schema needs, built once per process and copied per schema.

The JSON string and number lexemes and the derivatives a lexer takes of them live in a *base pool*
(per :class:`Limits`); each translation starts from :meth:`ExprPool.copy` of it, independent of the
base and of other schemas. Why: docs/design/json-schema.md ("Time to first mask"). The formats and
their spellings (two thirds of the base pool's build, mostly the URI and IRI regexes) are in a
second base pool, its own pool family, built when a process's first schema with a ``format`` asks
for it (``leapgram.warm_up`` builds it): schemas without one copy the smaller pool.
"""

from __future__ import annotations

import functools
import threading

from ...limits import Limits
from ...regex.expr import EMPTY, EPSILON, K_REPEAT, ExprPool
from ...regex.syntax import parse_regex
from ...regex.utf8 import class_within
from .formats import FORMATS
from .numbers import JSON_INTEGER, JSON_NUMBER, NumberBuilder
from .strings import JSON_STRING, json_encoded, string_universe

WHITESPACE_BYTES = sum(1 << c for c in b" \t\n\r")
INDENT_BYTES = sum(1 << c for c in b" \t")
# The flexible whitespace run (flexible_whitespace_expr): any run of at most SHORT_RUN bytes, or one
# that ends in a newline and indentation, at most LONG_RUN bytes in all (json.dumps(indent=4) to
# the 24th level, indent=2 to the 49th, a tab to the 99th).
SHORT_RUN = 20
LONG_RUN = 100
MAX_WARM_STATES = 64  # derivative states warmed per lexeme (all of the whitespace run's)
# JSON's punctuation and keywords, which most schemas' grammars spell (objects, arrays, booleans, the
# any-value grammar): a literal is a node per byte, so their nodes are made once, in the base pool,
# and every copy starts with them. They come after the pool family's expressions (warm_caches): as
# family expressions they would join each lexer's family block (parser.lexer.family_block), one
# block per set of family lexemes, and the sets of tokens a schema spells multiply those blocks
# (67 sets over 1,500 benchmark schemas against 15, past the blocks kept per family).
JSON_TOKENS = (b"{", b"}", b"[", b"]", b":", b",", b"true", b"false", b"null")
# The tokens whose states every schema's lexer makes with its family block (PoolFamily.set_up):
# an object's first mask starts at the fresh state of "{" alone, which it filled otherwise (about
# 35 µs of the first mask); the others, laid out with the block too, cost more than they saved.
SET_UP_TOKENS = (b"{", b"[")
SLICE_CHAR = r'[^"\\\x00-\x1F\x7F]'  # the character of the slicer's default slices (mask.slicer.JSON_STRING_CHAR)


_BUILD_LOCK = threading.Lock()  # one build of each base pool, whichever thread asks first


def schema_pool(limits: Limits, formats: bool = False) -> ExprPool:
    """A new pool for one schema: a copy of the base pool (with the formats' expressions when
    ``formats``, as ``RefResolver.formats`` says), or an empty pool when the base pool would
    take more than a quarter of ``limits.max_regex_nodes`` (its nodes count there)."""
    base = base_pool(limits, formats)
    if base is None or 4 * len(base) > limits.max_regex_nodes:
        return ExprPool(limits)
    return base.copy()


def base_pool(limits: Limits, formats: bool = False) -> ExprPool | None:
    """The pool every schema's pool copies (see the module's docstring), with the formats'
    expressions when ``formats``; ``None`` when it does not fit ``limits``."""
    with _BUILD_LOCK:
        return _base_pool(limits, bool(formats))


@functools.lru_cache(maxsize=8)
def _base_pool(limits: Limits, formats: bool) -> ExprPool | None:
    pool = ExprPool(limits)
    try:
        whitespace = flexible_whitespace_expr(pool)
        lexemes = [parse_regex(JSON_STRING, pool), parse_regex(JSON_NUMBER, pool), parse_regex(JSON_INTEGER, pool),
                   whitespace, string_universe(pool)]
        for integer in (False, True):
            NumberBuilder(pool, integer)
        for pattern in FORMATS.values() if formats else ():
            json_encoded(pool, parse_regex(pattern, pool))
        for expr in lexemes:
            warm_derivatives(pool, expr, limit=None if expr == whitespace else MAX_WARM_STATES)
        warm_slice_checks(pool)
        family = len(pool)
        tokens = {text: pool.literal(text) for text in JSON_TOKENS}  # after the family's expressions: see JSON_TOKENS
        pool.warm_caches(family_size=family)
        pool.family.set_up = tuple(tokens[text] for text in SET_UP_TOKENS if text in tokens)
    except Exception:  # noqa: BLE001 - a budget too small for the base pool: schemas start empty
        return None
    return pool


def whitespace_expr(pool: ExprPool, run: int) -> int:
    """One to ``run`` JSON whitespace bytes."""
    return pool.repeat(pool.byteset(WHITESPACE_BYTES), 1, run)


def flexible_whitespace_expr(pool: ExprPool) -> int:
    """The ``"flexible"`` whitespace run: one to ``SHORT_RUN`` JSON whitespace bytes, or a run of
    at most ``SHORT_RUN`` that ends in a newline followed by indentation (spaces and tabs), at
    most ``LONG_RUN`` bytes in all. Remembered in the pool (the base pool holds it)."""
    return pool.remembered(("flexible-whitespace", SHORT_RUN, LONG_RUN), lambda: _indented_run(pool))


def _indented_run(pool: ExprPool) -> int:
    """The run as its automaton (docs/design/json-schema.md, "Whitespace"): after ``p`` bytes,
    ``plain[p]`` where the bytes since the last newline are not all indentation (or there is
    none), ``indented[p]`` where they are. Each state is one expression, the derivatives of one
    are the others: 2 x SHORT_RUN states and the indentation's count, no others."""
    byte = pool.byteset
    plain_byte, newline, carriage = byte(WHITESPACE_BYTES & ~(1 << 10)), byte(1 << 10), byte(1 << 13)
    indent_or_newline = byte(INDENT_BYTES | 1 << 10)
    indent = byte(INDENT_BYTES)
    indented = EPSILON  # then the indentation, by an optional byte at a time: no repeat bound that
    for _ in range(LONG_RUN - SHORT_RUN):  # a mask's widening (ExprPool.widened) would rewrite
        indented = pool.alt([pool.concat(indent, indented), EPSILON])
    plain = EPSILON
    for p in range(SHORT_RUN - 1, -1, -1):
        ends = [EPSILON] if p else []  # a run has at least one byte
        plain, indented = (pool.alt([pool.concat(plain_byte, plain), pool.concat(newline, indented), *ends]),
                           pool.alt([pool.concat(indent_or_newline, indented), pool.concat(carriage, plain), EPSILON]))
    return plain


def warm_slice_checks(pool: ExprPool) -> None:
    """Decide, for every repeat of the pool whose body can start like the slicer's string
    character, whether that character is in the body (:func:`class_within`, remembered in the
    memo): the slicer asks it of the JSON string character in every schema's first string."""
    char_expr = parse_regex(SLICE_CHAR, pool)
    char, first = pool.char_ranges[char_expr], pool.first_bytes(char_expr)
    for e in range(len(pool)):
        if pool.kind[e] == K_REPEAT and not first & ~pool.first_bytes(pool.args[e][0]):
            class_within(pool, char, pool.args[e][0])


def warm_derivatives(pool: ExprPool, expr: int, limit: int | None = MAX_WARM_STATES) -> None:
    """Take the derivatives of ``expr`` and of its first ``limit`` derivative states (all of
    them when ``None``) by one byte of each class (the byte a lexer row takes), so lexers on
    copies find them cached."""
    seen = {expr}
    frontier = [expr]
    while frontier and (limit is None or len(seen) <= limit):
        e = frontier.pop()
        pool.first_bytes(e)
        for part in pool.byte_classes(e):
            d = pool.derivative(e, (part & -part).bit_length() - 1)
            if d != EMPTY and d not in seen:
                seen.add(d)
                frontier.append(d)
