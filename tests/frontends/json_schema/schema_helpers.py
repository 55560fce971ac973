"""Helpers for the JSON Schema tests: compile with the byte vocabulary and run an instance."""

from __future__ import annotations

import json

import leapgram

BYTES = leapgram.Vocabulary.byte_vocabulary()


def matcher_for(schema, **options) -> leapgram.Matcher:
    return leapgram.Matcher(leapgram.compile(leapgram.Grammar.from_json_schema(schema, **options), BYTES))


def accepts_text(schema, text: str, **options) -> bool:
    matcher = matcher_for(schema, **options)
    return matcher.consume_tokens(list(text.encode("utf-8"))) and matcher.is_accepting()


def accepts(schema, value, **options) -> bool:
    """Whether ``json.dumps(value, ensure_ascii=False)`` is accepted, as MaskBench writes it."""
    return accepts_text(schema, json.dumps(value, ensure_ascii=False), **options)
