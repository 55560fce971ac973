"""The worst warm masks over a JSONSchemaBench folder (issue 26, criterion 3).

``python benchmarks/worst_masks.py [FOLDER] [--tokenizer llama3] [--sample N] [--shard K/N]
[--threshold-ms 10] [--json OUT]``: one process loads the vocabulary and calls ``warm_up`` (every
kernel loaded, the trie, the slices and the JSON Schema base pool built), then, case by case,
clears the compiler's cache, compiles the schema and walks each valid instance, a mask per token
with EOS after it, as ``bench_schemas.py`` does. Every mask is timed by the thread's CPU clock
(a preempted mask on a shared machine costs a scheduler slice of wall time, not of CPU): the first
mask of each schema counts, it is what a server pays for a new request. So a mask is *warm* in
that the process has compiled other schemas before; it may still meet lexer states no schema
built before.

Printed: the counts (cases, masks, masks over 1, 5 and 10 ms, the thread-CPU mean), then every
mask at or over ``--threshold-ms`` (default 10 ms), slowest first: the case, the valid instance
and the mask's index in it, thread-CPU and wall ms, the garbage collector's CPU ms inside the
mask (a ``gc.callbacks`` clock), the kind of lexer state the mask starts from
(``profile_masks.state_kind``, taken before the mask, plus ``intersection`` where a lexeme's
expression holds ``&`` or ``~``), and the bytes consumed just before it. ``--json`` writes the
same rows with the lexer state's expressions. A case that takes longer than
``--case-timeout-s`` (default 60 s of wall time) is stopped by an alarm and reported; a case
whose compile raises is skipped (``bench_schemas.py`` reports those).

``--shard K/N`` takes every N-th case from the K-th (0-based), to split a run over processes;
``--only A,B`` takes the named cases (file stems), to re-measure them, and ``--warm N`` first
walks N cases evenly spaced over the folder, untimed, so the named ones meet a process that has
seen other schemas.
"""

from __future__ import annotations

import argparse
import gc
import json
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_schemas import DEFAULT_FOLDER, LeapgramEngine, load_cases, mask_allows, resolve_tokenizer
from profile_masks import state_kind


class CaseTimeout(Exception):
    """A case ran past ``--case-timeout-s``."""


def _alarm(signum, frame):
    raise CaseTimeout


def describe_state(compiled, state, kind: str) -> tuple[str, list[str]]:
    """``kind`` (the lexer state's kind, taken before the mask) with ``intersection`` added where a
    lexeme's expression holds ``&`` or ``~``, and the lexemes' expressions (short)."""
    from leapgram.mask.engines import CfgEngine

    engine = compiled._engine
    if not isinstance(engine, CfgEngine):
        return kind, []
    lexer = engine.lexer
    pool = lexer.pool
    items = lexer.items(engine.mask_key(state)[2])
    exprs = [f"{lexeme}: {pool.describe(expr, 160)}" for lexeme, expr in items]
    if any(pool.has_bool[expr] for _, expr in items):
        kind += " / intersection"
    return kind, exprs


def collector_clock() -> list[float]:
    """``[CPU seconds the garbage collector took so far]``, kept up to date by a callback (the
    thread's CPU clock of each collection)."""
    spent, began = [0.0], [0.0]

    def callback(phase: str, info: dict) -> None:
        if phase == "start":
            began[0] = time.thread_time()
        else:
            spent[0] += time.thread_time() - began[0]

    gc.callbacks.append(callback)
    return spent


def walk_case(engine, case, threshold_ms: float, rows: list, counts: dict, collector: list[float]) -> None:
    """Compile ``case`` and walk its valid instances, timing every mask (see the docstring)."""
    engine.prepare()
    try:
        compiled = engine.compile(case.schema)
    except Exception:  # noqa: BLE001 - not compiled: bench_schemas reports it
        counts["not compiled"] += 1
        return
    counts["cases"] += 1
    for n, (valid, tokens) in enumerate(case.instances):
        if not valid:
            continue
        matcher = engine.matcher(compiled)
        consumed = b""
        for i, token in enumerate([*tokens, None]):
            state = matcher._states[-1] if not matcher._pending[-1] else None
            kind = state_kind(compiled, state) if state is not None else "pending bytes"
            collected = collector[0]
            cpu = time.thread_time_ns()
            wall = time.perf_counter_ns()
            engine.fill(matcher)
            cpu_ms = (time.thread_time_ns() - cpu) / 1e6
            wall_ms = (time.perf_counter_ns() - wall) / 1e6
            gc_ms = (collector[0] - collected) * 1e3
            counts["masks"] += 1
            counts["cpu ms"] += cpu_ms
            for limit in (1, 5, 10):
                counts[f"over {limit} ms"] += cpu_ms >= limit
            if cpu_ms >= threshold_ms:
                kind, exprs = describe_state(compiled, state, kind) if state is not None else (kind, [])
                rows.append({"case": case.name, "instance": n, "mask": i, "cpu_ms": round(cpu_ms, 2),
                             "wall_ms": round(wall_ms, 2), "gc_ms": round(gc_ms, 2), "kind": kind,
                             "after": consumed[-40:].decode("utf-8", "replace"), "lexemes": exprs})
            if token is None or not mask_allows(engine.bitmask, token) or not engine.consume(matcher, token):
                break
            consumed += engine.vocab.token_bytes(token)


