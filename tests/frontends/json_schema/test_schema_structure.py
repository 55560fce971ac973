"""The JSON Schema front end, keyword by keyword, in the style of the JSON-Schema-Test-Suite:
each schema with instances it must accept and reject (checked against ``jsonschema`` too, so
the table itself is right), the refusals and their messages, and JSONSchemaBench samples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import leapgram
from leapgram import Grammar, GrammarError, UnsupportedError, Vocabulary
from tests.helpers.compiling import compile_for
from tests.helpers.schema_acceptance import accepts, texts

jsonschema = pytest.importorskip("jsonschema")

BENCH = Path(__file__).resolve().parents[2] / "data" / "jsonschemabench"  # 190 cases of JSONSchemaBench

OBJ = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"]}

# (name, schema, valid instances, invalid instances)
TABLE = [
    ("type string", {"type": "string"}, ["", "x", "é\n\"", "\u0000"], [1, None, [], {}]),
    ("type list", {"type": ["integer", "null"]}, [0, -12, None], [1.5, "1", True]),
    ("integer", {"type": "integer"}, [0, 7, -3, 10**20], [0.5, "7", False]),
    ("number", {"type": "number"}, [0, -0.5, 1e-05, 1e+20, 3], ["0", None]),
    ("boolean and null", {"type": ["boolean", "null"]}, [True, False, None], [0, "true"]),
    ("no type", {}, [1, "x", None, [1, {"a": []}], {"k": [True]}], []),
    ("true schema", True, [1, "x", {"a": None}], []),
    ("nullable", {"type": "string", "nullable": True}, ["x", None], [1]),
    ("const string", {"const": "a\"b"}, ["a\"b"], ["a", "ab", 1]),
    ("const number", {"const": 2}, [2, 2.0], [3, "2"]),
    ("const object", {"const": {"x": [1, None]}}, [{"x": [1, None]}], [{"x": [1]}, {"y": [1, None]}]),
    ("enum mixed", {"enum": ["red", 1, None, [1, 2], {"k": True}]}, ["red", 1, None, [1, 2], {"k": True}],
     ["blue", 2, [2, 1], {"k": False}, False]),
    ("enum with type", {"type": "string", "enum": ["a", 1]}, ["a"], [1, "b"]),
    ("object required", OBJ, [{"a": 1}, {"a": 1, "b": "x"}, {"a": 1, "c": [None]}, {"c": 0, "a": 1}],
     [{}, {"b": "x"}, {"a": "1"}, {"a": 1, "b": 2}, []]),
    ("additionalProperties false", {**OBJ, "additionalProperties": False}, [{"a": 1, "b": "x"}],
     [{"a": 1, "c": 0}, {"a": 1, "b": "x", "bb": "y"}]),
    ("additionalProperties schema", {**OBJ, "additionalProperties": {"type": "boolean"}},
     [{"a": 1, "z": True}, {"z": False, "a": 1, "y": True}], [{"a": 1, "z": 1}]),
    ("required undeclared", {"type": "object", "required": ["k"]}, [{"k": 1}, {"x": 2, "k": None}], [{"x": 1}, {}]),
    ("min/maxProperties", {"type": "object", "minProperties": 1, "maxProperties": 2},
     [{"a": 1}, {"a": 1, "b": 2}], [{}, {"a": 1, "b": 2, "c": 3}]),
    ("min/maxProperties declared", {"type": "object", "properties": {"a": {}, "b": {}}, "additionalProperties": False,
                                    "minProperties": 1}, [{"a": 1}, {"b": 2}, {"a": 1, "b": 2}], [{}]),
    ("propertyNames enum", {"type": "object", "propertyNames": {"enum": ["x", "y"]}}, [{"x": 1}, {}, {"y": 2, "x": 1}],
     [{"z": 1}]),
    ("propertyNames oneOf with a type no key has", {"type": "object", "propertyNames": {"oneOf": [
        {"type": "number", "minimum": 1}, {"type": "string", "pattern": "^[1-9][0-9]*$"}]}},
     [{"12": 1}, {}, {"7": 1, "30": {}}], [{"abc": 1}, {"12": 1, "0": 2}]),
    ("propertyNames type", {"type": "object", "propertyNames": {"type": "integer"}}, [{}], [{"1": 1}]),
    ("propertyNames anyOf", {"type": "object", "propertyNames": {"anyOf": [{"const": "a"}, {"pattern": "^x"}]}},
     [{"a": 1, "xy": 2}, {"x": 0}], [{"b": 1}, {"a": 1, "yx": 2}]),
    ("propertyNames not", {"type": "object", "propertyNames": {"not": {"enum": ["a", "b"]}}},
     [{"c": 1}, {"ab": 1}], [{"a": 1}]),
    ("propertyNames allOf", {"type": "object", "propertyNames": {"allOf": [{"maxLength": 3}, {"pattern": "^[a-z]+$"}]}},
     [{"abc": 1}], [{"abcd": 1}, {"A": 1}]),
    ("propertyNames overlapping oneOf", {"type": "object", "propertyNames": {"oneOf": [{"maxLength": 2},
                                                                                        {"pattern": "^a"}]}},
     [{"b": 1, "abc": 2}], [{"ab": 1}]),
    ("propertyNames if/then/else", {"type": "object", "propertyNames": {"if": {"pattern": "^a"},
                                                                        "then": {"maxLength": 2}, "else": {"minLength": 3}}},
     [{"ab": 1, "xyz": 2}], [{"abc": 1}, {"xy": 1}]),
    ("propertyNames $ref", {"type": "object", "propertyNames": {"$ref": "#/$defs/k"},
                            "$defs": {"k": {"type": "string", "maxLength": 1}}}, [{"a": 1}], [{"ab": 1}]),
    ("propertyNames other types' keywords", {"type": "object", "propertyNames": {"minimum": 3, "minItems": 2,
                                                                                 "maxLength": 1}},
     [{"a": 1}], [{"ab": 1}]),
    ("empty object only", {"type": "object", "additionalProperties": False}, [{}], [{"a": 1}]),
    ("items", {"type": "array", "items": {"type": "integer"}}, [[], [1], [1, 2, 3]], [[1, "2"], ["x"], {}]),
    ("min/maxItems", {"type": "array", "minItems": 2, "maxItems": 3}, [[1, 2], [1, "2", None]], [[1], [1, 2, 3, 4]]),
    ("prefixItems", {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": False},
     [[], ["a"], ["a", 1]], [[1], ["a", "b"], ["a", 1, 2]]),
    ("items array draft 7", {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array",
                             "items": [{"type": "string"}], "additionalItems": {"type": "integer"}},
     [["a"], ["a", 1, 2]], [[1], ["a", "b"]]),
    ("contains", {"type": "array", "contains": {"const": 5}}, [[5], [1, 5], [5, 1, 5], [1, 2, 5, 3]], [[], [1, 2]]),
    ("minContains", {"type": "array", "contains": {"type": "string"}, "minContains": 2},
     [["a", "b"], [1, "a", 2, "b"]], [["a"], [1, 2]]),
    ("uniqueItems enum", {"type": "array", "items": {"enum": ["x", "y", "z"]}, "uniqueItems": True},
     [[], ["x"], ["z", "x"], ["x", "y", "z"]], [["x", "x"], ["y", "x", "y"]]),
    ("uniqueItems booleans", {"type": "array", "items": {"type": "boolean"}, "uniqueItems": True, "minItems": 1},
     [[True], [False, True]], [[], [True, True]]),
    ("anyOf", {"anyOf": [{"type": "string"}, {"type": "integer"}]}, ["x", 3], [None, 1.5]),
    ("anyOf with siblings", {"type": "object", "required": ["k"], "anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
     [{"k": 1, "a": 2}, {"k": 1, "b": 2}], [{"a": 2}, {"k": 1}]),
    ("oneOf by type", {"oneOf": [{"type": "string"}, {"type": "array"}]}, ["x", []], [1]),
    ("oneOf by tag", {"oneOf": [
        {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}, "required": ["kind"]},
        {"type": "object", "properties": {"kind": {"const": "b"}, "y": {"type": "string"}}, "required": ["kind"]}]},
     [{"kind": "a", "x": 1}, {"kind": "b", "y": "s"}], [{"kind": "c"}, {"kind": "a", "x": "s"}]),
    ("allOf merge", {"allOf": [{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
                               {"properties": {"b": {"type": "boolean"}}, "required": ["b"]}]},
     [{"a": 1, "b": True}], [{"a": 1}, {"b": True}, {"a": "x", "b": True}]),
    ("allOf types", {"allOf": [{"type": ["string", "integer"]}, {"type": ["integer", "null"]}]}, [3], ["x", None]),
    ("allOf additionalProperties false", {"allOf": [
        {"type": "object", "properties": {"a": {}}, "additionalProperties": False},
        {"properties": {"a": {}, "b": {}}}]}, [{"a": 1}, {}], [{"b": 1}, {"a": 1, "c": 2}]),
    ("not type", {"not": {"type": "string"}}, [1, None, [], {}], ["x"]),
    ("not enum", {"type": "string", "not": {"enum": ["a", "b"]}}, ["c", "", "ab"], ["a", "b"]),
    ("not const boolean", {"type": "boolean", "not": {"const": True}}, [False], [True]),
    ("not required", {"not": {"required": ["a"]}}, [{}, {"b": 1}], [1, "a", {"a": 1}, {"b": 1, "a": 2}]),
    ("not properties", {"type": "object", "not": {"properties": {"a": {"type": "string"}}}},
     [{"a": 1}, {"a": None, "b": "x"}], [{}, {"a": "x"}, {"b": 1}]),
    ("not string keywords", {"not": {"type": "string", "minLength": 3}}, [1, "ab", "", None], ["abc", "abcd"]),
    ("not pattern", {"type": "string", "not": {"pattern": "^a"}}, ["b", "", "ba"], ["a", "abc"]),
    ("not minimum", {"type": "number", "not": {"minimum": 5}}, [4, 4.5, -1], [5, 6.5, "1"]),
    ("not anyOf", {"not": {"anyOf": [{"type": "string"}, {"type": "array", "minItems": 1}]}}, [1, [], None],
     ["x", [1]]),
    ("not items", {"type": "array", "not": {"items": {"type": "string"}}}, [[1, "x"], [None]], [[], ["a", "b"]]),
    ("not contains", {"type": "array", "not": {"contains": {"const": 1}}}, [[], [2, 3]], [[1], [2, 1]]),
    ("not not", {"not": {"not": {"type": "integer"}}}, [1, -3], ["x", 1.5, None]),
    ("not maxItems", {"type": "array", "not": {"maxItems": 1}}, [[1, 2]], [[], [1]]),
    ("not recursive", {"$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}},
                                       "required": ["v"]}},
                       "type": "object", "not": {"$ref": "#/$defs/n"}},
     [{}, {"next": {}}, {"next": {"next": {}}, "v": 1}], [{"v": 1}, {"next": {"v": 2}, "v": 1}]),
    ("if then else", {"type": "object", "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
                      "then": {"required": ["x"]}, "else": {"required": ["y"]}},
     [{"kind": "a", "x": 1}, {"kind": "b", "y": 1}, {"y": 2}], [{"kind": "a", "y": 1}, {"kind": "b", "x": 1}, {}]),
    ("if then only", {"if": {"type": "string"}, "then": {"maxLength": 2}}, ["ab", 1, [1, 2, 3]], ["abc"]),
    ("if ignored by draft 4", {"$schema": "http://json-schema.org/draft-04/schema#", "if": {"type": "string"},
                               "then": {"minLength": 2}}, ["a", 1], []),
    ("dependentRequired", {"type": "object", "dependentRequired": {"a": ["b"]}},
     [{}, {"b": 1}, {"a": 1, "b": 2}], [{"a": 1}, {"a": 1, "c": 2}]),
    ("dependencies draft 7", {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                              "dependencies": {"a": {"required": ["c"]}, "b": ["a"]}},
     [{}, {"a": 1, "c": 2}, {"a": 1, "c": 2, "b": 3}, {"c": 1}], [{"a": 1}, {"b": 1}, {"b": 1, "a": 2}]),
    ("oneOf overlapping strings", {"oneOf": [{"type": "string", "minLength": 2}, {"type": "string", "maxLength": 3}]},
     ["a", "abcd"], ["ab", "abc", 1]),
    ("oneOf overlapping objects", {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
     [{"a": 1}, {"b": 1}], [{"a": 1, "b": 2}, {}, {"c": 1}]),
    ("$ref", {"$defs": {"pos": {"type": "integer"}}, "type": "array", "items": {"$ref": "#/$defs/pos"}},
     [[1, 2]], [["x"]]),
    ("recursive $ref", {"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer"},
                                                                              "next": {"$ref": "#/$defs/node"}},
                                           "required": ["v"], "additionalProperties": False}},
                        "$ref": "#/$defs/node"},
     [{"v": 1}, {"v": 1, "next": {"v": 2, "next": {"v": 3}}}], [{"v": 1, "next": {}}, {"next": {"v": 1}}]),
    ("$anchor", {"$defs": {"x": {"$anchor": "thing", "type": "boolean"}}, "$ref": "#thing"}, [True], [1]),
    ("$id relative", {"$id": "http://example.com/root.json", "$defs": {
        "a": {"$id": "item.json", "type": "integer"}}, "items": {"$ref": "item.json"}, "type": "array"},
     [[1, 2]], [["1"]]),
    ("definitions draft 4", {"definitions": {"s": {"type": "string"}}, "properties": {"p": {"$ref": "#/definitions/s"}},
                             "type": "object"}, [{"p": "x"}, {}], [{"p": 1}]),
    ("false property", {"type": "object", "properties": {"no": False}}, [{}, {"yes": 1}], [{"no": 1}]),
]


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return Vocabulary.byte_vocabulary()


@pytest.mark.parametrize("name, schema, valid, invalid", TABLE, ids=[row[0] for row in TABLE])
def test_keyword_table(vocab, name, schema, valid, invalid):
    validator = jsonschema.validators.validator_for(schema if isinstance(schema, dict) else {})(schema)
    oracle = name != "nullable"  # OpenAPI's keyword, which jsonschema ignores
    for order in (False, True):
        compiled = compile_for(Grammar.from_json_schema(schema, any_order=order), vocab)
        for value in valid:
            assert validator.is_valid(value) or not oracle, (name, value)
            for text in texts(value):
                if order or name not in ("object required", "additionalProperties schema", "required undeclared"):
                    assert accepts(compiled, text), (name, order, text)
        for value in invalid:
            assert not validator.is_valid(value) or not oracle, (name, value)
            for text in texts(value):
                assert not accepts(compiled, text), (name, order, text)


def test_declared_order_and_extra_keys(vocab):
    compiled = compile_for(Grammar.from_json_schema({**OBJ, "additionalProperties": False}), vocab)
    assert accepts(compiled, '{"a": 1, "b": "x"}')
    assert not accepts(compiled, '{"b": "x", "a": 1}')  # declared order by default
    extras = compile_for(Grammar.from_json_schema(OBJ), vocab)
    assert accepts(extras, '{"a": 1, "b": "s", "z": {}, "y": []}')  # undeclared keys after the declared
    assert accepts(extras, '{"a": 1, "z": {}}') and not accepts(extras, '{"z": {}}')  # "a" is required
    assert not accepts(extras, '{"x": 0, "a": 1, "b": "s"}')
    assert not accepts(extras, '{"a": 1, "y": [], "b": "s"}')
    anywhere = compile_for(Grammar.from_json_schema(OBJ, any_order=True), vocab)
    assert accepts(anywhere, '{"x": 0, "a": 1, "y": [], "b": "s", "z": {}}')
    assert accepts(anywhere, '{"b": "s", "x": 0, "a": 1}') and not accepts(anywhere, '{"b": "s"}')


@pytest.mark.parametrize("order", [False, True])
def test_repeated_members_share_one_mask(vocab, order):
    """Members that may repeat (undeclared keys; with ``any_order``, untracked properties) are a
    left-recursive loop: the chart after each of them has the same future, so the value masks
    after the second, third... key are one cached mask (one mask key)."""
    schema = {"type": "object", "properties": {k: {"type": "integer"} for k in "abcdefgh"},
              "additionalProperties": {"type": "integer"}}
    compiled = compile_for(Grammar.from_json_schema(schema, any_order=order), vocab)
    matcher = leapgram.Matcher(compiled)
    keys = []
    text = '{"x": 1, "y": 2, "z": 3, "w": 4}'
    for n, byte in enumerate(text.encode()):
        if text[:n].endswith('": '):
            keys.append(compiled._engine.mask_key(matcher._states[-1]))
        assert matcher.consume_token(byte)
    assert len(keys) == 4 and len(set(keys[1:])) == 1


def test_auto_order_keeps_only_untracked_objects_in_declared_order(vocab):
    """``any_order="auto"``: any order where the properties are tracked exactly, the declared
    order (with a warning naming the object) where ``any_order=True`` refuses the object."""
    many = {"type": "object", "properties": {k: {"type": "integer"} for k in "abcdefghijk"},
            "required": list("abcdefghijk")}
    schema = {"type": "object", "properties": {"small": OBJ, "big": many}}
    with pytest.raises(UnsupportedError, match="any_order='auto'"):
        Grammar.from_json_schema(schema, any_order=True)
    grammar = Grammar.from_json_schema(schema, any_order="auto")
    assert any("/properties/big" in w and "declared order" in w for w in grammar.warnings)
    compiled = compile_for(grammar, vocab)
    big = dict(zip("abcdefghijk", range(11)))
    assert accepts(compiled, json.dumps({"small": {"b": "s", "a": 1}, "big": big}))
    assert accepts(compiled, json.dumps({"big": big, "small": {"a": 1}}))
    assert not accepts(compiled, json.dumps({"big": dict(reversed(big.items()))}))  # declared order there
    assert not accepts(compiled, json.dumps({"small": {"b": "s"}}))
    with pytest.raises(ValueError, match="any_order"):
        Grammar.from_json_schema(schema, any_order="sometimes")


def test_any_order_tracks_ten_properties(vocab):
    """``any_order=True`` writes up to ten tracked properties in every order, each once (2**10
    states, under a second to compile); an eleventh required one is refused."""
    schema = {"type": "object", "properties": {k: {"type": "integer"} for k in "abcdefghij"},
              "required": list("abcdefghij"), "additionalProperties": False}
    compiled = compile_for(Grammar.from_json_schema(schema, any_order=True), vocab)
    value = dict(zip("abcdefghij", range(10)))
    assert accepts(compiled, json.dumps(dict(reversed(value.items()))))
    assert accepts(compiled, json.dumps(dict(sorted(value.items(), key=lambda kv: kv[1] % 3))))
    assert not accepts(compiled, json.dumps({k: v for k, v in value.items() if k != "e"}))
    assert not accepts(compiled, json.dumps(value)[:-1] + ', "a": 1}')  # a repeated key
    optional = compile_for(Grammar.from_json_schema({**schema, "required": ["a"]}, any_order=True), vocab)
    assert accepts(optional, '{"j": 1, "a": 2}') and not accepts(optional, '{"j": 1}')
    eleven = {"type": "object", "properties": {k: {} for k in "abcdefghijk"}, "required": list("abcdefghijk")}
    with pytest.raises(UnsupportedError, match="tracks at most 10"):
        Grammar.from_json_schema(eleven, any_order=True)


def test_required_first_key_is_forced(vocab):
    """Declared keys come before undeclared ones, so a required first key is forced."""
    compiled = compile_for(Grammar.from_json_schema({**OBJ, "required": ["a"]}, whitespace="compact"), vocab)
    matcher = leapgram.Matcher(compiled)
    assert matcher.forced_bytes() == b'{"a":'


@pytest.mark.parametrize("separators", [(", ", ": "), (",", ":"), (" ,\n", " : ")])
def test_fixed_separators_are_the_only_layout(vocab, separators):
    schema = {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}},
                                               "b": {"const": {"k": [1, 2]}}}, "required": ["a", "b"]}
    compiled = compile_for(Grammar.from_json_schema(schema, whitespace=separators), vocab)
    value = {"a": [1, 2, 3], "b": {"k": [1, 2]}}
    assert accepts(compiled, json.dumps(value, separators=separators))
    for other in [(", ", ": "), (",", ":"), (", ", ":")]:
        if other != separators:
            assert not accepts(compiled, json.dumps(value, separators=other)), other
    assert not accepts(compiled, json.dumps(value, indent=2, separators=separators))
    assert not accepts(compiled, " " + json.dumps(value, separators=separators))


def test_dumps_layout_forces_separators(vocab):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}},
              "required": ["a", "b"], "additionalProperties": False}
    compiled = compile_for(Grammar.from_json_schema(schema, whitespace="dumps"), vocab)
    matcher = leapgram.Matcher(compiled)
    assert matcher.forced_bytes() == b'{"a": '
    assert matcher.consume_tokens(list(b'{"a": 12,'))
    assert matcher.forced_bytes() == b' "b": "'


@pytest.mark.parametrize("bad", [("; ", ": "), (",", "x:"), ("a", "b", "c"), (",", 1)])
def test_bad_separators_are_refused(bad):
    with pytest.raises(ValueError, match="separator"):
        Grammar.from_json_schema({"type": "array"}, whitespace=bad)


def test_whitespace_is_bounded(vocab):
    compiled = compile_for(Grammar.from_json_schema({"type": "array"}), vocab)
    assert accepts(compiled, "[" + " " * 20 + "1]")
    assert not accepts(compiled, "[" + " " * 21 + "1]")
    assert not accepts(compiled, " [1]")
    compact = compile_for(Grammar.from_json_schema({"type": "array"}, whitespace="compact"), vocab)
    assert accepts(compact, "[1,[2]]") and not accepts(compact, "[1, 2]")


def test_pydantic_model_and_json_text(vocab):
    pydantic = pytest.importorskip("pydantic")

    class Wand(pydantic.BaseModel):
        wood: str
        length: float

    class Character(pydantic.BaseModel):
        name: str
        wand: Wand
        alive: bool = True

    compiled = compile_for(Grammar.from_json_schema(Character), vocab)
    good = Character(name="Harry", wand=Wand(wood="holly", length=11.0))
    assert accepts(compiled, good.model_dump_json())
    assert accepts(compiled, json.dumps(good.model_dump()))
    assert not accepts(compiled, '{"name": "Harry"}')
    text = compile_for(Grammar.from_json_schema('{"type": "integer"}'), vocab)
    assert accepts(text, "12")


REFUSALS = [
    ({"properties": {"x": {"if": {"uniqueItems": True}, "then": {"minItems": 1}}}}, "if", "/properties/x/if"),
    ({"oneOf": [{"type": "object", "additionalProperties": False}, {"type": "object", "minProperties": 1}]},
     "oneOf", "/oneOf"),
    ({"not": {"type": "object", "additionalProperties": False}}, "not", "/not"),
    ({"type": "array", "items": {"type": "object"}, "uniqueItems": True}, "uniqueItems", "/uniqueItems"),
    ({"$ref": "other.json#/x"}, "$ref", "/$ref"),
    ({"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://x.test/root",
      "$defs": {"a": {"$id": "a", "$dynamicAnchor": "n"}, "b": {"$id": "b", "$dynamicAnchor": "n"}},
      "allOf": [{"$dynamicRef": "b#n"}], "unevaluatedProperties": False},  # the path decides which anchor
     "unevaluatedProperties", "/unevaluatedProperties"),
    # "contains 1 and contains 2" is not "contains an item that is 1 and 2"
    ({"type": "array", "allOf": [{"contains": {"const": 1}}, {"contains": {"const": 2}}]}, "contains",
     "/allOf/1/contains"),
]


@pytest.mark.parametrize("schema, keyword, pointer", REFUSALS, ids=[r[1] for r in REFUSALS])
def test_refusals_name_keyword_and_pointer(schema, keyword, pointer):
    with pytest.raises(UnsupportedError) as caught:
        Grammar.from_json_schema(schema)
    assert caught.value.feature == keyword and caught.value.pointer == pointer
    assert keyword in str(caught.value) and pointer in str(caught.value)
    lenient = Grammar.from_json_schema(schema, lenient=True)
    assert any(keyword in w for w in lenient.warnings)


def test_lenient_refused_merge_keeps_one_side(vocab):
    """A refused ``allOf`` merge under ``lenient`` keeps the first schema's value: a looser schema
    of the right shape (it was ``{}``, and an ``anyOf`` of ``{}`` then failed as malformed)."""
    many = {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}] * 3}  # 9 x 9 > 64 pairs
    other = {"anyOf": [{"minLength": 1}, {"maximum": 3}, {"type": "boolean"}] * 3}
    schema = {"allOf": [many, other]}
    with pytest.raises(UnsupportedError) as caught:
        Grammar.from_json_schema(schema)
    assert caught.value.feature == "anyOf" and caught.value.pointer == "/allOf/1/anyOf"
    lenient = Grammar.from_json_schema(schema, lenient=True)
    assert any("/allOf/1/anyOf" in w for w in lenient.warnings)
    compiled = compile_for(lenient, vocab)
    assert accepts(compiled, '""') and accepts(compiled, "7") and accepts(compiled, "null")
    assert not accepts(compiled, "true")  # the kept side still holds


MALFORMED = [
    ("[1, 2]", "a schema must be an object or a boolean, not array", ""),
    ("null", "a schema must be an object or a boolean, not null", ""),
    ([{"type": "string"}], "a schema must be a dict, a bool, JSON text or a Pydantic model class, not list", ""),
    ({"not": 5}, "a schema must be an object or a boolean, not int", "/not"),
    ({"anyOf": [{"not": "x"}]}, "a schema must be an object or a boolean, not str", "/anyOf/0/not"),
    ('{"type": "strin"}', "type must be one of", "/type"),
    ({"type": "object", "required": "a"}, "required must be an array", "/required"),
    ({"type": "array", "minItems": -1}, "minItems must be a non-negative integer", "/minItems"),
    ({"$ref": "#/$defs/missing"}, "points to nothing", "/$ref"),
    ({"enum": "a"}, "enum must be an array", "/enum"),
    ({"allOf": []}, "allOf must be a non-empty array", "/allOf"),
    ({"type": "object", "properties": {"a": False}, "required": ["a"]}, "matches no JSON value", ""),
]


@pytest.mark.parametrize("schema, message, pointer", MALFORMED, ids=[m[1] for m in MALFORMED])
def test_malformed_schemas_are_located(schema, message, pointer):
    with pytest.raises(GrammarError) as caught:
        Grammar.from_json_schema(schema)
    assert message in caught.value.message and caught.value.pointer == pointer


@pytest.mark.parametrize("schema", [
    {"type": "string", "minLength": 5, "maxLength": 3},
    {"type": "object", "properties": {"a": {"type": "string", "minLength": 2, "maxLength": 1}}, "required": ["a"]},
    {"type": "array", "items": {"type": "string", "minLength": 2, "maxLength": 1}, "minItems": 1},
    {"type": "integer", "minimum": 5, "maximum": 3},
    {"type": "integer", "minimum": 3.2, "maximum": 3.8},
    {"type": "integer", "exclusiveMinimum": 3, "exclusiveMaximum": 4},
    {"type": "number", "exclusiveMinimum": 3, "exclusiveMaximum": 3},
    {"type": "number", "minimum": 3, "exclusiveMaximum": 3},
])
def test_crossed_bounds_match_no_value(schema):
    """minLength above maxLength, or no number between the bounds: no value of that type, so a
    document that needs one is refused at compile instead of giving a mask that allows nothing."""
    with pytest.raises(GrammarError, match="matches no JSON value"):
        Grammar.from_json_schema(schema)


@pytest.mark.parametrize(("schema", "good", "bad"), [
    ({"type": "integer", "minimum": 3, "maximum": 3}, "3", "4"),
    ({"type": "integer", "exclusiveMinimum": 2.5, "maximum": 3}, "3", "2"),
    ({"type": "number", "minimum": 1.5, "maximum": 1.5}, "1.5", "1.6"),
    ({"type": ["string", "null"], "minLength": 5, "maxLength": 3}, "null", '""'),
])
def test_bounds_that_meet_keep_their_values(vocab, schema, good, bad):
    compiled = compile_for(Grammar.from_json_schema(schema), vocab)
    assert accepts(compiled, good) and not accepts(compiled, bad)


def test_json_text_errors_have_line_and_caret():
    with pytest.raises(GrammarError) as caught:
        Grammar.from_json_schema('{\n  "type": "object",\n  "properties": {,}\n}')
    assert caught.value.line == 3 and "^" in str(caught.value)


def test_jsonschemabench_sample_is_exact(vocab):
    """Among the sampled cases that compile: every valid instance accepted, every invalid one
    rejected (byte level, json.dumps serialization)."""
    sample = sorted(BENCH.glob("*.json"))
    compiled_cases = 0
    for path in sample:
        case = json.loads(path.read_text())
        try:
            compiled = compile_for(Grammar.from_json_schema(case["schema"], any_order=True), vocab)
        except UnsupportedError:
            continue
        compiled_cases += 1
        for test in case["tests"]:
            text = json.dumps(test["data"], ensure_ascii=False)
            assert accepts(compiled, text) == test["valid"], (path.name, test["valid"], text[:200])
    assert compiled_cases >= 50


def test_ref_siblings_follow_the_draft(vocab):
    """Up to draft 7 a $ref replaces the keywords beside it; from 2019-09 on they also apply."""
    defs = {"definitions": {"file": {"type": "object", "properties": {"a": {}}}}}
    for draft, extra_allowed in (("http://json-schema.org/draft-07/schema#", True),
                                 ("https://json-schema.org/draft/2020-12/schema", False)):
        schema = {"$schema": draft, **defs,
                  "$ref": "#/definitions/file", "properties": {"b": {}}, "additionalProperties": False}
        compiled = compile_for(Grammar.from_json_schema(schema), vocab)
        assert accepts(compiled, '{"a": 1}') == extra_allowed


def test_equal_contains_in_all_of_merge(vocab):
    schema = {"type": "array", "allOf": [{"contains": {"const": 1}}, {"contains": {"const": 1}}]}
    compiled = compile_for(Grammar.from_json_schema(schema), vocab)
    assert accepts(compiled, "[2, 1]") and not accepts(compiled, "[2]")


def test_property_order_is_part_of_the_grammar_key(vocab):
    """Two schemas that differ only in property order are different grammars (declared order)."""
    ab = Grammar.from_json_schema({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "b"]})
    ba = Grammar.from_json_schema({"type": "object", "properties": {"b": {}, "a": {}}, "required": ["a", "b"]})
    assert ab.key != ba.key
    assert accepts(compile_for(ab, vocab), '{"a": 1, "b": 2}')
    assert accepts(compile_for(ba, vocab), '{"b": 2, "a": 1}')
