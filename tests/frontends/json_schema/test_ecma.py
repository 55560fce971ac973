"""ECMA-262 patterns: unanchored search semantics, ECMA classes, refusals with locations."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leapgram.errors import GrammarError, UnsupportedError
from leapgram.frontends.json_schema.ecma import any_text, ecma_pattern_expr
from leapgram.regex.expr import K_OR, ExprPool


def found(pattern: str, text: str) -> bool:
    pool = ExprPool()
    return pool.matches(ecma_pattern_expr(pattern, pool), text.encode())


CASES = [
    ("abc", "xxabcxx", True),
    ("^abc", "abcxx", True),
    ("^abc", "xabc", False),
    ("abc$", "xabc", True),
    ("abc$", "abcx", False),
    ("^a|b$", "ax", True),
    ("^a|b$", "xb", True),
    ("^a|b$", "xa", False),
    ("^(a|b)+$", "abba", True),
    ("^(a|b)+$", "abca", False),
    (r"^\s+$", "\u00a0\u2028\t", True),
    (r"^\S$", "\u00a0", False),
    (r"^\d$", "\u0663", False),
    (r"^\w+$", "é", False),
    ("^.$", "\r", False),
    ("^.$", "\u2029", False),
    ("^.$", "é", True),
    ("^[^]$", "\n", True),
    ("[]", "anything", False),
    (r"^\u00e9\x41$", "éA", True),
    (r"^\u{1F600}$", "\U0001F600", True),
    (r"^\cJ$", "\n", True),
    (r"^a{2,3}?$", "aaa", True),
    (r"^(?<year>\d{4})$", "2024", True),
    (r"^\p{Lu}\p{Ll}+$", "Émile", True),
    (r"^\p{L}+$", "ab1", False),
    (r"^\P{L}+$", "12", True),
    (r"^[\p{N}x]+$", "4x\u0663", True),
    (r"(^a)b", "abx", True),
    (r"(^a)b", "xab", False),
    (r"a(^b)", "ab", False),
    (r"(a$|b)", "xa", True),
    (r"(a$|b)", "ax", False),
    (r"(a$)b?", "a", True),
    (r"(^gs://.+)|(^https?://.+)", "https://x", True),
    (r"(^gs://.+)|(^https?://.+)", " https://x", False),
    (r"^(/?[a-z]*($|/))*$", "a/b", True),
    (r"^(/?[a-z]*($|/))*$", "a/B", False),
]


@pytest.mark.parametrize(("pattern", "text", "expected"), CASES)
def test_table(pattern, text, expected):
    assert found(pattern, text) is expected


@pytest.mark.parametrize(("pattern", "feature"), [
    (r"\bword", "word boundary \\b"),
    (r"(?=a)a", "lookahead (?=...)"),
    (r"(?<!a)b", "negative lookbehind (?<!...)"),
    (r"(a)\1", "backreference \\1"),
    (r"\p{Script=Greek}", "Unicode property \\p{Script=Greek}"),
])
def test_refused_with_feature_and_offset(pattern, feature):
    with pytest.raises(UnsupportedError) as info:
        found(pattern, "")
    assert info.value.feature == feature
    assert info.value.column is not None and "^" in str(info.value)


@pytest.mark.parametrize(("pattern", "column"), [("a(b", 2), ("[a-", 1), ("x{3,2}", 2), (r"\p{L", 1)])
def test_malformed_patterns_have_a_caret(pattern, column):
    with pytest.raises(GrammarError) as info:
        found(pattern, "")
    assert info.value.column == column


ALPHABET = "ab-. \n"
simple_patterns = st.sampled_from(["a", "a+b", "^a", "b$", "^a.b$", "[ab]-", "(a|b)(a|b)", "^[^a]*$", r"\.", "a{2}",
                                   "a|b-", "^a|b|.b$", "a$|^b|a.", "^a$|b|-a*"])


@settings(max_examples=200, deadline=None)
@given(simple_patterns, st.text(ALPHABET, max_size=8))
def test_agrees_with_python_search_where_the_dialects_agree(pattern, text):
    # Python's $ also matches before a final newline, ECMA's only at the end: Python's \Z (the
    # patterns hold $ only as an anchor; ^ and . agree without flags over this alphabet)
    assert found(pattern, text) is (re.search(pattern.replace("$", r"\Z"), text) is not None)


@pytest.mark.parametrize("pattern", ["UTC|(Africa/[A-Za-z]+)|(Asia/[A-Za-z]+)", "^a|b|c$|^d$|e", "ab|^a?|c"])
def test_branches_share_their_free_ends(pattern):
    """``any (X | Y) any`` is ``any X any | any Y any``: the branches searched the same way are
    grouped (one leading search to derive, not one per branch), the language unchanged."""
    pool = ExprPool()
    grouped = ecma_pattern_expr(pattern, pool)
    anything = any_text(pool)
    branches = []
    for branch in pattern.split("|"):
        parts = [] if branch.startswith("^") else [anything]
        parts.append(ecma_pattern_expr(f"^{branch.lstrip('^').rstrip('$')}$", pool))
        parts += [] if branch.endswith("$") else [anything]
        branches.append(pool.concat_all(parts))
    separate = pool.alt(branches)
    assert pool.is_empty(pool.intersect([grouped, pool.complement(separate)]))
    assert pool.is_empty(pool.intersect([separate, pool.complement(grouped)]))
    if pattern.startswith("UTC"):
        assert pool.kind[grouped] != K_OR  # one search: any (UTC | ...) any
