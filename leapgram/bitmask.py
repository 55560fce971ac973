"""Token bitmasks: int32 words, bit ``t % 32`` of word ``t // 32`` set when token ``t`` is allowed.

The layout vLLM, SGLang, XGrammar and llguidance use, shape ``(batch, ceil(vocab_size / 32))``.
Misuse (an array of the wrong type, dtype, shape or size) raises ``TypeError`` or ``ValueError``
with what was expected, as everywhere in the API (docs/design/errors.md).
"""

from __future__ import annotations

import numpy as np

from .errors import checked_count


def bitmask_words(vocab_size: int) -> int:
    """Words needed for one row of a bitmask over ``vocab_size`` tokens."""
    return (vocab_size + 31) // 32


def allocate_token_bitmask(batch: int, vocab_size: int) -> np.ndarray:
    """A ``(batch, ceil(vocab_size / 32))`` int32 bitmask with every token allowed."""
    batch = checked_count(batch, "batch", 1)
    vocab_size = checked_count(vocab_size, "vocab_size", 1)
    return np.full((batch, bitmask_words(vocab_size)), -1, dtype=np.int32)


def _checked_words(bitmask, ndims: tuple[int, ...], what: str) -> np.ndarray:
    """``bitmask`` as a numpy int32 array of one of ``ndims`` dimensions, else a misuse error."""
    try:
        words = np.asarray(bitmask)
    except (TypeError, ValueError, RuntimeError) as err:
        raise TypeError(f"{what} must be an int32 array, not {type(bitmask).__name__} ({err})") from None
    if words.dtype == object:
        raise TypeError(f"{what} must be an int32 array, not {type(bitmask).__name__}")
    if words.dtype != np.int32:
        raise TypeError(f"{what} dtype must be int32, got {words.dtype}; "
                        "allocate one with leapgram.allocate_token_bitmask")
    if words.ndim not in ndims:
        shapes = " or ".join(("(words,)", "(batch, words)")[n - 1] for n in ndims)
        raise ValueError(f"{what} must have shape {shapes}, got {words.shape}")
    return words


def unpack_bitmask(row: np.ndarray, vocab_size: int) -> np.ndarray:
    """One bitmask row (int32, ``(words,)``) as a boolean array of ``vocab_size`` entries."""
    words = _checked_words(row, (1,), "a bitmask row")
    vocab_size = checked_count(vocab_size, "vocab_size", 0)
    if vocab_size > 32 * words.shape[0]:
        raise ValueError(f"a row of {words.shape[0]} words holds {32 * words.shape[0]} tokens, "
                         f"not vocab_size={vocab_size}")
    words = np.ascontiguousarray(words).astype("<i4", copy=False)
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
    rows = _checked_logits(logits)
    mask2d = np.atleast_2d(_checked_words(bitmask, (1, 2), "bitmask"))
    if mask2d.shape[0] != rows.shape[0]:
        raise ValueError(f"bitmask has {mask2d.shape[0]} rows, logits {rows.shape[0]}")
    vocab = rows.shape[1]
    allowed = np.zeros(rows.shape, dtype=bool)
    for b in range(rows.shape[0]):
        bits = unpack_bitmask(mask2d[b], min(vocab, mask2d.shape[1] * 32))
        allowed[b, : bits.shape[0]] = bits
    rows[~allowed] = -np.inf
    return logits


def _checked_logits(logits) -> np.ndarray:
    """``logits`` as a writeable ``(batch, vocab)`` view, else a misuse error."""
    if not isinstance(logits, np.ndarray):
        raise TypeError(f"logits must be a numpy array or torch tensor, not {type(logits).__name__}")
    if not np.issubdtype(logits.dtype, np.floating):
        raise TypeError(f"logits must be floating point (a masked logit becomes -inf), not {logits.dtype}")
    if logits.ndim not in (1, 2):
        raise ValueError(f"logits must have shape (vocab,) or (batch, vocab), got {logits.shape}")
    if not logits.flags.writeable:
        raise ValueError("logits are read-only (apply_token_bitmask writes -inf in place)")
    return np.atleast_2d(logits)
