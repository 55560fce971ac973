"""Fill many matchers' rows of one bitmask, the uncached ones in parallel threads.

A fill runs in two phases. First, in the caller's thread, each matcher's state is looked up
in its compiled grammar's mask cache (a dictionary lookup, no copy). Then only the rows not
cached are computed, in up to ``threads`` threads when there are two or more of them: the walk
kernels are compiled with ``nogil=True`` and overlap, while the Python around them (lexer
states built on demand) runs one thread at a time. Last, every row is copied in the caller's
thread. A batch of cached rows therefore never touches a thread (threads would only trade the
GIL back and forth); a batch of fresh states gains what its kernels' share allows, and where
that share is small the threads lose to the GIL's hand-overs. So the uncached rows' cost per row
is measured with one thread and with several (:class:`_ThreadChoice`), and the cheaper is used,
the other tried again now and then. Measurements: ``benchmarks/bench_batch.py``.
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .bitmask import bitmask_words
from .matcher import Matcher

_CPUS = os.cpu_count() or 1  # once: each call reads /sys (~60 µs), a fill of cached rows costs less
_POOL_LOCK = threading.Lock()
_POOL: list[tuple[int, ThreadPoolExecutor]] = []  # made on first use, replaced by a larger one on demand


def fill_next_token_bitmasks(matchers: Sequence[Matcher], bitmask: np.ndarray,
                             indices: Sequence[int] | None = None, *, threads: int | None = None) -> None:
    """Write ``matchers[i]``'s next-token mask into row ``indices[i]`` of ``bitmask`` (rows
    ``0..len(matchers)-1`` by default); the uncached masks are computed in up to ``threads``
    threads (default: the CPU count), or in one where that has measured cheaper.

    Each row is exactly what :meth:`Matcher.fill_next_token_bitmask` writes. The matchers must be
    distinct objects; matchers of one compiled grammar are fine, and so are forks that share a
    chart arena (their walks take turns on it, see :meth:`Matcher.fork`). Misuse (a bad row index, a wrong bitmask) raises
    before any row is written.
    """
    matchers = list(matchers)
    rows = _checked_indices(indices, len(matchers), bitmask)
    widths = [_checked_width(m, bitmask) for m in matchers]
    sources = [m._next_row(compute=False) for m in matchers]
    missing = [i for i, source in enumerate(sources) if source is None]
    workers = _CHOICE.workers(_thread_count(threads, len(missing)))
    start = time.perf_counter()
    if workers <= 1:
        for i in missing:
            sources[i] = matchers[i]._next_row()
    else:
        _compute_in_threads(matchers, missing, sources, workers)
    if len(missing) >= 2:
        _CHOICE.record(workers, (time.perf_counter() - start) / len(missing))
    for row, width, source in zip(rows, widths, sources):
        out = bitmask[row]
        out[:width] = source
        if width < out.shape[0]:
            out[width:] = 0


def _compute_in_threads(matchers: list[Matcher], missing: list[int], sources: list, workers: int) -> None:
    """Each thread (the caller's included) takes the next uncached row until none is left, so a
    slow mask does not hold up a fixed share of the batch."""
    order = itertools.count()  # next() on a count is atomic under the GIL
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for j in iter(order.__next__, None):
                if j >= len(missing) or errors:
                    return
                i = missing[j]
                sources[i] = matchers[i]._next_row()
        except BaseException as exc:  # noqa: BLE001 -- re-raised in the caller's thread
            errors.append(exc)

    pool = _pool(workers - 1)
    futures = [pool.submit(work) for _ in range(workers - 1)]
    work()
    for future in futures:
        future.result()
    if errors:
        raise errors[0]


class _ThreadChoice:
    """Uncached rows' cost per row in one thread and in ``n`` (the median of each one's last
    ``SAMPLES`` calls in this process: one stalled call does not flip the choice); :meth:`workers` gives the cheaper, and now and then the other, so that a
    change of workload is seen: every ``EXPLORE``-th call, times how much dearer the other is
    (at most 64 times), so that the trials cost about ``1 / EXPLORE`` of the time. Unsynchronized:
    a lost update only costs a sample."""

    EXPLORE = 16
    SAMPLES = 9

    def __init__(self) -> None:
        self.samples: dict[int, deque[float]] = {}
        self.calls = 0

    def cost(self, workers: int) -> float | None:
        found = self.samples.get(workers)
        return sorted(found)[len(found) // 2] if found else None

    def workers(self, allowed: int) -> int:
        if allowed <= 1:
            return allowed
        self.calls += 1
        one, many = self.cost(1), self.cost(allowed)
        if one is None or many is None:
            return 1 if one is None else allowed
        better, other = (allowed, 1) if many < one else (1, allowed)
        period = self.EXPLORE * int(min(64.0, max(one, many) / max(min(one, many), 1e-9)))
        return other if self.calls % period == 0 else better

    def record(self, workers: int, seconds_per_row: float) -> None:
        self.samples.setdefault(workers, deque(maxlen=self.SAMPLES)).append(seconds_per_row)


_CHOICE = _ThreadChoice()


def _pool(size: int) -> ThreadPoolExecutor:
    """A shared pool of at least ``size`` threads. A smaller one is dropped, not shut down: a call
    on another thread may still be submitting to it, and its idle threads cost nothing."""
    with _POOL_LOCK:
        if not _POOL or _POOL[-1][0] < size:
            size = max(size, _CPUS)
            _POOL[:] = [(size, ThreadPoolExecutor(max_workers=size, thread_name_prefix="leapgram-fill"))]
        return _POOL[-1][1]


def _thread_count(threads: int | None, jobs: int) -> int:
    if threads is None:
        threads = _CPUS
    elif isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads must be an int >= 1 or None, not {threads!r}")
    return max(1, min(int(threads), jobs, _CPUS))  # the kernels gain nothing past the cores


def _checked_width(matcher: Matcher, bitmask: np.ndarray) -> int:
    if not isinstance(matcher, Matcher):
        raise TypeError(f"matchers must be leapgram.Matcher objects, not {type(matcher).__name__}")
    words = bitmask_words(matcher.compiled.vocab_size)
    if bitmask.shape[1] < words:
        raise ValueError(f"bitmask must have shape (batch, >= {words}), got {bitmask.shape}")
    return words


def _checked_indices(indices: Sequence[int] | None, count: int, bitmask: np.ndarray) -> list[int]:
    if not isinstance(bitmask, np.ndarray):
        raise TypeError(f"bitmask must be a 2-D numpy int32 array, not {type(bitmask).__name__}; "
                        "allocate one with leapgram.allocate_token_bitmask")
    if bitmask.ndim != 2:
        raise ValueError(f"bitmask must have shape (batch, words), got {bitmask.shape}")
    if bitmask.dtype != np.int32:
        raise TypeError(f"bitmask dtype must be int32, got {bitmask.dtype}")
    if bitmask.shape[1] > 1 and bitmask.strides[1] != bitmask.itemsize:  # as the matcher: rows contiguous
        raise ValueError("bitmask rows must be C-contiguous; use np.ascontiguousarray")
    if not bitmask.flags.writeable:
        raise ValueError("bitmask is read-only")
    if indices is None:
        if count > bitmask.shape[0]:
            raise ValueError(f"{count} matchers but the bitmask has {bitmask.shape[0]} rows")
        return list(range(count))
    rows = []
    for i in indices:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise TypeError(f"the row index must be an int, not {type(i).__name__}")
        if not 0 <= i < bitmask.shape[0]:
            raise ValueError(f"index {i} out of range for a bitmask of {bitmask.shape[0]} rows")
        rows.append(int(i))
    if len(rows) != count:
        raise ValueError(f"{count} matchers but {len(rows)} indices")
    if len(set(rows)) != len(rows):
        raise ValueError("indices must be distinct: two matchers would write one row")
    return rows
