"""Open-addressing hash tables over int64 arrays, for the kernels.

A table is two arrays of the same power-of-two size: ``keys`` (``EMPTY_KEY`` in free slots) and
``values``. Keys are non-negative int64s, typically ``a << 32 | b`` with both parts below 2**31.
The kernels never grow a table: they refuse to insert past half load (the caller grows it with
:func:`table_rehash_kernel` and tries again).
"""

from __future__ import annotations

from . import njit

EMPTY_KEY = -1
ABSENT = -3


@njit(cache=True, nogil=True, inline="always")
def table_slot_kernel(keys, key):
    """The slot of ``key`` in ``keys``, or the empty slot where it goes."""
    mask = keys.shape[0] - 1
    slot = ((key & 0xFFFFFFFF) * 40503 + (key >> 32) * 65599 + (key >> 45)) & mask
    while keys[slot] != key and keys[slot] != EMPTY_KEY:
        slot = (slot + 1) & mask
    return slot


@njit(cache=True, nogil=True, inline="always")
def table_get_kernel(keys, values, key):
    """The value stored for ``key``, or ``ABSENT``."""
    slot = table_slot_kernel(keys, key)
    if keys[slot] == EMPTY_KEY:
        return ABSENT
    return values[slot]


@njit(cache=True, nogil=True)
def table_put_kernel(keys, values, counts, which, key, value):
    """Store ``key -> value``; ``counts[which]`` is the table's entry count. Returns ``False``
    (and stores nothing) when a new entry would take the table past half load."""
    slot = table_slot_kernel(keys, key)
    if keys[slot] == EMPTY_KEY:
        if (counts[which] + 1) * 2 > keys.shape[0]:
            return False
        counts[which] += 1
        keys[slot] = key
    values[slot] = value
    return True


@njit(cache=True, nogil=True)
def table_rehash_kernel(old_keys, old_values, keys, values):
    """Insert every entry of the old table into the (empty, larger) new one; returns the count."""
    count = 0
    for k in range(old_keys.shape[0]):
        key = old_keys[k]
        if key != EMPTY_KEY:
            slot = table_slot_kernel(keys, key)
            keys[slot] = key
            values[slot] = old_values[k]
            count += 1
    return count
