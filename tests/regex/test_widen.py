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


@settings(max_examples=300, deadline=None)
@given(tree=trees, span=st.integers(1, 5))
def test_widened_agrees_on_short_strings(tree, span):
    pool = ExprPool()
    e = build(pool, tree)
    wide = pool.widened(e, span)
    for length in range(span + 1):
        for chars in itertools.product(ALPHABET, repeat=length):
            data = bytes(chars)
            assert alive(pool, wide, data) == alive(pool, e, data), (pool.describe(e), pool.describe(wide), data)


def test_widened_forgets_large_counts():
    pool = ExprPool()
    e = parse_regex('"[a-z]{4,5000}"', pool)
    wide = pool.widened(e, 16)
    assert wide != e
    # after 100 characters the original has a new expression, the widened one the same
    d100 = pool.derivative_bytes(e, b'"' + b"a" * 100)
    assert pool.widened(d100, 16) == pool.widened(pool.derivative_bytes(e, b'"' + b"a" * 50), 16)
    assert pool.describe(pool.widened(d100, 16)) == pool.describe(pool.derivative_bytes(wide, b'"' + b"a" * 17))


def test_widened_leaves_small_counts_and_booleans():
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
