"""What a mask costs besides its first-time work: cached masks and the fixed path around a walk.

``python benchmarks/mask_path.py FOLDER [--sample N] [--tokenizer T] [--seed S]``: the cases of
FOLDER (a JSONSchemaBench folder, or one of links to some of its files), shuffled, are compiled
and walked over their valid instances (a mask per token, as ``bench_schemas.py`` does: the first
pass). Each grammar's instances are then walked three more times (thread CPU per fill):

* ``cached``: every mask found in the grammar's mask cache, end to end through
  ``Matcher.fill_next_token_bitmask``; and ``consume_token`` alone;
* ``known``: each state's cache entry dropped before its fill, so the mask is computed again
  with every lexer row, fresh state and boundary known (the walk and the Python around it, no
  first-time work), and the walk kernel's share of it (a pass with the kernel timed);
* the parts of the Python around such a walk, each timed alone beside the fill (what a timer
  call adds to each, printed, is in each).

``docs/design/trie-walk.md`` ("The path around a mask") has the figures of round 21.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_schemas import LeapgramEngine, load_cases, mask_allows, resolve_tokenizer

_clock = time.thread_time_ns


def walk(engine, compiled, instances, times: list[int] | None = None, drop: bool = False, each=None) -> None:
    """Fill a mask per token along the valid ``instances``; fills timed into ``times``; with
    ``drop``, each state's mask cache entry dropped first; ``each(compiled, state)`` before a fill."""
    for valid, tokens in instances:
        if not valid:
            continue
        matcher = engine.matcher(compiled)
        for token in [*tokens, None]:
            plain = not matcher._pending[-1] and not matcher._terminated and matcher._error is None
            if plain and (drop or each):
                state = matcher._states[-1]
                if drop:
                    compiled._masks.pop(compiled._engine.mask_key(state), None)
                if each:
                    each(compiled, state)
            start = _clock()
            engine.fill(matcher)
            if times is not None:
                times.append(_clock() - start)
            if token is None or not mask_allows(engine.bitmask, token) or not engine.consume(matcher, token):
                break


def cfg_cases(engine, cases):
    """``(number, case, compiled)`` for each case (``number`` its place in ``cases``) that
    compiles to a context-free engine, after its first mask; a schema leapgram does not take, or
    one compiled to a regex engine, is skipped."""
    from leapgram.mask import engines

    for number, case in enumerate(cases):
        engine.prepare()
        try:
            compiled = engine.compile(case.schema)
            engine.fill(engine.matcher(compiled))
        except Exception:  # noqa: BLE001, S112 - a schema leapgram does not take is skipped
            continue
        if isinstance(compiled._engine, engines.CfgEngine):
            yield number, case, compiled


def consume_times(engine, compiled, instances, times: list[int]) -> None:
    """``consume_token`` alone along the valid ``instances``."""
    for valid, tokens in instances:
        if not valid:
            continue
        matcher = engine.matcher(compiled)
        for token in tokens:
            start = _clock()
            accepted = matcher.consume_token(token)
            times.append(_clock() - start)
            if not accepted:
                break


def time_parts(parts: Counter):
    """``each`` for :func:`walk`: the parts of a computed mask's Python, timed one by one."""
    import numpy as np

    from leapgram.compiler import MaskRow

    def each(compiled, state) -> None:
        engine = compiled._engine
        t0 = _clock()
        key = engine.mask_key(state)
        t1 = _clock()
        if engine.slicer is not None and key[2] != 0:
            engine.slicer.split(key[2], engine.trie)
        t2 = _clock()
        np.zeros(engine._words, dtype=np.uint32)
        t3 = _clock()
        accepting = engine.is_accepting(state)
        t4 = _clock()
        mask = engine.new_mask(state, key)
        t5 = _clock()
        view = compiled._rows.intern(mask.view(np.int32))
        t6 = _clock()
        MaskRow(view, accepting)
        t7 = _clock()
        t8 = _clock()  # the cost a timer call adds to each part
        for label, spent in zip(("mask_key", "slicer split", "np.zeros", "is_accepting", "new_mask", "intern",
                                 "MaskRow", "(a timer call)"),
                                (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5, t7 - t6, t8 - t7)):
            parts[label] += spent
        parts["masks"] += 1

    return each


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--tokenizer", default="llama3")
    parser.add_argument("--sample", type=int, default=120)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    from leapgram.mask import engines

    tokenizer = resolve_tokenizer(args.tokenizer)
    cases = load_cases(Path(args.folder), tokenizer, None, args.sample)
    random.Random(args.seed).shuffle(cases)
    engine = LeapgramEngine(tokenizer)
    first, cached, consumed, known = [], [], [], []
    kernel, parts = Counter(), Counter()
    kernel_call = engines._WALK_KERNEL.call

    def timed_kernel(*call_args):
        start = _clock()
        result = kernel_call(*call_args)
        kernel["ns"] += _clock() - start
        kernel["calls"] += 1
        return result

    for number, case, compiled in cfg_cases(engine, cases):
        walk(engine, compiled, case.instances, first if number >= 8 else None)  # the first 8 warm up
        if number < 8:
            continue
        walk(engine, compiled, case.instances, cached)
        consume_times(engine, compiled, case.instances, consumed)
        walk(engine, compiled, case.instances, known, drop=True)
        engines._WALK_KERNEL.call = timed_kernel
        try:
            walk(engine, compiled, case.instances, drop=True)
        finally:
            engines._WALK_KERNEL.call = kernel_call
        walk(engine, compiled, case.instances, drop=True, each=time_parts(parts))

    def mean(times) -> float:
        return sum(times) / max(len(times), 1) / 1e3

    print(f"{len(first)} masks; first pass TBM {mean(first):.1f} µs")
    print(f"cached: {mean(cached):.2f} µs (median {statistics.median(cached) / 1e3:.2f}); "
          f"consume_token {mean(consumed):.2f} µs")
    print(f"known (computed again, nothing new): {mean(known):.1f} µs (median {statistics.median(known) / 1e3:.1f});"
          f" walk kernel {kernel['ns'] / max(len(known), 1) / 1e3:.1f} µs in {kernel['calls'] / max(len(known), 1):.2f}"
          " calls per mask")
    masks = max(parts.pop("masks", 0), 1)
    print("parts, µs per mask (a timer call in each): "
          + ", ".join(f"{label} {spent / masks / 1e3:.2f}" for label, spent in parts.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
