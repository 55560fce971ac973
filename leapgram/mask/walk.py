"""Computing a token mask for a DFA state by walking the trie in the compiled kernel."""

from __future__ import annotations

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


def fill_rows_down(trie: TokenTrie, table, node: int, state: int) -> None:
    """Fill the row of ``state`` (the state of ``node``'s parent), then those the walk will ask
    for next along ``node``'s first-child chain while they are new: inside a long token each
    byte reaches a new state, and filling its row here saves a return to Python and a kernel
    call (about 10 µs) per state. ``table`` is a :class:`LazyDfa` or a lexer."""
    table.fill_row(state)
    node_byte = trie.node_byte
    node_end = trie.node_end
    trans = table.trans
    while node + 1 < node_end.item(node):
        state = trans.item(state, node_byte.item(node))
        if state <= 0 or trans.item(state, 0) != UNKNOWN:
            return
        table.fill_row(state)
        trans = table.trans  # filling a row may grow the table
        node += 1
