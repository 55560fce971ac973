"""Differential fuzzing of the JSON Schema front end against ``jsonschema`` (format checking on).

Schemas: random ones over the keywords the front end translates, and mutations of
JSONSchemaBench schemas (``../shared/jsonschemabench`` or ``--corpus``; each mutated schema
also gets the case's own instances and their mutations). Instances: hypothesis-jsonschema draws
plus mutations of every drawn or given instance. The verdicts and their classes are those of
``tests/frontends/json_schema/schema_fuzz.py`` (the CI test runs a small fixed-seed version):
``loosened`` and ``stricter:other`` are bugs, the other ``stricter:*`` classes documented choices.

    .venv/bin/python benchmarks/fuzz_json_schema.py [--instances 100000] [--seed 0] [--show 20] [--dump bugs.jsonl]

Prints the counts as they grow (every 20 schemas) and at the end; exits 1 when a bug was found.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import signal
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "frontends" / "json_schema"))
import schema_fuzz

import leapgram

CORPUS = REPO.parent / "shared" / "jsonschemabench"
BUGS = ("loosened", "stricter:other", "crash")


class SchemaTimeout(BaseException):
    """Not an Exception: the checks' ``except Exception`` (a crash) must not catch it."""


def _alarm(signum, frame):
    raise SchemaTimeout


def bench_cases(corpus: Path, rng: random.Random) -> list[dict]:
    paths = sorted(corpus.glob("*.json"))
    rng.shuffle(paths)
    return [json.loads(p.read_text(encoding="utf-8")) for p in paths]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", type=int, default=100_000, help="stop after this many instances checked")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--draws", type=int, default=16, help="hypothesis draws per schema")
    parser.add_argument("--mutations", type=int, default=6, help="mutated copies of each instance")
    parser.add_argument("--budget-s", type=int, default=20, help="seconds per schema before it counts as a timeout")
    parser.add_argument("--show", type=int, default=20, help="bug examples to print")
    parser.add_argument("--dump", type=Path, help="write every bug example (JSON lines: verdict, schema, instance)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    cases = bench_cases(args.corpus, rng) if args.corpus.is_dir() else []
    counts: collections.Counter = collections.Counter()
    examples: list[str] = []
    leapgram.warm_up(schema_fuzz.VOCAB)  # JIT compiles before any alarm: one cut mid-compile broke numba's cache
    signal.signal(signal.SIGALRM, _alarm)
    start = time.time()
    n = 0
    while counts["instances"] < args.instances:
        from_bench = bool(cases) and n % 2 == 1
        if from_bench:
            case = cases[(n // 2) % len(cases)]
            schema, given = schema_fuzz.mutate_schema(rng, case["schema"]), [t["data"] for t in case["tests"]]
        else:
            schema, given = schema_fuzz.random_schema(rng), []
        counts["schemas from JSONSchemaBench" if from_bench else "schemas random"] += 1
        signal.alarm(args.budget_s)
        try:
            schema_fuzz.fuzz_schema(rng, schema, given, args.draws, args.mutations, counts, examples)
        except SchemaTimeout:
            counts["schemas timed out"] += 1
        finally:
            signal.alarm(0)
        n += 1
        if n % 20 == 0:
            print(f"[{time.time() - start:7.0f} s] {json.dumps(dict(sorted(counts.items())))}", flush=True)
    print(json.dumps(dict(sorted(counts.items())), indent=1))
    print(f"{time.time() - start:.0f} s; bugs: " + ", ".join(f"{k} {counts[k]}" for k in BUGS))
    for line in examples[: args.show]:
        print(line[:1000])
    if args.dump:
        args.dump.write_text("\n".join(examples) + "\n", encoding="utf-8")
    return 1 if any(counts[k] for k in BUGS) else 0


if __name__ == "__main__":
    sys.exit(main())
