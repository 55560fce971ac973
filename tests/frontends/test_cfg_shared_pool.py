"""Lark and GBNF grammars start from one pool shared across grammars (frontends/lark_common.py)."""

from __future__ import annotations

import itertools

import pytest

from leapgram import Grammar, GrammarError, Limits, Matcher
from leapgram.frontends.gbnf import gbnf_to_ir
from leapgram.frontends.lark import lark_to_ir
from tests.helpers.compiling import compile_for
from tests.helpers.gbnf_grammars import GRAMMARS, JSON
from tests.helpers.masks import brute_force_allowed, mask_set

JSON_LARK = r"""
start: value
?value: object | array | STRING | NUMBER | "true" | "false" | "null"
object: "{" (STRING ":" value ("," STRING ":" value)*)? "}"
array: "[" (value ("," value)*)? "]"
STRING: /"([^"\\\x00-\x1f]|\\["\\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/
NUMBER: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/
WS: /[ \t\n\r]+/
%ignore WS
"""

_OWN = itertools.count(1)


def own_limits() -> Limits:
    """Limits no other test uses, so the shared pool for them starts empty here."""
    return Limits(max_dfa_states=40_000 - next(_OWN))


@pytest.mark.parametrize("to_ir, text", [(gbnf_to_ir, JSON), (lark_to_ir, JSON_LARK)], ids=["gbnf", "lark"])
def test_a_grammar_compiled_again_finds_its_lexemes_in_the_pool_family(to_ir, text):
    limits = own_limits()
    first = to_ir(text, limits=limits)
    family = first.pool.family
    assert family is None or any(lexeme.expr >= family.size for lexeme in first.lexemes)
    second = to_ir(text, limits=limits)
    assert all(lexeme.expr < second.pool.family.size for lexeme in second.lexemes)
    assert [lexeme.name for lexeme in second.lexemes] == [lexeme.name for lexeme in first.lexemes]


def test_what_a_grammar_gained_while_masked_is_taken_in_at_the_next_compile(byte_vocab):
    limits = own_limits()
    Grammar.from_gbnf(JSON, limits=limits)
    grammar = Grammar.from_gbnf(JSON, limits=limits)  # a copy of the shared pool, with its family
    pool = grammar.ir.pool
    matcher = Matcher(compile_for(grammar, byte_vocab, limits=limits))
    for byte in b'{"k": [1.5e3, "\\u00e9 x", true]}':
        mask_set(matcher, byte_vocab)
        assert matcher.consume_token(byte)
    later = Grammar.from_gbnf(JSON, limits=limits).ir.pool
    assert len(later) >= len(pool) and len(later.memo) >= len(pool.memo)


def test_only_built_pools_are_taken_in():
    """A pool is registered for the next ``cfg_pool`` to take in only once its grammar is built:
    a front end fills its pool without the lock, so another thread's copy of one still being
    built would be torn (misaligned expression lists, wrong masks after)."""
    from leapgram.frontends import lark_common

    limits = own_limits()
    lark_to_ir(JSON_LARK, limits=limits)
    lark_to_ir(JSON_LARK, limits=limits)  # no new lexemes: its pool is the last built
    built = lark_common._last.get(limits)
    assert built is not None
    building = lark_common.cfg_pool(limits)  # what a front end starts from
    assert lark_common._last.get(limits) is not building
    with pytest.raises(GrammarError):
        lark_to_ir('start: "a" NAME\nNAME: /[/', limits=limits)  # fails half-way: never registered
    assert lark_common._last.get(limits) in (None, built)


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_masks_from_a_shared_pool_equal_brute_force(byte_vocab, name):
    """A grammar compiled twice in a row (the second time from the pool the first one grew, with
    another grammar's lexemes in it too) gives exact masks along a sentence."""
    limits = own_limits()
    text, sentence = GRAMMARS[name][0], GRAMMARS[name][1][-1]
    other = min(other for other in GRAMMARS if other != name)
    Grammar.from_gbnf(GRAMMARS[other][0], limits=limits)
    for _ in range(2):
        matcher = Matcher(compile_for(Grammar.from_gbnf(text, limits=limits), byte_vocab, limits=limits))
        for byte in sentence.encode():
            assert mask_set(matcher, byte_vocab) == brute_force_allowed(matcher, byte_vocab), sentence
            assert matcher.consume_token(byte)
        assert mask_set(matcher, byte_vocab) == brute_force_allowed(matcher, byte_vocab)
