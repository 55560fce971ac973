"""The expression algebra and the lazy DFA: hash-consing, simplification, derivatives, byte classes,
intersection and complement, emptiness, budgets."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leapgram.errors import BudgetExceededError
from leapgram.limits import Limits
from leapgram.regex import DEAD, EMPTY, EPSILON, UNKNOWN, ExprPool, LazyDfa, parse_regex
from leapgram.regex.expr import ALL_BYTES, INF, K_AND, K_BYTES, K_CONCAT, K_NOT, K_OR, K_REPEAT, bits_of
from tests.helpers.regex_ast import MAX_LENGTH, mutations, patterns

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def b(ch: str) -> int:
    return ord(ch)


@pytest.fixture
def pool() -> ExprPool:
    return ExprPool()


def lit(pool: ExprPool, text: str) -> int:
    return pool.literal(text.encode())


def byte(pool: ExprPool, chars: str) -> int:
    return pool.byteset(sum(1 << ord(c) for c in chars))


# ----- hash-consing and simplification ------------------------------------------------------


def test_same_structure_same_id(pool):
    assert parse_regex("(ab|c)*d", pool) == parse_regex("(?:ab|c)*d", pool)
    assert parse_regex("[a-c]", pool) == parse_regex("a|b|c", pool) == parse_regex("[cba]", pool)
    assert lit(pool, "ab") == pool.concat(byte(pool, "a"), byte(pool, "b"))
    assert parse_regex("x", pool) != parse_regex("y", pool)
    before = len(pool)
    parse_regex("(ab|c)*d", pool)
    assert len(pool) == before


def test_alternation_is_sorted_and_deduplicated(pool):
    a, bc, d = lit(pool, "a"), lit(pool, "bc"), lit(pool, "dd")
    assert pool.alt([a, bc, d]) == pool.alt([d, a, bc]) == pool.alt([bc, pool.alt([d, a]), a])
    assert pool.alt([bc, bc]) == bc
    assert pool.alt([byte(pool, "a"), byte(pool, "b")]) == byte(pool, "ab")
    assert pool.alt([]) == EMPTY


@pytest.mark.parametrize(("pattern", "finite"), [
    ("abc|de", True), ("a{2,7}b?", True), ("(ab|cd){0,300}", True), ("", True), ("[^x]", True),
    ("a*", False), ("(ab|c)+d", False), ("x(a{2,})?", False), ("[a-z]{3}", True),
])
def test_is_finite_agrees_with_the_language(pool, pattern, finite):
    e = parse_regex(pattern, pool)
    assert pool.is_finite(e) is finite
    names = pool.alt([lit(pool, f'"{w}"') for w in ("alpha", "alps", "beta")])
    for data in (b'"', b'"al', b'"alp', b'"alps"'):  # derivatives of a union of keys stay finite
        assert pool.is_finite(pool.derivative_bytes(names, data))
    assert not pool.is_finite(pool.complement(names))
    assert not pool.is_finite(pool.intersect([names, parse_regex('"a.*', pool)]))  # not known: has &


def test_identity_and_zero_laws(pool):
    r = parse_regex("a(b|c)*", pool)
    assert pool.alt([r, EMPTY]) == r
    assert pool.concat(EMPTY, r) == EMPTY and pool.concat(r, EMPTY) == EMPTY
    assert pool.concat(EPSILON, r) == r and pool.concat(r, EPSILON) == r
    assert pool.concat_all([]) == EPSILON
    assert pool.intersect([r, EMPTY]) == EMPTY
    assert pool.intersect([r, pool.universal()]) == r
    assert pool.intersect([]) == pool.universal()
    assert pool.alt([r, pool.universal()]) == pool.universal()
    assert pool.intersect([r, r]) == r


def test_concatenation_is_associative(pool):
    x, y, z = parse_regex("a|b", pool), parse_regex("c*", pool), parse_regex("d", pool)
    assert pool.concat(pool.concat(x, y), z) == pool.concat(x, pool.concat(y, z))


def test_epsilon_in_alternations_and_intersections(pool):
    a_star, a = parse_regex("a*", pool), lit(pool, "a")
    assert pool.alt([EPSILON, a_star]) == a_star  # a* already matches ε
    assert pool.alt([EPSILON, a]) != a
    assert pool.intersect([EPSILON, a_star]) == EPSILON
    assert pool.intersect([EPSILON, a]) == EMPTY


def test_first_bytes_of_complement_and_intersection(pool):
    """``~abc`` can start with any byte; ``[ab]x & [bc]y`` only with ``b``."""
    assert pool.first_bytes(pool.complement(lit(pool, "abc"))) == ALL_BYTES
    both = pool.intersect([pool.concat(byte(pool, "ab"), pool.star(byte(pool, "x"))),
                           pool.concat(byte(pool, "bc"), pool.star(byte(pool, "xy")))])
    assert pool.first_bytes(both) == 1 << b("b")


def test_byte_classes_of_a_big_alternation_are_cheap(pool):
    """An enum of 3,000 quoted words: its classes and its derivatives skip members that cannot
    start with the byte, so the first derivative touches all of them once and the next ones few."""
    words = [f'"w{i:04d}"' for i in range(3000)]
    enum = pool.alt([lit(pool, w) for w in words])
    start = time.perf_counter()
    assert len(pool.byte_classes(enum)) == 2
    after_quote = pool.derivative(enum, b('"'))
    assert pool.derivative_bytes(after_quote, b"w0042") == lit(pool, '"')
    assert time.perf_counter() - start < 2.0
    assert pool.byte_classes(after_quote) == naive_byte_classes(pool, after_quote)


def test_byte_classes_meet_in_intersections(pool):
    assert pool.intersect([byte(pool, "abc"), byte(pool, "bcd")]) == byte(pool, "bc")
    assert pool.intersect([byte(pool, "a"), byte(pool, "b")]) == EMPTY
    assert pool.byteset(0) == EMPTY


def test_complement_laws(pool):
    r = parse_regex("ab*", pool)
    assert pool.complement(pool.complement(r)) == r
    assert pool.complement(EMPTY) == pool.universal()
    assert pool.complement(pool.universal()) == EMPTY
    assert pool.nullable[pool.complement(r)] and not pool.nullable[pool.complement(EPSILON)]


def test_an_expression_and_its_complement_intersect_to_nothing(pool):
    for pattern in ("[a-z]*\"", "ab|cd", "x(y|z)*"):  # a concatenation, an alternation (_intersect_minus), ...
        r = parse_regex(pattern, pool)
        assert pool.intersect([r, pool.complement(r)]) == EMPTY
        assert pool.intersect([pool.complement(r), r]) == EMPTY
        other = parse_regex("[a-z]+", pool)
        assert pool.intersect([other, r, pool.complement(r)]) == EMPTY  # ... and the general path
    star = parse_regex("a*", pool)  # a repeat: the general path
    assert pool.intersect([star, pool.complement(star)]) == EMPTY


def test_repeat_laws(pool):
    a = lit(pool, "a")
    star = pool.star(a)
    assert pool.star(star) == star
    assert pool.repeat(star, 2, 5) == star
    assert pool.repeat(a, 1, 1) == a
    assert pool.repeat(a, 0, 0) == EPSILON and pool.repeat(a, 3, 0 + 3) != a
    assert pool.repeat(EPSILON, 2, INF) == EPSILON
    assert pool.repeat(EMPTY, 0, 3) == EPSILON and pool.repeat(EMPTY, 1, 3) == EMPTY
    a_opt = pool.repeat(a, 0, 1)
    assert pool.repeat(a_opt, 2, 3) == pool.repeat(a_opt, 0, 3)  # (a?){2,3} = (a?){0,3}
    with pytest.raises(ValueError):
        pool.repeat(a, 3, 2)


NULLABLE = ["", "a*", "a?", "(a|)", "(ab)*", "a*b*", "(a|b*)c?", "a{0,3}", "(?:)", "()+", "(a*)+", "(a?){3}"]
NOT_NULLABLE = ["a", "a+", "ab*", "a{1,3}", "[^a]*b", ".", "(a|b)c*", "(a*b)*c"]


@pytest.mark.parametrize("pattern", NULLABLE + NOT_NULLABLE)
def test_nullability(pool, pattern):
    e = parse_regex(pattern, pool)
    assert pool.nullable[e] == (pattern in NULLABLE)
    assert pool.nullable[pool.complement(e)] == (pattern not in NULLABLE)


def test_nullability_of_intersections(pool):
    assert pool.nullable[pool.intersect([parse_regex("a*", pool), parse_regex("b*", pool)])]
    assert not pool.nullable[pool.intersect([parse_regex("a*", pool), parse_regex("b+", pool)])]


# ----- derivatives by hand ------------------------------------------------------------------


def test_derivatives_by_hand(pool):
    assert pool.derivative(lit(pool, "abc"), b("a")) == lit(pool, "bc")
    assert pool.derivative(lit(pool, "abc"), b("b")) == EMPTY
    a_star = parse_regex("a*", pool)
    assert pool.derivative(a_star, b("a")) == a_star
    assert pool.derivative(parse_regex("a*b", pool), b("b")) == EPSILON
    assert pool.derivative(parse_regex("a*b", pool), b("a")) == parse_regex("a*b", pool)
    assert pool.derivative(parse_regex("ab|ac", pool), b("a")) == byte(pool, "bc")
    assert pool.derivative(parse_regex("a{2,3}", pool), b("a")) == parse_regex("a{1,2}", pool)
    assert pool.derivative(parse_regex("(ab)+", pool), b("a")) == parse_regex("b(ab)*", pool)
    assert pool.derivative(EPSILON, b("a")) == EMPTY and pool.derivative(EMPTY, b("a")) == EMPTY
    assert pool.derivative(pool.universal(), 0xFF) == pool.universal()
    not_ab = pool.complement(lit(pool, "ab"))
    assert pool.derivative(not_ab, b("a")) == pool.complement(byte(pool, "b"))
    assert pool.derivative(not_ab, b("x")) == pool.universal()
    both = pool.intersect([parse_regex("[a-c]x", pool), parse_regex("a[x-z]", pool)])
    assert pool.derivative(both, b("a")) == byte(pool, "x")
    assert pool.derivative(both, b("b")) == EMPTY


def test_derivative_bytes_and_matches(pool):
    e = parse_regex("(é|☃)+x?", pool)
    assert pool.derivative_bytes(e, "é".encode()) == pool.derivative(pool.derivative(e, 0xC3), 0xA9)
    assert pool.matches(e, "é☃x".encode()) and not pool.matches(e, b"x")
    assert pool.derivative_bytes(e, b"zzz") == EMPTY


def test_describe_is_readable(pool):
    assert pool.describe(EMPTY) == "∅" and pool.describe(EPSILON) == "ε"
    text = pool.describe(parse_regex("a(b|c)*", pool))
    assert "a" in text and "{0,}" in text


# ----- properties over random regexes -------------------------------------------------------

plain_patterns = patterns(flags=False)


@st.composite
def two_regexes_and_strings(draw):
    first, second = draw(plain_patterns), draw(plain_patterns)
    rng = random.Random(draw(st.integers(0, 2**32)))
    alphabet = sorted(first.chars() | second.chars() | set("ab\né😀"))
    samples = (first.sample(rng), second.sample(rng), first.sample(rng))
    texts = [t for t in samples if t is not None and len(t) <= MAX_LENGTH]
    texts += [m for t in texts for m in mutations(t, rng, alphabet)]
    texts += draw(st.lists(st.text(st.sampled_from(alphabet), max_size=6), max_size=4))
    pool = ExprPool()
    return pool, parse_regex(first.text, pool), parse_regex(second.text, pool), [t.encode() for t in texts]


@FAST
@given(two_regexes_and_strings())
def test_intersection_complement_union_semantics(case):
    pool, x, y, texts = case
    both, either, not_x = pool.intersect([x, y]), pool.alt([x, y]), pool.complement(x)
    difference = pool.intersect([x, pool.complement(y)])
    for data in texts:
        in_x, in_y = pool.matches(x, data), pool.matches(y, data)
        assert pool.matches(both, data) == (in_x and in_y)
        assert pool.matches(either, data) == (in_x or in_y)
        assert pool.matches(not_x, data) == (not in_x)
        assert pool.matches(difference, data) == (in_x and not in_y)


@FAST
@given(two_regexes_and_strings())
def test_emptiness_identities(case):
    pool, x, y, texts = case
    assert pool.is_empty(pool.intersect([x, pool.complement(x)]))
    assert pool.is_empty(pool.complement(pool.alt([x, pool.complement(x)])))
    if any(pool.matches(x, data) for data in texts):
        assert not pool.is_empty(x)
    both = pool.intersect([x, y])
    if any(pool.matches(both, data) for data in texts):
        assert not pool.is_empty(both)
    if pool.is_empty(both):
        assert not any(pool.matches(x, data) and pool.matches(y, data) for data in texts)


def naive_byte_classes(pool: ExprPool, e: int) -> tuple[int, ...]:
    """The partition generated by the byte sets that can come first in ``e``, from one walk over
    the whole expression (what ``byte_classes`` computed before it was built from cached parts)."""
    masks, stack, seen = set(), [e], set()
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        kind, args = pool.kind[x], pool.args[x]
        if kind == K_BYTES:
            masks.add(args[0])
        elif kind == K_CONCAT:
            stack.extend(args if pool.nullable[args[0]] else args[:1])
        elif kind in (K_OR, K_AND):
            stack.extend(args)
        elif kind in (K_NOT, K_REPEAT):
            stack.append(args[0])
    parts = [ALL_BYTES]
    for mask in masks:
        parts = [p for part in parts for p in (part & mask, part & ~mask) if p]
    return tuple(sorted(parts))


def check_byte_classes(pool: ExprPool, e: int) -> None:
    parts = pool.byte_classes(e)
    assert parts == naive_byte_classes(pool, e)
    union = 0
    for part in parts:
        assert part and union & part == 0
        union |= part
        members = bits_of(part)
        first = pool.derivative(e, members[0])
        assert all(pool.derivative(e, m) == first for m in members)
    assert union == ALL_BYTES
    starts = pool.first_bytes(e)
    assert all(pool.is_empty(pool.derivative(e, m)) for m in bits_of(ALL_BYTES & ~starts))


@FAST
@given(two_regexes_and_strings())
def test_byte_classes_partition_and_agree(case):
    pool, x, y, texts = case
    for e in (x, pool.intersect([x, y]), pool.complement(y)):
        check_byte_classes(pool, e)
        for data in texts[:3]:
            for i in range(len(data)):
                check_byte_classes(pool, pool.derivative_bytes(e, data[:i]))


# ----- emptiness ----------------------------------------------------------------------------


def test_is_empty(pool):
    assert pool.is_empty(EMPTY) and not pool.is_empty(EPSILON)
    assert pool.is_empty(pool.intersect([parse_regex("a*b", pool), parse_regex("a*c", pool)]))
    assert not pool.is_empty(pool.intersect([parse_regex("a*b", pool), parse_regex(".*b", pool)]))
    assert pool.is_empty(pool.intersect([parse_regex("(aa)*", pool), parse_regex("a(aa)*", pool)]))
    assert not pool.is_empty(pool.intersect([parse_regex("(aa)*a", pool), parse_regex("(aaa)*", pool)]))
    assert not pool.is_empty(pool.complement(parse_regex(".*", pool)))  # invalid UTF-8 remains
    assert pool.is_empty(pool.complement(pool.universal()))


def naive_is_empty(pool: ExprPool, e: int) -> bool:
    """Breadth first over the derivatives until a nullable one, remembering nothing between
    calls: the twin of ``ExprPool.is_empty`` (its search order, shared memo of edges and answers
    must not change an answer)."""
    seen, frontier = {e}, [e]
    while frontier:
        x = frontier.pop(0)
        if pool.nullable[x]:
            return False
        for part in pool.byte_classes(x):
            d = pool.derivative(x, bits_of(part)[0])
            if d != EMPTY and d not in seen:
                seen.add(d)
                frontier.append(d)
    return True


def boolean_mixes(pool: ExprPool, x: int, y: int) -> list[int]:
    not_x, not_y = pool.complement(x), pool.complement(y)
    return [pool.intersect([x, y]), pool.intersect([x, not_y]), pool.intersect([not_x, y]),
            pool.complement(pool.alt([pool.intersect([x, not_y]), y])), pool.intersect([not_x, not_y])]


@FAST
@given(two_regexes_and_strings())
def test_is_empty_agrees_with_naive_search(case):
    """Along the texts' derivatives (as the lexer asks), one after another in one pool and in a
    copy: the memo left by earlier searches never changes a later answer."""
    pool, x, y, texts = case
    asked = []
    for e in boolean_mixes(pool, x, y):
        for data in [b"", *texts[:4]]:
            for i in range(len(data) + 1):
                asked.append(pool.derivative_bytes(e, data[:i]))
    twin = pool.copy()
    assert twin.are_all_empty(asked) == all(naive_is_empty(twin, e) for e in asked)
    for p in (pool, twin):
        for e in asked:
            assert p.is_empty(e) == naive_is_empty(p, e)
            assert not p.is_known_empty(e) or naive_is_empty(p, e)


@FAST
@given(two_regexes_and_strings())
def test_estimated_length_is_exact_without_booleans(case):
    """Without intersection or complement the estimate is the shortest string's length: no text
    of ``x`` is shorter, and some derivative path reaches a match in exactly that many bytes."""
    pool, x, _, texts = case
    for e in (x, *(pool.derivative_bytes(x, t[:1]) for t in texts)):
        if e == EMPTY:
            continue
        length = pool._estimated_length(e)
        assert all(len(t) >= length for t in texts if pool.matches(e, t))
        for _ in range(length):
            e = next(d for d in (pool.derivative(e, bits_of(p)[0]) for p in pool.byte_classes(e))
                     if d != EMPTY and pool._estimated_length(d) == length - 1)
            length -= 1
        assert pool.nullable[e]


def test_is_empty_finds_a_long_string_of_many_parts(pool):
    """A minimum length and three substrings: best first goes to a string with all of them."""
    e = pool.intersect([parse_regex(p, pool) for p in ("[a-z0-9]{12,40}", ".*ab1.*", ".*bc1.*", ".*ca1.*")])
    steps = pool.emptiness_steps
    assert not pool.is_empty(e)
    assert pool.emptiness_steps - steps <= 40


# ----- budgets ------------------------------------------------------------------------------


def test_max_regex_nodes():
    pool = ExprPool(Limits(max_regex_nodes=12))
    with pytest.raises(BudgetExceededError) as info:
        parse_regex("abcdefghijklmnop", pool)
    assert info.value.limit == "max_regex_nodes" and "max_regex_nodes=12" in str(info.value)


def test_max_emptiness_steps():
    pool = ExprPool(Limits(max_emptiness_steps=5))
    e = pool.intersect([parse_regex("a{50}b", pool), parse_regex("a*c", pool)])
    with pytest.raises(BudgetExceededError) as info:
        pool.is_empty(e)
    assert info.value.limit == "max_emptiness_steps"
    with pytest.raises(BudgetExceededError):
        LazyDfa(pool, e)


def test_emptiness_budget_is_shared_by_the_searches_of_a_block(pool):
    many = [pool.intersect([parse_regex(f"{c}{{25}}b", pool), parse_regex(f"{c}*c", pool)]) for c in "defghijk"]
    with pytest.raises(BudgetExceededError) as info, pool.emptiness_budget("max_row_emptiness_steps", 100):
        for e in many:
            pool.is_empty(e)
    assert info.value.limit == "max_row_emptiness_steps" and "one lexer row" in str(info.value)
    with pool.emptiness_budget("max_row_emptiness_steps", 10_000):
        assert all(pool.is_empty(e) for e in many)  # a budget per block: the next one starts afresh
    fresh = ExprPool(Limits(max_emptiness_steps=5))
    with pytest.raises(BudgetExceededError) as info, fresh.emptiness_budget("max_row_emptiness_steps", 10_000):
        fresh.is_empty(fresh.intersect([parse_regex("a{50}b", fresh), parse_regex("a*c", fresh)]))
    assert info.value.limit == "max_emptiness_steps"  # one search stays within its own budget


def test_max_dfa_states():
    pool = ExprPool(Limits(max_dfa_states=8))
    dfa = LazyDfa(pool, parse_regex("[a-z]{20}", pool))
    with pytest.raises(BudgetExceededError) as info:
        dfa.run(dfa.initial, b"abcdefghij")
    assert info.value.limit == "max_dfa_states"
    pool = ExprPool()
    dfa = LazyDfa(pool, parse_regex("[a-z]{20}", pool), Limits(max_dfa_states=8))
    with pytest.raises(BudgetExceededError):
        dfa.run(dfa.initial, b"abcdefghij")


def test_exponential_dfa_stops_at_the_budget_quickly():
    """``.*a.{12}`` needs 2^13 states: the budget ends it, no hang."""
    pool = ExprPool(Limits(max_dfa_states=300))
    dfa = LazyDfa(pool, parse_regex(".*a.{12}", pool))
    start = time.perf_counter()
    with pytest.raises(BudgetExceededError):
        dfa.run(dfa.initial, random.Random(1).choices(b"ab", k=2_000))
    assert time.perf_counter() - start < 20


def test_complement_blowup_stops_at_the_budget():
    pool = ExprPool(Limits(max_dfa_states=200, max_emptiness_steps=50))
    e = pool.complement(parse_regex("(.*a.{10})|(.*b.{9})", pool))
    with pytest.raises(BudgetExceededError):
        dfa = LazyDfa(pool, e)
        dfa.run(dfa.initial, random.Random(2).choices(b"ab", k=2_000))


# ----- lazy DFA -----------------------------------------------------------------------------


def explore(dfa: LazyDfa, limit: int = 200) -> list[int]:
    seen, frontier = {dfa.initial}, [dfa.initial]
    while frontier and len(seen) < limit:
        state = frontier.pop()
        dfa.fill_row(state)
        for target in set(dfa.trans[state].tolist()) - seen:
            seen.add(target)
            frontier.append(target)
    return sorted(seen)


def check_rows_are_derivatives(dfa: LazyDfa) -> None:
    pool = dfa.pool
    for state in explore(dfa):
        if dfa.trans[state, 0] == UNKNOWN:
            continue
        expr = dfa.expr_of(state)
        assert dfa.is_accepting(state) == pool.nullable[expr]
        for byte_value in range(256):
            target = int(dfa.trans[state, byte_value])
            d = pool.derivative(expr, byte_value)
            if target == DEAD:
                assert pool.is_empty(d)
            else:
                assert dfa.expr_of(target) == d


@pytest.mark.parametrize("ready", [64, 1, 3])
def test_dfa_growth_writes_each_state_row_once_and_copies_only_states_rows(monkeypatch, ready):
    """A state's row is marked unknown when it is numbered (``LazyDfa._ready_rows``); growing
    copies the states' rows only. The rows, the states and the accepting flags do not depend on it."""
    import leapgram.regex.dfa as dfa_module

    def build():
        pool = ExprPool()
        dfa = LazyDfa(pool, parse_regex("[a-c]{0,40}x|(ab|cd)*y", pool))
        for text in (b"abcabcabcabcabcabcabcabcabcab", b"abcdabcdabab", b"ccccccccccccccccccccccccccccccccccccx"):
            dfa.run(dfa.initial, text)
        explore(dfa, 300)
        return dfa

    reference = build()
    monkeypatch.setattr(dfa_module, "DFA_READY_ROWS", ready)
    dfa = build()
    states = dfa.num_states
    assert states > 64 and states == reference.num_states
    assert states <= dfa._ready <= dfa.trans.shape[0]
    assert (dfa.trans[states:dfa._ready] == UNKNOWN).all()
    assert ((dfa.trans[:states] >= UNKNOWN) & (dfa.trans[:states] < states)).all()  # unknown, dead or a state
    assert (dfa.trans[:states] == reference.trans[:states]).all()
    assert (dfa.accepting[:states] == reference.accepting[:states]).all()
    assert dfa.unwritten_bytes == (dfa.trans.shape[0] - dfa._ready) * 1024
    check_rows_are_derivatives(dfa)


