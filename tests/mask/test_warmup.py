"""``leapgram.warm_up``: loads the kernels, then a vocabulary's tables."""

from __future__ import annotations

import leapgram
from leapgram.warmup import _greedy_tokens, warm_up


def test_warm_up_loads_kernels_then_a_vocabulary(small_vocab):
    timings = warm_up()
    assert set(timings) == {"kernels"} and timings["kernels"] >= 0
    timings = warm_up(small_vocab)
    assert set(timings) == {"kernels", "vocabulary"}
    compiled = leapgram.GrammarCompiler(small_vocab).compile_regex("ab+c")
    assert leapgram.Matcher(compiled).compute_mask().any()


def test_warm_up_tokens_are_the_longest_tokens_of_the_text(small_vocab):
    tokens = _greedy_tokens(small_vocab, b'{"abc": 123}')
    assert small_vocab.decode(tokens) == b'{"abc": 123}'
    assert [small_vocab.token_bytes(t) for t in tokens][:3] == [b'{"', b"abc", b'":']
