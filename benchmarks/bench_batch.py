"""Batch mask fills in threads: leapgram's ``fill_next_token_bitmasks`` against llguidance's
``fill_next_token_bitmask_par`` and XGrammar's ``BatchGrammarMatcher``, 1 thread vs N threads.

Workload: ``--batch`` JSONSchemaBench schemas (``../shared/jsonschemabench``) that all three
libraries compile and whose first valid instance all three accept, each matcher walking that
instance (compact JSON, the SmolLM2 tokenizer) token by token; at each step the whole batch's rows
are filled in one call.
Only the fill calls are timed. Every run compiles its grammars afresh (leapgram caches masks per
compiled grammar, so a reused grammar would time cache hits), unless ``--reuse``. Speed-up = 1-thread time / N-thread
time, measured in the same run for each library, the repeats of 1 and N threads interleaved.

    .venv-vllm/bin/python benchmarks/bench_batch.py [--batch 32] [--threads 2[,4,...]] [--repeat 3]
        [--bench FOLDER] [--model TOKENIZER_FOLDER] [--reuse]

``--threads 2,4,8,16`` measures each count against 1 thread in the same run (a machine with that
many cores: docs/design/generation.md, "On a GPU", has a 16-core run); ``--bench`` takes another
folder of JSONSchemaBench files (``tests/data/jsonschemabench`` where ../shared is missing);
``--reuse`` times walks on grammars compiled and walked once before (leapgram's masks computed
again from known lexer rows and charts: a server's repeated schema).

(needs llguidance, xgrammar and torch: the vLLM venv has all three.)
"""

from __future__ import annotations

import argparse
import glob
import json
import time
from pathlib import Path

from peers import all_three_compile  # beside this script

import leapgram
from leapgram import Grammar, Matcher

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO.parent / "shared" / "jsonschemabench"


def load_cases(limit: int, tokenizer, folder: Path = BENCH) -> list[tuple[str, list[int]]]:
    """(schema text, tokens of its first valid instance) for schemas all three libraries take."""

    cases = []
    for path in sorted(glob.glob(str(folder / "*.json"))):
        doc = json.loads(Path(path).read_text())
        valid = [t["data"] for t in doc.get("tests", []) if t.get("valid")]
        if not valid:
            continue
        schema = json.dumps(doc["schema"])
        if not all_three_compile(schema):
            continue
        tokens = tokenizer.encode(json.dumps(valid[0], separators=(",", ":")), add_special_tokens=False)
        cases.append((schema, tokens[:64]))
        if len(cases) == limit:
            break
    return cases


class LeapgramSide:
    name = "leapgram"

    def __init__(self, tokenizer) -> None:
        self.vocab = leapgram.Vocabulary.from_huggingface(tokenizer)

    def compile(self, cases):
        compiler = leapgram.GrammarCompiler(self.vocab, cache_size=0)
        return [compiler.compile(Grammar.from_json_schema(schema, whitespace="compact")) for schema, _ in cases]

    def matchers(self, cases, compiled=None):
        for grammar in compiled or ():
            grammar._masks.clear()  # rows, lexer states and charts stay: each mask is computed again
        return [Matcher(grammar) for grammar in compiled or self.compile(cases)]

    def fill(self, matchers, bitmask, threads):
        leapgram.fill_next_token_bitmasks(matchers, bitmask, threads=threads)

    def consume(self, matcher, token):
        return matcher.consume_token(token)


class LlguidanceSide:
    name = "llguidance"

    def __init__(self, tokenizer) -> None:
        import llguidance
        import llguidance.hf
        import llguidance.numpy

        self.llg = llguidance
        self.tokenizer = llguidance.hf.from_tokenizer(tokenizer)
        self.par = llguidance.numpy.fill_next_token_bitmask_par
        self.executors = {}

    def compile(self, cases):
        options = json.dumps({"whitespace_flexible": False})
        return [self.llg.LLMatcher.grammar_from_json_schema(schema, options) for schema, _ in cases]

    def matchers(self, cases, compiled=None):
        return [self.llg.LLMatcher(self.tokenizer, grammar) for grammar in compiled or self.compile(cases)]

    def fill(self, matchers, bitmask, threads):
        executor = self.executors.setdefault(threads, self.llg.LLExecutor(threads))
        self.par(executor, [(m, i) for i, m in enumerate(matchers)], bitmask)

    def consume(self, matcher, token):
        return matcher.consume_token(token)


