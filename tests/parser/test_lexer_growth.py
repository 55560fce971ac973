"""The lexer table's growth (``Lexer._grow``, ``Lexer._ready_rows``): a state's row is marked
unknown when the state is numbered, growing copies the states' rows only, and a grammar's start
block has spare rows allocated. Masks must not depend on how the table grew."""

from __future__ import annotations

import leapgram
import leapgram.parser.lexer as lexer_module
from leapgram import Grammar
from leapgram.limits import Limits
from leapgram.regex.dfa import UNKNOWN
from tests.parser.test_lexer_block import SCHEMAS, small_vocab, walks

ENUM = {"type": "object", "properties": {"pick": {"enum": [f"value number {k}" for k in range(60)]},
                                         "note": {"type": "string", "pattern": "^[a-z]{2,9}@[0-9]+$"}}}


def lexer_after_walks(vocab, limits: Limits, texts: list[bytes]):
    compiled = leapgram.GrammarCompiler(vocab, limits=limits).compile(Grammar.from_json_schema(ENUM, limits=limits))
    for text in texts:
        matcher = leapgram.Matcher(compiled)
        for byte in text:
            matcher.compute_mask()
            if not matcher.consume_token(byte):
                break
    return compiled._engine.lexer


def test_masks_do_not_depend_on_spare_rows_or_on_how_many_rows_are_marked_at_once(monkeypatch):
    vocab = small_vocab()
    reference = [walks(vocab, index, Limits(max_dfa_states=49_011)) for index in range(len(SCHEMAS))]
    monkeypatch.setattr(lexer_module, "BLOCK_SPARE", 1)  # every new state grows the table
    monkeypatch.setattr(lexer_module, "READY_ROWS", 1)
    assert [walks(vocab, index, Limits(max_dfa_states=49_012)) for index in range(len(SCHEMAS))] == reference


def test_every_row_of_a_state_is_written_and_only_states_rows_are_copied(monkeypatch):
    vocab = small_vocab()
    texts = [b'{"pick": "value number 17", "note": "ab@12"}', b'{"pick": "value number 4"}']
    for spare, ready in ((512, 64), (1, 1), (3, 2)):
        monkeypatch.setattr(lexer_module, "BLOCK_SPARE", spare)
        monkeypatch.setattr(lexer_module, "READY_ROWS", ready)
        lexer = lexer_after_walks(vocab, Limits(max_dfa_states=49_013 + spare), texts)
        states = lexer.num_states
        assert states <= lexer._ready <= lexer.trans.shape[0]
        rows = lexer.trans[:states]
        assert ((rows >= UNKNOWN) & (rows < states)).all()  # unknown, dead or a state's id
        assert (lexer.trans[states:lexer._ready] == UNKNOWN).all()
        assert lexer.unwritten_bytes == (lexer.trans.shape[0] - lexer._ready) * 1024
