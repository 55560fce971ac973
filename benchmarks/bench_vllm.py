"""The same structured requests through vLLM with backends leapgram, guidance and xgrammar.

Workloads: ``--schemas`` JSONSchemaBench schemas (``../shared/jsonschemabench``, every schema that
all three backends' front ends take, spread over the set), each asked for with its first valid
instance as the target description; and the character workload of ``bench_generate.py`` (a
Harry Potter character as JSON, ``benchmarks/data/character.json``). All requests are submitted
together to one in-process engine (the embedded SmolLM2-135M-Instruct, CPU, float32, greedy,
seed 0, the same prompts and ``max_tokens``).

Fair on a shared machine: every backend runs in its own fresh process per round, ``--rounds``
rounds with the order rotated (L G X, X L G, G X L), so no backend always runs first or last.
Reported per run and as the median over the rounds: output tokens/s (wall time of the batch),
output tokens per CPU second of the process (engine, model, grammar and compile threads),
mean and p50 time to first token, invalid outputs (finished but not JSON or not valid under the
schema), outputs cut by ``max_tokens`` and, of those, the ones whose tokens llguidance or
leapgram reject as a prefix of a valid output; the manager's mask fill and token accept per
structured row (both on the engine's critical path), grammar ms per engine step, leapgram's
prefetch thread CPU per step, compile seconds (vLLM's compile threads) and the load average at
the run's start. Then leapgram ÷ the better peer, per round and median with min and max, in
tokens/s and tokens per CPU second. ``--max-tokens`` is 64 by default (the targets' median is about 45
tokens; about a third of the outputs are cut): 3 rounds of 3 engines took 10 minutes at load 2.
``--threads`` (default 1) is the model's OpenMP threads: with torch's default (one per core),
any other process on a 2-core machine stalls the model's parallel regions, and runs of the same
backend differed up to 7x in tokens/s (and 4x in CPU seconds per token); with one thread,
runs agree within a few percent. The table and raw results go to ``benchmarks/out/``.
``--first-request`` also times the first request's worst mask in a fresh process.
``--persistent`` starts one engine process per backend for all the rounds and gives each round
its own ``--schemas`` schemas (so every backend compiles fresh grammars each round while its
caches stay warm, as in a long-running server): with no start-up per run, more rounds fit, and
rounds close together in time pair the backends better against the machine's drift.
``--order balanced`` (the default) runs each rotation of the backends and then the same reversed,
so that over ``2 × backends`` rounds each backend runs in each place equally often; ``--warmup-rounds
K`` runs K rounds first and records nothing (the machine sped up by a quarter over a run's first
rounds after other processes stopped).

    .venv-vllm/bin/python benchmarks/bench_vllm.py [--schemas 64] [--characters 4] [--max-tokens 64]
        [--rounds 3] [--threads 1] [--backends leapgram,guidance,xgrammar] [--persistent] [--out FILE.json]
    .venv-vllm/bin/python benchmarks/bench_vllm.py --report RUN.json [RUN.json ...]   # rounds pooled
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


def requests(args, groups: int = 1) -> list[list[dict]]:
    """``groups`` batches, each of ``args.schemas`` schemas (every ``groups``-th of those chosen,
    so each batch spans the benchmark) and the first ``args.characters`` characters."""
    chosen = select_schemas(args.schemas * groups)
    character = json.loads((REPO / "benchmarks" / "data" / "character.json").read_text())
    batches = []
    for group in range(groups):
        out = []
        for name, schema, instance in chosen[group::groups]:
            target = json.dumps(instance)[:600]
            out.append({"workload": "jsonschemabench", "name": name, "schema": schema,
                        "prompt": f"Write a JSON value like this one: {target}"})
        for name in CHARACTERS[: args.characters]:
            out.append({"workload": "character", "name": name, "schema": character,
                        "prompt": CHARACTER_PROMPT.format(name=name)})
        batches.append(out)
    return batches


# ----- one backend, in its own process --------------------------------------------------------

def instrument() -> dict:
    """Time the manager's mask fills and token acceptance (both on the engine's critical path),
    with the rows they cover, and grammar compilation (vLLM's compile threads)."""
    from vllm.v1.engine.core import EngineCore
    from vllm.v1.executor.uniproc_executor import UniProcExecutor
    from vllm.v1.structured_output import StructuredOutputManager

    totals = {"fill_s": 0.0, "steps": 0, "fill_rows": 0, "accept_s": 0.0, "accept_rows": 0, "compile_s": 0.0,
              "engine_steps": 0, "step_s": 0.0, "forward_s": 0.0}
    timed(EngineCore, "step", totals, "step_s", "engine_steps")  # patched before the engine binds it
    timed(UniProcExecutor, "execute_model", totals, "forward_s")
    timed(UniProcExecutor, "sample_tokens", totals, "forward_s")
    timed(StructuredOutputManager, "_create_grammar", totals, "compile_s")
    timed(StructuredOutputManager, "accept_tokens", totals, "accept_s", "accept_rows")
    fill = StructuredOutputManager.grammar_bitmask

    def grammar_bitmask(self, requests, structured_output_request_ids, *a, **k):  # also counts the rows
        start = time.perf_counter()
        try:
            return fill(self, requests, structured_output_request_ids, *a, **k)
        finally:
            totals["fill_s"] += time.perf_counter() - start
            totals["steps"] += 1
            totals["fill_rows"] += len(structured_output_request_ids)

    StructuredOutputManager.grammar_bitmask = grammar_bitmask
    return totals


def timed(owner: type, name: str, totals: dict, key: str, count: str | None = None) -> None:
    """Add the wall time of every call of ``owner.name`` to ``totals[key]`` (and count the calls)."""
    method = getattr(owner, name)

    def wrapper(self, *a, **k):
        start = time.perf_counter()
        try:
            return method(self, *a, **k)
        finally:
            totals[key] += time.perf_counter() - start
            if count:
                totals[count] += 1

    setattr(owner, name, wrapper)


def count_gc(totals: dict) -> None:
    """Count and time the garbage collector's full (generation 2) and younger collections."""
    import gc

    started = [0.0]
    totals.update(gc2_n=0, gc2_s=0.0, gc01_s=0.0)

    def callback(phase: str, info: dict) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        elif info["generation"] == 2:
            totals["gc2_n"] += 1
            totals["gc2_s"] += time.perf_counter() - started[0]
        else:
            totals["gc01_s"] += time.perf_counter() - started[0]

    gc.callbacks.append(callback)


def start_engine(name: str, max_num_seqs: int) -> tuple[object, dict, float]:
    """One engine in this process (no engine-core subprocess, so the process's CPU time is the
    engine's) with ``max_num_seqs`` rows: the ``LLM``, the instrument's totals and the start-up
    seconds. Variants of leapgram: ``leapgram-prefetch`` runs its mask prefetch thread at normal
    priority (the default), ``leapgram-noprefetch`` without it, ``leapgram-idle`` under ``SCHED_IDLE``,
    ``leapgram-nice`` at nice +10, ``leapgram-cache8`` with 8 compiled grammars kept;
    ``leapgram-nowarm`` compiles without ``warm_first_masks``."""
    variants = {"leapgram-prefetch": ("LEAPGRAM_VLLM_PREFETCH", "1"),
                "leapgram-noprefetch": ("LEAPGRAM_VLLM_PREFETCH", "0"),
                "leapgram-idle": ("LEAPGRAM_VLLM_PREFETCH", "idle"),
                "leapgram-nice": ("LEAPGRAM_VLLM_PREFETCH", "nice"),
                "leapgram-cache8": ("LEAPGRAM_VLLM_CACHE_SIZE", "8"),
                "leapgram-nowarm": ("LEAPGRAM_VLLM_WARM_MASKS", "0")}
    backend = name
    if name in variants:
        backend, (key, value) = "leapgram", variants[name]
        os.environ[key] = value
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    from leapgram.integrations.smollm2 import cache_dir
    from leapgram.integrations.vllm import register

    register()
    totals = instrument()
    from vllm import LLM

    start = time.perf_counter()
    llm = LLM(str(cache_dir()), dtype="float32", enforce_eager=True, max_model_len=4096, seed=0,
              disable_log_stats=False, max_num_seqs=max_num_seqs, structured_outputs_config={"backend": backend})
    count_gc(totals)
    return llm, totals, time.perf_counter() - start


def run_batch(name: str, llm, totals: dict, reqs: list[dict], max_tokens: int) -> dict:
    """All of ``reqs`` submitted together to ``llm``, greedy; the figures of this batch alone."""
    from vllm import SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    for key in totals:
        totals[key] = 0
    tokenizer = llm.get_tokenizer()
    prompts = [tokenizer.apply_chat_template([{"role": "user", "content": r["prompt"]}], tokenize=False,
                                             add_generation_prompt=True) for r in reqs]
    params = [SamplingParams(max_tokens=max_tokens, temperature=0.0, seed=0,
                             structured_outputs=StructuredOutputsParams(json=r["schema"])) for r in reqs]
    try:  # the in-process engine's backend: leapgram's prefetch thread counts its work
        manager = llm.llm_engine.engine_core.engine_core.scheduler.structured_output_manager
        prefetcher = getattr(manager.backend, "prefetcher", None)
    except AttributeError:
        prefetcher = None
    before = (prefetcher.cpu_s, prefetcher.jobs) if prefetcher is not None else (0.0, 0)
    load = os.getloadavg()[0]
    start, cpu = time.perf_counter(), time.process_time()
    outputs = llm.generate(prompts, params, use_tqdm=False)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    totals["prefetch_cpu_s"] = prefetcher.cpu_s - before[0] if prefetcher is not None else 0.0
    totals["prefetch_jobs"] = prefetcher.jobs - before[1] if prefetcher is not None else 0
    return {"backend": name, "wall_s": wall, "cpu_s": cpu, "load_start": load,
            "load_end": os.getloadavg()[0], **totals, "results": [summarize(r, o) for r, o in zip(reqs, outputs)]}


def run_backend(name: str, reqs: list[dict], max_tokens: int) -> dict:
    """A fresh engine for one batch of ``reqs``."""
    llm, totals, startup = start_engine(name, len(reqs))
    return {"startup_s": startup, **run_batch(name, llm, totals, reqs, max_tokens)}


def serve_batches(name: str, max_num_seqs: int, max_tokens: int) -> None:
    """``--persistent``'s worker: one engine, then one batch per requests file named on stdin,
    each answered with a ``RESULT`` line on stdout."""
    llm, totals, startup = start_engine(name, max_num_seqs)
    print("READY " + json.dumps({"startup_s": startup}), flush=True)
    for line in sys.stdin:
        reqs = json.loads(Path(line.strip()).read_text())
        print("RESULT " + json.dumps(run_batch(name, llm, totals, reqs, max_tokens)), flush=True)


class PersistentWorker:
    """A ``--persistent`` engine process: started once, then given one batch at a time."""

    def __init__(self, backend: str, max_num_seqs: int, max_tokens: int, threads: int, log: Path) -> None:
        env = {**os.environ, "OMP_NUM_THREADS": str(threads)} if threads else None
        self.backend, self.log = backend, open(log, "w")  # noqa: SIM115 -- open until close()
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--worker", backend, "--serve", str(max_num_seqs), "--max-tokens",
             str(max_tokens)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True,
            cwd=REPO, env=env)
        self.read("READY ")

    def read(self, prefix: str) -> dict:
        for line in self.process.stdout:
            if line.startswith(prefix):
                return json.loads(line[len(prefix):])
        raise RuntimeError(f"{self.backend}'s engine process ended (log: {self.log.name})")

    def run(self, requests_file: Path) -> dict:
        self.process.stdin.write(f"{requests_file}\n")
        self.process.stdin.flush()
        return self.read("RESULT ")

    def cpu_s(self) -> float:
        """The engine process's CPU seconds so far (all its threads; Linux ``/proc``, else 0)."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=120)
        self.log.close()


def summarize(request: dict, output) -> dict:
    """One output: its tokens, time to first token, and ``error`` (not JSON or not valid under the
    schema) for a finished output; one cut by ``max_tokens`` is ``cut`` and checked later."""
    import jsonschema

    completion = output.outputs[0]
    error = None
    cut = completion.finish_reason == "length"
    if completion.finish_reason not in ("stop", "length"):
        error = f"finish_reason={completion.finish_reason}"
    elif not cut:
        try:
            jsonschema.validate(json.loads(completion.text), request["schema"])
        except Exception as exc:  # noqa: BLE001 -- any failure is an invalid output
            error = f"{type(exc).__name__}: {str(exc)[:120]}"
    metrics = output.metrics
    ttft = getattr(metrics, "first_token_latency", None) if metrics is not None else None
    return {"workload": request["workload"], "name": request["name"], "tokens": len(completion.token_ids),
            "token_ids": list(completion.token_ids), "ttft_s": ttft, "cut": cut, "error": error}


# ----- outputs cut by max_tokens: is what was written a valid prefix? -------------------------

def check_cut_prefixes(runs: list[dict], reqs: list[dict]) -> None:
    """For every output cut by ``max_tokens``, whether its tokens are a prefix that the schema
    allows, asked of two engines outside vLLM: llguidance (flexible whitespace, as vLLM's guidance
    backend sets it) and leapgram. Sets ``prefix_rejected_by`` on each cut result (empty: both
    accept it)."""
    import llguidance
    import llguidance.hf
    from transformers import AutoTokenizer

    from leapgram import Grammar, GrammarCompiler, Matcher, Vocabulary
    from leapgram.integrations.smollm2 import cache_dir

    tokenizer = AutoTokenizer.from_pretrained(str(cache_dir()))
    ll_tokenizer = llguidance.hf.from_tokenizer(tokenizer)
    compiler = GrammarCompiler(Vocabulary.from_huggingface(tokenizer))
    schemas = {(r["workload"], r["name"]): json.dumps(r["schema"]) for r in reqs}
    grammars: dict[str, tuple] = {}
    for run in runs:
        for result in run["results"]:
            if not result["cut"]:
                continue
            text = schemas[result["workload"], result["name"]]
            if text not in grammars:
                grammars[text] = (llguidance.LLMatcher.grammar_from_json_schema(
                    text, defaults={"whitespace_flexible": True}), compiler.compile(Grammar.from_json_schema(text)))
            ll_grammar, compiled = grammars[text]
            tokens = result["token_ids"]
            rejected = []
            if llguidance.LLMatcher(ll_tokenizer, ll_grammar, log_level=0).validate_tokens(tokens) < len(tokens):
                rejected.append("llguidance")
            if Matcher(compiled).validate_tokens(tokens) < len(tokens):
                rejected.append("leapgram")
            result["prefix_rejected_by"] = rejected


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

def run_stats(run: dict) -> dict:
    """One engine run's figures (times per row in µs, per step in ms)."""
    results = run["results"]
    tokens = sum(r["tokens"] for r in results)
    ttft = [r["ttft_s"] for r in results if r["ttft_s"] is not None]
    return {
        "tokens": tokens, "tok_s": tokens / run["wall_s"], "tok_cpu_s": tokens / run["cpu_s"],
        "ttft_mean": statistics.mean(ttft) if ttft else float("nan"),
        "ttft_p50": statistics.median(ttft) if ttft else float("nan"),
        "invalid": sum(r["error"] is not None for r in results),
        "cut": sum(r["cut"] for r in results),
        "cut_rejected": sum(bool(r.get("prefix_rejected_by")) for r in results),
        "fill_us_row": run["fill_s"] / max(1, run["fill_rows"]) * 1e6,
        "accept_us_row": run["accept_s"] / max(1, run["accept_rows"]) * 1e6,
        "grammar_ms_step": (run["fill_s"] + run["accept_s"]) / max(1, run["steps"]) * 1e3,
        "rows_step": run["fill_rows"] / max(1, run["steps"]),
        "prefetch_ms_step": run.get("prefetch_cpu_s", 0.0) / max(1, run["steps"]) * 1e3,
        "step_ms": run.get("step_s", 0.0) / max(1, run.get("engine_steps", 0)) * 1e3,
        "forward_ms": run.get("forward_s", 0.0) / max(1, run.get("engine_steps", 0)) * 1e3,
        "gc2_n": run.get("gc2_n", 0), "gc_s": run.get("gc2_s", 0.0) + run.get("gc01_s", 0.0),
    }


