"""Walking the token trie with a lexer and a parser.

As in :mod:`leapgram._kernels.trie_walk`, each node's lexer state is the transition of its
parent's by the node's byte. When that transition is dead but a lexeme can end in the parent's
state, the lexeme ends there: the parser scans it (:func:`leapgram._kernels.earley.boundary_kernel`,
inside the kernel, memoized per chart and lexer state) and the byte starts the next lexeme from the
new chart's fresh lexer state. ``stack[d]`` holds ``chart << 32 | lexer state`` after ``d`` bytes
(one load and one store per node); the boundary table is keyed by the same packed value. Lexeme boundaries are rare (llguidance measured under 0.5% of trie nodes).

The kernel returns ``(node, code, payload)``: ``DONE`` (``payload`` 1 when a memo table of the
arena is past a quarter full, so that :meth:`leapgram.parser.arena.ChartArena.tidy` grows it; 0
otherwise); ``MISSING_ROW`` (the row of the parent's
lexer state is not computed); ``MISSING_ROW_AFTER_STEP`` (the row of the fresh state after the
boundary is not computed); or a parser request (``NEED_FRESH`` with the chart as payload,
``NEED_SPACE``, ``OVER_BUDGET``) for :meth:`leapgram.parser.arena.ChartArena.handle`. The caller
fills what is missing and calls again from ``node``. ``NEED_FRESH`` comes only where the lexer
may not have the fresh state (a child chart's set of lexemes is new to the arena and holds two
lexemes or more, or one whose fresh state the lexer has not made: ``Lexer.single_fresh``).
"""

from __future__ import annotations

import numpy as np

from . import njit
from .earley import BOUND_COUNT, CHILD_COUNT, LEO_COUNT, NONE, OK, boundary_kernel
from .tables import ABSENT, table_get_kernel
from .trie_walk import copy_duplicate_bits_kernel
from .views import arena_of, grammar_of, lexer_of

DONE = 0
MISSING_ROW = 1
MISSING_ROW_AFTER_STEP = 3


@njit(cache=True, nogil=True)
def walk_cfg_kernel(node_info, node_end, dup_primary, dup_other, lexer_views, grammar_views, arena_views,
                    max_row, use_leo, stack, start, mask):
    """Mark in ``mask`` every token that the lexer and parser accept from the chart and lexer
    state packed in ``stack[0]`` (``chart << 32 | lexer state``; ``stack[d]`` is the same after
    ``d`` bytes); when the walk is complete, tokens sharing their bytes with a marked one get
    their bit too. The lexer's, the grammar's and the arena's arrays come as views
    (:mod:`leapgram._kernels.views`). Returns ``(node, code, payload)``."""
    lexer = lexer_of(lexer_views)
    trans, accepting, lexer = lexer[0], lexer[1], lexer[2:]
    grammar = grammar_of(grammar_views)
    arena = arena_of(arena_views)
    bound_keys = arena[3]
    bound_vals = arena[4]
    n = node_info.shape[0]
    i = start
    last_key = np.int64(-1)
    last_found = np.int64(NONE)
    low = np.int64(0xFFFFFFFF)
    while i < n:
        info = node_info[np.uint64(i)]  # unsigned indices: no wraparound test per access (-11% time)
        depth = np.uint64((info >> 8) & 0xFFFF)
        top = stack[depth - np.uint64(1)]
        lex = top & low
        byte = np.uint64(info & 0xFF)
        state = trans[np.uint64(lex), byte]
        if state <= 0:
            if state < 0:
                return i, MISSING_ROW, 0
            if accepting[np.uint64(lex)] == 0:
                i = node_end[np.uint64(i)]
                continue
            if top == last_key:
                found = last_found
            else:
                found = table_get_kernel(bound_keys, bound_vals, top)
                if found == ABSENT:
                    status, found = boundary_kernel(grammar, arena, lexer, top >> 32, lex, max_row, use_leo)
                    if status != OK:
                        return i, status, found
                last_key = top
                last_found = found
            if found == NONE:
                i = node_end[np.uint64(i)]
                continue
            state = trans[np.uint64(found & low), byte]
            if state < 0:
                return i, MISSING_ROW_AFTER_STEP, found
            if state == 0:
                i = node_end[np.uint64(i)]
                continue
            stack[depth] = (found & ~low) | state
        else:
            stack[depth] = (top & ~low) | state
        token = info >> 24
        if token >= 0:
            mask[np.uint64(token >> 5)] |= np.uint32(1) << np.uint32(token & 31)
        i += 1
    copy_duplicate_bits_kernel(mask, dup_primary, dup_other)
    return n, DONE, tables_filling(arena)


