"""Old against new leapgram mask by mask in one process, alternating per case (issue 26, criterion 3).

``python benchmarks/worst_ab.py FOLDER --base-root DIR [--base COMMIT] --only A,B [--cases-file F]
[--rounds R] [--warm N] [--aa]``: the base tree is ``DIR/leapgram_base`` (made from ``COMMIT`` as
``tree_ab.py`` makes it), the new one the ``leapgram`` on ``sys.path``; ``--aa`` puts the new
tree against itself. Both first walk ``N`` cases evenly spaced over ``FOLDER``, untimed (warm,
as ``worst_masks.py --warm``). Per round and named case, each tree (in alternating order)
clears its compiler cache, compiles the schema and walks its valid instances, every mask timed
by the thread's CPU clock, as ``worst_masks.py`` does. Printed per case, with the medians over
the rounds of each mask: the largest mask of each tree and the other tree's time at the same
mask, and the sum of the masks; then all masks new / old per round.
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_schemas import LeapgramEngine, load_cases, mask_allows, resolve_tokenizer
from tree_ab import BaseEngine, make_base, tree_parser
from worst_masks import only_cases


def mask_times(engine, case) -> list[float] | None:
    """Thread-CPU ms of every mask of ``case``'s valid instances; ``None`` if it does not compile."""
    engine.prepare()
    try:
        compiled = engine.compile(case.schema)
    except Exception:  # noqa: BLE001 - a schema leapgram does not take is skipped
        return None
    times = []
    for valid, tokens in case.instances:
        if not valid:
            continue
        matcher = engine.matcher(compiled)
        for token in [*tokens, None]:
            start = time.thread_time_ns()
            engine.fill(matcher)
            times.append((time.thread_time_ns() - start) / 1e6)
            if token is None or not mask_allows(engine.bitmask, token) or not engine.consume(matcher, token):
                break
    return times


def report(name: str, old: list[list[float]], new: list[list[float]]) -> tuple[float, float] | None:
    """Print one case's line (see the docstring); its median sums, or ``None`` when not comparable."""
    if not old[0] or not new[0] or len(old[0]) != len(new[0]):
        print(f"{name}: not compared ({'no masks' if not old[0] or not new[0] else 'mask counts differ'})")
        return None
    per_old = [statistics.median(run[i] for run in old) for i in range(len(old[0]))]
    per_new = [statistics.median(run[i] for run in new) for i in range(len(new[0]))]
    i = max(range(len(per_old)), key=per_old.__getitem__)
    j = max(range(len(per_new)), key=per_new.__getitem__)
    total_old, total_new = sum(per_old), sum(per_new)
    print(f"{name}: {len(per_old)} masks; largest old m{i} {per_old[i]:.2f} ms (new {per_new[i]:.2f}); "
          f"largest new m{j} {per_new[j]:.2f} (old {per_old[j]:.2f}); sum {total_old:.1f} -> {total_new:.1f} ms "
          f"({total_new / total_old:.3f})", flush=True)
    return total_old, total_new


def main() -> int:
    parser = tree_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="", help="comma-separated case names (file stems)")
    parser.add_argument("--cases-file", help="more case names, one a line")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--warm", type=int, default=10)
    parser.add_argument("--aa", action="store_true", help="the new tree against itself")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    if args.cases_file:
        names += Path(args.cases_file).read_text().split()
    if not args.aa:
        if args.base:
            make_base(Path(args.base_root), args.base)
        sys.path.insert(0, args.base_root)
    folder, tokenizer = Path(args.folder), resolve_tokenizer(args.tokenizer)
    engines = {"old": LeapgramEngine(tokenizer) if args.aa else BaseEngine(tokenizer), "new": LeapgramEngine(tokenizer)}
    for case in load_cases(folder, tokenizer, None, args.warm):
        for engine in engines.values():
            mask_times(engine, case)
    cases = only_cases(folder, tokenizer, names)
    gc.freeze()
    runs = {case.name: {"old": [], "new": []} for case in cases}
    for round_ in range(args.rounds):
        for k, case in enumerate(cases):
            for name in (("old", "new") if (k + round_) % 2 == 0 else ("new", "old")):
                runs[case.name][name].append(mask_times(engines[name], case) or [])
    totals = [report(case.name, runs[case.name]["old"], runs[case.name]["new"]) for case in cases]
    per_round = [(sum(sum(runs[c.name]["old"][r]) for c, t in zip(cases, totals) if t),
                  sum(sum(runs[c.name]["new"][r]) for c, t in zip(cases, totals) if t)) for r in range(args.rounds)]
    print("all masks new / old per round:", " ".join(f"{b / a:.3f}" for a, b in per_round if a))
    return 0


if __name__ == "__main__":
    sys.exit(main())
