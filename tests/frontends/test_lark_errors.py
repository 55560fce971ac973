"""Bad Lark grammars: the exception class, what the message says and where it points.

The table doubles as documentation of what the front end refuses. ``lark_too`` marks the rows
that Lark itself refuses as well; the others are leapgram's limits (unsupported features) or
grammars Lark loads but that match nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from error_table import assert_caret, assert_located

from leapgram import Grammar, GrammarError, UnsupportedError
from leapgram.frontends.lark import lark_to_ir
from leapgram.limits import Limits

lark = pytest.importorskip("lark")


@dataclass(frozen=True)
class Bad:
    grammar: str
    error: type[GrammarError]
    message: str
    line: int | None
    column: int | None
    lark_too: bool = True


BAD_GRAMMARS = [
    # names
    Bad('start: foo', GrammarError, "rule foo is used but not defined", 1, 8),
    Bad('start: "a" FOO', GrammarError, "terminal FOO is used but not defined", 1, 12),
    Bad('start: x\nx: "a" | y', GrammarError, "rule y is used but not defined", 2, 10),
    Bad('start: Foo\nFoo: "a"', GrammarError, "bad name 'Foo'", 1, 8),
    Bad('foo: "a"', GrammarError, "start rule 'start' is not defined", None, None),
    Bad('start: "a"\nstart: "b"', GrammarError, "rule start is defined twice (first on line 1)", 2, 1),
    Bad('start: A\nA: "a"\nA: "b"', GrammarError, "terminal A is defined twice", 3, 1),
    Bad('start: WS\nWS: " "\n%import common.WS', GrammarError, "terminal WS is defined twice", 3, 16),
    Bad('start: "a" -> x\n_x: "b" -> y', GrammarError, "_x can't have aliases", 2, 12),
    # imports and directives
    Bad('start: X\n%import common.NOPE', GrammarError, "common has no terminal 'NOPE'", 2, 16),
    Bad('start: WS\n%import common.WS -> ws', GrammarError, "needs an uppercase name", 2, 16, lark_too=False),
    Bad('start: "a"\n%ignore\n', GrammarError, "%ignore needs a terminal, string or regex", 2, 1),
    Bad('start: "a"\n%frobnicate x', GrammarError, "unknown directive %frobnicate", 2, 1),
    Bad('start: "a"\n%declare foo', GrammarError, "%declare takes terminals", 2, 10, lark_too=False),
    Bad('start: "a"\n%override foo: "b"', GrammarError, "can't %override foo: it is not defined", 2, 11),
    Bad('start: "a"\n%extend B: "b"', GrammarError, "can't %extend B: it is not defined", 2, 9),
    # layout and brackets
    Bad('start: ("a" "b"\nx: "c"', GrammarError, "'(' is never closed", 1, 8),
    Bad('start: "a" )', GrammarError, "unmatched ')'", 1, 12),
    Bad('start: ["a")', GrammarError, "expected ']' to close '['", 1, 12),
    Bad('start: "a"\n  "b"', GrammarError, "expected a rule or terminal definition", 2, 3),
    Bad('start "a"', GrammarError, "expected ':' after start", 1, 7),
    Bad('start: /[/]/', GrammarError, "unmatched ']'", 1, 11),
    Bad('start: "a" $', GrammarError, "unexpected character '$'", 1, 12),
    Bad('start: ("a" -> x)', GrammarError, "alias '-> name' can only end a top-level alternative", 1, 13),
    # literals
    Bad('start: "abc', GrammarError, "unterminated string literal", 1, 8),
    Bad('start: "a\nb"', GrammarError, "unterminated string literal", 1, 8),
    Bad('start: "\\x4g"', GrammarError, "bad escape \\x: expected 2 hex digits", 1, 9),
    Bad('start: "\\u12"', GrammarError, "bad escape \\u: expected 4 hex digits", 1, 9),
    Bad('start: "\\ud800"', GrammarError, "not a Unicode scalar value", 1, 9, lark_too=False),
    Bad('start: /abc', GrammarError, "unterminated regex literal", 1, 8),
    Bad('start: "ab".."c"', GrammarError, "a range takes two one-character strings", 1, 8),
    Bad('start: "c".."a"', GrammarError, "empty range: 'c' comes after 'a'", 1, 8),
    # regexes: the position inside the pattern, mapped into the grammar
    Bad('start: "x" /a(b/', GrammarError, "missing ), unterminated subpattern", 1, 14),
    Bad('start: A\n\nA: "x"\n   | /[b-a]/', GrammarError, "invalid regex", 4, 8),
    Bad('start: /ab{3,2}/', GrammarError, "min repeat greater than max repeat", 1, 11),
    Bad('start: /a\\qb/', GrammarError, "bad escape \\q", 1, 10),
    # operators
    Bad('start: "a"~3..2', GrammarError, "bad repetition range ~3..2", 1, 11),
    Bad('start: "a"~', GrammarError, "expected a repetition count after '~'", 1, 12),
    Bad('start: "a"+*', GrammarError, "misplaced operator", 1, 12),
    Bad('start: "a"?~2', GrammarError, "misplaced operator", 1, 12),
    # terminals are regular
    Bad('start: A\nA: "a" A?', GrammarError, "terminal A is recursive (A -> A)", 2, 8),
    Bad('start: A\nA: "a" B\nB: "b" | A', GrammarError, "terminal A is recursive (A -> B -> A)", 3, 10),
    Bad('start: A\nA: "a" b\nb: "b"', GrammarError, "rule b used inside A", 2, 8),
    Bad('start: "a"\n%ignore x\nx: " "', GrammarError, "rule x used inside %ignore", 2, 9),
    # templates
    Bad('start: t{"a"}\nt{x, y}: x y', GrammarError, "template t takes 2 arguments, got 1", 1, 8),
    Bad('start: t\nt{x}: x', GrammarError, "template t needs 1 arguments", 1, 8),
    Bad('start: a{"x"}\na: "a"', GrammarError, "a is not a template", 1, 8),
    Bad('start: A\nA{x}: x', GrammarError, "terminal A can't be a template", 2, 2),
    Bad('start: t{"a"}\nt{x}: x | t{u{x}}\nu{y}: y "b"', GrammarError, "template t expands without end", 2, 11,
        lark_too=False),
    # matches nothing
    Bad('start: start "a"', GrammarError, "start rule start derives no string", 1, 1, lark_too=False),
    # unsupported
    Bad('start: /a/x', UnsupportedError, "regex flag 'x' is not supported", 1, 11, lark_too=False),
    Bad('start: "a" /a/im', UnsupportedError, "regex flag 'm' is not supported", 1, 16, lark_too=False),
    Bad('start: /(?<=a)b/', UnsupportedError, "unsupported regex feature", 1, 9, lark_too=False),
    Bad('start: NAME\n%import python.NAME', UnsupportedError, "only the common library is built in", 2, 1,
        lark_too=False),
    Bad('start: X\n%import .other.X', UnsupportedError, "only the common library is built in, not '.other'", 2, 1),
    Bad('start: "a"~20000', UnsupportedError, "above Limits.max_repeat", 1, 11, lark_too=False),
    Bad('start: "a"i.."z"', UnsupportedError, "write both cases as two ranges", 1, 8, lark_too=False),
]


def raised(grammar: str) -> GrammarError:
    with pytest.raises(GrammarError) as info:
        lark_to_ir(grammar)
    return info.value


@pytest.mark.parametrize("bad", BAD_GRAMMARS, ids=lambda bad: bad.grammar.replace("\n", "⏎")[:40])
def test_bad_grammar(bad):
    assert_located(raised(bad.grammar), bad)


@pytest.mark.parametrize("bad", [b for b in BAD_GRAMMARS if b.line is not None],
                         ids=lambda bad: bad.grammar.replace("\n", "⏎")[:40])
def test_message_ends_with_a_caret_under_the_column(bad):
    assert_caret(str(raised(bad.grammar)), bad)


@pytest.mark.parametrize("bad", [b for b in BAD_GRAMMARS if b.lark_too],
                         ids=lambda bad: bad.grammar.replace("\n", "⏎")[:40])
def test_lark_refuses_them_too(bad):
    """Lark raises its own errors, ``FileNotFoundError`` for imports and the regex module's
    errors for bad patterns."""
    with pytest.raises(Exception) as info:
        lark.Lark(bad.grammar, parser="earley", lexer="dynamic")
    assert isinstance(info.value, (lark.exceptions.LarkError, FileNotFoundError)) or "regex" in repr(type(info.value))


def test_unsupported_names_the_feature():
    with pytest.raises(UnsupportedError) as info:
        lark_to_ir("start: /a/m")
    assert info.value.feature == "regex flag 'm'"
    with pytest.raises(UnsupportedError) as info:
        lark_to_ir("start: X\n%import unicode.X")
    assert info.value.feature == "%import unicode"


def test_limits_are_honoured():
    with pytest.raises(UnsupportedError, match="max_repeat"):
        lark_to_ir('start: "a"~200', limits=Limits(max_repeat=100))
    assert lark_to_ir('start: "a"~200', limits=Limits(max_repeat=200))


def test_start_option_must_name_a_rule():
    with pytest.raises(GrammarError, match="start rule 'main' is not defined"):
        lark_to_ir('start: "a"', start="main")
    with pytest.raises(GrammarError, match="start rule 'A' is not defined"):
        lark_to_ir('start: A\nA: "a"', start="A")


def test_grammar_from_lark_raises_the_same():
    with pytest.raises(GrammarError, match="rule foo is used but not defined"):
        Grammar.from_lark("start: foo")


def test_text_must_be_str():
    with pytest.raises(TypeError):
        lark_to_ir(b'start: "a"')
