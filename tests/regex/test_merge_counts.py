"""``C{m,n} & X{a,b}`` is ``C{max(m,a), min(n,b)}`` when every string of ``C`` is one string of
``X`` and ``X`` is a prefix code (``ExprPool._merge_counts``): a string with a length bound whose
pattern ends in a class loop becomes a counted string, with no intersection, once the pattern's
prefix is read."""

from __future__ import annotations

import itertools
import re

import pytest

from leapgram.regex import ExprPool, parse_regex
from leapgram.regex.expr import INF, K_AND, K_REPEAT


def test_a_class_loop_under_a_length_bound_is_counted():
    pool = ExprPool()
    x = parse_regex("[a-z]|\\\\[nt]", pool)  # a prefix code: one letter, or an escape
    c = parse_regex("[a-f]|\\\\n", pool)
    merged = pool.intersect([pool.repeat(c, 1), pool.repeat(x, 0, 27)])
    assert pool.kind[merged] == K_REPEAT and pool.args[merged] == (c, 1, 27)
    assert pool.intersect([pool.repeat(c, 3, 9), pool.repeat(x, 5)]) == pool.repeat(c, 5, 9)
    assert pool.intersect([pool.repeat(x, 2, 4), pool.repeat(x, 3, 8)]) == pool.repeat(x, 3, 4)


def test_empty_when_the_counts_do_not_meet():
    pool = ExprPool()
    x = parse_regex("[a-z]", pool)
    c = parse_regex("[a-c]", pool)
    assert pool.is_empty(pool.intersect([pool.repeat(c, 6, 9), pool.repeat(x, 0, 5)]))


@pytest.mark.parametrize(("c", "x"), [
    ("ab", "a|ab"),  # x no prefix code: "ab" is one x or two
    ("[a-d]", "[b-e]"),  # neither within the other
    ("[a-c]?", "[a-c]"),  # c matches the empty string
])
def test_other_pairs_stay_intersections(c, x):
    pool = ExprPool()
    cc, xx = parse_regex(c, pool), parse_regex(x, pool)
    assert pool.kind[pool.intersect([pool.repeat(cc, 1), pool.repeat(xx, 1, 3)])] == K_AND


@pytest.mark.parametrize(("c", "m", "n", "x", "a", "b"), [
    ("[ab]|\\\\b", 1, INF, "[a-c]|\\\\[bn]", 0, 3),
    ("[ab]", 0, INF, "[abc]", 2, 4),
    ("a", 2, 5, "[ab]|\\\\n", 3, INF),
    ("ab", 0, INF, "a|ab", 1, 2),  # no prefix code: left as an intersection, still exact
])
def test_languages_are_unchanged(c, m, n, x, a, b):
    """Every string over a small alphabet up to 7 bytes: the intersection agrees with ``re``."""
    pool = ExprPool()
    e = pool.intersect([pool.repeat(parse_regex(c, pool), m, n), pool.repeat(parse_regex(x, pool), a, b)])
    left = re.compile(f"(?:{c}){{{m},{'' if n == INF else n}}}")
    right = re.compile(f"(?:{x}){{{a},{'' if b == INF else b}}}")
    for size in range(8):
        for chars in itertools.product("abn\\", repeat=size):
            text = "".join(chars)
            expected = bool(left.fullmatch(text)) and bool(right.fullmatch(text))
            assert pool.matches(e, text.encode()) == expected, text