@njit(cache=True, nogil=True)
def lexeme_walk_kernel(node_info, node_end, lexer_views, stack, lex, tokens, frontier):
    """The part of a mask walk from lexer state ``lex`` that no chart changes: the walk with the
    lexer alone, up to where a lexeme ends. Writes into ``tokens`` the tokens whose bytes stay
    inside one lexeme, and into ``frontier`` two entries for each node whose byte is dead in an
    accepting state (where :func:`walk_cfg_kernel` asks the parser for a boundary): ``node << 32
    | its parent's lexer state``, then ``node_end[node] << 8 | its byte`` (so that a frontier node
    the parser refuses costs no load from the trie); their subtrees are not walked. Returns ``(tokens, frontier entries, nodes
    visited)``, or ``(-1, 0, 0)`` when a row is not computed or an output is full."""
    lexer = lexer_of(lexer_views)
    trans, accepting = lexer[0], lexer[1]
    n = node_info.shape[0]
    stack[0] = lex
    n_tokens = 0
    n_frontier = 0
    visits = 0
    i = 1
    while i < n:
        visits += 1
        info = node_info[np.uint64(i)]
        depth = np.uint64((info >> 8) & 0xFFFF)
        parent = stack[depth - np.uint64(1)]
        state = trans[np.uint64(parent), np.uint64(info & 0xFF)]
        if state <= 0:
            if state < 0:
                return -1, 0, 0
            if accepting[np.uint64(parent)] != 0:
                if 2 * n_frontier + 2 > frontier.shape[0]:
                    return -1, 0, 0
                frontier[2 * n_frontier] = (np.int64(i) << 32) | parent
                frontier[2 * n_frontier + 1] = (node_end[np.uint64(i)] << 8) | (info & 0xFF)
                n_frontier += 1
            i = node_end[np.uint64(i)]
            continue
        stack[depth] = state
        token = info >> 24
        if token >= 0:
            if n_tokens >= tokens.shape[0]:
                return -1, 0, 0
            tokens[n_tokens] = token
            n_tokens += 1
        i += 1
    return n_tokens, n_frontier, visits


@njit(cache=True, nogil=True)
def walk_frontier_kernel(node_info, node_end, dup_primary, dup_other, lexer_views, grammar_views, arena_views,
                         max_row, use_leo, stack, chart, tokens, frontier, where, mask):
    """:func:`walk_cfg_kernel` from ``chart`` and a lexer state whose :func:`lexeme_walk_kernel`
    gave ``tokens`` and ``frontier``: mark the tokens, then walk on from each frontier node as
    the whole walk would (the parser's boundary, then the node's subtree). ``where`` holds the
    frontier entry to start at and the node to resume at in its subtree (``(0, 0)``: from the
    start, the tokens marked first; node 0: from the entry's boundary). Returns ``(node, code,
    payload)`` as :func:`walk_cfg_kernel`, with ``where`` set for the next call."""
    lexer = lexer_of(lexer_views)
    trans, accepting, lexer = lexer[0], lexer[1], lexer[2:]
    grammar = grammar_of(grammar_views)
    arena = arena_of(arena_views)
    bound_keys = arena[3]
    bound_vals = arena[4]
    f = where[0]
    i = where[1]
    if f == 0 and i == 0:
        for k in range(tokens.shape[0]):
            token = tokens[k]
            mask[token >> 5] |= np.uint32(1) << np.uint32(token & 31)
    low = np.int64(0xFFFFFFFF)
    base = np.int64(chart) << 32
    last_key = np.int64(-1)
    last_found = np.int64(NONE)
    while f < frontier.shape[0]:
        entry = frontier[f]
        more = frontier[f + 1]
        if i == 0:
            where[0] = f
            where[1] = 0
            top = base | (entry & low)
            if top == last_key:
                found = last_found
            else:
                found = table_get_kernel(bound_keys, bound_vals, top)
                if found == ABSENT:
                    status, found = boundary_kernel(grammar, arena, lexer, chart, entry & low, max_row, use_leo)
                    if status != OK:
                        return entry >> 32, status, found
                last_key = top
                last_found = found
            f += 2
            if found == NONE:
                continue
            state = trans[np.uint64(found & low), np.uint64(more & 0xFF)]
            if state <= 0:
                if state < 0:
                    return entry >> 32, MISSING_ROW_AFTER_STEP, found
                continue
            i = entry >> 32
            info = node_info[np.uint64(i)]
            stack[np.uint64((info >> 8) & 0xFFFF)] = (found & ~low) | state
            token = info >> 24
            if token >= 0:
                mask[np.uint64(token >> 5)] |= np.uint32(1) << np.uint32(token & 31)
            i += 1
        else:
            f += 2
        where[0] = f - 2
        stop = more >> 8
        while i < stop:
            info = node_info[np.uint64(i)]
            depth = np.uint64((info >> 8) & 0xFFFF)
            top = stack[depth - np.uint64(1)]
            lex = top & low
            byte = np.uint64(info & 0xFF)
            state = trans[np.uint64(lex), byte]
            if state <= 0:
                if state < 0:
                    where[1] = i
                    return i, MISSING_ROW, 0
                if accepting[np.uint64(lex)] == 0:
                    i = node_end[np.uint64(i)]
                    continue
                if top == last_key:
                    found = last_found
                else:
                    found = table_get_kernel(bound_keys, bound_vals, top)
                    if found == ABSENT:
                        status, found = boundary_kernel(grammar, arena, lexer, top >> 32, lex, max_row, use_leo)
                        if status != OK:
                            where[1] = i
                            return i, status, found
                    last_key = top
                    last_found = found
                if found == NONE:
                    i = node_end[np.uint64(i)]
                    continue
                state = trans[np.uint64(found & low), byte]
                if state <= 0:
                    if state < 0:
                        where[1] = i
                        return i, MISSING_ROW_AFTER_STEP, found
                    i = node_end[np.uint64(i)]
                    continue
                stack[depth] = (found & ~low) | state
            else:
                stack[depth] = (top & ~low) | state
            token = info >> 24
            if token >= 0:
                mask[np.uint64(token >> 5)] |= np.uint32(1) << np.uint32(token & 31)
            i += 1
        i = 0
    where[0] = f
    where[1] = 0
    copy_duplicate_bits_kernel(mask, dup_primary, dup_other)
    return node_info.shape[0], DONE, tables_filling(arena)


