"""Garbage collection deferred while leapgram builds objects that live as long as the process."""

from __future__ import annotations

import gc
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
