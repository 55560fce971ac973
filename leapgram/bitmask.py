"""Token bitmasks: int32 words, bit ``t % 32`` of word ``t // 32`` set when token ``t`` is allowed.

The layout vLLM, SGLang, XGrammar and llguidance use, shape ``(batch, ceil(vocab_size / 32))``.
"""

from __future__ import annotations

import numpy as np


def bitmask_words(vocab_size: int) -> int:
    """Words needed for one row of a bitmask over ``vocab_size`` tokens."""
    return (vocab_size + 31) // 32


def allocate_token_bitmask(batch: int, vocab_size: int) -> np.ndarray:
    """A ``(batch, ceil(vocab_size / 32))`` int32 bitmask with every token allowed."""
    if batch < 1 or vocab_size < 1:
        raise ValueError(f"batch and vocab_size must be positive, got {batch} and {vocab_size}")
    return np.full((batch, bitmask_words(vocab_size)), -1, dtype=np.int32)


def unpack_bitmask(row: np.ndarray, vocab_size: int) -> np.ndarray:
    """One bitmask row as a boolean array of ``vocab_size`` entries."""
    words = np.ascontiguousarray(row, dtype=np.int32).astype("<i4", copy=False)
    return np.unpackbits(words.view(np.uint8), bitorder="little")[:vocab_size].astype(bool)


def allowed_tokens(row: np.ndarray, vocab_size: int) -> np.ndarray:
    """The token ids allowed by one bitmask row, ascending."""
    return np.flatnonzero(unpack_bitmask(row, vocab_size))


def apply_token_bitmask(logits, bitmask: np.ndarray):
    """Set the logits of disallowed tokens to ``-inf`` in place and return ``logits``.

    ``logits`` is ``(vocab,)`` or ``(batch, vocab)`` (numpy, or a torch tensor when torch is
    installed); ``bitmask`` is one row or ``(batch, words)``. Logit columns beyond the bitmask's
    tokens (padded vocabularies) are disallowed.
    """
    if type(logits).__module__.startswith("torch"):
        from .integrations.torch import apply_token_bitmask_torch

        return apply_token_bitmask_torch(logits, bitmask)
    if not isinstance(logits, np.ndarray):
        raise TypeError(f"logits must be a numpy array or torch tensor, not {type(logits).__name__}")
    if not np.issubdtype(logits.dtype, np.floating):
        raise TypeError(f"logits must be floating point (a masked logit becomes -inf), not {logits.dtype}")
    mask2d = np.atleast_2d(np.asarray(bitmask))
    rows = np.atleast_2d(logits)
    if mask2d.dtype != np.int32 or mask2d.shape[0] != rows.shape[0]:
        raise ValueError(f"bitmask must be int32 with {rows.shape[0]} rows, got {mask2d.dtype} {mask2d.shape}")
    vocab = rows.shape[1]
    allowed = np.zeros(rows.shape, dtype=bool)
    for b in range(rows.shape[0]):
        bits = unpack_bitmask(mask2d[b], min(vocab, mask2d.shape[1] * 32))
        allowed[b, : bits.shape[0]] = bits
    rows[~allowed] = -np.inf
    return logits
