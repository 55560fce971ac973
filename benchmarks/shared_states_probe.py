"""The most a process-wide table of lexer states could save: a grammar whose lexer finds its states made.

``python benchmarks/shared_states_probe.py FOLDER [--sample N] [--seed S] [--rounds R]
[--kinds none|base|literals|known] [--found] [--tokenizer NAME]``: ``N`` cases of ``FOLDER`` (a JSONSchemaBench folder, or
one with links to some of its files), shuffled with ``S``. Per round and case, the schema is
compiled and walked over its valid instances once to record its lexer (not timed); then twice
more, in alternating order: plainly, and *seeded*. A seeded grammar's lexer gets, between its
compile and its first mask (that thread CPU taken off its time to first mask), the recorded
lexer's states of the chosen kinds with their items, ``_start_of`` entries and known rows whose
targets are of those kinds too (one schema compiled twice has the same lexeme ids and the same
expression ids up to its translation's end): what a table shared by the process, read by the
kernels, would hold for it at no cost to the grammar. ``--kinds base``: states whose items are
all expressions of the pool family's base pool (JSON whitespace, punctuation, strings, numbers:
labels need no structure); ``literals``: those and states along literal lexemes (a schema's keys
and enum members: labels by bytes); ``known``: every state whose expressions the new grammar's
pool already holds (other schema lexemes too: labels by structure); ``none``: nothing (an A/A
check of the two runs). With ``--found`` (``base``, ``literals``), only the states, and rows,
whose labels (:func:`label`) an earlier case of the round had: what a table filled by the
process's earlier grammars would hold, the first cases finding it empty.

Prints per round the seeded run over the plain one, thread CPU: computed masks (the grammar's
mask cache grew), every fill, and the time to first mask. What seeding leaves is still paid per
grammar: the kernel's return for a chart's fresh state (``NEED_FRESH``: the arena learns it per
set), boundaries, the Earley work, the mask's own Python. Nothing in leapgram changes. Docs:
docs/design/lexer-templates.md, "A table of lexer states shared by the process (round 23)".
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_schemas import mask_allows, resolve_tokenizer
from lexer_states_probe import shuffled_cases

from leapgram.parser.lexer_blocks import literal_tails


def selected(lexer, kinds: str, limit: int) -> list[int]:
    """The states of ``lexer`` to seed: items all base pool (``base``), base pool or along a
    literal lexeme (``literals``), all below ``limit`` (``known``), or none (``none``)."""
    if kinds == "none":
        return []
    family = lexer.pool.family
    bound = family.base_size if kinds != "known" and family is not None else limit
    tails: dict[int, frozenset[int]] = {}

    def labelled(lex: int, expr: int) -> bool:
        if lex < 0:
            return False
        root = lexer._lexeme_exprs[lex]
        if kinds == "known" or root < bound:
            return expr < bound
        if kinds != "literals":
            return False
        if root not in tails:  # a literal's states: its root, its tails, ε
            found = literal_tails(lexer.pool, root, {})
            tails[root] = frozenset([root, *found[0]]) if found else frozenset()
        return expr in tails[root]

    return [state for state in range(1, lexer.num_states)
            if all(labelled(lex, expr) for lex, expr in lexer.items(state))]


def label(lexer, state: int) -> tuple:
    """``state``'s key in a table shared by grammars: its items labelled without the grammar's
    ids, a base-pool item by its lexeme's root expression and its own, an item along a literal by
    the literal's bytes and its position in them (for ``base`` and ``literals`` states only)."""
    family = lexer.pool.family
    items = []
    for lex, expr in lexer.items(state):
        root = lexer._lexeme_exprs[lex]
        if root < family.base_size:
            items.append((0, root, expr))
        else:
            tails, path = literal_tails(lexer.pool, root, {})
            items.append((1, bytes(path), [root, *tails].index(expr)))
    return lexer.is_fresh(state), tuple(sorted(items))


def remember(lexer, kinds: str, seen: tuple[set, set]) -> None:
    """Add the labels of ``lexer``'s chosen states, and of those whose rows it knows, to ``seen``."""
    from leapgram.parser.lexer import UNKNOWN

    for state in selected(lexer, kinds, 0):
        key = label(lexer, state)
        seen[0].add(key)
        if lexer.trans[state, 0] != UNKNOWN:
            seen[1].add(key)


