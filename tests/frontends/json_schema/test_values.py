"""JSON values: equality by JSON Schema's rules, and the hashable key that decides it in bulk."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from leapgram.frontends.json_schema.values import json_equal, json_key, unique_values

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 1.0, -2.0, 0.5]),
                    st.sampled_from(["", "a", "1"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                       st.dictionaries(st.sampled_from("ab"), inner, max_size=2)),
                      max_leaves=6)


@given(values, values)
@settings(max_examples=300, deadline=None)
def test_keys_are_equal_exactly_when_values_are_json_equal(a, b):
    assert (json_key(a) == json_key(b)) == json_equal(a, b)


def test_unique_values_keeps_the_first_of_each_and_the_order():
    assert unique_values([1, 1.0, True, "1", [1], [1.0], {"a": 2}, {"a": 2.0}, None, 1]) == \
        [1, True, "1", [1], {"a": 2}, None]


def test_nan_is_kept_each_time():
    nan = float("nan")
    assert len(unique_values([nan, nan])) == 2
