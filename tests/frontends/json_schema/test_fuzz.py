"""A small, fixed-seed run of the differential fuzzing (``schema_fuzz.py``): random schemas,
instances from hypothesis-jsonschema and their mutations, leapgram against ``jsonschema``. No
invalid instance accepted, and no valid one rejected but for the documented choices.
``benchmarks/fuzz_json_schema.py`` runs the long version (random and JSONSchemaBench schemas)."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from schema_fuzz import fuzz_schema, mutate_schema, random_schema

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