@njit(cache=True, nogil=True, inline="always")
def tables_filling(arena):
    """1 when a memo table of the arena (boundaries, children, Leo items) holds more than a
    quarter of its size less 2 (the test of ``ChartArena.tidy``), else 0."""
    counts = arena[2]
    if (counts[BOUND_COUNT] > arena[3].shape[0] // 4 - 2 or counts[CHILD_COUNT] > arena[5].shape[0] // 4 - 2
            or counts[LEO_COUNT] > arena[7].shape[0] // 4 - 2):
        return 1
    return 0


@njit(cache=True, nogil=True)
def advance_cfg_kernel(data, lexer_views, grammar_views, arena_views, max_row, use_leo, chart, lex, start):
    """Run the bytes ``data[start:]`` (a ``bytes`` object) from ``(chart, lex)``, the lexer's,
    the grammar's and the arena's arrays given as views (:mod:`leapgram._kernels.views`). Returns
    ``(index, code, payload, chart, lex)``: ``DONE`` with the final chart and lexer state;
    ``MISSING_ROW`` (fill the row of the returned ``lex``) or a parser request, to resume from
    ``index`` with the returned state; or ``index == -1`` when the bytes are refused."""
    lexer = lexer_of(lexer_views)
    trans, accepting, lexer = lexer[0], lexer[1], lexer[2:]
    grammar = grammar_of(grammar_views)
    arena = arena_of(arena_views)
    for i in range(start, len(data)):
        byte = data[i]
        state = trans[lex, byte]
        if state < 0:
            return i, MISSING_ROW, 0, chart, lex
        if state == 0:
            if accepting[lex] == 0:
                return -1, DONE, 0, chart, lex
            status, found = boundary_kernel(grammar, arena, lexer, chart, lex, max_row, use_leo)
            if status != OK:
                return i, status, found, chart, lex
            if found == NONE:
                return -1, DONE, 0, chart, lex
            fresh = found & 0xFFFFFFFF
            state = trans[fresh, byte]
            if state < 0:
                return i, MISSING_ROW_AFTER_STEP, found, chart, lex
            if state == 0:
                return -1, DONE, 0, chart, lex
            chart = found >> 32
        lex = state
    return len(data), DONE, 0, chart, lex


def walk_cfg_twin(trie, step, boundary, chart, lex: int, mask: np.ndarray) -> None:
    """Plain-Python twin of :func:`walk_cfg_kernel`: a recursive walk over child lists.

    ``step(lex, byte)`` is the lexer transition (0 = dead); ``boundary(chart, lex)`` returns
    ``(child chart, its fresh lexer state)`` or ``None``. Duplicate tokens get their bits too.
    """

    def visit(node: int, chart, lex: int) -> None:
        for child in trie.children(node):
            byte = int(trie.node_byte[child])
            state, next_chart = step(lex, byte), chart
            if state == 0:
                ended = boundary(chart, lex)
                if ended is None:
                    continue
                next_chart, fresh = ended
                state = step(fresh, byte)
                if state == 0:
                    continue
            token = int(trie.node_token[child])
            if token >= 0:
                mask[token >> 5] |= np.uint32(1 << (token & 31))
            visit(child, next_chart, state)

    visit(0, chart, lex)
    for primary, other in zip(trie.dup_primary.tolist(), trie.dup_other.tolist()):
        if (int(mask[primary >> 5]) >> (primary & 31)) & 1:
            mask[other >> 5] |= np.uint32(1 << (other & 31))


def lexeme_walk_twin(trie, step, accepting, lex: int) -> tuple[list[int], list[tuple[int, int]]]:
    """Plain-Python twin of :func:`lexeme_walk_kernel`, a recursive walk over child lists:
    ``(tokens, [(frontier node, its parent's lexer state), ...])``, both in the trie's order.
    ``step(lex, byte)`` is the lexer transition (0 = dead); ``accepting(lex)`` whether a lexeme
    ends there."""
    tokens: list[int] = []
    frontier: list[tuple[int, int]] = []

    def visit(node: int, state: int) -> None:
        for child in trie.children(node):
            after = step(state, int(trie.node_byte[child]))
            if after == 0:
                if accepting(state):
                    frontier.append((child, state))
                continue
            token = int(trie.node_token[child])
            if token >= 0:
                tokens.append(token)
            visit(child, after)

    visit(0, lex)
    return tokens, frontier
