"""The Earley parser over lexemes, as numba kernels over flat arrays.

Charts live in an arena; items are ``(dotted rule, origin chart)``; empty rules follow
Aycock–Horspool and right recursion uses Leo's items. A kernel never grows an array: it returns
``NEED_SPACE``/``NEED_FRESH``/``OVER_BUDGET`` and the caller acts. The tables, charts and codes are
described in ``docs/design/earley-walk.md``; under ``NUMBA_DISABLE_JIT=1`` these functions are the
plain-Python twin the tests compare with :mod:`leapgram.parser.earley`.
"""

from __future__ import annotations

import numpy as np

from . import njit
from .tables import ABSENT, table_get_kernel, table_put_kernel, table_slot_kernel

END = 2**31 - 1
NONE = -2  # "no child chart" / "no Leo item" in the tables

OK = 0
NEED_FRESH = 4
NEED_SPACE = 5
OVER_BUDGET = 6
STALE_LEXER = 7  # boundary_kernel: the lexer's acc_pool grew since the caller read its views (call again)

# columns of ``charts``
START, STOP, ACCEPT, SET, PARENT = 0, 1, 2, 3, 4
CHART_FIELDS = 5

# entries of ``counts``
N_ITEMS, N_CHARTS, N_SETS, N_SET_ITEMS, BOUND_COUNT, CHILD_COUNT, LEO_COUNT, SET_COUNT, GEN, ROW_START, WANT = range(11)
COUNT_FIELDS = 11

# what ``counts[WANT]`` says is full after a ``NEED_SPACE``
WANT_ITEMS, WANT_CHARTS, WANT_SCRATCH, WANT_SETS, WANT_TABLES = 1, 2, 3, 4, 5

LEO_CHAIN = 1024  # longest Leo chain resolved in one go (longer ones resolve in pieces)


@njit(cache=True, nogil=True, inline="always")
def _add_item(items, counts, scr_keys, scr_gen, gen, dr, origin):
    """Append ``(dr, origin)`` to the row being built unless it is there; ``False`` when
    ``items`` or the dedup scratch is full."""
    n = counts[N_ITEMS]
    if n >= items.shape[0]:
        counts[WANT] = WANT_ITEMS
        return False
    if (n - counts[ROW_START] + 1) * 2 > scr_keys.shape[0]:
        counts[WANT] = WANT_SCRATCH
        return False
    key = (np.int64(dr) << 32) | origin
    mask = scr_keys.shape[0] - 1
    slot = ((key & 0xFFFFFFFF) * 40503 + (key >> 32) * 65599) & mask
    while scr_gen[slot] == gen:
        if scr_keys[slot] == key:
            return True
        slot = (slot + 1) & mask
    scr_gen[slot] = gen
    scr_keys[slot] = key
    items[n, 0] = dr
    items[n, 1] = origin
    counts[N_ITEMS] = n + 1
    return True


@njit(cache=True, nogil=True, inline="always")
def _leo_top(grammar, arena, origin, symbol):
    """The topmost item ``(dr << 32 | origin)`` of the deterministic completion chain that
    completing ``symbol`` at chart ``origin`` starts, or ``NONE``. Memoized in the leo table."""
    dr_next, dr_lhs, dr_accept, nullable, first_ptr, first_drs, start = grammar
    (items, charts, counts, bound_keys, bound_vals, child_keys, child_vals, leo_keys, leo_vals,
     set_keys, set_vals, set_ptr, set_items, set_fresh, scr_keys, scr_gen, nt_gen, lex_gen, tmp, chain,
     fps) = arena
    length = 0
    top = np.int64(NONE)
    o, a = origin, symbol
    while True:
        found = table_get_kernel(leo_keys, leo_vals, (np.int64(o) << 32) | a)
        if found != ABSENT:
            top = found
            break
        count = 0
        only = -1
        for k in range(charts[o, START], charts[o, STOP]):
            if dr_next[items[k, 0]] == a:
                count += 1
                only = k
                if count > 1:
                    break
        if count != 1 or dr_next[items[only, 0] + 1] != END or length >= chain.shape[0]:
            table_put_kernel(leo_keys, leo_vals, counts, LEO_COUNT, (np.int64(o) << 32) | a, NONE)
            break
        chain[length, 0] = o
        chain[length, 1] = a
        chain[length, 2] = only
        length += 1
        lhs = dr_lhs[items[only, 0]]
        if lhs == start:
            break
        o, a = items[only, 1], lhs
    for j in range(length - 1, -1, -1):
        if top == NONE:
            k = chain[j, 2]
            top = (np.int64(items[k, 0] + 1) << 32) | items[k, 1]
        table_put_kernel(leo_keys, leo_vals, counts, LEO_COUNT, (np.int64(chain[j, 0]) << 32) | chain[j, 1], top)
    return top


