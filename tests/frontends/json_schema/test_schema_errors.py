"""Unsupported and malformed schemas: the error names the keyword and its JSON pointer; under
``lenient`` the keyword is skipped and listed in ``Grammar.warnings``."""

from __future__ import annotations

import pytest

from leapgram import Grammar, GrammarError, UnsupportedError

UNSUPPORTED = [
    ({"type": "object", "dependentRequired": {k: ["z"] for k in "abcde"}}, "dependentRequired",
     "/dependentRequired"),
    ({"properties": {"x": {"unevaluatedProperties": False}}}, "unevaluatedProperties",
     "/properties/x/unevaluatedProperties"),
    ({"type": "array", "uniqueItems": True}, "uniqueItems", "/uniqueItems"),
    ({"type": "array", "contains": {"type": "string"}, "maxContains": 2}, "maxContains", "/maxContains"),
    ({"not": {"type": "string", "minLength": 3}}, "not", "/not"),
    ({"oneOf": [{"type": "object"}, {"properties": {"a": {"minimum": 3}}}]}, "oneOf", "/oneOf"),
    ({"$ref": "other.json#/x"}, "$ref", "/$ref"),
    ({"allOf": [{"anyOf": [{"required": [f"a{i}"]}, {"required": [f"b{i}"]}]} for i in range(9)]}, "anyOf",
     "/allOf/8/anyOf"),
    ({"$defs": {"r": {"$ref": "#/$defs/r", "type": "object"}}, "$ref": "#/$defs/r", "required": ["a"]},
     "$ref", "/$defs/r/$ref"),
]

MALFORMED = [
    ({"type": "strng"}, "type must be one of", "/type"),
    ({"type": "array", "minItems": -1}, "minItems must be a non-negative integer", "/minItems"),
    ({"$ref": "#/$defs/missing"}, "does not exist", "/$ref"),
    ({"anyOf": []}, "anyOf must be a non-empty array", "/anyOf"),
    ({"properties": {"a": 3}}, "a schema must be an object or a boolean", "/properties/a"),
    ({"type": "object", "required": "a"}, "required must be an array of strings", "/required"),
]


@pytest.mark.parametrize("schema,keyword,pointer", UNSUPPORTED)
def test_unsupported_names_keyword_and_pointer(schema, keyword, pointer):
    with pytest.raises(UnsupportedError) as info:
        Grammar.from_json_schema(schema)
    assert info.value.feature == keyword
    assert info.value.pointer == pointer
    assert repr(keyword) in str(info.value) or keyword in str(info.value)
    assert pointer in str(info.value)


@pytest.mark.parametrize("schema,message,pointer", MALFORMED)
def test_malformed_schema_is_located(schema, message, pointer):
    with pytest.raises(GrammarError) as info:
        Grammar.from_json_schema(schema)
    assert not isinstance(info.value, UnsupportedError)
    assert message in str(info.value)
    assert info.value.pointer == pointer


def test_lenient_lists_skipped_keywords():
    grammar = Grammar.from_json_schema({"type": "array", "uniqueItems": True}, lenient=True)
    assert len(grammar.warnings) == 1
    assert "/uniqueItems" in grammar.warnings[0] and "uniqueItems" in grammar.warnings[0]
    assert Grammar.from_json_schema({"type": "array"}).warnings == ()


def test_bad_json_text_and_options():
    with pytest.raises(GrammarError, match="not valid JSON"):
        Grammar.from_json_schema('{"type": ')
    with pytest.raises(GrammarError, match="whitespace"):
        Grammar.from_json_schema({}, whitespace="loose")
    with pytest.raises(GrammarError, match="dict, JSON text or a Pydantic"):
        Grammar.from_json_schema(3.5)
