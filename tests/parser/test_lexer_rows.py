"""Lexer rows against their definition: from a state, byte ``b`` leads to the state of the items
whose derivative by ``b`` is not empty (dead when there is none), whichever way the row was built
(one item, a row composed from the row of its one multi-byte item, or refined byte classes). A
state may also keep items that are empty without being known to be (the dead check is lazy):
its live items must be exactly those."""

from __future__ import annotations

from collections import deque

import pytest

import leapgram as lg
from leapgram.limits import Limits
from leapgram.parser import Lexer
from leapgram.regex.dfa import DEAD
from leapgram.regex.expr import EMPTY
from tests.helpers.cfg_grammars import GRAMMARS

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
IRS["counted_pattern_keys"] = lambda: lg.Grammar.from_json_schema({  # a key in [a-z_-]{1,6} beside the other keys
    "type": "object", "properties": {"Id": {"type": "string"}},
    "patternProperties": {"^[a-z_-]{1,6}$": {"type": "boolean"}}}).ir
for _name, _pattern in (("pattern_beside_names", "x:"), ("pattern_in_names", "ou")):  # unanchored: wide beside the names
    IRS[_name] = lambda pattern=_pattern: lg.Grammar.from_json_schema(
        {**SCHEMA, "patternProperties": {pattern: {}}}).ir
IRS["patterns"] = lambda: lg.Grammar.from_json_schema({"anyOf": [  # intersections that die at some byte
    {"type": "string", "pattern": "^a+b$", "maxLength": 3}, {"type": "string", "pattern": "^ab*$", "minLength": 2},
    {"type": "string", "pattern": "b", "maxLength": 2}]}).ir


def live(lexer: Lexer, items) -> tuple:
    return tuple((lex, e) for lex, e in items if not lexer.pool.is_empty(e))


def expected_target(lexer: Lexer, state: int, byte: int) -> tuple | None:
    """The live items after ``byte`` by the definition, or ``None`` for the dead state."""
    pool = lexer.pool
    alive = live(lexer, [(lex, pool.derivative(expr, byte)) for lex, expr in lexer.plain_items(state)])
    return tuple((lex, d) for lex, d in alive if d != EMPTY) or None


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
            assert target != DEAD and live(lexer, lexer.plain_items(target)) == want, (name, state, byte)
            assert not lexer.is_fresh(target)
            if target not in seen:
                seen.add(target)
                queue.append(target)
    assert checked > 10


def _key_rows(name: str, count: int, texts: tuple[bytes, ...], allowed=None) -> dict:
    """The rows (as plain live items, expressions by structure: each call makes its own pool) after each of ``texts`` from the fresh state of the
    ``count`` key lexemes of ``IRS[name]`` (of those named in ``allowed``, if given)."""
    ir = IRS[name]()
    lexer = Lexer(ir, Limits())
    keys = [lex for lex, lexeme in enumerate(ir.lexemes) if lexeme.name.startswith("key:")]
    assert len(keys) == count
    start = lexer.start_state(frozenset(keys if allowed is None else [keys[k] for k in allowed]))
    out = {}
    for text in texts:
        state = start
        for byte in text:
            lexer.fill_row(state)
            state = int(lexer.trans[state, byte])
            if state == DEAD:
                break
        if state != DEAD:
            lexer.fill_row(state)
            out[text] = [(tuple(sorted((lex, lexer.pool.describe(e)) for lex, e in live(lexer, lexer.plain_items(int(t))))),
                          lexer.accepted(int(t))) if t != DEAD else None for t in lexer.trans[state]]
    return out


TEXTS = (b'"', b'"n', b'"na', b'"nam', b'"name', b'"name"', b'"names"', b'"x', b'"x-', b'"ki', b'"kind"', b'"co\xc3',
         b'"coun', b'"count"')


def _noted_calls(monkeypatch, method: str) -> list:
    """What each call of ``Lexer.<method>`` returns from now on (the method wrapped)."""
    calls = []
    original = getattr(Lexer, method)

    def noted(self, *args):
        found = original(self, *args)
        calls.append(found)
        return found

    monkeypatch.setattr(Lexer, method, noted)
    return calls


