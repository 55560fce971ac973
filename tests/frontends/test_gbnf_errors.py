"""Bad GBNF grammars: the exception class, what the message says and where it points.

The table doubles as documentation of what the GBNF front end refuses.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from error_table import assert_caret, assert_located

from leapgram import Grammar, GrammarError, UnsupportedError
from leapgram.frontends.gbnf import gbnf_to_ir


@dataclass(frozen=True)
class Bad:
    grammar: str
    error: type[GrammarError]
    message: str
    line: int | None
    column: int | None


BAD_GRAMMARS = [
    # rules and names
    Bad('root ::= foo', GrammarError, "rule foo is used but not defined", 1, 10),
    Bad('root ::= x\nx ::= "a" | y-z', GrammarError, "rule y-z is used but not defined", 2, 13),
    Bad('start ::= "a"', GrammarError, "start rule 'root' is not defined", None, None),
    Bad('root ::= "a"\nroot ::= "b"', GrammarError, "rule root is defined twice (first on line 1)", 2, 1),
    Bad('root "a"', GrammarError, "expected '::=' after rule name root, found '\"'", 1, 6),
    Bad('root', GrammarError, "expected '::=' after rule name root, found the end of the grammar", 1, 5),
    Bad('root := "a"', GrammarError, "expected '::=' after rule name root", 1, 6),
    Bad('::= "a"', GrammarError, "expected a rule name", 1, 1),
    Bad('root ::= "a" $', GrammarError, "unexpected character '$'", 1, 14),
    Bad('root ::= root "a"', GrammarError, "start rule root derives no string", 1, 1),
    # brackets
    Bad('root ::= ("a" "b"\nx ::= "c"', GrammarError, "'(' is never closed", 1, 10),
    Bad('root ::= ("a" "b"', GrammarError, "'(' is never closed", 1, 10),
    Bad('root ::= "a" )', GrammarError, "unmatched ')'", 1, 14),
    Bad('root ::= ("a" ]', GrammarError, "unexpected character ']'", 1, 15),
    # strings and classes
    Bad('root ::= "abc', GrammarError, "unterminated string literal", 1, 10),
    Bad('root ::= "a\nb"', GrammarError, "unterminated string literal", 1, 10),
    Bad('root ::= [a-z', GrammarError, "unterminated character class", 1, 10),
    Bad('root ::= [a-z\n]', GrammarError, "unterminated character class", 1, 10),
    Bad('root ::= [z-a]', GrammarError, "empty range 'z'-'a'", 1, 11),
    Bad('root ::= "\\q"', GrammarError, "bad escape \\q", 1, 11),
    Bad('root ::= [\\d]', GrammarError, "bad escape \\d", 1, 11),
    Bad('root ::= "\\x4g"', GrammarError, "bad escape \\x: expected 2 hex digits", 1, 11),
    Bad('root ::= "\\u12"', GrammarError, "bad escape \\u: expected 4 hex digits", 1, 11),
    Bad('root ::= "\\U0011FFFF"', GrammarError, "not a Unicode scalar value", 1, 11),
    Bad('root ::= "\\ud800"', GrammarError, "not a Unicode scalar value", 1, 11),
    # repetition
    Bad('root ::= "a"{3,2}', GrammarError, "bad repetition bounds {3,2}", 1, 13),
    Bad('root ::= "a"{}', GrammarError, "expected a repetition count after '{'", 1, 14),
    Bad('root ::= "a"{,2}', GrammarError, "expected a repetition count after '{'", 1, 14),
    Bad('root ::= "a"{2', GrammarError, "expected '}' to close the repetition", 1, 13),
    Bad('root ::= "a"{2 x', GrammarError, "expected '}' to close the repetition", 1, 16),
    Bad('root ::= * "a"', GrammarError, "'*' must follow something to repeat", 1, 10),
    Bad('root ::= "a" | +', GrammarError, "'+' must follow something to repeat", 1, 16),
    Bad('root ::= "a"{20000}', UnsupportedError, "above Limits.max_repeat", 1, 13),
]


def raised(grammar: str) -> GrammarError:
    with pytest.raises(GrammarError) as info:
        gbnf_to_ir(grammar)
    return info.value


@pytest.mark.parametrize("bad", BAD_GRAMMARS, ids=lambda bad: bad.grammar.replace("\n", "⏎")[:40])
def test_bad_grammar(bad):
    assert_located(raised(bad.grammar), bad)


@pytest.mark.parametrize("bad", [b for b in BAD_GRAMMARS if b.line is not None],
                         ids=lambda bad: bad.grammar.replace("\n", "⏎")[:40])
def test_message_ends_with_a_caret_under_the_column(bad):
    assert_caret(str(raised(bad.grammar)), bad)


def test_start_option_names_another_rule():
    with pytest.raises(GrammarError, match="start rule 'main' is not defined"):
        Grammar.from_gbnf('root ::= "a"', start="main")
    assert Grammar.from_gbnf('main ::= "a"', start="main").kind == "gbnf"


def test_unsupported_names_the_feature():
    with pytest.raises(UnsupportedError) as info:
        gbnf_to_ir('root ::= [a-z]{1,99999}')
    assert info.value.feature == "repeat bound above 10000"


def test_text_must_be_str():
    with pytest.raises(TypeError, match="grammar text must be str"):
        gbnf_to_ir(b'root ::= "a"')