@FAST
@given(two_regexes_and_strings())
def test_dfa_transitions_are_derivatives(case):
    pool, x, y, _ = case
    check_rows_are_derivatives(LazyDfa(pool, x))
    check_rows_are_derivatives(LazyDfa(pool, pool.intersect([x, pool.complement(y)])))


def test_dead_state_and_empty_roots(pool):
    dfa = LazyDfa(pool, pool.intersect([parse_regex("a*b", pool), parse_regex("a*c", pool)]))
    assert dfa.initial == DEAD and not dfa.is_accepting(DEAD)
    assert all(dfa.step(DEAD, x) == DEAD for x in range(256))
    assert dfa.state_of(EMPTY) == DEAD


def test_dfa_grows_past_its_initial_capacity(pool):
    capacity = LazyDfa(pool, EPSILON).trans.shape[0]
    pattern = f"(?:a{{3}}){{1,{capacity * 2}}}"
    e = parse_regex(pattern, pool)
    dfa = LazyDfa(pool, e)
    first_step = dfa.step(dfa.initial, b("a"))
    state = dfa.initial
    for n in range(1, capacity * 6 + 2):
        state = dfa.step(state, b("a"))
        assert dfa.is_accepting(state) == pool.matches(e, b"a" * n), n
    assert dfa.num_states > capacity
    assert dfa.trans.shape[0] >= dfa.num_states and dfa.accepting.shape[0] == dfa.trans.shape[0]
    assert dfa.step(dfa.initial, b("a")) == first_step
    check_rows_are_derivatives(dfa)


