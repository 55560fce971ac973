"""Widening: an expression equal to a pool expression on strings of at most ``span`` bytes,
with repeat bounds above ``span`` relaxed, so a long bounded repeat (``maxLength: 32767``) keeps
one expression at every position until its end is near (argument: docs/design/regex-derivatives.md).
"""

from __future__ import annotations

from .construction import INF, K_CONCAT, K_OR, K_REPEAT, Constructors


class Widening(Constructors):
    """``widened(e, span)`` and the repeat bounds it reads."""

    _bounds: dict[int, int]
    _widened: dict[tuple[int, int], int]

    def widened(self, e: int, span: int) -> int:
        """An expression equivalent to ``e`` on strings of at most ``span`` bytes (as matches and
        as prefixes of matches): repeat bounds above ``span`` are relaxed, so a mask, which walks
        at most one token of bytes, may walk it instead of ``e``. Expressions with intersection or
        complement are returned as they are. Argument: docs/design/regex-derivatives.md."""
        if self.largest_count <= span + 1 or self.has_bool[e] or self._count_bound(e) <= span + 1:
            return e
        key = (e, span)
        found = self._widened.get(key)
        if found is None:
            found = self._widen(e, span, 0, {})
            self._widened[key] = found
        return found

    def _widen(self, e: int, span: int, depth: int, done: dict[int, int]) -> int:
        """``done``: the subexpressions widened so far in this call (an expression is a DAG: the
        flexible whitespace run shares each state's tail twice, 2^20 paths without it)."""
        found = done.get(e)
        if found is not None:
            return found
        if self._count_bound(e) <= span + 1 or depth > 200:  # deeper: left exact (correct, not widened)
            return e
        kind = self.kind[e]
        args = self.args[e]
        found = e
        if kind == K_CONCAT:
            found = self.concat(self._widen(args[0], span, depth + 1, done), self._widen(args[1], span, depth + 1, done))
        elif kind == K_OR:
            found = self.alt([self._widen(x, span, depth + 1, done) for x in args])
        elif kind == K_REPEAT:
            inner, low, high = args
            high = INF if high == INF or high > span else high
            found = self.repeat(self._widen(inner, span, depth + 1, done), min(low, span + 1), high)
        done[e] = found
        return found

    def _count_bound(self, e: int) -> int:
        """The largest repeat bound (``low``, or a finite ``high``) anywhere in ``e``; 0 if none."""
        found = self._bounds.get(e)
        return self._bottom_up(e, self._bounds, self._bound_from, self._children) if found is None else found

    def _bound_from(self, x: int, children: tuple[int, ...]) -> int:
        value = max((self._bounds[c] for c in children), default=0)
        if self.kind[x] == K_REPEAT:
            value = max(value, self.args[x][1], self.args[x][2])
        return value
