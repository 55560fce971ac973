"""How much of a grammar's first-time lexer work an earlier schema of the process did already.

``python benchmarks/lexer_states_probe.py FOLDER [--sample N] [--seed S] [--tokenizer NAME]``:
``N`` cases of ``FOLDER`` (a JSONSchemaBench folder, or one with links to some of its files),
shuffled with ``S``, compiled and walked over their valid instances in one process, a mask per
token, as ``profile_masks.py`` does. For every lexer row filled (``Lexer.fill_row`` on an
unknown row) and every fresh state made (``Lexer.fresh_state`` adding a state), it asks whether
an earlier case's lexer had a state with the same items *by expression*: expressions compared
by structure, lexemes labelled by their expression and whether they are ignored
(``profile_masks.Canonical``). A row counts as found when such a state had its row known at
the end of an earlier case (filled, copied from a template or a family memo, or laid out); a
fresh state when such a state existed. Prints the shares of rows and fresh states found, and of
their thread CPU; per computed mask, the kernel calls and the re-entries whose Python work
(rows, fresh states) was all found; and the distinct states and rows over the pass (the size a
process-wide table would reach). Nothing in leapgram changes: the functions are wrapped here.
Docs: docs/design/lexer-templates.md, "Lexer states per vocabulary".
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_schemas import load_cases, resolve_tokenizer
from profile_masks import Canonical, run


def state_kind(lexer, state: int) -> str:
    """fresh / several lexemes / one lexeme of the family (JSON strings, numbers, whitespace) /
    one schema lexeme (keys, enum values, patterns)."""
    if lexer.is_fresh(state):
        return "fresh"
    items = lexer.plain_items(state)
    if len(items) > 1:
        return "several lexemes"
    family = lexer.pool.family
    return "family lexeme" if family is not None and items[0][1] < family.base_size else "schema lexeme"


class Probe:
    """The wrappers and their counts (thread CPU in ns)."""

    def __init__(self) -> None:
        self.canonical = Canonical()
        self.rows_known: set[int] = set()  # canonical states whose row an earlier case knew
        self.states_made: set[int] = set()  # canonical states an earlier case made
        self.count, self.spent = Counter(), Counter()
        self.lexers: list = []
        self.interval_misses = 0  # first-time work not found since the last kernel call
        self.interval_work = 0  # first-time work since the last kernel call
        self.overhead = 0
        self.calls_in_mask = 0
        self.interval_fresh = 0
        self.in_mask = False
        self.base_only = False  # the last state keyed holds base pool expressions only (ids shared already)
        self.base_or_literal = False  # ... or those of literal lexemes (keys) too
        self.describe: bool | None = None  # --top: keep a description of each state
        self.described: dict[int, str] = {}
        self.hits: Counter = Counter()  # canonical state -> thread CPU of the rows and fresh states found
        self.outside, self.outside_spent = Counter(), Counter()
        self.kinds, self.kinds_spent = Counter(), Counter()  # rows in masks by kind of state
        self.kinds_found, self.kinds_found_spent = Counter(), Counter()

    def key(self, lexer, state: int) -> int:
        family = lexer.pool.family
        size = family.base_size if family is not None else 0
        self.base_only = family is not None and all(e < size for _, e in lexer.plain_items(state))
        literals = self.literals_of(lexer)
        self.base_or_literal = family is not None and all(e < size or e in literals for _, e in lexer.plain_items(state))
        labels = lexer.__dict__.get("_probe_labels")
        if labels is None:
            ir, canonical = lexer.ir, self.canonical
            labels = lexer._probe_labels = [
                canonical.intern(("lexeme", canonical.expr(ir.pool, x.expr), i in ir.ignore))
                for i, x in enumerate(ir.lexemes)]
        items = sorted((labels[x], self.canonical.expr(lexer.pool, e)) for x, e in lexer.plain_items(state))
        key = self.canonical.intern(("state", lexer.is_fresh(state), *items))
        if self.describe is not None and key not in self.described:
            self.described[key] = ("fresh " if lexer.is_fresh(state) else "") + " | ".join(
                lexer.pool.describe(e, 24) for _, e in lexer.plain_items(state))
        return key

    def literals_of(self, lexer) -> set[int]:
        """The expressions of the grammar's literal lexemes (keys, enum strings) and their tails:
        a label by bytes would name them, without comparing structures."""
        found = lexer.__dict__.get("_probe_literals")
        if found is None:
            found = lexer._probe_literals = set()
            for lexeme in lexer.ir.lexemes:
                tails = lexer._literal_tails(lexeme.expr)
                if tails is not None:
                    found.add(lexeme.expr)
                    found.update(tails[0])
        return found

    def install(self):
        """Wrap the lexer, the walk kernel and the mask entry; returns what to restore."""
        import leapgram.compiler as compiler_module
        from leapgram.mask import engines
        from leapgram.parser import arena as arena_module
        from leapgram.parser.lexer import Lexer
        from leapgram.regex.dfa import UNKNOWN

        saved = [(Lexer, "__init__", Lexer.__init__), (Lexer, "fill_row", Lexer.fill_row),
                 (Lexer, "fresh_state", Lexer.fresh_state),
                 (engines._WALK_KERNEL, "call", engines._WALK_KERNEL.call),
                 (compiler_module.CompiledGrammar, "_new_row", compiler_module.CompiledGrammar._new_row)]
        init, fill_row, start_state, kernel, new_row = (original for _, _, original in saved)
        probe = self

        def lexer_init(lexer, *args, **kwargs):
            init(lexer, *args, **kwargs)
            probe.lexers.append(lexer)

        def timed_fill(lexer, state):
            if lexer.trans[state, 0] != UNKNOWN:
                return fill_row(lexer, state)
            t0 = time.thread_time_ns()
            key = probe.key(lexer, state)
            found = key in probe.rows_known
            kind = state_kind(lexer, state)
            t1 = time.thread_time_ns()
            fill_row(lexer, state)
            probe.record("rows", found, time.thread_time_ns() - t1, kind, key)
            probe.overhead += t1 - t0
            return None

        def timed_start(lexer, members):
            if members.tobytes() in lexer._start_of:
                return start_state(lexer, members)
            before = lexer.num_states
            t0 = time.thread_time_ns()
            state = start_state(lexer, members)
            took = time.thread_time_ns() - t0
            if lexer.num_states > before:
                t1 = time.thread_time_ns()
                key = probe.key(lexer, state)
                found = key in probe.states_made
                probe.overhead += time.thread_time_ns() - t1
                probe.record("fresh states", found, took, None, key)
                probe.interval_fresh += 1
            return state

        def counted_kernel(*args):
            probe.count["kernel calls"] += 1
            probe.calls_in_mask += 1
            if probe.interval_work and probe.calls_in_mask > 1:
                probe.count["re-entries"] += 1
                probe.count["re-entries all found"] += probe.interval_misses == 0
                rows_only = probe.interval_misses == 0 and not probe.interval_fresh
                probe.count["re-entries all found, rows only"] += rows_only
            probe.interval_work = probe.interval_misses = probe.interval_fresh = 0
            t0 = time.thread_time_ns()
            try:
                return kernel(*args)
            finally:
                probe.spent["kernel"] += time.thread_time_ns() - t0

        def timed_mask(compiled, state, key):
            probe.interval_work = probe.interval_misses = probe.calls_in_mask = 0
            overhead = probe.overhead
            t0 = time.thread_time_ns()
            probe.in_mask = True
            try:
                entry = new_row(compiled, state, key)
            finally:
                probe.in_mask = False
            probe.count["masks"] += 1
            probe.spent["masks"] += time.thread_time_ns() - t0 - (probe.overhead - overhead)
            return entry

        for owner, name in ((arena_module.ChartArena, "handle"), (arena_module.ChartArena, "fresh_of"),
                            (Lexer, "lay_out_literals")):
            saved.append((owner, name, getattr(owner, name)))
            setattr(owner, name, self.timer(getattr(owner, name), name))
        Lexer.__init__, Lexer.fill_row, Lexer.fresh_state = lexer_init, timed_fill, timed_start
        engines._WALK_KERNEL.call = counted_kernel
        compiler_module.CompiledGrammar._new_row = timed_mask
        return saved

    def timer(self, original, label: str):
        def timed(*args):
            overhead = self.overhead
            t0 = time.thread_time_ns()
            try:
                return original(*args)
            finally:
                if self.in_mask:
                    self.spent[label] += time.thread_time_ns() - t0 - (self.overhead - overhead)
                    self.count[label] += 1
        return timed

    def record(self, what: str, found: bool, took: int, kind: str | None = None, key: int = -1) -> None:
        if not self.in_mask:  # consume_token, a boundary outside a walk: counted apart
            self.outside[what] += 1
            self.outside[what + " found"] += found
            self.outside_spent[what] += took
            self.outside_spent[what + " found"] += took if found else 0
            return
        self.count[what] += 1
        self.spent[what] += took
        if kind is not None:
            self.kinds[kind] += 1
            self.kinds_spent[kind] += took
            self.kinds_found[kind] += found
            self.kinds_found_spent[kind] += took if found else 0
        self.interval_work += 1
        if found and self.base_only:
            self.count[what + " found, base pool only"] += 1
            self.spent[what + " found, base pool only"] += took
        if found and self.base_or_literal:
            self.count[what + " found, base pool or literals"] += 1
            self.spent[what + " found, base pool or literals"] += took
        if found:
            self.hits[key] += took
            self.count[what + " found"] += 1
            self.spent[what + " found"] += took
        else:
            self.interval_misses += 1

    def end_case(self) -> None:
        """What the case's lexers built becomes what later cases find."""
        from leapgram.regex.dfa import UNKNOWN

        for lexer in self.lexers:
            known = lexer.trans[:lexer.num_states, 0] != UNKNOWN
            for state in range(1, lexer.num_states):
                key = self.key(lexer, state)
                self.states_made.add(key)
                if known[state]:
                    self.rows_known.add(key)
        self.lexers.clear()


