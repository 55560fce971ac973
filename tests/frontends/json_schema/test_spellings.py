"""A value is one value in every JSON spelling: what a schema excludes (a declared name for the
other keys, ``not``, ``propertyNames``, a pattern's keys) stays excluded when written with escapes
such as ``\\u0061`` for ``a``; the grammars may refuse such spellings, never accept them wrongly."""

from __future__ import annotations

import json

import pytest

from leapgram import Grammar, Vocabulary
from leapgram.frontends.json_schema.strings import encoded_string, literal_string
from leapgram.regex import ExprPool
from leapgram.regex.expr import K_NOT
from tests.helpers.compiling import compile_for
from tests.helpers.schema_acceptance import accepts

INTEGER_A = {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}}
PATTERN_BESIDE_NAMES = {"type": "object", "properties": {"ab": {"type": "integer"}, "zz": {"type": "integer"}},
                        "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": False}
CASES = [
    # (schema, text, accepted)
    (INTEGER_A, '{"a": 1}', True),
    (INTEGER_A, '{"b": "x"}', True),
    (INTEGER_A, '{"a": "x"}', False),
    (INTEGER_A, '{"\\u0061": "x"}', False),
    ({"type": "object", "properties": {"é": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
     '{"\\u00e9": "x"}', False),
    ({"type": "object", "properties": {"é": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
     '{"\\u00E9": "x"}', False),
    ({"type": "object", "properties": {"é": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
     '{"ü": "x"}', True),
    ({"type": "object", "patternProperties": {"^a$": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
     '{"\\u0061": "x"}', False),
    ({"type": "object", "patternProperties": {"^a$": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
     '{"b": "x"}', True),
    *((PATTERN_BESIDE_NAMES, text, accepted) for text, accepted in [  # a pattern no name matches needs no cut
        ('{"\\u0061b": "x"}', False), ('{"ab": 1}', True), ('{"\\u007az": "x"}', False), ('{"x-b": "s"}', True),
        ('{"x-ab": 1}', False), ('{"zz": 1, "x-": "y"}', True), ('{"u0061b": "x"}', False)]),
    ({"type": "string", "not": {"const": "a"}}, '"\\u0061"', False),
    ({"type": "string", "not": {"const": "é"}}, '"\\u00e9"', False),
    ({"type": "string", "not": {"const": "a"}}, '"b"', True),
    ({"type": "string", "not": {"pattern": "^a$"}}, '"\\u0061"', False),
    ({"type": "string", "not": {"pattern": "^a$"}}, '"ab"', True),
    ({"type": "object", "propertyNames": {"not": {"const": "a"}}}, '{"\\u0061": 1}', False),
    ({"type": "object", "propertyNames": {"not": {"const": "a"}}}, '{"b": 1}', True),
    ({"type": "object", "propertyNames": {"enum": ["é"]}}, '{"\\u00e9": 1}', True),
]


@pytest.mark.parametrize(("schema", "text", "accepted"), CASES)
def test_an_excluded_value_is_excluded_in_every_spelling(schema, text, accepted):
    json.loads(text)  # valid JSON text: only the schema decides
    compiled = compile_for(Grammar.from_json_schema(schema), Vocabulary.byte_vocabulary())
    assert accepts(compiled, text) == accepted


@pytest.mark.parametrize("name", ["a", "adgroup_name", "with space", "x~y", "a/b", 'q"uote', "back\\slash", "é",
                                  "tab\there", "del\x7f", "日本"])
def test_a_plain_name_is_the_encoders_literal(name):
    pool = ExprPool()
    assert literal_string(pool, name) == encoded_string(pool, pool.literal(name.encode("utf-8")))


@pytest.mark.parametrize(("pattern", "cut"), [("^x-", False), ("b", True)])
def test_a_pattern_key_keeps_the_names_cut_only_when_some_name_may_match(pattern, cut):
    """The keys of a ``patternProperties`` pattern that no spelling of a declared name matches
    are the pattern's keys, without the names' complement (whose derivatives differ at each
    node of the names' trie); the accepted texts are in the cases above."""
    schema = {**PATTERN_BESIDE_NAMES, "patternProperties": {pattern: {"type": "string"}}}
    ir = Grammar.from_json_schema(schema).ir
    pool = ir.pool
    (key,) = [lexeme.expr for lexeme in ir.lexemes if lexeme.name.startswith("key:/patternProperties")]
    assert pool.fold(key, lambda x, children, values: pool.kind[x] == K_NOT or any(values[c] for c in children)) == cut
