"""``ExprPool.set_derivative``: a ``multipleOf`` by remainders (``NumberBuilder.pin_remainders``)
derives to one expression per remainder, with the same language as before."""

from __future__ import annotations

import itertools
from decimal import Decimal

import pytest

from leapgram.frontends.json_schema.numbers import NumberBuilder
from leapgram.regex import ExprPool


@pytest.mark.parametrize(("step", "integer"), [(12, True), (12, False), (7, True), (3, False)])
def test_multiples_by_remainder_states(step, integer):
    pool = ExprPool()
    number = NumberBuilder(pool, integer).multiples(Decimal(step), None, None)
    states = set()
    for length in range(1, 5):
        for digits in itertools.product(b"0123456789", repeat=length):
            text = bytes(digits)
            d = pool.derivative_bytes(number, text)
            states.add(d)
            value_ok = not (len(text) > 1 and text[:1] == b"0") and int(text) % step == 0
            assert pool.nullable[d] == value_ok, text
            assert pool.matches(number, b"-" + text) == value_ok
    assert len(states) <= 2 * step + 2  # one per remainder (and the dead state, after a leading 0)
    if not integer:
        assert pool.matches(number, f"{step * 3}.000".encode())
        assert not pool.matches(number, f"{step * 3}.5".encode())