def shuffled_cases(folder: Path, tokenizer: Path, sample: int, seed: int) -> list:
    """``sample`` cases of ``folder``, shuffled with ``seed``, in that order."""
    files = sorted(folder.glob("*.json"))
    random.Random(seed).shuffle(files)
    with tempfile.TemporaryDirectory() as links:
        for k, path in enumerate(files[:sample]):
            (Path(links) / f"{k:05d}_{path.name}").symlink_to(path.resolve())
        return load_cases(Path(links), tokenizer, None)  # sorted by the prefix: the shuffled order


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--tokenizer", default="llama3")
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--top", type=int, default=0, help="describe the states that hold most of the CPU found")
    args = parser.parse_args()
    from bench_schemas import LeapgramEngine

    tokenizer = resolve_tokenizer(args.tokenizer)
    cases = shuffled_cases(Path(args.folder), tokenizer, args.sample, args.seed)
    engine = LeapgramEngine(tokenizer)
    gc.freeze()
    probe = Probe()
    probe.describe = True if args.top else None
    saved = probe.install()
    growth, half, tbm = [], None, []
    try:
        for index, case in enumerate(cases, 1):
            tbm += run([case], engine)[1]
            probe.end_case()
            if index == len(cases) // 2:
                half = (Counter(probe.count), Counter(probe.spent))
            if index % 50 == 0 or index == len(cases):
                growth.append((index, len(probe.states_made), len(probe.rows_known)))
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)
    report(probe, half)
    masks = max(probe.count["masks"], 1)
    print(f"the probe's canonical keys inside masks: {probe.overhead / 1e3 / masks:.1f} µs a mask (taken off)")
    print(f"fills along the instances: {len(tbm)}, TBM {statistics.fmean(tbm or [0]):.1f} µs mean (keys included); "
          f"masks computed (first masks included) per fill: {probe.count['masks'] / max(len(tbm), 1):.2f}")
    print("cases, distinct states, distinct rows known:", growth)
    for key, took in probe.hits.most_common(args.top):
        print(f"  {took / 1e3:9.0f} µs found  {probe.described.get(key, '?')[:150]}")
    return 0


