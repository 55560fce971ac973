"""The Earley kernels (charts in a flat arena) against the reference parser, Leo on and off,
right recursion, budgets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leapgram._kernels.earley import END
from leapgram.errors import BudgetExceededError
from leapgram.grammar import GrammarBuilder
from leapgram.limits import Limits
from leapgram.parser import EarleyParser, Lexer
from leapgram.parser.arena import ChartArena, ParserTables
from tests.helpers.cfg_grammars import GRAMMARS


def right_recursive_list():
    """``list: ITEM | ITEM "," list`` -- the shape that makes plain Earley rows grow."""
    b = GrammarBuilder()
    start, lst = b.nonterminal("start"), b.nonterminal("list")
    item, comma = b.regex("[a-z]", name="ITEM"), b.literal(",")
    b.rule(start, [b.literal("["), lst, b.literal("]")])
    b.rule(lst, [item])
    b.rule(lst, [item, comma, lst])
    return b.build(start)


def ambiguous_grammar():
    """Nullable rules, ambiguity and both recursions at once."""
    b = GrammarBuilder()
    s, a, e = b.nonterminal("s"), b.nonterminal("a"), b.nonterminal("e")
    x, y = b.literal("x"), b.literal("y")
    b.rule(s, [a, s])
    b.rule(s, [])
    b.rule(a, [x])
    b.rule(a, [e, x, e])
    b.rule(a, [a, y])
    b.rule(e, [])
    b.rule(e, [y, e])
    return b.build(s)


IRS = {name: (lambda make=make: make().ir) for name, make in GRAMMARS.items()}
IRS["right_list"] = right_recursive_list
IRS["ambiguous"] = ambiguous_grammar


def lexeme_ids(ir) -> dict[str, int]:
    return {lexeme.name: i for i, lexeme in enumerate(ir.lexemes)}


DEFAULT_LIMITS = Limits()


def arena_for(ir, use_leo=True, limits=DEFAULT_LIMITS):
    return ChartArena(ParserTables(ir), Lexer(ir, limits), limits, use_leo=use_leo)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(IRS)), seed=st.integers(0, 100_000), use_leo=st.booleans())
def test_arena_agrees_with_reference_parser(name, seed, use_leo):
    """Random lexeme sequences (mostly allowed ones, sometimes several lexemes at once, sometimes
    a refused one): same acceptance, same allowed lexemes, same refusals."""
    ir = IRS[name]()
    limits = Limits()
    arena = arena_for(ir, use_leo)
    node = EarleyParser(ir, limits).root()
    chart = 0
    rng = np.random.default_rng(seed)
    for _ in range(40):
        assert arena.accepting(chart) == node.accepting
        assert arena.allowed_lexemes(chart) == node.allowed_lexemes
        allowed = sorted(node.allowed_lexemes)
        if rng.random() < 0.15 or not allowed:
            pick = tuple(sorted({int(v) for v in rng.integers(0, len(ir.lexemes), size=rng.integers(1, 3))}))
        else:
            pick = tuple(sorted({allowed[int(i)] for i in rng.integers(0, len(allowed), size=rng.integers(1, 3))}))
        child_node = node.scan(pick)
        child = arena.scan(chart, pick)
        assert (child is None) == (child_node is None), pick
        if child is not None:
            node, chart = child_node, child


def test_leo_keeps_right_recursive_rows_bounded():
    ir = right_recursive_list()
    names = lexeme_ids(ir)
    item, comma, open_, close = names["ITEM"], names["','"], names["'['"], names["']'"]
    sizes = {}
    for use_leo in (True, False):
        arena = arena_for(ir, use_leo)
        chart = arena.scan(0, (open_,))
        rows = []
        for _ in range(400):
            chart = arena.scan(chart, (item,))
            rows.append(len(arena.row(chart)))
            chart = arena.scan(chart, (comma,))
        chart = arena.scan(chart, (item,))
        end = arena.scan(chart, (close,))
        assert end is not None and arena.accepting(end)
        sizes[use_leo] = rows
    assert max(sizes[True]) <= 8, sizes[True][-5:]
    assert sizes[False][-1] > 300  # without Leo the completed chain is copied into every row


def test_item_budget_is_a_clear_error():
    ir = right_recursive_list()
    names = lexeme_ids(ir)
    limits = Limits(max_earley_items=50)
    arena = arena_for(ir, use_leo=False, limits=limits)
    chart = arena.scan(0, (names["'['"],))
    with pytest.raises(BudgetExceededError, match="max_earley_items"):
        for _ in range(200):
            chart = arena.scan(chart, (names["ITEM"],))
            chart = arena.scan(chart, (names["','"],))


def test_total_item_budget_is_a_clear_error():
    ir = right_recursive_list()
    names = lexeme_ids(ir)
    arena = arena_for(ir, use_leo=False, limits=Limits(max_parse_items=2_000))
    chart = arena.scan(0, (names["'['"],))
    with pytest.raises(BudgetExceededError, match="max_parse_items"):
        for _ in range(500):
            chart = arena.scan(chart, (names["ITEM"],))
            chart = arena.scan(chart, (names["','"],))


def numpy_rule_arrays(ir):
    """The tables as numpy calls build them (the twin of ``rule_tables_kernel``; ParserTables
    took this path for grammars of more than 256 rules until round 22)."""
    rules, count = ir.rules, len(ir.rules)
    lhs = np.array([r[0] for r in rules], dtype=np.int32)
    lengths = np.array([len(r[1]) for r in rules], dtype=np.int64) + 1
    ends = np.cumsum(lengths)
    symbols = [s for _, rhs in rules for s in (*rhs, END)] + [END]
    dr_lhs = np.append(np.repeat(lhs, lengths), np.int32(-1)).astype(np.int32)
    dr_accept = np.zeros(len(symbols), dtype=np.int8)
    dr_accept[ends - 1] = lhs == ir.start
    first_ptr = np.zeros(len(ir.nonterminals) + 1, dtype=np.int32)
    first_ptr[1:] = np.cumsum(np.bincount(lhs, minlength=len(ir.nonterminals)))
    first_drs = (ends - lengths)[np.argsort(lhs, kind="stable")].astype(np.int32) if count else np.zeros(1, np.int32)
    return {"dr_next": np.array(symbols, dtype=np.int32), "dr_lhs": dr_lhs, "dr_accept": dr_accept,
            "first_ptr": first_ptr, "first_drs": first_drs}


def assert_tables_are_numpys(ir):
    tables = ParserTables(ir)
    for field, want in numpy_rule_arrays(ir).items():
        got = getattr(tables, field)
        assert got.dtype == want.dtype and got.flags.c_contiguous and got.flags.writeable, field
        assert got.tolist() == want.tolist(), field


@pytest.mark.parametrize("name", sorted(IRS))
def test_rule_tables_equal_the_numpy_ones(name):
    """The kernel's tables are those numpy calls build."""
    assert_tables_are_numpys(IRS[name]())


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.just(n), st.integers(0, n - 1),
    st.lists(st.tuples(st.integers(0, n - 1), st.lists(st.integers(-4, n - 1), max_size=6)), max_size=40))))
