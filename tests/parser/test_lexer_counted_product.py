"""Rows of counted lexemes under a pattern (``(P ∩ r X{a,b}) T``: ``leapgram.parser.counted``'s
``ProductGraph``, ``Lexer._fill_product``): equal, state by state and expression id by
expression id, to the rows built by derivatives and emptiness searches, on anchored and
unanchored patterns, formats, counts with gaps, escapes and multi-byte characters; and the
masks along strings are the same."""

from __future__ import annotations

import pytest

import leapgram as lg
from leapgram.parser import Lexer
from leapgram.parser.counted import ProductGraph
from leapgram.regex.expr import INF
from tests.parser.test_lexer_counted import EXTRA_TOKENS, masks_along
from tests.parser.test_lexer_counted import compare as compare_counted


def compare(ir, monkeypatch) -> int:
    """Assert the rows with and without product rows are equal; the number of product rows."""
    return compare_counted(ir, monkeypatch, "_fill_product", ("_product_entry", lambda self, expr: None))


def string(pattern=None, low=None, high=None, **more) -> dict:
    schema = {"type": "string", **more}
    for key, value in (("pattern", pattern), ("minLength", low), ("maxLength", high)):
        if value is not None:
            schema[key] = value
    return schema


@pytest.mark.parametrize("schema", [
    string("[A-z]+", 3, 9),  # unanchored (o23174's, shorter)
    string("^[a-z0-9-]+:[a-z0-9.-]+:([a-z0-9-]+)?:[a-z0-9-]+$", 0, 11),  # a curie (o42888's)
    string("^\\S+@\\S+$", 3, 7),  # o50681's: multi-byte characters and escapes on both sides
    string("^([a-z]{2})+$", 1, 9),  # even lengths only: the counts have gaps
    string("^(ab|c)+$", 2, 8),
    string("x[é\\\\\"]+y", 2, 6),  # unanchored; escapes and UTF-8 inside the pattern's characters
    string("a.*b", 4, None),  # unanchored, a minimum only (o79409's shape)
    string("^[a-c]+-[0-9]*$", 0, 5),  # two runs: the limits cannot move into one
    string(None, None, 9, format="email"),
])
def test_product_rows_equal_rows_derived(schema, monkeypatch):
    assert compare(lg.Grammar.from_json_schema(schema).ir, monkeypatch) > 0


def test_alive_reads_the_counts():
    graph = ProductGraph(((), None), type("Char", (), {"eps": 0})(), [(0, 0), (0, 1)], {}, [], [0b0101, 0b0100],
                         prefix=1, period=2, shape=None)  # node 0 ends after 0, 2, 4, ... entries; node 1 after 2, 4, ...
    assert graph.alive(0, 0, 0) and not graph.alive(0, 1, 1) and graph.alive(0, 1, 2)
    assert graph.alive(0, 3, 4) and not graph.alive(0, 5, 5) and graph.alive(0, 101, INF)
    assert not graph.alive(1, 0, 0) and graph.alive(1, 1, 1) and not graph.alive(1, 2, 2)  # a residual: one more
    assert graph.alive(1, 9, 9) and not graph.alive(1, 10, 10) and graph.alive(1, 10, 11)


def test_masks_along_strings_equal(monkeypatch):
    schema = {"type": "object", "properties": {"s": string("^\\S+@\\S+$", 3, 8), "t": string("[A-z]+", 2, 5)},
              "required": ["s", "t"]}
    texts = ['{"s": "ab@x", "t": "Ab"}', '{"s": "é\\"@€x", "t": "1a2"}', '{"s": "abcdefgh@x"}', '{"s": "@x"}',
             '{"s": "a@b", "t": "12345"}']
    extra = EXTRA_TOKENS + [b'@x']
    product = masks_along(schema, texts, extra)
    monkeypatch.setattr(Lexer, "_product_entry", lambda self, expr: None)
    assert product == masks_along(schema, texts, extra)
