"""Hostile inputs: every schema, regex, Lark or GBNF text, token id and bitmask array a user can
give ends in a result or a documented error, within loose time and memory bounds.

Documented errors: :class:`GrammarError` (malformed), :class:`UnsupportedError` (valid but not
supported; a ``GrammarError``), :class:`BudgetExceededError` (a named ``Limits`` field ran out)
for grammar input; ``ValueError`` (or ``TypeError`` for a wrong Python type) for misuse of the
API. Never ``RecursionError``, ``MemoryError``, ``IndexError`` or a bare builder ``ValueError``.
"""

from __future__ import annotations

import json
import resource
import time

import numpy as np
import pytest

import leapgram
from leapgram import BudgetExceededError, Grammar, GrammarError, UnsupportedError, Vocabulary

VOCAB = Vocabulary.byte_vocabulary()
WORDS = (VOCAB.size + 31) // 32
OK = "ok"
MISUSE = (ValueError, TypeError)
MAX_SECONDS = 60  # loose: the slowest case takes a few seconds here, without JIT too
MAX_GROWTH_MB = 1500


def compile_grammar(grammar: Grammar) -> leapgram.CompiledGrammar:
    return leapgram.GrammarCompiler(VOCAB).compile(grammar)


def first_mask(grammar: Grammar) -> int:
    """Compile ``grammar`` and count the tokens its first mask allows."""
    matcher = leapgram.Matcher(compile_grammar(grammar))
    return int(np.unpackbits(matcher.compute_mask().view(np.uint8)).sum())


def walk(schema, text: bytes) -> bool:
    matcher = leapgram.Matcher(compile_grammar(Grammar.from_json_schema(schema)))
    return matcher.consume_tokens(text) and matcher.is_accepting()


def nested(depth: int, wrap) -> dict:
    schema: dict = {"type": "integer"}
    for _ in range(depth):
        schema = wrap(schema)
    return schema


def rule_chain(n: int, syntax: str) -> str:
    arrow = "::=" if syntax == "gbnf" else ":"
    start = "root" if syntax == "gbnf" else "start"
    lines = [f"{start} {arrow} r0"] + [f'r{i} {arrow} r{i + 1} "x"' for i in range(n)] + [f'r{n} {arrow} "y"']
    return "\n".join(lines)


