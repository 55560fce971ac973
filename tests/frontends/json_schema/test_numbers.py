"""JSON Schema numbers: bounds exact on positional numbers, multipleOf, errors."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leapgram.errors import GrammarError, UnsupportedError
from leapgram.frontends.json_schema.context import SchemaContext
from leapgram.frontends.json_schema.numbers import number_expr
from leapgram.regex.expr import ExprPool


def accepts(schema: dict, text: str, *, integer: bool = False, lenient: bool = False) -> bool:
    ctx = SchemaContext(ExprPool(), lenient=lenient)
    return ctx.pool.matches(number_expr(ctx, schema, "/n", integer=integer), text.encode())


CASES = [
    ({}, "1e-05", False, True),
    ({}, "-0", True, True),
    ({}, "01", False, False),
    ({}, "1.0", True, False),
    ({"minimum": 0}, "0", False, True),
    ({"minimum": 0}, "-0.0", False, True),
    ({"minimum": 0}, "-0.5", False, False),
    ({"exclusiveMinimum": 0}, "0.000", False, False),
    ({"exclusiveMinimum": 0}, "0.001", False, True),
    ({"minimum": 0, "exclusiveMinimum": True}, "0", False, False),
    ({"maximum": 10, "exclusiveMaximum": True}, "9.999", False, True),
    ({"maximum": 10, "exclusiveMaximum": True}, "10.0", False, False),
    ({"minimum": -3.5, "maximum": 2.25}, "-3.5", False, True),
    ({"minimum": -3.5, "maximum": 2.25}, "-3.51", False, False),
    ({"minimum": -3.5, "maximum": 2.25}, "2.250", False, True),
    ({"minimum": -3.5, "maximum": 2.25}, "2.2501", False, False),
    ({"minimum": 1.5}, "1", True, False),
    ({"minimum": 1.5}, "2", True, True),
    ({"maximum": 100}, "1e1", False, False),
    ({"minimum": 0}, "1e-06", False, True),
    ({"minimum": 0}, "-0.0E+5", False, True),
    ({"exclusiveMinimum": 0}, "0e3", False, False),
    ({"exclusiveMinimum": 0}, "-1e3", False, False),
    ({"maximum": 0}, "-2.5e10", False, True),
    ({"maximum": 0}, "2.5e-10", False, False),
    ({"minimum": 0}, "1e5", True, False),
    ({"maximum": 2147483647}, "2147483647", True, True),
    ({"maximum": 2147483647}, "2147483648", True, False),
    ({"multipleOf": 0.01}, "1.23", False, True),
    ({"multipleOf": 0.01}, "1.230", False, True),
    ({"multipleOf": 0.01}, "1.231", False, False),
    ({"multipleOf": 5}, "-35", True, True),
    ({"multipleOf": 5}, "36", True, False),
    ({"multipleOf": 2}, "0", True, True),
    ({"multipleOf": 100}, "1200", True, True),
    ({"multipleOf": 100}, "1250", True, False),
    ({"multipleOf": 3, "minimum": 0, "maximum": 30}, "27", True, True),
    ({"multipleOf": 3, "minimum": 0, "maximum": 30}, "28", True, False),
    ({"multipleOf": 0.25, "minimum": 0, "maximum": 1}, "0.750", False, True),
    ({"multipleOf": 0.25, "minimum": 0, "maximum": 1}, "0.7", False, False),
]


@pytest.mark.parametrize(("schema", "text", "integer", "expected"), CASES)
def test_table(schema, text, integer, expected):
    assert accepts(schema, text, integer=integer) is expected


def in_range(schema: dict, value: Decimal) -> bool:
    checks = {"minimum": value.__ge__, "maximum": value.__le__,
              "exclusiveMinimum": value.__gt__, "exclusiveMaximum": value.__lt__}
    return all(checks[k](Decimal(repr(v))) for k, v in schema.items())


bounds = st.one_of(st.integers(-2000, 2000), st.decimals(-100, 100, places=3).map(float))
keyword_values = st.dictionaries(st.sampled_from(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]),
                                 bounds, max_size=3)


@settings(max_examples=150, deadline=None)
@given(keyword_values, st.lists(st.one_of(st.integers(-2500, 2500), st.decimals(-120, 120, places=4)), max_size=8))
def test_ranges_match_decimal_comparison(schema, values):
    ctx = SchemaContext(ExprPool())
    as_number = number_expr(ctx, schema, "", integer=False)
    as_integer = number_expr(ctx, schema, "", integer=True)
    for value in values:
        text = str(value)
        expected = in_range(schema, Decimal(text))
        assert ctx.pool.matches(as_number, text.encode()) is expected, (schema, text)
        if isinstance(value, int):
            assert ctx.pool.matches(as_integer, text.encode()) is expected, (schema, text)


@settings(max_examples=60, deadline=None)
@given(bounds, st.floats(-1e6, 1e6, allow_nan=False))
def test_json_dumps_floats(bound, value):
    text = json.dumps(value)
    expected = Decimal(text) >= Decimal(repr(bound)) and ("e" not in text or bound == 0)
    assert accepts({"minimum": bound}, text) is expected


@pytest.mark.parametrize(("schema", "pointer"), [
    ({"minimum": "3"}, "/n/minimum"),
    ({"maximum": True}, "/n/maximum"),
    ({"exclusiveMinimum": None}, "/n/exclusiveMinimum"),
    ({"multipleOf": 0}, "/n/multipleOf"),
])
def test_malformed_values_name_the_pointer(schema, pointer):
    with pytest.raises(GrammarError) as info:
        accepts(schema, "1")
    assert info.value.pointer == pointer


@pytest.mark.parametrize(("step", "integer", "values"), [
    (3, True, range(-40, 41)), (30, True, range(-100, 101, 5)), (1.5, False, [x / 4 for x in range(-30, 31)]),
    (0.3, False, [x / 10 for x in range(-30, 31)]), (0.5, True, range(-5, 6)), (7, False, [x / 2 for x in range(-30, 31)]),
])
def test_multiples_by_remainder(step, integer, values):
    """Steps beyond powers of ten and 2 or 5 times them, without bounds: the remainder of the
    digits read so far (a finite automaton), with trailing fraction zeros allowed."""
    ctx = SchemaContext(ExprPool())
    expr = number_expr(ctx, {"multipleOf": step}, "/n", integer=integer)
    exact = Decimal(repr(step))
    for value in values:
        for text in {repr(value), repr(value) + ("0" if isinstance(value, float) else "")}:
            expected = Decimal(text) % exact == 0 and not (integer and "." in text)
            assert ctx.pool.matches(expr, text.encode()) == expected, (step, text)


def test_unexpressible_multiple_is_refused_or_skipped():
    with pytest.raises(UnsupportedError) as info:
        accepts({"multipleOf": 0.123456789}, "0")
    assert info.value.pointer == "/n/multipleOf"
    ctx = SchemaContext(ExprPool(), lenient=True)
    expr = number_expr(ctx, {"multipleOf": 0.123456789}, "/n", integer=True)
    assert ctx.pool.matches(expr, b"4") and ctx.warnings
