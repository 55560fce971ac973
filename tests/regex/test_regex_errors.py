"""Golden table of malformed and unsupported regexes: the exception, the message and the position.

Columns are 1-based and point at the construct at fault (Python's ``re.error.pos`` + 1 where
Python reports the same error).
"""

from __future__ import annotations

import re
import warnings

import pytest

from leapgram.errors import GrammarError, UnsupportedError
from leapgram.limits import Limits
from leapgram.regex import ExprPool, parse_regex

# (pattern, exception, message substring, column)
REGEX_ERRORS = [
    # unbalanced parentheses
    ("(ab", GrammarError, "missing ), unterminated subpattern", 1),
    ("a(b(c)", GrammarError, "missing ), unterminated subpattern", 2),
    ("(", GrammarError, "missing ), unterminated subpattern", 1),
    ("ab)", GrammarError, "unbalanced parenthesis ')'", 3),
    (")", GrammarError, "unbalanced parenthesis ')'", 1),
    ("(?#abc", GrammarError, "missing ), unterminated comment", 1),
    # character classes
    ("[z-a]", GrammarError, "bad character range z-a", 2),
    ("[a-\\d]", GrammarError, "bad character range a-\\d", 2),
    ("[\\w-z]", GrammarError, "bad character range \\w-z", 2),
    ("[abc", GrammarError, "unterminated character set", 1),
    ("x[^", GrammarError, "unterminated character set", 2),
    ("[]", GrammarError, "unterminated character set", 1),
    # quantifiers
    ("*a", GrammarError, "nothing to repeat", 1),
    ("a|+", GrammarError, "nothing to repeat", 3),
    ("(?:*)", GrammarError, "nothing to repeat", 4),
    ("{2}", GrammarError, "nothing to repeat", 1),
    ("^*", GrammarError, "nothing to repeat", 2),
    ("a**", GrammarError, "multiple repeat", 3),
    ("a{2}{3}", GrammarError, "multiple repeat", 5),
    ("a*??", GrammarError, "multiple repeat", 4),
    ("a{3,2}", GrammarError, "min repeat greater than max repeat", 2),
    ("a{10001}", UnsupportedError, "repeat bound above 10000; raise Limits.max_repeat", 2),
    ("a{,10001}", UnsupportedError, "repeat bound above 10000", 2),
    ("a*+", UnsupportedError, "possessive quantifier", 3),
    ("a{2}+", UnsupportedError, "possessive quantifier", 5),
    # escapes
    ("\\x4", GrammarError, "bad escape \\x4", 1),
    ("\\xZZ", GrammarError, "bad escape \\xZZ", 1),
    ("ab\\u12G4", GrammarError, "bad escape \\u12G4", 3),
    ("\\U00110000", GrammarError, "code point U+110000 beyond U+10FFFF", 1),
    ("\\u{110000}", GrammarError, "code point U+110000 beyond U+10FFFF", 1),
    ("\\u{}", GrammarError, "bad escape \\u{...}", 1),
    ("\\q", GrammarError, "bad escape \\q", 1),
    ("a\\", GrammarError, "bad escape (end of pattern)", 2),
    ("\\ud800", UnsupportedError, "surrogate code point U+D800", 1),
    ("\\01", UnsupportedError, "octal escape; use \\xHH instead", 1),
    ("\\N{EM DASH}", UnsupportedError, "named character \\N{...}", 1),
    ("\\p{L}", UnsupportedError, "Unicode property \\p; spell the property out", 1),
    ("x\\P{Lu}", UnsupportedError, "Unicode property \\P", 2),
    ("[[:alpha:]]", UnsupportedError, "POSIX class [:...:]", 2),
    # groups and flags
    ("(?Qa)", GrammarError, "unknown extension ?Q", 3),
    ("(?", GrammarError, "unexpected end of pattern", 3),
    ("(?i", GrammarError, "unexpected end of pattern", 4),
    ("(?P<1>a)", GrammarError, "bad character in group name '1'", 5),
    ("(?P<a", GrammarError, "missing >, unterminated name", 5),
    ("(?P<>a)", GrammarError, "missing group name", 5),
    ("a(?i)b", GrammarError, "global flags not at the start of the expression", 2),
    ("(?x)a", UnsupportedError, "inline flag 'x'", 3),
    ("(?im)a", UnsupportedError, "inline flag 'm'", 4),
    ("(?-i:a)", UnsupportedError, "turning flags off", 3),
    ("(?>ab)", UnsupportedError, "atomic group (?>...)", 1),
    ("(?(1)a|b)", UnsupportedError, "conditional group", 1),
    # lookaround, backreferences, boundaries, anchors
    ("(?=a)", UnsupportedError, "lookahead (?=...)", 1),
    ("x(?!a)", UnsupportedError, "negative lookahead (?!...)", 2),
    ("(?<=a)b", UnsupportedError, "lookbehind (?<=...)", 1),
    ("(?<!a)b", UnsupportedError, "negative lookbehind (?<!...)", 1),
    ("(a)\\1", UnsupportedError, "backreference \\1; backreferences are not regular", 4),
    ("(?P<n>a)(?P=n)", UnsupportedError, "backreference (?P=...)", 9),
    ("(?<n>a)\\k<n>", UnsupportedError, "backreference \\k", 8),
    ("a\\b", UnsupportedError, "word boundary \\b", 2),
    ("\\Ba", UnsupportedError, "word boundary \\B", 1),
    ("\\Aa", UnsupportedError, "anchor \\A; anchors are implicit", 1),
    ("a\\Z", UnsupportedError, "anchor \\Z", 2),
    ("a^b", UnsupportedError, "anchor ^ inside the pattern", 2),
    ("a$b", UnsupportedError, "anchor $ inside the pattern", 2),
    # A $ that ends only some branches still ends the group: (a$|b)c must not match "ac".
    ("(a$|b)c", UnsupportedError, "anchor $ inside the pattern", 3),
    # (a$)* would match "aa", (^a)+ too: an anchor allows one repetition at most.
    ("(a$)*", UnsupportedError, "anchor inside a repeated group", 3),
    ("(^a)+", UnsupportedError, "anchor inside a repeated group", 2),
    ("((^a)){2}", UnsupportedError, "anchor inside a repeated group", 3),
]

