"""Profile leapgram's compile and masks in one process (no worker, no peers), for cProfile/py-spy.

``python benchmarks/profile_masks.py FOLDER [--sample N] [--cprofile OUT] [--repeat K] [--breakdown]``:
every case of ``FOLDER`` (a JSONSchemaBench folder, or one with links to some of its files) is
compiled with a cleared compiler cache and walked over its valid instances, a mask per token,
as ``bench_schemas.py`` does; prints the thread-CPU TBM mean and TTFM p50, so a change can be
checked quickly before the full benchmark with peers. ``--breakdown`` (after one untimed run)
splits the masks computed (not those the fill found in the mask cache) by the kind of lexer
state they start from and times their parts
(lexer rows built in Python, the trie-walk kernel with the Earley steps inside it, the slicer's
split, fresh lexer states, the layout of key literals before a grammar's second mask, the rest); each
part costs a timer call, so compare shares, not absolute µs, with the plain run.
``--shareable`` (one pass, cases in order) counts, per kind of lexer state, the masks computed
whose content an earlier case's grammar computed already, and those whose walk an earlier
grammar made already: the same lexer state (expressions compared by structure, lexemes by
their expressions) and the same answers of the parser at every lexeme boundary the walk met
(its transcript: docs/design/trie-walk.md), which decide the mask. ``conflicts`` (same walk,
another mask) must be 0.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_schemas import load_cases, mask_allows, resolve_tokenizer


def run(cases, engine) -> tuple[list[float], list[float]]:
    """TTFM (ms) and TBM thread CPU (µs) over ``cases``."""
    ttfm, tbm = [], []
    for case in cases:
        engine.prepare()
        start = time.perf_counter()
        try:
            compiled = engine.compile(case.schema)
            engine.fill(engine.matcher(compiled))
        except Exception:  # noqa: BLE001, S112 - a schema leapgram does not take is skipped
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


def state_kind(compiled, state) -> str:
    """The kind of lexer state a mask of a context-free grammar starts from."""
    from leapgram.mask.engines import CfgEngine

    engine = compiled._engine
    if not isinstance(engine, CfgEngine):
        return "regex"
    key = engine.mask_key(state)
    lexer = engine.lexer
    if key in compiled._masks:
        return "cached"
    if lexer.is_fresh(key[2]):
        return "fresh state"
    items = lexer.plain_items(key[2])
    if len(items) > 1:
        return "several lexemes"
    pool = lexer.pool
    first = pool.first_bytes(items[0][1])
    if first == 0:
        return "lexeme complete"
    if pool.family is None or items[0][1] >= pool.family.size:
        return "schema literal (key, enum)"
    return "one byte left (closing quote)" if first & (first - 1) == 0 else "string/number/whitespace body"


def breakdown(cases, engine) -> tuple[Counter, Counter, dict[str, Counter]]:
    """One more run over ``cases`` with the parts of each uncached mask timed (thread CPU, ns)."""
    import leapgram.compiler as compiler_module
    from leapgram.mask import engines, slicer
    from leapgram.parser import arena

    total, count, parts = Counter(), Counter(), defaultdict(Counter)
    kind = [""]
    saved = []

    def timed(owner, name: str, label: str | None = None) -> None:
        original = getattr(owner, name)
        saved.append((owner, name, original))

        def wrapper(*args):
            start = time.thread_time_ns()
            try:
                return original(*args)
            finally:
                spent = time.thread_time_ns() - start
                if label is None:
                    total[kind[0]] += spent
                    count[kind[0]] += 1
                else:
                    parts[kind[0]][label] += spent
        setattr(owner, name, wrapper)

    def row(self, state, key):
        kind[0] = state_kind(self, state)
        return row_timed(self, state, key)

    # every mask computed goes through _new_row (the matcher looks the cache up itself)
    timed(compiler_module.CompiledGrammar, "_new_row")
    row_timed = compiler_module.CompiledGrammar._new_row
    saved.append((compiler_module.CompiledGrammar, "_new_row", row_timed))
    compiler_module.CompiledGrammar._new_row = row
    timed(engines, "fill_rows_down", "lexer rows")
    timed(engines._WALK_KERNEL, "call", "kernel")
    timed(slicer.SliceChecker, "split", "slicer split")
    timed(arena.ChartArena, "fresh_of", "fresh_of")
    timed(engines.Lexer, "lay_out_literals", "literal layout")
    try:
        run(cases, engine)
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)
    return total, count, parts


def print_breakdown(total: Counter, count: Counter, parts: dict[str, Counter]) -> None:
    """Per kind of lexer state, then over all masks computed: µs per mask in each part, and
    ``other`` (the rest of the mask: Python around the walk, the row store, accepting)."""
    masks = sum(count.values())
    labels = ("lexer rows", "kernel", "slicer split", "fresh_of", "literal layout")
    print(f"{masks} masks computed (first masks included, cache hits not), thread CPU µs per mask of each kind")
    print("kind of lexer state | share of masks | µs | " + " | ".join(labels) + " | other | µs over all masks")
    every = Counter()
    for kind, spent in total.most_common():
        n = count[kind]
        every.update(parts[kind])
        shares = " | ".join(f"{parts[kind][label] / 1e3 / n:.1f}" for label in labels)
        other = (spent - sum(parts[kind][label] for label in labels)) / 1e3 / n
        print(f"{kind} | {n / masks:.2f} | {spent / 1e3 / n:.1f} | {shares} | {other:.1f} | {spent / 1e3 / masks:.1f}")
    spent = sum(total.values())
    shares = " | ".join(f"{every[label] / 1e3 / masks:.1f}" for label in labels)
    other = (spent - sum(every[label] for label in labels)) / 1e3 / masks
    print(f"all | 1.00 | {spent / 1e3 / masks:.1f} | {shares} | {other:.1f} | {spent / 1e3 / masks:.1f}")


class Canonical:
    """Ids equal across grammars for equal expressions (by structure), lexemes (by expression and
    whether ignored) and lexer states (``--shareable``)."""

    def __init__(self) -> None:
        self.ids: dict[tuple, int] = {}

    def intern(self, key: tuple) -> int:
        return self.ids.setdefault(key, len(self.ids))

    def expr(self, pool, e: int) -> int:
        """The id of ``e``, from its kind, arguments and its children's ids."""
        from leapgram.regex.expr import K_BYTES, K_REPEAT

        def combine(x: int, children: tuple[int, ...]) -> int:
            kind, args = pool.kind[x], pool.args[x]
            ids = tuple(memo[c] for c in children)
            return self.intern((kind, args[0]) if kind == K_BYTES else (kind, *ids, *args[1:]) if kind == K_REPEAT
                               else (kind, *ids))

        memo = pool.__dict__.setdefault("_canonical_ids", {})  # on the pool: pools die with their grammars
        return pool._bottom_up(e, memo, combine, pool._children)

    def lexemes(self, compiled) -> list[int]:
        found = compiled.__dict__.get("_canonical_lexemes")
        if found is None:
            ir = compiled.grammar.ir
            found = compiled._canonical_lexemes = [self.intern(("lexeme", self.expr(ir.pool, x.expr), i in ir.ignore))
                                                   for i, x in enumerate(ir.lexemes)]
        return found

    def state(self, compiled, lex: int) -> int:
        lexer, lexemes = compiled._engine.lexer, self.lexemes(compiled)
        items = sorted((lexemes[x], self.expr(lexer.pool, e)) for x, e in lexer.plain_items(lex))
        return self.intern(("state", lexer.is_fresh(lex), *items))


