"""A differential of the sharing of equal subschemas (``translate.MIN_SHARED_DOCUMENT``): every
schema here must accept and reject the same instances with the sharing on and off.

Two sources: hand-made documents of at least 64 objects (the default gate) where equal
subschemas sit under one base URI, under different ones (``$id``), and where meaning could
depend on the place (``$dynamicRef``/``$dynamicAnchor``, ``$ref`` relative to a nested
``$id``, ``$recursiveRef``), each answer checked against ``jsonschema`` too; and the official
test suite's reference groups, each schema put twice under its ``$defs`` (two equal copies
under one base URI, or the second under an ``$id`` of its own) behind a root ``anyOf``, with the
gate at 0 (every document shares) and at 64 (padded to reach it)."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest

import leapgram
from leapgram import BudgetExceededError, Grammar, GrammarError, UnsupportedError, Vocabulary
from leapgram.frontends.json_schema import translate
from leapgram.frontends.json_schema.refs import RefResolver
from tests.helpers.json_schema_suite import DIALECTS, SUITE, suite_schema

_VOCAB = Vocabulary.byte_vocabulary()
OFF = 1 << 30  # a gate no document reaches
D2020 = DIALECTS["draft2020-12"]
D2019 = DIALECTS["draft2019-09"]
POINT = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "number"}}, "required": ["x"]}


def padded(schema: dict, defs: str = "$defs") -> dict:
    """``schema`` with unused copies of POINT under ``defs`` until the document has 64 objects."""
    out = {**schema, defs: {**schema.get(defs, {}), **{f"pad{n}": copy.deepcopy(POINT) for n in range(24)}}}
    assert len(RefResolver(out).base_of) >= translate.MIN_SHARED_DOCUMENT
    return out


def verdicts(schema, instances: list, gate: int) -> tuple:
    """Whether the grammar of ``schema`` (sharing from ``gate`` objects) accepts each instance,
    written as ``json.dumps`` writes it (the error's type when the schema is refused); its
    warnings; and how many subschemas were translated."""
    translated, calls = translate.SchemaTranslator._translated, []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(translate, "MIN_SHARED_DOCUMENT", gate)
        patch.setattr(translate.SchemaTranslator, "_translated",
                      lambda self, *args: calls.append(1) or translated(self, *args))
        try:
            grammar = Grammar.from_json_schema(schema)
            compiled = leapgram.GrammarCompiler(_VOCAB).compile(grammar)
        except (UnsupportedError, GrammarError, BudgetExceededError) as err:
            return type(err).__name__, err.message, len(calls)
    answers = []
    for value in instances:
        matcher = leapgram.Matcher(compiled)
        answers.append(matcher.consume_tokens(json.dumps(value, ensure_ascii=False).encode("utf-8"))
                       and matcher.is_accepting())
    return answers, tuple(grammar.warnings), len(calls)


# ----- hand-made documents: (schema, instances in declared property order) --------------------

DYNAMIC_TREE = padded({  # the root has the anchor: every $dynamicRef "#node" lands on the root
    "$schema": D2020, "$id": "https://example.com/tree", "$dynamicAnchor": "node", "type": "object",
    "properties": {"value": {"type": "integer"}, "left": {"$dynamicRef": "#node"}, "right": {"$dynamicRef": "#node"},
                   "kids": {"type": "array", "items": {"$dynamicRef": "#node"}}}})

DYNAMIC_LIST = padded({  # each list resource's bookend: the root's anchor wins over the list's
    "$schema": D2020, "$id": "https://example.com/strings", "$dynamicAnchor": "items", "type": ["string", "object"],
    "$defs": {"list": {"$id": "list", "type": "array", "prefixItems": [{"$dynamicRef": "#items"}],
                       "items": {"$dynamicRef": "#items"},
                       "$defs": {"items": {"$dynamicAnchor": "items", "type": "integer"}}},
              "again": {"$id": "again", "type": "array", "items": {"$dynamicRef": "#items"},
                        "$defs": {"items": {"$dynamicAnchor": "items", "type": "integer"}}},
              "holder": {"type": "object", "properties": {"a": {"$ref": "list"}, "b": {"$ref": "again"},
                                                          "c": {"$dynamicRef": "#items"},
                                                          "d": {"$dynamicRef": "#items"}}}},
    "anyOf": [{"type": "string"}, {"$ref": "#/$defs/holder"}]})

RELATIVE_IDS = padded({  # "d.json" and "sub/" resolve against the nearest $id: a/ and b/ differ
    "$schema": D2020, "$id": "https://example.com/root", "type": "object",
    "$defs": {"ad": {"$id": "https://example.com/a/d.json", "type": "integer"},
              "bd": {"$id": "https://example.com/b/d.json", "type": "string"},
              "asd": {"$id": "https://example.com/a/sub/d.json", "type": "boolean"},
              "bsd": {"$id": "https://example.com/b/sub/d.json", "type": "null"}},
    "properties": {
        "a": {"$id": "https://example.com/a/", "type": "object",
              "properties": {"v": {"$ref": "d.json"}, "w": {"$ref": "d.json"},
                             "s": {"$id": "sub/", "type": "object", "properties": {"v": {"$ref": "d.json"}}}}},
        "b": {"$id": "https://example.com/b/", "type": "object",
              "properties": {"v": {"$ref": "d.json"}, "w": {"$ref": "d.json"},
                             "s": {"$id": "sub/", "type": "object", "properties": {"v": {"$ref": "d.json"}}}}}}})

RECURSIVE = padded({  # 2019-09: one $recursiveAnchor, at the root
    "$schema": D2019, "$id": "https://example.com/rtree", "$recursiveAnchor": True, "type": "object",
    "properties": {"value": {"type": "integer"}, "a": {"$recursiveRef": "#"}, "b": {"$recursiveRef": "#"},
                   "kids": {"type": "array", "items": {"$recursiveRef": "#"}}},
    "$defs": {"other": {"$id": "other", "type": "object", "properties": {"a": {"$recursiveRef": "#"}}}}})

HANDMADE = {
    "dynamic tree": (DYNAMIC_TREE, [
        {}, {"value": 1, "left": {"value": 2}, "right": {"left": {"kids": [{"value": 3}]}}},
        {"kids": [{"value": 1}, {"right": {"value": 2}}]},
        {"left": {"value": "x"}}, {"right": {"right": {"value": 1.5}}}, {"kids": [{"value": 1}, 2]}, {"left": []}]),
    "dynamic list": (DYNAMIC_LIST, [
        "s", {"a": ["x", "y"], "b": ["z"], "c": "w", "d": {"c": "v"}}, {"a": [], "b": []},
        {"a": [{"a": ["x"]}, "y"]}, {"a": [1]}, {"a": ["x", 1]}, {"b": [1]}, {"c": 1}, {"d": {"d": 2}},
        {"a": ["x"], "b": [2]}, 3]),
    "relative ids": (RELATIVE_IDS, [
        {"a": {"v": 1, "w": 2, "s": {"v": True}}, "b": {"v": "x", "w": "y", "s": {"v": None}}}, {"a": {}, "b": {}},
        {"a": {"v": "x"}}, {"a": {"w": "y"}}, {"b": {"v": 1}}, {"b": {"w": 2}}, {"a": {"s": {"v": None}}},
        {"b": {"s": {"v": True}}}, {"a": {"s": {"v": 1}}}]),
    "recursive": (RECURSIVE, [
        {}, {"value": 1, "a": {"value": 2, "b": {}}, "kids": [{"a": {"value": 3}}]},
        {"a": {"value": "x"}}, {"b": {"b": {"value": 0.5}}}, {"kids": [1]}, {"kids": [{"kids": [{"value": []}]}]}]),
}


@pytest.mark.parametrize("name", list(HANDMADE))
def test_handmade_documents_answer_alike_shared_or_not(name):
    schema, instances = HANDMADE[name]
    shared = verdicts(schema, instances, translate.MIN_SHARED_DOCUMENT)
    alone = verdicts(schema, instances, OFF)
    assert shared[:2] == alone[:2]
    assert shared[2] < alone[2]  # fewer subschemas translated: something was shared
    validator = jsonschema.validators.validator_for(schema)(schema)
    assert shared[0] == [validator.is_valid(value) for value in instances]


# ----- the test suite's reference groups, twice under one document -----------------------------

FILES = ("ref.json", "refRemote.json", "dynamicRef.json", "recursiveRef.json", "anchor.json", "id.json",
         "defs.json", "definitions.json", "unevaluatedProperties.json", "unevaluatedItems.json",
         "infinite-loop-detection.json", "items.json", "properties.json", "allOf.json", "anyOf.json")


def twice(schema, draft: str, own_id: bool):
    """``schema`` (a suite group's) as a root ``anyOf`` of two copies under its ``$defs`` with
    its ``$defs`` kept (pointers into them still land), and 24 unused objects more; the second copy
    under an ``$id`` of its own when ``own_id``. ``None`` for a boolean schema."""
    if not isinstance(schema, dict):
        return None
    defs = "$defs" if draft.startswith("draft20") else "definitions"
    root = {k: schema[k] for k in ("$schema", "$id", "id") if k in schema}
    body = {k: v for k, v in schema.items() if k not in root}
    second = copy.deepcopy(body)
    if own_id:
        second["id" if draft == "draft4" else "$id"] = "http://other.example/second"
    root[defs] = {**schema.get(defs, {}), "first": copy.deepcopy(body), "second": second}
    root["anyOf"] = [{"$ref": f"#/{defs}/first"}, {"$ref": f"#/{defs}/second"}]
    return padded(root, defs)


def suite_params() -> list:
    return [pytest.param(draft, name, id=f"{draft}/{name[:-5]}")
            for draft in DIALECTS for name in FILES if (SUITE / draft / name).is_file()]


@pytest.mark.parametrize(("draft", "file"), suite_params())
def test_suite_groups_twice_answer_alike_shared_or_not(draft, file):
    groups = json.loads((SUITE / draft / file).read_text(encoding="utf-8"))
    differ = []
    for group in groups:
        for own_id in (False, True):
            schema = twice(suite_schema(group["schema"], draft), draft, own_id)
            if schema is None:
                continue
            instances = [test["data"] for test in group["tests"]]
            alone = verdicts(schema, instances, OFF)
            for gate in (0, translate.MIN_SHARED_DOCUMENT):
                if verdicts(schema, instances, gate)[:2] != alone[:2]:
                    differ.append(f"{group['description']!r} (own id: {own_id}, gate {gate})")
    assert not differ, "\n".join(differ)
