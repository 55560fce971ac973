"""Checks shared by the tables of bad grammars (Lark, GBNF): class, message, location, caret."""

from __future__ import annotations

from leapgram import GrammarError


def assert_located(err: GrammarError, bad) -> None:
    """``err`` is ``bad.error`` exactly, says ``bad.message`` and points at ``bad.line``/``bad.column``."""
    assert type(err) is bad.error, err
    assert bad.message in err.message, err
    assert (err.line, err.column) == (bad.line, bad.column), err
    assert err.source == bad.grammar


def assert_caret(text: str, bad) -> None:
    """The rendered message ends with the bad line and a caret under ``bad.column``."""
    assert f"at line {bad.line}, column {bad.column}" in text
    source_line, caret = text.splitlines()[-2:]
    assert source_line == "  " + bad.grammar.split("\n")[bad.line - 1]
    assert caret.index("^") == 2 + bad.column - 1
