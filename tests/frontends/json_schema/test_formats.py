"""JSON Schema formats: examples per format, Python's own parsers as oracles (dates, IP addresses,
UUIDs) and unknown formats as annotations."""

from __future__ import annotations

import datetime
import ipaddress
import json
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leapgram.frontends.json_schema.context import SchemaContext
from leapgram.frontends.json_schema.formats import FORMATS
from leapgram.frontends.json_schema.strings import string_expr
from leapgram.regex.expr import ExprPool

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
POOL = ExprPool()
EXPRS = {name: string_expr(SchemaContext(POOL), {"format": name}, "/f") for name in FORMATS}


def accepts(name: str, value: str) -> bool:
    return POOL.matches(EXPRS[name], json.dumps(value, ensure_ascii=False).encode())


TABLE = [
    ("date-time", "2024-02-29T23:59:59.123+05:30", True),
    ("date-time", "1985-04-12t23:20:50.52z", True),
    ("date-time", "2023-02-29T10:00:00Z", False),
    ("date-time", "2024-01-01T10:00:00", False),
    ("date-time", "2024-01-01 10:00:00Z", False),
    ("date", "2000-02-29", True),
    ("date", "0000-02-29", True),  # RFC 3339 years start at 0000, a leap year
    ("date", "1900-02-29", False),
    ("date", "2024-04-31", False),
    ("date", "2024-4-1", False),
    ("time", "08:30:06Z", True),
    ("time", "24:00:00Z", False),
    ("duration", "P3Y6M4DT12H30M5S", True),
    ("duration", "PT36H", True),
    ("duration", "P4W", True),
    ("duration", "P", False),
    ("duration", "P1YT", False),
    ("email", "first.last+tag@example.co.uk", True),
    ("email", "a..b@example.com", False),
    ("email", "no-at-sign", False),
    ("idn-email", "用户@例子.广告", True),
    ("hostname", "www.example.com", True),
    ("hostname", "-bad.example.com", False),
    ("hostname", "a" * 64 + ".com", False),
    ("hostname", ".".join(["a" * 63] * 4), False),  # 255 characters
    ("idn-hostname", "müller.de", True),
    ("ipv4", "192.168.0.1", True),
    ("ipv4", "256.1.1.1", False),
    ("ipv4", "01.1.1.1", False),
    ("ipv6", "::ffff:192.168.0.1", True),
    ("ipv6", "1::2::3", False),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000", True),
    ("uuid", "123e4567e89b12d3a456426614174000", False),
    ("uri", "https://user@example.com:8080/a/b?q=1&r=%20#frag", True),
    ("uri", "urn:isbn:0451450523", True),
    ("uri", "mailto:someone@example.com", True),
    ("uri", "http://[::1]/x", True),
    ("uri", "/relative/path", False),
    ("uri", "http://exa mple.com", False),
    ("uri", "http://a/b#c#d", False),
    ("uri-reference", "/relative/path?x#y", True),
    ("uri-reference", "../up", True),
    ("uri-reference", "a:b:c", True),
    ("uri-reference", "has space", False),
    ("iri", "https://例子.广告/路径", True),
    ("iri-reference", "路径/x", True),
    ("uri-template", "http://example.com/{user}/{+path}{?q,lang}", True),
    ("uri-template", "http://example.com/{user", False),
    ("json-pointer", "/a~1b/c~0d/0", True),
    ("json-pointer", "/a~2", False),
    ("json-pointer", "a", False),
    ("relative-json-pointer", "1/a", True),
    ("relative-json-pointer", "0#", True),
    ("relative-json-pointer", "01", False),
]


@pytest.mark.parametrize(("name", "value", "accepted"), TABLE)
def test_table(name: str, value: str, accepted: bool) -> None:
    assert accepts(name, value) is accepted


@FAST
@given(st.integers(1, 9999), st.integers(0, 13), st.integers(0, 32))
def test_date_agrees_with_datetime(year: int, month: int, day: int) -> None:
    text = f"{year:04d}-{month:02d}-{day:02d}"
    try:
        datetime.date(year, month, day)
        valid = True
    except ValueError:
        valid = False
    assert accepts("date", text) is valid


@FAST
@given(st.datetimes(timezones=st.just(datetime.UTC)))
def test_isoformat_date_times_are_accepted(moment: datetime.datetime) -> None:
    assert accepts("date-time", moment.isoformat())


@FAST
@given(st.ip_addresses(v=6))
def test_ipv6_spellings_are_accepted(address: ipaddress.IPv6Address) -> None:
    assert accepts("ipv6", address.compressed)
    assert accepts("ipv6", address.exploded)


@FAST
@given(st.text(alphabet="0123456789abcdef:.", max_size=24))
def test_ipv6_agrees_with_ipaddress(text: str) -> None:
    try:
        ipaddress.IPv6Address(text)
        valid = True
    except ValueError:
        valid = False
    assert accepts("ipv6", text) is valid


@FAST
@given(st.ip_addresses(v=4), st.uuids())
def test_ipv4_and_uuid_spellings_are_accepted(address: ipaddress.IPv4Address, value: uuid.UUID) -> None:
    assert accepts("ipv4", str(address))
    assert accepts("uuid", str(value))
    assert accepts("uuid", str(value).upper())


def test_unknown_formats_are_annotations_with_a_warning() -> None:
    pool = ExprPool()
    ctx = SchemaContext(pool)
    expr = string_expr(ctx, {"format": "int32", "maxLength": 2}, "/p")
    assert pool.matches(expr, b'"ab"') and not pool.matches(expr, b'"abc"')
    assert ctx.warnings == ["/p/format: format 'int32' is not enforced (treated as an annotation)"]