def test_rule_tables_of_random_rules_equal_the_numpy_ones(case):
    """Any rules, in any order, over up to 12 nonterminals (some without rules, some with
    empty ones), none at all included: the same tables."""
    from leapgram.grammar.ir import GrammarIR, Lexeme
    from leapgram.regex.expr import ExprPool

    n, start, rules = case
    pool = ExprPool()
    lexemes = tuple(Lexeme(f"L{j}", pool.literal(b"ab"[:1] * (j + 1))) for j in range(4))
    ir = GrammarIR(pool, lexemes, tuple(f"N{i}" for i in range(n)), tuple((lhs, tuple(rhs)) for lhs, rhs in rules),
                   start, (), frozenset())
    assert_tables_are_numpys(ir)


def test_tables_of_a_rule_past_the_nonterminals_are_a_grammar_error():
    from leapgram.errors import GrammarError
    from leapgram.grammar.ir import GrammarIR
    from leapgram.regex.expr import ExprPool

    with pytest.raises(GrammarError, match="nonterminal"):
        ParserTables(GrammarIR(ExprPool(), (), ("start",), ((0, (3,)),), 0, (), frozenset()))


def test_an_ir_replaced_packs_its_own_rules():
    """The builder hands its packed rules to the IR outside the fields, so an IR that
    ``dataclasses.replace`` makes with other rules packs those."""
    import dataclasses

    ir = IRS["json"]()
    assert ir.packed_rules() is ir.packed_rules()
    other = dataclasses.replace(ir, rules=ir.rules[::-1])
    assert ParserTables(other).dr_next.tolist() == numpy_rule_arrays(other)["dr_next"].tolist()


