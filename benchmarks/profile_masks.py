"""Profile leapgram's compile and masks in one process (no worker, no peers), for cProfile/py-spy.

``python benchmarks/profile_masks.py FOLDER [--sample N] [--cprofile OUT] [--repeat K]``: every
case of ``FOLDER`` (a JSONSchemaBench folder, or one with links to some of its files) is
compiled with a cleared compiler cache and walked over its valid instances, a mask per token,
as ``bench_schemas.py`` does; prints the thread-CPU TBM mean and TTFM p50, so a change can be
checked quickly before the full benchmark with peers.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_schemas import load_cases, mask_allows, resolve_tokenizer  # noqa: E402


def run(cases, engine) -> tuple[list[float], list[float]]:
    """TTFM (ms) and TBM thread CPU (µs) over ``cases``."""
    ttfm, tbm = [], []
    for case in cases:
        engine.prepare()
        start = time.perf_counter()
        try:
            compiled = engine.compile(case.schema)
            engine.fill(engine.matcher(compiled))
        except Exception:  # noqa: BLE001 - a schema leapgram does not take is skipped
            continue
        ttfm.append((time.perf_counter() - start) * 1e3)
        for valid, tokens in case.instances:
            if not valid:
                continue
            matcher = engine.matcher(compiled)
            for token in [*tokens, None]:
                t0 = time.thread_time_ns()
                engine.fill(matcher)
                tbm.append((time.thread_time_ns() - t0) / 1e3)
                if token is None or not mask_allows(engine.bitmask, token) or not engine.consume(matcher, token):
                    break
    return ttfm, tbm


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--tokenizer", default="llama3")
    parser.add_argument("--sample", type=int)
    parser.add_argument("--cprofile", help="write cProfile stats here")
    parser.add_argument("--repeat", type=int, default=1, help="runs over the cases (the first one is reported)")
    args = parser.parse_args()
    from bench_schemas import LeapgramEngine

    tokenizer = resolve_tokenizer(args.tokenizer)
    cases = load_cases(Path(args.folder), tokenizer, None, args.sample)
    engine = LeapgramEngine(tokenizer)
    gc.freeze()  # as bench_schemas' workers: collections scan the grammars, not the cases
    profiler = cProfile.Profile() if args.cprofile else None
    for n in range(args.repeat):
        if profiler is not None:
            profiler.enable()
        ttfm, tbm = run(cases, engine)
        if profiler is not None:
            profiler.disable()
        tbm.sort()
        print(json.dumps({"run": n, "cases": len(ttfm), "masks": len(tbm),
                          "tbm_cpu_mean_us": round(statistics.fmean(tbm), 1),
                          "tbm_cpu_p99_us": round(tbm[int(0.99 * (len(tbm) - 1))], 1),
                          "tbm_cpu_max_us": round(tbm[-1], 1),
                          "ttfm_p50_ms": round(statistics.median(ttfm), 3)}))
    if profiler is not None:
        profiler.dump_stats(args.cprofile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
