"""An enum's literal trie laid out at once (``Lexer._lay_out_trie``): the same rows, keyed by
items, as rows built one at a time, within its budget of states and past it."""

from __future__ import annotations

import leapgram as lg
from leapgram.limits import Limits
from leapgram.parser import Lexer, lexer_literals
from tests.parser.test_lexer_templates import rows_by_items

NAMES = ["Apache-2.0", "Apache-1.1", "AGPL-3.0-only", "AGPL-3.0-or-later", "BSD-2-Clause", "BSD-3-Clause",
         "BSD-3-Clause-Clear", "GPL-2.0", "GPL-2.0-only", "GPL-2.0-or-later", "GPL-3.0", "GPL-3.0-only",
         "LGPL-2.1", "LGPL-3.0", "MIT", "MIT-0", "MPL-2.0", "Unlicense", "Zlib", "0BSD", "", "ISC",
         "caf\u00e9", "tab\there", "quote\"d"]
SCHEMA = {"type": "object",
          "properties": {"license": {"type": "array", "items": {"enum": NAMES}},
                         "single": {"enum": NAMES + [7, None, True]}, "name": {"type": "string"}}}


def _rows(ir):
    everything = frozenset(range(len(ir.lexemes)))
    return rows_by_items(ir, [everything] + [frozenset([lex]) for lex in everything])


def _counting(monkeypatch):
    made = []
    original = Lexer._lay_out_trie

    def counted(self, state, lex, expr):
        before = self.num_states
        done = original(self, state, lex, expr)
        made.append(self.num_states - before if done else 0)
        return done

    monkeypatch.setattr(Lexer, "_lay_out_trie", counted)
    return made


def test_a_trie_laid_out_at_once_has_the_rows_built_one_by_one(monkeypatch):
    ir = lg.Grammar.from_json_schema(SCHEMA).ir
    made = _counting(monkeypatch)
    laid_out = _rows(ir)
    assert max(made) > 100  # one layout made most of the trie's states
    monkeypatch.setattr(Lexer, "_lay_out_trie", lambda self, state, lex, expr: False)
    assert laid_out == _rows(ir)


def test_past_its_budget_the_rest_of_the_trie_is_laid_out_as_reached(monkeypatch):
    ir = lg.Grammar.from_json_schema(SCHEMA).ir
    monkeypatch.setattr(lexer_literals, "MAX_TRIE_STATES", 9)
    made = _counting(monkeypatch)
    laid_out = _rows(ir)
    assert len([n for n in made if n]) > 5 and max(made) <= 9
    monkeypatch.setattr(Lexer, "_lay_out_trie", lambda self, state, lex, expr: False)
    assert laid_out == _rows(ir)


def test_a_tail_of_the_trie_is_its_derivative():
    ir = lg.Grammar.from_json_schema(SCHEMA).ir
    pool = ir.pool
    lexer = Lexer(ir, Limits())
    tries = [lexeme.expr for lexeme in ir.lexemes if lexeme.name.startswith("enum:")]
    assert tries
    seen, stack = set(), list(tries)
    while stack:
        expr = stack.pop()
        if expr in seen:
            continue
        seen.add(expr)
        step = lexer._trie_step(expr)
        if step is None:
            continue
        assert sorted(byte for byte, _ in step) == [b for b in range(256) if pool.first_bytes(expr) >> b & 1]
        for byte, tail in step:
            assert tail == pool.derivative(expr, byte)
            stack.append(tail)
    assert len(seen) > 100
