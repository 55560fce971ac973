"""``leapgram.fill_next_token_bitmasks``: rows filled in threads equal rows filled one by one."""

from __future__ import annotations

import os

import numpy as np
import pytest

import leapgram
import leapgram.batch as batch_module
from leapgram import Grammar, Matcher, Vocabulary

GRAMMARS = [
    Grammar.from_json_schema({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}),
    Grammar.from_json_schema({"type": "array", "items": {"enum": ["x", "yy", "zzz"]}}),
    Grammar.from_regex(r"[a-f]+\d{2,4}"),
    Grammar.from_lark('start: item ("," item)*\nitem: "(" start ")" | /[0-9]+/'),
]
PREFIXES = [b'{"a": 12, "b": "hi', b'["yy", "z', b"abc12", b"(1,(2"]


@pytest.fixture
def threaded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every call with two or more uncached rows computes them in threads (the fill would
    otherwise choose by measured cost, and start with one thread); the list counts such calls."""
    calls: list[int] = []
    compute = batch_module._compute_in_threads

    def spy(matchers, missing, sources, workers):
        calls.append(workers)
        return compute(matchers, missing, sources, workers)

    class Always:
        def workers(self, allowed: int) -> int:
            return allowed

        def record(self, workers: int, seconds_per_row: float) -> None:
            pass

    monkeypatch.setattr(batch_module, "_CHOICE", Always())
    monkeypatch.setattr(batch_module, "_compute_in_threads", spy)
    return calls


@pytest.fixture
def matchers(byte_vocab: Vocabulary) -> list[Matcher]:
    """Fresh compiled grammars each time, so no mask is cached before the fill under test."""
    compiler = leapgram.GrammarCompiler(byte_vocab, cache_size=0)
    found = []
    for copy in range(6):
        for grammar, prefix in zip(GRAMMARS, PREFIXES):
            matcher = Matcher(compiler.compile(grammar))
            assert matcher.consume_tokens(list(prefix[: copy * len(prefix) // 5]))
            found.append(matcher)
    return found


def words(matchers: list[Matcher]) -> int:
    return leapgram.allocate_token_bitmask(1, matchers[0].compiled.vocab.size).shape[1]


def serial_rows(matchers: list[Matcher], rows: int, indices: list[int]) -> np.ndarray:
    out = np.zeros((rows, words(matchers)), dtype=np.int32)
    for matcher, index in zip(matchers, indices):
        matcher.fill_next_token_bitmask(out, index)
    return out


@pytest.mark.parametrize("threads", [None, 1, 2, 4, 64])
def test_threads_fill_the_same_rows(matchers: list[Matcher], threads: int | None, threaded: list[int]) -> None:
    bitmask = np.full((len(matchers), words(matchers)), -1, dtype=np.int32)
    leapgram.fill_next_token_bitmasks(matchers, bitmask, threads=threads)
    if threads != 1 and (os.cpu_count() or 1) > 1:
        assert threaded and threaded[0] > 1  # the uncached rows were computed in threads
    np.testing.assert_array_equal(bitmask, serial_rows(matchers, len(matchers), list(range(len(matchers)))))


def test_indices_pick_rows_and_leave_the_others(matchers: list[Matcher]) -> None:
    indices = [2 * i + 1 for i in range(len(matchers))][::-1]
    bitmask = np.full((2 * len(matchers) + 1, words(matchers)), 7, dtype=np.int32)
    leapgram.fill_next_token_bitmasks(matchers, bitmask, indices, threads=3)
    expected = serial_rows(matchers, bitmask.shape[0], indices)
    np.testing.assert_array_equal(bitmask[indices], expected[indices])
    untouched = sorted(set(range(bitmask.shape[0])) - set(indices))
    assert (bitmask[untouched] == 7).all()


def test_misuse_raises(matchers: list[Matcher]) -> None:
    bitmask = np.zeros((len(matchers), words(matchers)), dtype=np.int32)
    with pytest.raises(ValueError, match="indices"):
        leapgram.fill_next_token_bitmasks(matchers[:2], bitmask, [0])
    with pytest.raises(ValueError, match="distinct"):
        leapgram.fill_next_token_bitmasks(matchers[:2], bitmask, [1, 1])
    with pytest.raises(ValueError, match="threads"):
        leapgram.fill_next_token_bitmasks(matchers, bitmask, threads=0)
    with pytest.raises(ValueError, match="rows"):
        leapgram.fill_next_token_bitmasks(matchers, bitmask[:3])
    with pytest.raises(ValueError, match="out of range"):
        leapgram.fill_next_token_bitmasks(matchers[:4], bitmask, [0, 1, 2, len(matchers) + 5], threads=2)
    with pytest.raises(TypeError, match="int32"):
        leapgram.fill_next_token_bitmasks(matchers[:2], bitmask.astype(np.int64))
    with pytest.raises(TypeError, match="row index"):
        leapgram.fill_next_token_bitmasks(matchers[:1], bitmask, [1.0])
    assert not bitmask.any()  # misuse writes no row
    leapgram.fill_next_token_bitmasks([], bitmask)


def test_cached_and_fresh_rows_in_one_batch(byte_vocab: Vocabulary, threaded: list[int]) -> None:
    """Rows whose masks are cached (copied in the caller's thread) and fresh ones (computed in
    threads) and a terminated matcher, in one call."""
    compiler = leapgram.GrammarCompiler(byte_vocab, cache_size=0)
    warm = [Matcher(compiler.compile(g)) for g in GRAMMARS]
    for matcher in warm:
        matcher.compute_mask()  # start states cached
    fresh = [Matcher(compiler.compile(g)) for g in GRAMMARS]
    for matcher, prefix in zip(fresh, PREFIXES):
        assert matcher.consume_tokens(list(prefix))
    done = Matcher(compiler.compile(Grammar.from_regex("ab")))
    assert done.consume_tokens([ord("a"), ord("b")] + list(byte_vocab.eos_token_ids)[:1])
    batch = [m.fork() for m in warm] + fresh + [done]
    bitmask = np.full((len(batch), words(batch) + 2), -1, dtype=np.int32)  # wider than the vocabulary
    leapgram.fill_next_token_bitmasks(batch, bitmask, threads=2)
    assert threaded == [2] or (os.cpu_count() or 1) == 1
    expected = np.full_like(bitmask, -1)
    for index, matcher in enumerate(batch):
        matcher.fill_next_token_bitmask(expected, index)
    np.testing.assert_array_equal(bitmask, expected)


def test_bitmask_views_as_the_matcher_takes_them(matchers: list[Matcher]) -> None:
    """A column slice with contiguous rows is filled as ``Matcher.fill_next_token_bitmask``
    fills it; a read-only bitmask is refused by both with the same error."""
    width = words(matchers)
    wide = np.full((len(matchers), width + 5), 9, dtype=np.int32)
    leapgram.fill_next_token_bitmasks(matchers, wide[:, : width + 2])
    np.testing.assert_array_equal(wide[:, :width], serial_rows(matchers, len(matchers), list(range(len(matchers)))))
    assert (wide[:, width : width + 2] == 0).all() and (wide[:, width + 2 :] == 9).all()
    frozen = np.zeros((len(matchers), width), dtype=np.int32)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        leapgram.fill_next_token_bitmasks(matchers, frozen)
    with pytest.raises(ValueError, match="read-only"):
        matchers[0].fill_next_token_bitmask(frozen, 0)


def test_one_matcher_fills_every_row_of_a_wide_bitmask(matchers: list[Matcher]) -> None:
    """``Matcher.fill_next_token_bitmask`` into each row of one bitmask in turn (rows after the
    first are cut from the checked bitmask's views): every row is the mask, its padding zero."""
    width = words(matchers)
    bitmask = np.full((5, width + 3), -1, dtype=np.int32)
    for matcher in matchers[:4]:
        expected = matcher.compute_mask()
        for index in (3, 0, 4, 1, 2):
            matcher.fill_next_token_bitmask(bitmask, index)
        assert (bitmask[:, :width] == expected).all() and (bitmask[:, width:] == 0).all()
        bitmask[:] = -1