HEADER = (f"{'round':>5} {'backend':>9} {'tok/s':>6} {'tok/CPU-s':>9} {'TTFT mean':>9} {'TTFT p50':>8} "
          f"{'invalid':>7} {'cut':>3} {'cut bad':>7} {'fill us/row':>11} {'accept us/row':>13} "
          f"{'grammar ms/step':>15} {'prefetch ms/step':>16} {'rows/step':>9} {'steps':>5} {'compile s':>9} "
          f"{'load':>4} {'GC s':>6} {'GC2':>4} {'step ms':>7} {'forward ms':>10}")


def stats_line(label: str, backend: str, s: dict, run: dict | None) -> str:
    extra = (f"{run['steps']:5d} {run['compile_s']:9.2f} {run['load_start']:4.1f}" if run
             else f"{'':>5} {'':>9} {'':>4}")
    extra += f" {s['gc_s']:6.2f} {s['gc2_n']:4.0f} {s['step_ms']:7.1f} {s['forward_ms']:10.1f}"
    return (f"{label:>5} {backend:>9} {s['tok_s']:6.1f} {s['tok_cpu_s']:9.2f} {s['ttft_mean']:9.2f} "
            f"{s['ttft_p50']:8.2f} {s['invalid']:7d} {s['cut']:3d} {s['cut_rejected']:7d} "
            f"{s['fill_us_row']:11.1f} {s['accept_us_row']:13.1f} {s['grammar_ms_step']:15.3f} "
            f"{s['prefetch_ms_step']:16.3f} {s['rows_step']:9.1f} {extra}")


