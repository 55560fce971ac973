"""What the walk kernel's returns to Python cost the masks it computes, by return code.

``python benchmarks/walk_returns_probe.py FOLDER [--sample N] [--passes P] [--tokenizer NAME]``:
the cases of ``FOLDER`` (a JSONSchemaBench folder, or one with links to some of its files) are
walked as ``profile_masks.py`` does, once untimed, then ``P`` passes counted. For the masks
computed (``CfgEngine.new_mask``) it prints their number and thread CPU, then per return code of
``walk_cfg_kernel`` (and of ``advance_cfg_kernel``, from ``consume_token``, which no mask pays)
how many a pass and a mask, and for the walk's the thread CPU from the return to the next call
(what Python does there). ``NEED_FRESH`` is split by what ``ChartArena.fresh_of`` finds: a set
of lexemes the lexer knows already (another arena of the grammar met it: ``known``), a set new
to the lexer whose fresh state it has (``new set``), or a new state (``new state``). Nothing in
leapgram changes: the kernels' direct entries and ``fresh_of`` are wrapped here. Docs:
docs/design/earley-walk.md, "Round 25: known fresh states".
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_schemas import load_cases, resolve_tokenizer
from profile_masks import run

NAMES = {0: "DONE", 1: "MISSING_ROW", 3: "MISSING_ROW_AFTER_STEP", 4: "NEED_FRESH", 5: "NEED_SPACE",
         6: "OVER_BUDGET", 7: "STALE_LEXER"}


class Probe:
    """The wrappers and their counts (``count``: returns and masks; ``spent``: thread CPU, ns)."""

    def __init__(self) -> None:
        from leapgram.mask import engines
        from leapgram.parser import arena

        self.engines, self.arena = engines, arena
        self.count: Counter = Counter()
        self.spent: Counter = Counter()
        self.pending: str | None = None  # the label of the walk's last return, until the next call
        self.since = 0
        self.fresh = ""  # what the last fresh_of found
        self.own = 0  # the thread CPU of the probe's own work since the walk's last return

    def install(self) -> None:
        engines, probe = self.engines, self
        walk, advance = engines._WALK_KERNEL, engines._ADVANCE_KERNEL
        new_mask, fresh_of = engines.CfgEngine.new_mask, self.arena.ChartArena.fresh_of

        class Walk:
            @staticmethod
            def call(*args):
                return probe.walked(walk.call, args)

        class Advance:
            @staticmethod
            def call(*args):
                result = advance.call(*args)
                probe.count["consume " + NAMES[int(result[1])]] += 1
                return result

        def timed_mask(engine, state, key, _locked=False):
            start = time.thread_time_ns()
            try:
                return new_mask(engine, state, key, _locked)
            finally:
                probe.pending = None
                probe.count["masks"] += 1
                probe.spent["masks"] += time.thread_time_ns() - start

        def classified(arena, chart):
            start = time.thread_time_ns()
            known, states = probe.known(arena, chart), arena.lexer.num_states
            middle = time.thread_time_ns()
            fresh = fresh_of(arena, chart)
            end = time.thread_time_ns()
            if known is not None:
                probe.fresh = "known" if known else "new state" if arena.lexer.num_states > states else "new set"
            probe.own += middle - start + time.thread_time_ns() - end  # the probe's, not the return's
            return fresh

        engines._WALK_KERNEL, engines._ADVANCE_KERNEL = Walk, Advance
        engines.CfgEngine.new_mask = timed_mask
        self.arena.ChartArena.fresh_of = classified

    def walked(self, kernel, args):
        """Call the walk kernel; time what Python did since its last return."""
        now = time.thread_time_ns()
        self.relabel()
        if self.pending is not None:
            self.spent[self.pending] += now - self.since - self.own
            self.pending = None
        self.own = 0
        result = kernel(*args)
        code = int(result[1])
        if code != 0:
            self.pending = "walk " + NAMES[code]
            self.fresh = ""
        self.count["walk " + NAMES[code]] += 1
        self.since = time.thread_time_ns()
        return result

    @staticmethod
    def known(arena, chart: int) -> bool | None:
        """Whether the lexer knows the set of lexemes ``chart`` allows; ``None`` when the arena
        has its fresh state."""
        from leapgram._kernels import earley as k

        set_id = arena.charts.item(chart, k.SET)
        if arena.set_fresh.item(set_id) >= 0:
            return None
        members = arena.set_items[arena.set_ptr.item(set_id):arena.set_ptr.item(set_id + 1)]
        return members.tobytes() in arena.lexer._start_of

    def relabel(self) -> None:
        """Split the last ``NEED_FRESH`` by what its ``fresh_of`` found (before the next call)."""
        if self.pending == "walk NEED_FRESH" and self.fresh:
            self.pending = f"walk NEED_FRESH ({self.fresh})"
            self.count[self.pending] += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--tokenizer", default="llama3")
    parser.add_argument("--sample", type=int)
    parser.add_argument("--passes", type=int, default=1)
    args = parser.parse_args()
    from bench_schemas import LeapgramEngine

    tokenizer = resolve_tokenizer(args.tokenizer)
    cases = load_cases(Path(args.folder), tokenizer, None, args.sample)
    engine = LeapgramEngine(tokenizer)
    run(cases, engine)  # untimed: grammars' first compiles, the process-wide caches
    probe = Probe()
    probe.install()
    gc.freeze()
    for _ in range(args.passes):
        run(cases, engine)
    passes, masks = args.passes, probe.count["masks"] or 1
    print(f"masks computed a pass: {masks / passes:.0f}, {probe.spent['masks'] / 1e6 / passes:.1f} ms")
    for label in sorted(label for label in probe.count if label != "masks"):
        line = f"  {label}: {probe.count[label] / passes:.0f} a pass, {probe.count[label] / masks:.3f} a mask"
        if label in probe.spent:
            line += (f", {probe.spent[label] / probe.count[label] / 1e3:.2f} us each in Python"
                     f" ({probe.spent[label] / probe.spent['masks']:.1%} of the masks' CPU)")
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
