"""The same structured requests through vLLM with backends leapgram, xgrammar and guidance.

Workloads: ``--schemas`` JSONSchemaBench schemas (``../shared/jsonschemabench``, every schema that
all three backends' front ends take, spread over the set), each asked for with its first valid
instance as the target description; and the character workload of ``bench_generate.py`` (a
Harry Potter character as JSON, ``benchmarks/data/character.json``). Each backend runs in a fresh
process with one in-process engine (the embedded SmolLM2-135M-Instruct, CPU, greedy decoding),
all requests submitted together. Reported per backend: output tokens/s (output tokens / wall
time of the whole batch), output tokens per CPU second of the process (engine, model and
grammar: steadier than wall time on a shared machine), mean and p50 time to first token, invalid outputs (not JSON, not valid
under the schema, or cut by ``max_tokens``), and grammar time per engine step (the manager's
``grammar_bitmask`` call, which fills every structured row of the step, plus its
``accept_tokens``, divided by the steps). Also, with ``--first-request``, the worst mask of the
first request in a fresh process, with and without leapgram's start-up warm-up.

    .venv-vllm/bin/python benchmarks/bench_vllm.py [--schemas 64] [--characters 8] [--max-tokens 256]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from peers import all_three_compile  # beside this script

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO.parent / "shared" / "jsonschemabench"
BACKENDS = ("leapgram", "xgrammar", "guidance")
CHARACTERS = ["Harry Potter", "Hermione Granger", "Ron Weasley", "Albus Dumbledore", "Severus Snape",
              "Rubeus Hagrid", "Draco Malfoy", "Ginny Weasley", "Neville Longbottom", "Luna Lovegood",
              "Minerva McGonagall", "Sirius Black"]
CHARACTER_PROMPT = ("{name} is a character in Harry Potter. Please fill in the following information about "
                    "this character as JSON: name, house, blood status, occupation, wand (wood, core, "
                    "length), alive and patronus.")


def select_schemas(count: int) -> list[tuple[str, dict, object]]:
    """(name, schema, first valid instance) for ``count`` schemas spread over the benchmark that
    leapgram, XGrammar and llguidance all accept."""


    paths = sorted(glob.glob(str(BENCH / "*.json")))
    stride = max(1, len(paths) // (count * 3))
    chosen = []
    for path in paths[::stride]:
        doc = json.loads(Path(path).read_text())
        valid = [t["data"] for t in doc.get("tests", []) if t.get("valid")]
        if not valid or not isinstance(doc.get("schema"), dict):
            continue
        text = json.dumps(doc["schema"])
        if not all_three_compile(text) or vllm_refuses_for_xgrammar(doc["schema"]):
            continue
        chosen.append((Path(path).stem, doc["schema"], valid[0]))
        if len(chosen) == count:
            break
    return chosen


def vllm_refuses_for_xgrammar(schema: dict) -> bool:
    """Whether vLLM's own check refuses the schema for its xgrammar backend (stricter than
    XGrammar's compiler: a 400 for the whole batch otherwise)."""
    from vllm.v1.structured_output.backend_xgrammar import has_xgrammar_unsupported_json_features

    return has_xgrammar_unsupported_json_features(schema)


def requests(args) -> list[dict]:
    out = []
    for name, schema, instance in select_schemas(args.schemas):
        target = json.dumps(instance)[:600]
        out.append({"workload": "jsonschemabench", "name": name, "schema": schema,
                    "prompt": f"Write a JSON value like this one: {target}"})
    character = json.loads((REPO / "benchmarks" / "data" / "character.json").read_text())
    for name in CHARACTERS[: args.characters]:
        out.append({"workload": "character", "name": name, "schema": character,
                    "prompt": CHARACTER_PROMPT.format(name=name)})
    return out


# ----- one backend, in its own process --------------------------------------------------------

