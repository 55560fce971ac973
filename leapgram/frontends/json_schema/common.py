"""The expressions every schema needs, built once per process and copied per schema.

The JSON string and number lexemes and the derivatives a lexer takes of them live in a *base pool*
(per :class:`Limits`); each translation starts from :meth:`ExprPool.copy` of it, independent of the
base and of other schemas. Why: docs/design/json-schema.md ("Time to first mask"). The formats and
their spellings (two thirds of the base pool's build, mostly the URI and IRI regexes) are in a
second base pool, its own pool family, built when a process's first schema with a ``format`` asks
for it (``leapgram.warm_up`` builds it): schemas without one copy the smaller pool. That pool also
holds each format's value states (after the opening quote) and their lexer row template, made as
it is built, so no mask makes them (docs/design/lexer-templates.md, "A format's value states").
A base pool built once is written to the on-disk cache (:mod:`leapgram.pool_cache`, through
:mod:`leapgram.regex.pool_store`) and read back by later
processes (the pool of the formats: about 90 ms of CPU to build, 7 ms to read).
"""

from __future__ import annotations

import functools
import threading

import numpy as np

from ...limits import Limits
from ...regex.dfa import ROW_TEMPLATE, TEMPLATE_MEMBER, make_row_template
from ...regex.expr import EMPTY, EPSILON, INF, K_AND, K_BYTES, K_NOT, K_REPEAT, ExprPool
from ...regex.pool_store import read_pool, write_pool
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
# A format's value states (after the opening quote) get a row template at the pool's build when
# they are at most MAX_FORMAT_STATES (parser.lexer_blocks' MAX_FAMILY_TEMPLATE_STATES). A format
# whose value has more than MAX_FORMAT_POSITIONS positions (format_positions: the JSON-encoded
# value's byte classes, repeats counted out; 1,442 at most for the formats that fit, 10,208 and
# more for idn-email, idn-hostname, iri, iri-reference, which reach 416 states to thousands) is
# not explored: its rows are made as a mask reaches them, as for any schema expression.
MAX_FORMAT_STATES = 256
MAX_FORMAT_POSITIONS = 4096
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
    settings = _build_settings(formats)
    pool = read_pool(limits, formats, settings)
    if pool is None:
        pool = _build_base_pool(limits, formats)
        if pool is not None:
            write_pool(pool, limits, formats, settings)
    return pool


def _build_settings(formats: bool) -> tuple:
    """The values of the module constants a base pool's build reads, part of its key in the
    on-disk cache (:mod:`leapgram.pool_cache`): a patched constant is another pool."""
    return (JSON_STRING, JSON_NUMBER, JSON_INTEGER, SHORT_RUN, LONG_RUN, MAX_WARM_STATES, MAX_FORMAT_STATES,
            MAX_FORMAT_POSITIONS, JSON_TOKENS, SET_UP_TOKENS, SLICE_CHAR, tuple(FORMATS.items()) if formats else ())


def _build_base_pool(limits: Limits, formats: bool) -> ExprPool | None:
    pool = ExprPool(limits)
    try:
        whitespace = flexible_whitespace_expr(pool)
        lexemes = [parse_regex(JSON_STRING, pool), parse_regex(JSON_NUMBER, pool), parse_regex(JSON_INTEGER, pool),
                   whitespace, string_universe(pool)]
        for integer in (False, True):
            NumberBuilder(pool, integer)
        values = [json_encoded(pool, parse_regex(pattern, pool)) for pattern in (FORMATS.values() if formats else ())]
        for expr in lexemes:
            warm_derivatives(pool, expr, limit=None if expr == whitespace else MAX_WARM_STATES)
        first_state = len(pool)
        templates = value_templates(pool, values)
        states = range(first_state, len(pool))
        warm_slice_checks(pool)
        family = len(pool)
        tokens = {text: pool.literal(text) for text in JSON_TOKENS}  # after the family's expressions: see JSON_TOKENS
        pool.warm_caches(family_size=family)
        keep_templates(pool, templates, states)
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


def value_templates(pool: ExprPool, values: list[int]) -> dict[int, tuple | None]:
    """The lexer row template of each format's value states, after the opening quote (``F'
    "``, ``F'`` in ``values``: a format's JSON-encoded expression), made in ``pool``
    (:func:`make_row_template`), by ``F' "``; ``None`` for a format over
    ``MAX_FORMAT_POSITIONS`` (not explored) or ``MAX_FORMAT_STATES``. The states stay in the
    pool (family members, the same ids in every copy); the derivatives taken are forgotten
    after, as the templates give their rows (each copy's derivative cache, copied at its first
    derivative, would hold thousands more entries)."""
    known = pool.derivatives_known()
    quote = pool.literal(b'"')
    templates: dict[int, tuple | None] = {}
    for value in values:
        tail = pool.concat(value, quote)
        if tail not in templates:
            fits = format_positions(pool, tail) <= MAX_FORMAT_POSITIONS
            templates[tail] = _compact(make_row_template(pool, tail, 1 << 62, MAX_FORMAT_STATES)) if fits else None
    pool.forget_derivatives(known)
    return templates


def _compact(template: tuple | None) -> tuple | None:
    """A format's template with an int32 table: the formats' templates are up to 256 states
    each and live as long as the process (int32 halves them: the pool of the formats +21 → +10
    MB of RSS), and a format value's rows are few, so the gather's index cast costs little."""
    if template is None:
        return None
    exprs, table, root_reached = template
    table = table.astype(np.int32)
    table.flags.writeable = False
    return exprs, table, root_reached


def keep_templates(pool: ExprPool, templates: dict[int, tuple | None], states: range) -> None:
    """Put ``templates`` (:func:`value_templates`) in the memo of ``pool``'s family, where the
    lexers' ``row_template`` finds them, and ``None`` for every other expression the formats'
    values added to the family (``states``: their states, and the tails of the formats not
    explored), so that no mask makes a template of up to 256 states for one of them;
    each state of a template under ``TEMPLATE_MEMBER`` (the template, its index there, whether a
    byte leads back to it), for a lexer that reaches it otherwise than from the format's first
    state (past an ``anyOf`` of formats: ``Lexer._fill_from_template``)."""
    memo = pool.family.memo
    for tail, template in templates.items():
        memo[(ROW_TEMPLATE, tail)] = template
    for template in templates.values():
        if template is not None:
            exprs, table, _ = template
            reached = np.zeros(len(exprs) + 1, dtype=bool)
            reached[table] = True
            for index, expr in enumerate(exprs):
                if expr in states:
                    memo.setdefault((TEMPLATE_MEMBER, expr), (template, index, bool(reached[index + 1])))
    for expr in states:
        memo.setdefault((ROW_TEMPLATE, expr), None)


def format_positions(pool: ExprPool, expr: int) -> float:
    """How many byte classes ``expr`` spells with its repeats counted out (``R{a,b}``: ``b``
    times ``R``'s, or ``max(a, 1)`` times when unbounded), infinite with an intersection or
    complement: an estimate of the states its derivatives reach, read off the expression in
    microseconds (the formats' derivative states are milliseconds each hundred)."""
    kind, args = pool.kind, pool.args

    def combine(e: int, children: tuple[int, ...], counts: dict) -> float:
        k = kind[e]
        if k == K_BYTES:
            return 1
        if k == K_AND or k == K_NOT:
            return float("inf")
        if k == K_REPEAT:
            _, low, high = args[e]
            return counts[children[0]] * (max(low, 1) if high == INF else high)
        return sum(counts[c] for c in children)

    return pool.fold(expr, combine)


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
