"""Correctness of the JSON Schema front end over JSONSchemaBench cases (not a timing benchmark).

Each case (``../shared/jsonschemabench/*.json``: ``schema`` and ``tests``) is compiled with a byte
vocabulary; every test instance, written as ``json.dumps(data, ensure_ascii=False)``, must be
accepted when valid and rejected when invalid. Prints compiled cases, unsupported keywords,
other errors by kind, valid instances rejected and invalid instances accepted.

    python benchmarks/schema_check.py [N] [--any-order] [--lenient] [--budget SECONDS] [--show K]

``N`` picks N cases spread evenly over the sorted file list (default: all).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from collections import Counter
from pathlib import Path

import leapgram

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "jsonschemabench"


class CaseTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise CaseTimeout()


def pick_cases(n: int | None, data: Path = DATA) -> list[Path]:
    """``n`` case files spread evenly over the sorted list (all when ``n`` is ``None``)."""
    files = sorted(data.glob("*.json"))
    if n is None or n >= len(files):
        return files
    step = len(files) / n
    return [files[int(i * step)] for i in range(n)]


def accepts(compiled: leapgram.CompiledGrammar, text: str) -> bool:
    matcher = leapgram.Matcher(compiled)
    return matcher.consume_tokens(list(text.encode("utf-8"))) and matcher.is_accepting()


def check_case(path: Path, vocab: leapgram.Vocabulary, **options) -> dict:
    """One case: ``status`` (compiled / unsupported / error) and the wrong verdicts."""
    case = json.loads(path.read_text())
    out = {"status": "compiled", "valid_rejected": [], "invalid_accepted": [], "instances": 0}
    try:
        grammar = leapgram.Grammar.from_json_schema(case["schema"], **options)
        compiled = leapgram.compile(grammar, vocab)
    except leapgram.UnsupportedError as exc:
        return {**out, "status": "unsupported", "keyword": exc.feature, "message": str(exc)}
    except (leapgram.LeapgramError, RecursionError, ValueError) as exc:
        return {**out, "status": "error", "kind": type(exc).__name__, "message": str(exc)}
    for test in case.get("tests", []):
        text = json.dumps(test["data"], ensure_ascii=False)
        out["instances"] += 1
        if accepts(compiled, text) != test["valid"]:
            out["valid_rejected" if test["valid"] else "invalid_accepted"].append(text)
    return out


def run(paths: list[Path], budget: float, show: int, **options) -> dict:
    vocab = leapgram.Vocabulary.byte_vocabulary()
    totals = Counter()
    keywords, errors = Counter(), Counter()
    wrong = {"valid_rejected": [], "invalid_accepted": []}
    signal.signal(signal.SIGALRM, _alarm)
    started = time.perf_counter()
    for path in paths:
        totals["cases"] += 1
        signal.setitimer(signal.ITIMER_REAL, budget)
        try:
            result = check_case(path, vocab, **options)
        except CaseTimeout:
            result = {"status": "error", "kind": "timeout", "message": f"over {budget}s"}
        except Exception as exc:  # noqa: BLE001 -- one failure never stops the run
            result = {"status": "error", "kind": f"crash:{type(exc).__name__}", "message": str(exc)[:200]}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        totals[result["status"]] += 1
        if result["status"] == "unsupported":
            keywords[result["keyword"]] += 1
        elif result["status"] == "error":
            errors[result["kind"]] += 1
            if errors[result["kind"]] <= show:
                print(f"  error {result['kind']}: {path.stem}: {result['message'][:300]}")
        for key, examples in wrong.items():
            if result.get(key):
                totals[key + "_cases"] += 1
                totals[key] += len(result[key])
                examples.append((path.stem, result[key][0]))
        totals["instances"] += result.get("instances", 0)
    totals["seconds"] = round(time.perf_counter() - started, 1)
    report(totals, keywords, errors, wrong, show)
    return {"totals": totals, "keywords": keywords, "errors": errors, "wrong": wrong}


def report(totals: Counter, keywords: Counter, errors: Counter, wrong: dict, show: int) -> None:
    print(f"cases {totals['cases']}  compiled {totals['compiled']}  unsupported {totals['unsupported']}  "
          f"errors {totals['error']}  instances checked {totals['instances']}  ({totals['seconds']} s)")
    print("unsupported by keyword: " + ", ".join(f"{k} {n}" for k, n in keywords.most_common()))
    print("errors by kind: " + (", ".join(f"{k} {n}" for k, n in errors.most_common()) or "none"))
    for key, label in (("valid_rejected", "valid rejected"), ("invalid_accepted", "invalid accepted")):
        print(f"{label}: {totals[key]} instances in {totals[key + '_cases']} cases")
        for name, text in wrong[key][:show]:
            print(f"  {name}: {text[:200]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", nargs="?", type=int, default=None, help="number of cases (default all)")
    parser.add_argument("--any-order", action="store_true", help="properties in any order")
    parser.add_argument("--lenient", action="store_true", help="skip unsupported keywords")
    parser.add_argument("--budget", type=float, default=10.0, help="seconds per case")
    parser.add_argument("--show", type=int, default=8, help="examples printed per list")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args(argv)
    if not args.data.is_dir():
        print(f"no cases: {args.data} is absent", file=sys.stderr)
        return 2
    run(pick_cases(args.n, args.data), args.budget, args.show, any_order=args.any_order, lenient=args.lenient)
    return 0


if __name__ == "__main__":
    sys.exit(main())
