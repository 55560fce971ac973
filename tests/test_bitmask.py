"""The bitmask helpers: a wrong array or size is a TypeError (wrong type or dtype) or a ValueError
(wrong shape or size) that says what was expected, never numpy's own error or a silent result."""

from __future__ import annotations

import numpy as np
import pytest

import leapgram

ROW = np.zeros(2, np.int32)  # 64 tokens
LOGITS = np.zeros((1, 40), np.float32)


def _readonly_logits() -> np.ndarray:
    logits = LOGITS.copy()
    logits.setflags(write=False)
    return logits


MISUSE = [
    ("allocate float batch", lambda: leapgram.allocate_token_bitmask(1.5, 10), TypeError, "batch must be an int"),
    ("allocate None vocab", lambda: leapgram.allocate_token_bitmask(1, None), TypeError, "vocab_size must be an int"),
    ("allocate zero batch", lambda: leapgram.allocate_token_bitmask(0, 10), ValueError, "batch must be >= 1"),
    ("allocate zero vocab", lambda: leapgram.allocate_token_bitmask(1, 0), ValueError, "vocab_size must be >= 1"),
    ("unpack int64", lambda: leapgram.unpack_bitmask(ROW.astype(np.int64), 40), TypeError, "dtype must be int32"),
    ("unpack a list", lambda: leapgram.unpack_bitmask([0, 0], 40), TypeError, "dtype must be int32"),
    ("unpack None", lambda: leapgram.unpack_bitmask(None, 40), TypeError, "int32 array, not NoneType"),
    ("unpack 2-D", lambda: leapgram.unpack_bitmask(np.zeros((2, 2), np.int32), 40), ValueError,
     r"shape \(words,\)"),
    ("unpack vocab beyond the row", lambda: leapgram.unpack_bitmask(ROW, 65), ValueError, "holds 64 tokens"),
    ("unpack negative vocab", lambda: leapgram.unpack_bitmask(ROW, -1), ValueError, "vocab_size must be >= 0"),
    ("allowed float vocab", lambda: leapgram.allowed_tokens(ROW, 3.5), TypeError, "vocab_size must be an int"),
    ("apply int64 bitmask", lambda: leapgram.apply_token_bitmask(LOGITS.copy(), np.zeros((1, 2), np.int64)),
     TypeError, "dtype must be int32"),
    ("apply 3-D bitmask", lambda: leapgram.apply_token_bitmask(LOGITS.copy(), np.zeros((1, 1, 2), np.int32)),
     ValueError, r"shape \(words,\) or \(batch, words\)"),
    ("apply rows differ", lambda: leapgram.apply_token_bitmask(np.zeros((2, 40), np.float32), ROW), ValueError,
     "bitmask has 1 rows, logits 2"),
    ("apply 3-D logits", lambda: leapgram.apply_token_bitmask(np.zeros((1, 1, 40), np.float32), ROW), ValueError,
     r"shape \(vocab,\) or \(batch, vocab\)"),
    ("apply integer logits", lambda: leapgram.apply_token_bitmask(np.zeros(40, np.int64), ROW), TypeError,
     "floating point"),
    ("apply list logits", lambda: leapgram.apply_token_bitmask([0.0] * 40, ROW), TypeError, "numpy array or torch"),
    ("apply read-only logits", lambda: leapgram.apply_token_bitmask(_readonly_logits(), ROW), ValueError,
     "read-only"),
]


@pytest.mark.parametrize(("thunk", "error", "message"), [pytest.param(t, e, m, id=n) for n, t, e, m in MISUSE])
def test_misuse_says_what_was_expected(thunk, error, message):
    with pytest.raises(error, match=message):
        thunk()


def test_right_arrays_still_work():
    row = np.zeros(2, np.int32)
    row[0] = 0b101
    assert leapgram.allowed_tokens(row, 64).tolist() == [0, 2]
    assert leapgram.unpack_bitmask(row, 0).shape == (0,)
    logits = np.zeros(40, np.float32)
    assert leapgram.apply_token_bitmask(logits, row) is logits
    assert np.isfinite(logits).nonzero()[0].tolist() == [0, 2]
    assert leapgram.allocate_token_bitmask(np.int64(2), 33).shape == (2, 2)
