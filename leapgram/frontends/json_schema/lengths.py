"""String lengths (code points) pushed into an expression instead of intersected with it.

``pattern ∩ C{low,high}`` is exact but every lexer state then carries a counter beside the pattern,
and deciding emptiness walks the product. Most schemas do not need it: the pattern's own length
bounds already satisfy the limits (``^[0-9]{5}$`` with ``maxLength: 10``), or the length can be
moved into the one repetition that varies (``^[a-z][a-z0-9_]*$`` with ``maxLength: 64`` is
``[a-z][a-z0-9_]{0,63}``). :func:`with_length` tries those rewrites and intersects otherwise.
"""

from __future__ import annotations

import math

from ...regex.expr import EMPTY, EPSILON, INF, K_AND, K_BYTES, K_CONCAT, K_OR, K_REPEAT, ExprPool

ASCII = (1 << 128) - 1
Bounds = tuple[int, float]  # (fewest, most) code points; most may be math.inf


def with_length(pool: ExprPool, decoded: int, low: int, high: int) -> int:
    """``decoded`` restricted to ``low..high`` code points (``high == INF``: no upper limit)."""
    top = math.inf if high == INF else high
    try:
        fitted = _LengthFitter(pool).fit(decoded, low, top)
    except RecursionError:
        fitted = None
    if fitted is not None:
        return fitted
    return pool.intersect([decoded, pool.repeat(_any_char(pool), low, high)])


def _any_char(pool: ExprPool) -> int:
    from .ecma import any_char

    return any_char(pool)


class _LengthFitter:
    def __init__(self, pool: ExprPool) -> None:
        self.pool = pool
        self.memo: dict[int, Bounds | None] = {}

    def bounds(self, e: int) -> Bounds | None:
        """Fewest and most code points of the strings of ``e``; None when unknown."""
        if e not in self.memo:
            self.memo[e] = self._bounds(e)
        return self.memo[e]

    def _bounds(self, e: int) -> Bounds | None:
        pool = self.pool
        kind, args = pool.kind[e], pool.args[e]
        if e == EPSILON:
            return 0, 0
        if e in pool.char_ranges or (kind == K_BYTES and args[0] & ~ASCII == 0):
            return 1, 1
        if kind == K_CONCAT:
            parts = [self.bounds(x) for x in args]
            return None if None in parts else (parts[0][0] + parts[1][0], parts[0][1] + parts[1][1])
        if kind in (K_OR, K_AND):
            parts = [self.bounds(x) for x in args]
            known = [p for p in parts if p is not None]
            if kind == K_OR:
                return None if len(known) < len(parts) else (min(p[0] for p in known), max(p[1] for p in known))
            return (max(p[0] for p in known), min(p[1] for p in known)) if known else None
        if kind == K_REPEAT:
            inner = self.bounds(args[0])
            if inner is None:
                return None
            most = math.inf if args[2] == INF else inner[1] * args[2]
            return inner[0] * args[1], most if inner[1] else 0
        return None

    def fit(self, e: int, low: int, high: float) -> int | None:
        """``e`` restricted to ``low..high`` code points without intersection, or None."""
        bounds = self.bounds(e)
        if bounds is not None:
            if low <= bounds[0] and bounds[1] <= high:
                return e
            if bounds[1] < low or bounds[0] > high:
                return EMPTY
        pool = self.pool
        kind, args = pool.kind[e], pool.args[e]
        if kind == K_REPEAT and self.bounds(args[0]) == (1, 1):
            repeat_low = max(args[1], low)
            repeat_high = high if args[2] == INF else min(args[2], high)
            if repeat_high < repeat_low:
                return EMPTY
            return pool.repeat(args[0], repeat_low, INF if repeat_high == math.inf else int(repeat_high))
        if kind == K_CONCAT:
            return self.fit_concat(args[0], args[1], low, high)
        if kind == K_OR:
            branches = [self.fit(x, low, high) for x in args]
            return None if None in branches else pool.alt(branches)
        return None

    def fit_concat(self, head: int, tail: int, low: int, high: float) -> int | None:
        for fixed, rest, fixed_first in ((head, tail, True), (tail, head, False)):
            bounds = self.bounds(fixed)
            if bounds is not None and bounds[0] == bounds[1]:
                size = bounds[0]
                fitted = self.fit(rest, max(low - size, 0), high - size)
                if fitted is None:
                    return None
                return self.pool.concat(fixed, fitted) if fixed_first else self.pool.concat(fitted, fixed)
        return None
