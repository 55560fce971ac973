"""``leapgram.warm_up``: loads the kernels, then a vocabulary's tables."""

from __future__ import annotations

import leapgram
from leapgram.warmup import _greedy_tokens, _token_ids, warm_up


def test_warm_up_loads_kernels_then_a_vocabulary(small_vocab):
    from leapgram.compiler import _TRIES

    timings = warm_up()
    assert set(timings) == {"kernels"} and timings["kernels"] >= 0
    fresh = leapgram.Vocabulary(small_vocab.tokens(), special_token_ids=sorted(small_vocab.special_token_ids),
                                eos_token_ids=small_vocab.eos_token_ids)
    assert fresh not in _TRIES
    timings = warm_up(fresh)
    assert set(timings) == {"kernels", "vocabulary"}
    assert fresh in _TRIES  # the vocabulary's trie is built
    compiled = leapgram.GrammarCompiler(small_vocab).compile_regex("ab+c")
    assert leapgram.Matcher(compiled).compute_mask().any()


def test_warm_up_tokens_are_the_longest_tokens_of_the_text(small_vocab):
    tokens = _greedy_tokens(_token_ids(small_vocab, (b"x", b'{"abc": 123}')), b'{"abc": 123}')
    assert small_vocab.decode(tokens) == b'{"abc": 123}'
    assert [small_vocab.token_bytes(t) for t in tokens][:3] == [b'{"', b"abc", b'":']