# (name, thunk, expected outcome: OK or the exception types allowed)
SCHEMAS = [
    ("schema nested 2,000 properties", lambda: Grammar.from_json_schema(
        nested(2000, lambda s: {"type": "object", "properties": {"a": s}})), UnsupportedError),
    ("schema nested 2,000 items", lambda: Grammar.from_json_schema(
        nested(2000, lambda s: {"type": "array", "items": s})), UnsupportedError),
    ("schema nested 2,000 allOf", lambda: Grammar.from_json_schema(nested(2000, lambda s: {"allOf": [s]})),
     UnsupportedError),
    ("schema nested 2,000 anyOf", lambda: Grammar.from_json_schema(
        nested(2000, lambda s: {"anyOf": [s, {"type": "null"}]})), UnsupportedError),
    ("schema nested 2,000 not", lambda: Grammar.from_json_schema(nested(2000, lambda s: {"not": s})),
     UnsupportedError),
    ("schema nested 40 properties", lambda: first_mask(Grammar.from_json_schema(
        nested(40, lambda s: {"type": "object", "properties": {"a": s}}))), OK),
    ("schema $ref chain of 3,000", lambda: Grammar.from_json_schema(
        {"$ref": "#/$defs/d0", "$defs": {**{f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(3000)},
                                         "d3000": {"type": "string"}}}), UnsupportedError),
    ("schema text nested 100,000", lambda: Grammar.from_json_schema("[" * 100_000 + "]" * 100_000),
     GrammarError),
    ("schema const nested 900", lambda: first_mask(Grammar.from_json_schema(
        {"const": json.loads("[" * 900 + "]" * 900)})), OK),
    ("schema minItems 100,000", lambda: Grammar.from_json_schema({"type": "array", "minItems": 100_000}),
     BudgetExceededError),
    ("schema maxItems 100,000", lambda: Grammar.from_json_schema({"type": "array", "maxItems": 100_000}),
     UnsupportedError),
    ("schema minItems 50,000 maxItems 51,000", lambda: Grammar.from_json_schema(
        {"type": "array", "minItems": 50_000, "maxItems": 51_000}), BudgetExceededError),
    ("schema minContains 100,000", lambda: Grammar.from_json_schema(
        {"type": "array", "contains": {"type": "integer"}, "minContains": 100_000}), BudgetExceededError),
    ("schema minProperties 100,000", lambda: Grammar.from_json_schema(
        {"type": "object", "minProperties": 100_000}), UnsupportedError),
    ("schema maxLength 10**9", lambda: first_mask(Grammar.from_json_schema(
        {"type": "string", "maxLength": 10**9})), OK),
    ("schema minLength 100,000", lambda: walk({"type": "string", "minLength": 100_000},
                                             b'"' + b"x" * 100_000 + b'"'), OK),
    ("schema integer bounds 10**30", lambda: walk({"type": "integer", "minimum": -10**30, "maximum": 10**30},
                                                  str(10**29).encode()), OK),
    ("schema multipleOf a large prime", lambda: Grammar.from_json_schema({"type": "integer", "multipleOf": 7919}),
     UnsupportedError),
    ("schema enum of 100,000 strings", lambda: first_mask(Grammar.from_json_schema(
        {"enum": [f"value{i}" for i in range(100_000)]})), (OK, BudgetExceededError)),
    ("schema enum of 20,000 integers", lambda: walk({"enum": list(range(20_000))}, b"19999"), OK),
    ("schema pattern of 5,000 bytes and a group", lambda: walk(
        {"type": "string", "pattern": "^" + "x" * 5000 + "(y|z)"}, b'"' + b"x" * 5000 + b'y"'), OK),
    ("schema catastrophic pattern", lambda: walk({"type": "string", "pattern": "^(a+)+$"},
                                                 b'"' + b"a" * 5000 + b'"'), OK),
    ("schema bad type", lambda: Grammar.from_json_schema({"type": 5}), GrammarError),
    ("schema not JSON", lambda: Grammar.from_json_schema("{"), GrammarError),
    ("schema matching nothing", lambda: Grammar.from_json_schema({"allOf": [{"type": "string"}, {"type": "null"}]}),
     GrammarError),
]

REGEXES = [
    ("regex (a+)+$", lambda: first_mask(Grammar.from_regex("(a+)+$")), OK),
    ("regex (a|aa)*b(a|aa)*", lambda: first_mask(Grammar.from_regex("(a|aa)*b(a|aa)*")), OK),
    ("regex (a{1000}){1000}", lambda: first_mask(Grammar.from_regex("(a{1000}){1000}")), OK),
    ("regex a{100000}", lambda: Grammar.from_regex("a{100000}"), UnsupportedError),
    ("regex 2,000 groups", lambda: Grammar.from_regex("(" * 2000 + "a" + ")" * 2000), UnsupportedError),
    ("regex 2,000 unclosed groups", lambda: Grammar.from_regex("(" * 2000), GrammarError),
    ("regex DFA blow-up (a|b)*a(a|b){30}", lambda: first_mask(Grammar.from_regex("(a|b)*a(a|b){30}")), OK),
    ("regex backreference", lambda: Grammar.from_regex(r"(a)\1"), UnsupportedError),
    ("regex 20,000 alternatives", lambda: first_mask(Grammar.from_regex("|".join(f"w{i}" for i in range(20_000)))),
     OK),
    ("regex literal of 100,000 bytes", lambda: first_mask(Grammar.from_regex("a" * 100_000)),
     (OK, BudgetExceededError)),
    ("regex nothing", lambda: Grammar.from_regex("[^\\x00-\\U0010ffff]"), (OK, GrammarError)),
]