COUNTS = ("cases", "not compiled", "timed out", "masks", "cpu ms", "over 1 ms", "over 5 ms", "over 10 ms")


def only_cases(folder: Path, tokenizer: Path, names: list[str]) -> list:
    """The cases of ``folder`` named ``names`` (file stems), in that order."""
    import tempfile

    with tempfile.TemporaryDirectory() as links:
        for name in names:
            (Path(links) / f"{name}.json").symlink_to((folder / f"{name}.json").resolve())
        found = {case.name: case for case in load_cases(Path(links), tokenizer, None)}
    return [found[name] for name in names]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", default=str(DEFAULT_FOLDER))
    parser.add_argument("--tokenizer", default="llama3")
    parser.add_argument("--sample", type=int, help="this many cases, evenly spaced over the folder")
    parser.add_argument("--shard", default="0/1", help="K/N: every N-th case from the K-th")
    parser.add_argument("--threshold-ms", type=float, default=10.0)
    parser.add_argument("--case-timeout-s", type=float, default=60.0)
    parser.add_argument("--only", help="comma-separated case names (file stems): these cases only")
    parser.add_argument("--warm", type=int, default=0,
                        help="first walk this many cases evenly spaced over the folder, untimed")
    parser.add_argument("--json", help="write the counts and rows here")
    return parser.parse_args(argv)


def run(engine, cases: list, threshold_ms: float, case_timeout_s: float, collector: list[float]) -> tuple[dict, list, list]:
    """Walk ``cases`` (see the docstring): the counts, the rows of masks over ``threshold_ms``
    (slowest first) and the names of the cases stopped by the alarm."""
    signal.signal(signal.SIGALRM, _alarm)
    rows: list = []
    counts = dict.fromkeys(COUNTS, 0)
    timed_out = []
    for case in cases:
        signal.setitimer(signal.ITIMER_REAL, case_timeout_s)
        try:
            walk_case(engine, case, threshold_ms, rows, counts, collector)
        except CaseTimeout:
            counts["timed out"] += 1
            timed_out.append(case.name)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    rows.sort(key=lambda r: -r["cpu_ms"])
    counts["mean µs"] = round(counts.pop("cpu ms") * 1e3 / max(counts["masks"], 1), 1)
    return counts, rows, timed_out


def print_table(counts: dict, rows: list, timed_out: list, threshold_ms: float) -> None:
    print(", ".join(f"{v} {k}" for k, v in counts.items()))
    if timed_out:
        print("timed out: " + ", ".join(timed_out))
    print(f"masks over {threshold_ms:g} ms (thread CPU), slowest first")
    print("| schema | instance | mask | cpu ms | wall ms | gc ms | state kind | after |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['instance']} | {r['mask']} | {r['cpu_ms']} | {r['wall_ms']} | {r['gc_ms']} | "
              f"{r['kind']} | {json.dumps(r['after'], ensure_ascii=False)} |")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    k, n = map(int, args.shard.split("/"))
    folder, tokenizer = Path(args.folder), resolve_tokenizer(args.tokenizer)
    if args.only:
        cases = only_cases(folder, tokenizer, args.only.split(","))[k::n]
    else:
        cases = load_cases(folder, tokenizer, None, args.sample)[k::n]
    engine = LeapgramEngine(tokenizer)
    collector = collector_clock()
    for case in load_cases(folder, tokenizer, None, args.warm) if args.warm else ():
        walk_case(engine, case, float("inf"), [], dict.fromkeys(COUNTS, 0), collector)
    gc.freeze()  # as bench_schemas' workers: collections scan the grammars, not the cases
    start = time.perf_counter()
    counts, rows, timed_out = run(engine, cases, args.threshold_ms, args.case_timeout_s, collector)
    print(f"{len(cases)} cases in {time.perf_counter() - start:.0f} s")
    print_table(counts, rows, timed_out, args.threshold_ms)
    if args.json:
        Path(args.json).write_text(json.dumps({"counts": counts, "timed_out": timed_out, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
