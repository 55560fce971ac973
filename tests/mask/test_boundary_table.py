"""The kernel's hash table of lexeme-boundary steps: lookups survive resizes; a full table empties."""

from __future__ import annotations

import numpy as np

from leapgram._kernels.cfg_walk import ABSENT
from leapgram.mask.engines import BoundaryTable


def test_entries_survive_resizes():
    table = BoundaryTable(capacity=4)
    rng = np.random.default_rng(0)
    keys = {(int(c) << 32) | int(s): int(v) for c, s, v in rng.integers(0, 50_000, size=(3000, 3))}
    for key, value in keys.items():
        table.put(key, value)
    assert table.count == len(keys)
    assert table.keys.shape[0] >= 2 * len(keys)
    for key, value in keys.items():
        assert table.get(key) == value
    assert table.get((7 << 32) | 123_456) == ABSENT


def test_full_table_is_emptied_not_grown():
    table = BoundaryTable(capacity=8, max_entries=8)
    for key in range(40):
        table.put(key, key + 1)
    assert table.keys.shape[0] <= 32
    assert table.get(39) == 40
