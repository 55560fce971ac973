"""Speculative decoding: validate_tokens, draft masks and forks (rollback to any depth:
tests/mask/test_fast_forward.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leapgram import Grammar, Matcher
from tests.helpers.cfg_grammars import GRAMMARS
from tests.helpers.compiling import compile_for
from tests.helpers.masks import REGEXES, walk_to

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
grammars = st.one_of(st.tuples(st.just("regex"), st.sampled_from(REGEXES)),
                     st.tuples(st.just("cfg"), st.sampled_from(sorted(GRAMMARS))))


def make_matcher(vocab, grammar, prefix=b"") -> Matcher:
    kind, name = grammar
    made = Grammar.from_regex(name) if kind == "regex" else GRAMMARS[name]()
    return Matcher(compile_for(made, vocab), required_prefix=prefix)


def draft(matcher: Matcher, vocab, rng: np.random.Generator, size: int) -> list[int]:
    """Mostly allowed tokens (a random walk), sometimes a random one, then rolled back."""
    fork = matcher.fork()
    out = []
    for _ in range(size):
        if rng.random() < 0.2:
            out.append(int(rng.integers(vocab.size)))
            continue
        taken = walk_to(fork, vocab, rng, 1)
        out.append(taken[0] if taken else int(rng.integers(vocab.size)))
    return out


@SETTINGS
@given(grammar=grammars, seed=st.integers(0, 10_000), prefix=st.sampled_from([b"", b"a", b" a"]))
def test_validate_agrees_with_consuming_one_by_one(small_vocab, grammar, seed, prefix):
    matcher = make_matcher(small_vocab, grammar, prefix)
    rng = np.random.default_rng(seed)
    walk_to(matcher, small_vocab, rng, int(rng.integers(0, 4)))
    ids = draft(matcher, small_vocab, rng, 6)
    count = matcher.validate_tokens(ids)
    before = matcher.num_tokens
    consumed = 0
    for token in ids:
        if not matcher.consume_token(token):
            break
        consumed += 1
    assert count == consumed
    matcher.rollback(matcher.num_tokens - before)
    assert not matcher.is_error()


@SETTINGS
@given(grammar=grammars, seed=st.integers(0, 10_000))
def test_draft_masks_equal_step_by_step(small_vocab, grammar, seed):
    matcher = make_matcher(small_vocab, grammar)
    rng = np.random.default_rng(seed)
    walk_to(matcher, small_vocab, rng, int(rng.integers(0, 3)))
    ids = draft(matcher, small_vocab, rng, 5)
    start = matcher.num_tokens
    masks = matcher.draft_masks(ids)
    assert masks.shape == (len(ids) + 1, matcher.compiled._words) and masks.dtype == np.int32
    assert matcher.num_tokens == start and not matcher.is_error()
    valid = matcher.validate_tokens(ids)
    for row in range(len(ids) + 1):
        if row <= valid:
            assert np.array_equal(masks[row], matcher.compute_mask())
            if row < len(ids):
                matcher.consume_token(ids[row])
        else:
            assert not masks[row].any()
    matcher.rollback(matcher.num_tokens - start)


@SETTINGS
@given(grammar=grammars, seed=st.integers(0, 10_000), share=st.booleans())
def test_forks_go_their_own_way(small_vocab, grammar, seed, share):
    matcher = make_matcher(small_vocab, grammar)
    rng = np.random.default_rng(seed)
    walk_to(matcher, small_vocab, rng, 2)
    mask = matcher.compute_mask().copy()
    fork = matcher.fork(share_charts=share)
    assert np.array_equal(fork.compute_mask(), mask) and fork.num_tokens == matcher.num_tokens
    walk_to(fork, small_vocab, rng, 3)
    assert np.array_equal(matcher.compute_mask(), mask)
    if grammar[0] == "cfg":
        assert (fork._states[0][0] is matcher._states[0][0]) == share


def test_draft_masks_after_eos_and_misuse(byte_vocab):
    matcher = Matcher(compile_for(Grammar.from_regex("ab"), byte_vocab))
    masks = matcher.draft_masks([ord("a"), ord("b"), 256, ord("a")])
    assert [np.flatnonzero(np.unpackbits(m.view(np.uint8), bitorder="little")).tolist() for m in masks] == [
        [ord("a")], [ord("b")], [256], [256], []]
    with pytest.raises(ValueError, match="out of range"):
        matcher.draft_masks([1, 10_000])
