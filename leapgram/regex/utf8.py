"""Unicode code point sets as UTF-8 byte-sequence expressions.

A code point range becomes a union of byte-range sequences such as ``[\\xE0][\\xA0-\\xBF][\\x80-\\xBF]``
(the construction used by RE2 and Rust's ``regex``): split the range where the encoded length
changes, then where a continuation byte would not cover its full ``80-BF`` span.
Surrogates (U+D800-U+DFFF) have no UTF-8 form and are never produced.
"""

from __future__ import annotations

from ..errors import BudgetExceededError
from .expr import K_BYTES, K_CONCAT, K_OR, ExprPool

SEEDED_BRANCHES = 64  # _seed_facts: classes of at least this many byte sequences

MAX_CODE_POINT = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)

Ranges = tuple[tuple[int, int], ...]


def normalize(ranges: list[tuple[int, int]]) -> Ranges:
    """Sorted, merged, surrogate-free inclusive code point ranges."""
    pieces: list[tuple[int, int]] = []
    for low, high in ranges:
        if low <= SURROGATES[1] and high >= SURROGATES[0]:
            if low < SURROGATES[0]:
                pieces.append((low, SURROGATES[0] - 1))
            if high > SURROGATES[1]:
                pieces.append((SURROGATES[1] + 1, high))
        else:
            pieces.append((low, high))
    pieces.sort()
    merged: list[tuple[int, int]] = []
    for low, high in pieces:
        if merged and low <= merged[-1][1] + 1:
            if high > merged[-1][1]:
                merged[-1] = (merged[-1][0], high)
        else:
            merged.append((low, high))
    return tuple(merged)


def negate(ranges: Ranges) -> Ranges:
    """Every code point (but surrogates) outside ``ranges``."""
    out: list[tuple[int, int]] = []
    start = 0
    for low, high in normalize(list(ranges)):
        if low > start:
            out.append((start, low - 1))
        start = high + 1
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return normalize(out)


def byte_sequences(low: int, high: int) -> list[list[tuple[int, int]]]:
    """Byte-range sequences whose union is exactly the UTF-8 encodings of ``low..high``."""
    out: list[list[tuple[int, int]]] = []
    stack = [(low, high)]
    while stack:
        start, end = stack.pop()
        split = _split_point(start, end)
        if split is not None:
            stack.append((split + 1, end))
            stack.append((start, split))
            continue
        first = chr(start).encode("utf-8")
        last = chr(end).encode("utf-8")
        out.append([(first[i], last[i]) for i in range(len(first))])
    return out


def _split_point(start: int, end: int) -> int | None:
    for boundary in (0x7F, 0x7FF, 0xFFFF):
        if start <= boundary < end:
            return boundary
    if end <= 0x7F:
        return None
    for i in range(1, 4):
        mask = (1 << (6 * i)) - 1
        if start & ~mask != end & ~mask:
            if start & mask != 0:
                return start | mask
            if end & mask != mask:
                return (end & ~mask) - 1
    return None


def ranges_to_expr(pool: ExprPool, ranges: Ranges) -> int:
    """The expression matching the UTF-8 encoding of one code point from ``ranges``.

    The pool remembers the code point set of the result (``pool.char_ranges``), so that class
    inclusion can later be decided on ranges instead of automata, and the result by the ranges
    (``pool.memo``): patterns repeat the same classes (``.``, ``\\w``, every character of a
    literal), and a wide one is hundreds of byte sequences to build again, if to the same node.
    """
    key = ("ranges", ranges if ranges.__class__ is tuple else tuple(ranges))
    found = pool.memo.get(key)
    if found is None:
        found = pool.memo[key] = _ranges_to_expr(pool, ranges)
    return found


