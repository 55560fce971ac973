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
from typing import TYPE_CHECKING

import numpy as np

from .cache import TRIE_FIELDS, cached_trie

if TYPE_CHECKING:
    from .vocabulary import Vocabulary


class TokenTrie:
    """Flat arrays over a vocabulary's token bytes; built once per vocabulary.

    ``token_ids`` restricts the trie to some tokens (the slicer builds one trie per slice).
    """

    def __init__(self, vocab: Vocabulary, token_ids: Iterable[int] | None = None) -> None:
        self.vocab_size = vocab.size
        tokens = vocab.tokens()
        if token_ids is None:
            arrays = cached_trie(vocab)
            if arrays is not None:  # read from the on-disk cache with the vocabulary
                self.__dict__.update(arrays)
                self.max_depth = int(self.node_depth.max())
                return
            ids = np.arange(vocab.size, dtype=np.int64)
        else:
            ids = np.array([int(tid) for tid in token_ids], dtype=np.int64)
            for tid in ids.tolist():
                vocab.token_bytes(tid)  # raises ValueError for an id out of range
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
        starts = np.zeros(len(tokens), dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        flat = np.frombuffer(b"".join(tokens) + bytes(16), dtype=np.uint8)
        special = np.fromiter(vocab.special_token_ids, dtype=np.int64, count=len(vocab.special_token_ids))
        kept = ids[(lengths[ids] > 0) & ~np.isin(ids, special)]
        kept = kept[_byte_order(tokens, kept, flat, starts[kept], lengths[kept])]
        self._build(flat, starts[kept], lengths[kept], kept)

    def _build(self, flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray, order: np.ndarray) -> None:
        """Nodes from the tokens sorted by bytes (token ``k``'s bytes are ``flat[starts[k]:][:lengths[k]]``)
        with numpy (a Python loop over Llama-3's 128k tokens took 0.3 s): token ``k`` adds the nodes
        of its bytes past its common prefix with token ``k - 1``; a token equal to the one before
        adds none (a duplicate)."""
        common = _common_prefixes(flat, starts, lengths)
        fresh = common < lengths
        self._keep_duplicates(order, fresh)
        counts = (lengths - common)[fresh]
        firsts = np.ones(len(counts), dtype=np.int64)
        np.cumsum(counts[:-1], out=firsts[1:])
        firsts[1:] += 1
        owner = np.repeat(np.arange(len(counts)), counts)
        depth = np.arange(len(owner), dtype=np.int64) - (firsts - 1)[owner] + common[fresh][owner] + 1
        num_nodes = len(owner) + 1
        self.node_byte = np.zeros(num_nodes, dtype=np.uint8)
        self.node_byte[1:] = flat[starts[fresh][owner] + depth - 1]
        self.node_depth = np.zeros(num_nodes, dtype=np.int32)
        self.node_depth[1:] = depth
        self.node_token = np.full(num_nodes, -1, dtype=np.int32)
        self.node_token[firsts + counts - 1] = order[fresh]
        self.node_end = _subtree_ends(self.node_depth)
        self.max_depth = int(self.node_depth.max())
        if self.max_depth >= 1 << 16:
            raise ValueError(f"a token of {self.max_depth} bytes is longer than the trie supports (65,535)")
        self.node_info = pack_node_info(self.node_byte, self.node_depth, self.node_token)

    def _keep_duplicates(self, order: np.ndarray, fresh: np.ndarray) -> None:
        """Tokens whose bytes equal an earlier token's: ``dup_other`` and, in ``dup_primary``, the
        first token with those bytes (the smallest id), the one stored in the trie."""
        last_fresh = np.maximum.accumulate(np.where(fresh, np.arange(len(fresh)), 0))
        self.dup_primary = order[last_fresh[~fresh]].astype(np.int32)
        self.dup_other = order[~fresh].astype(np.int32)

    @classmethod
    def from_arrays(cls, vocab_size: int, arrays: dict[str, np.ndarray], prefix: str = "") -> TokenTrie:
        """A trie of ``vocab_size`` ids over the arrays :meth:`arrays` gave (their names after
        ``prefix``), as kept in the on-disk cache; KeyError when one is missing."""
        trie = object.__new__(cls)
        trie.vocab_size = vocab_size
        for name in TRIE_FIELDS:
            setattr(trie, name, arrays[prefix + name])
        trie.max_depth = int(trie.node_depth.max())
        return trie

    def arrays(self, prefix: str = "") -> dict[str, np.ndarray]:
        """The arrays that make the trie, named ``prefix`` + field (see :meth:`from_arrays`)."""
        return {prefix + name: getattr(self, name) for name in TRIE_FIELDS}

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


def _byte_order(tokens: list[bytes], ids: np.ndarray, flat: np.ndarray, starts: np.ndarray,
                lengths: np.ndarray) -> np.ndarray:
    """The positions of ``ids`` sorted by their tokens' bytes, stably (Python's ``sorted`` took
    60 ms for Llama-3): numpy sorts on the first 16 bytes, zero-padded, then on the length (so a
    prefix comes first); Python sorts the runs of tokens longer than 16 bytes that agree on them.
    ``flat`` holds 16 bytes of padding past the last token."""
    columns = np.arange(16)
    window = flat[starts[:, None] + columns]
    window[columns >= lengths[:, None]] = 0
    keys = window.view(">u8")
    order = np.lexsort((lengths, keys[:, 1], keys[:, 0]))
    long_ties = np.flatnonzero((keys[order[1:]] == keys[order[:-1]]).all(axis=1) & (lengths[order[:-1]] > 16))
    for first, last in _runs(long_ties):
        run = order[first:last + 2].tolist()
        order[first:last + 2] = sorted(run, key=lambda position: tokens[ids[position]])
    return order


def _runs(positions: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs of consecutive integers in the ascending ``positions``, as (first, last)."""
    if not positions.size:
        return []
    breaks = np.flatnonzero(np.diff(positions) != 1)
    firsts = np.concatenate(([positions[0]], positions[breaks + 1]))
    lasts = np.concatenate((positions[breaks], [positions[-1]]))
    return list(zip(firsts.tolist(), lasts.tolist()))


def _common_prefixes(flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``out[k]``: the length of the common prefix of sorted tokens ``k - 1`` and ``k`` (0 for k = 0),
    one numpy pass per byte position over the pairs still equal so far."""
    common = np.zeros(len(lengths), dtype=np.int64)
    limit = np.minimum(lengths[1:], lengths[:-1])
    pairs = np.flatnonzero(limit > 0)
    position = 0
    while pairs.size:
        pairs = pairs[flat[starts[pairs] + position] == flat[starts[pairs + 1] + position]]
        position += 1
        common[pairs + 1] = position
        pairs = pairs[limit[pairs] > position]
    return common


def _subtree_ends(node_depth: np.ndarray) -> np.ndarray:
    """``end[i]``: the first node after ``i`` in depth-first order whose depth is at most ``i``'s.
    Depth by depth: the next node of the same depth, unless the parent's subtree ends first."""
    num_nodes = len(node_depth)
    ends = np.full(num_nodes, num_nodes, dtype=np.int32)
    by_depth = np.argsort(node_depth, kind="stable")
    bounds = np.cumsum(np.bincount(node_depth))
    parents = by_depth[:1]
    for depth in range(1, len(bounds)):
        nodes = by_depth[bounds[depth - 1]:bounds[depth]]
        following = np.append(nodes[1:], num_nodes)
        parent = parents[np.searchsorted(parents, nodes) - 1]
        ends[nodes] = np.minimum(following, ends[parent])
        parents = nodes
    return ends