def test_fill_row_is_idempotent(pool):
    dfa = LazyDfa(pool, parse_regex("[a-c]+d", pool))
    dfa.fill_row(dfa.initial)
    row = dfa.trans[dfa.initial].copy()
    dfa.fill_row(dfa.initial)
    assert (dfa.trans[dfa.initial] == row).all() and UNKNOWN not in row


def test_dfa_states_are_shared_by_equal_expressions(pool):
    dfa = LazyDfa(pool, parse_regex("(ab)*", pool))
    assert dfa.run(dfa.initial, b"abab") == dfa.initial
    assert dfa.state_of(parse_regex("(?:ab)*", pool)) == dfa.initial


def test_boolean_operators_are_marked(pool):
    x = parse_regex("a|b", pool)
    assert pool.kind[x] != K_OR or not pool.has_bool[x]
    assert pool.kind[pool.complement(x)] == K_NOT and pool.has_bool[pool.complement(x)]
    both = pool.intersect([parse_regex("a*b", pool), parse_regex("(aa)*b|c", pool)])
    assert pool.kind[both] == K_AND and pool.has_bool[both]


def test_members_inside_a_star_are_absorbed(pool):
    """``R*`` absorbs what is built from strings of ``R`` (by structure): in an alternation, after
    a nullable prefix, and in an intersection (``A & R*`` is ``A``), so the derivatives of an
    unanchored pattern under a length bound stay small."""
    c = parse_regex("[a-z0-9]", pool)
    star = pool.repeat(c, 0)
    x = parse_regex("[a-c]", pool)
    assert pool.concat(pool.repeat(x, 0), star) == star  # [a-c]* [a-z0-9]* = [a-z0-9]*
    assert pool.concat(pool.repeat(x, 1), star) != star  # not nullable: needs one of a-c
    assert pool.alt([pool.concat_all([star, pool.repeat(x, 1), star]), star]) == star
    bounded = pool.repeat(c, 2, 9)
    assert pool.intersect([bounded, star]) == bounded
    assert pool.alt([parse_regex("[a-z]*!", pool), star]) != star  # "!" is not a string of c
    pattern = pool.concat_all([star, pool.repeat(x, 1), star])
    d = pool.intersect([bounded, pattern])
    for byte in b"zzab9":
        d = pool.derivative(d, byte)
    assert pool.kind[d] == K_REPEAT  # the length bound alone once an a-c was read


