"""The byte-level matcher (cuts, completions) and the wire format's token spellings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from leapgram import Grammar, Vocabulary
from leapgram.remote.bytes import ByteMatcher
from leapgram.remote.protocol import native_constraint, parse_event, token_bytes


def completes(grammar: Grammar, prefix: bytes) -> bytes:
    matcher = ByteMatcher.for_grammar(grammar)
    assert matcher.feed(prefix) == len(prefix)
    completion = matcher.shortest_completion()
    assert matcher.feed(completion) == len(completion) and matcher.is_accepting()
    return completion


def test_feed_stops_at_the_first_refused_byte_and_truncate_goes_back():
    matcher = ByteMatcher.for_grammar(Grammar.from_regex(r"[0-9]{2}-[a-z]+"))
    assert matcher.feed(b"12-ab3") == 5 and bytes(matcher.text) == b"12-ab"
    matcher.truncate(2)
    assert matcher.forced() == b"-" and matcher.accepts(b"-x") and not matcher.accepts(b"x")


@pytest.mark.parametrize("grammar, prefix, expected", [
    (Grammar.from_regex(r"[a-z]{3,5}@x\.com"), b"ab", b"a@x.com"),
    (Grammar.from_lark('start: "(" start ")" | "1"'), b"(((", b"1)))"),
    (Grammar.from_json_schema({"type": "object", "properties": {"a": {"type": "array", "items": {
        "type": "array", "items": {"type": "integer"}}}}, "required": ["a"]}), b'{"a": [[1], [2', b"]]}"),
])
def test_shortest_completion(grammar, prefix, expected):
    assert completes(grammar, prefix) == expected


def test_completion_of_a_schema_with_required_strings_and_enums():
    schema = json.loads((Path(__file__).resolve().parents[2] / "examples" / "character.json").read_text())
    completion = completes(Grammar.from_json_schema(schema), b'{"name": "Harry Potter", "house": "Gryf')
    assert completion.startswith(b'findor","blood status":"')


def test_token_spellings():
    vocab = Vocabulary.byte_vocabulary()
    assert token_bytes("token_id:65", vocab=vocab) == b"A"
    assert token_bytes("token_id:256", vocab=vocab) == b""  # EOS: the end of text
    assert token_bytes("token_id:65") is None  # no vocabulary to map it
    assert token_bytes("bytes:\\xe2\\x98") == b"\xe2\x98"
    assert token_bytes("é") == "é".encode() and token_bytes(None, [226, 152, 131]) == "☃".encode()


def test_chat_chunk_with_logprobs():
    chunk = {"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None, "logprobs": {"content": [
        {"token": "Hi", "logprob": -0.5, "bytes": [72, 105],
         "top_logprobs": [{"token": "Hi", "logprob": -0.5, "bytes": [72, 105]},
                          {"token": "Yo", "logprob": -1.5, "bytes": [89, 111]}]}]}}]}
    piece = parse_event(json.dumps(chunk).encode(), "here", chat=True)
    assert piece.text == "Hi" and piece.tokens[0].data == b"Hi" and piece.tokens[0].top[1] == (b"Yo", -1.5)


def test_native_constraints_by_option():
    schema = Grammar.from_json_schema({"type": "integer"})
    regex = Grammar.from_regex("[0-9]+")
    assert native_constraint(schema, "structured_outputs") == {"structured_outputs": {"json": {"type": "integer"}}}
    assert native_constraint(regex, "guided") == {"guided_regex": "[0-9]+"}
    assert native_constraint(schema, "llama.cpp") == {"json_schema": {"type": "integer"}}
    with pytest.raises(ValueError, match="cannot carry a regex"):
        native_constraint(regex, "response_format")
