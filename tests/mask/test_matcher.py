"""Masks against brute force, rollback, the error model and the bitmask API."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leapgram import (
    Grammar,
    GrammarCompiler,
    Matcher,
    allocate_token_bitmask,
    allowed_tokens,
    apply_token_bitmask,
)
from leapgram._kernels.trie_walk import walk_trie_twin
from leapgram.compiler import token_trie
from tests.helpers.compiling import compile_for
from tests.helpers.masks import REGEXES, check_against_brute_force, mask_set, walk_to


@pytest.mark.parametrize("pattern", REGEXES)
def test_small_vocab_masks_equal_brute_force(small_vocab, pattern):
    rng = np.random.default_rng(1)
    matcher = Matcher(compile_for(Grammar.from_regex(pattern), small_vocab))
    path = walk_to(matcher, small_vocab, rng, 6)
    check_against_brute_force(small_vocab, pattern, path)


@pytest.mark.parametrize("pattern", REGEXES)
def test_byte_vocab_masks_equal_brute_force(byte_vocab, pattern):
    rng = np.random.default_rng(2)
    matcher = Matcher(compile_for(Grammar.from_regex(pattern), byte_vocab))
    check_against_brute_force(byte_vocab, pattern, walk_to(matcher, byte_vocab, rng, 5))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=st.sampled_from(REGEXES), seed=st.integers(0, 10_000), steps=st.integers(0, 8))
def test_rollback_restores_identical_mask(small_vocab, pattern, seed, steps):
    rng = np.random.default_rng(seed)
    matcher = Matcher(compile_for(Grammar.from_regex(pattern), small_vocab))
    before = [matcher.compute_mask().copy()]
    accepting = [matcher.is_accepting()]
    taken = []
    for _ in range(steps):
        got = walk_to(matcher, small_vocab, rng, 1)
        if not got:
            break
        taken += got
        before.append(matcher.compute_mask().copy())
        accepting.append(matcher.is_accepting())
    for depth in range(len(taken), 0, -1):
        matcher.rollback(1)
        assert np.array_equal(matcher.compute_mask(), before[depth - 1])
        assert matcher.is_accepting() == accepting[depth - 1]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=st.sampled_from(REGEXES), seed=st.integers(0, 10_000))
def test_kernel_agrees_with_twin(small_vocab, pattern, seed):
    compiled = compile_for(Grammar.from_regex(pattern), small_vocab)
    matcher = Matcher(compiled)
    walk_to(matcher, small_vocab, np.random.default_rng(seed), 3)
    state = matcher._states[-1]
    expected = np.zeros(compiled._words, dtype=np.uint32)
    walk_trie_twin(token_trie(small_vocab), compiled._engine.dfa.step, state, expected)
    kernel = compiled._state_mask(state)
    assert np.array_equal(kernel, expected)


def test_eos_allowed_exactly_when_accepting(small_vocab):
    eos = small_vocab.eos_token_ids[0]
    matcher = Matcher(compile_for(Grammar.from_regex(r"ab(c)?"), small_vocab))
    assert eos not in mask_set(matcher, small_vocab)
    assert matcher.consume_token(small_vocab.tokens().index(b"ab"))
    assert matcher.is_accepting() and eos in mask_set(matcher, small_vocab)
    assert matcher.consume_token(eos)
    assert matcher.is_terminated() and not matcher.is_accepting()
    assert mask_set(matcher, small_vocab) == {eos}


def test_error_state_and_recovery(small_vocab):
    matcher = Matcher(compile_for(Grammar.from_regex(r"[0-9]+"), small_vocab))
    x = small_vocab.tokens().index(b"x")
    assert not matcher.consume_token(x)
    assert matcher.is_error() and "not allowed" in matcher.error() and "b'x'" in matcher.error()
    assert not matcher.consume_token(small_vocab.tokens().index(b"1")), "stays in error"
    assert mask_set(matcher, small_vocab) == set(small_vocab.eos_token_ids)
    matcher.rollback(0)
    assert not matcher.is_error()
    assert matcher.consume_token(small_vocab.tokens().index(b"12"))


def test_premature_eos_and_special_tokens_are_errors(small_vocab):
    eos = small_vocab.eos_token_ids[0]
    pad = eos + 1
    matcher = Matcher(compile_for(Grammar.from_regex(r"a+"), small_vocab))
    assert not matcher.consume_token(eos) and "EOS" in matcher.error()
    matcher.reset()
    assert not matcher.consume_token(pad) and "special" in matcher.error()
    matcher.reset()
    assert matcher.consume_tokens([0, 0]) and matcher.consume_token(eos)
    assert not matcher.consume_token(0) and "after the end" in matcher.error()


def test_validate_tokens_matches_consuming(small_vocab):
    rng = np.random.default_rng(5)
    for pattern in REGEXES:
        compiled = compile_for(Grammar.from_regex(pattern), small_vocab)
        for _ in range(20):
            draft = rng.integers(0, small_vocab.size, size=6).tolist()
            probe = Matcher(compiled)
            count = probe.validate_tokens(draft)
            assert probe.num_tokens == 0
            stepwise = 0
            for token in draft:
                if not probe.consume_token(token):
                    break
                stepwise += 1
            assert count == stepwise, (pattern, draft)


def test_misuse_raises_type_or_value_error(small_vocab):
    """A wrong type is a TypeError, a wrong value a ValueError, everywhere in the API."""
    matcher = Matcher(compile_for(Grammar.from_regex("a"), small_vocab))
    with pytest.raises(ValueError, match="out of range"):
        matcher.consume_token(small_vocab.size)
    with pytest.raises(TypeError, match="must be an int"):
        matcher.consume_token("a")
    with pytest.raises(TypeError, match="row index must be an int"):
        matcher.fill_next_token_bitmask(allocate_token_bitmask(2, small_vocab.size), 0.5)
    with pytest.raises(TypeError, match="floating point"):
        apply_token_bitmask(np.zeros(small_vocab.size, dtype=np.int64), allocate_token_bitmask(1, small_vocab.size))
    with pytest.raises(TypeError, match="int32"):
        matcher.fill_next_token_bitmask(np.zeros((1, 4), dtype=np.int64))
    with pytest.raises(ValueError, match="shape"):
        matcher.fill_next_token_bitmask(np.zeros((1, 1), dtype=np.int32))
    with pytest.raises(ValueError, match="index"):
        matcher.fill_next_token_bitmask(allocate_token_bitmask(2, small_vocab.size), 2)
    with pytest.raises(ValueError, match="roll back"):
        matcher.rollback(1)
    with pytest.raises(TypeError, match="CompiledGrammar"):
        Matcher("a")
    with pytest.raises(TypeError, match="Grammar"):
        GrammarCompiler(small_vocab).compile("a")
    with pytest.raises(TypeError, match="Vocabulary"):
        GrammarCompiler("vocab")
    with pytest.raises(ValueError, match="cache_size"):
        GrammarCompiler(small_vocab, cache_size=-1)


def test_compiler_cache_is_bounded_and_per_compiler(small_vocab):
    compiler = GrammarCompiler(small_vocab, cache_size=2)
    first = compiler.compile_regex("a")
    assert compiler.compile(Grammar.from_regex("a")) is first
    compiler.compile_regex("b")
    compiler.compile_regex("c")  # evicts "a", the least recently used
    assert compiler.compile_regex("a") is not first
    assert GrammarCompiler(small_vocab).compile_regex("b") is not compiler.compile_regex("b")


def test_deprecated_compile_still_works_and_warns(small_vocab):
    import leapgram

    with pytest.warns(DeprecationWarning, match="GrammarCompiler"):
        compiled = leapgram.compile(Grammar.from_regex("a"), small_vocab)
    assert Matcher(compiled).consume_token(small_vocab.tokens().index(b"a"))


def test_wide_flat_and_strided_bitmasks(small_vocab):
    """Words past the vocabulary are zeroed, a 1-D bitmask is one row, a strided one is refused;
    the cached mask behind a row keeps EOS to the row and is not reached by writes to it."""
    eos = small_vocab.eos_token_ids[0]
    compiled = compile_for(Grammar.from_regex(r"ab(c)?"), small_vocab)
    matcher = Matcher(compiled)
    assert matcher.consume_token(small_vocab.tokens().index(b"ab"))
    exact = matcher.compute_mask()
    assert exact[eos >> 5] & (1 << (eos & 31))
    wide = np.full((2, compiled._words + 3), -1, dtype=np.int32)
    matcher.fill_next_token_bitmask(wide, 1)
    assert np.array_equal(wide[1, : compiled._words], exact) and not wide[1, compiled._words :].any()
    flat = np.zeros(compiled._words, dtype=np.int32)
    matcher.fill_next_token_bitmask(flat)
    assert np.array_equal(flat, exact)
    mask, accepting = compiled._state_mask_and_accepting(matcher._states[-1])
    assert accepting and not mask[eos >> 5] & (1 << (eos & 31))
    assert np.array_equal(mask | compiled._eos_row.view(np.uint32), exact.view(np.uint32))
    flat[:] = 0
    assert np.array_equal(matcher.compute_mask(), exact)
    with pytest.raises(ValueError, match="C-contiguous"):
        matcher.fill_next_token_bitmask(np.zeros((1, 2 * compiled._words), dtype=np.int32)[:, ::2])


def test_batch_bitmask_rows_and_apply(small_vocab):
    compiled = compile_for(Grammar.from_regex(r"[0-9]+"), small_vocab)
    bitmask = allocate_token_bitmask(2, small_vocab.size)
    Matcher(compiled).fill_next_token_bitmask(bitmask, 1)
    assert (bitmask[0] == -1).all()
    digits = {i for i, t in enumerate(small_vocab.tokens()) if t.isdigit() and not small_vocab.is_special(i)}
    assert set(allowed_tokens(bitmask[1], small_vocab.size).tolist()) == digits
    covered = bitmask.shape[1] * 32
    logits = np.zeros((2, covered + 3), dtype=np.float32)
    apply_token_bitmask(logits, bitmask)
    assert np.isfinite(logits[1]).sum() == len(digits)
    assert np.isfinite(logits[0, :covered]).all()
    assert np.isinf(logits[0, covered:]).all(), "columns beyond the bitmask are disallowed"


@pytest.mark.parametrize("pattern", [r'"[a-c1 ]{3,40}"', r"(ab|c){2,30}x", r"[0-9]{0,25}(\.[0-9]{1,20})?"])
def test_masks_inside_long_counted_repeats_equal_brute_force(small_vocab, pattern):
    """Regex masks are walked from the widened DFA state; exact at every position."""
    rng = np.random.default_rng(3)
    matcher = Matcher(compile_for(Grammar.from_regex(pattern), small_vocab))
    path = walk_to(matcher, small_vocab, rng, 30)
    check_against_brute_force(small_vocab, pattern, path)


def test_a_bitmask_checked_once_is_checked_again_when_it_changes(small_vocab):
    """The matcher skips re-checking the bitmask of its last call, but not once its dtype,
    shape or the row index no longer fit."""
    matcher = Matcher(compile_for(Grammar.from_regex("a"), small_vocab))
    bitmask = allocate_token_bitmask(2, small_vocab.size)
    matcher.fill_next_token_bitmask(bitmask, 1)
    matcher.fill_next_token_bitmask(bitmask, 1)
    with pytest.raises(ValueError, match="index"):
        matcher.fill_next_token_bitmask(bitmask, 2)
    bitmask.dtype = np.float32  # same item size, same shape: only the dtype tells
    with pytest.raises(TypeError, match="int32"):
        matcher.fill_next_token_bitmask(bitmask, 0)
    bitmask.dtype = np.int32
    bitmask.shape = (1, -1)
    with pytest.raises(ValueError, match="index"):
        matcher.fill_next_token_bitmask(bitmask, 1)


@pytest.mark.parametrize("grammar", [Grammar.from_regex(r"(ab|a)*c"), Grammar.from_lark('start: ("ab" | "a")* "c"')])
def test_state_key_is_equal_for_the_same_future(byte_vocab, grammar):
    compiled = compile_for(grammar, byte_vocab)

    def after(text: bytes) -> Matcher:
        matcher = Matcher(compiled)
        assert matcher.consume_tokens(list(text))
        return matcher

    assert after(b"aab").state_key() == after(b"aab").state_key()  # two matchers, two chart arenas
    assert after(b"a").state_key() != after(b"ab").state_key()  # "a" may go on with "c" or "b"
    done, failed = after(b"ac"), after(b"a")
    assert done.consume_token(byte_vocab.eos_token_ids[0]) and not failed.consume_token(ord("x"))
    assert done.state_key() == ("terminated",) and failed.state_key() == ("error",)
    hash(after(b"a").state_key())
