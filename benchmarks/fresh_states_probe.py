"""What a grammar's fresh lexer states cost its masks, and what laying them out would save.

``python benchmarks/fresh_states_probe.py FOLDER [--sample N] [--seed S] [--rounds R]
[--kinds base|keys|all] [--tokenizer NAME]``: ``N`` cases of ``FOLDER`` (a JSONSchemaBench
folder, or one with links to some of its files), shuffled with ``S``, each compiled and walked
over its valid instances as ``profile_masks.py`` does. A first pass records the sets of lexemes
whose fresh state (``Lexer.fresh_state``) each case's lexer makes. Then, ``R`` rounds, each case
runs twice in a row, in alternating order: plainly, and with the recorded sets' fresh states and
their rows made right after the first mask (where ``Lexer.lay_out_literals`` runs) by the plain
``fresh_state`` and ``fill_row``, their thread CPU taken off. ``--kinds`` picks the sets: ``base``
(every lexeme's expression in the pool family's base pool: JSON whitespace, punctuation,
strings, numbers), ``keys`` (the others: a schema's keys, enums, patterns) or ``all``.

Prints per round the fills' thread CPU with the states made for free over the plain run (the
most any layout of those states after the first mask could save, each state chosen right and
made at no cost), what making them took over the plain run (what they cost one at a time, out
of the masks), and per state the CPU of ``fresh_state`` and ``fill_row`` there. Nothing in
leapgram changes: the functions are wrapped here. Docs: docs/design/lexer-templates.md,
"Fresh states laid out before the second mask: measured (round 22)".
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_schemas import resolve_tokenizer
from lexer_states_probe import shuffled_cases
from profile_masks import run


class Recorder:
    """The wrappers: records the sets of each case (``record``), or makes them (``premade``)."""

    def __init__(self, kinds: str) -> None:
        from leapgram.parser import lexer

        self.lexer = lexer
        self.kinds = kinds
        self.sets: dict[int, list] = {}  # per case, the sets' int32 arrays
        self.case = -1
        self.mode = "record"
        self.hook = 0  # thread CPU of the states made, this case (µs)
        self.spent = [0, 0, 0]  # fresh_state, fill_row (ns), states made
        self.fresh_state = lexer.Lexer.fresh_state
        self.lay_out_literals = lexer.Lexer.lay_out_literals

    def install(self) -> None:
        lexer = self.lexer
        lexer.Lexer.fresh_state = lambda lx, members: self._fresh_state(lx, members)
        lexer.Lexer.lay_out_literals = lambda lx: self._lay_out_literals(lx)

    def uninstall(self) -> None:
        self.lexer.Lexer.fresh_state = self.fresh_state
        self.lexer.Lexer.lay_out_literals = self.lay_out_literals

    def _wanted(self, lx, lexemes) -> bool:
        family = lx.pool.family
        size = family.base_size if family is not None else 0
        base = all(lx._lexeme_exprs[lex] < size for lex in lexemes)
        return self.kinds == "all" or base == (self.kinds == "base")

    def _fresh_state(self, lx, members) -> int:
        if self.mode == "record" and members.tobytes() not in lx._start_of and self._wanted(lx, members.tolist()):
            self.sets.setdefault(self.case, []).append(members.copy())
        return self.fresh_state(lx, members)

    def _lay_out_literals(self, lx) -> None:
        self.lay_out_literals(lx)
        if self.mode != "premade" or getattr(lx, "_probe_premade", False):
            return
        lx._probe_premade = True
        start = time.thread_time_ns()
        for members in self.sets.get(self.case, ()):
            t0 = time.thread_time_ns()
            state = self.fresh_state(lx, members)
            t1 = time.thread_time_ns()
            if state > 0:
                lx.fill_row(state)
            t2 = time.thread_time_ns()
            self.spent[0] += t1 - t0
            self.spent[1] += t2 - t1
            self.spent[2] += 1
        self.hook += (time.thread_time_ns() - start) / 1e3


def run_case(engine, case) -> float | None:
    """The thread CPU (µs) of every fill along ``case``'s valid instances; ``None`` if it does not compile."""
    ttfm, tbm = run([case], engine)
    return sum(tbm) if ttfm else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--tokenizer", default="llama3")
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kinds", choices=("base", "keys", "all"), default="base")
    args = parser.parse_args()
    from bench_schemas import LeapgramEngine

    tokenizer = resolve_tokenizer(args.tokenizer)
    cases = shuffled_cases(Path(args.folder), tokenizer, args.sample, args.seed)
    engine = LeapgramEngine(tokenizer)
    gc.freeze()
    recorder = Recorder(args.kinds)
    recorder.install()
    try:
        for index, case in enumerate(cases):
            recorder.case = index
            run_case(engine, case)
        recorded = sum(map(len, recorder.sets.values()))
        print(f"{len(cases)} cases, {recorded / max(len(cases), 1):.1f} fresh states of kind {args.kinds!r} a case")
        for round_ in range(args.rounds):
            plain = premade = hook = 0
            recorder.spent = [0, 0, 0]
            for index, case in enumerate(cases):
                recorder.case = index
                spent = {}
                for mode in ("plain", "premade") if (index + round_) % 2 == 0 else ("premade", "plain"):
                    recorder.mode = mode
                    recorder.hook = 0
                    spent[mode] = (run_case(engine, case), recorder.hook)
                if spent["plain"][0] is None or spent["premade"][0] is None:
                    continue
                plain += spent["plain"][0]
                premade += spent["premade"][0] - spent["premade"][1]
                hook += spent["premade"][1]
            made = max(recorder.spent[2], 1)
            print(f"round {round_}: fills with the states made for free {premade / max(plain, 1):.3f}x the plain run; "
                  f"making them took {hook / max(plain, 1):.3f}x; a state: fresh_state "
                  f"{recorder.spent[0] / made / 1e3:.1f} µs, fill_row {recorder.spent[1] / made / 1e3:.1f} µs", flush=True)
    finally:
        recorder.uninstall()
    return 0


if __name__ == "__main__":
    sys.exit(main())
