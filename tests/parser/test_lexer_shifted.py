"""Rows shifted by a count beside its tail (``leapgram.parser.lexer_shifted``,
``Lexer._fill_shifted``): a state ``… X{0,n} …`` whose tail starts with bytes of ``X`` (a
hostname label ``C (D{0,61} C)?`` with ``C ⊆ D``) takes the row of its shape at another count;
every reachable row equals, expression id by expression id, the row built by derivatives."""

from __future__ import annotations

import pytest

import leapgram as lg
from leapgram.parser import Lexer
from tests.parser.test_lexer_counted import reachable_rows


def compare(ir, monkeypatch) -> int:
    """Assert the rows with and without shifted rows are equal; the number of shifted rows."""
    used = []
    original = Lexer._fill_shifted

    def counting(self, *args):
        done = original(self, *args)
        used.append(done is True)
        return done

    monkeypatch.setattr(Lexer, "_fill_shifted", counting)
    shifted = reachable_rows(ir)
    monkeypatch.setattr(Lexer, "_fill_shifted", lambda self, *args: None)
    derived = reachable_rows(ir)
    assert shifted.keys() == derived.keys()
    for key, value in shifted.items():
        assert value == derived[key], key
    return sum(used)


LABEL = 'start: A\nA: /[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*"/\n'


@pytest.mark.parametrize(("grammar", "shifts"), [
    (LABEL, True),  # the count beside a label of the same bound (its later labels)
    ('start: A\nA: /[a-z]([a-z-]{0,40}[a-z])?/\n', True),  # no tail after the label
    ('start: A\nA: /x([ab]{0,30}b)?c/\n', True),
    ('start: A\nA: /([ab]{0,30}b|a{1,40})c/\n', True),  # two counts of different characters
    ('start: A\nA: /[ab]{0,20}x([ab]{0,25}b)?y/\n', True),  # X{0,n} before and after another byte
    ('start: A\nA: /([ab]{0,30}b)?[ab]*/\n', False),  # a star holding X beside the count: not shifted
])
def test_lark_shifted_rows_equal_rows_derived(grammar, shifts, monkeypatch):
    assert (compare(lg.Grammar.from_lark(grammar).ir, monkeypatch) > 0) == shifts


@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$"},
    {"type": "string", "pattern": "^[a-zé]([a-zé-]{0,20}[a-zé])?(\\.[a-z]+)?$"},  # UTF-8 and escapes in X
])
def test_json_shifted_rows_equal_rows_derived(schema, monkeypatch):
    assert compare(lg.Grammar.from_json_schema(schema).ir, monkeypatch) > 0


@pytest.mark.parametrize("schema", [
    {"type": "string", "format": "hostname"},  # rows from the format's template: none shifted
    {"type": "string", "format": "hostname", "maxLength": 20},  # rows of (pattern, count) pairs
])
def test_format_rows_equal_rows_derived(schema, monkeypatch):
    compare(lg.Grammar.from_json_schema(schema).ir, monkeypatch)