def test_arena_starts_with_disjoint_arrays_of_the_usual_fill():
    """The first arrays are views of two buffers: none overlaps another, tables start empty."""
    arena = arena_for(IRS["json"]())
    arrays = [a for a in arena.arrays if a.size]
    for i, a in enumerate(arrays):
        assert a.flags.c_contiguous
        for b in arrays[i + 1:]:
            assert not np.shares_memory(a, b)
    for keys in (arena.bound_keys, arena.child_keys, arena.leo_keys, arena.set_keys):
        assert keys.shape[0] >= 256 and keys.dtype == np.int64
    assert (arena.leo_keys == -1).all() and not arena.leo_vals.any()


def test_the_views_describe_the_arena_and_grammar_arrays_after_growth():
    """``ChartArena.views`` and ``ParserTables.grammar_views`` give each array's address and
    shapes (the tuples themselves while numba is disabled), also after the arena grew (400 scans
    of a right-recursive list without Leo outgrow its first items, charts and tables)."""
    from leapgram._kernels.views import ARENA_ARRAYS, arena_of, grammar_of

    ir = right_recursive_list()
    names = lexeme_ids(ir)
    arena = arena_for(ir, use_leo=False)
    first_items = arena.items
    chart = arena.scan(0, (names["'['"],))
    for _ in range(400):
        chart = arena.scan(arena.scan(chart, (names["ITEM"],)), (names["','"],))
        arena.boundary(chart, arena.fresh_of(chart))
    assert arena.items is not first_items  # grown
    for views, arrays in ((arena.views, arena.arrays), (arena.tables.grammar_views, arena.tables.grammar[:6])):
        if isinstance(views, tuple):  # numba disabled
            assert views[:len(arrays)] == arrays
            continue
        assert views.dtype == np.int64 and views.shape[0] >= len(arrays)
        for row, array in zip(views.tolist(), arrays):
            assert array.flags.c_contiguous and array.flags.writeable
            assert row == [array.ctypes.data, array.shape[0], array.shape[-1]]
    if not isinstance(arena.views, tuple):
        assert arena.views.shape[0] == ARENA_ARRAYS == len(arena.arrays)
        assert arena.tables.grammar_views[6, 0] == arena.tables.grammar[6]
    # what the kernels make of the views (called from Python: arrays over the same memory)
    for made, arrays in ((arena_of(arena.views), arena.arrays), (grammar_of(arena.tables.grammar_views)[:6],
                                                                  arena.tables.grammar[:6])):
        assert len(made) == len(arrays)
        for a, b in zip(made, arrays):
            assert a.dtype == b.dtype and a.shape == b.shape and a.ctypes.data == b.ctypes.data



def test_views_hold_the_arrays_they_name_until_dropped():
    """A views array keeps the arrays it names alive (a kernel's caller holds the views it
    passed, so a kernel still running on views made before a growth reads live memory), and
    they go with the last reference to it. ``share`` makes one lock; ``release`` drops it."""
    import gc
    import weakref

    ir = right_recursive_list()
    names = lexeme_ids(ir)
    arena = arena_for(ir, use_leo=False)
    chart = arena.scan(0, (names["'['"],))

    def grow_items() -> None:
        nonlocal chart
        items = arena.items
        while arena.items is items:
            chart = arena.scan(arena.scan(chart, (names["ITEM"],)), (names["','"],))
            arena.boundary(chart, arena.fresh_of(chart))

    grow_items()  # the items now own their memory (not a view of the first buffer)
    old_views, old_items = arena.views, weakref.ref(arena.items)
    grow_items()
    grow_items()
    gc.collect()
    assert old_items() is not None  # replaced twice, still held by the views made before
    if not isinstance(old_views, tuple):
        assert old_views[0, 0] == old_items().ctypes.data and old_views.base.arrays[0] is old_items()
    del old_views
    gc.collect()
    assert old_items() is None
    arena.share()
    lock = arena.lock
    arena.share()
    assert arena.lock is lock is not None
    arena.release()
    assert arena.lock is None


