"""The vocabulary as a byte trie laid out flat in depth-first order.

Node 0 is the root (no byte). For node ``i``: ``node_byte[i]`` is the byte on the edge into it,
``node_depth[i]`` its depth (the root has depth 0), ``node_token[i]`` the token id whose bytes end
there (``-1`` for none) and ``node_end[i]`` the index just past its subtree, so skipping a subtree
is ``i = node_end[i]``. The kernels read ``node_info[i] = byte | depth << 8 | token << 24`` (int64,
one load per node instead of three; ``token`` is -1 for none, so ``info >> 24`` is signed) and
``node_end``. Tokens with identical bytes share a node: the smallest id is stored there
and the others are listed in ``dup_primary``/``dup_other``. Special tokens and empty tokens are not
in the trie.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .vocabulary import Vocabulary


class TokenTrie:
    """Flat arrays over a vocabulary's token bytes; built once per vocabulary.

    ``token_ids`` restricts the trie to some tokens (the slicer builds one trie per slice).
    """

    def __init__(self, vocab: Vocabulary, token_ids: Iterable[int] | None = None) -> None:
        self.vocab_size = vocab.size
        tokens = vocab.tokens()
        ids = range(vocab.size) if token_ids is None else token_ids
        order = sorted((tid for tid in ids if tokens[tid] and not vocab.is_special(tid)), key=tokens.__getitem__)
        self._build(tokens, order)

    def _build(self, tokens: list[bytes], order: list[int]) -> None:
        node_byte = [0]
        node_depth = [0]
        node_token = [-1]
        node_end = [0]
        path = [0]
        dup_primary: list[int] = []
        dup_other: list[int] = []
        prev = b""
        for tid in order:
            data = tokens[tid]
            if data == prev:
                dup_primary.append(node_token[path[len(data)]])
                dup_other.append(tid)
                continue
            common = _common_prefix(prev, data)
            for node in path[common + 1 :]:
                node_end[node] = len(node_byte)
            del path[common + 1 :]
            for depth in range(common, len(data)):
                path.append(len(node_byte))
                node_byte.append(data[depth])
                node_depth.append(depth + 1)
                node_token.append(-1)
                node_end.append(0)
            node_token[path[-1]] = tid
            prev = data
        for node in path:
            node_end[node] = len(node_byte)
        self.node_byte = np.array(node_byte, dtype=np.uint8)
        self.node_depth = np.array(node_depth, dtype=np.int32)
        self.node_token = np.array(node_token, dtype=np.int32)
        self.node_end = np.array(node_end, dtype=np.int32)
        self.dup_primary = np.array(dup_primary, dtype=np.int32)
        self.dup_other = np.array(dup_other, dtype=np.int32)
        self.max_depth = int(self.node_depth.max()) if len(node_depth) else 0
        if self.max_depth >= 1 << 16:
            raise ValueError(f"a token of {self.max_depth} bytes is longer than the trie supports (65,535)")
        self.node_info = pack_node_info(self.node_byte, self.node_depth, self.node_token)

    @property
    def num_nodes(self) -> int:
        return int(self.node_byte.shape[0])

    def children(self, node: int) -> list[int]:
        """Child node indices of ``node`` (for tests and debugging; the kernels use the arrays)."""
        out = []
        child = node + 1
        while child < self.node_end[node]:
            out.append(child)
            child = int(self.node_end[child])
        return out


def pack_node_info(node_byte: np.ndarray, node_depth: np.ndarray, node_token: np.ndarray) -> np.ndarray:
    """The kernels' one-load-per-node array: ``byte | depth << 8 | token << 24`` (int64)."""
    return (node_byte.astype(np.int64) | (node_depth.astype(np.int64) << 8)
            | (node_token.astype(np.int64) << 24))


def _common_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i
