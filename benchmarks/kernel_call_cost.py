"""What calling the walk kernel costs before it walks: numba unboxing its arguments.

``python benchmarks/kernel_call_cost.py [CASE.json] [--tokenizer T]``: compiles the case's schema
(default JSONSchemaBench's ``BFCL_java_0``), fills its first mask, then calls through compiled
entry points (as ``DirectKernel`` does), thread CPU per call, best of 5 x 20,000:

* ``one array``: a kernel of one array argument (the floor of a call);
* ``walk, nothing to walk``: ``walk_cfg_kernel`` from the trie's end (an empty duplicate list);
* ``no-op, tuples``: a kernel that returns at once, given the arguments the walk took before
  round 22 (the parser tables' and the arena's arrays as tuples: 40 arrays);
* ``no-op, round 22's views``: the same with the tables and the arena as views (the lexer's 7
  arrays still arguments);
* ``no-op, views (lexer's too)``: today's arguments (the lexer, the tables and the arena as views);
* ``arena views``: making an arena's views (each new arena, and each time one grows).

``docs/design/trie-walk.md`` ("The kernel's arguments") has the figures of rounds 22 and 23.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_schemas import LeapgramEngine, resolve_tokenizer


def best_ns(call, args, reps: int = 20000) -> float:
    """The best of 5 means of ``reps`` calls, thread CPU in ns."""
    means = []
    for _ in range(5):
        start = time.thread_time_ns()
        for _ in range(reps):
            call(*args)
        means.append((time.thread_time_ns() - start) / reps)
    return min(means)


def entry_point(kernel, args):
    """The compiled entry point of ``kernel`` after a first call with ``args``."""
    kernel(*args)
    return next(iter(kernel.overloads.values())).entry_point


def main() -> None:
    from numba import njit

    from leapgram._kernels.cfg_walk import walk_cfg_kernel
    from leapgram._kernels.views import arena_views_kernel

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("case", nargs="?", default=str(Path(__file__).resolve().parents[2] / "shared" /
                                                       "jsonschemabench" / "BFCL_java_0.json"))
    parser.add_argument("--tokenizer", default="llama3")
    args = parser.parse_args()
    engine = LeapgramEngine(resolve_tokenizer(args.tokenizer))
    compiled = engine.compile(json.dumps(json.loads(Path(args.case).read_text(encoding="utf-8"))["schema"]))
    matcher = engine.matcher(compiled)
    engine.fill(matcher)
    cfg = compiled._engine
    arena, chart, lex = matcher._states[-1]
    trie, lexer = cfg.trie, cfg.lexer
    mask = np.zeros(cfg._words, dtype=np.uint32)
    stack = np.zeros(trie.max_depth + 1, dtype=np.int64)
    stack[0] = (chart << 32) | lex
    no_dups = np.zeros(0, dtype=trie.dup_primary.dtype)
    head = (trie.node_info, trie.node_end, no_dups, no_dups)
    tail = (cfg.limits.max_earley_items, cfg.use_leo, stack, trie.node_info.shape[0], mask)
    today = (*head, lexer.views, cfg.tables.grammar_views, arena.views, *tail)
    round22 = (*head, lexer.trans, lexer.accepting, cfg.tables.grammar_views, arena.views, lexer.kernel_arrays, *tail)
    before = (*head, lexer.trans, lexer.accepting, cfg.tables.grammar, arena.arrays, lexer.kernel_arrays, *tail)

    @njit(nogil=True)
    def one(array):
        return array.shape[0]

    def no_op():  # a dispatcher per signature: entry_point takes the first one compiled
        @njit(nogil=True)
        def kernel(node_info, node_end, dup_primary, dup_other, trans, accepting, grammar, arena, lexer, max_row,
                   use_leo, stack, start, mask):
            return start, 0, 0
        return kernel

    @njit(nogil=True)
    def no_op_views(node_info, node_end, dup_primary, dup_other, lexer, grammar, arena, max_row, use_leo, stack,
                    start, mask):
        return start, 0, 0

    views = np.empty_like(arena.views)
    rows = [("one array", entry_point(one, (mask,)), (mask,)),
            ("walk, nothing to walk", entry_point(walk_cfg_kernel, today), today),
            ("no-op, tuples (before round 22)", entry_point(no_op(), before), before),
            ("no-op, round 22's views", entry_point(no_op(), round22), round22),
            ("no-op, views (lexer's too)", entry_point(no_op_views, today), today),
            ("arena views", entry_point(arena_views_kernel, (arena.arrays, views)), (arena.arrays, views))]
    for name, call, call_args in rows:
        print(f"{name:34s} {best_ns(call, call_args):7.0f} ns")


if __name__ == "__main__":
    main()