def test_a_boundary_past_a_stale_acc_pool_asks_to_be_called_again():
    """A kernel that reached a lexer state through a row written in place after another thread
    grew ``acc_pool`` holds the old, shorter pool: ``boundary_kernel`` answers ``STALE_LEXER``
    (not a scan of a cut lexeme list), which ``ChartArena.handle`` takes as "call again"."""
    from leapgram._kernels import earley as k

    ir = right_recursive_list()
    names = lexeme_ids(ir)
    arena = arena_for(ir)
    lexer = arena.lexer
    chart = arena.scan(0, (names["'['"],))
    fresh = arena.fresh_of(chart)
    lexer.fill_row(fresh)
    lex = int(lexer.trans[fresh, ord("a")])
    assert lex > 0 and lexer.accepting[lex]
    acc_start, acc_len, acc_pool, acc_id, ignore_only = lexer.kernel_arrays[:5]
    cut = (acc_start, acc_len, acc_pool[:int(acc_start[lex])].copy(), acc_id, ignore_only, lexer.single_fresh)
    limits = arena.limits
    status, _ = k.boundary_kernel(arena.tables.grammar, arena.arrays, cut, np.int64(chart), np.int64(lex),
                                  limits.max_earley_items, True)
    assert status == k.STALE_LEXER and arena.num_boundaries == 0
    arena.handle(status, 0)  # nothing to do
    assert arena.boundary(chart, lex) is not None


def test_one_lexeme_or_none_gets_its_fresh_state_inside_the_kernel():
    """A child chart that allows one lexeme whose fresh state the lexer made (for another arena)
    or none (no ignored lexemes: ``DEAD``) gets it from ``boundary_kernel`` (no ``NEED_FRESH``),
    the same state ``fresh_of`` gives."""
    from leapgram._kernels import earley as k

    ir = right_recursive_list()
    names = lexeme_ids(ir)
    first = arena_for(ir)
    lexer = first.lexer
    second = ChartArena(first.tables, lexer, first.limits)

    def ask(arena, chart, lex):
        return k.boundary_kernel(arena.tables.grammar, arena.arrays, lexer.kernel_arrays, np.int64(chart),
                                 np.int64(lex), arena.limits.max_earley_items, True)

    root = first.fresh_of(0)
    lexer.fill_row(root)
    lex = int(lexer.trans[root, ord("[")])
    child, fresh = first.boundary(0, lex)  # {ITEM}: made for the first arena
    assert first.allowed_lexemes(child) == {names["ITEM"]} and lexer.single_fresh[names["ITEM"]] == fresh
    status, value = ask(second, 0, lex)
    assert status == k.OK and value & 0xFFFFFFFF == fresh and second.fresh_of(int(value >> 32)) == fresh
    chart = first.scan(first.scan(child, (names["ITEM"],)), (names["']'"],))
    lexer.fill_row(first.fresh_of(int(first.charts[chart, k.PARENT])))
    assert first.allowed_lexemes(chart) == frozenset()
    end = int(lexer.trans[first.fresh_of(int(first.charts[chart, k.PARENT])), ord("]")])
    status, value = ask(first, int(first.charts[chart, k.PARENT]), end)
    assert status == k.OK and value & 0xFFFFFFFF == lexer.start_state(frozenset()) == 0


@pytest.mark.parametrize("name", sorted(IRS))
def test_single_fresh_is_the_fresh_state_of_each_lexeme_alone(name):
    """Every state ``single_fresh`` names (laid out with the punctuation and the literals, or
    made by ``fresh_state``) is ``start_state`` of its lexeme alone; that of no lexeme is
    ``DEAD`` but where the grammar ignores lexemes (then it is left to ``fresh_state``)."""
    ir = IRS[name]()
    lexer = Lexer(ir, Limits())
    lexer.lay_out_literals()
    laid = lexer.single_fresh.tolist()
    for lex, state in enumerate(laid[:-1]):
        found = lexer.start_state(frozenset({lex}))
        assert state in (-1, found) and lexer.single_fresh[lex] == found
    assert laid[-1] == (-1 if ir.ignore else 0) and (lexer.start_state(frozenset()) == 0) == (not ir.ignore)


def test_laid_out_literals_are_the_fresh_states_of_their_lexemes():
    """A JSON Schema's punctuation and keys, laid out before any fresh state is asked for, are
    in ``single_fresh`` as the states ``fresh_state`` gives them."""
    import leapgram

    ir = leapgram.Grammar.from_json_schema({"type": "object", "properties": {"name": {"type": "string"},
                                                                           "size": {"type": "integer"}}}).ir
    lexer = Lexer(ir, Limits())
    lexer.lay_out_literals()
    laid = {lex: state for lex, state in enumerate(lexer.single_fresh.tolist()[:-1]) if state >= 0}
    assert len(laid) >= 3  # "{" and the two keys at least
    for lex, state in laid.items():
        assert lexer.fresh_state(np.array([lex], dtype=np.int32)) == state
