"""Masks while a required prefix is pending (token healing; see ``docs/design/fast-forward.md``).

A matcher created with ``required_prefix=R`` must first produce the bytes ``R`` (the end of a
prompt that :func:`leapgram.heal_prompt` backed off), then text of the grammar. A token ``T`` is
allowed when ``R`` starts with ``T`` (it stays inside the prefix), or when ``T`` starts with ``R``
and the rest of ``T`` is allowed by the grammar. The first kind are the tokens on the trie path of
``R``; the second are the tokens below ``R``'s node, found by the usual walk (regex DFA or
lexer + parser) over that sub-trie re-rooted at the node, from the grammar's state. The cost is
the length of ``R`` plus one walk of a sub-trie that is usually small.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

from .._kernels.trie_walk import copy_duplicate_bits_kernel
from ..vocab.trie import TokenTrie, pack_node_info
from .engines import CfgEngine, RegexEngine
from .forced import trie_node

_CACHE_SIZE = 256


class SubTrie:
    """The nodes below one node of a :class:`TokenTrie`, re-rooted (node 0 is that node, with no
    token): the arrays the walk kernels read. Duplicate tokens are left to the full trie."""

    def __init__(self, trie: TokenTrie, node: int) -> None:
        lo, hi = node, int(trie.node_end[node])
        self.node_byte = np.ascontiguousarray(trie.node_byte[lo:hi])
        self.node_end = (trie.node_end[lo:hi] - lo).astype(np.int32)
        self.node_depth = (trie.node_depth[lo:hi] - trie.node_depth[lo]).astype(np.int32)
        self.node_token = trie.node_token[lo:hi].copy()
        self.node_token[0] = -1
        self.node_info = pack_node_info(self.node_byte, self.node_depth, self.node_token)
        self.dup_primary = np.zeros(0, dtype=np.int32)
        self.dup_other = np.zeros(0, dtype=np.int32)
        self.max_depth = int(self.node_depth.max())

    @property
    def num_nodes(self) -> int:
        return int(self.node_byte.shape[0])


class PrefixMasks:
    """Masks for ``(state, pending prefix)`` of one compiled grammar, cached."""

    def __init__(self, engine: RegexEngine | CfgEngine, trie: TokenTrie, words: int) -> None:
        self.engine = engine
        self.trie = trie
        self.words = words
        self._masks: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._subtries: OrderedDict[bytes, SubTrie | None] = OrderedDict()
        self._lock = threading.Lock()

    def mask(self, state, prefix: bytes) -> np.ndarray:
        """uint32 words of the tokens allowed with ``prefix`` pending (non-empty); do not modify."""
        key = (self.engine.mask_key(state), prefix)
        with self._lock:
            found = self._masks.get(key)
        if found is not None:
            return found
        mask = np.zeros(self.words, dtype=np.uint32)
        self._fill(state, prefix, mask)
        with self._lock:
            self._masks[key] = mask
            while len(self._masks) > _CACHE_SIZE:
                self._masks.popitem(last=False)
        return mask

    def _fill(self, state, prefix: bytes, mask: np.ndarray) -> None:
        trie = self.trie
        for depth in range(1, len(prefix) + 1):
            node = trie_node(trie, prefix[:depth])
            if node < 0:
                break
            token = int(trie.node_token[node])
            if token >= 0:
                mask[token >> 5] |= np.uint32(1 << (token & 31))
        subtrie = self._subtrie(prefix)
        if subtrie is not None:
            self.engine.fill_mask_over(state, subtrie, mask)
        if trie.dup_primary.shape[0]:
            copy_duplicate_bits_kernel(mask, trie.dup_primary, trie.dup_other)

    def _subtrie(self, prefix: bytes) -> SubTrie | None:
        with self._lock:
            if prefix in self._subtries:
                return self._subtries[prefix]
        node = trie_node(self.trie, prefix)
        found = SubTrie(self.trie, node) if node >= 0 else None
        with self._lock:
            self._subtries[prefix] = found
            while len(self._subtries) > _CACHE_SIZE:
                self._subtries.popitem(last=False)
        return found