def test_rows_of_a_key_that_is_none_of_the_names_come_from_the_string_row(monkeypatch):
    """An extra-key lexeme ``"(S & ~names & ~pattern)"`` takes the row of ``S`` alone and
    derives only by the bytes a name or the pattern can continue with
    (``Lexer._fill_minus_some``); the rows equal those built one derivative per byte class (the
    path turned off)."""
    calls = _noted_calls(monkeypatch, "_fill_minus_some")
    with_shortcut = _key_rows("schema", 5, TEXTS)  # the three names, the pattern's keys, any other key
    assert any(calls), "the shortcut was never taken"
    monkeypatch.setattr(Lexer, "_fill_minus_some", lambda self, state, lex, expr: False)
    assert with_shortcut == _key_rows("schema", 5, TEXTS)


COUNTED_TEXTS = (b'"', b'"a', b'"ab', b'"abcdef', b'"abcdefg', b'"ab"', b'"I', b'"Id', b'"Id"', b'"Iden', b'"A',
                 b'"a\xc3', b'"a\\', b'"a-_')


def test_rows_beside_a_key_that_is_none_of_the_patterns_come_from_the_string_row(monkeypatch):
    """A state of a counted pattern's key ``P`` beside the other keys' ``S & ~P`` takes the
    row of ``S`` alone on the bytes ``P`` cannot start with and derives only the byte classes
    it can (``Lexer._fill_minus_beside``); the rows equal those built one derivative per byte
    class (the path turned off)."""
    calls = _noted_calls(monkeypatch, "_fill_minus_beside")
    with_shortcut = _key_rows("counted_pattern_keys", 3, COUNTED_TEXTS)  # Id, the pattern's keys, any other key
    assert sum(calls) >= 4, "the shortcut was not taken at the counts"
    monkeypatch.setattr(Lexer, "_fill_minus_beside", lambda self, state, items, starts: False)
    assert with_shortcut == _key_rows("counted_pattern_keys", 3, COUNTED_TEXTS)


@pytest.mark.parametrize("name, count, allowed", [
    *(("schema_any_key", 4, allowed) for allowed in [None, (3,), (0, 3), (1, 3), (2, 3)]),  # (3: any other key)
    *((name, 5, allowed) for name in ("schema", "pattern_beside_names", "pattern_in_names")
      for allowed in [None, (4,), (0, 4), (3, 4), (0, 3, 4)]),  # (3: the pattern's keys, 4: any other)
])
def test_keys_other_than_the_names_with_a_shadow_have_the_rows_of_their_expression(monkeypatch, name, count, allowed):
    """An extra-key lexeme ``S & ~names`` kept as ``S`` with the names as a shadow
    (``Lexer._shadow_split``), or ``S & ~names & ~pattern`` kept as ``S & ~pattern`` with the
    names as a shadow: the rows, their live items and the lexemes that end in each target
    equal those of the lexeme's expression (the shadow turned off), whichever names the parser
    still allows beside it."""
    calls = _noted_calls(monkeypatch, "_shadow_split")
    shadowed = _key_rows(name, count, TEXTS, allowed)
    assert any(calls), "no shadow was made"
    monkeypatch.setattr(Lexer, "_shadow_split", lambda self, expr: None)
    assert shadowed == _key_rows(name, count, TEXTS, allowed)


@pytest.mark.parametrize("name", ["pattern_beside_names", "pattern_in_names"])
def test_composed_key_rows_beside_a_pattern_take_the_row_of_the_wide_items_alone(monkeypatch, name):
    """A key state ``{names…, R', P', Q'}`` (a ``patternProperties`` key ``R'`` beside the other
    keys ``P'`` and their shadow ``Q'``) takes the row of ``{R', P'}`` alone and steps the
    shadow with the names (``Lexer._fill_composed``): the rows, their live items and the
    lexemes ending in each target are those made by byte classes, for each set of names
    allowed."""
    widths = []
    original = Lexer._wide_row

    def noted(self, items, wide, end, *args):
        widths.append(end - wide)
        return original(self, items, wide, end, *args)

    monkeypatch.setattr(Lexer, "_wide_row", noted)
    several = [_key_rows(name, 5, TEXTS, allowed) for allowed in [None, (4,), (0, 3, 4)]]
    assert max(widths) > 1, "no state had several wide items"
    monkeypatch.setattr(Lexer, "_fill_composed", _one_wide_item(Lexer._fill_composed))
    assert several == [_key_rows(name, 5, TEXTS, allowed) for allowed in [None, (4,), (0, 3, 4)]]


