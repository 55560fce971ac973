"""JSON Schema strings: constraints on the decoded value, every JSON spelling of it accepted."""

from __future__ import annotations

import json
import time

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leapgram.errors import GrammarError, UnsupportedError
from leapgram.frontends.json_schema.context import SchemaContext
from leapgram.frontends.json_schema.strings import string_expr
from leapgram.regex.dfa import LazyDfa
from leapgram.regex.expr import ExprPool


def compiled(schema: dict, lenient: bool = False) -> tuple[SchemaContext, int]:
    ctx = SchemaContext(ExprPool(), lenient=lenient)
    return ctx, string_expr(ctx, schema, "/s")


def accepts(schema: dict, text: str) -> bool:
    ctx, expr = compiled(schema)
    return ctx.pool.matches(expr, text.encode())


def spelled_out(value: str) -> str:
    """``value`` as JSON with every ASCII character written as ``\\u00XX`` (mixed hex case): not
    a spelling the lexemes offer for a character ``json.dumps`` writes raw or short."""
    parts = []
    for i, ch in enumerate(value):
        if ord(ch) < 0x80:
            code = f"{ord(ch):04x}"
            parts.append("\\u" + (code.upper() if i % 2 else code))
        else:
            parts.append(ch)
    return '"' + "".join(parts) + '"'


CASES = [
    ({}, '"a\\"b"', True),
    ({}, '"a"b"', False),
    ({"maxLength": 2}, '"\\n\\t"', True),
    ({"maxLength": 0, "pattern": "^a"}, '"a"', False),  # the run's cap went below zero (INF is -1)
    ({"maxLength": 1, "pattern": "^ab"}, '"ab"', False),
    ({"maxLength": 2, "pattern": "^ab"}, '"ab"', True),
    ({"maxLength": 2}, '"\\u0041\\/é"', False),
    ({"maxLength": 1}, '"😀"', True),
    ({"minLength": 2}, '"😀"', False),
    ({"minLength": 1, "maxLength": 1}, '"\\u00e9"', True),
    ({"pattern": "^a+$"}, '"\\u0061A"', False),
    ({"pattern": "^a+$"}, '"\\u0061a"', False),  # ASCII is spelled raw, as json.dumps writes it
    ({"pattern": "^\\n$"}, '"\\n"', True),
    ({"pattern": "^\\n$"}, '"\\u000a"', False),
    ({"pattern": "^\\x01$"}, '"\\u0001"', True),
    ({"pattern": '^"$'}, '"\\""', True),
    ({"pattern": "^\\\\$"}, '"\\\\"', True),
    ({"pattern": "^/$"}, '"\\/"', True),
    ({"pattern": "x"}, '"\\n x \\u0000"', True),
    ({"pattern": "^[a-z]+$", "maxLength": 3}, '"abcd"', False),
    ({"pattern": "^[a-z]+$", "maxLength": 3}, '"abc"', True),
    ({"pattern": "^[a-z]+$", "minLength": 3}, '"ab"', False),
    ({"pattern": "b", "minLength": 3}, '"ab"', False),
    ({"pattern": "b", "minLength": 3}, '"abc"', True),
    ({"minLength": 3, "maxLength": 2}, '"abc"', False),
    ({"format": "date"}, '"2024-02-29"', True),
    ({"format": "date", "maxLength": 5}, '"2024-02-29"', False),
]


@pytest.mark.parametrize(("schema", "text", "expected"), CASES)
def test_table(schema, text, expected):
    assert accepts(schema, text) is expected


SCHEMAS = [
    {"minLength": 2, "maxLength": 4},
    {"pattern": "^[a-z\\s]*$", "maxLength": 5},
    {"pattern": "é|\\n", "minLength": 1},
    {"pattern": "^\\S+$"},
    {"pattern": "^(ab|c)+$", "maxLength": 6},
    {"pattern": "[a-c]{3}", "minLength": 3, "maxLength": 3},  # unanchored, as long as its bound
    {"pattern": "ab|é", "maxLength": 2},
    {"pattern": "^a\\S{2}", "minLength": 1, "maxLength": 3},
    {"pattern": "a[bc]", "maxLength": 3},  # shorter than the bound: an intersection
]
values = st.text(st.sampled_from('abcé😀\n"\\/\x00\x1f\x7f \u00a0'), max_size=7)


@settings(max_examples=250, deadline=None)
@given(st.sampled_from(SCHEMAS), values)
def test_decoded_value_decides_like_jsonschema(schema, value):
    ctx, expr = compiled(schema)
    oracle = dict(schema)
    if "pattern" in oracle:  # Python's $ also matches before a final newline, ECMA's does not
        oracle["pattern"] = oracle["pattern"].replace("$", r"\Z")
    expected = jsonschema.Draft202012Validator({"type": "string", **oracle}).is_valid(value)
    if "pattern" in schema and "\\s" in schema["pattern"].lower() and "\x1f" in value:
        return  # Python's \s includes U+001C-U+001F, ECMA's does not
    assert ctx.pool.matches(expr, json.dumps(value, ensure_ascii=False).encode()) is expected
    raw_only = any(ord(c) < 0x7F and not (ord(c) < 0x20 and c not in "\b\f\n\r\t") for c in value)
    assert ctx.pool.matches(expr, spelled_out(value).encode()) is (expected and not raw_only)
    assert ctx.pool.matches(expr, json.dumps(value).encode()) is expected  # \\uXXXX, surrogate pairs


