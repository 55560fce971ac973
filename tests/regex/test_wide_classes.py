"""Wide character classes: the facts of an alternation of byte-headed members read off its heads
(``Derivatives._wide_heads``), and those put in the caches when a class or its JSON spellings are
built (``regex.utf8._seed_facts``, ``json_schema.strings``), equal what the walk over every node
finds."""

from __future__ import annotations

import pytest

import leapgram as lg
from leapgram.regex import derivatives
from leapgram.regex.expr import ExprPool
from leapgram.regex.syntax import parse_regex

WIDE = "[" + "".join(f"\\u{cp:04x}" for cp in range(0xA0, 0x3000, 37)) + "a-z_]"  # ~330 scattered characters
CACHES = ("_first", "_classes", "_lengths", "_shortest", "_bounds")


def facts(pool, e: int) -> tuple:
    return (pool.first_bytes(e), pool.byte_classes(e), pool._estimated_length(e), pool._count_bound(e),
            None if pool.has_bool[e] else pool._max_length(e))


def walked(pool, monkeypatch) -> list[tuple]:
    """Every expression's facts worked out again by the walk alone (fresh caches, no wide path)."""
    saved = {name: getattr(pool, name) for name in CACHES}
    monkeypatch.setattr(derivatives, "WIDE_MEMBERS", 1 << 30)
    try:
        for name in CACHES:
            setattr(pool, name, {})
        return [facts(pool, e) for e in range(len(pool))]
    finally:
        for name, value in saved.items():
            setattr(pool, name, value)
        monkeypatch.undo()


@pytest.mark.parametrize("pattern", [WIDE, WIDE + "{2,40}x", "(" + WIDE + "|[^a])*y", "x" + WIDE + "+"])
def test_a_wide_class_has_the_facts_of_its_walk(monkeypatch, pattern):
    pool = ExprPool()
    root = parse_regex(pattern, pool)
    for byte in range(256):  # derivatives: alternations of the members' tails
        pool.derivative(root, byte)
    assert any(derivatives.Derivatives._wide_heads(pool, e) is not None for e in range(len(pool)))
    seen = [facts(pool, e) for e in range(len(pool))]
    assert seen == walked(pool, monkeypatch)


def test_json_spellings_of_a_wide_class_have_the_facts_of_their_walk(monkeypatch):
    grammar = lg.Grammar.from_json_schema({"type": "object", "properties": {
        "name": {"type": "string", "pattern": "^" + WIDE + "{1,200}$"}, "other": {"type": "string"}}})
    pool = grammar.ir.pool
    seen = [facts(pool, e) for e in range(len(pool))]
    assert seen == walked(pool, monkeypatch)
