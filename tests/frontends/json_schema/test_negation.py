"""Negation, conditionals and overlapping oneOf against ``jsonschema`` on random small schemas.

Each generated schema ``S`` is compiled as ``{"not": S}``, as ``{"if": S, "then": T, "else": E}``
and as ``{"oneOf": [S, T]}`` (any member order, so ordering is not what is tested); every value
of a fixed pool, in three JSON layouts, must be accepted exactly when ``jsonschema`` says it is
valid. Schemas the translator refuses are skipped, but most must translate (checked at the end).
"""

from __future__ import annotations

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import leapgram
from leapgram import Grammar, UnsupportedError, Vocabulary
from tests.helpers.compiling import compile_for
from tests.helpers.schema_acceptance import accepts, texts

VALUES = [None, True, False, 0, 3, -2, 2.5, 10, "", "a", "ab", "abc", "ba", [], [1], ["a", 2], [3, 3, 3],
          {}, {"a": 1}, {"a": "x"}, {"b": None}, {"a": 2, "b": "y"}, {"c": [1]}, {"a": [], "c": 0}]

scalar_schemas = st.one_of(
    st.builds(lambda t: {"type": t}, st.sampled_from(["string", "number", "null", "boolean", "array", "object"])),
    st.builds(lambda n: {"type": "string", "minLength": n}, st.integers(0, 3)),
    st.builds(lambda n: {"maxLength": n}, st.integers(0, 2)),
    st.builds(lambda p: {"pattern": p}, st.sampled_from(["^a", "b$", "^$"])),
    st.builds(lambda n: {"minimum": n}, st.sampled_from([0, 2.5, 3])),
    st.builds(lambda n: {"type": "number", "exclusiveMaximum": n}, st.sampled_from([0, 3])),
    st.builds(lambda v: {"enum": v}, st.lists(st.sampled_from([None, True, 3, "a", "ab"]), min_size=1, max_size=3)),
    st.builds(lambda v: {"const": v}, st.sampled_from([False, 0, "abc"])),
)
structured = st.one_of(
    st.builds(lambda r: {"required": r}, st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=2, unique=True)),
    st.builds(lambda s: {"properties": {"a": s}}, scalar_schemas),
    st.builds(lambda s: {"type": "object", "properties": {"a": s, "b": {"type": "null"}}}, scalar_schemas),
    st.builds(lambda n: {"minProperties": n}, st.integers(1, 2)),
    st.builds(lambda n: {"type": "array", "maxItems": n}, st.integers(0, 2)),
    st.builds(lambda s: {"items": s}, scalar_schemas),
    st.builds(lambda s: {"type": "array", "contains": s}, scalar_schemas),
)
leaf = st.one_of(scalar_schemas, structured)
schemas = st.recursive(leaf, lambda inner: st.one_of(
    st.builds(lambda xs: {"anyOf": xs}, st.lists(inner, min_size=1, max_size=2)),
    st.builds(lambda xs: {"allOf": xs}, st.lists(inner, min_size=1, max_size=2)),
    st.builds(lambda x: {"not": x}, inner),
), max_leaves=3)


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return Vocabulary.byte_vocabulary()


TRANSLATED = {"tried": 0, "translated": 0}


def check(vocab: Vocabulary, schema: dict) -> None:
    TRANSLATED["tried"] += 1
    try:
        compiled = compile_for(Grammar.from_json_schema(schema, any_order=True), vocab)
    except UnsupportedError:
        return
    except leapgram.GrammarError as err:  # a schema matching nothing is an error, not a grammar
        assert "matches no JSON value" in str(err)
        assert not any(jsonschema.Draft202012Validator(schema).is_valid(v) for v in VALUES)
        TRANSLATED["translated"] += 1
        return
    TRANSLATED["translated"] += 1
    validator = jsonschema.Draft202012Validator(schema)
    for value in VALUES:
        expected = validator.is_valid(value)
        for text in texts(value):
            assert accepts(compiled, text) == expected, (schema, text, expected)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas)
def test_not_matches_jsonschema(vocab, schema):
    check(vocab, {"not": schema})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(condition=schemas, then=leaf, otherwise=leaf)
def test_if_then_else_matches_jsonschema(vocab, condition, then, otherwise):
    check(vocab, {"if": condition, "then": then, "else": otherwise})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=leaf, second=leaf)
def test_overlapping_one_of_matches_jsonschema(vocab, first, second):
    check(vocab, {"oneOf": [first, second]})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dependent=st.lists(st.sampled_from(["b", "c"]), max_size=2, unique=True), schema=leaf)
def test_dependencies_match_jsonschema(vocab, dependent, schema):
    check(vocab, {"dependentRequired": {"a": dependent}, "dependentSchemas": {"b": schema}})


@pytest.mark.parametrize("inner", [
    {"if": {"type": "integer", "maximum": 43}, "then": {"type": "array"}, "else": {"type": "integer"}},
    {"type": "object", "dependentRequired": {"a": ["b"]}},
    {"$ref": "#/$defs/short"},
])
def test_double_negation_keeps_the_keywords_translated_first(vocab, inner):
    """``not {not S}`` is ``S`` with every keyword of ``S``: a conditional or a reference that the
    rewrite of ``not`` hands back was once translated as its bare types (fuzzing found it)."""
    check(vocab, {"not": {"not": inner}, "$defs": {"short": {"type": "string", "maxLength": 1}}})


def test_most_generated_schemas_translate():
    """Run after the property tests above (file order): refusals must stay the exception."""
    if TRANSLATED["tried"] < 50:
        pytest.skip("the property tests did not run first")
    assert TRANSLATED["translated"] >= 0.6 * TRANSLATED["tried"], TRANSLATED