M31 = 0x7FFFFFFF
M62 = 0x3FFFFFFFFFFFFFFF
FP_LANES = (0x5BD1E995, 0x27D4EB2F)
FP_SELF = 0x2F0F0F0F0F0F0F0F  # stands for "this chart" as an origin
FP_ROOT = 0x15A4E35A5A4E35A5
FP_ACCEPT = 0x0B5AD4ECEDA1CE2A


@njit(cache=True, nogil=True, inline="always")
def _mix(x, c):
    """A bijection of 62-bit values (a four-round Feistel network on 31-bit halves); every
    product stays below 2**62, so it computes the same with or without numba."""
    lo = x & M31
    hi = (x >> 31) & M31
    for r in range(4):
        f = (((lo * c + r) >> 11) ^ (lo * 0x2545F491)) & M31
        hi, lo = lo, hi ^ f
    return (hi << 31) | lo


@njit(cache=True, nogil=True, inline="always")
def _fingerprint(items, fps, dr_next, chart, row_start, row_stop, accepting):
    """Two 62-bit fingerprints of the chart's future: a sum of mixed ``(dotted rule, origin's
    fingerprint)`` over the items still waiting for a symbol (completed items were used up by
    the closure; only whether the chart accepts remains of them). Charts whose waiting items are
    the same up to origins with the same fingerprints allow the same lexeme sequences."""
    for lane in range(2):
        c = FP_LANES[lane]
        total = np.int64(0)
        for k in range(row_start, row_stop):
            if dr_next[items[k, 0]] == END:
                continue
            origin = items[k, 1]
            fo = np.int64(FP_SELF) if origin == chart else fps[origin, lane]
            total = (total + _mix(fo ^ ((np.int64(items[k, 0]) & M31) * 0x3C6EF35F), c)) & M62
        if chart == 0:
            total ^= FP_ROOT
        if accepting:
            total ^= FP_ACCEPT
        fps[chart, lane] = _mix(total & M62, c)


