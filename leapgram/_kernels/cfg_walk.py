"""Walking the token trie with a lexer and a parser.

As in :mod:`leapgram._kernels.trie_walk`, each node's lexer state is the transition of its
parent's by the node's byte. When that transition is dead but a lexeme can end in the parent's
state, the lexeme ends there: the parser scans it, and the byte starts the next lexeme from the new
chart's fresh lexer state. Charts are named by integer ids; the step "chart ``p`` ends a lexeme in
lexer state ``s``" is looked up in a hash table, ``(p, s) -> (child chart, its fresh state)``,
filled by Python on a miss. ``par_stack`` holds the chart of each depth, as ``lex_stack`` holds
the lexer state. Lexeme boundaries are rare (llguidance measured under 0.5% of trie nodes), and a
chart's boundary steps are cached across masks, so the walk returns to Python only for new ones.

The kernel returns ``(node, code)``: ``DONE``; ``MISSING_ROW`` (the row of the parent's lexer
state is not computed); ``MISSING_STEP`` (the boundary step is not in the table); or
``MISSING_ROW_AFTER_STEP`` (the row of the fresh state after the boundary is not computed).
"""

from __future__ import annotations

import numpy as np
from numba import njit

DONE = 0
MISSING_ROW = 1
MISSING_STEP = 2
MISSING_ROW_AFTER_STEP = 3

EMPTY_KEY = -1
NO_CHILD = -2
ABSENT = -3


@njit(cache=True, nogil=True)
def table_slot_kernel(keys, key):
    """The slot of ``key`` in the open-addressing table ``keys`` (a power-of-two size), or the
    empty slot where it goes. Keys are ``chart << 32 | lexer state``, both below 2**31."""
    mask = keys.shape[0] - 1
    slot = ((key & 0xFFFFFFFF) * 40503 + (key >> 32) * 65599) & mask
    while keys[slot] != key and keys[slot] != EMPTY_KEY:
        slot = (slot + 1) & mask
    return slot


@njit(cache=True, nogil=True)
def table_rehash_kernel(old_keys, old_values, keys, values):
    """Insert every entry of the old table into the (empty, larger) new one; returns the count."""
    count = 0
    for k in range(old_keys.shape[0]):
        key = old_keys[k]
        if key != EMPTY_KEY:
            slot = table_slot_kernel(keys, key)
            keys[slot] = key
            values[slot] = old_values[k]
            count += 1
    return count


@njit(cache=True, nogil=True)
def table_get_kernel(keys, values, key):
    slot = table_slot_kernel(keys, key)
    if keys[slot] == EMPTY_KEY:
        return ABSENT
    return values[slot]


@njit(cache=True, nogil=True)
def walk_cfg_kernel(node_byte, node_end, node_depth, node_token, trans, accepting, keys, values,
                    lex_stack, par_stack, start, mask):
    """Mark in ``mask`` every token that the lexer and parser accept from the chart and lexer
    state at ``par_stack[0]``/``lex_stack[0]``. Returns ``(node, code)``."""
    n = node_byte.shape[0]
    i = start
    while i < n:
        depth = node_depth[i]
        lex = lex_stack[depth - 1]
        par = par_stack[depth - 1]
        byte = node_byte[i]
        state = trans[lex, byte]
        if state < 0:
            return i, MISSING_ROW
        if state == 0:
            if accepting[lex] == 0:
                i = node_end[i]
                continue
            found = table_get_kernel(keys, values, (np.int64(par) << 32) | lex)
            if found == ABSENT:
                return i, MISSING_STEP
            if found == NO_CHILD:
                i = node_end[i]
                continue
            par = found >> 32
            state = trans[found & 0xFFFFFFFF, byte]
            if state < 0:
                return i, MISSING_ROW_AFTER_STEP
            if state == 0:
                i = node_end[i]
                continue
        lex_stack[depth] = state
        par_stack[depth] = par
        token = node_token[i]
        if token >= 0:
            mask[token >> 5] |= np.uint32(1) << np.uint32(token & 31)
        i += 1
    return n, DONE


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
