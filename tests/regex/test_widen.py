"""Counted repeats: widening (``ExprPool.widened``: on strings of at most ``span`` bytes the
widened expression accepts and keeps alive exactly what the original does, with fewer
derivatives) and the emptiness shortcut for an infinite language minus finite ones."""

from __future__ import annotations

import itertools

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from leapgram.errors import BudgetExceededError
from leapgram.regex import EMPTY, ExprPool, parse_regex
from leapgram.regex.expr import INF

ALPHABET = b"abc"


def build(pool: ExprPool, tree) -> int:
    kind = tree[0]
    if kind == "byte":
        return pool.byteset(tree[1])
    if kind == "cat":
        return pool.concat(build(pool, tree[1]), build(pool, tree[2]))
    if kind == "or":
        return pool.alt([build(pool, tree[1]), build(pool, tree[2])])
    _, inner, low, extra = tree
    return pool.repeat(build(pool, inner), low, INF if extra is None else low + extra)


byte_classes = st.sets(st.sampled_from(ALPHABET), min_size=1).map(lambda s: ("byte", sum(1 << b for b in s)))
trees = st.recursive(
    byte_classes,
    lambda inner: st.one_of(
        st.tuples(st.just("cat"), inner, inner),
        st.tuples(st.just("or"), inner, inner),
        st.tuples(st.just("rep"), inner, st.integers(0, 12), st.one_of(st.none(), st.integers(0, 12))),
    ),
    max_leaves=6,
)


def alive(pool: ExprPool, e: int, data: bytes) -> tuple[bool, bool]:
    """(a string starting with ``data`` matches, ``data`` itself matches)."""
    d = pool.derivative_bytes(e, data)
    return not pool.is_empty(d), bool(pool.nullable[d])


def assert_agrees(pool: ExprPool, e: int, span: int) -> None:
    """``e`` widened allows what ``e`` allows on every string over ``ALPHABET`` of at most ``span`` bytes."""
    wide = pool.widened(e, span)
    for length in range(span + 1):
        for chars in itertools.product(ALPHABET, repeat=length):
            data = bytes(chars)
            assert alive(pool, wide, data) == alive(pool, e, data), (pool.describe(e), pool.describe(wide), data)


@settings(max_examples=300, deadline=None)
@given(tree=trees, span=st.integers(1, 5))
def test_widened_agrees_on_short_strings(tree, span):
    pool = ExprPool()
    e = build(pool, tree)
    assert_agrees(pool, e, span)


def test_widened_forgets_large_counts():
    pool = ExprPool()
    e = parse_regex('"[a-z]{4,5000}"', pool)
    wide = pool.widened(e, 16)
    assert wide != e
    # after 100 characters the original has a new expression, the widened one the same
    d100 = pool.derivative_bytes(e, b'"' + b"a" * 100)
    assert pool.widened(d100, 16) == pool.widened(pool.derivative_bytes(e, b'"' + b"a" * 50), 16)
    assert pool.describe(pool.widened(d100, 16)) == pool.describe(pool.derivative_bytes(wide, b'"' + b"a" * 17))


def test_widened_leaves_small_counts_and_complements():
    pool = ExprPool()
    small = parse_regex("[a-z]{2,5}x", pool)
    assert pool.widened(small, 16) == small
    boolean = pool.intersect([parse_regex("[a-z]{0,1000}", pool), pool.complement(parse_regex("abc", pool))])
    assert pool.widened(boolean, 16) == boolean
    assert pool.widened(EMPTY, 16) == EMPTY


@settings(max_examples=300, deadline=None)
@given(positive=trees, negatives=st.lists(trees, min_size=1, max_size=2))
@example(positive=("rep", ("cat", ("byte", 1 << 97), ("rep", ("byte", 0b11 << 97), 11, None)), 4, None),
         negatives=[("rep", ("byte", 0b11 << 97), 0, None)])  # undecided within the budget
def test_emptiness_shortcut_agrees_with_the_search(positive, negatives):
    """``P & ~Q...`` with ``P`` infinite and the ``Q`` finite is known non-empty without a search;
    the search (the shortcut turned off) must agree on every such expression that both decide
    within their budget. (``(a[ab]{11,}){4,} & ~[ab]*`` is empty, but its derivatives track
    which of the ``a`` seen so far start a repeat: more states than the budget, with or without
    the shortcut, which does not apply since ``[ab]*`` is infinite.)"""
    def expression(pool):
        return pool.intersect([build(pool, positive)] + [pool.complement(build(pool, q)) for q in negatives])

    fast, slow = ExprPool(), ExprPool()
    slow._is_infinite_minus_finite = lambda e: False
    e_fast, e_slow = expression(fast), expression(slow)
    for data in (b"", b"a", b"ab", b"ca"):
        try:
            answer = fast.is_empty(fast.derivative_bytes(e_fast, data))
            searched = slow.is_empty(slow.derivative_bytes(e_slow, data))
        except BudgetExceededError:
            assume(False)
        assert answer == searched


