"""Token bitmasks applied to torch tensors, without a Python loop over the vocabulary."""

from __future__ import annotations

import numpy as np
import torch

from ..errors import checked_count

_SHIFTS: dict[torch.device, torch.Tensor] = {}


def _shifts(device: torch.device) -> torch.Tensor:
    shifts = _SHIFTS.get(device)
    if shifts is None:
        shifts = _SHIFTS[device] = torch.arange(32, dtype=torch.int32, device=device)
    return shifts


def bitmask_to_bool(bitmask, vocab_size: int, device: torch.device | str | None = None) -> torch.Tensor:
    """A ``(batch, words)`` int32 bitmask (numpy or torch) as a ``(batch, vocab_size)`` bool tensor.

    Bit ``t % 32`` of word ``t // 32`` is token ``t``; tokens beyond the bitmask's ``words * 32``
    come out disallowed. A wrong bitmask or size is a ``TypeError`` or ``ValueError``.
    """
    vocab_size = checked_count(vocab_size, "vocab_size", 0)
    words = torch.atleast_2d(_checked_words(bitmask))
    if device is not None:
        words = _moved(words, device)
    bits = (words.unsqueeze(-1) >> _shifts(words.device)) & 1
    allowed = bits.reshape(words.shape[0], -1).bool()
    if allowed.shape[1] >= vocab_size:
        return allowed[:, :vocab_size]
    pad = torch.zeros(words.shape[0], vocab_size - allowed.shape[1], dtype=torch.bool, device=words.device)
    return torch.cat([allowed, pad], dim=1)


def _checked_words(bitmask) -> torch.Tensor:
    """``bitmask`` (numpy or torch) as an int32 tensor of 1 or 2 dimensions, else a misuse error."""
    if not isinstance(bitmask, torch.Tensor):
        try:
            bitmask = torch.as_tensor(np.asarray(bitmask))
        except (TypeError, ValueError, RuntimeError) as err:
            raise TypeError(f"bitmask must be an int32 array or tensor, not {type(bitmask).__name__} ({err})") from None
    if bitmask.dtype != torch.int32:
        raise TypeError(f"bitmask dtype must be int32, got {bitmask.dtype}")
    if bitmask.dim() not in (1, 2):
        raise ValueError(f"bitmask must have shape (words,) or (batch, words), got {tuple(bitmask.shape)}")
    return bitmask


def _moved(words: torch.Tensor, device: torch.device | str) -> torch.Tensor:
    """``words`` on ``device``; a device torch cannot name or reach is a ``ValueError``."""
    try:
        return words.to(device)
    except (RuntimeError, AssertionError, TypeError) as err:  # torch asserts for a missing CUDA build
        raise ValueError(f"cannot move the bitmask to device {device!r}: {err}") from None


def apply_token_bitmask_torch(logits: torch.Tensor, bitmask) -> torch.Tensor:
    """Set the logits of disallowed tokens to ``-inf`` in place and return ``logits``.

    ``logits`` is ``(vocab,)`` or ``(batch, vocab)``; ``bitmask`` is one int32 row or
    ``(batch, words)``, numpy or torch. Logit columns beyond the bitmask's tokens are disallowed.
    """
    if not isinstance(logits, torch.Tensor):
        raise TypeError(f"logits must be a torch tensor, not {type(logits).__name__}")
    if not logits.is_floating_point():
        raise TypeError(f"logits must be floating point (a masked logit becomes -inf), not {logits.dtype}")
    if logits.dim() not in (1, 2):
        raise ValueError(f"logits must have shape (vocab,) or (batch, vocab), got {tuple(logits.shape)}")
    rows = logits if logits.dim() == 2 else logits.view(1, -1)
    allowed = bitmask_to_bool(bitmask, rows.shape[1], device=rows.device)
    if allowed.shape[0] != rows.shape[0]:
        raise ValueError(f"bitmask has {allowed.shape[0]} rows, logits {rows.shape[0]}")
    rows.masked_fill_(~allowed, float("-inf"))
    return logits