LARK = [
    ("lark derives nothing", lambda: Grammar.from_lark('start: a\na: a "x"'), GrammarError),
    ("lark ambiguous", lambda: first_mask(Grammar.from_lark('start: start start | "a"')), OK),
    ("lark 2,000 groups", lambda: Grammar.from_lark("start: " + "(" * 2000 + '"a"' + ")" * 2000), UnsupportedError),
    ("lark repeat 100,000", lambda: Grammar.from_lark('start: "a"~100000'), UnsupportedError),
    ("lark undefined rule", lambda: Grammar.from_lark("start: b"), GrammarError),
    ("lark chain of 3,000 rules", lambda: first_mask(Grammar.from_lark(rule_chain(3000, "lark"))), OK),
    ("lark chain of 3,000 terminals", lambda: Grammar.from_lark(
        "start: T0\n" + "\n".join(f'T{i}: T{i + 1} "x"' for i in range(3000)) + '\nT3000: "y"'), UnsupportedError),
    ("lark recursive terminal", lambda: Grammar.from_lark('start: A\nA: "a" A'), GrammarError),
]

GBNF = [
    ("gbnf derives nothing", lambda: Grammar.from_gbnf('root ::= root "x"'), GrammarError),
    ("gbnf ambiguous", lambda: first_mask(Grammar.from_gbnf('root ::= root root | "a"')), OK),
    ("gbnf 2,000 groups", lambda: Grammar.from_gbnf("root ::= " + "(" * 2000 + '"a"' + ")" * 2000), UnsupportedError),
    ("gbnf repeat 100,000", lambda: Grammar.from_gbnf('root ::= "a"{100000}'), UnsupportedError),
    ("gbnf undefined rule", lambda: Grammar.from_gbnf("root ::= b"), GrammarError),
    ("gbnf chain of 1,000 rules", lambda: first_mask(Grammar.from_gbnf(rule_chain(1000, "gbnf"))), OK),
    ("gbnf unterminated string", lambda: Grammar.from_gbnf('root ::= "a'), GrammarError),
]


def _matcher() -> leapgram.Matcher:
    return leapgram.Matcher(compile_grammar(Grammar.from_json_schema({"type": "string"})))


def _readonly() -> np.ndarray:
    mask = np.zeros((1, WORDS), np.int32)
    mask.setflags(write=False)
    return mask


TOKENS_AND_MASKS = [
    ("token id -1", lambda: _matcher().consume_token(-1), MISUSE),
    ("token id = vocab size", lambda: _matcher().consume_token(VOCAB.size), MISUSE),
    ("token id 2**70", lambda: _matcher().consume_token(2**70), MISUSE),
    ("token id float", lambda: _matcher().consume_token(1.0), MISUSE),
    ("token id None", lambda: _matcher().consume_token(None), MISUSE),
    ("token ids as str", lambda: _matcher().consume_tokens("abc"), MISUSE),
    ("validate 2**63", lambda: _matcher().validate_tokens([2**63]), MISUSE),
    ("draft masks of -5", lambda: _matcher().draft_masks([-5]), MISUSE),
    ("roll back more than consumed", lambda: _matcher().rollback(10**9), MISUSE),
    ("bitmask int64", lambda: _matcher().fill_next_token_bitmask(np.zeros((1, WORDS), np.int64)), MISUSE),
    ("bitmask too narrow", lambda: _matcher().fill_next_token_bitmask(np.zeros((1, WORDS - 1), np.int32)), MISUSE),
    ("bitmask 3-D", lambda: _matcher().fill_next_token_bitmask(np.zeros((1, 1, WORDS), np.int32)), MISUSE),
    ("bitmask row out of range", lambda: _matcher().fill_next_token_bitmask(np.zeros((2, WORDS), np.int32), 2),
     MISUSE),
    ("bitmask row -1", lambda: _matcher().fill_next_token_bitmask(np.zeros((2, WORDS), np.int32), -1), MISUSE),
    ("bitmask not contiguous", lambda: _matcher().fill_next_token_bitmask(
        np.zeros((2, 2 * WORDS), np.int32)[:, ::2]), MISUSE),
    ("bitmask read-only", lambda: _matcher().fill_next_token_bitmask(_readonly()), MISUSE),
    ("bitmask a list", lambda: _matcher().fill_next_token_bitmask([[0] * WORDS]), MISUSE),
    ("bitmask no rows", lambda: _matcher().fill_next_token_bitmask(np.zeros((0, WORDS), np.int32)), MISUSE),
    ("allocate negative batch", lambda: leapgram.allocate_token_bitmask(-1, 10), MISUSE),
    ("apply int64 bitmask", lambda: leapgram.apply_token_bitmask(np.zeros((1, VOCAB.size), np.float32),
                                                                 np.zeros((1, WORDS), np.int64)), MISUSE),
]

