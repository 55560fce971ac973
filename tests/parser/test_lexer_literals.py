"""Rows along literals (``Lexer._fill_literal``): a schema's keys and enum members, their states
numbered in one go, and the ``acc_*`` entries of the states where they end sharing one slot of
``acc_pool`` per list of lexemes."""

from __future__ import annotations

import leapgram as lg
from leapgram.limits import Limits
from leapgram.parser import Lexer
from tests.helpers.family import without_row_templates
from tests.parser.test_lexer_templates import rows_by_items

SCHEMA = {"type": "object",
          "properties": {"location": {"type": "string"}, "locale": {"enum": ["en_US", "en_GB", "fr"]},
                         "unit": {"enum": ["celsius", "fahrenheit"]}, "days": {"type": "integer"}},
          "required": ["location", "unit"]}


def test_rows_along_literals_equal_rows_built_one_by_one(monkeypatch):
    ir = lg.Grammar.from_json_schema(SCHEMA).ir
    everything = frozenset(range(len(ir.lexemes)))
    fresh_sets = [everything] + [frozenset([lex]) for lex in everything]
    along_literals = rows_by_items(ir, fresh_sets)  # also checks every state's acc_* entries
    assert len(along_literals) > 60

    def no_chain(self, state, lex, expr, first):  # the row of ``state`` by byte classes, as other rows
        return state, expr

    monkeypatch.setattr(Lexer, "_fill_literal", no_chain)
    without_row_templates(monkeypatch, ir.pool)
    assert along_literals == rows_by_items(ir, fresh_sets)


def test_states_ending_the_same_lexemes_share_one_slot():
    ir = lg.Grammar.from_json_schema(SCHEMA).ir
    lexer = Lexer(ir, Limits())
    block = lexer.num_states  # the family block's states keep a slot each (copied at compile)
    enum = next(lex for lex, lexeme in enumerate(ir.lexemes) if lexeme.name == "enum:/properties/locale")
    every = lexer.start_state(frozenset(range(len(ir.lexemes))))
    members = lexer.start_state(frozenset([enum]))
    for start, text in ((every, b'"location"'), (every, b'"unit"'), (members, b'"en_US"'), (members, b'"en_GB"'),
                        (members, b'"fr"')):
        state = start
        for byte in text:
            lexer.fill_row(state)
            state = int(lexer.trans[state, byte])
        assert lexer.accepting[state]
    acc_start, acc_len, acc_pool, _, _ = lexer.kernel_arrays[:5]
    slots = {}
    for state in range(block, lexer.num_states):
        if lexer.accepting[state]:
            ended = tuple(acc_pool[acc_start[state]:acc_start[state] + acc_len[state]].tolist())
            assert ended == lexer.accepted(state)
            slots.setdefault(ended, []).append(int(acc_start[state]))
    assert max(len(starts) for starts in slots.values()) >= 2  # states where the same lexemes end
    assert all(len(set(starts)) == 1 for starts in slots.values())
