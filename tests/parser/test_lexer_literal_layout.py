"""Literal lexemes laid out together (``Lexer.lay_out_literals``, which the mask engine calls
before its second mask): a schema's keys get the fresh state of their lexeme alone and the
states after each of their bytes, their rows and ``acc_*`` entries in a few array writes instead of a Python row fill per key inside the
masks. Rows, ended lexemes and masks must be those built byte by byte as reached."""

from __future__ import annotations

import leapgram as lg
import leapgram.parser.lexer_literals as lexer_literals_module
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


def laid_out_when_made(monkeypatch) -> None:
    """Every lexer made from now on lays its literals out at once."""
    original = Lexer.__init__

    def init(self, ir, limits):
        original(self, ir, limits)
        self.lay_out_literals()

    monkeypatch.setattr(Lexer, "__init__", init)


def fresh_sets(ir) -> list[frozenset[int]]:
    everything = frozenset(range(len(ir.lexemes)))
    return [everything] + [frozenset([lex]) for lex in everything]


def literal_lexemes(lexer: Lexer) -> list[int]:
    size = lexer.pool.family.size
    return [lex for lex, lexeme in enumerate(lexer.ir.lexemes)
            if lexeme.expr >= size and lexer._literal_tails(lexeme.expr) is not None]


def test_rows_laid_out_equal_rows_built_as_reached(monkeypatch):
    ir = Grammar.from_json_schema(SCHEMA).ir
    as_reached = rows_by_items(ir, fresh_sets(ir))  # also checks every state's acc_* entries
    assert len(as_reached) > 60
    laid_out_when_made(monkeypatch)
    assert rows_by_items(ir, fresh_sets(ir)) == as_reached


def test_key_states_after_the_layout():
    ir = Grammar.from_json_schema(SCHEMA).ir
    lexer = Lexer(ir, Limits())
    literals = literal_lexemes(lexer)
    assert len(literals) >= 7  # the keys (the nested "location" is a lexeme of its own object), "x"
    before = lexer.num_states
    lexer.lay_out_literals()
    made = 0
    for lex in literals:
        tails, path = lexer._literal_tails(ir.lexemes[lex].expr)
        states = [lexer._ids[((lex, tail),)] for tail in tails]
        assert states == list(range(states[0], states[0] + len(states)))
        for state, following, byte in zip(states, states[1:], path[1:]):
            row = lexer.trans[state]
            assert row[byte] == following and (row != DEAD).sum() == 1
        assert (lexer.trans[states[-1]] == DEAD).all() and lexer.accepted(states[-1]) == (lex,)
        assert not any(lexer.accepted(state) for state in states[:-1])
        alone = lexer._ids[(True, ((lex, ir.lexemes[lex].expr),))]  # the fresh state of the lexeme alone
        assert alone == states[0] - 1 and lexer.is_fresh(alone) and not lexer.is_fresh(states[0])
        assert lexer.start_state(frozenset([lex])) == alone
        assert lexer.trans[alone, path[0]] == states[0] and (lexer.trans[alone] != DEAD).sum() == 1
        if ir.lexemes[lex].expr not in ir.pool.family.set_up:  # "{", "[": made at set-up
            made += len(states) + 1
    assert lexer.num_states == before + made
    lexer.lay_out_literals()  # once per lexer
    assert lexer.num_states == before + made


def test_a_key_reads_to_its_end_through_laid_out_states():
    ir = Grammar.from_json_schema(SCHEMA).ir
    lexer = Lexer(ir, Limits())
    lexer.lay_out_literals()
    before = lexer.num_states
    texts = {b'"location"', '"a\u00e9\u2603"'.encode(), b'"l"', b'"nested"'}
    read = set()
    for lex in literal_lexemes(lexer):
        text = next((text for text in texts if ir.pool.matches(ir.lexemes[lex].expr, text)), None)
        if text is None:
            continue
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
    assert lexer.num_states == before  # the fresh states too were made


def test_a_literal_reached_before_the_layout_keeps_its_states(monkeypatch):
    ir = Grammar.from_json_schema(SCHEMA).ir
    lexer = Lexer(ir, Limits())
    key = next(lex for lex in literal_lexemes(lexer) if ir.pool.matches(ir.lexemes[lex].expr, b'"nested"'))
    state = lexer.start_state(frozenset([key]))
    for byte in b'"nes':  # its first states made as reached (the rest of the key too: one chain)
        lexer.fill_row(state)
        state = int(lexer.trans[state, byte])
    made = lexer.num_states
    lexer.lay_out_literals()
    tails, _ = lexer._literal_tails(ir.lexemes[key].expr)
    assert lexer._ids[((key, tails[3]),)] == state < made  # not made twice
    for byte in b'ted"':
        lexer.fill_row(state)
        state = int(lexer.trans[state, byte])
    assert lexer.accepted(state) == (key,) and lexer.num_states >= made


def test_masks_with_and_without_the_layout(monkeypatch):
    vocab = small_vocab()
    limits = Limits()
    by_engine = [walks(vocab, index, limits) for index in range(4)]  # laid out before the second mask
    laid_out_when_made(monkeypatch)
    assert [walks(vocab, index, limits) for index in range(4)] == by_engine
    monkeypatch.setattr(Lexer, "lay_out_literals", lambda self: None)
    assert [walks(vocab, index, limits) for index in range(4)] == by_engine


def test_the_engine_lays_out_before_its_second_mask():
    vocab = lg.Vocabulary([bytes([i]) for i in range(256)] + [b"<eos>"], eos_token_ids=[256], special_token_ids=[256])
    compiled = lg.GrammarCompiler(vocab).compile(Grammar.from_json_schema(SCHEMA))
    lexer = compiled._engine.lexer
    matcher = lg.Matcher(compiled)
    matcher.compute_mask()
    assert not lexer._literals_laid_out
    assert matcher.consume_token(ord("{"))
    matcher.compute_mask()
    assert lexer._literals_laid_out
    assert matcher.consume_tokens(list(b'"location": "x"}')) and matcher.is_accepting()


def test_literals_past_the_bound_are_filled_as_reached(monkeypatch):
    ir = Grammar.from_json_schema(SCHEMA).ir
    as_reached = rows_by_items(ir, fresh_sets(ir))
    monkeypatch.setattr(lexer_literals_module, "MAX_LITERAL_STATES", 12)
    lexer = Lexer(ir, Limits())
    before = lexer.num_states
    lexer.lay_out_literals()
    assert 0 < lexer.num_states - before <= 12
    laid_out_when_made(monkeypatch)
    assert rows_by_items(ir, fresh_sets(ir)) == as_reached


def test_no_layout_beyond_a_quarter_of_the_states():
    ir = Grammar.from_json_schema(SCHEMA, limits=Limits(max_dfa_states=200)).ir
    lexer = Lexer(ir, Limits(max_dfa_states=200))
    before = lexer.num_states
    lexer.lay_out_literals()
    assert lexer.num_states - before <= 50


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
