"""Masks over the real Llama-3 vocabulary: full masks against brute force at random states, and
sub-vocabularies of random real tokens."""

from __future__ import annotations

import numpy as np
import pytest

from leapgram import Grammar, Matcher, Vocabulary, allowed_tokens
from tests.helpers.compiling import compile_for
from tests.helpers.masks import REGEXES, check_against_brute_force, walk_to

REAL_REGEXES = REGEXES + [r"\d{4}-\d{2}-\d{2}", r"[A-Za-z ]{1,12}", r"(true|false|null)", r"\s*\{\s*\"id\"\s*:\s*-?\d+\s*\}"]


def sample_vocab(vocab: Vocabulary, size: int, seed: int) -> Vocabulary:
    rng = np.random.default_rng(seed)
    ordinary = [t for t in range(vocab.size) if not vocab.is_special(t)]
    ids = rng.choice(ordinary, size=size, replace=False)
    tokens = [vocab.token_bytes(int(t)) for t in ids] + [b"<eos>"]
    return Vocabulary(tokens, special_token_ids=[size], eos_token_ids=[size])


@pytest.mark.parametrize("pattern", REAL_REGEXES)
def test_sampled_llama3_masks_equal_brute_force(llama3_vocab, pattern):
    vocab = sample_vocab(llama3_vocab, 600, seed=len(pattern))
    rng = np.random.default_rng(3)
    matcher = Matcher(compile_for(Grammar.from_regex(pattern), vocab))
    check_against_brute_force(vocab, pattern, walk_to(matcher, vocab, rng, 4))


@pytest.mark.parametrize("pattern", REAL_REGEXES)
def test_full_llama3_mask_bits_agree_with_consuming(llama3_vocab, pattern):
    rng = np.random.default_rng(4)
    vocab = llama3_vocab
    matcher = Matcher(compile_for(Grammar.from_regex(pattern), vocab))
    walk_to(matcher, vocab, rng, 3)
    allowed = set(allowed_tokens(matcher.compute_mask(), vocab.size).tolist())
    probes = set(rng.choice(vocab.size, size=1500, replace=False).tolist()) | set(list(allowed)[:500])
    for token in probes:
        ok = matcher.consume_token(token)
        assert ok == (token in allowed), (pattern, token, vocab.token_bytes(token))
        matcher.rollback(1 if ok else 0)
