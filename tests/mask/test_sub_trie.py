"""The slicer's tries cut out of the full trie equal the tries built from the same tokens."""

from __future__ import annotations

import numpy as np
from conftest import SMALL_TOKENS

from leapgram import Vocabulary
from leapgram.mask.slicer import SlicedVocabulary, sub_trie
from leapgram.vocab.trie import TokenTrie

ARRAYS = ("node_byte", "node_depth", "node_token", "node_end", "dup_primary", "dup_other", "node_info")


def assert_same_trie(cut: TokenTrie, built: TokenTrie) -> None:
    for name in ARRAYS:
        assert np.array_equal(getattr(cut, name), getattr(built, name)), name
    assert (cut.max_depth, cut.vocab_size) == (built.max_depth, built.vocab_size)


def test_sub_trie_equals_the_trie_of_its_tokens(small_vocab):
    full = TokenTrie(small_vocab)
    rng = np.random.default_rng(0)
    tokens = small_vocab.tokens()
    for _ in range(50):
        chosen = {t for t in set(tokens) if rng.random() < 0.4}
        ids = [i for i, t in enumerate(tokens) if t in chosen]  # equal bytes: all in or none
        words = np.zeros((small_vocab.size + 31) // 32, dtype=np.uint32)
        for i in ids:
            words[i >> 5] |= np.uint32(1 << (i & 31))
        assert_same_trie(sub_trie(full, words), TokenTrie(small_vocab, ids))


def test_sliced_vocabulary_tries_equal_the_tries_of_their_tokens():
    vocab = Vocabulary([*SMALL_TOKENS, b'"abc', b"a" * 40, b"xyz" * 5])
    sliced = SlicedVocabulary(vocab, TokenTrie(vocab))
    claimed = np.zeros_like(sliced.slices[0].mask)
    for slice_ in [*sliced.slices, None]:
        mask = ~claimed if slice_ is None else slice_.mask
        ids = np.flatnonzero(np.unpackbits(mask.view(np.uint8), bitorder="little")[:vocab.size])
        assert_same_trie(sliced.rest if slice_ is None else slice_.trie, TokenTrie(vocab, ids))
        if slice_ is not None:
            claimed |= slice_.mask