def instrument() -> dict:
    """Time the manager's mask fills and token acceptance (both run on the engine's critical path)."""
    from vllm.v1.structured_output import StructuredOutputManager

    totals = {"bitmask_s": 0.0, "steps": 0, "accept_s": 0.0, "compile_s": 0.0}
    fill, accept = StructuredOutputManager.grammar_bitmask, StructuredOutputManager.accept_tokens
    create = StructuredOutputManager._create_grammar

    def _create_grammar(self, *a, **k):  # in vLLM's compile threads, off the critical path unless it holds the GIL
        start = time.perf_counter()
        try:
            return create(self, *a, **k)
        finally:
            totals["compile_s"] += time.perf_counter() - start

    def grammar_bitmask(self, *a, **k):
        start = time.perf_counter()
        try:
            return fill(self, *a, **k)
        finally:
            totals["bitmask_s"] += time.perf_counter() - start
            totals["steps"] += 1

    def accept_tokens(self, *a, **k):
        start = time.perf_counter()
        try:
            return accept(self, *a, **k)
        finally:
            totals["accept_s"] += time.perf_counter() - start

    StructuredOutputManager.grammar_bitmask = grammar_bitmask
    StructuredOutputManager.accept_tokens = accept_tokens
    StructuredOutputManager._create_grammar = _create_grammar
    return totals


def run_backend(backend: str, reqs: list[dict], max_tokens: int) -> dict:
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    from leapgram.integrations.smollm2 import cache_dir
    from leapgram.integrations.vllm import register

    register()
    totals = instrument()
    from vllm import LLM, SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    start = time.perf_counter()
    llm = LLM(str(cache_dir()), dtype="float32", enforce_eager=True, max_model_len=4096, seed=0,
              disable_log_stats=False, max_num_seqs=64, structured_outputs_config={"backend": backend})
    startup = time.perf_counter() - start
    tokenizer = llm.get_tokenizer()
    prompts = [tokenizer.apply_chat_template([{"role": "user", "content": r["prompt"]}], tokenize=False,
                                             add_generation_prompt=True) for r in reqs]
    params = [SamplingParams(max_tokens=max_tokens, temperature=0.0,
                             structured_outputs=StructuredOutputsParams(json=r["schema"])) for r in reqs]
    start, cpu = time.perf_counter(), time.process_time()
    outputs = llm.generate(prompts, params, use_tqdm=False)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"backend": backend, "startup_s": startup, "wall_s": wall, "cpu_s": cpu, **totals,
            "results": [summarize(r, o) for r, o in zip(reqs, outputs)]}


def summarize(request: dict, output) -> dict:
    import jsonschema

    completion = output.outputs[0]
    error = None
    if completion.finish_reason != "stop":
        error = f"finish_reason={completion.finish_reason}"
    else:
        try:
            jsonschema.validate(json.loads(completion.text), request["schema"])
        except Exception as exc:  # noqa: BLE001 -- any failure is an invalid output
            error = f"{type(exc).__name__}: {str(exc)[:120]}"
    metrics = output.metrics
    ttft = getattr(metrics, "first_token_latency", None) if metrics is not None else None
    return {"workload": request["workload"], "name": request["name"], "tokens": len(completion.token_ids),
            "ttft_s": ttft, "error": error}


# ----- first request in a fresh process -------------------------------------------------------

def first_request(warm: bool) -> dict:
    """The worst mask of a first JSON request, right after a backend-equivalent start-up."""
    from transformers import AutoTokenizer

    from leapgram import Matcher, allocate_token_bitmask
    from leapgram.integrations.smollm2 import cache_dir
    from leapgram.integrations.vllm import GrammarCache, _compiler_for, vocabulary_for, warm_up

    tokenizer = AutoTokenizer.from_pretrained(str(cache_dir()))
    start = time.perf_counter()
    cache = GrammarCache(_compiler_for(vocabulary_for(tokenizer, len(tokenizer))), 8)
    if warm:
        warm_up(cache.compiler)
    startup = time.perf_counter() - start
    schema = json.loads((REPO / "benchmarks" / "data" / "character.json").read_text())
    instance = {"name": "Luna Lovegood", "house": "Ravenclaw", "blood_status": "Pure-blood", "occupation": "Naturalist",
                "wand": {"wood": "unknown", "core": "unknown", "length": 10.5}, "alive": "Alive", "patronus": "Hare"}
    start = time.perf_counter()
    compiled = cache.get("JSON", json.dumps(schema))
    compile_s = time.perf_counter() - start
    matcher, bitmask, worst = Matcher(compiled), allocate_token_bitmask(1, len(tokenizer)), 0.0
    for token in tokenizer.encode(json.dumps(instance), add_special_tokens=False):
        start = time.perf_counter()
        matcher.fill_next_token_bitmask(bitmask, 0)
        worst = max(worst, time.perf_counter() - start)
        if not matcher.consume_token(token):
            break
    return {"warm": warm, "startup_s": startup, "compile_s": compile_s, "worst_mask_ms": worst * 1e3,
            "tokens": matcher.num_tokens}


