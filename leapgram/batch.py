"""Fill many matchers' rows of one bitmask in parallel threads.

The mask kernels are compiled with ``nogil=True``, so threads overlap while they walk the token
trie; the Python around them (a cached mask's lookup and copy, a matcher's bookkeeping) holds
the GIL and runs one thread at a time. A batch whose masks are mostly cached therefore gains
little from threads; a batch of fresh states (new grammars, new schema branches) gains up to the
number of cores. Measurements: ``benchmarks/bench_batch.py``.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .matcher import Matcher

_POOL_LOCK = threading.Lock()
_POOL: list[tuple[int, ThreadPoolExecutor]] = []  # made on first use, replaced by a larger one on demand


def fill_next_token_bitmasks(matchers: Sequence[Matcher], bitmask: np.ndarray,
                             indices: Sequence[int] | None = None, *, threads: int | None = None) -> None:
    """Write ``matchers[i]``'s next-token mask into row ``indices[i]`` of ``bitmask`` (rows
    ``0..len(matchers)-1`` by default), in up to ``threads`` threads (default: the CPU count).

    Each row is exactly what :meth:`Matcher.fill_next_token_bitmask` writes. The matchers must be
    distinct objects, and no two may be forks that share a chart arena (see :meth:`Matcher.fork`);
    matchers of one compiled grammar are fine. The first misuse error (a bad row index, a wrong
    bitmask) is raised after every thread has stopped.
    """
    matchers = list(matchers)
    rows = _checked_indices(indices, len(matchers), bitmask)
    workers = _thread_count(threads, len(matchers))
    if workers <= 1:
        for matcher, row in zip(matchers, rows):
            matcher.fill_next_token_bitmask(bitmask, row)
        return
    _fill_in_threads(matchers, rows, bitmask, workers)


def _fill_in_threads(matchers: list[Matcher], rows: list[int], bitmask: np.ndarray, workers: int) -> None:
    """Each thread (the caller's included) takes the next unfilled row until none is left, so a
    slow mask does not hold up a fixed share of the batch."""
    order = itertools.count()  # next() on a count is atomic under the GIL
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for i in iter(order.__next__, None):
                if i >= len(matchers) or errors:
                    return
                matchers[i].fill_next_token_bitmask(bitmask, rows[i])
        except BaseException as exc:  # noqa: BLE001 -- re-raised in the caller's thread
            errors.append(exc)

    pool = _pool(workers - 1)
    futures = [pool.submit(work) for _ in range(workers - 1)]
    work()
    for future in futures:
        future.result()
    if errors:
        raise errors[0]


def _pool(size: int) -> ThreadPoolExecutor:
    """A shared pool of at least ``size`` threads. A smaller one is dropped, not shut down: a call
    on another thread may still be submitting to it, and its idle threads cost nothing."""
    with _POOL_LOCK:
        if not _POOL or _POOL[-1][0] < size:
            size = max(size, os.cpu_count() or 1)
            _POOL[:] = [(size, ThreadPoolExecutor(max_workers=size, thread_name_prefix="leapgram-fill"))]
        return _POOL[-1][1]


def _thread_count(threads: int | None, jobs: int) -> int:
    if threads is None:
        threads = os.cpu_count() or 1
    elif isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads must be an int >= 1 or None, not {threads!r}")
    return max(1, min(int(threads), jobs, os.cpu_count() or 1))  # the kernels gain nothing past the cores


def _checked_indices(indices: Sequence[int] | None, count: int, bitmask: np.ndarray) -> list[int]:
    if not isinstance(bitmask, np.ndarray) or bitmask.ndim != 2:
        raise ValueError("bitmask must be a 2-D numpy int32 array; allocate one with "
                         "leapgram.allocate_token_bitmask")
    if indices is None:
        if count > bitmask.shape[0]:
            raise ValueError(f"{count} matchers but the bitmask has {bitmask.shape[0]} rows")
        return list(range(count))
    rows = [int(i) for i in indices]
    if len(rows) != count:
        raise ValueError(f"{count} matchers but {len(rows)} indices")
    if len(set(rows)) != len(rows):
        raise ValueError("indices must be distinct: two matchers would write one row")
    return rows