# Long outputs through a matcher: slow without JIT, so only in the compiled run.
SLOW = [
    ("a string of 1,000,000 bytes", lambda: walk({"type": "string"}, b'"' + b"x" * 1_000_000 + b'"'), OK),
    ("arrays nested 5,000 deep", lambda: walk({}, b"[" * 5000 + b"]" * 5000), OK),
    ("gbnf chain of 3,000 rules", lambda: first_mask(Grammar.from_gbnf(rule_chain(3000, "gbnf"))), OK),
]


def _cases(table, marks=()):
    return [pytest.param(thunk, expected, id=name, marks=marks) for name, thunk, expected in table]


def _max_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.parametrize(("thunk", "expected"), _cases(SCHEMAS) + _cases(REGEXES) + _cases(LARK) + _cases(GBNF)
                         + _cases(TOKENS_AND_MASKS) + _cases(SLOW, [pytest.mark.slow]))
def test_hostile_input(thunk, expected):
    allowed = expected if isinstance(expected, tuple) else (expected,)
    errors = tuple(e for e in allowed if e is not OK)
    before = _max_rss_mb()
    start = time.perf_counter()
    try:
        thunk()
        outcome = OK
    except errors as err:
        outcome = type(err)
        assert str(err), "an error must say what is wrong"
    elapsed = time.perf_counter() - start
    assert outcome is OK or issubclass(outcome, errors)
    assert OK in allowed or outcome is not OK, f"expected one of {allowed}, got a result"
    assert elapsed < MAX_SECONDS, f"took {elapsed:.1f} s"
    assert _max_rss_mb() - before < MAX_GROWTH_MB


def test_nesting_error_names_the_pointer():
    with pytest.raises(UnsupportedError) as info:
        Grammar.from_json_schema(nested(2000, lambda s: {"type": "object", "properties": {"a": s}}))
    assert info.value.feature == "nesting"
    assert info.value.pointer.startswith("/properties/a/properties/a")


def test_budget_error_names_the_keyword():
    with pytest.raises(BudgetExceededError) as info:
        Grammar.from_json_schema({"type": "array", "items": {"minItems": 100_000}})
    assert info.value.limit == "max_repeat" and "minItems 100000 at /items/minItems" in str(info.value)


