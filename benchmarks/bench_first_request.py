"""A fresh process's first request: import, vocabulary, optional ``warm_up``, first schema and its masks.

``python benchmarks/bench_first_request.py [CASE.json] [--runs 2]`` starts fresh processes, as after an
installation's first run: one unmeasured process first fills numba's on-disk kernel cache and Python's
bytecode cache (kept under the temporary folder, since ``PYTHONDONTWRITEBYTECODE`` may be set), so
the measured ones load both. Each run is a pair of processes, without and with ``warm_up(vocab)``;
each prints the seconds of ``import leapgram``, of ``Vocabulary.from_tokenizer_json``, of
``warm_up``, of the first request (``compile_s``: the case's schema; ``masks_s``: one mask per
token of its first valid instance) and that request's largest mask (issue 26, criterion 4), and
the CPU seconds of the main thread and of the whole process (the kernel-loading thread included)
from the clock's start to the last mask: on a loaded machine they move far less than the wall
clock; with the garbage collector's CPU milliseconds and its full collections in that time. The
last lines are the medians. The default case is JSONSchemaBench's ``BFCL_simple_10``.

``--modes`` picks what each run's processes do, in turn (interleaved): ``plain`` (no warm-up),
``warm_up`` (with ``warm_up(vocab)``), ``nocache`` (no warm-up, ``LEAPGRAM_VOCAB_CACHE=0``: the
vocabulary parsed and the JSON Schema base pools built, as before their on-disk cache). The vocabulary cache lives in a temporary
folder of the run (``LEAPGRAM_CACHE_DIR``), filled by the unmeasured first process. The measured
process imports only the standard library's ``json``, ``os``, ``sys`` and ``time`` before its clock
starts, so ``import_s`` includes numpy and numba.

``--trees A,B`` compares checkouts of leapgram: each run then starts one process per tree and mode,
in turn, with the tree first on ``PYTHONPATH`` (``git worktree add --detach /tmp/base <commit>``
gives one). Every tree has its own warm-up process and vocabulary cache; the medians and the best
total (``import_to_last_mask_s``) are printed per tree and mode.
"""

from __future__ import annotations

import json
import os
import sys
import time

MODES = {"plain": {}, "warm_up": {}, "nocache": {"LEAPGRAM_VOCAB_CACHE": "0"}}


def child(tokenizer_json: str, request_path: str, warm: bool) -> dict:
    """Runs in the fresh process: the timings of one first request."""
    collections = _count_collections()
    start, start_cpu, start_thread = time.perf_counter(), time.process_time(), time.thread_time()
    import leapgram

    imported = time.perf_counter()
    vocab = leapgram.Vocabulary.from_tokenizer_json(tokenizer_json)
    if not vocab.eos_token_ids:
        eos = [i for i in vocab.special_token_ids if vocab.token_bytes(i) in (b"<|end_of_text|>", b"<|eot_id|>")]
        vocab = leapgram.Vocabulary.from_tokenizer_json(tokenizer_json, eos_token_ids=eos)
    loaded = time.perf_counter()
    if warm:
        leapgram.warm_up(vocab)
    warmed = time.perf_counter()
    with open(request_path, encoding="utf-8") as f:
        request = json.load(f)
    begin = time.perf_counter()
    compiled = leapgram.GrammarCompiler(vocab).compile(leapgram.Grammar.from_json_schema(json.loads(request["schema"])))
    matcher = leapgram.Matcher(compiled)
    masks_begin = time.perf_counter()
    bitmask = leapgram.allocate_token_bitmask(1, vocab.size)
    worst = 0.0
    for token in request["tokens"]:
        mask_start = time.perf_counter()
        matcher.fill_next_token_bitmask(bitmask, 0)
        worst = max(worst, time.perf_counter() - mask_start)
        matcher.consume_token(token)
    end, end_cpu, end_thread = time.perf_counter(), time.process_time(), time.thread_time()
    return {"warm_up": warm, "import_s": round(imported - start, 3), "vocabulary_s": round(loaded - imported, 3),
            "warm_up_s": round(warmed - loaded, 3), "compile_s": round(masks_begin - begin, 4),
            "masks_s": round(end - masks_begin, 4), "first_request_s": round(end - begin, 4),
            "masks": len(request["tokens"]), "largest_mask_ms": round(worst * 1e3, 2),
            "import_to_last_mask_s": round(end - start, 3), "main_thread_cpu_s": round(end_thread - start_thread, 3),
            "process_cpu_s": round(end_cpu - start_cpu, 3), "gc_cpu_ms": round(collections["cpu"] * 1e3, 1),
            "full_collections": collections["full"]}


