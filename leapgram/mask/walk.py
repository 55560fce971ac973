"""Computing a token mask for a DFA state by walking the trie in the compiled kernel."""

from __future__ import annotations

import weakref

import numpy as np

from .._kernels.trie_walk import copy_duplicate_bits_kernel, walk_trie_kernel
from ..regex.dfa import UNKNOWN, LazyDfa
from ..vocab.trie import TokenTrie


def fill_dfa_mask(trie: TokenTrie, dfa: LazyDfa, state: int, mask: np.ndarray, state_stack: np.ndarray) -> None:
    """OR into ``mask`` (uint32 words) every token that keeps ``dfa`` alive from ``state``.

    ``state_stack`` is scratch of at least ``trie.max_depth + 1`` int32 entries. Missing DFA
    rows are filled in Python between kernel calls, one row per stop.
    """
    state_stack[0] = state
    if dfa.trans[state, 0] < 0:
        dfa.fill_row(state)
    start = 1
    n = trie.num_nodes
    while True:
        start = walk_trie_kernel(trie.node_info, trie.node_end, dfa.trans, state_stack, start, mask)
        if start >= n:
            break
        fill_rows_down(trie, dfa, start, int(state_stack[trie.node_depth[start] - 1]))
    if trie.dup_primary.shape[0]:
        copy_duplicate_bits_kernel(mask, trie.dup_primary, trie.dup_other)


CHILD_INDEX_MIN = 16  # children a node needs for its row of the child index to be used
_CHILD_INDEXES: dict[int, np.ndarray] = {}  # id(trie) -> its child index, dropped with the trie
NO_CHILD_INDEX = np.zeros((0, 257), dtype=np.int32)  # for re-rooted sub-tries: no row is used
NO_CHILD_INDEX.flags.writeable = False  # read-only like the others: one kernel signature


def child_index(trie) -> np.ndarray:
    """The child index of ``trie`` the CFG walk skips dead siblings with (see
    :func:`leapgram._kernels.cfg_walk.next_sibling_kernel`), made once per trie (about 264 KB).
    Row 0 is the root's children by byte, row ``1 + b`` those of the depth-1 node of byte ``b``;
    column 256 is 1 where the node has at least ``CHILD_INDEX_MIN`` children. Every row is off
    when the trie's siblings are not in byte order (the index would change the walk's order)."""
    found = _CHILD_INDEXES.get(id(trie))
    if found is None:
        found = _CHILD_INDEXES[id(trie)] = _child_index(trie.node_byte, trie.node_depth)
        weakref.finalize(trie, _CHILD_INDEXES.pop, id(trie), None)
    return found


def _child_index(node_byte: np.ndarray, node_depth: np.ndarray) -> np.ndarray:
    kids = np.zeros((257, 257), dtype=np.int32)
    first = np.flatnonzero(node_depth == 1)
    second = np.flatnonzero(node_depth == 2)
    if not first.size:
        return kids
    rows = 1 + node_byte[first[np.searchsorted(first, second) - 1]].astype(np.intp)
    first_bytes = node_byte[first].astype(np.intp)
    second_bytes = node_byte[second].astype(np.intp)
    in_order = bool(np.all(first_bytes[1:] > first_bytes[:-1])
                    and np.all((rows[1:] != rows[:-1]) | (second_bytes[1:] > second_bytes[:-1])))
    if not in_order:
        return kids
    kids[0, first_bytes] = first
    kids[rows, second_bytes] = second
    counts = np.bincount(rows, minlength=257)
    counts[0] = first.size
    kids[:, 256] = counts >= CHILD_INDEX_MIN
    kids.flags.writeable = False
    return kids


def fill_rows_down(trie: TokenTrie, table, node: int, state: int) -> None:
    """Fill the row of ``state`` (the state of ``node``'s parent), then those the walk will ask
    for next along ``node``'s first-child chain while they are new: inside a long token each
    byte reaches a new state, and filling its row here saves a return to Python and a kernel
    call (about 10 µs) per state. ``table`` is a :class:`LazyDfa` or a lexer."""
    table.fill_row(state)
    node_byte = trie.node_byte
    node_end = trie.node_end
    trans = table.trans
    while node + 1 < node_end[node]:
        state = int(trans[state, node_byte[node]])
        if state <= 0 or trans[state, 0] != UNKNOWN:
            return
        table.fill_row(state)
        trans = table.trans  # filling a row may grow the table
        node += 1
