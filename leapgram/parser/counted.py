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

from ..regex.expr import EPSILON, INF, K_CONCAT, K_REPEAT, ExprPool

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
        ids = pool._ids
        has_bool = pool.has_bool
        out = base
        for head in reversed(self.char.spines[index]):
            key = (K_CONCAT, (head, out))
            found = ids.get(key)
            out = pool._intern(K_CONCAT, key[1], False, has_bool[head] or has_bool[out]) if found is None else found
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
# "Counted lexemes under a pattern").
MAX_PATTERN_STATES = 256  # states of the pattern's row template (band-manifest's email: 214)
MAX_PRODUCT_NODES = 4096  # (pattern state, residual) pairs of a ProductGraph
MAX_LAYERS = 600  # layers of ProductGraph.member before they repeat; past it, rows by derivatives


@dataclass
class ProductGraph:
    """The pairs ``(pattern state, residual of X)`` that bytes reach from one state of
    ``P ∩ r X{a,b}`` (the counts aside), with each pair's row and which counts can still end.

    ``pattern`` is ``P``'s row template (``exprs``, ``table``: :func:`leapgram.parser.lexer.row_template`'s
    layout), ``pairs[n]`` the ``(j, i)`` of node ``n`` (``pattern[0][j]``, ``char.exprs[i]``;
    ``nodes`` the inverse),
    ``rows[n]`` its row: ``(targets, index)``, ``targets[index[c]]`` the node byte ``c`` leads
    to (``-1``: dead). A byte leads from ``(j, i)`` to ``(P's target,
    X's target)``, from ``X``'s first row where ``i`` is ``ε`` (a new character). ``member[n]``
    holds bit ``m`` when a string from node ``n`` can end (``P`` nullable, at ``ε``) after
    entering ``ε`` ``m`` times; the bits repeat with ``period`` from ``prefix`` on. ``shape``
    builds the counted side, ``r X{a,b}``."""

    pattern: tuple[tuple[int, ...], np.ndarray]
    char: CountedChar
    pairs: list[tuple[int, int]]
    nodes: dict[tuple[int, int], int]
    rows: list[tuple[tuple[int, ...], np.ndarray]]
    member: list[int]
    prefix: int
    period: int
    shape: CountedShape  # X{a,b} without a tail: the counted side's expressions

    def alive(self, node: int, low: int, high: int) -> bool:
        """Whether node ``n``'s state with ``low..high`` characters after its residual (``S(r,
        low, high)`` of :mod:`counted`) matches some string: an end after ``m`` entries into
        ``ε`` with ``m`` in ``low..high`` (``ε`` itself), or ``low+1..high+1`` (a residual: its
        character ends at the first entry)."""
        if self.pairs[node][1] != self.char.eps:
            low, high = low + 1, high if high == INF else high + 1
        bits = self.member[node]
        stored = self.prefix + self.period
        if high != INF and high < stored:
            return low <= high and (bits >> low) & ((1 << (high - low + 1)) - 1) != 0
        if low < stored and bits >> low:
            return True
        start = max(low, stored)
        cycle = (bits >> self.prefix) & ((1 << self.period) - 1)
        if high != INF and high - start + 1 < self.period:
            return any(cycle >> ((m - self.prefix) % self.period) & 1 for m in range(start, high + 1))
        return cycle != 0


def product_graph(pool: ExprPool, pattern: tuple[tuple[int, ...], np.ndarray], char: CountedChar,
                  root: tuple[int, int]) -> ProductGraph | None:
    """The :class:`ProductGraph` from the pair ``root``, or ``None`` past ``MAX_PRODUCT_NODES``
    pairs or ``MAX_LAYERS`` layers."""
    exprs, table = pattern
    eps, width = char.eps, len(char.exprs) + 1
    x_rows = char.table.astype(np.int64)
    x_rows[eps] = char.table[0]  # ε: a new character, X's first row
    span = (len(exprs) + 1) * width  # the keys of one frontier row: its combined targets, 0 dead
    nodes = {root: 0}
    pairs = [root]
    rows: list[tuple[tuple[int, ...], np.ndarray]] = []
    preds: list[list[tuple[int, bool]]] = [[]]  # (node, whether the edge enters ε)
    frontier = [0]
    while frontier:  # a level at a time: one np.unique for the rows of the level
        js, is_ = zip(*(pairs[n] for n in frontier))
        p_rows, x_part = table[list(js)].astype(np.int64), x_rows[list(is_)]
        combined = np.where((p_rows > 0) & (x_part > 0), p_rows * width + x_part, 0)
        combined += np.arange(len(frontier), dtype=np.int64)[:, None] * span
        keys, inverse = np.unique(combined, return_inverse=True)
        inverse = inverse.reshape(len(frontier), 256)
        bounds = np.searchsorted(keys, np.arange(len(frontier) + 1, dtype=np.int64) * span).tolist()
        keys = keys.tolist()
        level = []
        for k, node in enumerate(frontier):
            targets = []
            for key in keys[bounds[k]:bounds[k + 1]]:
                key -= k * span
                if key == 0:
                    targets.append(-1)
                    continue
                pair = (key // width - 1, key % width - 1)
                target = nodes.get(pair)
                if target is None:
                    if len(pairs) >= MAX_PRODUCT_NODES:
                        return None
                    target = nodes[pair] = len(pairs)
                    pairs.append(pair)
                    preds.append([])
                    level.append(target)
                preds[target].append((node, pair[1] == eps))
                targets.append(target)
            rows.append((tuple(targets), (inverse[k] - bounds[k]).astype(np.int16)))
        frontier = level
    found = _layers(pool, exprs, pairs, preds, eps)
    if found is None:
        return None
    member, prefix, period = found
    return ProductGraph(pattern, char, pairs, nodes, rows, member, prefix, period, CountedShape(char, EPSILON))


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
