"""JSON Schema formats: a table per format, checked against the jsonschema format checker where
it checks that format without optional dependencies."""

from __future__ import annotations

import json

import pytest
from jsonschema import FormatChecker

from leapgram.errors import GrammarError, UnsupportedError
from leapgram.frontends.json_schema.context import SchemaContext
from leapgram.frontends.json_schema.formats import FORMATS, format_expr
from leapgram.regex.expr import ExprPool

GOOD = {
    "date-time": ["2024-02-29T23:59:60Z", "1990-12-31t15:59:59.123-08:00"],
    "date": ["2024-01-31", "2023-04-30", "2023-02-28", "2024-02-29", "2000-02-29", "1600-02-29"],
    "time": ["00:00:00Z", "23:59:59.5+05:30"],
    "duration": ["P1D", "PT1H30M", "P3Y6M4DT12H30M5S", "P4W"],
    "email": ["a.b+c@example.com", "x@[127.0.0.1]"],
    "idn-email": ["用户@例子.广告"],
    "hostname": ["example.com", "a-b.c0"],
    "idn-hostname": ["例子.广告", "bücher.de"],
    "ipv4": ["0.0.0.0", "255.255.255.255"],
    "ipv6": ["::", "::1", "2001:db8::8a2e:370:7334", "1:2:3:4:5:6:7:8", "::ffff:192.0.2.1", "1::"],
    "uuid": ["123e4567-e89b-12d3-a456-426614174000"],
    "uri": ["https://example.com/a?b=c#d", "urn:isbn:0451450523", "mailto:x@y.z", "http://[::1]:8080/",
            "http://[V1.fe]", "a:b:c", "file:///x"],
    "uri-reference": ["/a/b?c", "#frag", "", "../x", "//host/p", "x/y:z", "?q"],
    "iri": ["https://例子.广告/路径"],
    "iri-reference": ["/路径"],
    "uri-template": ["http://example.com/{id}{?q,lang}", "/{+path:6}/x"],
    "json-pointer": ["", "/a~1b/~0c/0"],
    "relative-json-pointer": ["0", "1/a", "2#"],
}
BAD = {
    "date-time": ["2024-02-29 23:59:60", "2024-02-30T00:00:00Z", "2024-01-01T24:00:00Z"],
    "date": ["2023-04-31", "2023-13-01", "2023-1-01", "2023-02-30", "2023-02-29", "1900-02-29", "2100-02-29"],
    "time": ["24:00:00Z", "12:00:00"],
    "duration": ["P", "PT", "P1H", "1D"],
    "email": ["no-at-sign", "a@", "@b.c", "a b@c.d"],
    "hostname": ["-a.com", "a_b.com", "a" * 64 + ".com"],
    "ipv4": ["256.0.0.1", "01.2.3.4", "1.2.3"],
    "ipv6": ["1:2:3:4:5:6:7:8:9", ":::", "1::2::3", "12345::"],
    "uuid": ["123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400g"],
    "uri": ["no scheme", "http://a b", "http://x#a#b", "/relative", "http://[::1", "http://a:b:c/", "a:b[c"],
    "uri-reference": ["://", ":x", "a:b/%zz", "//a b", "http://x#a#b", "\\\\WINDOWS\\share"],
    "iri-reference": ["://", "\\\\WINDOWS\\filëßåré"],
    "uri-template": ["{unclosed", "a}b"],
    "json-pointer": ["a", "/~2"],
    "relative-json-pointer": ["/a", "01"],
}
CHECKED_BY_JSONSCHEMA = {"date", "email", "ipv4", "ipv6", "uuid"}


def accepts(name: str, value: str) -> bool:
    ctx = SchemaContext(ExprPool())
    expr = format_expr(ctx, name, "/f")
    return ctx.pool.matches(expr, value.encode())


@pytest.mark.parametrize(("name", "value"), [(n, v) for n, vs in GOOD.items() for v in vs])
def test_good(name, value):
    assert accepts(name, value)
    if name in CHECKED_BY_JSONSCHEMA:
        assert FormatChecker().conforms(value, name)


@pytest.mark.parametrize(("name", "value"), [(n, v) for n, vs in BAD.items() for v in vs])
def test_bad(name, value):
    assert not accepts(name, value)
    if name in CHECKED_BY_JSONSCHEMA and name != "email":  # jsonschema's email check is "@" in it
        assert not FormatChecker().conforms(value, name)


def test_every_format_has_cases():
    assert set(GOOD) == set(FORMATS)


def test_unknown_format_is_an_annotation_and_regex_is_refused():
    ctx = SchemaContext(ExprPool())
    assert format_expr(ctx, "int32", "/f") is None
    assert [w.split(":")[0] for w in ctx.warnings] == ["/f"]
    with pytest.raises(UnsupportedError) as info:
        format_expr(ctx, "regex", "/g")
    assert info.value.feature == "format" and info.value.pointer == "/g" and "regex" in info.value.message
    lenient = SchemaContext(ExprPool(), lenient=True)
    assert format_expr(lenient, "regex", "/g") is None and "format" in lenient.warnings[0]


def test_non_string_format_is_malformed():
    with pytest.raises(GrammarError) as info:
        format_expr(SchemaContext(ExprPool()), 3, "/f")
    assert info.value.pointer == "/f"


def test_json_escapes_apply_inside_formats():
    from leapgram.frontends.json_schema.strings import string_expr
    ctx = SchemaContext(ExprPool())
    expr = string_expr(ctx, {"format": "uri"}, "")
    assert ctx.pool.matches(expr, json.dumps("http:\\/\\/x").replace("\\\\", "\\").encode())
