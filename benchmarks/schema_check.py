"""Exactness of the JSON Schema front end on JSONSchemaBench, at the byte level.

For each case of ``../shared/jsonschemabench`` (or ``--corpus``): compile the schema with
``Grammar.from_json_schema`` and check every test instance, serialized as ``json.dumps(data,
ensure_ascii=False)``: a valid one must be accepted (all its bytes, then EOS), an invalid one
rejected. No tokenizer is involved (``leapgram bench`` does the token-level pass criterion and
the timing); this is the quick loop for front-end work.

Prints cases, compiled, refusals by keyword, errors by kind, valid rejected (split as
``leapgram bench`` does: out of declared order when another key order is accepted, other) and
invalid accepted (with the first few case names). One case's failure never stops the run; a case over
``--budget-s`` seconds (compile plus instances) counts as a timeout.

    .venv/bin/python benchmarks/schema_check.py [--limit N] [--lenient] [--any-order | --auto-order] [--show 10]
"""

from __future__ import annotations

import argparse
import collections
import json
import signal
import sys
import time
from pathlib import Path

import leapgram

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_schemas import REORDER_BUDGET, accepts_reordered

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "jsonschemabench"


class CaseTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise CaseTimeout()


def check_case(path: Path, vocab: leapgram.Vocabulary, lenient: bool, any_order: bool | str) -> dict:
    case = json.loads(path.read_text())
    grammar = leapgram.Grammar.from_json_schema(case["schema"], lenient=lenient, any_order=any_order)
    engine = leapgram.GrammarCompiler(vocab, cache_size=0).compile(grammar)._engine
    out = {"valid_rejected": [], "out_of_order": 0, "invalid_accepted": [], "instances": 0}
    budget = [REORDER_BUDGET]
    for test in case["tests"]:
        text = json.dumps(test["data"], ensure_ascii=False).encode("utf-8")
        state = engine.advance(engine.initial, text)
        accepted = state is not None and engine.is_accepting(state)
        out["instances"] += 1
        if test["valid"] and not accepted:
            out["valid_rejected"].append(text[:200].decode("utf-8", "replace"))
            out["out_of_order"] += accepts_reordered(engine, test["data"], budget, leapgram.BudgetExceededError)
        elif not test["valid"] and accepted:
            out["invalid_accepted"].append(text[:200].decode("utf-8", "replace"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--limit", type=int, default=0, help="first N cases (sorted by name); 0: all")
    parser.add_argument("--lenient", action="store_true")
    parser.add_argument("--any-order", action="store_true", help="properties in any order")
    parser.add_argument("--auto-order", action="store_true",
                        help="any order where tracked exactly, declared order elsewhere (any_order='auto')")
    parser.add_argument("--budget-s", type=float, default=20.0)
    parser.add_argument("--show", type=int, default=8)
    parser.add_argument("--match", default="", help="only cases whose file name contains this")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"no corpus at {args.corpus}", file=sys.stderr)
        return 2
    paths = sorted(p for p in args.corpus.glob("*.json") if args.match in p.name)
    if args.limit:
        paths = paths[: args.limit]
    vocab = leapgram.Vocabulary.byte_vocabulary()
    refused: collections.Counter[str] = collections.Counter()
    errors: collections.Counter[str] = collections.Counter()
    examples: dict[str, list[str]] = collections.defaultdict(list)
    compiled = instances = out_of_order = 0
    bad_valid: list[tuple[str, str]] = []
    bad_invalid: list[tuple[str, str]] = []
    signal.signal(signal.SIGALRM, _alarm)
    started = time.perf_counter()
    for n, path in enumerate(paths, 1):
        signal.setitimer(signal.ITIMER_REAL, args.budget_s)
        try:
            result = check_case(path, vocab, args.lenient, "auto" if args.auto_order else args.any_order)
        except leapgram.UnsupportedError as err:
            refused[err.feature] += 1
            examples[f"unsupported {err.feature}"].append(f"{path.name}: {err.message[:120]} at {err.pointer}")
            continue
        except CaseTimeout:
            errors["timeout"] += 1
            examples["timeout"].append(path.name)
            continue
        except Exception as err:  # noqa: BLE001 -- a report, not a crash
            kind = type(err).__name__
            errors[kind] += 1
            examples[kind].append(f"{path.name}: {str(err)[:160]}")
            continue
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        compiled += 1
        instances += result["instances"]
        out_of_order += result["out_of_order"]
        bad_valid += [(path.name, t) for t in result["valid_rejected"]]
        bad_invalid += [(path.name, t) for t in result["invalid_accepted"]]
        if n % 500 == 0:
            print(f"  {n}/{len(paths)} cases, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    print(f"cases {len(paths)}, compiled {compiled}, instances checked {instances}, "
          f"{time.perf_counter() - started:.0f} s")
    print(f"valid rejected {len(bad_valid)} (in {len({c for c, _ in bad_valid})} cases; out of declared order "
          f"{out_of_order}, other {len(bad_valid) - out_of_order}), invalid accepted "
          f"{len(bad_invalid)} (in {len({c for c, _ in bad_invalid})} cases)")
    print("refused by keyword: " + ", ".join(f"{k} {v}" for k, v in refused.most_common()))
    print("errors by kind: " + (", ".join(f"{k} {v}" for k, v in errors.most_common()) or "none"))
    for title, items in (("valid rejected", bad_valid), ("invalid accepted", bad_invalid)):
        for case, text in items[: args.show]:
            print(f"  {title}: {case}: {text}")
    for kind, items in examples.items():
        if not kind.startswith("unsupported"):
            for item in items[: args.show]:
                print(f"  {kind}: {item}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