@pytest.mark.parametrize("where", ["properties", "allOf", "enum", "const", "default"])
def test_a_schema_that_holds_itself_is_a_grammar_error(where):
    """A Python dict or list that contains one of its ancestors is no JSON document: a
    GrammarError (with the pointer where the schema meets itself again), never a hang."""
    schema: dict = {"type": "object"}
    if where == "properties":
        schema["properties"] = {"a": schema}
    elif where == "allOf":
        schema["allOf"] = [{"anyOf": [schema]}]
    else:
        loop: list = []
        loop.append(loop)
        schema[where] = [loop] if where == "enum" else loop
    start = time.perf_counter()
    with pytest.raises(GrammarError):
        Grammar.from_json_schema(schema)
    assert time.perf_counter() - start < 10
    shared = {"type": "integer"}  # the same dict twice (not a cycle) is fine
    Grammar.from_json_schema({"type": "object", "properties": {"a": shared, "b": shared}})


@pytest.mark.parametrize("schema", [
    '{"enum": ["\\udfff"]}',
    '{"type": "object", "properties": {"\\ud800": {"type": "integer"}}}',
    '{"const": "a\\ud800"}',
    {"type": "object", "properties": {"a": {"enum": ["ok", "x\ud83d"]}}},
])
def test_a_lone_surrogate_in_a_schema_is_a_grammar_error_with_its_pointer(schema):
    """No UTF-8 output can hold a lone surrogate, and Python's JSON parser lets one through:
    a GrammarError naming where it is, not a bare UnicodeEncodeError."""
    with pytest.raises(GrammarError) as info:
        Grammar.from_json_schema(schema)
    assert "lone surrogate" in str(info.value)
    assert info.value.pointer


@pytest.mark.parametrize(("schema", "pointer", "says"), [
    ({"enum": [b"abc"]}, "/enum/0", "b'abc', a Python bytes"),
    ({"type": "object", "properties": {"a": {"const": b"x"}}}, "/properties/a/const", "a Python bytes"),
    ({"enum": ["ok", 1j]}, "/enum/1", "a Python complex"),
    ({"type": "object", "properties": {b"k": {"type": "integer"}}}, "/properties", "JSON object keys are strings"),
    ({"anyOf": [{"const": object()}]}, "/anyOf/0/const", "a Python object"),
])
def test_python_data_that_is_not_json_is_a_grammar_error_with_its_pointer(schema, pointer, says):
    """A dict schema holding bytes, a complex number or a non-string key (no JSON text holds
    them): a GrammarError at its pointer, not a bare TypeError from deep in the translation."""
    with pytest.raises(GrammarError) as info:
        Grammar.from_json_schema(schema)
    assert info.value.pointer == pointer
    assert says in str(info.value)


def test_a_type_error_that_is_not_about_the_schema_data_is_not_relabelled(monkeypatch):
    """Only failures the walk can pin on a value become GrammarErrors: an internal TypeError
    on clean JSON data propagates unchanged (it is a bug to report, not the user's input)."""
    from leapgram.frontends.json_schema import translate

    def broken(self):
        raise TypeError("internal")

    monkeypatch.setattr(translate.SchemaTranslator, "build", broken)
    with pytest.raises(TypeError, match="internal"):
        Grammar.from_json_schema({"type": "integer"})


@pytest.mark.parametrize(("content", "says"), [
    (b'{"model": {"type": "BPE", "vocab": {"a": 0', "not JSON (Expecting ',' delimiter at line 1, column 43)"),
    (b"", "not JSON"),
    (b"\xff\xfe{}", "not UTF-8"),
    (b"[1, 2]", "not a tokenizer.json"),
    (b'{"model": "x"}', "a malformed tokenizer.json"),
])
def test_a_malformed_tokenizer_json_is_a_tokenizer_error(tmp_path, content, says):
    """A truncated, binary or wrongly shaped ``tokenizer.json`` is a ``TokenizerError`` naming the
    file and what is wrong (was a bare ``JSONDecodeError``, ``UnicodeDecodeError`` or
    ``AttributeError``)."""
    (tmp_path / "tokenizer.json").write_bytes(content)
    with pytest.raises(leapgram.TokenizerError) as caught:
        Vocabulary.from_tokenizer_json(tmp_path)
    assert says in str(caught.value) and "tokenizer.json" in str(caught.value)
