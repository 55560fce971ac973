"""Analyses of a grammar: which nonterminals are nullable and which are productive, and which
lexemes overlap.

The first two are least fixed points computed by a worklist over rules, linear in the grammar's
size; the overlaps are searches over pairs of derivatives.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..regex.construction import EMPTY

if TYPE_CHECKING:
    from ..regex.expr import ExprPool
    from .ir import Rule


def productive_nonterminals(rules: Sequence[Rule]) -> set[int]:
    """Nonterminals that derive at least one string of lexemes."""
    return _closure(rules, lexemes_given=True)


def nullable_nonterminals(rules: Sequence[Rule]) -> set[int]:
    """Nonterminals that derive the empty sequence."""
    return _closure(rules, lexemes_given=False)


def productive_and_nullable(rules: Sequence[Rule]) -> tuple[set[int], set[int]]:
    """Both, from one pass over the rules."""
    lhs, missing, pure, waiting = _waiting(rules)
    nullable = _least(lhs, [m if p else -1 for m, p in zip(missing, pure)], waiting)
    return _least(lhs, missing, waiting), nullable


def _closure(rules: Sequence[Rule], *, lexemes_given: bool) -> set[int]:
    """The least set of nonterminals with a rule whose every symbol is a lexeme (when
    ``lexemes_given``) or in the set. Without ``lexemes_given`` a rule with a lexeme never counts."""
    lhs, missing, pure, waiting = _waiting(rules)
    if not lexemes_given:
        missing = [m if p else -1 for m, p in zip(missing, pure)]
    return _least(lhs, missing, waiting)


def _least(lhs: list[int], missing: list[int], waiting) -> set[int]:
    """A worklist over rules counting their missing nonterminals (``missing``, updated in
    place; -1 for a rule that never counts), linear in the grammar's size."""
    ready = [lhs[index] for index, count in enumerate(missing) if count == 0]
    found: set[int] = set()
    while ready:
        symbol = ready.pop()
        if symbol in found:
            continue
        found.add(symbol)
        for index in waiting(symbol):
            missing[index] -= 1
            if missing[index] == 0:
                ready.append(lhs[index])
    return found


SMALL_GRAMMAR = 256  # rules; below it a list per nonterminal costs less than sorting arrays


def _waiting(rules: Sequence[Rule]):
    """Per rule its left side, how many nonterminals it has and whether it has no lexeme; per
    nonterminal (a function of it) the rules it occurs in. A large grammar keeps the rules
    waiting for each nonterminal in one array sorted by symbol, not a list per nonterminal: its
    thousands of small lists lived long enough to reach the oldest generation of Python's
    collector and brought its full collections (60-100 ms) closer."""
    lhs = [left for left, _ in rules]
    if len(rules) < SMALL_GRAMMAR:
        return lhs, *_waiting_lists(rules)
    return lhs, *_waiting_arrays(rules, max(lhs, default=-1) + 1)


def _waiting_lists(rules: Sequence[Rule]):
    missing = []
    pure = []
    waiting: dict[int, list[int]] = {}
    for index, (_, rhs) in enumerate(rules):
        needed = [symbol for symbol in rhs if symbol >= 0]
        missing.append(len(needed))
        pure.append(len(needed) == len(rhs))
        for symbol in needed:
            waiting.setdefault(symbol, []).append(index)
    return missing, pure, lambda symbol: waiting.get(symbol, ())


def _waiting_arrays(rules: Sequence[Rule], size: int):
    count = len(rules)
    lengths = np.fromiter((len(rhs) for _, rhs in rules), dtype=np.int64, count=count)
    symbols = np.fromiter(itertools.chain.from_iterable(rhs for _, rhs in rules), dtype=np.int64,
                          count=int(lengths.sum()))
    owners = np.repeat(np.arange(count), lengths)
    is_nonterminal = symbols >= 0
    missing = np.bincount(owners[is_nonterminal], minlength=count)
    needed = symbols[is_nonterminal]
    order = np.argsort(needed, kind="stable")
    waiting = owners[is_nonterminal][order].tolist()
    start = np.searchsorted(needed[order], np.arange(size + 1)).tolist()
    return missing.tolist(), (missing == lengths).tolist(), lambda symbol: waiting[start[symbol]:start[symbol + 1]]


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
    pair's bytes split by both byte partitions and kept to the bytes both can start with."""
    budget = pool.limits.max_emptiness_steps
    seen = {(a, b)}
    pending = [(a, b)]
    while pending:
        x, y = pending.pop()
        if found(x, y):
            return True
        if len(seen) > budget:
            return True
        both = pool.first_bytes(x) & pool.first_bytes(y)
        if not both:
            continue
        y_parts = [part & both for part in pool.byte_classes(y) if part & both]
        for x_part in pool.byte_classes(x):
            x_part &= both
            if not x_part:
                continue
            for part in y_parts:
                part &= x_part
                if part:
                    byte = (part & -part).bit_length() - 1
                    pair = (pool.derivative(x, byte), pool.derivative(y, byte))
                    if pair[0] != EMPTY and pair[1] != EMPTY and pair not in seen:
                        seen.add(pair)
                        pending.append(pair)
    return False
