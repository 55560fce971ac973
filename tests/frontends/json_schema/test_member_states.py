"""The object member state machine's liveness: the worklist agrees with the plain fixpoint."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leapgram.frontends.json_schema.objects import (
    _expand,
    _in_order_moves,
    _uncounted_states,
    _uncounted_step,
    live_states,
)
from leapgram.frontends.json_schema.translate import SchemaTranslator
from leapgram.grammar.builder import GrammarBuilder
from leapgram.limits import DEFAULT_LIMITS


def live_by_passes(rules):
    live = set()
    changed = True
    while changed:
        changed = False
        for key, alternatives in rules.items():
            if key not in live and any(all(not isinstance(x, tuple) or x in live for x in alt) for alt in alternatives):
                live.add(key)
                changed = True
    return live


states = st.tuples(st.integers(0, 5), st.integers(0, 2))
alternative = st.lists(st.one_of(states, st.integers(0, 3)), max_size=3)


@given(st.dictionaries(states, st.lists(alternative, max_size=3), min_size=1, max_size=12))
@settings(max_examples=300, deadline=None)
def test_worklist_liveness_matches_the_fixpoint(rules):
    referenced = {x for alts in rules.values() for alt in alts for x in alt if isinstance(x, tuple)}
    rules = {**{key: [] for key in referenced}, **rules}  # every referenced state has rules, as _expand makes
    assert live_states(rules) == live_by_passes(rules)


@pytest.mark.parametrize("required", ["", "r", "o", "rr", "oo", "ro", "or", "orro", "rorrro", "oooooooo"])
@pytest.mark.parametrize("with_extra", [False, True])
@pytest.mark.parametrize("whitespace", ["flexible", "compact", "dumps"])
def test_members_without_counts_make_the_rules_of_the_counted_walk(required, with_extra, whitespace):
    made = []
    for way in ("direct", "uncounted step", "counted"):  # the same nonterminals, rules and lexemes, in order
        translator = SchemaTranslator({}, whitespace=whitespace, limits=DEFAULT_LIMITS)
        builder = translator.builder
        members = [((builder.literal(f"m{k}"), k), flag == "r") for k, flag in enumerate(required)]
        extra = builder.literal("extra") if with_extra else None
        if way == "direct":
            root = translator.uncounted_member_rules(members, extra)
        elif way == "uncounted step":
            root = translator.member_rules(_expand(_uncounted_step(members, extra, translator.punct)), (0, 0),
                                           every_state_ends=True)
        else:
            root = translator.counted_members(_in_order_moves(members, extra, 0), 0, None)
        made.append((root, builder._nonterminals, builder._rules, builder._lexemes, set(builder._defined)))
    assert made[0] == made[1] == made[2]


@given(st.lists(st.booleans(), max_size=9), st.booleans())
@settings(max_examples=200, deadline=None)
def test_uncounted_states_come_in_the_order_of_the_walk(required, with_extra):
    members = [((10 + k,), flag) for k, flag in enumerate(required)]
    extra = 99 if with_extra else None
    assert _uncounted_states(members, with_extra) == list(_expand(_uncounted_step(members, extra, lambda text: (7,))))


def test_fresh_nonterminals_are_those_of_as_many_fresh_calls():
    one, two = GrammarBuilder(), GrammarBuilder()
    one.fresh_nonterminal("x")
    two.fresh_nonterminal("x")
    assert list(one.fresh_nonterminals("members", 3)) == [two.fresh_nonterminal("members") for _ in range(3)]
    assert one.fresh_nonterminal("y") == two.fresh_nonterminal("y")
    assert one._nonterminals == two._nonterminals
    assert list(one.fresh_nonterminals("z", 0)) == []
