"""A compiled grammar's mask cache: second-chance eviction, rows shared by content across
grammars (``RowStore``), the row hash kernel against its twin, and the bounded zero padding."""

from __future__ import annotations

import gc
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import leapgram.compiler as compiler_module
import leapgram.matcher as matcher_module
from leapgram import Grammar, GrammarCompiler, Limits, Matcher, Vocabulary
from leapgram._kernels.rows import row_hash_kernel, row_hash_twin, rows_equal_kernel, rows_equal_twin
from tests.helpers.masks import masks_along


def test_a_hit_entry_survives_one_pass_of_the_eviction(byte_vocab):
    compiled = GrammarCompiler(byte_vocab, limits=Limits(max_cached_masks=3), cache_size=0).compile(
        Grammar.from_regex("abcdef"))
    key = compiled._engine.mask_key
    walker = Matcher(compiled)
    keys = []
    for byte in b"abc":
        walker.compute_mask()
        keys.append(key(walker._states[-1]))
        assert walker.consume_token(byte)
    assert list(compiled._masks) == keys  # full, none used since it was filled
    Matcher(compiled).compute_mask()  # a hit on the oldest: flagged used
    assert compiled._masks[keys[0]].used
    walker.compute_mask()  # a fourth row: the oldest gets a second chance (to the end), the next goes
    assert list(compiled._masks) == [keys[2], key(walker._states[-1]), keys[0]]
    assert not compiled._masks[keys[0]].used


def test_rows_equal_in_two_grammars_are_held_once():
    vocab = Vocabulary.byte_vocabulary()  # its own row store: grammars of other tests hold none of its rows
    compiler = GrammarCompiler(vocab, cache_size=0)
    first = compiler.compile(Grammar.from_regex("[a-z]+x"))
    second = compiler.compile(Grammar.from_regex("[a-z]+y"))
    rows = [c._state_row(Matcher(c)._states[-1]).row for c in (first, second)]
    assert rows[0] is rows[1]  # both start with [a-z]: one row
    assert not rows[0].flags.writeable
    held = weakref.ref(rows[0])
    del first, second, rows
    gc.collect()
    assert held() is None  # the store holds rows only while a mask cache does


def test_masks_are_exact_when_every_row_hash_collides(byte_vocab, monkeypatch: pytest.MonkeyPatch):
    grammar = Grammar.from_json_schema({"type": "object", "properties": {"a": {"type": "integer"},
                                                                          "b": {"type": "string"}}})
    text = b'{"a": 12, "b": "hi"}'
    expected = masks_along(GrammarCompiler(byte_vocab, cache_size=0).compile(grammar), text)

    class Colliding:
        call = staticmethod(lambda row: 12345)

    monkeypatch.setattr(compiler_module, "_ROW_HASH", Colliding)
    found = masks_along(GrammarCompiler(byte_vocab, cache_size=0).compile(grammar), text)
    assert all(np.array_equal(a, b) for a, b in zip(found, expected, strict=True))


@pytest.mark.parametrize("words", [0, 1, 7, 4008])
def test_row_hash_and_equality_kernels_equal_their_twins(words):
    rng = np.random.default_rng(words)
    row = rng.integers(-2**31, 2**31, words, dtype=np.int64).astype(np.int32)
    with np.errstate(over="ignore"):  # the kernel run as Python (NUMBA_DISABLE_JIT) wraps as numba does
        assert row_hash_kernel(row) == row_hash_twin(row)
    same = row.copy()
    assert bool(rows_equal_kernel(row, same)) is rows_equal_twin(row, same) is True
    if words:
        same[words // 2] ^= 1 << 30
        assert bool(rows_equal_kernel(row, same)) is rows_equal_twin(row, same) is False
        assert row_hash_twin(row) != row_hash_twin(same)
    assert bool(rows_equal_kernel(row, row[: words // 2])) is (words == 0)


def test_zero_padding_keeps_a_bounded_number_of_widths():
    for width in range(1, 3 * matcher_module._ZEROS_KEPT):
        assert not any(matcher_module._zeros(width).tolist())
        assert len(matcher_module._ZEROS) <= matcher_module._ZEROS_KEPT


def test_threads_interning_at_once_get_equal_read_only_rows():
    store = compiler_module.RowStore()
    contents = [np.full(64, value, dtype=np.int32) for value in (0, 1, -1)]

    def intern_many(_: int) -> bool:
        views = [store.intern(contents[i % 3].copy()) for i in range(300)]
        found = [view.obj for view in views]
        return all(np.array_equal(row, contents[i % 3]) and not row.flags.writeable for i, row in enumerate(found))

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(intern_many, range(4)))
    assert len(store) == 0  # nothing uses the rows any more
