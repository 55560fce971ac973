"""Lexer rows kept in the pool family's memo by their items (Lexer._share_row) give the same masks."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from leapgram import Grammar, GrammarCompiler, Limits
from leapgram.parser import lexer as lexer_module
from leapgram.parser.lexer import SHARED_ROWS, Lexer
from tests.frontends.test_cfg_shared_pool import JSON_LARK
from tests.helpers.gbnf_grammars import JSON
from tests.helpers.masks import masks_along

_OWN = itertools.count(1)
DOCUMENT = b'{"key": [1.5e3, "x\\u00e9 y", true, null], "other":\n  {"a": -2}, "b": []}'
MAKERS = {
    "gbnf": lambda limits: Grammar.from_gbnf(JSON, limits=limits),
    "lark": lambda limits: Grammar.from_lark(JSON_LARK, limits=limits),
    "schema": lambda limits: Grammar.from_json_schema({"type": "object"}, limits=limits),
}


def fresh_compile(grammar: Grammar, vocab, limits: Limits):
    """``grammar`` compiled by a new compiler (the cached compilers would give an earlier one back)."""
    return GrammarCompiler(vocab, limits=limits).compile(grammar)


def own_limits() -> Limits:
    """Limits no other test uses: the shared pool and its family memo start empty here."""
    return Limits(max_dfa_states=30_000 - next(_OWN))


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_later_grammars_copy_shared_rows_and_get_the_same_masks(byte_vocab, monkeypatch, kind):
    make = MAKERS[kind]
    limits = own_limits()
    make(limits)  # the second grammar is the first one with a pool family (Lark, GBNF)
    first = masks_along(fresh_compile(make(limits), byte_vocab, limits), DOCUMENT)
    copied = []
    copy = Lexer._copy_shared_row
    monkeypatch.setattr(Lexer, "_copy_shared_row", lambda self, *args: copied.append(copy(self, *args)) or copied[-1])
    second = masks_along(fresh_compile(make(limits), byte_vocab, limits), DOCUMENT)
    assert any(copied), "no row was taken from the family's memo"
    monkeypatch.setattr(Lexer, "_shared_rows", lambda self, items: None)
    alone = masks_along(fresh_compile(make(limits), byte_vocab, limits), DOCUMENT)
    for a, b, c in zip(first, second, alone, strict=True):
        assert np.array_equal(a, b) and np.array_equal(a, c)


def test_rows_are_kept_by_items(byte_vocab):
    limits = own_limits()
    Grammar.from_gbnf(JSON, limits=limits)
    grammar = Grammar.from_gbnf(JSON, limits=limits)
    masks_along(fresh_compile(grammar, byte_vocab, limits), DOCUMENT)
    rows = grammar.ir.pool.family.memo[SHARED_ROWS]
    assert rows
    for (fresh, items), (targets, index) in rows.items():
        assert isinstance(fresh, bool) and items and index.shape == (256,)
        assert int(index.max()) < len(targets)


def test_no_row_is_kept_past_the_bound(byte_vocab, monkeypatch):
    monkeypatch.setattr(lexer_module, "MAX_SHARED_ROWS", 0)
    limits = own_limits()
    Grammar.from_gbnf(JSON, limits=limits)
    grammar = Grammar.from_gbnf(JSON, limits=limits)
    masks_along(fresh_compile(grammar, byte_vocab, limits), DOCUMENT)
    assert not grammar.ir.pool.family.memo.get(SHARED_ROWS)