# ----- copies and memos ----------------------------------------------------------------------


def test_copy_keeps_ids_and_caches_and_grows_apart():
    pool = ExprPool()
    word = parse_regex("(ab|c)*d", pool)
    assert not pool.is_empty(pool.intersect([word, pool.complement(pool.literal(b"d"))]))
    twin = pool.copy()
    assert len(twin) == len(pool) and twin.describe(word) == pool.describe(word)
    assert parse_regex("(ab|c)*d", twin) == word and twin.literal(b"d") == pool.literal(b"d")
    size = len(pool)
    grown = twin.literal(b"only in the copy")
    assert grown >= size and twin.matches(grown, b"only in the copy")
    assert len(pool) == size and ("literal", b"only in the copy") not in pool.memo


def test_literal_is_the_concatenation_of_its_bytes():
    pool, plain = ExprPool(), ExprPool()
    for data in [b"", b"x", b"key", b"\x00\xff\x80"]:
        built = pool.literal(data)
        assert pool.describe(built) == plain.describe(plain.concat_all([plain.byteset(1 << b) for b in data]))
        assert pool.literal(data) == built


@pytest.mark.parametrize("text", [b"a", b"ab", b"name", b"adgroup_name", b'"a\\"b"'])
def test_a_literal_records_the_longest_string_of_each_suffix(text):
    pool = ExprPool()
    expr = pool.literal(text)
    fresh = ExprPool()
    again = fresh.literal(text)
    fresh._lengths.clear()  # worked out bottom-up instead of recorded
    node, other = expr, again
    for size in range(len(text), 0, -1):
        assert pool._lengths[node] == size == fresh._max_length(other)
        if size > 1:
            node, other = pool.args[node][1], fresh.args[other][1]
    names = pool.alt([pool.literal(b"adgroup_id"), expr, pool.literal(b"x")])
    assert pool.is_finite(names) and pool._max_length(names) == max(len(text), 10)


