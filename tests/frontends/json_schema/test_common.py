"""The base pool shared by all schemas: copies are independent and change no grammar."""

from __future__ import annotations

import functools

import pytest

from leapgram import Grammar
from leapgram.frontends.json_schema import common
from leapgram.frontends.json_schema.refs import RefResolver
from leapgram.frontends.json_schema.strings import JSON_STRING
from leapgram.limits import DEFAULT_LIMITS, Limits
from leapgram.regex.syntax import parse_regex

SCHEMAS = [
    {"type": "string"},
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string", "format": "date-time"}},
     "required": ["a"]},
    {"type": "array", "items": {"type": "string", "maxLength": 3, "pattern": "^[a-z]+$"}},
    {"type": "object", "additionalProperties": {"type": "number", "minimum": 1.5}},
    {"enum": ["x", 1, None, 1.0, "x"]},
]


def test_copies_are_independent_of_the_base_and_of_each_other():
    base = common.base_pool(DEFAULT_LIMITS)
    size = len(base)
    one, two = common.schema_pool(DEFAULT_LIMITS), common.schema_pool(DEFAULT_LIMITS)
    assert parse_regex(JSON_STRING, one) == parse_regex(JSON_STRING, base)  # found in the copy's memo
    fresh = parse_regex("[x-z]{3}q", one)
    assert len(base) == size and len(two) == size and ("regex", "[x-z]{3}q", False, False) not in two.memo
    assert one.matches(fresh, b"xyzq") and not one.matches(fresh, b"xyq")


def test_a_budget_near_the_base_pool_starts_empty():
    assert len(common.schema_pool(Limits(max_regex_nodes=50))) < 50
    size = len(common.base_pool(DEFAULT_LIMITS))
    assert len(common.schema_pool(Limits(max_regex_nodes=2 * size))) < size
    small = Limits(max_regex_nodes=1000)  # the flexible whitespace run alone takes about 260
    assert len(common.schema_pool(small)) < 10 and Grammar.from_json_schema({"type": "boolean"}, limits=small).ir.lexemes


def languages(grammar: Grammar) -> list[tuple[str, bool]]:
    """Each lexeme's answers on probe strings: equal answers for grammars built in two pools."""
    pool = grammar.ir.pool
    probes = [b'"', b'""', b'"abc"', b'"2024-01-31T10:00:00Z"', b'"\\u00e9"', b"1", b"1.5", b"-2e3", b"0.5",
              b"null", b"x", b"1.0", b'"x"', b"  ", b'"ab1"']
    return [(lexeme.name, [pool.matches(lexeme.expr, p) for p in probes]) for lexeme in grammar.ir.lexemes]


@pytest.mark.parametrize("schema", SCHEMAS)
def test_grammars_are_the_same_with_and_without_the_base_pool(schema, monkeypatch):
    shared = Grammar.from_json_schema(schema)
    again = Grammar.from_json_schema(schema)
    monkeypatch.setattr(common, "base_pool", lambda limits, formats=False: None)
    alone = Grammar.from_json_schema(schema)
    assert languages(shared) == languages(alone) == languages(again)
    assert shared.ir.rules == alone.ir.rules == again.ir.rules


def test_the_base_pool_hands_its_warmed_caches_to_copies_and_they_agree_with_fresh_answers():
    base = common.base_pool(DEFAULT_LIMITS)
    copy = common.schema_pool(DEFAULT_LIMITS)
    lazy = base.copy()  # the same expressions, with the caches cleared: answers worked out on demand
    for name in ("_first", "_classes", "_lengths", "_shortest", "_bounds"):
        setattr(lazy, name, {})
    for e in range(len(base)):
        assert e in copy._first and e in copy._classes and e in copy._bounds and e in copy._shortest
        assert copy.first_bytes(e) == lazy.first_bytes(e)
        assert copy.byte_classes(e) == lazy.byte_classes(e)
        assert copy._count_bound(e) == lazy._count_bound(e)
        assert copy._estimated_length(e) == lazy._estimated_length(e)
        if not base.has_bool[e]:
            assert e in copy._lengths and copy._max_length(e) == lazy._max_length(e)


def uses_format(schema) -> bool:
    return RefResolver(schema).formats


def test_the_resolver_finds_a_known_format_in_any_subschema():
    assert uses_format({"type": "object", "properties": {"a": {"anyOf": [{"type": "string", "format": "uri"}]}}})
    assert uses_format({"$defs": {"d": {"items": {"format": "date-time"}}}, "$ref": "#/$defs/d"})
    assert not uses_format({"type": "string", "format": "not-a-format"})
    assert not uses_format({"format": ["uri"], "items": True})
    assert not uses_format(True)
    assert not uses_format({"properties": {"format": {"type": "string"}}})
    assert not uses_format({"enum": [{"format": "uri"}], "const": {"format": "uri"}})  # values, not subschemas


def test_only_schemas_with_a_format_copy_the_pool_of_the_formats():
    plain, full = common.base_pool(DEFAULT_LIMITS), common.base_pool(DEFAULT_LIMITS, True)
    assert len(plain) < len(full) and plain.family is not full.family
    with_format = Grammar.from_json_schema(SCHEMAS[1]).ir.pool
    without = Grammar.from_json_schema(SCHEMAS[0]).ir.pool
    assert with_format.family is full.family and without.family is plain.family


def test_a_format_in_a_schema_on_the_plain_pool_is_the_same_language(monkeypatch):
    """A format met where the schema's pool lacks it (the plain pool, as in a structural tag's
    shared pool) is parsed in the schema's own pool, to the same strings."""
    schema = {"type": "object", "properties": {"when": {"type": "string", "format": "date-time"},
                                                "site": {"type": "string", "format": "uri"}}}
    shared = Grammar.from_json_schema(schema)
    assert shared.ir.pool.family is common.base_pool(DEFAULT_LIMITS, True).family
    plain_pool = common.base_pool
    monkeypatch.setattr(common, "base_pool", lambda limits, formats=False: plain_pool(limits))
    plain = Grammar.from_json_schema(schema)
    assert plain.ir.pool.family is common.base_pool(DEFAULT_LIMITS).family
    assert languages(shared) == languages(plain)
    probes = [b'"https://example.com/a?b#c"', b'"2024-02-29T10:00:00Z"', b'"2023-02-29T10:00:00Z"', b'"x y"']
    for one, two in zip(shared.ir.lexemes, plain.ir.lexemes):
        assert [shared.ir.pool.matches(one.expr, p) for p in probes] == [plain.ir.pool.matches(two.expr, p) for p in probes]


def test_threads_asking_first_for_the_pool_of_the_formats_share_one(monkeypatch):
    """The base pools are built once per process, under a lock: threads whose first schemas
    carry formats all copy one pool, and their grammars agree."""
    import threading

    monkeypatch.setattr(common, "_base_pool", functools.lru_cache(maxsize=8)(common._base_pool.__wrapped__))
    schema = {"type": "array", "items": {"type": "string", "format": "email"}}
    found: list = []
    threads = [threading.Thread(target=lambda: found.append(Grammar.from_json_schema(schema))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(found) == 4 and len({id(g.ir.pool.family) for g in found}) == 1
    assert all(languages(g) == languages(found[0]) for g in found)
