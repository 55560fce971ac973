from __future__ import annotations

import numpy as np
import pytest

from leapgram import Vocabulary
from leapgram.vocab.trie import TokenTrie


def tokens_under(trie: TokenTrie, node: int, prefix: bytes, out: dict[int, bytes]) -> None:
    for child in trie.children(node):
        data = prefix + bytes([int(trie.node_byte[child])])
        token = int(trie.node_token[child])
        if token >= 0:
            out[token] = data
        tokens_under(trie, child, data, out)


def check_trie(vocab: Vocabulary, trie: TokenTrie) -> None:
    found: dict[int, bytes] = {}
    tokens_under(trie, 0, b"", found)
    for primary, other in zip(trie.dup_primary.tolist(), trie.dup_other.tolist()):
        assert vocab.token_bytes(primary) == vocab.token_bytes(other)
        found[other] = vocab.token_bytes(other)
    expected = {t: vocab.token_bytes(t) for t in range(vocab.size)
                if vocab.token_bytes(t) and not vocab.is_special(t)}
    assert found == expected
    depth = trie.node_depth
    assert depth[0] == 0 and (depth[1:] >= 1).all()
    n = trie.num_nodes
    idx = np.arange(n)
    assert (trie.node_end > idx).all() and (trie.node_end <= n).all()
    assert (depth[1:] <= depth[:-1] + 1).all(), "depth-first order"


def test_small_vocab_trie(small_vocab):
    trie = TokenTrie(small_vocab)
    check_trie(small_vocab, trie)
    assert len(trie.dup_other) == 1
    assert trie.max_depth == 3


def test_empty_and_special_tokens_not_in_trie():
    vocab = Vocabulary([b"", b"a", b"<s>", b"a", b"a"], special_token_ids=[2], eos_token_ids=[2])
    trie = TokenTrie(vocab)
    assert trie.num_nodes == 2
    assert trie.node_token[1] == 1
    assert sorted(trie.dup_other.tolist()) == [3, 4]
    check_trie(vocab, trie)


def test_byte_vocab_trie(byte_vocab):
    trie = TokenTrie(byte_vocab)
    assert trie.num_nodes == 257
    check_trie(byte_vocab, trie)


@pytest.mark.slow
def test_llama3_trie(llama3_vocab):
    trie = TokenTrie(llama3_vocab)
    check_trie(llama3_vocab, trie)
    assert trie.num_nodes > llama3_vocab.size
