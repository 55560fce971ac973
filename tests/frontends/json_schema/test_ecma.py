"""ECMA-262 patterns as JSON Schema reads them: unanchored search, ECMA classes, anchors at the
edges, refused constructs; Python's ``re.search`` as the oracle where the two dialects agree."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leapgram.errors import GrammarError, UnsupportedError
from leapgram.frontends.json_schema.ecma import pattern_expr
from leapgram.regex.expr import ExprPool

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def searcher(pattern: str):
    pool = ExprPool()
    expr = pattern_expr(pattern, pool)
    return lambda text: pool.matches(expr, text.encode())


TABLE = [
    # (pattern, string, found)
    ("", "", True),
    ("", "anything", True),
    ("b", "abc", True),
    ("^b", "abc", False),
    ("^a", "abc", True),
    ("c$", "abc", True),
    ("b$", "abc", False),
    ("^abc$", "abc", True),
    ("^abc$", "abc\n", False),  # ECMA $ is the very end, unlike Python's
    ("^a|c$", "xxc", True),
    ("^a|c$", "cxx", False),
    ("(^a|b)c", "xbc", True),
    ("(^a|b)c", "xac", False),
    ("(^a)?b", "xb", True),
    ("^(a|b)+$", "abba", True),
    ("^(?:a$|b$)", "a", True),
    ("^(?:a$|b$)", "ab", False),
    ("^.$", "\r", False),
    ("^.$", "\u2028", False),
    ("^.$", "é", True),
    ("^\\s$", "\u00a0", True),
    ("^\\s$", "\ufeff", True),
    ("^\\s$", "\x1c", False),
    ("^\\S$", "\x1c", True),
    ("^\\d$", "\u0663", False),
    ("^\\w+$", "héllo", False),
    ("^[]$", "", False),
    ("^[]", "a", False),
    ("^[^]$", "\n", True),
    ("^\\p{Lu}+$", "ÀB", True),
    ("^\\p{Lu}+$", "Àb", False),
    ("^\\p{L}$", "ж", True),
    ("^\\P{L}$", "ж", False),
    ("^\\p{gc=Nd}$", "\u0663", True),
    ("^\\u{1F600}$", "😀", True),
    ("^\\u00e9$", "é", True),
    ("^\\x41\\cJ$", "A\n", True),
    ("^a{2,3}?$", "aaa", True),
    ("^(?<year>\\d{4})-\\d{2}$", "2020-01", True),
    ("^[\\d-]+$", "12-3", True),
    ("a{,2}", "a{,2}", True),
    ("^\\/$", "/", True),
    ("a^b", "a^b", False),  # JavaScript: an anchor where no edge is never holds
    ("a$b", "a$b", False),
    ("a?^b", "bc", True),
    ("^(?!ab)", "abc", False),
    ("^(?!ab)", "acb", True),
    ("^(?=.*\\d)(?=.*[a-z]).{3}$", "a1x", True),
    ("^(?=.*\\d)(?=.*[a-z]).{3}$", "ab!", False),
    ("^(?=[^=]+$)(?!\\s+$)(.|\\n)+$", "a b", True),
    ("^(?=[^=]+$)(?!\\s+$)(.|\\n)+$", "a=b", False),
    ("^(?=[^=]+$)(?!\\s+$)(.|\\n)+$", "  ", False),
    ("x(?=y)", "axyb", True),
    ("x(?=y)", "axb", False),
    ("x(?!y)", "xyxy", False),
    ("x(?!y)", "xyx", True),
    ("^((?!mode)(?!Mode).)*$", "a modest", False),
    ("^((?!mode)(?!Mode).)*$", "a Mod", True),
    ("^((?!mode).)+$", "", False),
    ("^([\\da-z](?:(?!.*--)[\\da-z-]*[\\da-z])?)$", "ab-c", True),
    ("^([\\da-z](?:(?!.*--)[\\da-z-]*[\\da-z])?)$", "ab--c", False),
    ("^([\\da-z](?:(?!.*--)[\\da-z-]*[\\da-z])?)$", "a", True),
]


@pytest.mark.parametrize(("pattern", "text", "found"), TABLE)
def test_table(pattern: str, text: str, found: bool) -> None:
    assert searcher(pattern)(text) is found


UNSUPPORTED = [
    ("(a(?=b))+", "assertion inside a repeated group", 0),
    ("^((?!a).)*b", "lookahead inside a repeated group", 1),
    ("(?=^a)", "anchor ^ inside a lookahead", 0),
    ("(?<=a)b", "lookbehind", 0),
    ("(?<!a)b", "negative lookbehind", 0),
    ("(a)\\1", "backreference", 3),
    ("\\bword", "word boundary", 0),
    ("(^a)+", "assertion inside a repeated group", 0),
    ("\\p{Script=Greek}", "Unicode property", 0),
]


@pytest.mark.parametrize(("pattern", "feature", "offset"), UNSUPPORTED)
def test_unsupported_constructs_are_named(pattern: str, feature: str, offset: int) -> None:
    with pytest.raises(UnsupportedError) as info:
        pattern_expr(pattern, ExprPool())
    assert feature in info.value.feature
    assert info.value.column == offset + 1


@pytest.mark.parametrize("pattern", ["a(b", "a)b", "[a", "a**", "*a", "\\", "[z-a]", "\\p{Nope!}"])
def test_malformed_patterns_raise_grammar_errors(pattern: str) -> None:
    with pytest.raises(GrammarError) as info:
        pattern_expr(pattern, ExprPool())
    assert not isinstance(info.value, UnsupportedError)
    assert info.value.column is not None


AGREEING = ["a", "^a", "b$", "^a|b$", "a+b", "^(ab|ba)*$", "[ab]{2}", "^[^b]+$", "ab?a", "(^a|b)a",
            "^\\d+(-\\d+)?$", "x|y|^$", "a(?!b)", "(?=.*b)a", "^(?!a)(?=.*x)", "^((?!ab).)*$",
            "a$|b^", "(a|^)b(?=1)", "(?:(?!ax)[a-z])?y"]


@FAST
@given(st.sampled_from(AGREEING), st.text(alphabet="abxy1-", max_size=8))
def test_search_agrees_with_python_re(pattern: str, text: str) -> None:
    python = pattern.replace("$", r"\Z")
    assert searcher(pattern)(text) is (re.search(python, text, re.ASCII) is not None)
