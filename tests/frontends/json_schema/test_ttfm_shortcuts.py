"""Shortcuts of the JSON Schema translation that keep every language the same (round 16's TTFM
work): an unanchored pattern that matches the empty string is any text, ``patternProperties``
``.*`` leaves no extra key without an emptiness search, code point classes are remembered by
their ranges, and JSON text comes from one module-level encoder."""

from __future__ import annotations

import json

import pytest

from leapgram import Grammar
from leapgram.frontends.json_schema.common import schema_pool
from leapgram.frontends.json_schema.ecma import any_text, ecma_pattern_expr
from leapgram.frontends.json_schema.enums import _MEMO_TEXT
from leapgram.frontends.json_schema.strings import string_universe
from leapgram.frontends.json_schema.values import json_text
from leapgram.limits import DEFAULT_LIMITS
from leapgram.regex.expr import K_NOT, ExprPool
from leapgram.regex.utf8 import normalize, ranges_to_expr

TEXTS = ["", "a", "\n", "\r\n", "x\u2028y", "é", "abc\n", "\nabc", "b" * 40]


@pytest.mark.parametrize("pattern", [".*", "a*", "^.*", "^a*", ".*$", "x?$", "(ab)*|q", "(?:)", "\\d{0,3}"])
def test_a_pattern_matching_the_empty_string_at_a_free_end_is_any_text(pattern):
    pool = ExprPool()
    expr = ecma_pattern_expr(pattern, pool)
    if "|" not in pattern:
        assert expr == any_text(pool)
    for text in TEXTS:
        assert pool.matches(expr, text.encode())


@pytest.mark.parametrize(("pattern", "text", "found"), [
    ("^.*$", "a\nb", False), ("^a*$", "b", False), ("^.*$", "abc", True), ("^a*$", "", True),
    ("a+", "", False), ("^x?", "", True),
])
def test_patterns_anchored_at_both_ends_or_not_nullable_keep_their_language(pattern, text, found):
    pool = ExprPool()
    assert pool.matches(ecma_pattern_expr(pattern, pool), text.encode()) is found


def test_keys_of_pattern_properties_dot_star_are_the_string_universe():
    pool = schema_pool(DEFAULT_LIMITS)
    grammar = Grammar.from_json_schema({"type": "object", "patternProperties": {".*": {"type": "integer"}}})
    names = {lexeme.name: lexeme.expr for lexeme in grammar.ir.lexemes}
    key = names["key:/patternProperties/.*"]
    assert grammar.ir.pool.describe(key) == pool.describe(string_universe(pool))
    assert not any(name.endswith("additionalProperties") for name in names)  # no key left for them


