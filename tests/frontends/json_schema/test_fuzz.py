"""A small, fixed-seed run of the differential fuzzing (``schema_fuzz.py``): random schemas,
instances from hypothesis-jsonschema and their mutations, leapgram against ``jsonschema``. No
invalid instance accepted, and no valid one rejected but for the documented choices.
``benchmarks/fuzz_json_schema.py`` runs the long version (random and JSONSchemaBench schemas)."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from schema_fuzz import (
    _stricter_reason,
    compile_schema,
    fuzz_schema,
    in_declared_order,
    mutate_schema,
    random_schema,
)

pytest.importorskip("hypothesis_jsonschema")
pytest.importorskip("jsonschema")

SEEDS = [pytest.param(seed, id=f"seed{seed}") for seed in range(4)] + [
    pytest.param(seed, id=f"seed{seed}", marks=pytest.mark.slow) for seed in range(4, 12)]
SEED_SCHEMA = {"type": "object", "properties": {"id": {"type": "integer", "minimum": 1}, "tags": {
    "type": "array", "items": {"type": "string", "maxLength": 4}}, "kind": {"enum": ["a", "b"]}},
    "required": ["id"], "additionalProperties": False}


@pytest.mark.parametrize("seed", SEEDS)
def test_no_disagreement_but_documented_choices(seed):
    rng = random.Random(seed)
    counts: Counter = Counter()
    bugs: list[str] = []
    for _ in range(8):
        fuzz_schema(rng, random_schema(rng), [], 8, 2, counts, bugs)
    fuzz_schema(rng, mutate_schema(rng, SEED_SCHEMA), [{"id": 3, "tags": ["x"], "kind": "a"}], 8, 2, counts, bugs)
    assert counts["instances"] > 50, counts
    assert not bugs, "\n".join(bugs[:10])


def test_members_out_of_declared_order_are_classified_as_order():
    """An object of many members written out of the declared order is filed under the
    documented choice ``order`` (``any_order`` refuses this many tracked properties under a
    count bound, and the member-order search would run out of budget)."""
    names = [f"p{i:02d}" for i in range(40)]
    schema = {"type": "object", "properties": {n: {"type": "integer"} for n in names},
              "additionalProperties": {"type": "string"}, "maxProperties": 60,
              "required": names[:12]}
    value = {**{n: i for i, n in enumerate(reversed(names))}, "zz": "extra", "aa": "more"}
    assert list(in_declared_order(schema, value)) == [*names, "zz", "aa"]
    compiled = compile_schema(schema)
    assert _stricter_reason(schema, value, compiled, {}) == "order"
