"""Computing a token mask for a DFA state by walking the trie in the compiled kernel."""

from __future__ import annotations

import numpy as np

from .._kernels.trie_walk import copy_duplicate_bits_kernel, walk_trie_kernel
from ..regex.dfa import LazyDfa
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
        dfa.fill_row(int(state_stack[trie.node_depth[start] - 1]))
    if trie.dup_primary.shape[0]:
        copy_duplicate_bits_kernel(mask, trie.dup_primary, trie.dup_other)
