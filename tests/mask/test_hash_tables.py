"""The kernels' open-addressing tables: lookups survive rehashing; inserts stop at half load."""

from __future__ import annotations

import numpy as np

from leapgram._kernels.tables import (
    ABSENT,
    EMPTY_KEY,
    table_get_kernel,
    table_put_kernel,
    table_rehash_kernel,
)


def empty(size: int) -> tuple[np.ndarray, np.ndarray]:
    return np.full(size, EMPTY_KEY, dtype=np.int64), np.zeros(size, dtype=np.int64)


def test_entries_survive_rehashing():
    keys, values = empty(4)
    counts = np.zeros(1, dtype=np.int64)
    rng = np.random.default_rng(0)
    entries = {(int(c) << 32) | int(s): int(v) for c, s, v in rng.integers(0, 50_000, size=(3000, 3))}
    for key, value in entries.items():
        while not table_put_kernel(keys, values, counts, 0, np.int64(key), np.int64(value)):
            new_keys, new_values = empty(keys.shape[0] * 2)
            assert table_rehash_kernel(keys, values, new_keys, new_values) == counts[0]
            keys, values = new_keys, new_values
    assert counts[0] == len(entries)
    assert keys.shape[0] >= 2 * len(entries)
    for key, value in entries.items():
        assert table_get_kernel(keys, values, np.int64(key)) == value
    assert table_get_kernel(keys, values, np.int64((7 << 32) | 123_456)) == ABSENT


def test_put_refuses_past_half_load_and_overwrites_in_place():
    keys, values = empty(8)
    counts = np.zeros(2, dtype=np.int64)
    assert all(table_put_kernel(keys, values, counts, 1, np.int64(k), np.int64(k + 1)) for k in range(4))
    assert not table_put_kernel(keys, values, counts, 1, np.int64(99), np.int64(1))
    assert table_put_kernel(keys, values, counts, 1, np.int64(2), np.int64(42))
    assert counts[1] == 4 and table_get_kernel(keys, values, np.int64(2)) == 42
    assert table_get_kernel(keys, values, np.int64(99)) == ABSENT
