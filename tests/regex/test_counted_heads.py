"""Alternations keep one of the members ``X{a,b} R* T`` that share ``X`` and ``R* T`` when
``X ⊆ R*``: the one with the least ``a`` (``ExprPool._absorb_counted_heads``). An unanchored
``C{n}`` pattern (``S* C{n} S*``) then derives to a bounded number of members."""

from __future__ import annotations

import itertools
import re

import pytest

from leapgram.regex import ExprPool, parse_regex
from leapgram.regex.expr import K_OR


def members(pool: ExprPool, e: int) -> int:
    return len(pool.args[e]) if pool.kind[e] == K_OR else 1


def test_the_least_count_is_kept():
    pool = ExprPool()
    c = parse_regex("[a-c]", pool)
    rest = pool.concat(pool.repeat(parse_regex("[a-z]", pool), 0), pool.literal(b'"'))
    heads = [pool.concat(pool.repeat(c, n, n), rest) for n in (7, 3, 5)]
    assert pool.alt(heads) == heads[1]
    other = pool.concat(pool.repeat(parse_regex("[a-c!]", pool), 4, 4), rest)  # "!" is not in [a-z]*
    assert members(pool, pool.alt([*heads, other])) == 2
    no_star = [pool.concat(pool.repeat(c, n, n), pool.literal(b'x"')) for n in (2, 3)]
    assert members(pool, pool.alt(no_star)) == 2  # a count is exact without R* after it


def test_an_unanchored_count_stays_small():
    pool = ExprPool()
    e = pool.concat(parse_regex("[a-z0-9 ]*[a-z0-9]{40}[a-z0-9 ]*", pool), pool.literal(b'"'))
    sizes = []
    for byte in b"a1" * 30:
        e = pool.derivative(e, byte)
        sizes.append(members(pool, e))
    assert max(sizes) <= 3


@pytest.mark.parametrize("pattern", ["[ab]*[abc]{3}[ab]*", "[a-c]*(ab){2}[a-c]*", "x?[ab]{2,3}[abc]*y?"])
def test_languages_are_unchanged(pattern):
    """Every string over a small alphabet up to 7 bytes: the derivatives agree with ``re``."""
    pool = ExprPool()
    e = parse_regex(pattern, pool)
    for size in range(8):
        for chars in itertools.product("abcxy", repeat=size):
            text = "".join(chars)
            assert pool.matches(e, text.encode()) == bool(re.fullmatch(pattern, text)), text


def test_a_starred_superset_leaves_an_intersection():
    """``R* T & h1 … hk T`` with every ``hi ⊆ R*`` is ``h1 … hk T`` (``ExprPool._drop_starred_supersets``):
    a string under a ``pattern`` is then no intersection, unless the pattern allows other characters."""
    pool = ExprPool()
    string = pool.concat(parse_regex("[ -~]*", pool), pool.literal(b'"'))
    key = pool.concat(parse_regex("[a-z0-9_-]{1,255}", pool), pool.literal(b'"'))
    assert pool.intersect([string, key]) == key
    unanchored = pool.concat(parse_regex("[ -~]*[a-z]{3}[ -~]*", pool), pool.literal(b'"'))
    assert pool.intersect([string, unanchored]) == unanchored
    wider = pool.concat(parse_regex("[a-z\u00e9]{1,9}", pool), pool.literal(b'"'))  # é is not in [ -~]
    assert pool.has_bool[pool.intersect([string, wider])]
    other_tail = pool.concat(parse_regex("[a-z]{1,9}", pool), pool.literal(b"'"))
    assert pool.has_bool[pool.intersect([string, other_tail])]



def test_a_short_literal_inside_a_star_is_decided_by_its_bytes():
    """``h ⊆ R*`` for a literal ``h`` that is no one-byte member of ``R`` (the escape ``\\/``
    of a pattern's ``/``, an element of a JSON string's ``\\["/\\bfnrtu]``):
    ``_literal_within_star`` runs its bytes through ``R*``. A path key under a JSON string is
    then no intersection (o65507)."""
    pool = ExprPool()
    string = pool.concat(parse_regex(r'([ !#-\[\]-~]|\\["/\\bfnrt])*', pool), pool.literal(b'"'))
    path = pool.concat(parse_regex(r"(\\/|[/.a-z-]){0,254}", pool), pool.literal(b'"'))
    assert pool.intersect([string, path]) == path
    quote = pool.concat(parse_regex(r'(\\q|[a-z]){0,9}', pool), pool.literal(b'"'))  # \q is no escape
    assert pool.has_bool[pool.intersect([string, quote])]
    long = pool.concat(parse_regex(r"(\\/\\/\\/\\/\\/|[a-z]){0,9}", pool), pool.literal(b'"'))  # 10 bytes
    assert pool.has_bool[pool.intersect([string, long])]  # longer than LITERAL_WITHIN: not decided


@pytest.mark.parametrize("left,right", [("[ab]*c", "a{2,3}c"), ("[ab]*c", "[ab]*a[ab]{1,2}c"), ("(ab|b)*c", "(ab){1,2}c"),
                                        ("[ab]*c", "[abc]{2}c"), ("a*c", "(aa)*c")])
def test_intersections_keep_their_languages(left, right):
    pool = ExprPool()
    e = pool.intersect([parse_regex(left, pool), parse_regex(right, pool)])
    for size in range(8):
        for chars in itertools.product("abc", repeat=size):
            text = "".join(chars)
            expected = bool(re.fullmatch(left, text)) and bool(re.fullmatch(right, text))
            assert pool.matches(e, text.encode()) == expected, text


def test_witness_search_is_bounded_in_depth():
    # an intersection behind 3,000 concatenated bytes: the witness gives up, the search decides
    pool = ExprPool()
    e = pool.intersect([parse_regex("[a-z]{1,50}", pool), parse_regex("a[a-z]*", pool)])
    for i in range(3000):
        e = pool.concat(pool.byteset(1 << (97 + i % 26)), e)
    assert pool._witness(e, 10**6) is None
    assert not pool.is_empty(e)
