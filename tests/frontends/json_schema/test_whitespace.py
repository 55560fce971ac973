"""The flexible whitespace run: at most 20 bytes, or a newline and its indentation (up to 100 bytes
in all), so ``json.dumps(indent=...)`` output is accepted to deep nesting; still bounded."""

from __future__ import annotations

import json

import pytest

from leapgram import Grammar, Matcher, allowed_tokens
from leapgram.frontends.json_schema.common import LONG_RUN, SHORT_RUN, flexible_whitespace_expr
from leapgram.regex.expr import ExprPool
from tests.helpers.compiling import compile_for
from tests.helpers.schema_acceptance import accepts

ANY = Grammar.from_json_schema({})


def nested(depth: int):
    """A document ``depth`` levels deep, objects and arrays in turn, with a sibling at each level."""
    value = {"leaf": [1, "x", None]}
    for level in range(depth):
        value = {"k": value, "n": level} if level % 2 else [value, level]
    return value


def in_run(run: bytes) -> bool:
    """The run's language, written out: what flexible_whitespace_expr must match."""
    if not run or run.strip(b" \t\n\r"):
        return False
    if len(run) <= SHORT_RUN:
        return True
    last = run.rfind(b"\n")
    return len(run) <= LONG_RUN and 0 <= last < SHORT_RUN and not run[last + 1:].strip(b" \t")


def test_the_run_is_the_documented_language():
    pool = ExprPool()
    run = flexible_whitespace_expr(pool)
    assert flexible_whitespace_expr(pool) == run  # remembered
    probes = [b"", b" ", b"\r\n", b" " * 20, b" " * 21, b"\t" * 30, b"\n" + b" " * 99, b"\n" + b" " * 100,
              b"\n\n" + b"\t" * 98, b" " * 19 + b"\n" + b" " * 80, b" " * 20 + b"\n" + b" " * 4,
              b"\n" + b" " * 18 + b"\r", b"\n" + b" " * 19 + b"\r", b"\n" + b" " * 30 + b"\r", b"\r\n" + b" " * 40,
              b"\n" + b" " * 30 + b"\n", b"\n" * 20 + b" ", b"\n" * 21, b"x", b" x"]
    probes += [bytes(b" \t\n\r"[(i * 7 + j * j) % 4] for j in range(n)) for i in range(8) for n in (5, 19, 20, 21, 40)]
    for probe in probes:
        assert pool.matches(run, probe) == in_run(probe), probe


@pytest.mark.parametrize("indent", [2, 4, "\t"])
def test_indented_dumps_are_accepted_deep(byte_vocab, indent):
    value = nested(18)
    text = json.dumps(value, indent=indent)
    assert f"\n{' ' * 4 * 17 if indent == 4 else ''}" in text  # deeper than a 20-byte run allows
    compiled = compile_for(ANY, byte_vocab)
    walk(compiled, byte_vocab, list(text.encode()))
    assert accepts(compile_for(Grammar.from_json_schema(schema_of(value)), byte_vocab), text)


@pytest.mark.parametrize("indent", [2, 4, "\t"])
def test_indented_dumps_are_accepted_token_by_token(llama3_vocab, indent):
    value = nested(16)
    text = json.dumps(value, indent=indent)
    for grammar in (ANY, Grammar.from_json_schema(schema_of(value))):
        walk(compile_for(grammar, llama3_vocab), llama3_vocab, llama3_vocab.encode(text.encode()))


def test_a_long_run_is_refused(byte_vocab):
    compiled = compile_for(ANY, byte_vocab)
    assert accepts(compiled, "[" + " " * 20 + "1]") and not accepts(compiled, "[" + " " * 21 + "1]")
    assert accepts(compiled, "[\n" + " " * 99 + "1]") and not accepts(compiled, "[\n" + " " * 100 + "1]")
    assert not accepts(compiled, "[1," + " \n" * 150 + "2]")  # 300 bytes of whitespace
    matcher = Matcher(compiled)
    assert matcher.consume_tokens(list(b"[1,\n" + b" " * 99))
    assert allowed_tokens(matcher.compute_mask(), byte_vocab.size).tolist().count(ord(" ")) == 0
    assert not accepts(compiled, " [1]")


def test_a_run_length_is_a_plain_bound(byte_vocab):
    compiled = compile_for(Grammar.from_json_schema({"type": "array"}, whitespace=20), byte_vocab)
    assert accepts(compiled, "[" + " " * 20 + "1]") and not accepts(compiled, "[\n" + " " * 20 + "1]")


def schema_of(value):
    """A schema that each level of ``nested`` satisfies only in its own shape."""
    if isinstance(value, dict):
        return {"type": "object", "properties": {k: schema_of(v) for k, v in value.items()}, "required": list(value),
                "additionalProperties": False}
    if isinstance(value, list):
        return {"type": "array", "prefixItems": [schema_of(v) for v in value], "items": False}
    return {"const": value}


def walk(compiled, vocab, tokens: list[int]) -> None:
    """Each token allowed by the mask before it, then the end."""
    matcher = Matcher(compiled)
    for n, token in enumerate(tokens):
        assert token in set(allowed_tokens(matcher.compute_mask(), vocab.size).tolist()), (n, vocab.token_bytes(token))
        assert matcher.consume_token(token), n
    assert matcher.is_accepting()