def test_a_big_alternation_derives_through_its_first_byte_index():
    """Alternations of more than ``BY_FIRST_MIN`` children index them by first byte: each
    derivative equals the union of the children's own derivatives, wide children included."""
    from leapgram.regex.expr import BY_FIRST_MIN

    pool = ExprPool()
    names = [f"name{i}".encode() for i in range(BY_FIRST_MIN * 3)] + [b"alpha", b"beta", b""]
    wide = parse_regex(r"[a-z]+[0-9]", pool)
    children = [pool.literal(n) for n in names] + [wide]
    big = pool.alt(children)
    assert len(pool.args[big]) > BY_FIRST_MIN
    for byte in range(256):
        expected = pool.alt([pool.derivative(c, byte) for c in children])
        assert pool.derivative(big, byte) == expected, byte
    copy = pool.copy()  # the index travels with the pool
    assert copy.derivative(big, ord("n")) == pool.derivative(big, ord("n"))
    assert pool.matches(big, b"name7") and pool.matches(big, b"zz9") and not pool.matches(big, b"name")


def _chain_by_concat(pool: ExprPool, data: bytes) -> int:
    return pool.concat_all([pool.byteset(1 << b) for b in data])


@pytest.mark.parametrize("texts", [
    [b"abc", b"xbc", b"bc", b"abcabc"],          # a literal whose suffix the pool holds already
    [b"name", b"surname", b"e", b"ame"],
    [b'"key"', b'"other key"', b'"key"'],        # the same literal twice: the memo
    [bytes(range(256)), bytes(range(255, -1, -1))],  # every single byte made inside a literal
])
def test_literals_are_the_nodes_a_concatenation_of_bytes_makes(texts):
    pool = ExprPool()
    for data in texts:
        e = pool.literal(data)
        assert e == _chain_by_concat(pool, data)
        assert pool.find_literal(data) == e
        assert pool.matches(e, data) and not pool.matches(e, data[:-1])
        assert pool._max_length(e) == len(data)
        for k in range(len(data)):  # each suffix's length is recorded
            assert pool._lengths[pool.find_literal(data[k:])] == len(data) - k