def _ratio(a: float, b: float) -> float:
    return a / b if b else 0.0


def _found_line(what: str, count: Counter, spent: Counter, masks: int) -> str:
    n, found, took, took_found = count[what], count[what + " found"], spent[what], spent[what + " found"]
    return (f"{what}: {n} ({n / masks:.2f} a mask, {_ratio(took, n) / 1e3:.1f} µs each, {took / 1e3 / masks:.1f} µs "
            f"a mask); found {found} ({_ratio(found, n):.2f}), CPU found {_ratio(took_found, took):.2f} "
            f"({took_found / 1e3 / masks:.1f} µs a mask)")


def report(probe: Probe, half: tuple[Counter, Counter] | None) -> None:
    """The shares found (see the module's docstring), in masks; then the rest apart."""
    count, spent = probe.count, probe.spent
    masks = count["masks"] or 1
    print(f"{count['masks']} masks computed, {spent['masks'] / 1e3 / masks:.1f} µs mean thread CPU")
    for what in ("rows", "fresh states"):
        print(_found_line(what, count, spent, masks))
        for part in ("base pool only", "base pool or literals"):
            base = f"{what} found, {part}"
            print(f"  of those found, items of the {part}: {_ratio(count[base], count[what + ' found']):.2f} "
                  f"(CPU {_ratio(spent[base], spent[what + ' found']):.2f})")
    print("rows by kind of state: kind | rows a mask | found | CPU µs a mask | CPU found")
    for kind, n in probe.kinds.most_common():
        print(f"  {kind} | {n / masks:.3f} | {probe.kinds_found[kind] / n:.2f} | "
              f"{probe.kinds_spent[kind] / 1e3 / masks:.1f} | "
              f"{_ratio(probe.kinds_found_spent[kind], probe.kinds_spent[kind]):.2f}")
    print(f"kernel calls {count['kernel calls'] / masks:.2f} a mask; re-entries after first-time work "
          f"{count['re-entries'] / masks:.2f}, all of it found {count['re-entries all found'] / masks:.2f}, "
          f"rows only and all found {count['re-entries all found, rows only'] / masks:.2f}")
    print("µs a mask: " + ", ".join(f"{label} {spent[label] / 1e3 / masks:.1f}"
                                     for label in ("kernel", "handle", "fresh_of", "lay_out_literals")))
    for what in ("rows", "fresh states"):
        print(f"outside masks (consume_token...): {what} {probe.outside[what]}, "
              f"found {probe.outside[what + ' found']}")
    if half is not None:
        count_2, spent_2 = count - half[0], spent - half[1]
        print(f"second half of the pass ({spent_2['masks'] / 1e3 / max(count_2['masks'], 1):.1f} µs a mask):")
        for what in ("rows", "fresh states"):
            print("  " + _found_line(what, count_2, spent_2, max(count_2["masks"], 1)))
    print(f"states that hold 50% / 80% / 90% / all of the CPU found: {' / '.join(_coverage(probe.hits))}")


def _coverage(hits: Counter) -> list[str]:
    ranked, total, covered, marks = hits.most_common(), sum(hits.values()) or 1, 0, []
    for rank, (_, took) in enumerate(ranked, 1):
        covered += took
        while len(marks) < 3 and covered >= (0.5, 0.8, 0.9)[len(marks)] * total:
            marks.append(str(rank))
    return [*marks, str(len(ranked))]


if __name__ == "__main__":
    sys.exit(main())
