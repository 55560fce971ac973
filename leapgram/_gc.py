"""Garbage collection deferred while leapgram builds objects that live as long as the process."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collections_deferred() -> Iterator[None]:
    """No garbage collection inside the block; afterwards the collector is on or off exactly as
    before, and the objects that exist then are moved to the oldest generation.

    ``import leapgram`` (numpy and numba included) allocates about 0.3 s worth of modules,
    functions and types, nearly all kept for good. CPython scanned them in a dozen young
    collections and a 20-25 ms full one inside the import, freeing a few hundred objects. Moved
    to the oldest generation (``gc.freeze`` then ``gc.unfreeze``: two list splices), they are
    scanned only by the process's next full collection, as if they had survived the young ones;
    garbage among them is freed then. When the caller has frozen objects (``gc.freeze``), the
    move is skipped, since ``gc.unfreeze`` would thaw theirs too.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if enabled:
            gc.enable()


_PAUSE_LOCK = threading.Lock()
_paused = [0, False]  # threads inside paused_collections, and whether the collector was on when the first entered


@contextmanager
def paused_collections() -> Iterator[None]:
    """No automatic collection inside the block, for work that allocates many objects that
    reference counting frees when it ends (a schema's translation: its translator's memo and
    composed schemas) or that live on (the rules). The allocations still count, so the first
    collection after the block scans once what survived it, where collections during the block
    scanned the same objects again and again, and promoted them into the older generations'
    collections (a tenth of the largest schemas' translation time).

    Thread-safe and re-entrant: the collector is off while any thread is inside such a block and
    back as it was when the first one entered once the last one leaves (a ``gc.enable`` or
    ``gc.disable`` by someone else in between is overridden then). Unlike
    :func:`collections_deferred`, nothing is moved between generations: garbage cycles made
    inside are collected as usual afterwards."""
    with _PAUSE_LOCK:
        if _paused[0] == 0:
            _paused[1] = gc.isenabled()
            gc.disable()
        _paused[0] += 1
    try:
        yield
    finally:
        with _PAUSE_LOCK:
            _paused[0] -= 1
            if _paused[0] == 0 and _paused[1]:
                gc.enable()
