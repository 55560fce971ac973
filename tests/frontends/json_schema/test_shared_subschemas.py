"""Subschemas with the same content translate once (in documents of at least
``MIN_SHARED_DOCUMENT`` objects), and a subschema with one alternative is its alternative's
symbol, not a nonterminal with a unit rule: smaller grammars, the same language."""

from __future__ import annotations

import json

import pytest

from leapgram import Grammar
from leapgram.frontends.json_schema import translate
from tests.helpers.compiling import compile_for
from tests.helpers.schema_acceptance import accepts

POINT = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "number"}}, "required": ["x"]}


def padded(schema: dict, count: int = 40) -> dict:
    """``schema`` with ``count`` optional properties, each a copy (a distinct dict) of POINT."""
    props = dict(schema.get("properties", {}))
    props.update({f"p{n}": json.loads(json.dumps(POINT)) for n in range(count)})
    return {**schema, "type": "object", "properties": props}


def unshared(monkeypatch, schema, **options) -> Grammar:
    monkeypatch.setattr(translate, "MIN_SHARED_DOCUMENT", 1 << 30)
    grammar = Grammar.from_json_schema(schema, **options)
    monkeypatch.undo()
    return grammar


def test_equal_subschemas_share_one_symbol(byte_vocab, monkeypatch):
    schema = padded({})
    shared, alone = Grammar.from_json_schema(schema), unshared(monkeypatch, schema)
    assert len(shared.ir.rules) < len(alone.ir.rules) / 2  # the root's 40 member states stay
    good = [{"p0": {"x": 1}, "p7": {"x": -2, "y": 0.5}}, {"p39": {"x": 0}}, {}]
    bad = [{"p0": {"y": 1}}, {"p1": {"x": "1"}}, {"p2": {"x": 1.5}}]
    for grammar in (shared, alone):
        compiled = compile_for(grammar, byte_vocab)
        assert all(accepts(compiled, json.dumps(v)) for v in good)
        assert not any(accepts(compiled, json.dumps(v)) for v in bad)


def test_equal_references_under_other_bases_are_not_shared(byte_vocab):
    ref = {"$ref": "#/definitions/d"}
    schema = padded({"properties": {
        "a": {"$id": "http://example.com/a", "definitions": {"d": {"type": "integer"}},
              "type": "object", "properties": {"v": dict(ref)}, "required": ["v"]},
        "b": {"$id": "http://example.com/b", "definitions": {"d": {"type": "string"}},
              "type": "object", "properties": {"v": dict(ref)}, "required": ["v"]}}})
    compiled = compile_for(Grammar.from_json_schema(schema), byte_vocab)
    assert accepts(compiled, '{"a": {"v": 1}, "b": {"v": "x"}}')
    assert not accepts(compiled, '{"a": {"v": "x"}}') and not accepts(compiled, '{"b": {"v": 1}}')


def test_scalars_of_other_types_are_not_equal(byte_vocab):
    schema = padded({"properties": {"t": {"const": True}, "o": {"const": 1}, "f": {"const": 1.5},
                                    "z": {"const": -0.0}, "s": {"const": "1"}}})
    compiled = compile_for(Grammar.from_json_schema(schema), byte_vocab)
    assert accepts(compiled, '{"t": true, "o": 1, "f": 1.5, "s": "1"}')
    assert not accepts(compiled, '{"t": 1}') and not accepts(compiled, '{"o": true}')
    assert not accepts(compiled, '{"s": 1}') and not accepts(compiled, '{"o": "1"}')


def test_content_ids_tell_keys_values_and_kinds_apart():
    from collections import OrderedDict

    from leapgram.limits import DEFAULT_LIMITS

    translator = translate.SchemaTranslator({}, limits=DEFAULT_LIMITS)
    values = [{"a": "b"}, {"b": "a"}, {"a": {"b": "c"}}, {"a": ["b", "c"]}, ["a", "b"], ["b", "a"], [["a"], "b"],
              {"a": 1}, {"a": 1.0}, {"a": True}, {"a": "1"}, {"a": None}, {"a": "b", "c": "d"},
              {"c": "d", "a": "b"}, {}, [], [{}], [[]], {"a": {}}, {"a": []}, OrderedDict([("a", 1)])]
    ids = [translator._content_id(v) for v in values]
    assert len(set(ids[:-1])) == len(ids) - 1  # key order, nesting and scalar types all count
    assert ids[-1] == ids[values.index({"a": 1})]  # a dict subclass is read as a dict
    assert translator._content_id(json.loads(json.dumps(values[2]))) == ids[2]  # equal content, another object


def test_each_copy_keeps_its_warning(monkeypatch):
    encoded = {"type": "string", "contentEncoding": "base64"}
    schema = padded({"properties": {"a": dict(encoded), "b": dict(encoded)}})
    warnings = Grammar.from_json_schema(schema).warnings
    assert any("/properties/a/contentEncoding" in w for w in warnings)
    assert any("/properties/b/contentEncoding" in w for w in warnings)
    assert warnings == unshared(monkeypatch, schema).warnings


def test_one_alternative_has_no_unit_rule():
    grammar = Grammar.from_json_schema({"type": "object", "properties": {"a": {"type": "string"}}})
    names = grammar.ir.nonterminals
    assert not any(names[lhs].startswith("schema:") for lhs, _ in grammar.ir.rules)


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"next": {"$ref": "#"}, "v": {"type": "integer"}}},
    {"definitions": {"n": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"$ref": "#/definitions/n"}}]}},
     "$ref": "#/definitions/n"},
])
def test_recursive_schemas_keep_their_nonterminal(byte_vocab, schema):
    compiled = compile_for(Grammar.from_json_schema(schema), byte_vocab)
    if "definitions" in schema:
        assert accepts(compiled, "[1, [2, [[3]]], []]") and not accepts(compiled, '[1, "x"]')
    else:
        assert accepts(compiled, '{"next": {"next": {"v": 2}}, "v": 1}') and not accepts(compiled, '{"next": 1}')


def test_arrays_of_the_same_items_and_bounds_are_one_nonterminal(byte_vocab):
    ids = {"type": "array", "items": {"type": "string", "pattern": "^[a-f0-9]{4}$"}, "maxItems": 300}
    schema = {"type": "object", "properties": {"a": dict(ids), "b": dict(ids), "c": {**ids, "maxItems": 2},
                                               "d": {**ids, "minItems": 1}}}
    grammar = Grammar.from_json_schema(schema)
    one = Grammar.from_json_schema({"type": "object", "properties": {"a": ids}})
    two = Grammar.from_json_schema({"type": "object", "properties": {"a": ids, "b": dict(ids)}})
    assert len(one.ir.rules) > 600 and len(two.ir.rules) < len(one.ir.rules) + 10  # b's 300 optionals are a's
    compiled = compile_for(grammar, byte_vocab)
    assert accepts(compiled, json.dumps({"a": ["abcd"] * 300, "b": ["0000"], "c": ["1111", "2222"], "d": ["dddd"]}))
    assert not accepts(compiled, json.dumps({"b": ["abcd"] * 301}))
    assert not accepts(compiled, json.dumps({"c": ["abcd"] * 3}))
    assert not accepts(compiled, json.dumps({"d": []}))
    assert accepts(compiled, json.dumps({"a": [], "b": []}))
