"""A fresh process's first request: import, vocabulary, optional ``warm_up``, first schema and its masks.

``python benchmarks/bench_first_request.py [CASE.json] [--runs 2]`` starts fresh processes, as after an
installation's first run: one unmeasured process first fills numba's on-disk kernel cache and Python's
bytecode cache (kept under the temporary folder, since ``PYTHONDONTWRITEBYTECODE`` may be set), so
the measured ones load both. Each run is a pair of processes, without and with ``warm_up(vocab)``;
each prints the seconds of ``import leapgram``, of ``Vocabulary.from_tokenizer_json``, of
``warm_up``, of the first request (``compile_s``: the case's schema; ``masks_s``: one mask per
token of its first valid instance) and that request's largest mask (issue 26, criterion 4). The
last lines are the medians. The default case is JSONSchemaBench's ``BFCL_simple_10``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_schemas import DEFAULT_FOLDER, load_cases, resolve_tokenizer


def child(tokenizer_json: str, request_path: str, warm: bool) -> dict:
    """Runs in the fresh process: the timings of one first request."""
    start = time.perf_counter()
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
    request = json.loads(Path(request_path).read_text(encoding="utf-8"))
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
    end = time.perf_counter()
    return {"warm_up": warm, "import_s": round(imported - start, 3), "vocabulary_s": round(loaded - imported, 3),
            "warm_up_s": round(warmed - loaded, 3), "compile_s": round(masks_begin - begin, 4),
            "masks_s": round(end - masks_begin, 4), "first_request_s": round(end - begin, 4),
            "masks": len(request["tokens"]), "largest_mask_ms": round(worst * 1e3, 2),
            "import_to_last_mask_s": round(end - start, 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("case", nargs="?", default=str(DEFAULT_FOLDER / "BFCL_simple_10.json"))
    parser.add_argument("--tokenizer", default="llama3")
    parser.add_argument("--runs", type=int, default=2, help="fresh processes with and without warm-up each")
    parser.add_argument("--child", nargs=2, metavar=("REQUEST", "WARM"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    tokenizer = resolve_tokenizer(args.tokenizer)
    if args.child:
        print(json.dumps(child(str(tokenizer), args.child[0], args.child[1] == "1")))
        return 0
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
        runs: dict[str, list[dict]] = {"0": [], "1": []}
        for number, warm in enumerate(["1"] + [w for _ in range(args.runs) for w in ("0", "1")]):
            command = [sys.executable, __file__, "--tokenizer", str(tokenizer), "--child", str(request), warm]
            done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
            lines = done.stdout.strip().splitlines()
            if done.returncode or not lines:
                print(done.stderr.strip()[-400:], flush=True)
            elif number:
                runs[warm].append(json.loads(lines[-1]))
                print(lines[-1], flush=True)
        for warm, results in runs.items():
            if results:
                medians = {key: round(statistics.median(r[key] for r in results), 4)
                           for key in results[0] if key != "warm_up"}
                print("median", json.dumps({"warm_up": warm == "1", **medians}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
