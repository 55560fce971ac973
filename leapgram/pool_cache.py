"""The JSON Schema base pools on disk, for a fresh process: built once per installation, then read.

Registered with :mod:`leapgram.regex.pool_store` when imported (``import leapgram`` does), the
seam by which the front end, which may not import the vocabulary cache, reaches it.

A base pool (:func:`leapgram.frontends.json_schema.common.base_pool`) is pure Python work: the
pool with the formats parses their regexes, spells them in JSON and makes their value states'
row templates, about 90 ms of CPU (round 25), paid by ``warm_up``, by a process's first schema
with a ``format`` and by its first Lark or GBNF grammar. Read back from a file it takes about
7 ms. The pool's state (its expressions and every per-expression cache, all lists, dicts, sets
and tuples of ints, bytes and strings) is written with :mod:`marshal`; the family's memo holds
numpy arrays (the templates' tables), stored as arrays of the entry.

Entries are files of the vocabulary cache's format (:mod:`leapgram.vocab.cache`: atomic writes,
CRC-32) in a folder of their own beside its folder (:func:`pool_folder`, ``.../leapgram/pools``),
with bounds of their own (:data:`MAX_ENTRIES`, :data:`MAX_BYTES`: a pool does not push a
tokenizer out); ``LEAPGRAM_VOCAB_CACHE=0`` turns both off, ``LEAPGRAM_POOL_CACHE=0`` this one
alone. The key covers the Python version (marshal's format), the limits, the sources that build
a pool (``leapgram/regex``, ``leapgram/frontends/json_schema``, ``limits.py``) and the values of
the module constants the build reads (the formats' regexes, the template bounds, JSON's tokens),
so an edit or a patched constant misses. A file that does not read back whole (a missing,
corrupt or foreign entry, or a state of an unexpected shape) is a miss: the pool is built as
without the cache.

:mod:`marshal` is not meant to be safe against crafted data (a crafted file can crash the process),
the pool read back decides every mask of its schemas, and an entry has no signature. So an entry is
read only where no other user could have written it: the folder and the file owned by this user (or
root) and writable by their owner alone, the file opened through the checked folder without
following a link (:func:`leapgram.vocab.cache.open_private`); written, the folder is made ``0o700``
and the file ``0o600``. Anything else (a folder shared with a group, one made by another user, a
link) is a miss, and nothing is written there. Where the platform has no POSIX owners (Windows) the
pools are not cached. The vocabulary cache's own entries are arrays checked before use and never
unpickled, so they need no such rule.
"""

from __future__ import annotations

import marshal
import os
import sys
import threading
from pathlib import Path

import numpy as np

from .limits import Limits
from .regex import pool_store
from .regex.expr import ExprPool, PoolFamily
from .vocab import cache

POOL_FORMAT = 1
# an entry per limits value and formats flag (1.7 MB the formats' pool, 73 KB the other): room
# for four limits values, LRU beyond
MAX_ENTRIES = 8
MAX_BYTES = 64 << 20
_ARRAY = "leapgram.pool_cache.array"  # marks an array of the entry inside the encoded memo
_NOT_STORED = ("lock", "limits", "family")  # remade on reading
_SOURCES = tuple(str(Path(__file__).parent / name) for name in
                 ("regex", "frontends/json_schema", "limits.py", "pool_cache.py"))


def read_pool(limits: Limits, formats: bool, settings: tuple) -> ExprPool | None:
    """The base pool stored for these ``limits``, ``formats`` and ``settings`` (the values of
    the build's module constants), or None (off, missing, or unreadable)."""
    key = _key(limits, formats, settings)
    arrays = None if key is None else cache.read_entry(key, pool_folder(), private=True)
    if arrays is None or "state" not in arrays:
        return None
    try:
        return _pool_from(marshal.loads(arrays["state"]), arrays, limits)
    except Exception:  # noqa: BLE001 - whatever a damaged entry raises, the cache only misses
        return None


