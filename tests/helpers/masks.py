"""Brute-force reference and random walks shared by the mask tests."""

from __future__ import annotations

import numpy as np

from leapgram import Grammar, Matcher, Vocabulary, allowed_tokens
from tests.helpers.compiling import compile_for

REGEXES = [
    r"[0-9]+",
    r"(ab|c)*1?",
    r'"[^"\\]*"',
    r".*",
    r"\{\"[a-z]+\": [0-9]{1,3}\}",
    r"(é|☃)+x?",
    r"[^a]{2,4}",
    r" *(abc|ab|a)\n?",
    r"(\\n|[a-c])*",
    r"",
]


def brute_force_allowed(matcher: Matcher, vocab: Vocabulary) -> set[int]:
    allowed = set()
    for token in range(vocab.size):
        if matcher.consume_token(token):
            allowed.add(token)
            matcher.rollback(1)
        else:
            matcher.rollback(0)
    return allowed


def mask_set(matcher: Matcher, vocab: Vocabulary) -> set[int]:
    return set(allowed_tokens(matcher.compute_mask(), vocab.size).tolist())


def check_against_brute_force(vocab: Vocabulary, pattern: str, tokens: list[int]) -> None:
    matcher = Matcher(compile_for(Grammar.from_regex(pattern), vocab))
    for token in tokens:
        expected = brute_force_allowed(matcher, vocab)
        assert mask_set(matcher, vocab) == expected, (pattern, matcher.num_tokens)
        if not matcher.consume_token(token):
            break
    assert mask_set(matcher, vocab) == brute_force_allowed(matcher, vocab)


def walk_to(matcher: Matcher, vocab: Vocabulary, rng: np.random.Generator, steps: int) -> list[int]:
    """Consume up to ``steps`` random allowed tokens; returns them."""
    taken = []
    for _ in range(steps):
        allowed = allowed_tokens(matcher.compute_mask(), vocab.size)
        allowed = [t for t in allowed.tolist() if t not in vocab.eos_token_ids]
        if not allowed:
            break
        token = int(rng.choice(allowed))
        assert matcher.consume_token(token), matcher.error()
        taken.append(token)
    return taken


def masks_along(compiled, text: bytes) -> list[np.ndarray]:
    """The masks of a new matcher before each byte of ``text`` (a byte vocabulary) and after the last."""
    matcher = Matcher(compiled)
    masks = [matcher.compute_mask()]
    for byte in text:
        assert matcher.consume_token(byte)
        masks.append(matcher.compute_mask())
    return masks