class XgrammarSide:
    name = "xgrammar"

    def __init__(self, tokenizer) -> None:
        import xgrammar as xgr

        self.xgr = xgr
        self.info = xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=len(tokenizer))
        self.batchers = {}

    def compile(self, cases):
        compiler = self.xgr.GrammarCompiler(self.info, cache_enabled=False)
        return [compiler.compile_json_schema(schema, any_whitespace=False, separators=(",", ":"))
                for schema, _ in cases]

    def matchers(self, cases, compiled=None):
        return [self.xgr.GrammarMatcher(grammar) for grammar in compiled or self.compile(cases)]

    def fill(self, matchers, bitmask, threads):
        batcher = self.batchers.setdefault(threads, self.xgr.BatchGrammarMatcher(threads))
        batcher.batch_fill_next_token_bitmask(matchers, bitmask)

    def consume(self, matcher, token):
        return matcher.accept_token(token)


def run(side, cases, threads: int, vocab_size: int, compiled=None) -> float:
    """Seconds spent in the batch fill calls over every step of every case's instance (on
    grammars compiled for this run, or on ``compiled`` ones, walked before)."""
    import torch

    matchers = side.matchers(cases, compiled)
    bitmask = torch.zeros((len(cases), (vocab_size + 31) // 32), dtype=torch.int32)
    target = bitmask.numpy() if side.name != "xgrammar" else bitmask
    live = list(range(len(cases)))
    spent = 0.0
    for step in range(max(len(tokens) for _, tokens in cases)):
        live = [i for i in live if step < len(cases[i][1])]
        if not live:
            break
        batch = [matchers[i] for i in live]
        start = time.perf_counter()
        side.fill(batch, target[: len(batch)] if side.name != "xgrammar" else target, threads)
        spent += time.perf_counter() - start
        for i in live:
            if not side.consume(matchers[i], cases[i][1][step]):
                raise RuntimeError(f"{side.name} rejected a valid instance's token at step {step} (case {i})")
    return spent


def accepts(side, case) -> bool:
    """Whether ``side`` takes the case's instance (a valid instance can still list its keys in
    another order than the schema declares, which all three refuse by default)."""
    matcher = side.matchers([case])[0]
    return all(side.consume(matcher, token) for token in case[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", default="2", help="thread counts to compare with 1, comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--model", default=None, help="tokenizer folder (default: the embedded SmolLM2)")
    parser.add_argument("--bench", type=Path, default=BENCH, help="folder of JSONSchemaBench files")
    parser.add_argument("--reuse", action="store_true",
                        help="compile once and walk once untimed; then time walks on those grammars "
                             "(leapgram's mask caches cleared, its lexer rows and charts kept)")
    args = parser.parse_args()
    counts = sorted({int(n) for n in args.threads.split(",")} - {1})
    from transformers import AutoTokenizer

    from leapgram.integrations import smollm2

    tokenizer = AutoTokenizer.from_pretrained(args.model or str(smollm2.cache_dir()))
    sides = [LeapgramSide(tokenizer), LlguidanceSide(tokenizer), XgrammarSide(tokenizer)]
    cases = load_cases(3 * args.batch, tokenizer, args.bench)
    for side in sides:
        taken = [case for case in cases if accepts(side, case)]
        print(f"{side.name} takes {len(taken)} of {len(cases)} instances")
        cases = taken
    cases = cases[: args.batch]
    steps = sum(len(t) for _, t in cases)
    print(f"{len(cases)} schemas, {steps} masks per run, threads 1 vs {counts}, best of {args.repeat}")
    for side in sides:
        compiled = side.compile(cases) if args.reuse else None
        run(side, cases, 1, len(tokenizer), compiled)  # warm-up: kernels, tables, pools (and rows)
        times = dict.fromkeys([1, *counts], float("inf"))
        for _ in range(args.repeat):  # interleaved, so that a change of the machine's load hits all
            for n, best in list(times.items()):
                times[n] = min(best, run(side, cases, n, len(tokenizer), compiled))
        one = times[1]
        many = "  ".join(f"{n} threads {times[n] * 1e3:8.1f} ms ({one / times[n]:4.2f}x)" for n in counts)
        print(f"{side.name:>10}: 1 thread {one * 1e3:8.1f} ms ({one / steps * 1e6:6.1f} us/mask)  {many}")

if __name__ == "__main__":
    main()