def _ranges_to_expr(pool: ExprPool, ranges: Ranges) -> int:
    branches = []
    shortest, longest = 4, 0
    for low, high in ranges:
        for seq in byte_sequences(low, high):
            parts = [pool.byteset(_range_mask(a, b)) for a, b in seq]
            branches.append(pool.concat_all(parts))
            shortest, longest = min(shortest, len(seq)), max(longest, len(seq))
    expr = pool.alt(branches)
    pool.char_ranges.setdefault(expr, ranges)
    if len(branches) >= SEEDED_BRANCHES and pool.kind[expr] == K_OR:
        _seed_facts(pool, expr, shortest, longest)
    return expr


def _seed_facts(pool: ExprPool, expr: int, shortest: int, longest: int) -> None:
    """Put the lengths of a wide class ``expr`` (an alternation of byte-class sequences,
    ``\\p{L}`` is ~1,000 of them) and its largest repeat bound (none) in the pool's caches,
    as the pool would work them out node by node: each is a walk over every node of the class
    otherwise, made again in each grammar's pool (each has its own copy of the class) inside
    the first mask that meets it (round 23, o79409)."""
    pool._lengths.setdefault(expr, longest)
    pool._shortest.setdefault(expr, shortest)
    pool.set_count_bound(expr, 0)


def ranges_include(outer: Ranges, inner: Ranges) -> bool:
    """Whether every code point of ``inner`` is in ``outer`` (both normalized)."""
    for low, high in inner:
        if not any(a <= low and high <= b for a, b in outer):
            return False
    return True


def _range_mask(low: int, high: int) -> int:
    return ((1 << (high + 1)) - 1) ^ ((1 << low) - 1)


def class_within(pool: ExprPool, char: Ranges, inner: int) -> bool:
    """Whether every character of ``char`` (code point ranges) matches ``inner`` as one whole
    string (``Y ⊆ X`` of the slicer); ``False`` when that cannot be decided within
    ``Limits.max_emptiness_steps``. Remembered in the pool's memo, so a pool copied from a base
    that answered it (the JSON string character) answers at once."""
    return pool.remembered(("class within", char, inner), lambda: _class_within(pool, char, inner))


def _class_within(pool: ExprPool, char: Ranges, inner: int) -> bool:
    try:
        outer = pool.char_ranges.get(inner)
        if outer is not None:
            return ranges_include(outer, char)
        if pool.kind[inner] == K_OR and _pieces_included(pool, char, pool.args[inner]):
            return True
        return pool.is_subset(ranges_to_expr(pool, char), inner)
    except BudgetExceededError:
        return False


def _pieces_included(pool: ExprPool, char: Ranges, branches: tuple[int, ...]) -> bool:
    """A quick sufficient test of ``Y ⊆ X`` for ``X`` an alternation (``\\.|[^"\\]`` once
    flattened into its UTF-8 byte sequences): every UTF-8 byte sequence class of ``Y`` lies,
    byte by byte, inside one branch of ``X`` of the same length. Branches that cannot start
    like ``Y`` (the ~1,000 escape sequences of a JSON string character) are not looked at."""
    wanted = [[_range_mask(a, b) for a, b in seq]
              for low, high in char for seq in byte_sequences(low, high)]
    starts = 0
    for masks in wanted:
        starts |= masks[0]
    shapes = []
    for branch in branches:
        if pool.first_bytes(branch) & starts:
            parts = _byteset_sequence(pool, branch)
            if parts is not None:
                shapes.append(parts)
    return all(any(len(shape) == len(masks) and all(m & ~p == 0 for m, p in zip(masks, shape))
                   for shape in shapes)
               for masks in wanted)


def _byteset_sequence(pool: ExprPool, e: int) -> list[int] | None:
    """The byte classes of ``e`` when it is a fixed sequence of byte classes, else ``None``."""
    out = []
    while pool.kind[e] == K_CONCAT:
        head, e = pool.args[e]
        if pool.kind[head] != K_BYTES:
            return None
        out.append(pool.args[head][0])
    if pool.kind[e] != K_BYTES:
        return None
    out.append(pool.args[e][0])
    return out
