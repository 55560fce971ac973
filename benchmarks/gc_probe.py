"""Every garbage collection of a ``worst_masks.py`` walk, and what the full ones scan.

``python benchmarks/gc_probe.py [FOLDER] [--shard K/N] [--sample N] [--only A,B] [--skip S]
[--limit L] [--owners]``: the walk of ``worst_masks.py`` (one process, ``warm_up``, then
``gc.freeze()`` and, case by case, compile and a mask per token along each valid instance), with
a ``gc.callbacks`` probe that records every collection: its generation, the thread's CPU ms,
the objects it collected, and whether it ran inside a fill (``engine.fill``) or outside (compile,
``consume_token``, the harness). Printed: count, ms, mean and largest per generation, inside and
outside fills; then each full (generation 2) collection: ms, collected, the case and the fill it
landed in (``-`` outside one), and the tracked objects left after it (all in generation 2 then;
counted after the clock stops).

``--owners``: after each case's walk (its grammar and last matcher kept alive, no collection
since the last automatic one), the tracked objects and references a full collection would scan,
grouped by the attribute of the grammar that holds them (``pool.args``, ``lexer._items``, ...).
It walks the whole object graph per case: use it with ``--only`` or a small ``--limit``.
``--promotions``: what each generation-1 collection moved into generation 2, by type (a tuple by
its items' types): what counts towards the next full collection (CPython 3.11 runs one once the
objects moved there since the last exceed a quarter of those it left).

``--skip`` and ``--limit`` slice the shard's cases (after ``--shard``). Design notes:
``docs/design/performance-by-source.md``, "Round 25: collections inside masks".
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import worst_masks
from bench_schemas import DEFAULT_FOLDER, LeapgramEngine, load_cases, resolve_tokenizer


class CollectionLog:
    """A ``gc.callbacks`` probe: one row per collection (generation, thread-CPU ms, collected,
    case, fill index or ``None`` outside a fill, tracked objects after a full one)."""

    def __init__(self, promotions: bool = False) -> None:
        self.rows: list[tuple] = []
        self.promoted: Counter | None = Counter() if promotions else None
        self._old: set[int] = set()
        self.case = ""
        self.fill: int | None = None
        self.fills = 0
        self._began = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        generation = info["generation"]
        if phase == "start":
            if self.promoted is not None and generation == 1:
                self._old = {id(o) for o in gc.get_objects(2)}
            self._began = time.thread_time()
            return
        ms = (time.thread_time() - self._began) * 1e3
        if self.promoted is not None and generation == 1:
            self.promoted.update(shape(o) for o in gc.get_objects(2) if id(o) not in self._old)
            self._old = set()
        after = len(gc.get_objects(2)) if generation == 2 else 0
        self.rows.append((generation, ms, info["collected"], self.case, self.fill, after))

    def wrap_fill(self, engine) -> None:
        """Count ``engine.fill`` calls, so a collection knows the fill it landed in."""
        fill = engine.fill

        def counted(matcher):
            self.fill = self.fills
            self.fills += 1
            try:
                return fill(matcher)
            finally:
                self.fill = None

        engine.fill = counted


def shape(o) -> str:
    """A tuple as the types of its items (``(bool,tuple)``), anything else as its type's name.
    Items are read with ``gc.get_referents`` (a tuple being built may hold NULLs)."""
    if type(o) is not tuple:
        return type(o).__name__
    return "(" + ",".join(type(x).__name__ for x in reversed(gc.get_referents(o))) + ")"


def owners(compiled, matcher) -> tuple[Counter, Counter]:
    """The tracked objects (not frozen) reachable from ``compiled``'s pool, lexer, engine and
    itself and from ``matcher``, and their references, keyed by the first attribute that reaches
    them; ``(other)``: the tracked objects none of them reaches."""
    live = {id(o): o for o in gc.get_objects()}
    engine = compiled._engine
    lexer = getattr(engine, "lexer", None)
    holders = [("pool", getattr(lexer, "pool", None)), ("lexer", lexer), ("engine", engine),
               ("compiled", compiled), ("matcher", matcher)]
    seen = {id(live)}
    for _, holder in holders:
        if holder is not None:
            seen.update((id(holder), id(vars(holder))))
    objects, references = Counter(), Counter()
    for prefix, holder in holders:
        for name, value in (vars(holder).items() if holder is not None else ()):
            stack = [value]
            while stack:
                o = stack.pop()
                if id(o) in seen or id(o) not in live:
                    continue
                seen.add(id(o))
                inside = gc.get_referents(o)
                objects[f"{prefix}.{name}"] += 1
                references[f"{prefix}.{name}"] += len(inside)
                stack.extend(inside)
    rest = [o for key, o in live.items() if key not in seen]
    objects["(other)"] = len(rest)
    references["(other)"] = sum(len(gc.get_referents(o)) for o in rest)
    return objects, references


def print_owners(name: str, objects: Counter, references: Counter, top: int = 12) -> None:
    total = sum(references.values())
    print(f"{name}: {sum(objects.values())} tracked objects, {total} references")
    for key, refs in references.most_common(top):
        print(f"   {key:28s} {objects[key]:7d} objects {refs:8d} references ({100 * refs / max(total, 1):.0f}%)")


def walk(engine, cases: list, log: CollectionLog, with_owners: bool) -> dict:
    """``worst_masks.walk_case`` over ``cases``; with ``with_owners``, the last matcher of each
    case (and so its grammar) is kept alive for :func:`owners` after its walk."""
    counts = dict.fromkeys(worst_masks.COUNTS, 0)
    clock = worst_masks.collector_clock()
    last = [None]
    if with_owners:
        make = engine.matcher

        def kept(compiled):
            last[0] = make(compiled)
            return last[0]

        engine.matcher = kept
    for case in cases:
        log.case = case.name
        last[0] = None
        worst_masks.walk_case(engine, case, float("inf"), [], counts, clock)
        if last[0] is not None:
            enabled = gc.isenabled()
            gc.disable()
            print_owners(case.name, *owners(last[0].compiled, last[0]))
            if enabled:
                gc.enable()
    return counts


def print_log(rows: list[tuple]) -> None:
    print("| generation | where | collections | ms | mean ms | largest ms | collected |")
    print("|---|---|---|---|---|---|---|")
    for generation in range(3):
        for inside in (True, False):
            mine = [r for r in rows if r[0] == generation and (r[4] is not None) == inside]
            if mine:
                ms = [r[1] for r in mine]
                print(f"| {generation} | {'in fills' if inside else 'outside'} | {len(mine)} | {sum(ms):.1f} | "
                      f"{sum(ms) / len(ms):.3f} | {max(ms):.2f} | {sum(r[2] for r in mine)} |")
    print("full collections: ms, collected, case, fill (- outside one), tracked objects after")
    for _, ms, collected, case, fill, after in (r for r in rows if r[0] == 2):
        print(f"  {ms:7.2f} {collected:6d}  {case}  {'-' if fill is None else fill}  {after}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", default=str(DEFAULT_FOLDER))
    parser.add_argument("--tokenizer", default="llama3")
    parser.add_argument("--sample", type=int)
    parser.add_argument("--shard", default="0/1")
    parser.add_argument("--only")
    parser.add_argument("--skip", type=int, default=0)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--owners", action="store_true")
    parser.add_argument("--promotions", action="store_true",
                        help="what generation-1 collections move into generation 2, by shape")
    args = parser.parse_args(argv)
    k, n = map(int, args.shard.split("/"))
    folder, tokenizer = Path(args.folder), resolve_tokenizer(args.tokenizer)
    if args.only:
        cases = worst_masks.only_cases(folder, tokenizer, args.only.split(","))[k::n]
    else:
        cases = load_cases(folder, tokenizer, None, args.sample)[k::n]
    cases = cases[args.skip:None if args.limit is None else args.skip + args.limit]
    engine = LeapgramEngine(tokenizer)
    log = CollectionLog(args.promotions)
    log.wrap_fill(engine)
    gc.freeze()  # as worst_masks and bench_schemas' workers
    gc.callbacks.append(log)
    start = time.perf_counter()
    counts = walk(engine, cases, log, args.owners)
    gc.callbacks.remove(log)
    gc.unfreeze()
    print(f"{len(cases)} cases in {time.perf_counter() - start:.0f} s; {log.fills} fills")
    if not args.owners:
        print(", ".join(f"{round(v)} {k}" for k, v in counts.items()), "(fill thread CPU)")
    print_log(log.rows)
    if log.promoted:
        total = sum(log.promoted.values())
        print(f"moved into generation 2 by generation-1 collections: {total}")
        for key, count in log.promoted.most_common(12):
            print(f"  {count:8d} {100 * count / total:4.1f}% {key}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
