"""Bitmask rows by content: a hash of a row's words and an equality test (``RowStore``).

The hash needs only to spread distinct rows apart; equal hashes are always confirmed by
:func:`rows_equal_kernel`, so a collision costs sharing, never a wrong mask. Each pair of words is
multiplied by an odd number of its own position and mixed, and the results summed: no dependency
from word to word, so Llama-3's 4,008 words take about 0.5 µs, and the twin is a few numpy calls.
"""

from __future__ import annotations

import numpy as np

from . import njit

_MULTIPLIER = np.uint64(0xBF58476D1CE4E5B9)  # splitmix64's first multiplier


@njit(cache=True, nogil=True)
def row_hash_kernel(words):
    """A 64-bit hash of ``words`` (int32, one dimension), read in pairs as uint64 (the
    first word of a pair is the low half)."""
    count = words.shape[0]
    acc = np.uint64(count)
    # each pair composed by hand, not ``.view(np.uint64)``: numba implements ``view`` in
    # numba.np.arrayobj, and loading a cached kernel that calls it imports that module (with its
    # string support, about 40 ms of a fresh process's first request)
    for i in range(count // 2):
        pair = np.uint64(np.uint32(words[2 * i])) | (np.uint64(np.uint32(words[2 * i + 1])) << np.uint64(32))
        x = pair * (_MULTIPLIER + np.uint64(2 * i))  # odd, and another for each position
        acc += x ^ (x >> np.uint64(29))
    if count % 2:
        x = np.uint64(np.uint32(words[count - 1])) * _MULTIPLIER
        acc += x ^ (x >> np.uint64(29))
    return acc


def row_hash_twin(words: np.ndarray) -> int:
    """:func:`row_hash_kernel` in numpy (used while numba is disabled)."""
    count = words.shape[0]
    halves = words[: count - count % 2].view(np.uint32).astype(np.uint64)
    pairs = halves[0::2] | (halves[1::2] << np.uint64(32))  # the low word first, on any byte order
    x = pairs * (_MULTIPLIER + np.arange(0, 2 * pairs.shape[0], 2, dtype=np.uint64))
    if count % 2:  # the last word alone (arrays wrap silently, numpy scalars warn)
        x = np.concatenate((x, words[count - 1 :].view(np.uint32).astype(np.uint64) * _MULTIPLIER))
    return (count + int((x ^ (x >> np.uint64(29))).sum(dtype=np.uint64))) % 2**64


@njit(cache=True, nogil=True)
def rows_equal_kernel(a, b):
    """Whether the int32 rows ``a`` and ``b`` hold the same words (no early exit: the loop
    vectorizes, and rows compared are almost always equal)."""
    if a.shape[0] != b.shape[0]:
        return False
    diff = np.int32(0)
    for i in range(a.shape[0]):
        diff |= a[i] ^ b[i]
    return diff == 0


def rows_equal_twin(a: np.ndarray, b: np.ndarray) -> bool:
    """:func:`rows_equal_kernel` in numpy."""
    return bool(np.array_equal(a, b))
