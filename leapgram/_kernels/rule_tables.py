"""A grammar's Earley tables (:class:`leapgram.parser.arena.ParserTables`) from its packed rules.

The rules come as one int32 array, ``packed``: the ``count`` left-hand sides, then the
``count`` right-hand side lengths, then every right-hand side's symbols in rule order. Built in
Python (lists, or a dozen numpy calls for large grammars) the tables were 5-6% of a small JSON
Schema's time to first mask; here they are one pass over the rules and one over the
nonterminals. Under ``NUMBA_DISABLE_JIT=1`` the function is its own plain-Python twin, which the
tests compare with a numpy build of the same tables.
"""

from __future__ import annotations

from . import njit
from .earley import END


@njit(cache=True, nogil=True)
def rule_tables_kernel(packed, count, start, num_nonterminals, out, accept):
    """Write the tables into ``out`` (int32, ``2 * size + num_nonterminals + 1 + max(count, 1)``
    long, where ``size`` is the number of dotted rules: each rule's symbols and its ``END``, then
    one more ``END`` as a sentinel) and ``accept`` (int8, ``size`` zeros): ``out[:size]`` is
    ``dr_next``, ``out[size:2 * size]`` ``dr_lhs`` (-1 at the sentinel), then ``first_ptr``
    (``num_nonterminals + 1`` prefix sums of the rules per nonterminal) and ``first_drs`` (each
    nonterminal's rules' first dotted rules, in rule order; one 0 when there are no rules).
    ``accept`` is 1 at the ``END`` of each rule of ``start``. False (nothing written) when a
    rule names a nonterminal past ``num_nonterminals`` (:func:`rules_in_range`)."""
    if not rules_in_range(packed, count, num_nonterminals):
        return False
    size = packed.shape[0] - count + 1
    lhs_at = size
    ptr_at = 2 * size
    drs_at = ptr_at + num_nonterminals + 1
    for nt in range(num_nonterminals + 1):
        out[ptr_at + nt] = 0
    symbol = 2 * count
    dr = 0
    for r in range(count):
        lhs = packed[r]
        out[ptr_at + lhs + 1] += 1
        for _ in range(packed[count + r]):
            out[dr] = packed[symbol]
            out[lhs_at + dr] = lhs
            dr += 1
            symbol += 1
        out[dr] = END
        out[lhs_at + dr] = lhs
        if lhs == start:
            accept[dr] = 1
        dr += 1
    out[dr] = END
    out[lhs_at + dr] = -1
    for nt in range(num_nonterminals):
        out[ptr_at + nt + 1] += out[ptr_at + nt]
    # each nonterminal's rules in rule order (a stable counting sort): first_ptr[nt] serves as
    # the next free slot of nt, which leaves it at first_ptr[nt + 1]; shifted back after
    dr = 0
    for r in range(count):
        lhs = packed[r]
        out[drs_at + out[ptr_at + lhs]] = dr
        out[ptr_at + lhs] += 1
        dr += packed[count + r] + 1
    for nt in range(num_nonterminals, 0, -1):
        out[ptr_at + nt] = out[ptr_at + nt - 1]
    out[ptr_at] = 0
    if count == 0:
        out[drs_at] = 0
    return True


@njit(cache=True, nogil=True, inline="always")
def rules_in_range(packed, count, num_nonterminals):
    """Whether every left-hand side and every nonterminal of the rules is below ``num_nonterminals``
    (the kernels index arrays by them, unchecked)."""
    for i in range(packed.shape[0]):
        if (i < count or i >= 2 * count) and packed[i] >= num_nonterminals:
            return False
        if i < count and packed[i] < 0:
            return False
    return True


@njit(cache=True, nogil=True)
def productive_nullable_kernel(packed, count, num_nonterminals, nullable, productive, scratch):
    """Set ``nullable[nt]`` (int8, zeros) for the nonterminals that derive the empty sequence
    and ``productive[nt]`` (int8, zeros) for those that derive a string of lexemes, from the
    rules ``packed`` as :func:`rule_tables_kernel` takes them: the least fixpoints of
    :func:`leapgram.grammar.analysis.productive_and_nullable` (its twin), by the same watches
    (each rule waits on its first nonterminal not found yet). ``scratch``: int64,
    ``3 * count + 2 * num_nonterminals`` long. False (nothing set) when a rule names a nonterminal
    past ``num_nonterminals``."""
    starts = 0  # scratch[starts + r]: where rule r's symbols begin in packed
    at = count  # scratch[at + r]: the position rule r waits at
    after = 2 * count  # scratch[after + r]: the next rule waiting on the same nonterminal
    head = 3 * count  # scratch[head + nt]: the first rule waiting on nt (-1: none)
    stack = 3 * count + num_nonterminals  # nonterminals found and not yet passed to their waiters
    symbol = 2 * count
    for r in range(count):
        scratch[starts + r] = symbol
        symbol += packed[count + r]
    if not rules_in_range(packed, count, num_nonterminals):
        return False
    _least(packed, count, num_nonterminals, nullable, True, scratch, starts, at, after, head, stack)
    for nt in range(num_nonterminals):
        productive[nt] = nullable[nt]
    _least(packed, count, num_nonterminals, productive, False, scratch, starts, at, after, head, stack)
    return True


@njit(cache=True, nogil=True)
def _least(packed, count, num_nonterminals, found, lexemes_block, scratch, starts, at, after, head, stack):
    """``found`` grown to the least set closed under the rules (see productive_nullable_kernel)."""
    for nt in range(num_nonterminals):
        scratch[head + nt] = -1
    for r in range(count):
        lhs = packed[r]
        if found[lhs] == 0 and not _waits(packed, count, r, 0, found, lexemes_block, scratch, starts, at, after, head):
            found[lhs] = 1
            scratch[stack] = lhs
            top = 1
            while top > 0:
                top -= 1
                nt = scratch[stack + top]
                waiting = scratch[head + nt]
                scratch[head + nt] = -1
                while waiting != -1:
                    following = scratch[after + waiting]
                    lhs = packed[waiting]
                    if found[lhs] == 0 and not _waits(packed, count, waiting, scratch[at + waiting] + 1, found,
                                                      lexemes_block, scratch, starts, at, after, head):
                        found[lhs] = 1
                        scratch[stack + top] = lhs
                        top += 1
                    waiting = following


@njit(cache=True, nogil=True, inline="always")
def _waits(packed, count, r, position, found, lexemes_block, scratch, starts, at, after, head):
    """Whether rule ``r`` misses a nonterminal (or, with ``lexemes_block``, has a lexeme) from
    ``position`` on; the first nonterminal it misses then has it waiting."""
    first = scratch[starts + r]
    for i in range(position, packed[count + r]):
        symbol = packed[first + i]
        if symbol < 0:
            if lexemes_block:
                return True
        elif found[symbol] == 0:
            scratch[at + r] = i
            scratch[after + r] = scratch[head + symbol]
            scratch[head + symbol] = r
            return True
    return False