def transcript(compiled, canonical: Canonical, state, key) -> tuple:
    """The parser's answers at the lexeme boundaries the mask walk of ``state`` met, in the order
    met, charts numbered from the root: ``((chart, lexemes ended, ignored only), None | (child,
    lexemes it allows, accepting))``. A walk over the tries the slicer leaves, in Python, after
    the kernel's walk made every row and boundary it needs."""
    from leapgram.regex.dfa import DEAD

    engine = compiled._engine
    lexer, (arena, chart, _), lex = engine.lexer, state, key[2]
    lexemes = canonical.lexemes(compiled)
    tries = (engine.trie,) if engine.slicer is None or lex == DEAD else engine.slicer.split(lex, engine.trie)[1]
    numbers, answers, order = {chart: 0}, {}, []
    for trie in tries:
        byte, depth, end = trie.node_byte.tolist(), trie.node_depth.tolist(), trie.node_end.tolist()
        stack = [(chart, lex)] * (trie.max_depth + 2)
        i = 1
        while i < len(byte):
            (at, s), b = stack[depth[i] - 1], byte[i]
            target = int(lexer.trans[s, b])
            if target == 0 and lexer.accepting[s]:
                if (at, s) not in answers:
                    found = answers[(at, s)] = arena.boundary(at, s)
                    ended = (tuple(sorted(lexemes[x] for x in lexer.accepted(s))), int(lexer.acc_ignore_only[s]))
                    result = None
                    if found is not None:
                        child = numbers.setdefault(found[0], len(numbers))
                        result = (child, tuple(sorted(lexemes[x] for x in arena.allowed_lexemes(found[0]))),
                                  arena.accepting(found[0]))
                    order.append(((numbers[at], *ended), result))
                found = answers[(at, s)]
                if found is not None:
                    at, target = found[0], int(lexer.trans[found[1], b])
            if target <= 0:
                i = end[i]
                continue
            stack[depth[i]] = (at, target)
            i += 1
    return tuple(order)


