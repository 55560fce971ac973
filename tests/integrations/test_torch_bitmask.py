"""Bitmasks applied to torch tensors agree with the numpy ``apply_token_bitmask`` (no model needed)."""

from __future__ import annotations

import numpy as np
import pytest

import leapgram

torch = pytest.importorskip("torch", reason="needs torch: pip install 'leapgram[torch]'")
from leapgram.integrations.torch import apply_token_bitmask_torch, bitmask_to_bool


def random_bitmask(rng: np.random.Generator, batch: int, vocab_size: int, density: float) -> np.ndarray:
    mask = leapgram.allocate_token_bitmask(batch, vocab_size)
    mask[:] = 0
    for row in range(batch):
        for token in np.flatnonzero(rng.random(vocab_size) < density):
            mask[row, token >> 5] |= np.int32(np.uint32(1 << (token & 31)).view(np.int32))
    return mask


@pytest.mark.parametrize("vocab_size", [1, 31, 32, 33, 100, 1000, 49152])
@pytest.mark.parametrize("density", [0.0, 0.01, 0.5, 1.0])
def test_torch_matches_numpy(vocab_size: int, density: float) -> None:
    rng = np.random.default_rng(vocab_size)
    mask = random_bitmask(rng, 3, vocab_size, density)
    logits = rng.standard_normal((3, vocab_size)).astype(np.float32)
    expected = leapgram.apply_token_bitmask(logits.copy(), mask)
    got = apply_token_bitmask_torch(torch.from_numpy(logits.copy()), mask)
    np.testing.assert_array_equal(got.numpy(), expected)


def test_sign_bit_tokens() -> None:
    """Token 31 of each word is the int32 sign bit: the shift must not smear it."""
    mask = np.zeros((1, 2), dtype=np.int32)
    mask[0, 0] = np.int32(-(2**31))
    allowed = bitmask_to_bool(mask, 64)
    assert torch.nonzero(allowed[0]).flatten().tolist() == [31]


def test_wider_logits_are_disallowed_and_one_row_works() -> None:
    mask = leapgram.allocate_token_bitmask(1, 40)[0]
    logits = torch.zeros(70)
    apply_token_bitmask_torch(logits, mask)
    assert torch.isfinite(logits[:64]).all() and torch.isinf(logits[64:]).all()


def test_dispatch_from_public_apply() -> None:
    mask = np.zeros((1, 1), dtype=np.int32)
    mask[0, 0] = 0b101
    logits = torch.zeros(1, 5)
    assert leapgram.apply_token_bitmask(logits, mask) is logits
    assert torch.isfinite(logits[0]).tolist() == [True, False, True, False, False]


def test_torch_bitmask_input_and_errors() -> None:
    words = torch.tensor([[0b11]], dtype=torch.int32)
    assert bitmask_to_bool(words, 3).tolist() == [[True, True, False]]
    with pytest.raises(ValueError, match="rows"):
        apply_token_bitmask_torch(torch.zeros(2, 5), np.zeros((3, 1), dtype=np.int32))


ROW = np.zeros((1, 2), dtype=np.int32)


@pytest.mark.parametrize(("thunk", "error", "message"), [
    pytest.param(lambda: bitmask_to_bool(np.zeros((1, 1), dtype=np.int64), 3), TypeError, "int32", id="int64"),
    pytest.param(lambda: bitmask_to_bool(torch.zeros(1, 2), 3), TypeError, "int32", id="float tensor"),
    pytest.param(lambda: bitmask_to_bool(None, 3), TypeError, "int32 array or tensor", id="None"),
    pytest.param(lambda: bitmask_to_bool(np.zeros((1, 1, 2), np.int32), 3), ValueError, "shape", id="3-D"),
    pytest.param(lambda: bitmask_to_bool(ROW, -1), ValueError, "vocab_size must be >= 0", id="negative vocab"),
    pytest.param(lambda: bitmask_to_bool(ROW, 2.5), TypeError, "vocab_size must be an int", id="float vocab"),
    pytest.param(lambda: bitmask_to_bool(ROW, 3, device="no-such-device"), ValueError, "device", id="device"),
    pytest.param(lambda: apply_token_bitmask_torch(np.zeros((1, 40), np.float32), ROW), TypeError, "torch tensor",
                 id="numpy logits"),
    pytest.param(lambda: apply_token_bitmask_torch(torch.zeros(1, 40, dtype=torch.int64), ROW), TypeError,
                 "floating point", id="integer logits"),
    pytest.param(lambda: leapgram.apply_token_bitmask(torch.zeros(1, 1, 40), ROW), ValueError,
                 r"shape \(vocab,\) or \(batch, vocab\)", id="3-D logits"),
])
def test_torch_misuse_says_what_was_expected(thunk, error, message) -> None:
    with pytest.raises(error, match=message):
        thunk()