def _literal_byte_by_byte(pool: ExprPool, data: bytes) -> int:
    out = EPSILON
    for b in reversed(data):  # each byte's node, then its concatenation with the suffix: ids in that order
        byte = pool.byteset(1 << b)
        out = byte if out == EPSILON else pool._intern(K_CONCAT, (byte, out), False, False)
    return out


def test_literals_make_their_nodes_in_the_order_of_one_byte_at_a_time():
    texts = (b"bc", b"abc", b"zabc", b"q", b"qq", b"bcq", b"xyzzy")
    one, two = ExprPool(), ExprPool()
    assert [one.literal(t) for t in texts] == [_literal_byte_by_byte(two, t) for t in texts]
    assert one.kind == two.kind and one.args == two.args and one.nullable == two.nullable


def test_a_literal_past_the_node_budget_raises():
    pool = ExprPool(Limits(max_regex_nodes=20))
    with pytest.raises(BudgetExceededError):
        pool.literal(b"abcdefghijklmnopqrstuvwxyz")


def test_a_string_minus_a_superset_by_structure_is_nothing(pool):
    """``A & ~B`` with ``A`` within ``B`` by structure (``Constructors._within_by_structure``): a
    member of the alternation ``B``, or the same tail after such a head (o32451's ``not:
    pattern`` once its prefix matched: ``S* " & ~((S* | C) ")``); a pair that is not stays an
    intersection, and the search agrees with both."""
    head, other = parse_regex("[a-z]*", pool), parse_regex("x[0-9]", pool)
    quote = lit(pool, '"')
    string = pool.concat(head, quote)
    wider = pool.concat(pool.alt([head, other]), quote)
    for a, q in [(string, wider), (other, pool.alt([head, other])), (pool.concat(lit(pool, "ab"), string),
                                                                    pool.concat(lit(pool, "ab"), wider))]:
        assert pool.intersect([a, pool.complement(q)]) == EMPTY
        assert pool.intersect([pool.complement(q), a]) == EMPTY
    narrower = pool.concat(pool.alt([other, lit(pool, "y")]), quote)
    both = pool.intersect([string, pool.complement(narrower)])
    assert pool.kind[both] == K_AND and not pool.is_empty(both)
    both = pool.intersect([wider, pool.complement(string)])
    assert pool.kind[both] == K_AND and not pool.is_empty(both)


