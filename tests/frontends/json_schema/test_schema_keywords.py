"""Per keyword, schemas with instances that must be accepted and rejected (JSON-Schema-Test-Suite
style), each verdict cross-checked with the ``jsonschema`` validator."""

from __future__ import annotations

import pytest
from schema_helpers import accepts, accepts_text

jsonschema = pytest.importorskip("jsonschema")

OBJ = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}

# (name, schema, [instances accepted], [instances rejected])
CASES = [
    ("empty schema", {}, [1, "x", None, [1, {"a": [True]}], {"k": {"n": 1.5}}], []),
    ("true", True, [1, {"a": 2}], []),
    ("false", False, [], [1, None, {}]),
    ("type null", {"type": "null"}, [None], [0, "null", False]),
    ("type boolean", {"type": "boolean"}, [True, False], [0, None]),
    ("type integer", {"type": "integer"}, [0, -3, 12], [1.5, "1", None]),
    ("type number", {"type": "number"}, [0, 1.5, -2e-3], ["1", None]),
    ("type string", {"type": "string"}, ["", "a\"b", "é\n"], [1, None]),
    ("type list", {"type": ["string", "null"]}, ["x", None], [1, {}]),
    ("nullable", {"type": "integer", "nullable": True}, [1, None], ["1"]),
    ("properties", OBJ, [{}, {"a": 1}, {"a": 1, "b": "x"}, {"a": 1, "c": [1]}], [{"a": "1"}, {"b": 2}]),
    ("required", {**OBJ, "required": ["a"]}, [{"a": 1}, {"a": 1, "b": "x"}], [{}, {"b": "x"}]),
    ("required undeclared", {"type": "object", "required": ["z"], "additionalProperties": {"type": "integer"},
                             "properties": {"a": {}}}, [{"z": 1}, {"a": 1, "z": 2}], [{}, {"a": 1}, {"z": "s"}]),
    ("required but forbidden", {"type": "object", "required": ["z"], "additionalProperties": False}, [],
     [{}, {"z": 1}]),
    ("additionalProperties false", {**OBJ, "additionalProperties": False},
     [{}, {"a": 1}], [{"c": 1}, {"a": 1, "c": 2}]),
    ("additionalProperties schema", {**OBJ, "additionalProperties": {"type": "boolean"}},
     [{"a": 1, "c": True}, {"z": False}], [{"c": 1}, {"a": 1, "c": "x"}]),
    ("additional key may not be declared", {"type": "object", "properties": {"a": {"type": "integer"}},
                                            "additionalProperties": {"type": "string"}},
     [{"a": 1}, {"x": "y"}], [{"a": "s"}]),
    ("propertyNames enum", {"type": "object", "propertyNames": {"enum": ["x", "y"]}},
     [{}, {"x": 1}, {"x": 1, "y": 2}], [{"z": 1}]),
    ("minProperties", {"type": "object", "minProperties": 2}, [{"a": 1, "b": 2}], [{}, {"a": 1}]),
    ("maxProperties", {**OBJ, "maxProperties": 1}, [{}, {"a": 1}, {"z": 1}], [{"a": 1, "b": "x"}]),
    ("min and max properties", {"type": "object", "minProperties": 1, "maxProperties": 2},
     [{"a": 1}, {"a": 1, "b": 2}], [{}, {"a": 1, "b": 2, "c": 3}]),
    ("items", {"type": "array", "items": {"type": "integer"}}, [[], [1, 2]], [[1, "x"], ["x"]]),
    ("prefixItems", {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}],
                     "items": False}, [[], ["a"], ["a", 1]], [[1], ["a", 1, 2]]),
    ("items array (draft 7)", {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array",
                               "items": [{"type": "string"}], "additionalItems": {"type": "integer"}},
     [["a"], ["a", 1, 2]], [[1], ["a", "b"]]),
    ("minItems maxItems", {"type": "array", "minItems": 1, "maxItems": 2}, [[1], [1, "x"]], [[], [1, 2, 3]]),
    ("contains", {"type": "array", "contains": {"const": 3}}, [[3], [1, 3, 2]], [[], [1, 2]]),
    ("minContains", {"type": "array", "contains": {"type": "string"}, "minContains": 2},
     [["a", 1, "b"]], [["a", 1]]),
    ("uniqueItems with maxItems 1", {"type": "array", "uniqueItems": True, "maxItems": 1}, [[], [1]], [[1, 1]]),
    ("enum", {"enum": ["a", 1, None, [1, 2], {"k": True}]},
     ["a", 1, 1.0, None, [1, 2], {"k": True}], ["b", 2, True, [2, 1], {"k": False}]),
    ("enum filtered by type", {"type": "string", "enum": ["a", 1]}, ["a"], [1]),
    ("const", {"const": {"x": [1, "y"]}}, [{"x": [1, "y"]}], [{"x": [1]}, {}]),
    ("object enum with sibling keywords", {"type": "object", "required": ["k"], "properties": {"k": {"type": "integer"}},
                                            "enum": [{"k": 1}, {"k": "x"}, {"j": 1}, [1]]}, [{"k": 1}],
     [{"k": "x"}, {"j": 1}, [1]]),
    ("array enum with sibling keywords", {"type": "array", "items": {"type": "string"}, "maxItems": 1,
                                          "enum": [["a"], [1], ["a", "b"]]}, [["a"]], [[1], ["a", "b"]]),
    ("const false is not 0", {"const": False}, [False], [0]),
    ("dependentRequired", {"type": "object", "dependentRequired": {"a": ["b"]}},
     [{}, {"b": 1}, {"a": 1, "b": 2}], [{"a": 1}]),
    ("dependentSchemas", {"type": "object", "dependentSchemas": {"a": {"properties": {"b": {"type": "string"}}}}},
     [{"b": 1}, {"a": 1, "b": "x"}], [{"a": 1, "b": 2}]),
    ("dependencies (draft 7)", {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                                "dependencies": {"a": ["b"], "c": {"required": ["d"]}}},
     [{}, {"a": 1, "b": 2}, {"c": 1, "d": 2}], [{"a": 1}, {"c": 1}]),
    ("anyOf", {"anyOf": [{"type": "string"}, {"type": "integer"}]}, ["x", 1], [None, 1.5]),
    ("anyOf with siblings", {"type": "object", "properties": {"k": {"type": "integer"}},
                             "anyOf": [{"required": ["k"]}, {"required": ["j"]}]},
     [{"k": 1}, {"j": 1}], [{}, {"k": "x"}]),
    ("oneOf disjoint types", {"oneOf": [{"type": "string"}, {"type": "null"}]}, ["x", None], [1]),
    ("oneOf discriminator", {"oneOf": [
        {"type": "object", "properties": {"t": {"const": "a"}, "x": {"type": "integer"}}, "required": ["t"]},
        {"type": "object", "properties": {"t": {"const": "b"}, "x": {"type": "string"}}, "required": ["t"]}]},
     [{"t": "a", "x": 1}, {"t": "b", "x": "s"}], [{"t": "a", "x": "s"}, {"x": 1}]),
    ("oneOf overlapping, negated", {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
     [{"a": 1}, {"b": 1}], [{"a": 1, "b": 2}, {}]),
    ("allOf", {"allOf": [OBJ, {"required": ["b"]}, {"properties": {"b": {"enum": ["x", "y", 3]}}}]},
     [{"b": "x"}, {"a": 1, "b": "y"}], [{"b": 3}, {"a": 1}, {"b": "z"}]),
    ("allOf additionalProperties", {"allOf": [{"properties": {"a": {}}, "additionalProperties": False},
                                              {"properties": {"b": {}}}]},
     [{}, {"a": 1}], [{"b": 1}]),
    ("not type", {"not": {"type": ["string", "null"]}}, [1, {}, [1]], ["x", None]),
    ("not required", {"type": "object", "not": {"required": ["a", "b"]}},
     [{}, {"a": 1}, {"b": 1}], [{"a": 1, "b": 2}]),
    ("not enum of strings", {"type": "string", "not": {"enum": ["a", "b"]}}, ["c", "ab"], ["a", "b"]),
    ("if then else", {"type": "object", "properties": {"k": {"type": "string"}},
                      "if": {"properties": {"k": {"const": "n"}}, "required": ["k"]},
                      "then": {"required": ["n"]}, "else": {"required": ["s"]}},
     [{"k": "n", "n": 1}, {"k": "x", "s": 1}, {"s": 1}], [{"k": "n", "s": 1}, {"k": "x", "n": 1}]),
    ("$ref and $defs", {"$defs": {"p": {"type": "integer"}}, "type": "array", "items": {"$ref": "#/$defs/p"}},
     [[1, 2]], [["x"]]),
    ("recursive $ref", {"$defs": {"t": {"type": "object", "properties": {"kids": {"type": "array",
                        "items": {"$ref": "#/$defs/t"}}}, "additionalProperties": False}}, "$ref": "#/$defs/t"},
     [{}, {"kids": [{}, {"kids": [{}]}]}], [{"kids": [{"x": 1}]}, {"kids": [1]}]),
    ("definitions and $anchor", {"definitions": {"a": {"$anchor": "num", "type": "number"}},
                                 "properties": {"x": {"$ref": "#num"}, "y": {"$ref": "#/definitions/a"}}},
     [{"x": 1, "y": 2}], [{"x": "s"}, {"y": "s"}]),
    ("$ref with siblings (2020-12)", {"$defs": {"o": {"type": "object"}}, "$ref": "#/$defs/o",
                                      "required": ["a"]}, [{"a": 1}], [{}]),
    ("$ref siblings ignored (draft 7)", {"$schema": "http://json-schema.org/draft-07/schema#",
                                         "definitions": {"o": {"type": "object"}}, "$ref": "#/definitions/o",
                                         "required": ["a"]}, [{"a": 1}, {}], [1]),
    ("if ignored under draft 4", {"$schema": "http://json-schema.org/draft-04/schema#", "type": "object",
                                  "if": {"required": ["a"]}, "then": {"required": ["b"]}}, [{"a": 1}], [1]),
    ("annotations ignored", {"title": "t", "description": "d", "default": 3, "examples": [1], "type": "integer",
                             "x-vendor": {"anything": True}, "readOnly": True}, [3], ["3"]),
]