def report(rounds: list[list[dict]]) -> list[str]:
    """The table: every run, then each backend's median over the rounds, then leapgram ÷ the
    better peer per round (wall and CPU) with the median and the spread."""
    lines = [HEADER]
    per_backend: dict[str, list[dict]] = {}
    ratios: list[tuple[float, float]] = []
    for number, runs in enumerate(rounds, 1):
        stats = {}
        for run in runs:
            stats[run["backend"]] = s = run_stats(run)
            per_backend.setdefault(run["backend"], []).append(s)
            lines.append(stats_line(str(number), run["backend"], s, run))
        peers = [b for b in stats if not b.startswith("leapgram")]
        if "leapgram" in stats and peers:
            wall = stats["leapgram"]["tok_s"] / max(stats[b]["tok_s"] for b in peers)
            cpu = stats["leapgram"]["tok_cpu_s"] / max(stats[b]["tok_cpu_s"] for b in peers)
            ratios.append((wall, cpu))
            lines.append(f"{'':>5} order {' '.join(r['backend'] for r in runs)}: leapgram / better peer "
                         f"{wall:.3f}x (tok/s), {cpu:.3f}x (tok/CPU-s)")
        if any("idle_engines_cpu_s" in run for run in runs):
            lines.append(f"{'':>5} CPU s of the idle engines during each run: " + ", ".join(
                f"{run['backend']} {run.get('idle_engines_cpu_s', float('nan')):.2f}" for run in runs))
    for backend, values in per_backend.items():
        median = {key: statistics.median(v[key] for v in values) for key in values[0]}
        median["invalid"], median["cut"], median["cut_rejected"] = (
            sum(v[key] for v in values) for key in ("invalid", "cut", "cut_rejected"))  # totals
        lines.append(stats_line("med", backend, median, None))
    if ratios:
        for index, kind in ((0, "tok/s (wall)"), (1, "tok/CPU-s")):
            values = [r[index] for r in ratios]
            lines.append(f"leapgram / better peer, {kind}: median {statistics.median(values):.3f}x, "
                         f"min {min(values):.3f}x, max {max(values):.3f}x over {len(values)} rounds")
        medians = {b: statistics.median(v["tok_s"] for v in values) for b, values in per_backend.items()}
        peers = [b for b in medians if not b.startswith("leapgram")]
        if "leapgram" in medians and peers:
            best = max(peers, key=medians.get)
            low, high = bootstrap_interval(rounds, peers)
            lines.append(f"leapgram's median tok/s / the better peer's median ({best}): "
                         f"{medians['leapgram'] / medians[best]:.3f}x (95% bootstrap interval over rounds "
                         f"{low:.3f}-{high:.3f}x)")
            for peer in peers:
                paired = [runs_by["leapgram"] / runs_by[peer] for runs_by in round_tok_s(rounds)
                          if "leapgram" in runs_by and peer in runs_by]
                if paired:
                    lines.append(f"leapgram / {peer} in the same round, tok/s: median {statistics.median(paired):.3f}x, "
                                 f"geometric mean {statistics.geometric_mean(paired):.3f}x over {len(paired)} rounds")
    lines.append("med rows: medians over the rounds, except invalid / cut / cut bad, which are totals; "
                 "cut bad = cut outputs whose tokens llguidance or leapgram reject as a prefix; fill and accept: "
                 "the manager's calls on the engine's critical path, per structured row; prefetch: CPU time of "
                 "leapgram's mask prefetch thread (beside the forward pass, counted in tok/CPU-s); GC s: the garbage "
                 "collector's time during generation, GC2: its full collections; step ms: the engine's steps "
                 "(schedule, forward, bitmask, sampling, accept), forward ms: the model runner's part of them")
    for runs in rounds:
        for run in runs:
            for r in run["results"]:
                if r["error"] or r.get("prefix_rejected_by"):
                    lines.append(f"  {run['backend']}: {r['workload']}/{r['name']}: "
                                 f"{r['error'] or 'cut prefix rejected by ' + ', '.join(r['prefix_rejected_by'])}")
    return lines


