"""A property (or ``$defs`` entry) called ``enum``, ``const``, ``default``, ``examples`` or
``example`` holds a subschema, though those names are keywords whose values are not
subschemas. The resolver's index must walk into it: its references resolve against its own
base URI and its anchors can be referenced. Before, such a subschema was skipped, so a
``$ref`` in it resolved against the root (another ``$defs``) and the grammar accepted
instances ``jsonschema`` rejects."""

from __future__ import annotations

import json

import jsonschema
import pytest

import leapgram as lg
from leapgram import Grammar

_COMPILER = lg.GrammarCompiler(lg.Vocabulary.byte_vocabulary())

NESTED_ID = {"$id": "http://example.com/root", "$defs": {"d": {"type": "string"}}, "type": "object",
             "properties": {"a": {"$id": "http://example.com/other/", "$defs": {"d": {"type": "integer"}},
                                  "type": "object",
                                  "properties": {"default": {"$ref": "#/$defs/d"}, "v": {"$ref": "#/$defs/d"}}}}}
ANCHOR = {"type": "object", "properties": {"enum": {"$anchor": "num", "type": "integer"}, "b": {"$ref": "#num"}}}
DEFS = {"$defs": {"const": {"$id": "http://example.com/c/", "$defs": {"x": {"type": "boolean"}},
                            "type": "array", "items": {"$ref": "#/$defs/x"}}},
        "$ref": "#/$defs/const"}


@pytest.mark.parametrize(("schema", "texts"), [
    (NESTED_ID, ['{"a": {"default": 1}}', '{"a": {"default": "s"}}', '{"a": {"default": 2, "v": 1}}',
                  '{"a": {"v": "s"}}']),
    (ANCHOR, ['{"enum": 1, "b": 2}', '{"b": "s"}', '{"enum": "x"}', '{"b": 3}']),
    (DEFS, ["[true, false]", "[1]", '["s"]', "[]"]),
])
def test_subschemas_under_value_keyword_names_are_indexed(schema, texts):
    compiled = _COMPILER.compile(Grammar.from_json_schema(schema))
    validator = jsonschema.validators.validator_for(schema)(schema)
    for text in texts:
        matcher = lg.Matcher(compiled)
        accepted = matcher.consume_tokens(text.encode()) and matcher.is_accepting()
        assert accepted == validator.is_valid(json.loads(text)), text