# Rows that Python's re accepts or words differently because they are ECMA-262 syntax.
ECMA_ONLY = {"\\u{110000}", "\\u{}"}


def parse_error(pattern: str, limits: Limits | None = None) -> GrammarError:
    with pytest.raises(GrammarError) as info:
        parse_regex(pattern, ExprPool(limits or Limits()))
    return info.value


@pytest.mark.parametrize("pattern, error, message, column", REGEX_ERRORS)
def test_regex_error_table(pattern, error, message, column):
    err = parse_error(pattern)
    assert type(err) is error
    assert message in err.message
    assert (err.line, err.column) == (1, column)
    caret = " " * (column - 1) + "^"
    assert str(err).endswith(f" at line 1, column {column}\n  {pattern}\n  {caret}")
    prefix = "unsupported regex feature: " if error is UnsupportedError else "invalid regex: "
    assert err.message.startswith(prefix)


@pytest.mark.parametrize("pattern", [row[0] for row in REGEX_ERRORS if row[1] is GrammarError])
def test_malformed_rows_are_malformed_for_python_too(pattern):
    """What leapgram calls invalid, Python calls invalid: valid-but-unsupported is a different error."""
    if pattern in ECMA_ONLY:
        pytest.skip("ECMA-262 escape")
    with pytest.raises(re.error), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        re.compile(pattern)


@pytest.mark.parametrize("pattern", [row[0] for row in REGEX_ERRORS if row[1] is UnsupportedError])
def test_unsupported_errors_name_the_feature_and_advise(pattern):
    err = parse_error(pattern)
    assert err.feature and err.feature in err.message
    advice = err.message.split(f"{err.feature}; ", 1)[1]
    assert advice.strip()


def test_error_on_a_later_line():
    err = parse_error("ab\n  (c")
    assert (err.line, err.column) == (2, 3)
    assert str(err).endswith("at line 2, column 3\n    (c\n    ^")


def test_caret_keeps_tabs():
    err = parse_error("\tx\t**")
    assert err.column == 5
    assert str(err).endswith("\n  \tx\t**\n  \t \t ^")


def test_repeat_limit_is_configurable():
    assert parse_regex("a{20}", ExprPool(Limits(max_repeat=20))) is not None
    err = parse_error("a{21}", Limits(max_repeat=20))
    assert isinstance(err, UnsupportedError) and "above 20" in err.message


def test_deep_nesting_is_an_error_not_a_recursion_error():
    err = parse_error("(" * 300 + "a" + ")" * 300)
    assert isinstance(err, UnsupportedError) and "nesting deeper than 200" in err.message
