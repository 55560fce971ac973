"""JSON Schema strings: lengths in code points over the JSON encoding, pattern and format together,
escapes, errors and the cost of long length limits."""

from __future__ import annotations

import json
import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leapgram.errors import GrammarError, UnsupportedError
from leapgram.frontends.json_schema.context import SchemaContext
from leapgram.frontends.json_schema.strings import string_expr
from leapgram.regex.expr import ExprPool

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def compiled(schema: dict):
    pool = ExprPool()
    expr = string_expr(SchemaContext(pool), schema, "/s")
    return lambda text: pool.matches(expr, text.encode())


def dumps(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


TABLE = [
    # (schema, JSON text, accepted)
    ({}, r'"a\u00e9\/"', True),
    ({"maxLength": 1}, '"\\n"', True),
    ({"maxLength": 1}, '"\\u000a"', True),
    ({"maxLength": 1}, '"\\u000A"', True),
    ({"maxLength": 1}, '"\\u0001"', True),
    ({"maxLength": 1}, '"\\/"', True),
    ({"maxLength": 1}, '"\\""', True),
    ({"maxLength": 1}, '"\\\\"', True),
    ({"maxLength": 1}, '"é"', True),
    ({"maxLength": 1}, '"😀"', True),
    ({"maxLength": 1}, '"ab"', False),
    ({"maxLength": 1}, '"\x01"', False),  # a raw control is not JSON
    ({"maxLength": 1}, '"""', False),
    ({"minLength": 2}, '"é"', False),
    ({"minLength": 2}, '"éé"', True),
    ({"minLength": 3, "maxLength": 2}, '"ab"', False),
    ({"pattern": "^a+$"}, '"aaa"', True),
    ({"pattern": "^a+$"}, '"aab"', False),
    ({"pattern": "b"}, '"aab"', True),
    ({"pattern": "^\\n$"}, '"\\n"', True),
    ({"pattern": '^"$'}, '"\\""', True),
    ({"pattern": "^\\\\$"}, '"\\\\"', True),
    ({"pattern": "^/$"}, '"\\/"', True),
    ({"pattern": "^[^a]$"}, '"\\t"', True),
    ({"pattern": "^.$"}, '"\\n"', False),
    ({"pattern": "^\\d{3}$", "maxLength": 2}, '"123"', False),
    ({"pattern": "\\d", "minLength": 3}, '"a1b"', True),
    ({"pattern": "\\d", "minLength": 3}, '"1b"', False),
    ({"format": "date", "pattern": "^2020"}, '"2020-02-29"', True),
    ({"format": "date", "pattern": "^2020"}, '"2021-02-28"', False),
    ({"format": "email", "maxLength": 5}, '"a@b.c"', True),
    ({"format": "email", "maxLength": 5}, '"ab@b.c"', False),
]


@pytest.mark.parametrize(("schema", "text", "accepted"), TABLE)
def test_table(schema: dict, text: str, accepted: bool) -> None:
    assert compiled(schema)(text) is accepted


@FAST
@given(st.text(max_size=12), st.integers(0, 8), st.integers(0, 8) | st.none())
def test_lengths_count_code_points(value: str, low: int, high: int | None) -> None:
    schema = {"minLength": low} if high is None else {"minLength": low, "maxLength": high}
    expected = low <= len(value) and (high is None or len(value) <= high)
    assert compiled(schema)(dumps(value)) is expected


@FAST
@given(st.text(alphabet="ab\n\"\\é", max_size=10), st.integers(0, 6))
def test_pattern_and_length_together(value: str, high: int) -> None:
    schema = {"pattern": "^a|b\"", "maxLength": high}
    expected = re.search(r"\Aa|b\"", value) is not None and len(value) <= high
    assert compiled(schema)(dumps(value)) is expected


@FAST
@given(st.text(max_size=8))
def test_unconstrained_keyword_free_string_accepts_json_dumps(value: str) -> None:
    assert compiled({})(dumps(value))
    assert compiled({"minLength": 0})(dumps(value))


def test_long_length_limit_with_pattern_is_lazy() -> None:
    start = time.perf_counter()
    accept = compiled({"pattern": "^[a-z]+( [a-z]+)*$", "minLength": 5, "maxLength": 10000})
    assert accept(dumps("ab cd" * 2000))
    assert not accept(dumps("ab cd" * 2000 + "x"))
    assert time.perf_counter() - start < 10


ERRORS = [
    ({"maxLength": -1}, GrammarError, "/s/maxLength", "non-negative integer"),
    ({"minLength": 1.5}, GrammarError, "/s/minLength", "non-negative integer"),
    ({"minLength": "2"}, GrammarError, "/s/minLength", "non-negative integer"),
    ({"pattern": 5}, GrammarError, "/s/pattern", "must be a string"),
    ({"pattern": "a(b"}, GrammarError, "/s/pattern", "unterminated subpattern"),
    ({"pattern": "a(?<=b)"}, UnsupportedError, "/s/pattern", "lookbehind"),
    ({"pattern": "(a)\\1"}, UnsupportedError, "/s/pattern", "backreference"),
    ({"format": 7}, GrammarError, "/s/format", "must be a string"),
]


@pytest.mark.parametrize(("schema", "error", "pointer", "message"), ERRORS)
def test_errors_name_keyword_and_pointer(schema: dict, error: type, pointer: str, message: str) -> None:
    with pytest.raises(error) as info:
        string_expr(SchemaContext(ExprPool()), schema, "/s")
    assert type(info.value) is error
    assert info.value.pointer == pointer
    assert message in str(info.value)


def test_pattern_error_has_a_caret_excerpt() -> None:
    with pytest.raises(GrammarError) as info:
        string_expr(SchemaContext(ExprPool()), {"pattern": "ab[c"}, "/s")
    assert info.value.column == 3
    assert str(info.value).endswith("  ab[c\n    ^")


def test_unsupported_pattern_names_keyword_and_construct() -> None:
    with pytest.raises(UnsupportedError) as info:
        string_expr(SchemaContext(ExprPool()), {"pattern": "x\\bfoo"}, "/s")
    assert "'pattern'" in str(info.value) and "word boundary" in str(info.value)
    assert info.value.column == 2


def test_lenient_pattern_is_skipped_with_a_warning() -> None:
    pool = ExprPool()
    ctx = SchemaContext(pool, lenient=True)
    expr = string_expr(ctx, {"pattern": "(?<=a)", "maxLength": 2}, "/s")
    assert pool.matches(expr, b'"zz"') and not pool.matches(expr, b'"zzz"')
    assert ctx.warnings and "/s/pattern" in ctx.warnings[0]


FITTED = ["^[a-z]+$", "^[A-Za-z][A-Za-z0-9_]*$", "^[0-9]{3,5}$", "^(ab|c)x*$", "^é?[a-z]{2}$", "^x+y+$", "b"]


@FAST
@given(st.sampled_from(FITTED), st.integers(0, 7), st.integers(0, 7) | st.none(),
       st.text(alphabet="abcxyzé01_A", max_size=9))
def test_length_pushed_into_the_pattern_is_exact(pattern: str, low: int, high: int | None, value: str) -> None:
    schema = {"pattern": pattern, "minLength": low} | ({} if high is None else {"maxLength": high})
    fits = low <= len(value) and (high is None or len(value) <= high)
    python = pattern.replace("$", r"\Z")
    assert compiled(schema)(dumps(value)) is (fits and re.search(python, value) is not None)


@pytest.mark.parametrize("schema", [
    {"pattern": "^[a-z][a-z0-9_]*$", "maxLength": 64},
    {"pattern": "^[0-9]{5}$", "maxLength": 10},
    {"pattern": "^[a-z]+$", "minLength": 10000},
    {"format": "date", "minLength": 1},
])
def test_length_needs_no_intersection_when_it_fits(schema: dict) -> None:
    pool = ExprPool()
    assert not pool.has_bool[string_expr(SchemaContext(pool), schema, "/s")]


def test_emptiness_of_long_limits_is_decided_quickly() -> None:
    pool = ExprPool()
    start = time.perf_counter()
    for schema in ({"format": "uri", "minLength": 1, "maxLength": 65536},
                   {"pattern": "^$|(^(?:\\S+\\s+){0,99}\\S+$)", "minLength": 1, "maxLength": 5000}):
        assert not pool.is_empty(string_expr(SchemaContext(pool), schema, "/s"))
    assert pool.is_empty(string_expr(SchemaContext(pool), {"format": "date", "maxLength": 9}, "/s"))
    assert time.perf_counter() - start < 10
