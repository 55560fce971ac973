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
