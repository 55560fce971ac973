"""The trie walk's ``DONE`` payload says when the arena's memo tables need growing (the test
``ChartArena.tidy`` makes), so the walk calls ``tidy`` only then."""

from __future__ import annotations

import numpy as np

from leapgram import Matcher
from leapgram._kernels import earley as k
from leapgram._kernels.cfg_walk import tables_filling
from leapgram._kernels.tables import table_rehash_kernel
from leapgram.parser.arena import _empty_table
from tests.helpers.cfg_grammars import GRAMMARS
from tests.helpers.compiling import compile_for
from tests.helpers.masks import brute_force_allowed, mask_set, walk_to


def _shrink_tables(arena) -> None:
    """The arena's boundary, child and Leo tables moved into tables of 16 entries."""
    for keys_name, vals_name in (("bound_keys", "bound_vals"), ("child_keys", "child_vals"), ("leo_keys", "leo_vals")):
        keys, vals = _empty_table(16)
        table_rehash_kernel(getattr(arena, keys_name), getattr(arena, vals_name), keys, vals)
        setattr(arena, keys_name, keys)
        setattr(arena, vals_name, vals)
    arena._pack()


def _rooms(arena) -> tuple[int, int, int]:
    return (arena.bound_keys.shape[0] // 4 - 2, arena.child_keys.shape[0] // 4 - 2,
            arena.leo_keys.shape[0] // 4 - 2)


def test_tables_filling_is_the_test_of_tidy(small_vocab):
    """1 exactly when some count passes its table's room, for each of the three tables."""
    matcher = Matcher(compile_for(GRAMMARS["json"](), small_vocab))
    arena = matcher._states[-1][0]
    saved = arena.counts.copy()
    try:
        for field, room in zip((k.BOUND_COUNT, k.CHILD_COUNT, k.LEO_COUNT), _rooms(arena)):
            arena.counts[[k.BOUND_COUNT, k.CHILD_COUNT, k.LEO_COUNT]] = 0
            arena.counts[field] = room
            assert tables_filling(arena.arrays) == 0
            arena.counts[field] = room + 1
            assert tables_filling(arena.arrays) == 1
    finally:
        arena.counts[:] = saved


def test_a_walk_grows_the_tables_past_their_room(small_vocab):
    """Along random outputs, whenever the boundary table holds more than its room before a mask
    walk (consuming tokens fills it too), it is larger after the walk; masks stay exact."""
    compiled = compile_for(GRAMMARS["json"](), small_vocab)
    rng = np.random.default_rng(11)
    grown = 0
    for _ in range(6):
        matcher = Matcher(compiled)
        arena = matcher._states[-1][0]
        for _ in range(60):
            assert mask_set(matcher, small_vocab) == brute_force_allowed(matcher, small_vocab)
            if arena.counts[k.BOUND_COUNT] > 2:
                _shrink_tables(arena)  # 16 entries: room 2, the kernels' limit 8
                size = arena.bound_keys.shape[0]
                state = matcher._states[-1]
                compiled._engine.new_mask(state, compiled._engine.mask_key(state))  # a walk (no cache)
                assert arena.bound_keys.shape[0] > size
                grown += 1
            if not walk_to(matcher, small_vocab, rng, 1):
                break
    assert grown