def _count_collections() -> dict:
    """The garbage collector's CPU seconds (of the thread that ran each collection) and its full
    collections, counted from now on by a callback."""
    import gc

    counts = {"cpu": 0.0, "full": 0, "began": 0.0}

    def callback(phase: str, info: dict) -> None:
        if phase == "start":
            counts["began"] = time.thread_time()
        else:
            counts["cpu"] += time.thread_time() - counts["began"]
            counts["full"] += info["generation"] == 2

    gc.callbacks.append(callback)
    return counts


def main() -> int:
    if sys.argv[1:2] == ["--child"]:  # the measured process: nothing imported before its clock
        print(json.dumps(child(sys.argv[2], sys.argv[3], sys.argv[4] == "warm_up")))
        return 0
    import argparse
    import statistics
    import subprocess
    import tempfile
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_schemas import DEFAULT_FOLDER, load_cases, resolve_tokenizer

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("case", nargs="?", default=str(DEFAULT_FOLDER / "BFCL_simple_10.json"))
    parser.add_argument("--tokenizer", default="llama3")
    parser.add_argument("--runs", type=int, default=2, help="fresh processes per mode")
    parser.add_argument("--modes", default="plain,warm_up",
                        help=f"comma-separated, run in turn: {', '.join(MODES)} (see the docstring)")
    parser.add_argument("--trees", default="",
                        help="comma-separated leapgram checkouts to compare, run in turn (default: the installed one)")
    args = parser.parse_args()
    modes = args.modes.split(",")
    if not modes or set(modes) - set(MODES):
        raise SystemExit(f"--modes takes {', '.join(MODES)}, not {args.modes!r}")
    trees = [str(Path(tree).resolve()) for tree in args.trees.split(",") if tree] or [""]
    for tree in trees:
        if tree and not (Path(tree) / "leapgram" / "__init__.py").is_file():
            raise SystemExit(f"--trees: {tree} holds no leapgram/__init__.py")
    tokenizer = resolve_tokenizer(args.tokenizer)
    case_path = Path(args.case)
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / case_path.name).symlink_to(case_path.resolve())
        case = load_cases(Path(folder), tokenizer, None)[0]
        request = Path(folder) / "request.json"
        tokens = next(t for valid, t in case.instances if valid)
        request.write_text(json.dumps({"schema": case.schema, "tokens": tokens}), encoding="utf-8")
        pycache = Path(tempfile.gettempdir()) / "leapgram-bench-pycache"
        env = {**os.environ, "PYTHONPYCACHEPREFIX": str(pycache)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("LEAPGRAM_VOCAB_CACHE", None)

        def tree_env(number: int, tree: str) -> dict[str, str]:
            found = {**env, "LEAPGRAM_CACHE_DIR": str(Path(folder) / f"cache{number}")}
            if tree:
                found["PYTHONPATH"] = os.pathsep.join(filter(None, [tree, env.get("PYTHONPATH")]))
            return found

        envs = [tree_env(number, tree) for number, tree in enumerate(trees)]
        runs: dict[tuple[str, str], list[dict]] = {(tree, mode): [] for tree in trees for mode in modes}
        turns = [(t, "warm_up", False) for t in range(len(trees))]
        turns += [(t, mode, True) for _ in range(args.runs) for mode in modes for t in range(len(trees))]
        for number, mode, measured in turns:
            command = [sys.executable, __file__, "--child", str(tokenizer), str(request), mode]
            done = subprocess.run(command, capture_output=True, text=True, check=False,
                                  env={**envs[number], **MODES[mode]})
            lines = done.stdout.strip().splitlines()
            if done.returncode or not lines:
                print(done.stderr.strip()[-400:], flush=True)
            elif measured:
                runs[trees[number], mode].append(json.loads(lines[-1]))
                label = {"tree": trees[number]} if trees[number] else {}
                print(json.dumps({**label, "mode": mode, **json.loads(lines[-1])}), flush=True)
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        for (tree, mode), results in runs.items():
            if results:
                medians = {key: round(statistics.median(r[key] for r in results), 4)
                           for key in results[0] if key != "warm_up"}
                best = min(r["import_to_last_mask_s"] for r in results)
                label = {"tree": tree} if tree else {}
                print("median", json.dumps({**label, "mode": mode, "runs": len(results), **medians,
                                            "best_import_to_last_mask_s": best}), flush=True)
        print(f"load average at the end: {load:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