def shareable(cases, engine) -> tuple[dict[str, Counter], dict[str, Counter], Counter]:
    """What ``--shareable`` counts (see the module's docstring) over one pass of ``cases``, per
    kind of lexer state: masks and thread CPU ns by label, and the transcripts' sizes."""
    import hashlib

    import leapgram.compiler as compiler_module

    canonical = Canonical()
    seen_rows: dict[bytes, int] = {}
    seen_walks: dict[tuple, tuple[int, bytes]] = {}
    count, spent = defaultdict(Counter), defaultdict(Counter)
    sizes = Counter()
    case = [0]
    original = compiler_module.CompiledGrammar._new_row

    def new_row(self, state, key):
        kind = state_kind(self, state)
        start = time.thread_time_ns()
        entry = original(self, state, key)
        took = time.thread_time_ns() - start
        if not hasattr(self._engine, "lexer"):
            return entry
        digest = hashlib.blake2b(entry.row.tobytes(), digest_size=16).digest()
        walk = (canonical.state(self, key[2]), bool(self._special_tokens), entry.accepting,
                transcript(self, canonical, state, key))
        sizes[min(len(walk[3]), 16)] += 1
        seen = seen_walks.setdefault(walk, (case[0], digest))
        found = {"masks": True, "content seen earlier": seen_rows.setdefault(digest, case[0]) < case[0],
                 "walk seen earlier": seen[0] < case[0] and seen[1] == digest, "conflicts": seen[1] != digest}
        for label, hit in found.items():
            count[kind][label] += hit
            spent[kind][label] += took if hit else 0
        return entry

    compiler_module.CompiledGrammar._new_row = new_row
    try:
        for index, one in enumerate(cases, 1):
            case[0] = index
            run([one], engine)
    finally:
        compiler_module.CompiledGrammar._new_row = original
    return count, spent, sizes


def print_shareable(count: dict[str, Counter], spent: dict[str, Counter], sizes: Counter) -> None:
    labels = ("content seen earlier", "walk seen earlier", "conflicts")
    print("kind of lexer state | masks computed | " + " | ".join(f"{label} (share of masks, of their time)"
                                                          for label in labels))
    every, every_spent = Counter(), Counter()
    for kind in sorted(count, key=lambda k: -count[k]["masks"]):
        every.update(count[kind])
        every_spent.update(spent[kind])
        print(_shareable_line(kind, count[kind], spent[kind], labels))
    print(_shareable_line("all", every, every_spent, labels))
    print("boundaries in a transcript (16: 16 or more):", dict(sorted(sizes.items())))


def _shareable_line(kind: str, count: Counter, spent: Counter, labels: tuple[str, ...]) -> str:
    masks, took = count["masks"], spent["masks"] or 1
    parts = " | ".join(f"{count[label]} ({count[label] / masks:.2f}, {spent[label] / took:.2f})" for label in labels)
    return f"{kind} | {masks} | {parts}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--tokenizer", default="llama3")
    parser.add_argument("--sample", type=int)
    parser.add_argument("--cprofile", help="write cProfile stats here")
    parser.add_argument("--repeat", type=int, default=1, help="runs over the cases (the first one is reported)")
    parser.add_argument("--breakdown", action="store_true", help="time the parts of masks by kind of lexer state")
    parser.add_argument("--shareable", action="store_true",
                        help="count the masks computed that an earlier case's grammar computed already")
    args = parser.parse_args()
    from bench_schemas import LeapgramEngine

    tokenizer = resolve_tokenizer(args.tokenizer)
    cases = load_cases(Path(args.folder), tokenizer, None, args.sample)
    engine = LeapgramEngine(tokenizer)
    gc.freeze()  # as bench_schemas' workers: collections scan the grammars, not the cases
    if args.shareable:
        print_shareable(*shareable(cases, engine))
        return 0
    if args.breakdown:
        run(cases, engine)  # untimed: the next run times what a second process would see
        print_breakdown(*breakdown(cases, engine))
        return 0
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
