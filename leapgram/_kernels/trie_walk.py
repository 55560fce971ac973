"""Walking the token trie with a DFA transition table.

The kernel visits trie nodes in depth-first order. A node's state is the transition of its
parent's state by the node's byte; a dead transition skips the whole subtree in one jump
(``i = node_end[i]``), so an almost empty mask costs only the few nodes the DFA lets through.
A transition not computed yet (``-1``) makes the kernel return the node index: Python fills that
DFA row and calls again with the same ``state_stack``, so the walk resumes where it stopped.
"""

from __future__ import annotations

import numpy as np

from . import njit


@njit(cache=True, nogil=True)
def walk_trie_kernel(node_info, node_end, trans, state_stack, start, mask):
    """Mark in ``mask`` (uint32 words) every token whose bytes keep the DFA alive.

    ``node_info``/``node_end`` are the trie's arrays (see :class:`leapgram.vocab.trie.TokenTrie`);
    ``state_stack[d]`` is the state after the first ``d`` bytes; ``state_stack[0]`` is the
    starting state. Returns the index of the first node whose transition is unknown, or the
    number of nodes when the walk is complete.
    """
    n = node_info.shape[0]
    i = start
    while i < n:
        info = node_info[np.uint64(i)]  # unsigned indices: no wraparound test per access
        depth = np.uint64((info >> 8) & 0xFFFF)
        state = trans[np.uint64(state_stack[depth - np.uint64(1)]), np.uint64(info & 0xFF)]
        if state <= 0:
            if state < 0:
                return i
            i = node_end[np.uint64(i)]
            continue
        state_stack[depth] = state
        token = info >> 24
        if token >= 0:
            mask[np.uint64(token >> 5)] |= np.uint32(1) << np.uint32(token & 31)
        i += 1
    return n


def walk_trie_twin(trie, step, state: int, mask: np.ndarray) -> None:
    """Plain-Python twin of :func:`walk_trie_kernel`: a recursive walk over child lists.

    ``step(state, byte)`` returns the next state, ``0`` meaning dead. Tokens that share their
    bytes with the one stored in the trie get its bit, as :func:`copy_duplicate_bits_kernel` does.
    """

    def visit(node: int, node_state: int) -> None:
        for child in trie.children(node):
            child_state = step(node_state, int(trie.node_byte[child]))
            if child_state == 0:
                continue
            token = int(trie.node_token[child])
            if token >= 0:
                mask[token >> 5] |= np.uint32(1 << (token & 31))
            visit(child, child_state)

    visit(0, state)
    for primary, other in zip(trie.dup_primary.tolist(), trie.dup_other.tolist()):
        if (int(mask[primary >> 5]) >> (primary & 31)) & 1:
            mask[other >> 5] |= np.uint32(1 << (other & 31))


@njit(cache=True, nogil=True)
def copy_duplicate_bits_kernel(mask, dup_primary, dup_other):
    """Give each token that shares its bytes with another the bit of the one in the trie."""
    for k in range(dup_primary.shape[0]):
        p = dup_primary[k]
        if (mask[p >> 5] >> np.uint32(p & 31)) & np.uint32(1):
            o = dup_other[k]
            mask[o >> 5] |= np.uint32(1) << np.uint32(o & 31)
