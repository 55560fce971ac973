"""The lexer's row writes: slices where the states are numbered in a row, fancy indexing elsewhere."""

from __future__ import annotations

import numpy as np
import pytest

from leapgram.parser.lexer_blocks import write_rows


@pytest.mark.parametrize("states, sources", [
    ([5], [0]),  # one row
    ([7, 10, 11, 12], [0, 1, 2, 3]),  # a literal's chain: new states in a row
    ([3, 20, 21], [0, 2, 3]),  # a template's new states, their rows in order from the third
    ([9, 4, 6, 5], [0, 1, 2, 3]),  # existing states out of order
    ([2, 30, 31], [0, 3, 1]),  # states in a row, their rows not
])
def test_rows_written_as_given(states, sources):
    rng = np.random.default_rng(len(states))
    rows = rng.integers(0, 100, size=(4, 256), dtype=np.int32)
    trans = np.full((40, 256), -1, dtype=np.int32)
    write_rows(trans, states, sources, rows)
    expected = np.full((40, 256), -1, dtype=np.int32)
    for state, source in zip(states, sources):
        expected[state] = rows[source]
    assert np.array_equal(trans, expected)
