"""Analyses of a grammar: which nonterminals are nullable and which are productive, and which
lexemes overlap.

The first two are least fixed points, linear in the grammar's size; the overlaps are searches
over pairs of derivatives.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING

import numpy as np

from .._kernels.entry import DirectKernel
from .._kernels.rule_tables import productive_nullable_kernel
from ..regex.construction import EMPTY

if TYPE_CHECKING:
    from ..regex.expr import ExprPool
    from .ir import Rule


_PRODUCTIVE_NULLABLE = DirectKernel(productive_nullable_kernel)  # int32, int8 and int64 arrays and ints, always


def pack_rules(rules: Sequence[Rule]) -> np.ndarray | None:
    """The rules in one int32 array, as the kernels of :mod:`leapgram._kernels.rule_tables` take
    them: the left-hand sides, then the right-hand sides' lengths, then their symbols, in rule
    order; converted by one ``struct.pack_into`` (twice as fast as ``np.array`` of a list of
    ints). ``None`` when a symbol is no int32."""
    rhss = list(map(itemgetter(1), rules))
    values = [*map(itemgetter(0), rules), *map(len, rhss), *chain.from_iterable(rhss)]
    packed = np.empty(len(values), dtype=np.int32)
    try:
        struct.pack_into(f"{len(values)}i", packed, 0, *values)
    except struct.error:
        return None
    return packed


def packed_productive_and_nullable(packed: np.ndarray, count: int,
                                   num_nonterminals: int) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`productive_and_nullable` of the ``count`` rules ``packed`` (:func:`pack_rules`) over
    ``num_nonterminals`` nonterminals, as two int8 arrays (1: in the set), by one kernel; ``None``
    when a rule names a nonterminal past ``num_nonterminals``. In Python the two least fixed
    points were 4% of a small JSON Schema's time to first mask (36 µs a grammar)."""
    nullable = np.zeros(num_nonterminals, dtype=np.int8)
    productive = np.zeros(num_nonterminals, dtype=np.int8)
    scratch = np.empty(3 * count + 2 * num_nonterminals, dtype=np.int64)
    if not _PRODUCTIVE_NULLABLE.call(packed, count, num_nonterminals, nullable, productive, scratch):
        return None
    return productive, nullable


def productive_nonterminals(rules: Sequence[Rule]) -> set[int]:
    """Nonterminals that derive at least one string of lexemes."""
    return _least(rules, set())


def nullable_nonterminals(rules: Sequence[Rule]) -> set[int]:
    """Nonterminals that derive the empty sequence."""
    return _least(rules, set(), lexemes_block=True)


def productive_and_nullable(rules: Sequence[Rule]) -> tuple[set[int], set[int]]:
    """Both; the productive search starts from the nullable nonterminals."""
    nullable = nullable_nonterminals(rules)
    return _least(rules, set(nullable)), nullable


def _least(rules: Sequence[Rule], found: set[int], lexemes_block: bool = False) -> set[int]:
    """``found`` grown to the least set of nonterminals with a rule whose every nonterminal is in
    it (lexemes count as derived; with ``lexemes_block``, a rule with a lexeme never counts),
    linear in the grammar's size.

    Each rule waits on one missing nonterminal at a time (its first one not yet found, as a SAT
    solver watches a literal): scanned once in document order, a rule whose nonterminals are all
    found already costs only that scan, and one that waits is scanned on from where it stopped
    when that nonterminal is found, so each symbol of each rule is read once. (A count of missing
    nonterminals per rule and every rule listed under each of its nonterminals cost twice as much,
    most of it building those lists.) The first scan of each rule is inlined: a call per rule was
    a fifth of the time, and this runs twice in every grammar's build."""
    watching: dict[int, list[tuple[Rule, int]]] = {}
    for rule in rules:
        if rule[0] in found:
            continue
        for at, symbol in enumerate(rule[1]):
            if symbol < 0:
                if lexemes_block:  # the rule never counts: not watched
                    break
            elif symbol not in found:  # the rule waits on ``symbol``
                watching.setdefault(symbol, []).append((rule, at))
                break
        else:
            found.add(rule[0])
            added = [rule[0]]
            while added and watching:
                for waiting, at in watching.pop(added.pop(), ()):
                    if waiting[0] not in found and not _waits(waiting, at + 1, found, watching, lexemes_block):
                        found.add(waiting[0])
                        added.append(waiting[0])
    return found


