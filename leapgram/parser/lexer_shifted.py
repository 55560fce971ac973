"""A lexer's rows shifted by a count that overlaps its tail: a state holding ``X{0,n}`` takes
the row of the state with the same structure at another count ``m``, each target's ``X{0,m}``
and ``X{0,m-1}`` replaced by ``X{0,n}`` and ``X{0,n-1}`` (docs/design/lexer-templates.md,
"Counted lexemes beside their tail"). A part of :class:`leapgram.parser.lexer.Lexer`, mixed in."""

from __future__ import annotations

import numpy as np

from ..regex.dfa import DEAD, write_row
from ..regex.expr import EMPTY, INF, K_BYTES, K_CONCAT, K_OR, K_REPEAT

MIN_SHIFTED_COUNT = 3  # X{0,n} with n - 1 >= 2: no constructor law looks at the bound (X{0,0} = ε)
_REFUSED = object()


class ShiftedRows:
    """The methods of :class:`leapgram.parser.lexer.Lexer` this module holds; the state is the lexer's."""

    def _fill_shifted(self, state: int, lex: int, expr: int) -> bool | tuple | None:
        """The row of ``state`` (one item ``(lex, expr)`` without intersection or complement)
        shifted from the row of a state of the same shape at another count (see the module):
        ``True`` when written; else ``(key, n)`` of its shape, for :meth:`_note_shifted` once
        derivatives have filled the row, or ``None`` when it has no shape to shift."""
        entry = self._shifted_of.get(expr)
        if entry is not None:  # a target of a shifted row: its shape is its reference target's
            key, n = entry
            inner = key[1]
        else:
            key, n = self._shape_of(lex, expr)
            if key is None:
                return None
            inner = key[1]
        ref = self._shifted_refs.get(key)
        if ref is None:
            return key, n
        ref_state, m, recipe = ref
        if not self._statics_apart(expr, inner, n, max(m, n)):
            return None
        if recipe is None:
            recipe = self._row_recipe(ref_state, lex, inner, m)
            self._shifted_refs[key] = (ref_state, m, recipe)
        if recipe is False:
            return None
        ops, targets, shapes, index = recipe
        pool = self.pool
        vals = self._run_recipe(ops, pool.repeat(inner, 0, n), pool.repeat(inner, 0, n - 1))
        exprs = [t if t >= 0 else vals[~t] for t in targets]
        local = self._number_singles(lex, exprs)
        shifted_of = self._shifted_of
        for e, shape in zip(exprs, shapes):
            if shape is not None and n - shape[1] >= MIN_SHIFTED_COUNT:
                shifted_of[e] = (shape[0], n - shape[1])
        write_row(self.trans, state, np.array(local, dtype=np.int32), index)  # (trans read after the targets:
        return True  # a new state may grow it)

    def _row_recipe(self, ref_state: int, lex: int, inner: int, m: int) -> tuple | bool:
        """The row of ``ref_state`` (count ``m``) as the steps that build its targets at another
        count: ``(ops, targets, shapes, index)``, each target an expression id or ``~k`` (the
        result of ``ops[k]``), byte ``b`` going to ``targets[index[b]]``; ``shapes``: each
        target's skeleton key and how far its count is below ``m`` (``None``: no moving
        repeat, or none of ``X``), so a shifted target's shape is known without its
        skeleton; ``False`` when a target is
        not one item of ``lex`` or holds an intersection or complement."""
        ref_row = self.trans[ref_state].copy()
        distinct = sorted(set(ref_row.tolist()))
        moved, memo, ops, targets, shapes = self._moving_set(inner, m), {}, [], [], []
        for target in distinct:
            if target == DEAD:
                targets.append(EMPTY)
                shapes.append(None)
                continue
            items = self._items[target]
            if len(items) != 1 or items[0][0] != lex or not self._lows_apart(items[0][1], inner, m):
                return False
            step = self._recipe(items[0][1], moved, m, ops, memo)
            if step is None:
                return False
            targets.append(step)
            key, count = self._shape_of(lex, items[0][1]) if step < 0 else (None, 0)
            shapes.append(None if key is None or key[1] != inner else (key, m - count))
        position = np.empty(distinct[-1] + 1, dtype=np.intp)
        position[distinct] = np.arange(len(distinct))
        return ops, targets, shapes, position[ref_row]

    def _recipe(self, e: int, moved: frozenset, m: int, ops: list, memo: dict) -> int | None:
        """``e`` as a step of :meth:`_row_recipe`: itself when it holds no moving repeat, else
        ``~k`` for the step ``ops[k]`` that builds it (its moving repeats ``X{0,m-j}`` as
        ``(K_REPEAT, j)``); ``None`` for an intersection or complement on the way."""
        found = memo.get(e)
        if found is not None:
            return found
        pool = self.pool
        if e in moved:
            op = (K_REPEAT, m - pool.args[e][2])
        elif self._repeats(e).isdisjoint(moved):
            return e
        else:
            kind = pool.kind[e]
            if kind != K_CONCAT and kind != K_OR:
                return None
            parts = [self._recipe(c, moved, m, ops, memo) for c in pool.args[e]]
            if None in parts:
                return None
            op = (K_CONCAT, *parts) if kind == K_CONCAT else (K_OR, tuple(parts))
        ops.append(op)
        found = memo[e] = ~(len(ops) - 1)
        return found

    def _run_recipe(self, ops: list, count: int, below: int) -> list[int]:
        """The results of ``ops`` (:meth:`_recipe`) with ``X{0,n}`` = ``count`` and ``X{0,n-1}``
        = ``below``: each node interned as the constructors build it (an alternation's
        children sorted)."""
        pool = self.pool
        nullable, has_bool, ids = pool.nullable, pool.has_bool, pool._ids
        vals: list[int] = []
        for op in ops:
            kind = op[0]
            if kind == K_REPEAT:
                vals.append(below if op[1] else count)
            elif kind == K_CONCAT:
                a = op[1] if op[1] >= 0 else vals[~op[1]]
                b = op[2] if op[2] >= 0 else vals[~op[2]]
                vals.append(pool._intern_pair((a, b), nullable[a] and nullable[b], has_bool[a] or has_bool[b]))
            else:
                children = tuple(sorted(c if c >= 0 else vals[~c] for c in op[1]))
                found = ids.get((K_OR, children))
                if found is None:
                    found = pool._intern(K_OR, children, any(nullable[c] for c in children),
                                         any(has_bool[c] for c in children))
                vals.append(found)
        return vals

    def _shape_of(self, lex: int, expr: int) -> tuple:
        """``(key, n)``: ``expr``'s skeleton (with ``lex`` and ``X``) and count, or ``(None, 0)``
        when it has none or may not shift (:meth:`_lows_apart`, :meth:`_may_absorb`)."""
        found = self._moving(expr)
        if found is None:
            return None, 0
        inner, n = found
        if not self._lows_apart(expr, inner, n) or self._may_absorb(expr):
            return None, 0
        skeleton = self._skeleton(expr, self._moving_set(inner, n), n, {})
        return (None, 0) if skeleton is None else ((lex, inner, skeleton), n)

    def _note_shifted(self, state: int, found: tuple, expr: int) -> None:
        """Keep ``state`` (its row filled by derivatives) as the row its shape's other counts
        shift, when its other repeats of ``X`` are apart from its count."""
        key, n = found
        if key not in self._shifted_refs and self._statics_apart(expr, key[1], n, n):
            self._shifted_refs[key] = (state, n, None)

    def _statics_apart(self, expr: int, inner: int, n: int, top: int) -> bool:
        """Whether every repeat ``X{a,k}`` in ``expr`` has ``k = n`` (the count, ``a = 0``)
        or ``k > top + 1`` (a derivative of one of the others then bounds no repeat by a count
        the shift moves), and no other ``Y{0,k}`` has ``MIN_SHIFTED_COUNT <= k <= n`` (``n``
        is the least count, as :meth:`_moving` takes it)."""
        args = self.pool.args
        for r in self._repeats(expr):
            x, low, high = args[r]
            if x == inner:
                if not (high == n and low == 0) and high <= top + 1:
                    return False
            elif low == 0 and MIN_SHIFTED_COUNT <= high <= n:
                return False
        return True

    def _repeats(self, e: int) -> frozenset:
        """The repeats ``Y{a,b}`` (stars included) in ``e``, by id; kept per expression."""
        memo = self._repeats_in
        found = memo.get(e)
        if found is not None:
            return found
        pool = self.pool
        kind, args = pool.kind, pool.args

        def children_of(x: int) -> tuple[int, ...]:
            k = kind[x]
            return () if k == K_BYTES or x <= 1 else args[x][:1] if k == K_REPEAT else args[x]

        def combine(x: int, children: tuple[int, ...]) -> frozenset:
            out = frozenset().union(*(memo[c] for c in children))
            return out | {x} if kind[x] == K_REPEAT else out

        return pool._bottom_up(e, memo, combine, children_of)

    def _moving(self, expr: int) -> tuple[int, int] | None:
        """``(X, n)``: the least bound ``n >= MIN_SHIFTED_COUNT`` of ``expr``'s repeats
        ``X{0,n}``, when one ``X`` has it; else ``None``."""
        args = self.pool.args
        bounds = [args[r][2] for r in self._repeats(expr)
                  if args[r][1] == 0 and args[r][2] != INF and args[r][2] >= MIN_SHIFTED_COUNT]
        if not bounds:
            return None
        n = min(bounds)
        inners = {args[r][0] for r in self._repeats(expr) if args[r][2] == n}
        return (inners.pop(), n) if len(inners) == 1 else None

    def _moving_set(self, inner: int, n: int) -> frozenset | None:
        """The ids of ``X{0,n}`` and ``X{0,n-1}`` (those the pool has)."""
        ids = self.pool._ids
        return frozenset(x for x in (ids.get((K_REPEAT, (inner, 0, n))), ids.get((K_REPEAT, (inner, 0, n - 1))))
                         if x is not None)

    def _lows_apart(self, e: int, inner: int, n: int) -> bool:
        """Whether no repeat ``X{a,b}`` in ``e`` has ``a > 0`` and ``b`` in ``n-1..n`` (one the
        shift would move with its lower bound)."""
        args = self.pool.args
        for r in self._repeats(e):
            x, low, high = args[r]
            if x == inner and low != 0 and (high == n or high == n - 1):
                return False
        return True

    def _skeleton(self, e: int, moving: frozenset, n: int, seen: dict):
        """``e`` with its moving repeats (``moving``: ``X{0,n}``, ``X{0,n-1}``) as ``("X",
        n - bound)`` and the expressions without one as themselves; ``None`` for an
        intersection or complement on the way."""
        found = seen.get(e, _REFUSED)
        if found is not _REFUSED:
            return found
        pool = self.pool
        if e in moving:
            out = ("X", n - pool.args[e][2])
        elif self._repeats(e).isdisjoint(moving):
            out = e
        else:
            kind, args = pool.kind[e], pool.args[e]
            out = None
            if kind == K_CONCAT:
                parts = [self._skeleton(c, moving, n, seen) for c in args]
                out = None if None in parts else (K_CONCAT, *parts)
            elif kind == K_OR:
                parts = [self._skeleton(c, moving, n, seen) for c in args]
                out = None if None in parts else (K_OR, frozenset(parts))
        seen[e] = out
        return out

    def _may_absorb(self, expr: int) -> bool:
        """Whether ``expr`` holds a star ``R*`` and a bounded ``Y{a,b}`` with ``Y ⊆ R*``:
        ``_absorb_counted_heads`` may then keep one of two members by id, which a shift does
        not preserve (a derivative's stars and repeats are ``expr``'s own, or ``Y{a,b}``'s
        with other bounds)."""
        pool = self.pool
        args = pool.args
        repeats = self._repeats(expr)
        stars = [args[r][0] for r in repeats if args[r][1] == 0 and args[r][2] == INF]
        if not stars:
            return False
        inners = {args[r][0] for r in repeats if args[r][2] != INF}
        return any(pool._within_star(y, r) for y in inners for r in stars)