# ----- report ---------------------------------------------------------------------------------

def report(runs: list[dict]) -> None:
    print(f"{'backend':>10} {'workload':>16} {'reqs':>4} {'invalid':>7} {'out tok/s':>9} {'tok/CPU-s':>9} "
          f"{'TTFT mean':>9} {'TTFT p50':>8} {'grammar ms/step':>15} {'start-up s':>10}")
    for run in runs:
        per_step = (run["bitmask_s"] + run["accept_s"]) / max(1, run["steps"]) * 1e3
        tokens = sum(r["tokens"] for r in run["results"])
        for workload in ("all", "jsonschemabench", "character"):
            rows = [r for r in run["results"] if workload in ("all", r["workload"])]
            if not rows:
                continue
            ttft = [r["ttft_s"] for r in rows if r["ttft_s"] is not None]
            invalid = sum(r["error"] is not None for r in rows)
            rate = (f"{tokens / run['wall_s']:9.1f} {tokens / run['cpu_s']:9.2f}" if workload == "all"
                    else f"{'':>9} {'':>9}")
            step = f"{per_step:15.3f}" if workload == "all" else f"{'':>15}"
            print(f"{run['backend']:>10} {workload:>16} {len(rows):4d} {invalid:7d} {rate} "
                  f"{statistics.mean(ttft) if ttft else float('nan'):9.2f} "
                  f"{statistics.median(ttft) if ttft else float('nan'):8.2f} {step} "
                  f"{run['startup_s'] if workload == 'all' else float('nan'):10.1f}")
    for run in runs:
        tokens = sum(r["tokens"] for r in run["results"])
        print(f"{run['backend']:>10}: {run['steps']} steps, {tokens} output tokens, wall {run['wall_s']:.1f} s, "
              f"fill {run['bitmask_s'] * 1e3 / max(1, run['steps']):.3f} + accept "
              f"{run['accept_s'] * 1e3 / max(1, run['steps']):.3f} ms/step, compile {run.get('compile_s', 0.0):.2f} s "
              "in all (vLLM's compile threads)")
    for run in runs:
        for r in run["results"]:
            if r["error"]:
                print(f"  {run['backend']}: {r['workload']}/{r['name']}: {r['error']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schemas", type=int, default=64)
    parser.add_argument("--characters", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--first-request", action="store_true", help="also time the first request's worst mask")
    parser.add_argument("--out", help="write the raw results as JSON here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--requests-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker in ("first-request-cold", "first-request-warm"):
        print(json.dumps(first_request(args.worker.endswith("warm"))))
        return
    if args.worker:
        reqs = json.loads(Path(args.requests_file).read_text())
        print("RESULT " + json.dumps(run_backend(args.worker, reqs, args.max_tokens)))
        return
    reqs = requests(args)
    print(f"{len(reqs)} requests: {sum(r['workload'] == 'jsonschemabench' for r in reqs)} JSONSchemaBench schemas, "
          f"{sum(r['workload'] == 'character' for r in reqs)} characters; max_tokens {args.max_tokens}, greedy",
          flush=True)
    requests_file = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_vllm_requests_{os.getpid()}.json"
    requests_file.write_text(json.dumps(reqs))
    runs = []
    for backend in args.backends.split(","):
        done = subprocess.run([sys.executable, __file__, "--worker", backend, "--requests-file", str(requests_file),
                               "--max-tokens", str(args.max_tokens)], capture_output=True, text=True, cwd=REPO)
        lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
        if done.returncode or not lines:
            print(f"{backend}: failed ({done.returncode}):\n{done.stderr[-3000:]}")
            continue
        runs.append(json.loads(lines[-1][len("RESULT "):]))
        print(f"{backend}: done in {runs[-1]['wall_s']:.1f} s", flush=True)
    report(runs)
    if args.first_request:
        for kind in ("first-request-cold", "first-request-warm"):  # each in a fresh process
            done = subprocess.run([sys.executable, __file__, "--worker", kind], capture_output=True, text=True)
            row = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"first request, {'with' if row['warm'] else 'without'} warm-up: start-up {row['startup_s']:.2f} s, "
                  f"compile {row['compile_s'] * 1e3:.1f} ms, worst mask {row['worst_mask_ms']:.1f} ms "
                  f"over {row['tokens']} tokens")
    if args.out:
        Path(args.out).write_text(json.dumps(runs, indent=1))


if __name__ == "__main__":
    main()
