"""Filling lexer rows down a token's chain before the kernel asks for them, one at a time."""

from __future__ import annotations

import numpy as np

from leapgram import Grammar, Vocabulary
from leapgram._kernels.trie_walk import walk_trie_twin
from leapgram.mask.walk import fill_dfa_mask, fill_rows_down
from leapgram.regex import UNKNOWN, ExprPool, LazyDfa, parse_regex
from leapgram.vocab.trie import TokenTrie
from tests.helpers.compiling import compile_for

LONG = b"abcdefgh"


def long_token_trie() -> tuple[Vocabulary, TokenTrie]:
    vocab = Vocabulary([LONG, b"abx", b"b", b"<eos>"], special_token_ids=[3], eos_token_ids=[3], name="long")
    return vocab, TokenTrie(vocab)


def test_rows_are_filled_down_the_first_child_chain():
    """From the root, ``a``'s subtree continues ``b``, ``c``, ...: every state on the way gets its
    row, and the walk stops at the end of the chain."""
    _vocab, trie = long_token_trie()
    pool = ExprPool()
    dfa = LazyDfa(pool, parse_regex("[a-h]{0,6}x?", pool))
    first = 1  # the root's first child, ``a``
    fill_rows_down(trie, dfa, first, dfa.initial)
    state = dfa.initial
    for byte in LONG[:6]:
        assert dfa.trans[state, 0] != UNKNOWN
        state = int(dfa.trans[state, byte])
    assert state > 0 and dfa.trans[state, 0] != UNKNOWN  # after 6 bytes: only ``x`` may follow
    assert dfa.trans[state, LONG[6]] == 0  # dead: the chain stopped there


def test_masks_equal_the_twin_with_rows_filled_down():
    vocab, trie = long_token_trie()
    for pattern in ("[a-h]{0,6}x?", "[a-z]*", "ab(cdefgh|x)"):
        compiled = compile_for(Grammar.from_regex(pattern), vocab)
        dfa = compiled._engine.dfa
        mask = np.zeros(compiled._words, dtype=np.uint32)
        fill_dfa_mask(trie, dfa, dfa.initial, mask, np.zeros(trie.max_depth + 1, dtype=np.int32))
        expected = np.zeros(compiled._words, dtype=np.uint32)
        walk_trie_twin(trie, dfa.step, dfa.initial, expected)
        assert np.array_equal(mask, expected), pattern