NOT_IN_JSONSCHEMA = {"nullable"}  # OpenAPI's keyword: the oracle does not know it


@pytest.mark.parametrize("name,schema,good,bad", CASES, ids=[c[0] for c in CASES])
def test_keyword(name, schema, good, bad):
    validator = jsonschema.validators.validator_for(schema if isinstance(schema, dict) else {})(schema)
    oracle = name not in NOT_IN_JSONSCHEMA
    for value in good:
        assert not oracle or validator.is_valid(value), f"test data: {value!r} should be valid"
        assert accepts(schema, value), f"{name}: {value!r} rejected"
    for value in bad:
        assert not oracle or not validator.is_valid(value), f"test data: {value!r} should be invalid"
        assert not accepts(schema, value), f"{name}: {value!r} accepted"


def test_declared_order_and_any_order():
    schema = {**OBJ, "required": ["a", "b"]}
    assert accepts(schema, {"a": 1, "b": "x"})
    assert not accepts(schema, {"b": "x", "a": 1})
    assert accepts(schema, {"b": "x", "a": 1}, any_order=True)
    assert not accepts(schema, {"b": "x"}, any_order=True)
    assert accepts(schema, {"a": 1, "c": 3, "b": "x"}, any_order=True)


@pytest.mark.parametrize("text,ok", [
    ('{"a": 1, "b": "x"}', True),
    ('{\n  "a": 1,\n  "b": "x"\n}', True),
    ('{"a":1,"b":"x"}', True),
    ('{"a": 1' + " " * 20 + ', "b": "x"}', True),
    ('{"a": 1' + " " * 21 + ', "b": "x"}', False),
    (' {"a": 1}', False),
    ('{"a": 1} ', False),
    ('[ ]', False),
])
def test_flexible_whitespace_is_bounded(text, ok):
    assert accepts_text(OBJ if text[0] != "[" else {"type": "object"}, text) is ok


def test_declared_name_is_not_an_additional_key_in_another_spelling():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}}
    assert accepts_text(schema, '{"b": "x"}')
    assert not accepts_text(schema, '{"\\u0061": "x"}')
    assert not accepts_text(schema, '{"\\u0061": 1}')  # only the canonical spelling is declared


def test_compact_and_custom_whitespace():
    assert accepts_text(OBJ, '{"a":1}', whitespace="compact")
    assert not accepts_text(OBJ, '{"a": 1}', whitespace="compact")
    assert accepts_text({"type": "array"}, "[1,   2]", whitespace=3)
    assert not accepts_text({"type": "array"}, "[1,    2]", whitespace=3)


def test_json_text_and_pydantic_model():
    assert accepts('{"type": "array", "items": {"type": "boolean"}}', [True])
    pydantic = pytest.importorskip("pydantic")

    class Point(pydantic.BaseModel):
        x: int
        label: str | None = None

    assert accepts(Point, {"x": 1, "label": None})
    assert not accepts(Point, {"label": "a"})