@njit(cache=True, nogil=True, inline="always")
def _finish_chart(grammar, arena, chart, row_start, max_row, use_leo):
    """Close the row started at ``row_start`` (seeds already added) for the new chart ``chart``
    and record the chart. Returns ``OK``, ``NEED_SPACE`` or ``OVER_BUDGET``; on failure the row
    is dropped."""
    dr_next, dr_lhs, dr_accept, nullable, first_ptr, first_drs, start = grammar
    (items, charts, counts, bound_keys, bound_vals, child_keys, child_vals, leo_keys, leo_vals,
     set_keys, set_vals, set_ptr, set_items, set_fresh, scr_keys, scr_gen, nt_gen, lex_gen, tmp, chain,
     fps) = arena
    gen = counts[GEN]
    accepting = 0
    k = row_start
    status = OK
    while k < counts[N_ITEMS]:
        if counts[N_ITEMS] - row_start > max_row:
            status = OVER_BUDGET
            break
        dr = items[k, 0]
        origin = items[k, 1]
        symbol = dr_next[dr]
        ok = True
        if symbol == END:
            if dr_accept[dr] and origin == 0:
                accepting = 1
            if origin != chart:
                lhs = dr_lhs[dr]
                top = np.int64(NONE)
                if use_leo:
                    top = _leo_top(grammar, arena, origin, lhs)
                if top != NONE:
                    ok = _add_item(items, counts, scr_keys, scr_gen, gen, top >> 32, top & 0xFFFFFFFF)
                else:
                    for j in range(charts[origin, START], charts[origin, STOP]):
                        if dr_next[items[j, 0]] == lhs:
                            if not _add_item(items, counts, scr_keys, scr_gen, gen, items[j, 0] + 1, items[j, 1]):
                                ok = False
                                break
        elif symbol >= 0:
            if nt_gen[symbol] != gen:
                nt_gen[symbol] = gen
                for r in range(first_ptr[symbol], first_ptr[symbol + 1]):
                    if not _add_item(items, counts, scr_keys, scr_gen, gen, first_drs[r], chart):
                        ok = False
                        break
            if ok and nullable[symbol]:
                ok = _add_item(items, counts, scr_keys, scr_gen, gen, dr + 1, origin)
        if not ok:
            status = NEED_SPACE
            break
        k += 1
    if status != OK:
        counts[N_ITEMS] = row_start
        return status
    row_stop = counts[N_ITEMS]
    # the allowed lexemes, sorted, interned as a set
    gen2 = gen + 1
    m = 0
    for k in range(row_start, row_stop):
        symbol = dr_next[items[k, 0]]
        if symbol < 0:
            lexeme = ~symbol
            if lex_gen[lexeme] != gen2:
                lex_gen[lexeme] = gen2
                tmp[m] = lexeme
                m += 1
    for j in range(1, m):  # insertion sort: sets are small, and no allocation
        v = tmp[j]
        q = j - 1
        while q >= 0 and tmp[q] > v:
            tmp[q + 1] = tmp[q]
            q -= 1
        tmp[q + 1] = v
    members = tmp
    h = np.int64(m)
    for j in range(m):
        h = ((h & 0xFFFFFFFFFF) * 1000003 + members[j]) & 0x3FFFFFFFFFFFFFFF  # never overflows
    set_id = -1
    mask = set_keys.shape[0] - 1
    slot = table_slot_kernel(set_keys, h)
    while set_keys[slot] != -1:
        if set_keys[slot] == h:
            candidate = set_vals[slot]
            lo, hi = set_ptr[candidate], set_ptr[candidate + 1]
            if hi - lo == m:
                same = True
                for j in range(m):
                    if set_items[lo + j] != members[j]:
                        same = False
                        break
                if same:
                    set_id = candidate
                    break
        slot = (slot + 1) & mask
    if set_id < 0:
        n_sets = counts[N_SETS]
        base = counts[N_SET_ITEMS]
        if (n_sets + 2 > set_ptr.shape[0] or base + m > set_items.shape[0]
                or (counts[SET_COUNT] + 1) * 2 > set_keys.shape[0]):
            counts[WANT] = WANT_SETS
            counts[N_ITEMS] = row_start
            return NEED_SPACE
        for j in range(m):
            set_items[base + j] = members[j]
        set_ptr[n_sets + 1] = base + m
        set_fresh[n_sets] = -1
        set_keys[slot] = h
        set_vals[slot] = n_sets
        counts[SET_COUNT] += 1
        counts[N_SETS] = n_sets + 1
        counts[N_SET_ITEMS] = base + m
        set_id = n_sets
    charts[chart, START] = row_start
    charts[chart, STOP] = row_stop
    _fingerprint(items, fps, dr_next, chart, row_start, row_stop, accepting)
    charts[chart, ACCEPT] = accepting
    charts[chart, SET] = set_id
    counts[N_CHARTS] = chart + 1
    counts[GEN] = gen + 2
    return OK


@njit(cache=True, nogil=True)
def root_kernel(grammar, arena, max_row):
    """Build chart 0: everything predicted from the start symbol. Returns a status."""
    dr_next, dr_lhs, dr_accept, nullable, first_ptr, first_drs, start = grammar
    (items, charts, counts, bound_keys, bound_vals, child_keys, child_vals, leo_keys, leo_vals,
     set_keys, set_vals, set_ptr, set_items, set_fresh, scr_keys, scr_gen, nt_gen, lex_gen, tmp, chain,
     fps) = arena
    counts[GEN] += 2
    gen = counts[GEN]
    counts[ROW_START] = 0
    nt_gen[start] = gen
    for r in range(first_ptr[start], first_ptr[start + 1]):
        if not _add_item(items, counts, scr_keys, scr_gen, gen, first_drs[r], 0):
            counts[N_ITEMS] = 0
            return NEED_SPACE
    charts[0, PARENT] = -1
    return _finish_chart(grammar, arena, 0, 0, max_row, True)