def seed(lexer, recorded, kinds: str, seen: tuple[set, set] | None = None) -> None:
    """Number ``recorded``'s chosen states in ``lexer`` and copy their rows and fresh sets; with
    ``seen``, only the states (and rows) whose labels an earlier case's lexer had."""
    from leapgram.parser.lexer import DEAD, UNKNOWN

    states = selected(recorded, kinds, len(lexer.pool))
    rows = None
    if seen is not None:
        labels = {state: label(recorded, state) for state in states}
        states = [state for state in states if labels[state] in seen[0]]
        rows = {state for state in states if labels[state] in seen[1]}
    with lexer._lock:
        ids = {DEAD: DEAD}
        for state in states:
            ids[state] = lexer._state_of(recorded.is_fresh(state), recorded.items(state))
        for state in states:
            row = recorded.trans[state]
            if row[0] == UNKNOWN or (rows is not None and state not in rows):
                continue
            targets = row.tolist()
            if not all(target in ids for target in targets):
                continue
            new = ids[state]
            if lexer.trans[new, 0] != UNKNOWN:
                continue
            mapped = [ids[target] for target in targets]
            lexer.trans[new, 1:] = mapped[1:]
            lexer.trans[new, 0] = mapped[0]
        for lexemes, state in recorded._start_of.items():
            if state in ids:
                lexer._start_of.setdefault(lexemes, ids[state])


def one(engine, case, recorded=None, kinds: str = "base", seen: tuple[set, set] | None = None):
    """``(time to first mask, computed masks, all fills, computed count)`` in ns, and the lexer."""
    engine.prepare()
    gc.collect()
    start = time.thread_time_ns()
    try:
        compiled = engine.compile(case.schema)
        ttfm = time.thread_time_ns() - start
        if recorded is not None:
            seed(compiled._engine.lexer, recorded, kinds, seen)
        gc.collect()  # in both runs, off the clock (the seeding's allocations would bring one into the mask)
        start = time.thread_time_ns()
        engine.fill(engine.matcher(compiled))
    except Exception:  # noqa: BLE001 - a schema leapgram does not take is skipped
        return None, None
    ttfm += time.thread_time_ns() - start
    computed = fills = count = 0
    for valid, tokens in case.instances:
        if not valid:
            continue
        matcher = engine.matcher(compiled)
        for token in [*tokens, None]:
            known = len(compiled._masks)
            t0 = time.thread_time_ns()
            engine.fill(matcher)
            spent = time.thread_time_ns() - t0
            fills += spent
            if len(compiled._masks) > known:
                computed += spent
                count += 1
            if token is None or not mask_allows(engine.bitmask, token) or not engine.consume(matcher, token):
                break
    return (ttfm, computed, fills, count), getattr(compiled._engine, "lexer", None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--tokenizer", default="llama3")
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kinds", choices=("none", "base", "literals", "known"), default="base")
    parser.add_argument("--found", action="store_true",
                        help="seed only states whose labels an earlier case of the round had (base, literals)")
    args = parser.parse_args()
    if args.found and args.kinds not in ("base", "literals"):
        parser.error("--found labels base and literals states only")
    from bench_schemas import LeapgramEngine

    tokenizer = resolve_tokenizer(args.tokenizer)
    cases = shuffled_cases(Path(args.folder), tokenizer, args.sample, args.seed)
    engine = LeapgramEngine(tokenizer)
    for round_ in range(args.rounds):
        totals = {False: [0, 0, 0, 0], True: [0, 0, 0, 0]}
        seen: tuple[set, set] | None = (set(), set()) if args.found else None  # a table filled this round
        for k, case in enumerate(cases):
            _, recorded = one(engine, case)
            if recorded is None:
                continue
            runs = {}
            for seeded in ((False, True) if (k + round_) % 2 == 0 else (True, False)):
                runs[seeded] = one(engine, case, recorded if seeded else None, args.kinds, seen)[0]
            if seen is not None:
                remember(recorded, args.kinds, seen)
            if runs[False] is None or runs[True] is None:
                continue
            for seeded, run in runs.items():
                totals[seeded] = [a + b for a, b in zip(totals[seeded], run)]
        plain, new = totals[False], totals[True]
        print(f"round {round_}: seeded / plain: computed masks {new[1] / plain[1]:.3f}x ({plain[3]} / {new[3]} masks,"
              f" plain {plain[1] / max(plain[3], 1) / 1e3:.1f} µs)  fills {new[2] / plain[2]:.3f}x"
              f"  TTFM {new[0] / plain[0]:.3f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
