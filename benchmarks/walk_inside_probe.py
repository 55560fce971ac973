"""What the walk kernel does inside one mask: trie nodes visited, subtrees skipped, boundaries.

``python benchmarks/walk_inside_probe.py FOLDER [--sample N] [--first] [--repeat R] [--top K]``:
the cases of FOLDER (a JSONSchemaBench folder, or one of links to some of its files), shuffled
as ``mask_path.py`` does, are compiled and walked over their valid instances (a mask per token).
Then, by default, each grammar's instances are walked again with each state's mask cache entry
dropped (``mask_path.py``'s ``known`` pass: every row, fresh state and boundary known); with
``--first``, the first pass itself is counted. Each call of ``walk_cfg_kernel`` in the counted
pass is run by a counting copy of it here (``walk_counting``: the same walk with counters;
numba, not cached), which does the work the call leaves behind (the memo tables, the stack, the
mask), then by the real kernel on copies of the stack and mask (timed, thread CPU, a timer
call included; in the first pass it finds the boundaries the copy computed: Earley work left
out). Printed: per mask,
the nodes visited (live, dead, skipped below dead ones), the boundaries tried (found in the
one-entry memo of the last key, in the arena's table, or computed by ``boundary_kernel``) and
what followed them, the visits below a boundary and at depth 1 (the root's children); then the
masks grouped by their first allowed tokens and their size, heaviest kernel time first.

``--repeat R`` also times each call ``R`` times more on copies of its stack and mask (warm:
the same nodes, trained branch predictors), which shows what the walk costs when its data and
branches are hot. Docs: docs/design/trie-walk.md, "Round 26: inside the walk kernel".
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_schemas import LeapgramEngine, load_cases, resolve_tokenizer
from mask_path import cfg_cases, walk

_clock = time.thread_time_ns
FIELDS = ("visits", "live", "dead", "skipped below dead", "boundary tried", "boundary from last key",
          "boundary from table", "boundary computed", "boundary refused", "dead after boundary",
          "live after boundary", "tokens", "visits at depth 1", "live at depth 1", "visits below a boundary")
(VISITS, LIVE, DEAD, SKIPPED, TRIED, LAST, TABLE, COMPUTED, REFUSED, DEAD_AFTER, LIVE_AFTER, TOKENS, DEPTH1,
 LIVE1, BELOW) = range(len(FIELDS))


def counting_kernel():
    """``walk_counting``: :func:`walk_cfg_kernel` with ``counts`` (``FIELDS``) added up."""
    from numba import njit

    from leapgram._kernels.cfg_walk import DONE, MISSING_ROW, MISSING_ROW_AFTER_STEP, tables_filling
    from leapgram._kernels.earley import NONE, OK, boundary_kernel
    from leapgram._kernels.tables import ABSENT, table_get_kernel
    from leapgram._kernels.trie_walk import copy_duplicate_bits_kernel
    from leapgram._kernels.views import arena_of, grammar_of, lexer_of

    @njit(nogil=True)
    def walk_counting(node_info, node_end, dup_primary, dup_other, lexer_views, grammar_views, arena_views,
                      max_row, use_leo, stack, start, mask, counts):
        lexer = lexer_of(lexer_views)
        trans, accepting, lexer = lexer[0], lexer[1], lexer[2:]
        grammar = grammar_of(grammar_views)
        arena = arena_of(arena_views)
        below = np.zeros(stack.shape[0], dtype=np.int8)  # whether the path to depth d took a boundary
        n = node_info.shape[0]
        i = start
        last_key, last_found, low = np.int64(-1), np.int64(NONE), np.int64(0xFFFFFFFF)
        while i < n:
            info = node_info[i]
            depth = (info >> 8) & 0xFFFF
            counts[VISITS] += 1
            counts[DEPTH1] += depth == 1
            counts[BELOW] += below[depth - 1]
            top = stack[depth - 1]
            lex = top & low
            state = trans[lex, info & 0xFF]
            if state < 0:
                return i, MISSING_ROW, 0
            if state == 0:
                if accepting[lex] == 0:
                    counts[DEAD] += 1
                    counts[SKIPPED] += node_end[i] - i - 1
                    i = node_end[i]
                    continue
                counts[TRIED] += 1
                if top == last_key:
                    counts[LAST] += 1
                    found = last_found
                else:
                    found = table_get_kernel(arena[3], arena[4], top)
                    if found == ABSENT:
                        counts[COMPUTED] += 1
                        status, found = boundary_kernel(grammar, arena, lexer, top >> 32, lex, max_row, use_leo)
                        if status != OK:
                            return i, status, found
                    else:
                        counts[TABLE] += 1
                    last_key, last_found = top, found
                state = 0 if found == NONE else trans[found & low, info & 0xFF]
                if state < 0:
                    return i, MISSING_ROW_AFTER_STEP, found
                if state == 0:
                    counts[REFUSED if found == NONE else DEAD_AFTER] += 1
                    counts[SKIPPED] += node_end[i] - i - 1
                    i = node_end[i]
                    continue
                counts[LIVE_AFTER] += 1
                stack[depth] = (found & ~low) | state
                below[depth] = 1
            else:
                stack[depth] = (top & ~low) | state
                below[depth] = below[depth - 1]
            counts[LIVE] += 1
            counts[LIVE1] += depth == 1
            token = info >> 24
            if token >= 0:
                counts[TOKENS] += 1
                mask[token >> 5] |= np.uint32(1) << np.uint32(token & 31)
            i += 1
        copy_duplicate_bits_kernel(mask, dup_primary, dup_other)
        return n, DONE, tables_filling(arena)

    return walk_counting


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--tokenizer", default="llama3")
    parser.add_argument("--sample", type=int, default=120)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--first", action="store_true", help="count the first pass, not the known one")
    parser.add_argument("--repeat", type=int, default=0, help="time each call this many times more, warm")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    from leapgram.mask import engines

    tokenizer = resolve_tokenizer(args.tokenizer)
    cases = load_cases(Path(args.folder), tokenizer, None, args.sample)
    random.Random(args.seed).shuffle(cases)
    engine = LeapgramEngine(tokenizer)
    walk_counting = counting_kernel()
    counts = np.zeros(len(FIELDS), dtype=np.int64)
    by_kind, spent, warm, masks = Counter(), Counter(), Counter(), Counter()
    real = None

    def counted(*call_args):
        stack, start, mask = call_args[9], call_args[10], call_args[11]
        stack_copy, mask_copy = stack.copy(), mask.copy()
        before = counts[VISITS]
        result = walk_counting(*call_args, counts)
        begin = _clock()
        timed = real(*call_args[:9], stack_copy, start, mask_copy)
        ns = _clock() - begin
        if timed[1] == result[1] == 0 and not np.array_equal(mask, mask_copy):
            raise SystemExit("the counting kernel's mask differs from the real kernel's")
        allowed = np.flatnonzero(np.unpackbits(mask.view(np.uint8), bitorder="little"))
        kind = (tuple(engine.vocab.token_bytes(int(t)) for t in allowed[:3]), len(allowed))
        for _ in range(args.repeat):
            again = (*call_args[:9], stack_copy.copy(), start, mask_copy.copy())
            begin = _clock()
            real(*again)
            warm["ns"] += _clock() - begin
        by_kind[kind] += int(counts[VISITS] - before)
        spent[kind] += ns
        masks[kind] += start == 1
        return result

    for number, case, compiled in cfg_cases(engine, cases):
        if real is None:  # the direct entry exists after the kernel's first call
            real = engines._WALK_KERNEL.call
        if not args.first or number < 3:
            walk(engine, compiled, case.instances)
            if args.first:
                continue
        engines._WALK_KERNEL.call = counted
        try:
            walk(engine, compiled, case.instances, drop=not args.first)
        finally:
            engines._WALK_KERNEL.call = real

    total = max(sum(masks.values()), 1)
    print(f"{total} masks walked ({'first' if args.first else 'known'} pass); per mask:")
    for name, value in zip(FIELDS, counts.tolist()):
        print(f"  {name:26s} {value / total:10.1f}")
    print(f"walk kernel: {sum(spent.values()) / total / 1e3:.2f} µs a mask (a timer call in each call)"
          + (f"; the same calls again, warm: {warm['ns'] / args.repeat / total / 1e3:.2f} µs" if args.repeat else ""))
    print("by first allowed tokens and count: share of kernel time, masks, visits and µs a mask")
    for kind, ns in spent.most_common(args.top):
        n = max(masks[kind], 1)
        print(f"  {ns / max(sum(spent.values()), 1):6.1%} {masks[kind]:6d} {by_kind[kind] / n:8.0f} {ns / n / 1e3:7.2f}"
              f"  {kind[0]} ({kind[1]} tokens)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
