"""Literal lexemes laid out at compile (``Lexer._literal_chains``, ``Lexer._lay_out_literals``)
and, past ``MAX_LITERAL_STATES``, all at once when first reached (``Lexer._fill_whole_literal``):
a schema's keys get the states after each of their bytes, their rows and ``acc_*`` entries in a
few array writes. Rows, ended lexemes and masks must be those built byte by byte."""

from __future__ import annotations

import leapgram as lg
import leapgram.parser.lexer as lexer_module
from leapgram import Grammar
from leapgram.limits import Limits
from leapgram.parser import Lexer
from leapgram.regex.dfa import DEAD, UNKNOWN
from tests.parser.test_lexer_block import small_vocab, walks
from tests.parser.test_lexer_templates import rows_by_items

SCHEMA = {"type": "object",
          "properties": {"location": {"type": "string"}, "locale": {"enum": ["en_US", "en_GB", "fr"]},
                         "loc": {"const": "x"}, "l": {"type": "integer"}, "a\u00e9\u2603": {"type": "boolean"},
                         "nested": {"type": "object", "properties": {"location": {"type": "number"}},
                                    "additionalProperties": {"type": "string"}}},
          "required": ["location"]}


def no_layout(monkeypatch) -> None:
    monkeypatch.setattr(Lexer, "_literal_chains", lambda self: ([], [], []))
    monkeypatch.setattr(Lexer, "_fill_whole_literal", lambda self, state, lex, expr: False)


def key_lexemes(ir) -> list[int]:
    return [lex for lex, lexeme in enumerate(ir.lexemes) if lexeme.name.startswith("key:")
            or lexeme.expr >= ir.pool.family.size and ir.pool.describe(lexeme.expr).startswith('"')]


def test_rows_laid_out_equal_rows_built_byte_by_byte(monkeypatch):
    ir = Grammar.from_json_schema(SCHEMA).ir
    everything = frozenset(range(len(ir.lexemes)))
    fresh_sets = [everything] + [frozenset([lex]) for lex in everything]
    laid_out = rows_by_items(ir, fresh_sets)  # also checks every state's acc_* entries
    assert len(laid_out) > 60
    no_layout(monkeypatch)
    assert laid_out == rows_by_items(ir, fresh_sets)


def test_key_states_are_there_at_compile():
    ir = Grammar.from_json_schema(SCHEMA).ir
    lexer = Lexer(ir, Limits())
    keys, steps, ends = lexer._literal_chains()
    assert len(ends) >= 6  # the keys (the nested "location" is a lexeme of its own object)
    made = 0
    for lex, lexeme in enumerate(ir.lexemes):
        found = lexer._literal_tails(lexeme.expr) if lexeme.expr >= ir.pool.family.size else None
        if found is None:
            continue
        tails, path = found
        states = [lexer._ids[(False, ((lex, tail),))] for tail in tails]
        assert states == list(range(states[0], states[0] + len(states)))
        for state, following, byte in zip(states, states[1:], path[1:]):
            row = lexer.trans[state]
            assert row[byte] == following and (row != DEAD).sum() == 1
        assert (lexer.trans[states[-1]] == DEAD).all() and lexer.accepted(states[-1]) == (lex,)
        assert not any(lexer.accepted(state) for state in states[:-1])
        made += 1
    assert made == len(ends) and len(steps) == len(keys)


def test_a_key_reads_to_its_end_through_laid_out_states():
    ir = Grammar.from_json_schema(SCHEMA).ir
    lexer = Lexer(ir, Limits())
    before = lexer.num_states
    texts = {b'"location"', '"a\u00e9\u2603"'.encode(), b'"l"', b'"nested"'}
    read = set()
    for lex, lexeme in enumerate(ir.lexemes):
        if lexer._literal_tails(lexeme.expr) is None or not ir.pool.matches(lexeme.expr, b'"l"') \
                and not any(ir.pool.matches(lexeme.expr, text) for text in texts):
            continue
        text = next(text for text in texts if ir.pool.matches(lexeme.expr, text))
        state = lexer.start_state(frozenset([lex]))
        lexer.fill_row(state)
        state = int(lexer.trans[state, text[0]])
        for byte in text[1:]:
            assert lexer.trans[state, 0] != UNKNOWN  # no row left to fill along the key
            state = int(lexer.trans[state, byte])
            assert state != DEAD
        assert lexer.accepting[state] and lexer.accepted(state) == (lex,)
        read.add(text)
    assert read == texts
    assert lexer.num_states == before + len(texts)  # the fresh states only


def test_masks_with_and_without_the_layout(monkeypatch):
    vocab = small_vocab()
    limits = Limits()
    laid_out = [walks(vocab, index, limits) for index in range(4)]
    no_layout(monkeypatch)
    assert laid_out == [walks(vocab, index, limits) for index in range(4)]


def test_literals_past_the_bound_are_laid_out_when_reached(monkeypatch):
    ir = Grammar.from_json_schema(SCHEMA).ir
    everything = frozenset(range(len(ir.lexemes)))
    fresh_sets = [everything] + [frozenset([lex]) for lex in everything]
    monkeypatch.setattr(lexer_module, "MAX_LITERAL_STATES", 12)
    assert 0 < len(Lexer(ir, Limits())._literal_chains()[0]) <= 12
    reached = []
    original = Lexer._fill_whole_literal

    def counted(self, state, lex, expr):
        done = original(self, state, lex, expr)
        reached.append(done)
        return done

    monkeypatch.setattr(Lexer, "_fill_whole_literal", counted)
    bounded = rows_by_items(ir, fresh_sets)
    assert sum(reached) >= 3
    no_layout(monkeypatch)
    assert bounded == rows_by_items(ir, fresh_sets)


def test_no_layout_beyond_a_quarter_of_the_states():
    ir = Grammar.from_json_schema(SCHEMA, limits=Limits(max_dfa_states=200)).ir
    lexer = Lexer(ir, Limits(max_dfa_states=200))
    assert len(lexer._literal_chains()[0]) <= 50


def test_a_literal_that_is_not_one_byte_after_another_is_left_to_the_rows_as_reached():
    ir = Grammar.from_json_schema(SCHEMA).ir
    lexer = Lexer(ir, Limits())
    pool = ir.pool
    assert lexer._literal_tails(pool.literal(b"ab")) is not None
    assert lexer._literal_tails(pool.alt([pool.literal(b"ab"), pool.literal(b"ac")])) is None
    assert lexer._literal_tails(pool.concat(pool.byteset((1 << 97) | (1 << 98)), pool.literal(b"c"))) is None
    tails, path = lexer._literal_tails(pool.literal(b"xyz"))
    assert path == list(b"xyz") and len(tails) == 3 and pool.nullable[tails[-1]]


def test_a_schema_made_of_literals_only():
    vocab = lg.Vocabulary([bytes([i]) for i in range(256)] + [b"<eos>"], eos_token_ids=[256], special_token_ids=[256])
    compiled = lg.GrammarCompiler(vocab).compile(Grammar.from_json_schema({"enum": ["a", "b"]}))
    matcher = lg.Matcher(compiled)
    assert matcher.consume_tokens(list(b'"a"')) and matcher.is_accepting()
