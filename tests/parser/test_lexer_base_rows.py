"""Rows of states whose items are expressions of the JSON Schema base pool but not of its family
(JSON's punctuation and keywords, built after the family's expressions) are kept in the family's
memo too (``PoolFamily.base_size``): a later schema copies them, and they equal the derived rows."""

from __future__ import annotations

import itertools

import numpy as np

from leapgram import Grammar, GrammarCompiler, Limits
from leapgram.parser.lexer import DEAD, UNKNOWN, Lexer
from leapgram.parser.lexer_blocks import state_key
from tests.helpers.masks import masks_along

_OWN = itertools.count(1)
SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "array", "items": {"type": "boolean"}}, "b": {"type": "integer"},
                   "c": {"type": ["string", "null"]}},
    "required": ["a"],
}
DOCUMENT = b'{"a": [true, false , true], "b": 3,\n "c": null}'


def own_limits() -> Limits:
    """Limits no other test uses: the base pool and its family memo start empty here."""
    return Limits(max_dfa_states=29_000 - next(_OWN))


def fresh_compile(limits: Limits, vocab):
    """The schema compiled by a new compiler (a cached one would give an earlier grammar back)."""
    return GrammarCompiler(vocab, limits=limits).compile(Grammar.from_json_schema(SCHEMA, limits=limits))


def target_items(lexer: Lexer, state: int) -> list:
    """The items of the target of each byte of ``state``'s row (``None``: dead)."""
    return [None if target == DEAD else lexer.items(target) for target in lexer.trans[state].tolist()]


def test_base_pool_rows_are_shared_and_equal_the_derived_rows(byte_vocab, monkeypatch):
    limits = own_limits()
    first = masks_along(fresh_compile(limits, byte_vocab), DOCUMENT)
    copied: list[tuple[Lexer, int]] = []
    copy = Lexer._copy_shared_row

    def recording(self, state, items, shared):
        found = copy(self, state, items, shared)
        family = self.pool.family
        if found and any(family.size <= expr < family.base_size for _, expr in items):
            copied.append((self, state))
        return found

    monkeypatch.setattr(Lexer, "_copy_shared_row", recording)
    compiled = fresh_compile(limits, byte_vocab)
    second = masks_along(compiled, DOCUMENT)
    assert copied, "no row with a base pool item was taken from the family's memo"
    assert all(lexer is compiled._engine.lexer for lexer, _ in copied)
    monkeypatch.setattr(Lexer, "_shared_rows", lambda self, items: None)
    derived = fresh_compile(limits, byte_vocab)
    alone = masks_along(derived, DOCUMENT)
    for a, b, c in zip(first, second, alone, strict=True):
        assert np.array_equal(a, b) and np.array_equal(a, c)
    lexer, other = compiled._engine.lexer, derived._engine.lexer
    for _, state in copied:
        twin = other._ids[state_key(lexer.is_fresh(state), lexer.items(state))]  # reached by the same walk
        if other.trans[twin, 0] == UNKNOWN:
            other.fill_row(twin)
        assert target_items(lexer, state) == target_items(other, twin)


def test_family_base_size_covers_the_base_pools_punctuation():
    limits = own_limits()
    pool = Grammar.from_json_schema(SCHEMA, limits=limits).ir.pool
    family = pool.family
    assert family.size < family.base_size <= len(pool)
    assert pool.literal(b"}") < family.base_size and pool.literal(b"}") >= family.size


def test_base_size_ids_mean_the_same_in_copies_made_before_and_after_the_base_grows():
    base = Grammar.from_json_schema(SCHEMA, limits=own_limits()).ir.pool.copy()
    base.warm_caches(family_size=len(base) // 2)
    family = base.family
    before = base.copy()
    before.literal(b"only in the first copy")
    base.literal(b"only in the base, after the family")
    after = base.copy()
    after.literal(b"only in the second copy")
    assert family.base_size < len(base) and before.family is family and after.family is family
    for pool in (before, after):
        assert pool.kind[:family.base_size] == base.kind[:family.base_size]
        assert pool.args[:family.base_size] == base.args[:family.base_size]