@njit(cache=True, nogil=True)
def scan_kernel(grammar, arena, chart, lexemes, max_row, use_leo):
    """The chart after a lexeme that matched every lexeme in ``lexemes`` (int32 array) at
    ``chart``: ``(status, child)``; ``child`` is ``NONE`` when the parser allows none of them."""
    dr_next, dr_lhs, dr_accept, nullable, first_ptr, first_drs, start = grammar
    (items, charts, counts, bound_keys, bound_vals, child_keys, child_vals, leo_keys, leo_vals,
     set_keys, set_vals, set_ptr, set_items, set_fresh, scr_keys, scr_gen, nt_gen, lex_gen, tmp, chain,
     fps) = arena
    child = counts[N_CHARTS]
    if child >= charts.shape[0]:
        counts[WANT] = WANT_CHARTS
        return NEED_SPACE, 0
    counts[GEN] += 2
    gen = counts[GEN]
    for j in range(lexemes.shape[0]):
        lex_gen[lexemes[j]] = gen
    row_start = counts[N_ITEMS]
    counts[ROW_START] = row_start
    for k in range(charts[chart, START], charts[chart, STOP]):
        symbol = dr_next[items[k, 0]]
        if symbol < 0 and lex_gen[~symbol] == gen:
            if not _add_item(items, counts, scr_keys, scr_gen, gen, items[k, 0] + 1, items[k, 1]):
                counts[N_ITEMS] = row_start
                return NEED_SPACE, 0
    if counts[N_ITEMS] == row_start:
        return OK, NONE
    charts[child, PARENT] = chart
    status = _finish_chart(grammar, arena, child, row_start, max_row, use_leo)
    if status != OK:
        return status, 0
    return OK, child


@njit(cache=True, nogil=True)
def boundary_kernel(grammar, arena, lexer, chart, lex, max_row, use_leo):
    """A lexeme ends in lexer state ``lex`` at ``chart``: ``(status, value)`` where ``value`` is
    ``child << 32 | child's fresh lexer state`` or ``NONE`` (the parser refuses every lexeme
    that can end there). Memoized in the boundary table; ignored lexemes keep the chart.
    ``status`` ``NEED_FRESH`` comes with the child chart as ``value``; ``STALE_LEXER`` when
    ``lex``'s lexemes lie past ``acc_pool``: another thread grew the pool after the caller read
    the lexer's arrays (``lex`` was reached through a row written in place), so the caller
    calls again with the lexer's current ones instead of scanning a cut list. ``lexer`` is
    ``Lexer.kernel_arrays``: a child chart that allows one lexeme, or none, gets its fresh state
    from ``single_fresh`` where the lexer has it (no ``NEED_FRESH``)."""
    (items, charts, counts, bound_keys, bound_vals, child_keys, child_vals, leo_keys, leo_vals,
     set_keys, set_vals, set_ptr, set_items, set_fresh, scr_keys, scr_gen, nt_gen, lex_gen, tmp, chain,
     fps) = arena
    acc_start, acc_len, acc_pool, acc_id, acc_ignore_only, single_fresh = lexer
    key = (np.int64(chart) << 32) | lex
    found = table_get_kernel(bound_keys, bound_vals, key)
    if found != ABSENT:
        return OK, found
    if (counts[BOUND_COUNT] + 1) * 2 > bound_keys.shape[0] or (counts[CHILD_COUNT] + 1) * 2 > child_keys.shape[0]:
        counts[WANT] = WANT_TABLES
        return NEED_SPACE, 0
    if acc_ignore_only[lex]:
        child = np.int64(chart)
    else:
        child_key = (np.int64(chart) << 32) | acc_id[lex]
        child = table_get_kernel(child_keys, child_vals, child_key)
        if child == ABSENT:
            lo = acc_start[lex]
            if lo + acc_len[lex] > acc_pool.shape[0]:
                return STALE_LEXER, 0
            status, made = scan_kernel(grammar, arena, chart, acc_pool[lo:lo + acc_len[lex]], max_row, use_leo)
            if status != OK:
                return status, 0
            child = np.int64(made)
            table_put_kernel(child_keys, child_vals, counts, CHILD_COUNT, child_key, child)
    if child == NONE:
        value = np.int64(NONE)
    else:
        set_id = charts[child, SET]
        fresh = set_fresh[set_id]
        if fresh < 0:  # new to the arena: the lexer may have the fresh state of one lexeme alone, or of none
            lo = set_ptr[set_id]
            size = set_ptr[set_id + 1] - lo
            if size <= 1:
                fresh = single_fresh[set_items[lo] if size else single_fresh.shape[0] - 1]
            if fresh < 0:
                return NEED_FRESH, child
            set_fresh[set_id] = fresh
        value = (child << 32) | fresh
    table_put_kernel(bound_keys, bound_vals, counts, BOUND_COUNT, key, value)
    return OK, value