def round_tok_s(rounds: list[list[dict]]) -> list[dict[str, float]]:
    """Each round's tok/s by backend."""
    return [{run["backend"]: run_stats(run)["tok_s"] for run in runs} for runs in rounds]


def bootstrap_interval(rounds: list[list[dict]], peers: list[str], draws: int = 4000) -> tuple[float, float]:
    """A 95% percentile interval of leapgram's median tok/s over the better peer's median, the
    rounds drawn with replacement (each round keeps its backends together), seeded."""
    import random

    per_round = [r for r in round_tok_s(rounds) if "leapgram" in r and all(p in r for p in peers)]
    if not per_round:
        return float("nan"), float("nan")
    pick, values = random.Random(0).choices, []
    for _ in range(draws):
        sample = pick(per_round, k=len(per_round))
        best = max(statistics.median(r[p] for r in sample) for p in peers)
        values.append(statistics.median(r["leapgram"] for r in sample) / best)
    values.sort()
    return values[int(0.025 * draws)], values[int(0.975 * draws) - 1]


def rotated(backends: list[str], number: int) -> list[str]:
    """Round ``number``'s order: L G X, X L G, G X L, ... (each backend first once in three)."""
    shift = number % len(backends)
    return backends[len(backends) - shift:] + backends[: len(backends) - shift]