def test_alternation_of_one_and_a_string_minus_names_as_the_general_constructors_build_them(pool):
    """``alt([x])`` is ``x``, and ``A & ~Q`` (``Constructors._intersect_minus``: a key that is none
    of an object's names) is the node the general intersection builds, either order, including
    ``R* T & ~Q`` where ``T`` is ``~Q`` (dropped to ``~Q``, by the general path)."""
    string = parse_regex('[a-z"]*"', pool)
    names = pool.alt([lit(pool, 'kind"'), lit(pool, 'name"'), lit(pool, 'nap"')])
    other = pool.complement(names)
    star_tail = pool.concat(pool.repeat(byte(pool, "ab"), 0), other)
    cases = [(string, other), (other, string), (names, other), (lit(pool, 'x"'), other), (star_tail, other),
             (other, pool.complement(lit(pool, "z"))), (pool.repeat(byte(pool, "a"), 0), other), (string, names)]
    fast = [pool.intersect(list(pair)) for pair in cases]
    for x in [string, names, other, star_tail, EMPTY, EPSILON, pool.universal(), pool.derivative(names, b("n"))]:
        assert pool.alt([x]) == x
    pool._intersect_minus = lambda a, b: None
    assert fast == [pool.intersect(list(pair)) for pair in cases]
    assert fast[4] == other
    assert pool.kind[fast[0]] == K_AND and fast[0] == fast[1]
