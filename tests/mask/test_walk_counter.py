"""``CfgEngine._walks``, the count of mask walks that lays the lexer's literals out before the
second walk, is updated without a lock (a lock per mask would cost more than the layout saves).
Threads of the batch API may walk one grammar at once: two may both pass ``_walks < 2``, and
one's increment may land between the other's increment and its check. The layout must still
happen (``Lexer.lay_out_literals`` runs once under the lexer's lock, so a second call is free);
masks never depend on it."""

from __future__ import annotations

import leapgram as lg
from leapgram import Grammar
from leapgram.mask.engines import CfgEngine
from tests.parser.test_lexer_literal_layout import SCHEMA


class _RacedCounter:
    """A ``_walks`` whose write of 2 is followed at once by another thread's increment (the
    interleaving: A reads 1, B reads 1, A writes 2, B writes... 3 after reading A's 2)."""

    def __get__(self, engine, owner=None):
        return engine.__dict__["_walks"]

    def __set__(self, engine, value):
        engine.__dict__["_walks"] = value + 1 if value == 2 else value


def test_an_increment_between_anothers_increment_and_check_still_lays_out():
    vocab = lg.Vocabulary([bytes([i]) for i in range(256)] + [b"<eos>"], eos_token_ids=[256],
                          special_token_ids=[256])
    compiled = lg.GrammarCompiler(vocab, cache_size=0).compile(Grammar.from_json_schema(SCHEMA))
    engine = compiled._engine
    engine.__class__ = type("RacedCfgEngine", (CfgEngine,), {"_walks": _RacedCounter()})
    matcher = lg.Matcher(compiled)
    matcher.compute_mask()
    assert not engine.lexer._literals_laid_out
    assert matcher.consume_token(ord("{"))
    matcher.compute_mask()
    assert engine._walks == 3 and engine.lexer._literals_laid_out
    assert matcher.consume_tokens(list(b'"location": "x"}')) and matcher.is_accepting()
