"""JSON Schema numbers: ranges (draft-4 and draft-6 exclusive forms), multipleOf, exponent forms and
errors, against exact decimal arithmetic."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leapgram.errors import GrammarError, UnsupportedError
from leapgram.frontends.json_schema.context import SchemaContext
from leapgram.frontends.json_schema.numbers import number_expr
from leapgram.regex.expr import ExprPool

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def accepts(schema: dict, text: str, integer: bool = False) -> bool:
    pool = ExprPool()
    return pool.matches(number_expr(SchemaContext(pool), schema, "/x", integer=integer), text.encode())


TABLE = [
    # (schema, integer, text, accepted)
    ({}, False, "-3.0", True),
    ({}, False, "1e-05", True),
    ({}, False, "1E+20", True),
    ({}, False, "01", False),
    ({}, False, "1.", False),
    ({}, True, "12", True),
    ({}, True, "1.0", False),
    ({}, True, "1e3", False),
    ({"minimum": 1.5, "maximum": 10}, False, "1.5", True),
    ({"minimum": 1.5, "maximum": 10}, False, "1.4999", False),
    ({"minimum": 1.5, "maximum": 10}, False, "10.000", True),
    ({"minimum": 1.5, "maximum": 10}, False, "10.0001", False),
    ({"minimum": 1.5, "exclusiveMinimum": True}, False, "1.5", False),
    ({"minimum": 1.5, "exclusiveMinimum": True}, False, "1.50001", True),
    ({"exclusiveMinimum": 1.5}, False, "1.50", False),
    ({"exclusiveMaximum": -2}, False, "-2.0", False),
    ({"exclusiveMaximum": -2}, False, "-2.01", True),
    ({"minimum": -5, "maximum": -1}, True, "-3", True),
    ({"minimum": -5, "maximum": -1}, True, "0", False),
    ({"minimum": -5, "maximum": -1}, True, "-6", False),
    ({"minimum": 0}, False, "-0", True),
    ({"exclusiveMinimum": 0}, False, "-0.0", False),
    ({"exclusiveMinimum": 0}, False, "0.001", True),
    ({"minimum": 0}, False, "1e-05", True),
    ({"minimum": 0}, False, "-1e-05", False),
    ({"maximum": 0}, False, "-2.5E3", True),
    ({"exclusiveMaximum": 0}, False, "0e5", False),
    ({"minimum": 1}, False, "1e+20", False),  # exponent forms refused under a nonzero bound
    ({"minimum": 1}, False, "100000000000000000000", True),
    ({"minimum": 2.5}, True, "2", False),
    ({"minimum": 2.5}, True, "3", True),
    ({"maximum": 2.5}, True, "2", True),
    ({"minimum": 10, "maximum": 5}, False, "7", False),
    ({"minimum": 0, "maximum": 9007199254740991}, True, "9007199254740991", True),
    ({"minimum": 0, "maximum": 9007199254740991}, True, "9007199254740992", False),
    ({"minimum": 5, "exclusiveMinimum": 7}, True, "7", False),
    ({"minimum": 5, "exclusiveMinimum": 3}, True, "5", True),
    ({"multipleOf": 25}, True, "175", True),
    ({"multipleOf": 25}, True, "-50", True),
    ({"multipleOf": 25}, True, "5", False),
    ({"multipleOf": 0.5}, True, "7", True),
    ({"multipleOf": 2.5}, True, "15", True),
    ({"multipleOf": 2.5}, True, "12", False),
    ({"multipleOf": 0.01}, False, "1.230", True),
    ({"multipleOf": 0.01}, False, "1.231", False),
    ({"multipleOf": 0.25}, False, "3.75", True),
    ({"multipleOf": 0.25}, False, "3.7", False),
    ({"multipleOf": 10}, False, "120.00", True),
    ({"multipleOf": 10}, False, "125", False),
    ({"multipleOf": 1}, False, "3.0", True),
    ({"multipleOf": 1}, False, "3.5", False),
    ({"multipleOf": 5, "minimum": 10, "maximum": 20}, True, "15", True),
    ({"multipleOf": 5, "minimum": 10, "maximum": 20}, True, "25", False),
    ({"multipleOf": 7}, True, "343", True),
    ({"multipleOf": 7}, True, "344", False),
    ({"multipleOf": 33}, False, "-99.000", True),
    ({"multipleOf": 33}, False, "99.5", False),
    ({"multipleOf": 12, "maximum": 30}, True, "24", True),
    ({"multipleOf": 12, "maximum": 30}, True, "36", False),
    ({"multipleOf": 0.0001}, False, "1.23456", False),
    ({"multipleOf": 0.0001}, False, "1.23450", True),
]


@pytest.mark.parametrize(("schema", "integer", "text", "accepted"), TABLE)
def test_table(schema: dict, integer: bool, text: str, accepted: bool) -> None:
    assert accepts(schema, text, integer) is accepted


def decimals(places: int = 3) -> st.SearchStrategy[Decimal]:
    return st.builds(lambda n, p: Decimal(n).scaleb(-p), st.integers(-10**5, 10**5), st.integers(0, places))


def spellings(value: Decimal, integer: bool) -> st.SearchStrategy[str]:
    """JSON texts of ``value`` without exponent (trailing zeros and ``-0`` included)."""
    if integer:
        return st.just(str(int(value)))
    plain = f"{value:f}"
    padded = plain + ("" if "." in plain else ".") + "00"
    return st.sampled_from([plain, padded])


@st.composite
def bounds_and_number(draw):
    integer = draw(st.booleans())
    schema: dict = {}
    low_high = sorted([draw(decimals()), draw(decimals())])
    for keyword, value in zip(("minimum", "maximum"), low_high):
        form = draw(st.sampled_from(["none", "inclusive", "draft4", "draft6"]))
        if form == "none":
            continue
        number = float(value) if value != value.to_integral() or draw(st.booleans()) else int(value)
        exclusive = "exclusive" + keyword[0].upper() + keyword[1:]
        if form == "draft6":
            schema[exclusive] = number
        else:
            schema[keyword] = number
            if form == "draft4":
                schema[exclusive] = True
    value = draw(decimals(0 if integer else 4))
    text = draw(spellings(value, integer))
    return schema, integer, text


def in_range(schema: dict, text: str) -> bool:
    value = Decimal(text)
    for keyword, sign in (("minimum", 1), ("maximum", -1)):
        exclusive = "exclusive" + keyword[0].upper() + keyword[1:]
        flag = schema.get(exclusive)
        if keyword in schema:
            bound = Decimal(repr(schema[keyword]))
            if sign * (value - bound) < 0 or (flag is True and value == bound):
                return False
        strict = flag is not None and not isinstance(flag, bool)
        if strict and sign * (value - Decimal(repr(flag))) <= 0:
            return False
    return True


@FAST
@given(bounds_and_number())
def test_ranges_match_decimal_arithmetic(case) -> None:
    schema, integer, text = case
    assert accepts(schema, text, integer) is in_range(schema, text)


STEPS = [1, 2, 5, 10, 25, 100, 0.5, 0.25, 0.2, 0.01, 0.0001, 2.5, 0.05, 3, 6, 7, 11, 12, 33, 77, 99]


@FAST
@given(st.sampled_from(STEPS), decimals(3), st.booleans())
def test_multiple_of_matches_decimal_arithmetic(step, value: Decimal, integer: bool) -> None:
    if integer:
        value = value.to_integral_value()
    text = str(int(value)) if integer else f"{value:f}"
    expected = (Decimal(text) / Decimal(repr(step))) % 1 == 0
    assert accepts({"multipleOf": step}, text, integer) is expected


ERRORS = [
    ({"minimum": "3"}, GrammarError, "/x/minimum", "expected a number"),
    ({"maximum": True}, GrammarError, "/x/maximum", "expected a number"),
    ({"exclusiveMinimum": True}, GrammarError, "/x/exclusiveMinimum", "needs minimum"),
    ({"multipleOf": 0}, GrammarError, "/x/multipleOf", "greater than 0"),
    ({"multipleOf": 13}, UnsupportedError, "/x/multipleOf", "multipleOf"),
    ({"multipleOf": 1.5}, UnsupportedError, "/x/multipleOf", "multipleOf"),
    ({"multipleOf": 0.3}, UnsupportedError, "/x/multipleOf", "multipleOf"),
]


@pytest.mark.parametrize(("schema", "error", "pointer", "message"), ERRORS)
def test_errors_name_keyword_and_pointer(schema: dict, error: type, pointer: str, message: str) -> None:
    with pytest.raises(error) as info:
        number_expr(SchemaContext(ExprPool()), schema, "/x", integer=False)
    assert type(info.value) is error
    assert info.value.pointer == pointer
    assert message in str(info.value)


def test_lenient_multiple_of_is_skipped_with_a_warning() -> None:
    pool = ExprPool()
    ctx = SchemaContext(pool, lenient=True)
    expr = number_expr(ctx, {"multipleOf": 13, "minimum": 0}, "/x", integer=True)
    assert pool.matches(expr, b"4")
    assert any("/x/multipleOf" in w and "multipleOf" in w for w in ctx.warnings)


def test_huge_and_tiny_bounds_compile() -> None:
    assert accepts({"maximum": 1e308}, "1" + "0" * 308)
    assert not accepts({"maximum": 1e308}, "2" + "0" * 308)
    assert accepts({"exclusiveMinimum": 1e-300}, "0." + "0" * 299 + "2")
    assert not accepts({"exclusiveMinimum": 1e-300}, "0." + "0" * 299 + "1")
