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
from ...regex.expr import EMPTY, K_REPEAT, ExprPool
from ...regex.syntax import parse_regex
from ...regex.utf8 import class_within
from .formats import FORMATS
from .numbers import JSON_INTEGER, JSON_NUMBER, NumberBuilder
from .strings import JSON_STRING, json_encoded, string_universe

WHITESPACE_BYTES = sum(1 << c for c in b" \t\n\r")
MAX_WARM_STATES = 64  # derivative states warmed per lexeme
# JSON's punctuation and keywords, which most schemas' grammars spell (objects, arrays, booleans, the
# any-value grammar): a literal is a node per byte, so their nodes are made once, in the base pool,
# and every copy starts with them. They come after the pool family's expressions (warm_caches): as
# family expressions they would join each lexer's family block (parser.lexer.family_block), one
# block per set of family lexemes, and the sets of tokens a schema spells multiply those blocks
# (67 sets over 1,500 benchmark schemas against 15, past the blocks kept per family).
JSON_TOKENS = (b"{", b"}", b"[", b"]", b":", b",", b"true", b"false", b"null")
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
        lexemes = [parse_regex(JSON_STRING, pool), parse_regex(JSON_NUMBER, pool), parse_regex(JSON_INTEGER, pool),
                   whitespace_expr(pool, 20), string_universe(pool)]
        for integer in (False, True):
            NumberBuilder(pool, integer)
        for pattern in FORMATS.values() if formats else ():
            json_encoded(pool, parse_regex(pattern, pool))
        for expr in lexemes:
            warm_derivatives(pool, expr)
        warm_slice_checks(pool)
        family = len(pool)
        for text in JSON_TOKENS:  # after the family's expressions: see JSON_TOKENS
            pool.literal(text)
        pool.warm_caches(family_size=family)
    except Exception:  # noqa: BLE001 - a budget too small for the base pool: schemas start empty
        return None
    return pool


def whitespace_expr(pool: ExprPool, run: int) -> int:
    """One to ``run`` JSON whitespace bytes."""
    return pool.repeat(pool.byteset(WHITESPACE_BYTES), 1, run)


def warm_slice_checks(pool: ExprPool) -> None:
    """Decide, for every repeat of the pool whose body can start like the slicer's string
    character, whether that character is in the body (:func:`class_within`, remembered in the
    memo): the slicer asks it of the JSON string character in every schema's first string."""
    char_expr = parse_regex(SLICE_CHAR, pool)
    char, first = pool.char_ranges[char_expr], pool.first_bytes(char_expr)
    for e in range(len(pool)):
        if pool.kind[e] == K_REPEAT and not first & ~pool.first_bytes(pool.args[e][0]):
            class_within(pool, char, pool.args[e][0])


def warm_derivatives(pool: ExprPool, expr: int) -> None:
    """Take the derivatives of ``expr`` and of its first ``MAX_WARM_STATES`` derivative states by
    one byte of each class (the byte a lexer row takes), so lexers on copies find them cached."""
    seen = {expr}
    frontier = [expr]
    while frontier and len(seen) <= MAX_WARM_STATES:
        e = frontier.pop()
        pool.first_bytes(e)
        for part in pool.byte_classes(e):
            d = pool.derivative(e, (part & -part).bit_length() - 1)
            if d != EMPTY and d not in seen:
                seen.add(d)
                frontier.append(d)
