"""Keywords beside applicators: a schema's ``additionalProperties`` and ``items`` see only its own
``properties``, ``patternProperties`` and ``prefixItems``, never those inside ``allOf`` branches;
``$ref`` with a sibling ``$id`` (drafts 4-7) and references under a URN base; overlapping and
merged ``patternProperties``, ``not integer``, ``multipleOf`` by remainders, ``contains`` with
its counts; ``unevaluated*`` beside every applicator. Each case is checked against ``jsonschema``."""

from __future__ import annotations

import json

import pytest
from test_json_schema_suite import accepts, compile_schema

jsonschema = pytest.importorskip("jsonschema")

D2020 = "https://json-schema.org/draft/2020-12/schema"
D7 = "http://json-schema.org/draft-07/schema#"

# (name, schema, valid instances, invalid instances)
CASES = [
    ("additionalProperties beside allOf", {"allOf": [{"properties": {"foo": {}}}], "additionalProperties": {"type": "boolean"}},
     [{"foo": True}, {}], [{"foo": 1}, {"foo": 1, "bar": True}]),
    ("additionalProperties false beside allOf", {"allOf": [{"properties": {"foo": {}}}], "additionalProperties": False},
     [{}], [{"foo": 1}]),
    ("additionalProperties in a branch", {"properties": {"a": {"type": "integer"}},
                                          "allOf": [{"properties": {"b": {}}, "additionalProperties": {"type": "string"}}]},
     [{"b": 1}, {"b": [1], "c": "s"}, {}], [{"a": 1}, {"a": "x"}, {"c": 1}]),
    ("additionalProperties with patterns in a branch", {"properties": {"xa": {}, "b": {}},
                                                        "allOf": [{"patternProperties": {"^x": {"type": "integer"}},
                                                                   "additionalProperties": False}]},
     [{"xa": 1}, {}], [{"xa": "s"}, {"b": 1}]),
    ("items beside prefixItems in allOf", {"$schema": D2020, "allOf": [{"prefixItems": [{"minimum": 3}]}],
                                           "items": {"minimum": 5}},
     [[5, 5], [6]], [[3, 5], [4], [5, 4]]),
    ("prefixItems on both sides", {"$schema": D2020, "prefixItems": [{"type": "integer"}],
                                   "allOf": [{"prefixItems": [{"minimum": 2}, {"type": "string"}], "items": False}]},
     [[2, "a"], [3]], [[1], [2, 3], [2, "a", 3], ["2"]]),
    ("draft 7 items array in allOf", {"$schema": D7, "allOf": [{"items": [{"type": "integer"}], "additionalItems": False}],
                                      "items": {"minimum": 1}},
     [[1], []], [[0], [1, 2], ["a"]]),
    ("$ref beside $id in draft 7", {"$schema": D7, "$id": "http://x.test/base/",
                                    "definitions": {"a": {"$id": "http://x.test/a.json", "type": "string"},
                                                    "b": {"$id": "a.json", "type": "number"}},
                                    "allOf": [{"$id": "http://x.test/", "$ref": "a.json"}]},
     [1], ["a"]),
    ("fragment $ref under a URN", {"$schema": D2020, "$id": "urn:uuid:deadbeef-1234-0000-0000-4321feebdaed",
                                   "properties": {"foo": {"$ref": "#/$defs/bar"}}, "$defs": {"bar": {"type": "string"}}},
     [{"foo": "x"}], [{"foo": 1}]),
    ("draft 4 ignores const and if", {"$schema": "http://json-schema.org/draft-04/schema#",
                                      "properties": {"a": {"not": {"const": 1}}, "b": {"if": {}, "then": False}}},
     [{"b": 2}, {}], [{"a": 2}, {"a": 1}]),
    ("draft 4 ignores const inside the array form of items", {"$schema": "http://json-schema.org/draft-04/schema#",
                                                               "properties": {"a": {"items": [{"const": 1}]},
                                                                              "b": {"items": [{"not": {"const": 1}}]}}},
     [{"a": [2]}, {"b": []}], [{"b": [2]}, {"b": [1]}]),
    ("$ref to a $dynamicAnchor", {"$schema": D2020, "$id": "https://x.test/root", "items": {"$ref": "#items"},
                                  "$defs": {"foo": {"$dynamicAnchor": "items", "type": "string"}}},
     [["a"]], [[1]]),    ("additionalProperties false beside a branch's patternProperties",
     {"allOf": [{"additionalProperties": False}, {"patternProperties": {"^a": {}}}]}, [{}], [{"a": 1}, {"b": 1}]),
    ("additionalProperties beside a branch's patternProperties",
     {"allOf": [{"patternProperties": {"^a": {"type": "integer"}}}, {"additionalProperties": {"type": "string"}}]},
     [{"b": "s"}, {}], [{"a": 1}, {"a": "s"}, {"b": 1}]),
    ("overlapping patternProperties", {"patternProperties": {"a*": {"type": "integer"}, "aaa*": {"maximum": 20}}},
     [{"a": 21}, {"aaaa": 18}, {"b": 1}], [{"aaaa": 31}, {"aaa": "foo"}, {"a": "x"}, {"b": "x"}]),
    ("patternProperties merged from allOf", {"patternProperties": {"^a": {"type": "integer"}},
                                             "allOf": [{"patternProperties": {"b$": {"minimum": 3}}}]},
     [{"ab": 3}, {"b": "s"}, {"a": 1}], [{"ab": 2}, {"ab": "s"}, {"a": "s"}]),
    ("not integer", {"not": {"type": "integer"}}, [1.5, "a", -0.25], [1, -3]),
    ("not integer merged with integer", {"if": {"type": "integer"}, "then": {"not": {"type": "boolean"}},
                                         "else": {"type": ["integer", "boolean"]}},
     [3, -2, True], [2.5, -565.5, "a", None]),
    ("not an integer schema", {"not": {"type": "integer", "minimum": 3}}, [1.5, "a", 2, -1], [3, 10]),
    ("multipleOf 1.5", {"type": "number", "multipleOf": 1.5}, [0, 4.5, -3, 1.5, 3], [35, 1.4, 0.5]),
    ("multipleOf 3 among integers", {"type": "integer", "multipleOf": 3}, [0, 9, -12, 300], [10, 7, -1]),
    ("multipleOf 0.3", {"multipleOf": 0.3}, [0.6, -0.9, 3, 0], [0.5, 1, 0.31]),
    ("minContains and maxContains", {"$schema": D2020, "contains": {"const": 1}, "minContains": 1,
                                     "maxContains": 2, "maxItems": 4},
     [[1], [1, 2, 1], [2, 1, 3]], [[], [2], [1, 1, 1], [1, 2, 3, 4, 1]]),
    ("contains after prefixItems", {"$schema": D2020, "prefixItems": [{"type": "string"}], "contains": {"type": "integer"}},
     [["a", 1], ["a", "b", 2]], [["a"], ["a", "b"], [1]]),
    ("oneOf tagged apart among objects only", {"type": "array", "items": {"oneOf": [
        {"required": ["op"], "properties": {"op": {"const": "add"}}},
        {"required": ["op"], "properties": {"op": {"const": "remove"}}, "type": "object"},
        {"required": ["op"], "properties": {"op": {"enum": ["move", "copy"]}}}]}},
     [[{"op": "add"}, {"op": "copy"}], []], [[1], [False], [{"op": "x"}]]),
    ("oneOf tagged apart, additionalProperties false", {"type": "array", "items": {"oneOf": [
        {"required": ["op", "a"], "properties": {"op": {"const": "add"}, "a": {}}, "additionalProperties": False},
        {"required": ["op"], "properties": {"op": {"const": "remove"}}, "additionalProperties": False}]}},
     [[{"op": "add", "a": 1}, {"op": "remove"}]], [[1], [None], [{"op": "remove", "a": 1}], [{"op": "add"}]]),
    ("draft 4: an integer enum value is not written as a float", {"$schema": "http://json-schema.org/draft-04/schema#",
                                                                   "type": "integer", "enum": [0, 2]},
     [0, 2], [0.0, 2.0, 1]),
    ("maxContains 0", {"$schema": D2020, "contains": {"type": "string"}, "minContains": 0, "maxContains": 0},
     [[], [1, 2]], [["a"], [1, "b"]]),
]