def test_widened_takes_each_shared_subexpression_once():
    # 40 levels of (b X | X c): 2^40 paths down to a{100}, 81 distinct subexpressions
    pool = ExprPool()
    e = parse_regex("a{100}", pool)
    b, c = pool.byteset(1 << ord("b")), pool.byteset(1 << ord("c"))
    for _ in range(40):
        e = pool.alt([pool.concat(b, e), pool.concat(e, c)])
    wide = pool.widened(e, 16)
    assert wide != e
    data = b"b" * 3 + b"a" * 12
    assert alive(pool, wide, data) == alive(pool, e, data) == (True, False)


chars = st.sampled_from([("byte", 1 << ord("a")), ("byte", 1 << ord("b")), ("byte", 0b11 << ord("a")), ("ab|c", None),
                         ("a|ab", None)])  # the last is no prefix code


def build_char(pool: ExprPool, char) -> int:
    if char[0] == "byte":
        return pool.byteset(char[1])
    words = [b"ab", b"c"] if char[0] == "ab|c" else [b"a", b"ab"]
    return pool.alt([pool.literal(w) for w in words])


@settings(max_examples=400, deadline=None)
@given(tree=trees, char=chars, low=st.integers(0, 9), extra=st.one_of(st.none(), st.integers(0, 12)),
       span=st.integers(1, 4), loop=st.booleans(), tail=st.booleans())
def test_widened_counted_string_and_pattern_agree_on_short_strings(tree, char, low, extra, span, loop, tail):
    """``A & X{a,b}`` (a pattern and a length bound; ``_widen_counted_and``), widened or left as
    it is, allows what the original allows on every string of at most ``span`` bytes."""
    pool = ExprPool()
    x = build_char(pool, char)
    partner = build(pool, tree)
    if loop:  # most patterns that qualify end in a loop over characters (unanchored, or `\S+$`)
        partner = pool.concat(partner, pool.star(pool.alt([x, pool.byteset(1 << ord("a"))])))
    e = pool.intersect([partner, pool.repeat(x, low, INF if extra is None else low + extra)])
    if tail:
        e = pool.concat(e, pool.byteset(1 << ord("c")))
    assert_agrees(pool, e, span)


def test_widened_counted_string_and_pattern():
    """An unanchored email pattern under ``maxLength: 254`` is widened to its pattern and a
    minimum (no new expression per character); an anchored one too where its matches are all
    as long as the minimum; with the bound within reach of the pattern's completions, or a
    minimum above the anchored pattern's shortest match, it is not."""
    pool = ExprPool()
    char = parse_regex("[a-z@.]", pool)
    pattern = parse_regex("[a-z]+@[a-z]+\\.[a-z]+[a-z@.]*", pool)
    e = pool.intersect([pattern, pool.repeat(char, 5, 254)])
    wide = pool.widened(e, 16)
    assert wide == pattern  # its matches have 5 characters or more: the count is moot within 16 bytes
    six = pool.intersect([pattern, pool.repeat(char, 6, 254)])
    assert pool.widened(six, 16) == pool.intersect([pattern, pool.repeat(char, 6, INF)])  # a loop reaches 6
    later = pool.derivative_bytes(e, b"ab@cd.ef")
    assert pool.widened(later, 16) == pool.derivative_bytes(wide, b"ab@cd.ef")
    near = pool.intersect([pattern, pool.repeat(char, 5, 20)])
    assert pool.widened(near, 16) == near  # 16 + the shortest completion (5) > 20
    anchored = parse_regex("[a-z]+@[a-z]+\\.(com|org)", pool)
    assert pool.widened(pool.intersect([anchored, pool.repeat(char, 7, 254)]), 16) == anchored  # 7 or more
    fixed = pool.intersect([anchored, pool.repeat(char, 8, 254)])
    assert pool.widened(fixed, 16) == fixed  # a match of 7 characters, and no loop to bring it to 8
    assert pool.widened(pool.intersect([anchored, pool.repeat(char, 0, 254)]), 16) == anchored  # & X*: A