def _one_wide_item(fill_composed):
    """``Lexer._fill_composed`` refusing several wide items (their rows by byte classes then,
    as before round 28)."""
    def refusing(self, state, items, starts):
        wide = [index for index, first in enumerate(starts) if items[index][0] >= 0 and first & (first - 1)]
        return False if len(wide) > 1 else fill_composed(self, state, items, starts)
    return refusing


@pytest.mark.parametrize("limit", [10, 20, 40])
def test_lexer_states_stop_at_max_dfa_states(limit):
    """The lexer grows its table up to ``Limits.max_dfa_states`` states and not one more (a limit
    below the initial table's 16 rows included), then names the budget."""
    ir = lg.Grammar.from_regex("[a-z]{0,60}").ir
    lexer = Lexer(ir, Limits(max_dfa_states=limit))
    state = lexer.start_state(frozenset(range(len(ir.lexemes))))
    with pytest.raises(lg.BudgetExceededError) as info:
        for _ in range(61):
            state = lexer.step(state, ord("a"))
    assert info.value.limit == "max_dfa_states"
    assert lexer.num_states == limit


def test_budget_out_inside_a_literal_leaves_no_state_behind():
    """A literal's states are numbered together; when the state budget runs out along it, none of
    them may stay known (their ids pointed past the table: a later matcher on the same compiled
    grammar read wrong rows, accepted ``xxw``, or raised IndexError)."""
    compiler = lg.GrammarCompiler(lg.Vocabulary.byte_vocabulary(), limits=Limits(max_dfa_states=24))
    compiled = compiler.compile(lg.Grammar.from_lark('start: A | B | C\nA: "' + "x" * 40 + '"\nB: "yzw"\nC: "yqw"\n'))

    def walk(text: bytes) -> tuple[bool, str | None]:
        matcher = lg.Matcher(compiled)
        for byte in text:
            matcher.compute_mask()
            if not matcher.consume_token(byte):
                return False, matcher.error()
        return matcher.is_accepting(), matcher.error()

    assert "max_dfa_states" in walk(b"x" * 40)[1]
    assert walk(b"yzw") == (True, None) and walk(b"yqw") == (True, None)
    for text in (b"xxxx", b"xxw", b"x" * 40):
        accepted, _ = walk(text)
        assert not accepted, text
    lexer = compiled._engine.lexer
    assert max(lexer._ids.values()) < lexer.num_states


@pytest.mark.parametrize("name", ["schema", "schema_any_key", "json"])
def test_fresh_state_of_an_arena_set_is_start_state(name):
    """``fresh_state`` (an arena's sorted int32 set, keyed by its bytes) and ``start_state``
    (a frozenset) name one state per set, in one memo, in either order."""
    import numpy as np

    ir = IRS[name]()
    lexer = Lexer(ir, Limits())
    sets = [frozenset(range(len(ir.lexemes)))] + [frozenset([lex]) for lex in range(len(ir.lexemes))]
    sets += [frozenset(range(0, len(ir.lexemes), 2)), frozenset()]
    for n, lexemes in enumerate(sets):
        members = np.array(sorted(lexemes), dtype=np.int32)
        first, second = (lexer.fresh_state(members), lexer.start_state(lexemes))
        if n % 2:
            first, second = second, first
        assert first == second == lexer.fresh_state(members.copy())
        assert lexer.is_fresh(first) or first == DEAD


def test_literal_set_limit_counts_distinct_nodes():
    """``is_literal_set``'s limit counts the distinct nodes other than ε, and only single bytes,
    concatenations and alternations are literal."""
    from leapgram.parser.lexer_blocks import is_literal_set
    from leapgram.regex.expr import K_BYTES, ExprPool

    pool = ExprPool()
    names = pool.alt([pool.literal(b'"ab"'), pool.literal(b'"b"')])
    seen, todo = set(), [names]
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(pool.args[node] if pool.kind[node] != K_BYTES else ())
    nodes = len(seen)
    assert is_literal_set(pool, names, nodes) and not is_literal_set(pool, names, nodes - 1)
    assert not is_literal_set(pool, pool.alt([names, pool.byteset(0b110)]))
    assert is_literal_set(pool, pool.literal(b"x"))
    assert not is_literal_set(pool, pool.intersect([names, pool.complement(pool.literal(b'"b"'))]))
