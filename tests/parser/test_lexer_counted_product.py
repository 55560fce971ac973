"""Rows of counted lexemes under a pattern (``(P ∩ r X{a,b}) T``: ``leapgram.parser.counted``'s
``ProductGraph``, ``Lexer._fill_product``): equal, state by state and expression id by
expression id, to the rows built by derivatives and emptiness searches, on anchored and
unanchored patterns, formats, counts with gaps, escapes and multi-byte characters; and the
masks along strings are the same."""

from __future__ import annotations

import pytest

import leapgram as lg
from leapgram.limits import Limits
from leapgram.parser import Lexer, counted
from leapgram.parser.counted import PatternRows, in_layers
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
    string("\\d+-[A-Fa-f0-9]*-[A-Fa-f0-9]{3}", 9, None),  # o79409's trace_id, shorter: pumped past the witness
    string("[A-z]+", 5, 12),  # the witness too short, pumped within the maximum
    string("^[a-c]+-[0-9]*$", 0, 5),  # two runs: the limits cannot move into one
    string(None, None, 9, format="email"),
])
def test_product_rows_equal_rows_derived(schema, monkeypatch):
    assert compare(lg.Grammar.from_json_schema(schema).ir, monkeypatch) > 0


LIMITS = [
    {"MAX_PRODUCT_NODES": 6},  # the graph too large to be made whole: emptiness by the search
    {"MAX_PATTERN_STATES": 5},  # the pattern's template too large after some rows: derivatives from there
    {"SEARCH_ENTRIES": -1, "_witness": lambda self, pool, node: -2},  # every answer from the whole graph
    {"SEARCH_STATES": 1, "WITNESS_STEPS": 1},
    {"_pumped": lambda self, pool, node, low, high: False},  # no pumped witness: the search, the graph
    {"SEARCH_ENTRIES": -1},  # past the pumped witness: the whole graph
]


@pytest.mark.parametrize("limits", LIMITS)
@pytest.mark.parametrize("schema", [
    string("^\\S+@\\S+$", 3, 7),
    string("a.*b", 4, None),
    string("[0-9]+-[a-f]*-", 6, 11),
    string(None, 2, 9, format="email"),
    string("^([a-z]{2})+$", 1, 9),
])
def test_product_rows_equal_rows_derived_at_their_limits(schema, limits, monkeypatch):
    for name, value in limits.items():
        monkeypatch.setattr(counted.ProductGraph if name.startswith("_") else counted, name, value)
    compare(lg.Grammar.from_json_schema(schema).ir, monkeypatch)


def test_a_short_value_makes_a_few_pairs():
    """The graph of an email with a length is made as the value's bytes reach its pairs: a short
    value neither makes the pattern's whole template nor the layers."""
    ir = lg.Grammar.from_json_schema(string(None, None, 100, format="email")).ir
    lexer = Lexer(ir, Limits())
    state = lexer.start_state(frozenset(n for n, lexeme in enumerate(ir.lexemes) if lexeme.name.startswith("string")))
    for byte in b'"ab@c':
        lexer.fill_row(state)
        state = int(lexer.trans[state, byte])
    lexer.fill_row(state)
    templates = {id(found[0]): found[0] for key, found in lexer.pool.memo.items()
                 if key[0] == "counted pattern" and len(key) == 2}
    assert templates and all(isinstance(rows, PatternRows) for rows in templates.values())
    for rows in templates.values():
        assert sum(row is not None for row in rows.rows) < 20 < len(rows.exprs) or len(rows.exprs) < 20
        assert all(graph.member is None and len(graph.pairs) < 100 for graph in rows.graphs)


def test_a_pumped_pattern_needs_no_whole_graph():
    """An unanchored pattern under a ``minLength`` longer than its shortest string (o79409's
    ``trace_id``): every state along a value is alive from the shortest string pumped by one
    character, so the graph is never made whole (no layers)."""
    ir = lg.Grammar.from_json_schema(string("\\d+-[A-Fa-f0-9]*-[A-Fa-f0-9]{6}", 20, None)).ir
    lexer = Lexer(ir, Limits())
    state = lexer.start_state(frozenset(n for n, lexeme in enumerate(ir.lexemes) if lexeme.name.startswith("string")))
    for byte in b'"1-60f6-0123':
        lexer.fill_row(state)
        state = int(lexer.trans[state, byte])
        assert state >= 0
    lexer.fill_row(state)
    graphs = [graph for key, found in lexer.pool.memo.items() if key[0] == "counted pattern" and len(key) == 2
              for graph in found[0].graphs]
    assert graphs and all(graph.member is None for graph in graphs)
    assert any(m >= 0 for graph in graphs for m in graph.pumps_from)


def test_layers_read_the_counts():
    bits, prefix, period = 0b0101, 1, 2  # ends after 0, 2, 4, ... entries
    assert in_layers(bits, prefix, period, 0, 0) and not in_layers(bits, prefix, period, 1, 1)
    assert in_layers(bits, prefix, period, 1, 2) and in_layers(bits, prefix, period, 3, 4)
    assert not in_layers(bits, prefix, period, 5, 5) and in_layers(bits, prefix, period, 101, INF)
    bits = 0b0100  # after 2, 4, ...
    assert not in_layers(bits, prefix, period, 0, 1) and in_layers(bits, prefix, period, 2, 2)
    assert not in_layers(bits, prefix, period, 3, 3) and in_layers(bits, prefix, period, 10, 10)
    assert not in_layers(bits, prefix, period, 11, 11) and in_layers(bits, prefix, period, 11, 12)


def test_masks_along_strings_equal(monkeypatch):
    schema = {"type": "object", "properties": {"s": string("^\\S+@\\S+$", 3, 8), "t": string("[A-z]+", 2, 5)},
              "required": ["s", "t"]}
    texts = ['{"s": "ab@x", "t": "Ab"}', '{"s": "é\\"@€x", "t": "1a2"}', '{"s": "abcdefgh@x"}', '{"s": "@x"}',
             '{"s": "a@b", "t": "12345"}']
    extra = EXTRA_TOKENS + [b'@x']
    product = masks_along(schema, texts, extra)
    monkeypatch.setattr(Lexer, "_product_entry", lambda self, expr: None)
    assert product == masks_along(schema, texts, extra)