@pytest.mark.parametrize(("schema", "pointer"), [
    ({"maxLength": -1}, "/s/maxLength"),
    ({"minLength": "3"}, "/s/minLength"),
    ({"pattern": 5}, "/s/pattern"),
    ({"format": 5}, "/s/format"),
])
def test_malformed_values_name_the_pointer(schema, pointer):
    with pytest.raises(GrammarError) as info:
        compiled(schema)
    assert info.value.pointer == pointer


def test_bad_pattern_has_pointer_offset_and_caret():
    with pytest.raises(GrammarError) as info:
        compiled({"pattern": "ab(c"})
    error = info.value
    assert error.pointer == "/s/pattern" and error.column == 3
    assert "ab(c\n    ^" in str(error)


def test_unsupported_pattern_names_pattern_or_is_skipped_when_lenient():
    with pytest.raises(UnsupportedError) as info:
        compiled({"pattern": "(?=a)"})
    assert info.value.feature == "pattern" and info.value.pointer == "/s/pattern"
    ctx, expr = compiled({"pattern": "(?=a)", "maxLength": 2}, lenient=True)
    assert ctx.warnings and ctx.pool.matches(expr, b'"zz"') and not ctx.pool.matches(expr, b'"zzz"')


@pytest.mark.parametrize("schema", [
    {"pattern": "[0-9]{10,10}", "minLength": 10, "maxLength": 10},  # Github o44203's timestamp
    {"pattern": "[0-9]{5}", "maxLength": 5},
    {"pattern": "^x[0-9]{3}", "maxLength": 4},
])
def test_an_unanchored_pattern_as_long_as_its_bound_is_no_intersection(schema):
    """``R* m S* ∩ any{lo,hi}`` with every string of ``m`` at least ``hi`` long is ``m ∩ any{lo,hi}``
    (lengths._middle_of_loose_ends): nothing fits before or after ``m``."""
    ctx, expr = compiled(schema)
    assert not ctx.pool.has_bool[expr]


def test_long_length_with_a_run_pattern_is_fast():
    start = time.perf_counter()
    ctx, expr = compiled({"pattern": "^[a-z]+$", "maxLength": 10000})
    dfa = LazyDfa(ctx.pool, expr)
    state = dfa.run(dfa.initial, b'"' + b"a" * 9999 + b'"')
    assert dfa.is_accepting(state)
    assert time.perf_counter() - start < 10


def test_long_length_that_would_count_in_every_state_is_refused():
    with pytest.raises(UnsupportedError) as info:
        compiled({"pattern": "a", "maxLength": 10000})
    assert info.value.pointer == "/s/maxLength"


def test_unknown_format_is_an_annotation_with_a_warning():
    ctx, expr = compiled({"format": "int32"})
    assert ctx.pool.matches(expr, b'"anything"') and "int32" in ctx.warnings[0]


def surrogate_spelling(code_point: int, upper: bool) -> bytes:
    high = 0xD800 + ((code_point - 0x10000) >> 10)
    low = 0xDC00 + ((code_point - 0x10000) & 0x3FF)
    text = f"\\u{high:04x}\\u{low:04x}"
    return (text.upper().replace("\\U", "\\u") if upper else text).encode()


@given(st.integers(0x10000, 0x10FFFF), st.integers(0x10000, 0x10FFFF), st.integers(0x10000, 0x10FFFF),
       st.booleans())
@settings(max_examples=60, deadline=None)
def test_astral_escapes_are_exactly_the_surrogate_pairs_of_the_range(a, b, probe, upper):
    from leapgram.frontends.json_schema.strings import unicode_escapes

    low, high = min(a, b), max(a, b)
    pool = ExprPool()
    expr = unicode_escapes(pool, low, high)
    for code_point in {low, high, probe, low - 1, high + 1, (low + high) // 2}:
        if 0x10000 <= code_point <= 0x10FFFF:
            assert pool.matches(expr, surrogate_spelling(code_point, upper)) == (low <= code_point <= high)


def test_surrogate_blocks_cover_the_range_in_at_most_three_branches():
    from leapgram.frontends.json_schema.strings import surrogate_blocks

    for first, last in [(0, 0xFFFFF), (5, 0xFFFFA), (0x400, 0x7FF), (3, 9), (0x3FF, 0x400), (0x401, 0x7FE)]:
        blocks = surrogate_blocks(first, last)
        assert len(blocks) <= 3
        covered = sorted(top << 10 | low for (t0, t1), (l0, l1) in blocks
                         for top in range(t0, t1 + 1) for low in range(l0, l1 + 1))
        assert covered == list(range(first, last + 1))
