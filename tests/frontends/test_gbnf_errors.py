"""Bad GBNF grammars: the exception class, what the message says and where it points.

The table doubles as documentation of what the front end refuses.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from leapgram import Grammar, GrammarError, UnsupportedError
from leapgram.frontends.gbnf import gbnf_to_ir
from leapgram.limits import Limits
from tests.helpers.compiling import compile_for


@dataclass(frozen=True)
class Bad:
    grammar: str
    error: type[GrammarError]
    message: str
    line: int | None
    column: int | None


BAD_GRAMMARS = [
    # names
    Bad('root ::= foo', GrammarError, "undefined rule foo (used in rule root)", 1, 10),
    Bad('root ::= "a" x\nx ::= "b" | y', GrammarError, "undefined rule y (used in rule x)", 2, 13),
    Bad('root ::= x\nx ::= "a" x-y', GrammarError, "undefined rule x-y (used in rule x)", 2, 11),
    Bad('main ::= "a"', GrammarError, "missing start rule: no rule named 'root'", None, None),
    Bad('root ::= "a"\nroot ::= "b"', GrammarError, "rule root is defined twice (first on line 1)", 2, 1),
    # layout
    Bad('root "a"', GrammarError, "expected '::=' after the rule name, found '\"' in rule root", 1, 6),
    Bad('root := "a"', GrammarError, "expected '::=' after the rule name, found ':' in rule root", 1, 6),
    Bad('root\n::= "a"', GrammarError, "expected '::=' after the rule name, found the end of the line", 1, 5),
    Bad('::= "a"', GrammarError, "expected a rule name, found ':'", 1, 1),
    Bad('root ::= ("a" "b"', GrammarError, "'(' is never closed in rule root", 1, 10),
    Bad('root ::= "a")', GrammarError, "unmatched ')' in rule root", 1, 13),
    Bad('root ::= "a" $', GrammarError, "unexpected character '$' in rule root", 1, 14),
    # strings and classes
    Bad('root ::= "abc', GrammarError, "unterminated string literal in rule root", 1, 10),
    Bad('root ::= "a\nb"', GrammarError, "unterminated string literal in rule root", 1, 10),
    Bad('root ::= [a-z', GrammarError, "unterminated character class in rule root", 1, 10),
    Bad('root ::= x\nx ::= [a-z\n]', GrammarError, "unterminated character class in rule x", 2, 7),
    Bad('root ::= [z-a]', GrammarError, "bad character range 'z'-'a': the end comes first in rule root", 1, 10),
    # escapes
    Bad('root ::= "\\q"', GrammarError, "bad escape \\q (known: \\n", 1, 11),
    Bad('root ::= [\\q]', GrammarError, "bad escape \\q (known:", 1, 11),
    Bad('root ::= "\\x4g"', GrammarError, "bad escape \\x: expected 2 hex digits in rule root", 1, 11),
    Bad('root ::= "\\u12"', GrammarError, "bad escape \\u: expected 4 hex digits", 1, 11),
    Bad('root ::= "\\U0011000000"', GrammarError, "bad escape \\U00110000: not a Unicode scalar value", 1, 11),
    Bad('root ::= "\\ud800"', GrammarError, "bad escape \\ud800: not a Unicode scalar value", 1, 11),
    # repetitions
    Bad('root ::= "a"{3,2}', GrammarError, "bad repetition bounds {3,2}: 2 is below 3 in rule root", 1, 13),
    Bad('root ::= "a"{x}', GrammarError, "bad repetition {x}: expected {m}, {m,} or {m,n}", 1, 13),
    Bad('root ::= "a"{}', GrammarError, "bad repetition {}", 1, 13),
    Bad('root ::= "a"{2', GrammarError, "'{' is never closed in rule root", 1, 13),
    Bad('root ::= "a"{20000}', UnsupportedError, "above Limits.max_repeat", 1, 13),
    # matches nothing
    Bad('root ::= root "a"', GrammarError, "start rule root derives no string", 1, 1),
]


def raised(grammar: str) -> GrammarError:
    with pytest.raises(GrammarError) as info:
        gbnf_to_ir(grammar)
    return info.value


@pytest.mark.parametrize("bad", BAD_GRAMMARS, ids=lambda bad: bad.grammar.replace("\n", "⏎")[:40])
def test_bad_grammar(bad):
    err = raised(bad.grammar)
    assert type(err) is bad.error, err
    assert bad.message in err.message, err
    assert (err.line, err.column) == (bad.line, bad.column), err
    assert err.source == bad.grammar


@pytest.mark.parametrize("bad", [b for b in BAD_GRAMMARS if b.line is not None],
                         ids=lambda bad: bad.grammar.replace("\n", "⏎")[:40])
def test_message_ends_with_a_caret_under_the_column(bad):
    text = str(raised(bad.grammar))
    assert f"at line {bad.line}, column {bad.column}" in text
    source_line, caret = text.splitlines()[-2:]
    assert source_line == "  " + bad.grammar.split("\n")[bad.line - 1]
    assert caret.index("^") == 2 + bad.column - 1


def test_limits_are_honoured():
    with pytest.raises(UnsupportedError, match="max_repeat"):
        gbnf_to_ir('root ::= "a"{200}', limits=Limits(max_repeat=100))
    assert gbnf_to_ir('root ::= "a"{200}', limits=Limits(max_repeat=200))


def test_start_option():
    with pytest.raises(GrammarError, match="no rule named 'main'"):
        gbnf_to_ir('root ::= "a"', start="main")
    assert gbnf_to_ir('main ::= "a"', start="main").is_regex


def test_grammar_from_gbnf_raises_the_same():
    with pytest.raises(GrammarError, match="undefined rule foo"):
        Grammar.from_gbnf("root ::= foo")


def test_text_must_be_str():
    with pytest.raises(TypeError):
        gbnf_to_ir(b'root ::= "a"')


GOOD_SYNTAX = [
    # comments, rules spanning lines, names with dashes and digits
    ('# a comment\nroot ::= a-1 # trailing\n  | "b"\na-1 ::= "a"', ["a", "b"], ["ab", ""]),
    ('root ::= "x"{2} "y"{1,} "z"{,2} "w"{0,1}', ["xxy", "xxyyzzw"], ["xy", "xxyzzz"]),
    ('root ::= [^a-c\\]] .', ["dé", "d]"], ["ax", "]x", "d"]),
    ('root ::= "\\x41\\u00e9\\U0001F600\\t\\\\\\""', ["Aé😀\t\\\""], ["A"]),
    ('root ::= ("a" | ) "b"', ["ab", "b"], ["a"]),
    ('root ::= [\\x00-\\x1F\\-]+', ["\x01-"], ["a"]),
]


@pytest.mark.parametrize("grammar, good, bad", GOOD_SYNTAX)
def test_syntax_accepted(grammar, good, bad):
    from leapgram import Matcher, Vocabulary

    compiled = compile_for(Grammar.from_gbnf(grammar), Vocabulary.byte_vocabulary())
    for text, expected in [(t, True) for t in good] + [(t, False) for t in bad]:
        matcher = Matcher(compiled)
        assert (matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()) == expected, text