def balanced(backends: list[str], number: int) -> list[str]:
    """Round ``number``'s order under ``--order balanced``: each rotation, then the same reversed
    (L G X, X G L, X L G, G L X, G X L, L X G): over ``2 * len(backends)`` rounds every backend
    runs in every place of a round equally often, and a drift of the machine's speed within a
    pair of rounds (runs of one batch took 24 s at a run's start and 18.5 s at its end) falls on
    all backends alike."""
    order = rotated(backends, number // 2)
    return order[::-1] if number % 2 else order


def run_worker(backend: str, requests_file: Path, max_tokens: int, threads: int) -> dict | None:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)} if threads else None
    done = subprocess.run([sys.executable, __file__, "--worker", backend, "--requests-file", str(requests_file),
                           "--max-tokens", str(max_tokens)], check=False, capture_output=True, text=True,
                          cwd=REPO, env=env)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        print(f"{backend}: failed ({done.returncode}):\n{done.stderr[-3000:]}", flush=True)
        return None
    return json.loads(lines[-1][len("RESULT "):])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--schemas", type=int, default=64)
    parser.add_argument("--characters", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1,
                        help="the model's OpenMP threads (OMP_NUM_THREADS) in each engine; 0: torch's default")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backends", default="leapgram,guidance,xgrammar")
    parser.add_argument("--first-request", action="store_true", help="also time the first request's worst mask")
    parser.add_argument("--out", help="where to write the raw results (JSON) and the table (.txt beside it); "
                        "default benchmarks/out/vllm-<UTC time>.json")
    parser.add_argument("--report", nargs="+", metavar="RUN.json",
                        help="print the table over the rounds of earlier runs' JSON files (no new runs)")
    parser.add_argument("--order", choices=("balanced", "rotated"), default="balanced",
                        help="the backends' order in each round: balanced (each rotation, then reversed) or rotated")
    parser.add_argument("--warmup-rounds", type=int, default=0,
                        help="rounds run first and not counted (--persistent: each with its own schemas)")
    parser.add_argument("--persistent", action="store_true",
                        help="one engine process per backend for all rounds, each round with its own schemas "
                        "(rounds cost no start-up, so more fit; the compile caches of every backend stay warm "
                        "between rounds, as in a long-running server)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--requests-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker in ("first-request-cold", "first-request-warm"):
        print(json.dumps(first_request(args.worker.endswith("warm"))))
        return
    if args.worker and args.serve:
        serve_batches(args.worker, args.serve, args.max_tokens)
        return
    if args.worker:
        reqs = json.loads(Path(args.requests_file).read_text())
        print("RESULT " + json.dumps(run_backend(args.worker, reqs, args.max_tokens)))
        return
    if args.report:
        rounds = [runs for path in args.report for runs in json.loads(Path(path).read_text())]
        print(f"{len(rounds)} rounds from {', '.join(args.report)}")
        print("\n".join(report(rounds)))
        return
    out = Path(args.out or REPO / "benchmarks" / "out" / time.strftime("vllm-%Y%m%dT%H%MZ.json", time.gmtime()))
    out.parent.mkdir(parents=True, exist_ok=True)
    batches = requests(args, args.rounds + args.warmup_rounds if args.persistent else 1)
    warmups = batches[args.rounds:] if args.persistent else batches[:1] * args.warmup_rounds
    reqs = batches[0]
    head = [f"{' '.join(sys.argv)}",
            (f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} CPUs; load average at start "
             f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"),
            (f"{len(reqs)} requests: {sum(r['workload'] == 'jsonschemabench' for r in reqs)} JSONSchemaBench "
             f"schemas, {sum(r['workload'] == 'character' for r in reqs)} characters; max_tokens {args.max_tokens}, "
             f"greedy, all submitted at once; "
             + ("one engine process per backend for all rounds, each round its own schemas; " if args.persistent
                else "one fresh engine process per backend and round; ")
             + f"OMP_NUM_THREADS={args.threads or 'default'}; order {args.order}; "
             + f"{args.warmup_rounds} warm-up round(s) first, not counted")]
    print("\n".join(head), flush=True)
    requests_file = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_vllm_requests_{os.getpid()}.json"
    backends = args.backends.split(",")
    workers: dict[str, PersistentWorker] = {}
    if args.persistent:
        for backend in backends:
            workers[backend] = PersistentWorker(backend, len(reqs), args.max_tokens, args.threads,
                                                out.with_name(f"{out.stem}-{backend}.log"))
            print(f"{backend}: engine started", flush=True)
    rounds: list[list[dict]] = []
    order = balanced if args.order == "balanced" else rotated

    def run_one(backend: str) -> dict | None:
        """One batch (the requests in ``requests_file``) on ``backend``: its engine process when
        persistent, else a fresh one."""
        if workers:
            return workers[backend].run(requests_file)
        return run_worker(backend, requests_file, args.max_tokens, args.threads)

    try:
        for number, reqs in enumerate(warmups):  # the engines and the machine settle; nothing recorded
            requests_file.write_text(json.dumps(reqs))
            for backend in order(backends, number):
                run = run_one(backend)
                print(f"warm-up {number + 1}: {backend} done in {run['wall_s']:.1f} s" if run else
                      f"warm-up {number + 1}: {backend} failed", flush=True)
        for number in range(args.rounds):
            reqs = batches[number % len(batches)]
            requests_file.write_text(json.dumps(reqs))
            runs = []
            for backend in order(backends, number):
                idle = {name: worker.cpu_s() for name, worker in workers.items() if name != backend}
                run = run_one(backend)
                if run is not None and idle:  # what the other (idle) engines took meanwhile
                    run["idle_engines_cpu_s"] = sum(workers[name].cpu_s() - cpu for name, cpu in idle.items())
                if run is not None:
                    runs.append(run)
                    idle_cpu = (f", idle engines' CPU {run['idle_engines_cpu_s']:.2f} s"
                                if "idle_engines_cpu_s" in run else "")
                    print(f"round {number + 1}: {backend} done in {run['wall_s']:.1f} s "
                          f"(load {run['load_start']:.1f} -> {run['load_end']:.1f}{idle_cpu})", flush=True)
            check_cut_prefixes(runs, reqs)
            rounds.append(runs)
            out.write_text(json.dumps(rounds, indent=1))  # the rounds so far, in case the rest never ends
            out.with_suffix(".txt").write_text("\n".join(head + report(rounds)) + "\n")
    finally:
        for worker in workers.values():
            worker.close()
        requests_file.unlink(missing_ok=True)
    lines = head + report(rounds)
    if args.first_request:
        for kind in ("first-request-cold", "first-request-warm"):  # each in a fresh process
            done = subprocess.run([sys.executable, __file__, "--worker", kind], check=False, capture_output=True,
                                  text=True)
            row = json.loads(done.stdout.strip().splitlines()[-1])
            lines.append(f"first request, {'with' if row['warm'] else 'without'} warm-up: start-up "
                         f"{row['startup_s']:.2f} s, compile {row['compile_s'] * 1e3:.1f} ms, worst mask "
                         f"{row['worst_mask_ms']:.1f} ms over {row['tokens']} tokens")
    lines.append(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\n".join(lines[len(head):]))
    out.write_text(json.dumps(rounds, indent=1))
    out.with_suffix(".txt").write_text("\n".join(lines) + "\n")
    print(f"wrote {out} and {out.with_suffix('.txt')}")


if __name__ == "__main__":
    main()
