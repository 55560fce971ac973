"""Row templates (``leapgram.parser.lexer.row_template``): the rows a JSON Schema lexer copies
from its pool family's template equal the rows it builds one at a time, and the template is
made once per family, not per grammar."""

from __future__ import annotations

from collections import deque

import leapgram as lg
import leapgram.parser.lexer_blocks as lexer_blocks_module
from leapgram.limits import Limits
from leapgram.parser import Lexer
from leapgram.regex.dfa import DEAD, ROW_TEMPLATE
from tests.helpers.family import without_row_templates

SCHEMA = {"type": "object", "properties": {"s": {"type": "string"}, "n": {"type": "number"},
                                           "e": {"enum": ["x", 1.5]}, "a": {"type": "array"}},
          "required": ["s"]}


def rows_by_items(ir, fresh_sets) -> dict:
    """Every row reachable from the start states, keyed and valued by items (state ids differ
    between the two ways of filling)."""
    lexer = Lexer(ir, Limits())
    starts = [lexer.start_state(lexemes) for lexemes in fresh_sets]
    seen, queue, out = set(starts), deque(starts), {}
    while queue:
        state = queue.popleft()
        lexer.fill_row(state)
        targets = []
        for byte in range(256):
            target = int(lexer.trans[state, byte])
            targets.append(None if target == DEAD else (lexer.is_fresh(target), lexer.items(target)))
            if target != DEAD and target not in seen:
                seen.add(target)
                queue.append(target)
        acc_start, acc_len, acc_pool, acc_id, ignore_only = lexer.kernel_arrays[:5]
        ended = tuple(acc_pool[acc_start[state]:acc_start[state] + acc_len[state]].tolist())
        assert ended == lexer.accepted(state) and bool(lexer.accepting[state]) == bool(ended)
        assert (acc_id[state] == 0) == (not ended)
        out[(lexer.is_fresh(state), lexer.items(state))] = (targets, ended, int(ignore_only[state]))
    return out


def test_rows_from_templates_equal_rows_built_one_by_one(monkeypatch):
    ir = lg.Grammar.from_json_schema(SCHEMA).ir
    everything = frozenset(range(len(ir.lexemes)))
    fresh_sets = [everything] + [frozenset([lex]) for lex in everything]
    used = []
    original = Lexer._fill_from_template

    def counted(self, state, lex, expr):
        done = original(self, state, lex, expr)
        used.append(done)
        return done

    monkeypatch.setattr(Lexer, "_fill_from_template", counted)
    monkeypatch.setattr(Lexer, "_start_with_block", lambda self, punctuation=None: None)
    with_templates = rows_by_items(ir, fresh_sets)
    assert sum(used) >= 3  # whitespace, strings, numbers
    without_row_templates(monkeypatch, ir.pool)
    assert with_templates == rows_by_items(ir, fresh_sets)


def test_rows_from_the_family_block_equal_rows_built_one_by_one(monkeypatch):
    ir = lg.Grammar.from_json_schema(SCHEMA).ir
    everything = frozenset(range(len(ir.lexemes)))
    fresh_sets = [everything] + [frozenset([lex]) for lex in everything]
    assert Lexer(ir, Limits()).num_states > 30  # the block: whitespace, strings, numbers, punctuation
    with_block = rows_by_items(ir, fresh_sets)
    monkeypatch.setattr(Lexer, "_start_with_block", lambda self, punctuation=None: None)
    monkeypatch.setattr(Lexer, "_punctuation", lambda self: [])
    without_row_templates(monkeypatch, ir.pool)
    assert with_block == rows_by_items(ir, fresh_sets)


def test_a_template_is_made_once_per_family(monkeypatch):
    made = []
    original = lexer_blocks_module.make_row_template
    monkeypatch.setattr(lexer_blocks_module, "make_row_template", lambda *args: made.append(args[1]) or original(*args))
    family = lg.Grammar.from_json_schema({"type": "string"}).ir.pool.family
    monkeypatch.setattr(family, "memo", {})  # as in a new process: not the templates earlier tests made
    for name in ("p", "q"):  # two schemas, two pools of one family
        ir = lg.Grammar.from_json_schema({"type": "object", "properties": {name: {"type": "string"}}}).ir
        lexer = Lexer(ir, Limits())
        state = lexer.start_state(frozenset(range(len(ir.lexemes))))
        for byte in b'"ab\\n \xc3\xa9':  # the string value's lexeme (the key's dies at a)
            state = lexer.step(state, byte)
            assert state != DEAD
    assert made and len(made) == len(set(made))


def test_no_template_past_its_size_or_the_state_budget():
    ir = lg.Grammar.from_regex("[a-z]{0,70}").ir  # a pool without a family: its own memo
    assert ir.pool.family is None
    expr = ir.lexemes[0].expr
    assert lexer_blocks_module.row_template(ir.pool, expr) is None  # the first request: rows as reached
    assert lexer_blocks_module.row_template(ir.pool, expr) is None  # 71 states and ε: too many
    assert ("lexer row template", ir.lexemes[0].expr) in ir.pool.memo
    ir = lg.Grammar.from_json_schema({"type": "string"}).ir
    lex = next(i for i, lexeme in enumerate(ir.lexemes) if lexeme.name != "WS")  # the string
    lexeme = ir.lexemes[lex]
    exprs, _, _ = lexer_blocks_module.row_template(ir.pool, lexeme.expr)
    lexer = Lexer(ir, Limits(max_dfa_states=len(exprs)))  # dead and the start state are there already
    state = lexer.start_state(frozenset([lex]))
    assert not lexer._fill_from_template(state, lex, lexeme.expr)


