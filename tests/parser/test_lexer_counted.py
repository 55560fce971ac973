"""Rows of counted lexemes (``leapgram.parser.counted``, ``Lexer._fill_counted``): the rows
shifted from the character's template equal, state by state and expression id by expression
id, the rows built by derivatives, on many bounds (0, 1, lo = hi, no upper bound), for JSON
strings (multi-byte UTF-8, escapes), a pattern's own character and Lark terminals."""

from __future__ import annotations

import json

import pytest

import leapgram as lg
from leapgram.errors import BudgetExceededError
from leapgram.limits import Limits
from leapgram.parser import Lexer
from leapgram.parser.counted import split_counted
from tests.parser.test_lexer_templates import rows_by_items


def reachable_rows(ir) -> dict:
    """Every row reachable from the start states of each lexeme alone and of all of them, by
    items (expression ids: the same both ways, the pool being shared)."""
    everything = frozenset(range(len(ir.lexemes)))
    return rows_by_items(ir, [everything] + [frozenset([lex]) for lex in everything])


def compare(ir, monkeypatch, counted: str = "_fill_counted", off: tuple = ("_fill_counted", lambda self, *args: False)
            ) -> int:
    """Assert the rows with and without counted rows (``Lexer.<counted>``; ``off``: the method
    and stand-in that turn them off) are equal; the number of counted rows."""
    used = []
    original = getattr(Lexer, counted)

    def counting(self, *args):
        done = original(self, *args)
        used.append(done)
        return done

    monkeypatch.setattr(Lexer, counted, counting)
    shifted = reachable_rows(ir)
    monkeypatch.setattr(Lexer, *off)
    derived = reachable_rows(ir)
    assert shifted.keys() == derived.keys()
    for key, value in shifted.items():
        assert value == derived[key], key
    return sum(used)


BOUNDS = [(0, 1), (1, 1), (0, 2), (1, 2), (2, 2), (3, 3), (0, 5), (2, 7), (1, 12), (12, 12), (4, None), (1, None),
          (0, 0), (6, 6)]


@pytest.mark.parametrize(("low", "high"), BOUNDS)
def test_json_string_rows_shifted_equal_rows_derived(low, high, monkeypatch):
    schema = {"type": "string", "minLength": low}
    if high is not None:
        schema["maxLength"] = high
    used = compare(lg.Grammar.from_json_schema(schema).ir, monkeypatch)
    if high != 0 and (low, high) != (1, 1):
        assert used >= (low if high is None else high)  # a row per count at least (X* T: the family template)


@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "^[a-zé]{2,9}$"},  # a character outside the pool family: its own template
    {"type": "string", "pattern": "^[a-z]{3}-[0-9]{1,4}$"},
    {"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}, "b": {"type": "string", "minLength": 2,
                                                                                     "maxLength": 4}}},
    {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 6}},
])
def test_other_counted_rows_shifted_equal_rows_derived(schema, monkeypatch):
    assert compare(lg.Grammar.from_json_schema(schema).ir, monkeypatch) > 0


@pytest.mark.parametrize("grammar", [
    'start: A\nA: /[a-z]{2,30}/\n',  # no tail: the lexeme ends with the count
    'start: A\nA: /(ab){1,9}c/\n',  # a character of two bytes
    'start: A\nA: /x[^"]{0,8}"/\n',  # counted UTF-8 characters after a literal
])
def test_lark_counted_rows_shifted_equal_rows_derived(grammar, monkeypatch):
    assert compare(lg.Grammar.from_lark(grammar).ir, monkeypatch) > 0


def test_a_tail_the_character_can_start_is_left_to_derivatives(monkeypatch):
    ir = lg.Grammar.from_lark('start: A\nA: /[ab]{1,5}b/\n').ir  # b starts both X and T
    assert compare(ir, monkeypatch) == 0


def test_split_counted_reads_the_spine():
    ir = lg.Grammar.from_json_schema({"type": "string", "minLength": 2, "maxLength": 9}).ir
    pool = ir.pool
    expr = next(lexeme.expr for lexeme in ir.lexemes if lexeme.name != "WS")  # " X{2,9} "
    quote = pool.literal(b'"')
    assert split_counted(pool, expr)[0] == (quote,)  # a quote first: not a residual of X
    assert Lexer(ir, Limits())._counted_entry(expr) is None
    body = pool.derivative(expr, ord('"'))
    heads, char, low, high, tail = split_counted(pool, body)
    assert (heads, low, high, tail) == ((), 2, 9, quote)
    after = pool.derivative(body, 0xC3)  # half of é
    heads, char2, low, high, _ = split_counted(pool, after)
    assert char2 == char and (low, high) == (1, 8) and len(heads) == 1


def masks_along(schema: dict, texts: list[str], extra: list[bytes]) -> list:
    """The masks, ``consume_token`` results and acceptance along ``texts`` (tokenized longest
    match first) under ``schema``, with a vocabulary of every byte, ``extra`` and EOS."""
    tokens = [bytes([b]) for b in range(256)] + extra + [b"<eos>"]
    vocab = lg.Vocabulary(tokens, eos_token_ids=[len(tokens) - 1], special_token_ids=[len(tokens) - 1])
    ids = {token: index for index, token in enumerate(tokens[:-1])}

    def encode(data: bytes) -> list[int]:  # longest match first
        out = []
        while data:
            size = max(n for n in range(1, 9) if data[:n] in ids)
            out.append(ids[data[:size]])
            data = data[size:]
        return out

    compiled = lg.GrammarCompiler(vocab, cache_size=0).compile(lg.Grammar.from_json_schema(json.dumps(schema)))
    out = []
    for text in texts:
        matcher = lg.Matcher(compiled)
        for token in encode(text.encode()):
            out.append(matcher.compute_mask().tobytes())
            ok = matcher.consume_token(token)
            out.append(ok)
            if not ok:
                break
        out.append(matcher.is_accepting())
    return out


EXTRA_TOKENS = [b'ab', b'\xc3\xa9', b'\\u00e9', b'\\"', b'abcdefgh', b'"}', b'\xe2\x82', b'\xac"']


def test_masks_along_strings_equal(monkeypatch):
    schema = {"type": "object", "properties": {"s": {"type": "string", "minLength": 2, "maxLength": 6}},
              "required": ["s"]}
    texts = ['{"s": "ab\\"é"}', '{"s": "abcdefgh"}', '{"s": "é€\\u00e9"}', '{"s": "a"}', '{"s": "\\\\ab€"}']
    shifted = masks_along(schema, texts, EXTRA_TOKENS)
    monkeypatch.setattr(Lexer, "_fill_counted", lambda self, *args: False)
    assert shifted == masks_along(schema, texts, EXTRA_TOKENS)


def test_a_small_state_budget_is_a_clean_error():
    ir = lg.Grammar.from_json_schema({"type": "string", "minLength": 1, "maxLength": 40}).ir
    for budget in (8, 12, 20, 40):
        lexer = Lexer(ir, Limits(max_dfa_states=budget))
        state = lexer.start_state(frozenset(range(len(ir.lexemes))))
        with pytest.raises(BudgetExceededError):
            for byte in b'"' + "é\\u00e9ab".encode() * 10:
                state = lexer.step(state, byte)
                lexer.fill_row(state)
        assert all(0 <= state < lexer.num_states for state in lexer._ids.values())  # no state half made
        assert lexer.num_states <= budget