@pytest.mark.parametrize(("name", "schema", "valid", "invalid"), CASES, ids=[c[0] for c in CASES])
def test_keywords_beside_applicators(name, schema, valid, invalid):
    compiled = compile_schema(schema)
    validator = jsonschema.validators.validator_for(schema)(schema)
    for value in valid:
        assert validator.is_valid(value), value
        assert accepts(compiled, json.dumps(value)), value
    for value in invalid:
        assert not validator.is_valid(value), value
        assert not accepts(compiled, json.dumps(value)), value


UNEVALUATED = [
    ("unevaluatedProperties alone", {"$schema": D2020, "properties": {"a": {}}, "patternProperties": {"^x": {}},
                                     "unevaluatedProperties": {"type": "integer"}},
     [{"a": "s", "xy": "s", "b": 1}, {}], [{"b": "s"}]),
    ("unevaluatedProperties sees allOf and $ref", {"$schema": D2020, "$defs": {"c": {"properties": {"c": {}}}},
                                                   "allOf": [{"properties": {"b": {}}}], "$ref": "#/$defs/c",
                                                   "properties": {"a": {}}, "unevaluatedProperties": False},
     [{"c": 1}, {"c": 3, "b": 2, "a": 1}], [{"d": 1}, {"a": 1, "d": 2}]),  # declared order: $ref, allOf, own
    ("unevaluatedProperties after additionalProperties in a part", {
        "$schema": D2020, "allOf": [{"additionalProperties": {"type": "string"}}], "unevaluatedProperties": False},
     [{"a": "s"}], [{"a": 1}]),
    ("unevaluatedItems sees prefixItems in allOf", {"$schema": D2020, "prefixItems": [{"type": "integer"}],
                                                    "allOf": [{"prefixItems": [{}, {"type": "string"}]}],
                                                    "unevaluatedItems": False},
     [[1, "a"], [1], []], [[1, "a", 2], ["a"], [1, 2]]),
    ("unevaluatedItems after items in a part", {"$schema": D2020, "allOf": [{"items": {"type": "integer"}}],
                                                "unevaluatedItems": False},
     [[1, 2]], [["a"]]),    ("unevaluatedProperties beside anyOf (one branch's names)", {
        "$schema": D2020, "properties": {"foo": {}}, "anyOf": [{"properties": {"bar": {"const": 1}}, "required": ["bar"]},
                                                                {"properties": {"baz": {"const": 2}}, "required": ["baz"]}],
        "unevaluatedProperties": False},
     [{"foo": 0, "bar": 1}, {"baz": 2}], [{"bar": 1, "qux": 3}, {"foo": 0}, {"bar": 2, "baz": 2}]),
    ("unevaluatedProperties beside oneOf", {
        "$schema": D2020, "oneOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]},
                                    {"properties": {"b": {"type": "string"}}, "required": ["b"]}],
        "unevaluatedProperties": False},
     [{"a": 1}, {"b": "s"}], [{"a": 1, "b": "s"}, {"a": 1, "c": 1}, {}]),
    ("unevaluatedProperties beside not", {"$schema": D2020, "properties": {"a": {}}, "not": {"required": ["b"]},
                                          "unevaluatedProperties": False},
     [{"a": 1}, {}], [{"b": 1}, {"c": 1}]),
    ("unevaluatedProperties beside if/then/else", {
        "$schema": D2020, "if": {"properties": {"k": {"const": "t"}}, "required": ["k"]},
        "then": {"properties": {"t": {}}}, "else": {"properties": {"e": {}}}, "unevaluatedProperties": False},
     [{"k": "t", "t": 1}, {"e": 1}, {}], [{"k": "t", "e": 1}, {"t": 1}, {"k": "x"}]),
    ("unevaluatedProperties beside dependentSchemas", {
        "$schema": D2020, "properties": {"a": {}}, "dependentSchemas": {"a": {"properties": {"b": {}}}},
        "unevaluatedProperties": False},
     [{"a": 1, "b": 2}, {"a": 1}, {}], [{"b": 2}, {"a": 1, "c": 1}]),
    ("unevaluatedProperties in a part does not see its cousin", {
        "$schema": D2020, "allOf": [{"properties": {"foo": {}}}, {"unevaluatedProperties": False}]},
     [{}], [{"foo": 1}]),
    ("nested unevaluatedProperties evaluates every property", {
        "$schema": D2020, "allOf": [{"properties": {"foo": {"type": "string"}}, "unevaluatedProperties": True}],
        "unevaluatedProperties": False},
     [{"foo": "a", "bar": 1}], [{"foo": 1}]),
    ("unevaluatedItems beside contains", {"$schema": D2020, "prefixItems": [{}], "contains": {"type": "string"},
                                          "unevaluatedItems": False},
     [[1, "a"], ["a"], [1, "a", "b"]], [[1, 2], [1, "a", 2]]),
    ("unevaluatedItems beside if without then", {"$schema": D2020, "if": {"prefixItems": [{"const": "a"}]},
                                                  "unevaluatedItems": False},
     [["a"], []], [["b"], ["a", "b"]]),
]


@pytest.mark.parametrize(("name", "schema", "valid", "invalid"), UNEVALUATED, ids=[c[0] for c in UNEVALUATED])
def test_unevaluated(name, schema, valid, invalid):
    test_keywords_beside_applicators(name, schema, valid, invalid)
