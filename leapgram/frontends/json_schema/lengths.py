"""``minLength``/``maxLength`` combined with a pattern or format, without an intersection where
the expression's shape allows it.

An intersection with ``any{lo,hi}`` makes every DFA state carry a character counter and an
emptiness search, which costs time quadratic in the bound. Most patterns with length limits are
a run of one character class between fixed-length parts (``^[a-z0-9_]+$``, ``^\\S.*$``), so the
limits can move into that run's bounds instead: ``A C{l,h} B`` with ``|A|+|B| = k`` becomes
``A C{max(l,lo-k), min(h,hi-k)} B``. Lengths count code points: a UTF-8 continuation byte adds 0.
"""

from __future__ import annotations

from ...regex.expr import EMPTY, INF, K_BYTES, K_CONCAT, K_EPS, K_OR, K_REPEAT, ExprPool

CONTINUATION = sum(1 << b for b in range(0x80, 0xC0))


def char_length(pool: ExprPool, e: int) -> tuple[int, int] | None:
    """(min, max) length in code points of the strings of ``e`` (max ``INF``); None if unknown."""
    kind, args = pool.kind[e], pool.args[e]
    if kind == K_EPS:
        return 0, 0
    if kind == K_BYTES:
        if args[0] & CONTINUATION == 0:
            return 1, 1
        return (0, 0) if args[0] & ~CONTINUATION == 0 else None
    if kind == K_CONCAT:
        head, tail = char_length(pool, args[0]), char_length(pool, args[1])
        if head is None or tail is None:
            return None
        return head[0] + tail[0], INF if INF in (head[1], tail[1]) else head[1] + tail[1]
    if kind == K_OR:
        parts = [char_length(pool, x) for x in args]
        if any(p is None for p in parts):
            return None
        return min(p[0] for p in parts), INF if any(p[1] == INF for p in parts) else max(p[1] for p in parts)
    if kind == K_REPEAT:
        inner, low, high = args
        found = char_length(pool, inner)
        if found is None:
            return None
        top = INF if INF in (high, found[1]) else found[1] * high
        return found[0] * low, top
    return None


def within_length(pool: ExprPool, e: int, low: int, high: int) -> int | None:
    """``e ∩ any{low,high}`` built without intersection, or None when ``e`` has another shape."""
    found = char_length(pool, e)
    if found is None:
        return None
    if found[0] >= low and (high == INF or (found[1] != INF and found[1] <= high)):
        return e
    if pool.kind[e] == K_OR:
        branches = [within_length(pool, x, low, high) for x in pool.args[e]]
        return None if any(b is None for b in branches) else pool.alt(branches)
    items = []
    while pool.kind[e] == K_CONCAT:
        head, e = pool.args[e]
        items.append(head)
    items.append(e)
    middle = _middle_of_loose_ends(pool, items, high)
    if middle is not None:
        return within_length(pool, middle, low, high)
    return _adjust_run(pool, items, low, high)


def _middle_of_loose_ends(pool: ExprPool, items: list[int], high: int) -> int | None:
    """``m`` of ``R* m S*`` (an unanchored pattern: a loop at either end or both, each loop's
    strings of at least one code point) when every string of ``m`` has at least ``high`` code
    points: a string of at most ``high`` code points in ``R* m S*`` is then ``u x v`` with
    ``x`` in ``m`` and ``|u| + |v| ≤ high - |x| ≤ 0``, so ``u`` and ``v`` are empty and the
    string is in ``m`` (``[0-9]{10}`` with ``minLength``/``maxLength`` 10 is ``[0-9]{10}``, no
    intersection). ``None`` for other shapes."""
    if high == INF or len(items) < 2:
        return None
    start = 1 if _is_loop(pool, items[0]) else 0
    end = len(items) - 1 if _is_loop(pool, items[-1]) else len(items)
    if (start == 0 and end == len(items)) or end <= start:
        return None
    middle = pool.concat_all(items[start:end])
    length = char_length(pool, middle)
    return middle if length is not None and length[0] >= high else None


def _is_loop(pool: ExprPool, e: int) -> bool:
    """Whether ``e`` is ``R*`` with every string of ``R`` at least one code point long."""
    if pool.kind[e] != K_REPEAT or pool.args[e][1] != 0 or pool.args[e][2] != INF:
        return False
    length = char_length(pool, pool.args[e][0])
    return length is not None and length[0] >= 1


def _adjust_run(pool: ExprPool, items: list[int], low: int, high: int) -> int | None:
    lengths = [char_length(pool, x) for x in items]
    loose = [i for i, n in enumerate(lengths) if n is None or n[0] != n[1]]
    if len(loose) != 1 or pool.kind[items[loose[0]]] != K_REPEAT:
        return None
    index = loose[0]
    inner, run_low, run_high = pool.args[items[index]]
    if char_length(pool, inner) != (1, 1):
        return None
    fixed = sum(n[0] for i, n in enumerate(lengths) if i != index)
    new_low = max(run_low, low - fixed)
    if high == INF:
        new_high = run_high
    else:
        cap = high - fixed  # INF is -1: a negative cap must not read as "unbounded"
        if cap < 0:
            return EMPTY
        new_high = cap if run_high == INF else min(run_high, cap)
    if new_high != INF and new_high < max(new_low, 0):
        return EMPTY
    items[index] = pool.repeat(inner, max(new_low, 0), new_high)
    return pool.concat_all(items)