def write_pool(pool: ExprPool, limits: Limits, formats: bool, settings: tuple) -> bool:
    """Store ``pool`` (a base pool, its family made) for :func:`read_pool`; False when nothing
    was written (off, a folder not writable, or a state marshal cannot write)."""
    key = _key(limits, formats, settings)
    if key is None or pool.family is None:
        return False
    arrays: list[np.ndarray] = []
    family = pool.family
    try:
        state = {name: (None if name in _NOT_STORED else value) for name, value in pool.__dict__.items()}
        memo = _encode(family.memo, arrays, {})
        blob = marshal.dumps((POOL_FORMAT, state, (family.size, family.base_size, family.set_up, memo)))
    except (ValueError, TypeError):  # an object marshal cannot write: not cached
        return False
    entry = {"state": np.frombuffer(blob, dtype=np.uint8)}
    entry.update((f"a{index}", array) for index, array in enumerate(arrays))
    return cache.write_entry(key, entry, pool_folder(), private=True, bounds=(MAX_ENTRIES, MAX_BYTES))


def pool_folder() -> Path | None:
    """The folder of the pools' entries: ``pools`` beside the vocabulary cache's folder
    (``$LEAPGRAM_CACHE_DIR/pools``, ``~/.cache/leapgram/pools``...); None when that cache is off."""
    folder = cache.cache_folder()
    return None if folder is None else folder.parent / "pools"


def _key(limits: Limits, formats: bool, settings: tuple) -> str | None:
    if os.environ.get("LEAPGRAM_POOL_CACHE", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    if cache.cache_folder() is None or not cache.PRIVATE_READS:
        return None
    text = repr((POOL_FORMAT, sys.version, marshal.version, limits, bool(formats), settings))
    return cache.entry_key(b"json-schema-base-pool", text.encode(), cache.files_digest(_SOURCES))


def _encode(value: object, arrays: list[np.ndarray], seen: dict[int, object]) -> object:
    """``value`` with each numpy array replaced by ``(_ARRAY, index)`` into ``arrays``; a tuple
    met twice is encoded once (marshal then keeps it shared, as the memo's templates are)."""
    if isinstance(value, np.ndarray):
        arrays.append(value)
        return (_ARRAY, len(arrays) - 1, bool(value.flags.writeable))
    if isinstance(value, tuple):
        found = seen.get(id(value))
        if found is None:
            found = seen[id(value)] = (value, tuple(_encode(item, arrays, seen) for item in value))
        return found[1]
    if isinstance(value, dict):
        return {key: _encode(item, arrays, seen) for key, item in value.items()}
    return value  # (an array inside anything else: marshal refuses it, and nothing is stored)


def _decode(value: object, arrays: dict[str, np.ndarray], seen: dict[int, object]) -> object:
    """The inverse of :func:`_encode` (shared tuples stay shared)."""
    if isinstance(value, tuple):
        found = seen.get(id(value))
        if found is None:
            if len(value) == 3 and value[0] == _ARRAY:
                array = arrays[f"a{value[1]}"].copy()  # (a view would keep the whole entry's buffer)
                array.flags.writeable = value[2]
                decoded = array
            else:
                decoded = tuple(_decode(item, arrays, seen) for item in value)
            found = seen[id(value)] = (value, decoded)
        return found[1]
    if isinstance(value, dict):
        return {key: _decode(item, arrays, seen) for key, item in value.items()}
    return value


def _pool_from(stored: tuple, arrays: dict[str, np.ndarray], limits: Limits) -> ExprPool | None:
    version, state, (size, base_size, set_up, memo) = stored
    kind = state.get("kind")
    if version != POOL_FORMAT or not isinstance(kind, list) or not 0 < size <= base_size <= len(kind):
        return None
    if any(len(state.get(name, ())) != len(kind) for name in ("args", "nullable", "has_bool")):
        return None
    family = PoolFamily(size, base_size)
    family.memo = _decode(memo, arrays, {})
    family.set_up = set_up
    pool = ExprPool.__new__(ExprPool)
    state.update(lock=threading.RLock(), limits=limits, family=family)
    pool.__dict__.update(state)
    return pool


pool_store.register(read_pool, write_pool)