def _waits(rule: Rule, start: int, found: set[int], watching: dict[int, list[tuple[Rule, int]]],
           lexemes_block: bool) -> bool:
    """Whether ``rule`` misses a nonterminal (or, with ``lexemes_block``, has a lexeme) from
    position ``start`` on; the first nonterminal it misses then lists it in ``watching``."""
    rhs = rule[1]
    for i in range(start, len(rhs)):
        symbol = rhs[i]
        if symbol < 0:
            if lexemes_block:
                return True
        elif symbol not in found:
            waiting = watching.get(symbol)
            if waiting is None:
                watching[symbol] = [(rule, i)]
            else:
                waiting.append((rule, i))
            return True
    return False


# ----- overlaps between lexemes ---------------------------------------------------------------


def share_a_string(pool: ExprPool, a: int, b: int) -> bool:
    """Whether lexemes ``a`` and ``b`` match one same string.

    A search over pairs of derivatives ``(a/w, b/w)``: the derivatives of each lexeme are cached
    in its pool and shared by every pair it is in, where an intersection ``a & b`` makes new
    nodes for each of its own. Past ``Limits.max_emptiness_steps`` pairs: True (undecided)."""
    return _pair_search(pool, a, b, lambda x, y: pool.nullable[x] and pool.nullable[y])


def swallows_prefix(pool: ExprPool, a: int, follow: int, c: int) -> bool:
    """Whether a string of ``c`` starts with a string of ``a`` and then a byte of ``follow`` (a
    byte class): whether ``a follow .*`` and ``c`` share a string, searched as
    :func:`share_a_string` over pairs ``(a/w, c/w)`` (True when undecided)."""

    def found(x: int, y: int) -> bool:
        if not pool.nullable[x]:
            return False
        bytes_ = follow & pool.first_bytes(y)
        while bytes_:
            low = bytes_ & -bytes_
            if not pool.is_empty(pool.derivative(y, low.bit_length() - 1)):
                return True
            bytes_ ^= low
        return False

    return _pair_search(pool, a, c, found)


def _pair_search(pool: ExprPool, a: int, b: int, found: Callable[[int, int], bool]) -> bool:
    """Whether some string ``w`` gives ``found(a/w, b/w)``; depth first over the pairs, each
    pair's bytes split by both byte partitions and kept to the bytes both can start with (one
    derivative per byte class of each side, not one per intersection of classes)."""
    budget = pool.limits.max_emptiness_steps
    first, classes, derivative = pool.first_bytes, pool.byte_classes, pool.derivative
    seen = {(a, b)}
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        if found(x, y):
            return True
        if len(seen) > budget:
            return True
        both = first(x) & first(y)
        if not both:
            continue
        y_moves = []  # each byte class of y (within both) and y's derivative there
        for part in classes(y):
            part &= both
            if part:
                after = derivative(y, (part & -part).bit_length() - 1)
                if after != EMPTY:
                    y_moves.append((part, after))
        for x_part in classes(x) if y_moves else ():
            x_part &= both
            x_after = EMPTY
            for part, y_after in y_moves:
                if part & x_part:
                    if x_after == EMPTY:
                        x_after = derivative(x, (x_part & -x_part).bit_length() - 1)
                        if x_after == EMPTY:
                            break
                    pair = (x_after, y_after)
                    if pair not in seen:
                        seen.add(pair)
                        pending.append(pair)
    return False
