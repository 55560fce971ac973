"""``%json { ... }`` in Lark grammars: a rule whose body is a JSON Schema."""

from __future__ import annotations

import json

import pytest

from leapgram import Grammar, GrammarError, Matcher, UnsupportedError, Vocabulary
from tests.helpers.compiling import compile_for

jsonschema = pytest.importorskip("jsonschema")

POINT = {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"],
         "additionalProperties": False}


def lark(options: dict | None = None, schema: dict = POINT) -> Grammar:
    body = dict(schema, **({"x-leapgram": options} if options else {}))
    return Grammar.from_lark(f'start: "Point: " point (";" point)*\npoint: %json {json.dumps(body)}\n')


def accepts(grammar: Grammar, text: str) -> bool:
    matcher = Matcher(compile_for(grammar, Vocabulary.byte_vocabulary()))
    return matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()


@pytest.mark.parametrize("text", [
    'Point: {"x": 1, "y": 2}', 'Point: {"x":1,"y":2};{"x": -3, "y": 0}', 'Point: {"x": 1}', 'Point: {"y": 2, "x": 1}',
    'Point: {"x": 1.5, "y": 2}', 'Point: {"x": 1, "y": 2, "z": 3}', 'Point: {\n  "x": 1,\n  "y": 2\n}', "Point: ",
])
def test_embedded_schema_accepts_what_the_schema_validates(text):  # keys in declared order by default
    body = text.removeprefix("Point: ")
    try:
        values = [json.loads(p) for p in body.split(";")]
        expected = all(jsonschema.Draft202012Validator(POINT).is_valid(v) and list(v) == ["x", "y"] for v in values)
    except ValueError:
        expected = False
    assert accepts(lark(), text) == expected


def test_whitespace_and_order_options():
    dumps, compact = lark({"whitespace": "dumps"}), lark({"whitespace": "compact"})
    assert accepts(dumps, 'Point: {"x": 1, "y": 2}') and not accepts(dumps, 'Point: {"x":1,"y":2}')
    assert accepts(compact, 'Point: {"x":1,"y":2}') and not accepts(compact, 'Point: {"x": 1, "y": 2}')
    guidance = Grammar.from_lark('start: %json {"type": "array", "x-guidance": {"item_separator": ", ", '
                                 '"key_separator": ": "}}')
    assert accepts(guidance, "[1, 2]") and not accepts(guidance, "[1,2]")
    assert accepts(lark({"any_order": True}), 'Point: {"y": 2, "x": 1}')


def test_two_schemas_keep_their_own_options():
    grammar = Grammar.from_lark('start: a "|" b\na: %json {"type": "array", "x-leapgram": {"whitespace": "compact"}}\n'
                                'b: %json {"type": "array", "x-leapgram": {"whitespace": "dumps"}}\n')
    assert accepts(grammar, "[1,[2]]|[1, [2]]") and not accepts(grammar, "[1, 2]|[1, 2]")


def test_keys_are_forced_after_the_opening_brace():
    matcher = Matcher(compile_for(lark({"whitespace": "dumps"}), Vocabulary.byte_vocabulary()))
    assert matcher.consume_tokens(list(b"Point: {"))
    assert matcher.forced_bytes() == b'"x": '


def test_same_schema_twice_is_built_once():
    grammar = Grammar.from_lark(f'start: a a\na: %json {json.dumps(POINT)}\nb: %json {json.dumps(POINT)}\n')
    assert accepts(grammar, '{"x": 1, "y": 2}{"x": 1, "y": 2}')


@pytest.mark.parametrize(("text", "error", "message"), [
    ("start: %json [1, 2]", GrammarError, "JSON Schema (an object or a boolean)"),
    ('start: %json {"type": }', GrammarError, "%json needs a JSON Schema object"),
    ('start: A\nA: %json {"type": "integer"}', GrammarError, "%json makes a rule, not a terminal"),
    ('start: %json {"type": "string", "pattern": "(?<=a)b"}', UnsupportedError, "in %json"),
    ('start: %json {"type": "integer", "x-leapgram": {"indent": 2}}', UnsupportedError, "unknown x-leapgram option"),
    ('start: %json {"type": "array"}\n%ignore /#[^\\n]*/', UnsupportedError, "matches more than whitespace"),
])
def test_errors(text, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        Grammar.from_lark(text)


def test_ignored_whitespace_may_come_between_json_lexemes():
    """leapgram's ``%ignore`` is global, so a whitespace ``%ignore`` also applies inside ``%json``
    (where it keeps the JSON valid); one that matches more is refused (test_errors)."""
    grammar = Grammar.from_lark('start: "a" %json {"type": "array", "x-leapgram": {"whitespace": "compact"}}\n'
                                "%ignore /[ \\t]+/")
    assert accepts(grammar, "a [1,2]") and accepts(grammar, "a[1 , 2]")


def test_lenient_warnings_reach_the_grammar():
    grammar = Grammar.from_lark('start: %json {"type": "string", "pattern": "(?<=a)b", "x-leapgram": {"lenient": true}}')
    assert accepts(grammar, '"anything"')
    assert any("pattern" in w for w in grammar.warnings), grammar.warnings
