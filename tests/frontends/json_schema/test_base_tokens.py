"""JSON's punctuation and keywords are built in the base pool, after its family's expressions
(round 17, #26 criterion 2): a schema's pool starts with their nodes, makes none for them, and
its lexer's family block is the one it was before."""

from __future__ import annotations

import pytest

from leapgram.frontends.json_schema import common, json_schema_to_ir
from leapgram.limits import DEFAULT_LIMITS


@pytest.mark.parametrize("formats", [False, True])
def test_the_tokens_are_in_every_copy_and_leave_the_family_as_it_was(formats, monkeypatch):
    base, texts = common.base_pool(DEFAULT_LIMITS, formats), common.JSON_TOKENS
    monkeypatch.setattr(common, "JSON_TOKENS", ())
    before = common._base_pool.__wrapped__(DEFAULT_LIMITS, formats)  # the base pool without them
    size = before.family.size
    assert base.family.size == size and base.kind[:size] == before.kind and base.args[:size] == before.args
    tokens = [base.literal(text) for text in texts]  # found: nothing is added
    assert len(base) == len(common.base_pool(DEFAULT_LIMITS, formats))
    for token, text in zip(tokens, texts):
        assert base.matches(token, text) and base.first_bytes(token) == 1 << text[0]
        assert token in base._first and token in base._classes  # warmed like the family's
        if token < size:  # a node of the family already (a byte of its regexes): the one a schema found before
            assert before.literal(text) == token and len(before) == size
    assert any(token >= size for token in tokens)
    copy = common.schema_pool(DEFAULT_LIMITS, formats)
    nodes = len(copy)
    assert [copy.literal(text) for text in texts] == tokens and len(copy) == nodes


def test_a_schema_spells_its_tokens_with_the_base_nodes():
    ir, _ = json_schema_to_ir({"type": "object", "properties": {"a": {"type": "array"}, "b": {"type": "boolean"}}},
                              limits=DEFAULT_LIMITS)
    base = common.base_pool(DEFAULT_LIMITS)
    exprs = {lexeme.expr for lexeme in ir.lexemes}
    for text in (b"{", b"}", b"[", b"]", b":", b",", b"true", b"false"):
        assert base.literal(text) in exprs
    assert all(lexeme.expr < base.family.size or lexeme.expr >= len(base) or lexeme.name.startswith("'")
               for lexeme in ir.lexemes)
