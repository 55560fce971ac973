"""Lexer rows against their definition: from a state, byte ``b`` leads to the state of the items
whose derivative by ``b`` is not empty, whichever way the row was built (one item, a row composed
from the row of its one multi-byte item, or refined byte classes)."""

from __future__ import annotations

import sys
from collections import deque
from pathlib import Path

import pytest

import leapgram as lg
from leapgram.limits import Limits
from leapgram.parser import Lexer
from leapgram.regex.dfa import DEAD
from leapgram.regex.expr import EMPTY

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mask"))
from cfg_grammars import GRAMMARS

SCHEMA = {  # declared keys next to the pattern of other keys, enums, numbers, whitespace
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 5}, "kind": {"enum": ["a", "ab", "abc"]},
                   "count": {"type": "integer", "minimum": -3}},
    "required": ["name"],
    "patternProperties": {"^x-": {"type": "boolean"}},
}

IRS = {name: (lambda make=make: make().ir) for name, make in GRAMMARS.items()}
IRS["schema"] = lambda: lg.Grammar.from_json_schema(SCHEMA).ir
IRS["schema_any_key"] = lambda: lg.Grammar.from_json_schema({**SCHEMA, "patternProperties": {}}).ir


def expected_target(lexer: Lexer, state: int, byte: int) -> tuple | None:
    """The items after ``byte`` by the definition, or ``None`` for the dead state."""
    pool = lexer.pool
    alive = []
    for lex, expr in lexer.items(state):
        d = pool.derivative(expr, byte)
        if d != EMPTY and not (pool.has_bool[d] and pool.is_empty(d)):
            alive.append((lex, d))
    return tuple(alive) or None


@pytest.mark.parametrize("name", sorted(IRS))
def test_rows_match_their_definition(name):
    ir = IRS[name]()
    lexer = Lexer(ir, Limits())
    everything = frozenset(range(len(ir.lexemes)))
    starts = [lexer.start_state(everything)] + [lexer.start_state(frozenset([lex])) for lex in everything]
    seen, queue = set(starts), deque(starts)
    checked = 0
    while queue and checked < 400:
        state = queue.popleft()
        lexer.fill_row(state)
        checked += 1
        for byte in range(256):
            target = int(lexer.trans[state, byte])
            want = expected_target(lexer, state, byte)
            if want is None:
                assert target == DEAD, (name, state, byte)
                continue
            assert target != DEAD and lexer.items(target) == want and not lexer.is_fresh(target), (name, state, byte)
            if target not in seen:
                seen.add(target)
                queue.append(target)
    assert checked > 10
