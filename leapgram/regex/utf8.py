"""Unicode code point sets as UTF-8 byte-sequence expressions.

A code point range becomes a union of byte-range sequences such as ``[\\xE0][\\xA0-\\xBF][\\x80-\\xBF]``
(the construction used by RE2 and Rust's ``regex``): split the range where the encoded length
changes, then where a continuation byte would not cover its full ``80-BF`` span.
Surrogates (U+D800-U+DFFF) have no UTF-8 form and are never produced.
"""

from __future__ import annotations

from .expr import ExprPool

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
    inclusion can later be decided on ranges instead of automata.
    """
    branches = []
    for low, high in ranges:
        for seq in byte_sequences(low, high):
            parts = [pool.byteset(_range_mask(a, b)) for a, b in seq]
            branches.append(pool.concat_all(parts))
    expr = pool.alt(branches)
    pool.char_ranges.setdefault(expr, ranges)
    return expr


def ranges_include(outer: Ranges, inner: Ranges) -> bool:
    """Whether every code point of ``inner`` is in ``outer`` (both normalized)."""
    for low, high in inner:
        if not any(a <= low and high <= b for a, b in outer):
            return False
    return True


def _range_mask(low: int, high: int) -> int:
    return ((1 << (high + 1)) - 1) ^ ((1 << low) - 1)
