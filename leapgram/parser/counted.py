"""Rows of counted lexemes by shifting the count: the states of ``r X{a,b} T``.

A JSON string with ``minLength``/``maxLength`` is the lexeme ``" X{lo,hi} "`` (``X`` one JSON
string character: UTF-8 sequences and escapes). Its states are ``S(r, a, b) = r X{a,b} T``, ``r``
a residual of ``X`` (a state of ``X``'s own row template) or nothing, for every count left:
too many for a row template, and each row by derivatives cost one derivative and a concatenation
re-associated per byte class. But the rows only differ by the counts of their targets:

- ``S(r, a, b)``, ``r`` a residual: byte ``c`` leads to ``S(d(r, c), a, b)``: the row of ``r`` in
  ``X``'s template, each target completed with the same ``X{a,b} T``;
- ``S(ε, a, b) = X{a,b} T`` (``b > 0``): a byte of ``X`` leads to ``S(d(X, c), a-1, b-1)`` (``X``'s
  first row, counts one lower); when ``a = 0`` a byte of ``T`` leads to ``d(T, c)``; other bytes
  are dead.

This holds when ``ε`` is the only nullable state of ``X``'s template, ``T`` has no intersection or
complement and no byte can start both ``X`` and ``T`` (:func:`counted_shape`). The targets are
built with the constructors' own results (``r``'s concatenation spine interned onto
``concat(repeat(X, a, b), T)``): the same expression ids a derivative gives, so the states are
the ones rows built by derivatives make. Design: docs/design/lexer-templates.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..regex.dfa import class_index
from ..regex.emptiness import WITNESS_BYTES
from ..regex.expr import EMPTY, EPSILON, INF, K_CONCAT, K_REPEAT, ExprPool

MAX_SPINE = 8  # elements of a residual's concatenation (JSON's longest: a surrogate pair's escape)


@dataclass(frozen=True)
class CountedChar:
    """``X``'s row template as :class:`CountedShape` reads it: ``exprs[i]`` and ``table[i, b]``
    as in :func:`leapgram.parser.lexer.row_template` (``1 + j``: ``exprs[j]``; 0: dead), ``eps``
    the index of ``ε``, ``spines[i]`` the elements of ``exprs[i]``'s right-associated
    concatenation (``None`` for ``ε``), ``spine_index`` the inverse, ``targets[i]`` the distinct
    live entries of row ``i``."""

    char: int
    exprs: tuple[int, ...]
    table: np.ndarray
    eps: int
    spines: tuple[tuple[int, ...] | None, ...]
    spine_index: dict[tuple[int, ...], int]
    targets: tuple[tuple[int, ...], ...]
    first: int


@dataclass
class CountedShape:
    """One ``(X, T)`` of a lexer: the expressions ``concat(repeat(X, a, b), T)`` by ``(a, b)``."""

    char: CountedChar
    tail: int
    bases: dict[tuple[int, int], int] = field(default_factory=dict)

    def base(self, pool: ExprPool, low: int, high: int) -> int:
        """``X{low,high} T`` as the constructors build it."""
        key = (low, high)
        found = self.bases.get(key)
        if found is None:
            found = self.bases[key] = pool.concat(pool.repeat(self.char.char, low, high), self.tail)
        return found

    def state_expr(self, pool: ExprPool, index: int, base: int) -> int:
        """``S(exprs[index], ·)`` onto ``base`` (``X{a,b} T``): the residual's spine interned onto
        it, which is what ``concat`` does for spine elements that are neither nullable nor a
        star (:func:`counted_char` checks)."""
        if index == self.char.eps:
            return base
        if base == EPSILON:  # concat(r, ε) = r
            return self.char.exprs[index]
        pairs = pool._pairs
        has_bool = pool.has_bool
        out = base
        for head in reversed(self.char.spines[index]):
            pair = (head, out)
            found = pairs.get(pair)
            out = pool._intern_pair(pair, False, has_bool[head] or has_bool[out]) if found is None else found
        return out


def counted_char(pool: ExprPool, char: int, template) -> CountedChar | None:
    """The :class:`CountedChar` of ``char`` from its row template (``(exprs, table, _)`` or
    ``None``), or ``None`` when shifted rows would not be exact: ``char`` or a residual other
    than ``ε`` nullable, a spine element nullable or a star, no ``ε`` state."""
    if template is None or pool.nullable[char]:
        return None
    exprs, table, _ = template
    if EPSILON not in exprs:
        return None
    kind, args, nullable = pool.kind, pool.args, pool.nullable
    spines: list[tuple[int, ...] | None] = []
    for e in exprs:
        if e == EPSILON:
            spines.append(None)
            continue
        if nullable[e]:
            return None
        spine = []
        while kind[e] == K_CONCAT:
            head, e = args[e]
            spine.append(head)
        spine.append(e)
        if len(spine) > MAX_SPINE or any(nullable[x] or pool._is_star(x) for x in spine):
            return None
        spines.append(tuple(spine))
    targets = tuple(tuple(sorted(set(row.tolist()) - {0})) for row in table)
    index = {spine: i for i, spine in enumerate(spines) if spine is not None}
    index[()] = exprs.index(EPSILON)
    return CountedChar(char, tuple(exprs), table, exprs.index(EPSILON), tuple(spines), index, targets,
                       pool.first_bytes(char))


def split_counted(pool: ExprPool, expr: int) -> tuple[tuple[int, ...], int, int, int, int] | None:
    """``(heads, X, a, b, T)`` when ``expr`` is ``heads... X{a,b} T`` (a right-associated
    concatenation whose first repeat is ``X{a,b}``, within ``MAX_SPINE`` heads) and ``X`` matches
    finitely many strings, else ``None``. (An infinite ``X`` is no character: the loop of an
    automaton written by state elimination, a ``multipleOf`` by remainders, whose row template
    took 50 ms of derivatives to find too many states, in a mask.)"""
    kind, args = pool.kind, pool.args
    heads: list[int] = []
    e = expr
    while len(heads) <= MAX_SPINE:
        k = kind[e]
        if k == K_REPEAT:
            char, low, high = args[e]
            return (tuple(heads), char, low, high, EPSILON) if pool.is_finite(char) else None
        if k != K_CONCAT:
            return None
        head, e = args[e]
        if kind[head] == K_REPEAT:
            char, low, high = args[head]
            return (tuple(heads), char, low, high, e) if pool.is_finite(char) else None
        heads.append(head)
    return None


def shifted(low: int, high: int) -> tuple[int, int]:
    """The counts after one more ``X``."""
    return max(low - 1, 0), high if high == INF else high - 1


# Product rows: a pattern and a length, ``(P ∩ r X{a,b}) T`` (docs/design/lexer-templates.md,
# "Counted lexemes under a pattern"), made as the strings reach them.
MAX_PATTERN_STATES = 256  # states of the pattern's row template (band-manifest's email: 214)
MAX_PRODUCT_NODES = 4096  # (pattern state, residual) pairs of a ProductGraph
MAX_LAYERS = 600  # layers of ProductGraph.member before they repeat; past it, emptiness by a search
WITNESS_STEPS = 64  # bytes of ProductGraph._witness's path before the graph is made whole
SEARCH_ENTRIES = 8  # ProductGraph._search only for counts up to this many characters
SEARCH_STATES = 512  # (node, entries) pairs of one ProductGraph._search before the graph is made whole


class PatternRows:
    """A pattern's row template made a state at a time: ``exprs`` the states met so far,
    ``rows[j]`` state ``j``'s byte classes and their targets (``1 + k`` for ``exprs[k]``, 0
    dead), ``None`` until asked. Each state met is kept in ``memo`` (the pool's) as
    ``("counted pattern", expr) -> (self, j)``; past ``MAX_PATTERN_STATES`` states (or a state
    with intersection or complement) it is ``failed``, counted in ``("counted pattern
    failures",)``, and makes no more rows. ``graphs``: its :class:`ProductGraph` per character."""

    def __init__(self, memo: dict, root: int):
        self.memo = memo
        self.exprs: list[int] = []
        self.index: dict[int, int] = {}
        self.rows: list[tuple[tuple[int, ...], list[int]] | None] = []
        self.failed = False
        self.graphs: list[ProductGraph] = []
        self._add(root)

    def _add(self, expr: int) -> int:
        j = self.index[expr] = len(self.exprs)
        self.exprs.append(expr)
        self.rows.append(None)
        self.memo.setdefault(("counted pattern", expr), (self, j))
        return j

    def row(self, pool: ExprPool, j: int) -> tuple[tuple[int, ...], list[int]] | None:
        """State ``j``'s row as ``(parts, targets)``: the byte classes (``pool.byte_classes``)
        and each one's target (``1 + k``, 0 dead); by derivatives the first time, ``None`` once
        ``failed``."""
        row = self.rows[j]
        if row is None and not self.failed:
            row = self.rows[j] = self._derive(pool, self.exprs[j])
        return row

    def _derive(self, pool: ExprPool, expr: int) -> tuple[tuple[int, ...], list[int]] | None:
        parts = pool.byte_classes(expr)
        targets = []
        for part in parts:
            d = pool.derivative(expr, (part & -part).bit_length() - 1)
            k = 0 if d == EMPTY else self.index.get(d)
            if k is None:
                if len(self.exprs) >= MAX_PATTERN_STATES or pool.has_bool[d]:
                    self.failed = True
                    key = ("counted pattern failures",)
                    self.memo[key] = self.memo.get(key, 0) + 1
                    return None
                k = self._add(d)
            targets.append(0 if d == EMPTY else 1 + k)
        return parts, targets


class ProductGraph:
    """The pairs ``(pattern state, residual of X)`` that bytes reach in ``P ∩ r X{a,b}`` (the
    counts aside), for one pattern's :class:`PatternRows` and one character ``X``, made as they
    are asked for: ``pairs[n]`` the ``(j, i)`` of node ``n`` (``pattern.exprs[j]``,
    ``char.exprs[i]``; ``nodes`` the inverse), ``rows[n]`` its row once made: ``(targets,
    index)``, ``targets[index[c]]`` the node byte ``c`` leads to (``-1``: dead). A byte leads
    from ``(j, i)`` to ``(P's target, X's target)``, from ``X``'s first row where ``i`` is ``ε`` (a
    new character).

    Whether a node's state with some counts matches a string (:meth:`alive`) is read first from
    a path to an end found greedily (``ends[n]``: the entries into ``ε`` along it), else from
    the whole graph's layers: ``member[n]`` holds bit ``m`` when a string from node ``n`` can
    end (``P`` nullable, at ``ε``) after entering ``ε`` ``m`` times; the bits repeat with
    ``period`` from ``prefix`` on. ``shape`` builds the counted side, ``r X{a,b}``."""

    def __init__(self, pattern: PatternRows, char: CountedChar):
        self.pattern = pattern
        self.char = char
        self.pairs: list[tuple[int, int]] = []
        self.nodes: dict[tuple[int, int], int] = {}
        self.rows: list[tuple[tuple[int, ...], np.ndarray] | None] = []
        self.ends: list[int] = []  # -1 not looked for, -2 not found
        self.pumps_from: list[int] = []  # _pumped's m per node: -1 not looked for, -2 none
        self.member: list[int] | None = None  # None: not made, or a node added since
        self.prefix = self.period = 0
        self.broken = False  # too large to make whole: emptiness is the search's
        self.shape = CountedShape(char, EPSILON)  # X{a,b} without a tail: the counted side's expressions
        x_rows = char.table.astype(np.int64)
        x_rows[char.eps] = char.table[0]  # ε: a new character, X's first row
        self._x_list = x_rows.tolist()
        self._x_classes = []  # per residual: (its row's distinct entries, each byte's index among them)
        for row in x_rows:
            values, index = np.unique(row, return_inverse=True)
            self._x_classes.append((values.tolist(), index.astype(np.intp)))
        # _make_row: (pattern state's byte classes, residual) -> the classes both tell apart; at
        # most MAX_PATTERN_STATES x residuals entries
        self._pumps: dict[int, bool] = {}  # pattern state -> _pumpable of its shortest string's end
        self._whole_bytes: int | None = None  # the bytes X reads as a whole character
        self._combined: dict[tuple[tuple[int, ...], int], tuple[list[tuple[int, int]], np.ndarray]] = {}

    def node(self, pair: tuple[int, int]) -> int | None:
        """The node of ``pair``, added if new; ``None`` past ``MAX_PRODUCT_NODES``."""
        found = self.nodes.get(pair)
        if found is None:
            if len(self.pairs) >= MAX_PRODUCT_NODES:
                return None
            found = self.nodes[pair] = len(self.pairs)
            self.pairs.append(pair)
            self.rows.append(None)
            self.ends.append(-1)
            self.pumps_from.append(-1)
            self.member = None
        return found

    def row(self, pool: ExprPool, node: int) -> tuple[tuple[int, ...], np.ndarray] | None:
        """Node ``node``'s row; ``None`` when the pattern's template or the graph is too large."""
        if self.rows[node] is None:
            self._make_row(pool, node)
        return self.rows[node]

    def _make_row(self, pool: ExprPool, node: int) -> bool:
        """Make node ``node``'s row from the pattern's and ``X``'s; ``False`` when it cannot be
        made. The classes of bytes that both rows tell apart are kept per pair of partitions
        (the pattern's byte classes, the residual): the pattern's states share few of them."""
        j, i = self.pairs[node]
        p_row = self.pattern.row(pool, j)
        if p_row is None:
            return False
        parts, p_targets = p_row
        x_values, x_index = self._x_classes[i]
        found = self._combined.get((parts, i))
        if found is None:
            width = len(x_values)
            keys, inverse = np.unique(class_index(parts) * width + x_index, return_inverse=True)
            found = self._combined[(parts, i)] = ([divmod(k, width) for k in keys.tolist()], inverse)
        combos, inverse = found
        targets: list[int] = []
        where: dict[int, int] = {}
        lut = []
        for p_class, x_class in combos:
            p_target, x_target = p_targets[p_class], x_values[x_class]
            target = -1 if p_target == 0 or x_target == 0 else self.node((p_target - 1, x_target - 1))
            if target is None:
                return False
            at = where.get(target)
            if at is None:
                at = where[target] = len(targets)
                targets.append(target)
            lut.append(at)
        self.rows[node] = (tuple(targets), np.array(lut, dtype=np.int16)[inverse])
        return True

    def alive(self, pool: ExprPool, node: int, low: int, high: int) -> bool | None:
        """Whether node ``node``'s state with ``low..high`` characters after its residual (``S(r,
        low, high)`` of :mod:`counted`) matches some string: an end after ``m`` entries into
        ``ε`` with ``m`` in ``low..high`` (``ε`` itself), or ``low+1..high+1`` (a residual: its
        character ends at the first entry). ``None``: the graph is too large to say (the
        caller searches)."""
        if self.pairs[node][1] != self.char.eps:
            low, high = low + 1, high if high == INF else high + 1
        if self.member is None:
            m = self._witness(pool, node)
            if low <= m and (m <= high or high == INF):  # (m < 0: none found)
                return True
            if self._pumped(pool, node, low, high):
                return True
            found = self._search(pool, node, low, high)
            if found is not None:
                return found
            if self.broken or not self._make_whole(pool):
                return None
        return in_layers(self.member[node], self.prefix, self.period, low, high)

    def _witness(self, pool: ExprPool, node: int) -> int:
        """The entries into ``ε`` along a string from ``node`` to an end, negative when none was
        found: the pattern state's shortest string (:meth:`ExprPool._shortest_string`, kept per
        expression) when ``X`` reads it from the node's residual to ``ε``, else
        :meth:`_walk_to_end`'s."""
        found = self.ends[node]
        if found != -1:
            return found
        j, i = self.pairs[node]
        shortest = pool._shortest_string(self.pattern.exprs[j], WITNESS_BYTES)
        if shortest is not None:
            x_rows, eps = self._x_list, self.char.eps
            entries = 0
            for byte in shortest:
                i = x_rows[i][byte] - 1
                if i < 0:
                    break
                entries += i == eps
            if i == eps:
                self.ends[node] = entries
                return entries
        return self._walk_to_end(pool, node)

    def _pumped(self, pool: ExprPool, node: int, low: int, high: int) -> bool:
        """Whether node ``node`` matches a string of ``low..high`` entries into ``ε`` (counts
        shifted as in :meth:`alive`) because its pattern state's shortest string, read by ``X``
        from the node's residual to ``ε`` in ``m`` entries, ends in a pattern state that a
        one-byte character ``c`` pumps (``d(e, c)`` nullable and its own derivative by ``c``):
        then every count from ``m`` on matches (an unanchored pattern's ``X*`` tail, a long
        ``minLength``). ``False`` when that does not show it (the caller goes on)."""
        m = self.pumps_from[node]
        if m == -1:
            m = self.pumps_from[node] = self._pump_entries(pool, node)
        return m >= 0 and (high == INF or max(low, m) <= high)

    def _pump_entries(self, pool: ExprPool, node: int) -> int:
        """:meth:`_pumped`'s ``m`` for node ``node``, ``-2`` when it does not apply."""
        j, i = self.pairs[node]
        shortest = pool._shortest_string(self.pattern.exprs[j], WITNESS_BYTES)
        if shortest is None:
            return -2
        x_rows, eps = self._x_list, self.char.eps
        entries = 0
        for byte in shortest:
            i = x_rows[i][byte] - 1
            if i < 0:
                return -2
            entries += i == eps
        if i != eps:
            return -2
        pumps = self._pumps.get(j)
        if pumps is None:
            pumps = self._pumps[j] = self._pumpable(pool, pool.derivative_bytes(self.pattern.exprs[j], shortest))
        return entries if pumps else -2

    def _pumpable(self, pool: ExprPool, end: int) -> bool:
        """Whether some byte that ``X`` reads as a whole character (``ε`` to ``ε``) pumps ``end``
        (:meth:`ExprPool.pump_bytes`): then ``end`` matches ``c``, ``cc``, ..."""
        whole = self._whole_bytes
        if whole is None:
            eps = self.char.eps
            whole = self._whole_bytes = sum(1 << b for b, t in enumerate(self._x_list[eps]) if t - 1 == eps)
        return next(pool.pump_bytes(end, whole), None) is not None

    def _walk_to_end(self, pool: ExprPool, node: int) -> int:
        """The entries into ``ε`` along a path from ``node`` to an end, each step to a target whose
        pattern state has the shortest string (``ε`` first among equals), within
        ``WITNESS_STEPS`` steps; negative when none was found. Every node on the path keeps its
        own count."""
        ends, pairs, exprs = self.ends, self.pairs, self.pattern.exprs
        eps, nullable, shortest = self.char.eps, pool.nullable, pool._estimated_length
        path: list[tuple[int, int]] = []
        seen = set()
        at, entries, total = node, 0, -2
        for _ in range(WITNESS_STEPS):
            if ends[at] != -1:  # a path from here found before (or not found)
                total = entries + ends[at] if ends[at] >= 0 else -2
                break
            j, i = pairs[at]
            if i == eps and nullable[exprs[j]]:
                total = entries
                break
            path.append((at, entries))
            seen.add(at)
            row = self.row(pool, at)
            if row is None:
                break
            best, best_key = -1, None
            for t in row[0]:
                if t >= 0 and t not in seen:
                    key = (shortest(exprs[pairs[t][0]]), pairs[t][1] != eps)
                    if best_key is None or key < best_key:
                        best, best_key = t, key
            if best < 0:
                break
            entries += pairs[best][1] == eps
            at = best
        if total < 0:
            if path:
                ends[node] = -2
            return -2
        for n, before in path:
            ends[n] = total - before
        return total

    def _search(self, pool: ExprPool, node: int, low: int, high: int) -> bool | None:
        """:meth:`alive`'s answer (counts shifted) by a search of the pairs ``(node, entries so
        far)`` from ``node``, entries over ``high`` cut (with no ``high``, counted up to ``low``
        only): where ``high`` (or ``low``) is at most ``SEARCH_ENTRIES`` (the last characters
        of a long value) few nodes are within reach. ``None``: past ``SEARCH_STATES`` pairs, or
        a row that cannot be made."""
        cap = low if high == INF else high
        if cap > SEARCH_ENTRIES:
            return None
        pairs, exprs, eps, nullable = self.pairs, self.pattern.exprs, self.char.eps, pool.nullable
        seen = {(node, 0)}
        stack = [(node, 0)]
        while stack:
            at, entries = stack.pop()
            j, i = pairs[at]
            if i == eps and entries >= low and nullable[exprs[j]]:
                return True
            row = self.row(pool, at)
            if row is None:
                return None
            for t in row[0]:
                if t < 0:
                    continue
                after = entries + (pairs[t][1] == eps)
                if after > cap:
                    if high != INF:
                        continue
                    after = cap
                if (t, after) not in seen:
                    if len(seen) >= SEARCH_STATES:
                        return None
                    seen.add((t, after))
                    stack.append((t, after))
        return False

    def _make_whole(self, pool: ExprPool) -> bool:
        """Every node's row (every pair reachable from those made) and the layers; ``False`` (and
        ``broken``) past ``MAX_PATTERN_STATES``, ``MAX_PRODUCT_NODES`` or ``MAX_LAYERS``."""
        rows = self.rows
        n = 0
        while n < len(rows):  # (grows while walked)
            if rows[n] is None and not self._make_row(pool, n):
                self.broken = True
                return False
            n += 1
        eps = self.char.eps
        preds: list[list[tuple[int, bool]]] = [[] for _ in self.pairs]  # (node, whether the edge enters ε)
        for n, (targets, _) in enumerate(self.rows):
            for t in targets:
                if t >= 0:
                    preds[t].append((n, self.pairs[t][1] == eps))
        found = _layers(pool, self.pattern.exprs, self.pairs, preds, eps)
        if found is None:
            self.broken = True
            return False
        self.member, self.prefix, self.period = found
        return True


def in_layers(bits: int, prefix: int, period: int, low: int, high: int) -> bool:
    """Whether some ``m`` in ``low..high`` has bit ``m`` in ``bits`` (:class:`ProductGraph`'s
    ``member`` of a node), the bits repeating with ``period`` from ``prefix`` on."""
    stored = prefix + period
    if high != INF and high < stored:
        return low <= high and (bits >> low) & ((1 << (high - low + 1)) - 1) != 0
    if low < stored and bits >> low:
        return True
    start = max(low, stored)
    cycle = (bits >> prefix) & ((1 << period) - 1)
    if high != INF and high - start + 1 < period:
        return any(cycle >> ((m - prefix) % period) & 1 for m in range(start, high + 1))
    return cycle != 0


def _layers(pool: ExprPool, exprs: tuple[int, ...], pairs: list[tuple[int, int]],
            preds: list[list[tuple[int, bool]]], eps: int) -> tuple[list[int], int, int] | None:
    """``(member, prefix, period)`` of :class:`ProductGraph`: layer ``m`` is the nodes that can
    end after ``m`` entries into ``ε``, each the backward closure over edges that do not enter
    ``ε`` of the predecessors, by an edge that does, of the layer before."""
    nullable = pool.nullable

    def closure(seeds: set[int]) -> frozenset[int]:
        out = set(seeds)
        stack = list(seeds)
        while stack:
            for pred, enters in preds[stack.pop()]:
                if not enters and pred not in out:
                    out.add(pred)
                    stack.append(pred)
        return frozenset(out)

    layer = closure({n for n, (j, i) in enumerate(pairs) if i == eps and nullable[exprs[j]]})
    layers = [layer]
    seen = {layer: 0}
    while True:
        layer = closure({pred for n in layer for pred, enters in preds[n] if enters})
        if layer in seen:
            prefix = seen[layer]
            break
        if len(layers) >= MAX_LAYERS:
            return None
        seen[layer] = len(layers)
        layers.append(layer)
    member = [0] * len(pairs)
    for m, nodes in enumerate(layers):
        for n in nodes:
            member[n] |= 1 << m
    return member, prefix, len(layers) - prefix