@pytest.mark.parametrize("schema", [
    {"patternProperties": {".*": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
    {"properties": {"a": {"minimum": 0}}, "patternProperties": {".*": {"type": "integer"}}},
    {"patternProperties": {"^.*$": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
])
def test_pattern_properties_dot_star_accept_as_before(schema):
    from leapgram.frontends.json_schema import json_schema_to_ir

    ir, _ = json_schema_to_ir(schema, limits=DEFAULT_LIMITS)
    lexemes = [lexeme.expr for lexeme in ir.lexemes if lexeme.name.startswith("key:")]
    pool = ir.pool

    def keyed(text: str) -> bool:
        return any(pool.matches(e, json.dumps(text).encode()) for e in lexemes)

    for key in ["a", "b", "x\ny", "", "é"]:
        assert keyed(key)


def test_ranges_are_remembered_by_the_pool_and_give_the_same_node():
    pool = ExprPool()
    ranges = normalize([(0x30, 0x39), (0x41, 0x5A), (0x4E00, 0x9FFF)])
    first = ranges_to_expr(pool, ranges)
    size = len(pool)
    assert ranges_to_expr(pool, list(ranges)) == first and len(pool) == size
    fresh = ExprPool()
    assert fresh.describe(ranges_to_expr(fresh, ranges)) == pool.describe(first)
    assert pool.char_ranges[first] == ranges


@pytest.mark.parametrize("value", ["plain", "é \u2028 \" \\ \x01 /", "\ud800", 3, 2.5, None, True, [1, "b"], {"k": "v"}])
def test_json_text_is_json_dumps_without_ascii(value):
    assert json_text(value) == json.dumps(value, ensure_ascii=False)
    assert _MEMO_TEXT([{"enum": [value]}, {}]) == json.dumps([{"enum": [value]}, {}], sort_keys=True, default=repr)


@pytest.mark.parametrize(("pattern", "bounds", "good", "bad"), [
    (".*", {"minLength": 260}, "é" * 260, "é" * 259),
    (".*", {"maxLength": 300}, "\n" * 300, "b" * 301),
    ("^.*", {"minLength": 258, "maxLength": 258}, "x" * 258, "x" * 257),
])
def test_a_length_above_256_beside_a_pattern_that_is_any_text_is_enforced_exactly(pattern, bounds, good, bad):
    """Such a pattern is any text, so the length alone decides (before round 16 a length above
    256 with this pattern was refused, or skipped under ``lenient``)."""
    import leapgram
    from leapgram import Vocabulary

    vocab = Vocabulary.byte_vocabulary()
    compiled = leapgram.GrammarCompiler(vocab, cache_size=0).compile(
        Grammar.from_json_schema({"type": "string", "pattern": pattern, **bounds}))
    for text, valid in ((good, True), (bad, False)):
        matcher = leapgram.Matcher(compiled)
        data = json.dumps(text, ensure_ascii=False).encode()
        consumed = all(matcher.consume_token(byte) for byte in data)
        assert (consumed and matcher.is_accepting()) is valid, (pattern, bounds, len(text))


def _any_value_by_builder_calls(self) -> int:
    """``SchemaTranslator.any_value`` as it was written with ``rule``, ``star``, ``sequence`` and
    ``optional`` (the reference its direct rules must equal)."""
    from leapgram.frontends.json_schema.numbers import number_expr

    if self._any is not None:
        return self._any
    builder = self.builder
    value = self._any = builder.fresh_nonterminal("any")
    string = builder.lexeme("string", self.any_string_expr())
    number = builder.lexeme("number", number_expr(self.ctx, {}, "", integer=False))
    for symbol in (string, number, builder.literal("true"), builder.literal("false"), builder.literal("null")):
        builder.rule(value, [symbol])
    member = [string, *self.punct(":"), value]
    members = builder.sequence([*member, builder.star([*self.punct(","), *member], hint="members")], hint="members")
    builder.rule(value, [builder.literal("{"), *self.ows(), builder.optional([members]), *self.ows(),
                         builder.literal("}")])
    items = builder.sequence([value, builder.star([*self.punct(","), value], hint="items")], hint="items")
    builder.rule(value, [builder.literal("["), *self.ows(), builder.optional([items]), *self.ows(),
                         builder.literal("]")])
    return value


@pytest.mark.parametrize("whitespace", ["flexible", "compact", (", ", ": "), 3])
@pytest.mark.parametrize("schema", [
    {}, True, {"type": "object"}, {"type": "array"}, {"type": "object", "properties": {"a": {}}},
    {"type": "object", "properties": {"k": {"type": "string"}}, "required": ["k"]},
    {"anyOf": [{"type": "array", "items": {}}, {"enum": [1, "x", None]}]},
    {"properties": {"true": {"const": True}, "x": {"type": "number"}}},
])
def test_any_value_writes_the_rules_of_builder_calls(schema, whitespace, monkeypatch):
    from leapgram.frontends.json_schema.translate import SchemaTranslator

    def ir_of():
        ir = Grammar.from_json_schema(schema, whitespace=whitespace).ir
        return ir.rules, ir.nonterminals, [(x.name, x.expr) for x in ir.lexemes], ir.start, ir.nullable

    direct = ir_of()
    monkeypatch.setattr(SchemaTranslator, "any_value", _any_value_by_builder_calls)
    assert ir_of() == direct


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {
        "a": {"type": "string"}, "b": {"type": "string", "description": "x"}, "c": {"type": "integer"},
        "d": {"type": "integer", "minimum": 0}, "e": {"type": "boolean"}, "f": {"type": "null"},
        "g": {"type": "number"}, "h": {"type": "string", "maxLength": 3}, "i": {"type": "integer", "title": "i"}},
     "required": ["a", "e"]},
    {"properties": {"a/b": {"type": "string"}, "é": {"type": "number"}, "q\"": {"type": "boolean"}},
     "additionalProperties": {"type": "string"}},
    {"type": "array", "items": {"type": "string", "format": "date"}},
    {"properties": {"x": {"type": "string", "contentEncoding": "base64"}, "y": {"type": "string"}}},
    {"anyOf": [{"type": "string"}, {"type": "string", "minLength": 2}, {"type": "integer", "nullable": True}]},
])
def test_leaves_translate_as_the_general_path(schema, monkeypatch):
    """``SchemaTranslator._leaf`` (and its one lexeme per plain type) writes what ``_translated``
    writes: the same rules, nonterminals, lexemes and warnings."""
    from leapgram.frontends.json_schema.translate import SchemaTranslator

    def ir_of():
        grammar = Grammar.from_json_schema(schema)
        ir = grammar.ir
        return (ir.rules, ir.nonterminals, [(x.name, x.expr) for x in ir.lexemes], ir.start, len(ir.pool),
                grammar.warnings)

    direct = ir_of()
    monkeypatch.setattr(SchemaTranslator, "_leaf",
                        lambda self, kind, schema, pointer: self._translated(schema, self.schema_key(schema), pointer))
    assert ir_of() == direct


def test_a_closed_object_makes_no_key_set_for_other_keys():
    grammar = Grammar.from_json_schema({"type": "object", "properties": {"a": {"type": "string"}},
                                        "additionalProperties": False})
    assert [x.name for x in grammar.ir.lexemes if x.name.startswith("key:")] == ["key:a"]
    base = len(schema_pool(DEFAULT_LIMITS))
    assert K_NOT not in grammar.ir.pool.kind[base:]  # no complement of the names built
