"""The object member state machine's liveness: the worklist agrees with the plain fixpoint."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from leapgram.frontends.json_schema.objects import live_states


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