def test_a_family_template_is_bounded_by_the_family_limit():
    ir = lg.Grammar.from_json_schema({"type": "object"}).ir
    pool = ir.pool
    ws = next(lexeme.expr for lexeme in ir.lexemes if lexeme.name == "WS")
    assert ws < pool.family.size
    exprs, _, _ = lexer_blocks_module.row_template(pool, ws)  # the whitespace run: all of its states
    count = len(exprs)
    assert count <= lexer_blocks_module.MAX_FAMILY_TEMPLATE_STATES
    assert lexer_blocks_module.make_row_template(pool, ws, pool.family.size, count) is not None
    assert lexer_blocks_module.make_row_template(pool, ws, pool.family.size, count - 1) is None


FORMAT_SCHEMA = {"type": "object", "properties": {"t": {"type": "string", "format": "date-time"},
                                                  "u": {"type": "string", "format": "uri"},
                                                  "m": {"type": "string", "format": "email"},
                                                  "h": {"type": "string", "anyOf": [{"format": "hostname"},
                                                                                    {"format": "ipv4"},
                                                                                    {"format": "ipv6"}]}}}


def format_tail(pool, name: str) -> int:
    """The expression after a string of format ``name``'s opening quote."""
    from leapgram.frontends.json_schema.formats import FORMATS
    from leapgram.frontends.json_schema.strings import json_encoded
    from leapgram.regex.syntax import parse_regex

    return pool.concat(json_encoded(pool, parse_regex(FORMATS[name], pool)), pool.literal(b'"'))


def test_a_formats_value_rows_come_from_the_template_made_with_the_base_pool(monkeypatch):
    ir = lg.Grammar.from_json_schema(FORMAT_SCHEMA).ir
    pool = ir.pool
    for name in ("date-time", "uri", "email"):  # made when the base pool was built, before any lexer
        tail = format_tail(pool, name)
        assert tail < pool.family.size
        assert pool.family.memo[(ROW_TEMPLATE, tail)] is not None
    everything = frozenset(range(len(ir.lexemes)))
    any_of = frozenset(lex for lex, lexeme in enumerate(ir.lexemes) if "anyOf" in lexeme.name)  # hostname, ipv4, ipv6
    fresh_sets = [everything] + [frozenset([lex]) for lex in everything]
    used, made = set(), []
    original = Lexer._fill_from_template

    def recorded(self, state, lex, expr):
        done = original(self, state, lex, expr)
        if done:
            used.add(expr)
        return done

    monkeypatch.setattr(Lexer, "_fill_from_template", recorded)
    original_make = lexer_blocks_module.make_row_template
    monkeypatch.setattr(lexer_blocks_module, "make_row_template", lambda *args: made.append(args[1]) or original_make(*args))
    with_templates = rows_by_items(ir, fresh_sets)
    assert {format_tail(pool, name) for name in ("date-time", "uri", "email")} <= used
    used.clear()
    past_any_of = rows_by_items(ir, [any_of])  # a hostname's states reached from the state of the three after "
    hostname = pool.family.memo[(ROW_TEMPLATE, format_tail(pool, "hostname"))][0]
    assert [expr for expr in used if expr in hostname[1:]]  # from the template, in the middle
    from leapgram.frontends.json_schema.formats import FORMATS

    templates = [pool.family.memo[(ROW_TEMPLATE, format_tail(pool, name))] for name in FORMATS]
    format_states = {expr for template in templates if template is not None for expr in template[0]}
    assert len(format_states) > 500 and not format_states & set(made)  # no mask makes a format's template
    monkeypatch.undo()
    without_row_templates(monkeypatch, pool)
    monkeypatch.setattr(lexer_blocks_module, "template_member", lambda pool, expr: None)
    assert with_templates == rows_by_items(ir, fresh_sets)
    assert past_any_of == rows_by_items(ir, [any_of])


def test_the_large_formats_are_not_explored_and_get_no_template():
    from leapgram.frontends.json_schema.common import MAX_FORMAT_POSITIONS, format_positions

    pool = lg.Grammar.from_json_schema({"type": "string", "format": "idn-email"}).ir.pool
    for name in ("idn-email", "idn-hostname", "iri", "iri-reference"):  # 416 states to thousands
        tail = format_tail(pool, name)
        assert format_positions(pool, tail) > MAX_FORMAT_POSITIONS
        assert lexer_blocks_module.row_template(pool, tail) is None
    for name in ("uri-reference", "email", "ipv6", "hostname"):  # the largest that fit: 191, 215, 152, 187 states
        assert format_positions(pool, format_tail(pool, name)) <= MAX_FORMAT_POSITIONS
        assert lexer_blocks_module.row_template(pool, format_tail(pool, name)) is not None
