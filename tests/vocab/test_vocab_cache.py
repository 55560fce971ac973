"""The on-disk vocabulary cache (leapgram.vocab.cache): hit, miss, stale, corrupt, read-only, off,
and exact equality of the cached vocabulary and trie with the parsed ones."""

from __future__ import annotations

import json
import os
import shutil
import sys

import numpy as np
import pytest

from leapgram import TokenizerError, Vocabulary
from leapgram.vocab import cache
from leapgram.vocab.trie import TokenTrie
from tests.conftest import REAL_TOKENIZERS, tokenizer_path

FIELDS = (*cache.TRIE_FIELDS, "max_depth", "vocab_size")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("LEAPGRAM_CACHE_DIR", str(folder))
    monkeypatch.delenv("LEAPGRAM_VOCAB_CACHE", raising=False)
    return folder / "vocab"


@pytest.fixture
def gpt2(tmp_path):
    """A private copy of GPT-2's tokenizer folder (the tests edit it)."""
    folder = tmp_path / "gpt2"
    shutil.copytree(tokenizer_path("gpt2"), folder)
    return folder


def parsed(path, monkeypatch, **kwargs) -> tuple[Vocabulary, TokenTrie]:
    with monkeypatch.context() as patch:
        patch.setenv("LEAPGRAM_VOCAB_CACHE", "0")
        vocab = Vocabulary.from_tokenizer_json(path, **kwargs)
        return vocab, TokenTrie(vocab)


def assert_same(vocab: Vocabulary, trie: TokenTrie, expected: Vocabulary, expected_trie: TokenTrie) -> None:
    assert vocab.tokens() == expected.tokens()
    assert all(type(token) is bytes for token in vocab.tokens())
    assert vocab.size == expected.size
    assert vocab.special_token_ids == expected.special_token_ids
    assert vocab.eos_token_ids == expected.eos_token_ids
    assert vocab.name == expected.name
    assert vocab.has_encoder == expected.has_encoder
    for field in FIELDS:
        got, want = getattr(trie, field), getattr(expected_trie, field)
        if isinstance(want, np.ndarray):
            assert got.dtype == want.dtype and got.shape == want.shape, field
            assert got.flags.writeable and got.flags.c_contiguous, field
        assert np.array_equal(got, want), field


def entries(folder) -> list:
    return sorted(folder.glob("*" + cache.SUFFIX)) if folder.is_dir() else []


@pytest.mark.parametrize("name", REAL_TOKENIZERS)
def test_cached_vocabulary_and_trie_equal_the_parsed_ones(name, cache_dir, monkeypatch):
    expected, expected_trie = parsed(tokenizer_path(name), monkeypatch)
    missed = Vocabulary.from_tokenizer_json(tokenizer_path(name))
    assert len(entries(cache_dir)) == 1
    assert cache.cached_trie(missed) is not None  # the miss built the trie with the vocabulary
    assert_same(missed, TokenTrie(missed), expected, expected_trie)
    hit = Vocabulary.from_tokenizer_json(tokenizer_path(name))
    assert cache.cached_trie(hit) is not None
    assert_same(hit, TokenTrie(hit), expected, expected_trie)
    assert hit.encode(b"Hello, world") == expected.encode(b"Hello, world")


def test_a_hit_does_not_parse(gpt2, cache_dir, monkeypatch):
    Vocabulary.from_tokenizer_json(gpt2)
    from leapgram.vocab import loaders

    def fail(*args, **kwargs):
        raise AssertionError("parsed on a hit")

    monkeypatch.setattr(loaders, "parse_tokenizer_spec", fail)
    assert Vocabulary.from_tokenizer_json(gpt2).size == 50257


def test_an_edited_tokenizer_or_config_misses(gpt2, cache_dir, monkeypatch):
    Vocabulary.from_tokenizer_json(gpt2)
    spec = json.loads((gpt2 / "tokenizer.json").read_text(encoding="utf-8"))
    spec["added_tokens"].append({"id": 50257, "content": "<|extra|>", "special": True, "single_word": False,
                                 "lstrip": False, "rstrip": False, "normalized": False})
    (gpt2 / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    vocab = Vocabulary.from_tokenizer_json(gpt2)
    assert vocab.size == 50258 and 50257 in vocab.special_token_ids
    assert len(entries(cache_dir)) == 2
    config = json.loads((gpt2 / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["eos_token"] = "<|extra|>"
    (gpt2 / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    assert Vocabulary.from_tokenizer_json(gpt2).eos_token_ids == (50257,)
    assert Vocabulary.from_tokenizer_json(gpt2).eos_token_ids == (50257,)
    assert len(entries(cache_dir)) == 3


def test_given_eos_ids_and_a_bad_config(gpt2, cache_dir, monkeypatch):
    Vocabulary.from_tokenizer_json(gpt2)
    # an ordinary token as EOS becomes special: that trie differs from the cached one
    for _ in range(2):
        vocab = Vocabulary.from_tokenizer_json(gpt2, eos_token_ids=[13])
        expected, expected_trie = parsed(gpt2, monkeypatch, eos_token_ids=[13])
        assert cache.cached_trie(vocab) is None
        assert_same(vocab, TokenTrie(vocab), expected, expected_trie)
    config = json.loads((gpt2 / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["eos_token"] = "<|not-a-token|>"
    (gpt2 / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    assert Vocabulary.from_tokenizer_json(gpt2, eos_token_ids=[50256]).eos_token_ids == (50256,)
    for _ in range(2):  # the cached entry knows the config is wrong: parsed again, and raised
        with pytest.raises(TokenizerError, match="not in the vocabulary"):
            Vocabulary.from_tokenizer_json(gpt2)


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "header"])
def test_a_corrupt_entry_is_parsed_again_and_rewritten(damage, gpt2, cache_dir, monkeypatch):
    expected, expected_trie = parsed(gpt2, monkeypatch)
    Vocabulary.from_tokenizer_json(gpt2)
    [entry] = entries(cache_dir)
    data = bytearray(entry.read_bytes())
    if damage == "truncate":
        data = data[:len(data) // 2]
    elif damage == "flip":
        data[-1000] ^= 0x40
    elif damage == "garbage":
        data = bytearray(os.urandom(len(data)))
    elif damage == "empty":
        data = bytearray()
    else:
        data[len(cache.MAGIC) + 10] = ord("{")
    entry.write_bytes(bytes(data))
    vocab = Vocabulary.from_tokenizer_json(gpt2)
    assert_same(vocab, TokenTrie(vocab), expected, expected_trie)
    assert cache.read_entry(entry.stem) is not None  # the miss wrote it again


@pytest.mark.skipif(sys.platform == "win32" or os.geteuid() == 0, reason="root writes to read-only folders")
def test_a_read_only_folder(gpt2, cache_dir, monkeypatch):
    cache_dir.mkdir(parents=True)
    cache_dir.chmod(0o555)
    try:
        expected, expected_trie = parsed(gpt2, monkeypatch)
        for _ in range(2):
            vocab = Vocabulary.from_tokenizer_json(gpt2)
            assert_same(vocab, TokenTrie(vocab), expected, expected_trie)
        assert entries(cache_dir) == []
    finally:
        cache_dir.chmod(0o755)


def test_an_unwritable_cache_path(gpt2, tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("LEAPGRAM_CACHE_DIR", str(blocker))
    expected, expected_trie = parsed(gpt2, monkeypatch)
    for _ in range(2):
        vocab = Vocabulary.from_tokenizer_json(gpt2)
        assert_same(vocab, TokenTrie(vocab), expected, expected_trie)
    assert not cache.write_entry("0" * 64, {"a": np.zeros(3)})


@pytest.mark.parametrize("off", ["0", "false", "Off", "no"])
def test_off_with_leapgram_cache_0(off, gpt2, cache_dir, monkeypatch):
    monkeypatch.setenv("LEAPGRAM_VOCAB_CACHE", off)
    assert cache.cache_folder() is None
    Vocabulary.from_tokenizer_json(gpt2)
    Vocabulary.from_tokenizer_json(gpt2)
    assert not cache_dir.exists()


def test_small_files_are_not_cached(tmp_path, cache_dir):
    spec = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}, "decoder": {"type": "ByteLevel"},
            "added_tokens": []}
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    assert Vocabulary.from_tokenizer_json(tmp_path).size == 2
    assert not cache_dir.exists()


def test_entries_are_bounded_least_recently_used_first(cache_dir, monkeypatch):
    monkeypatch.setattr(cache, "MAX_ENTRIES", 3)
    keys = [f"{i:064x}" for i in range(5)]
    for number, key in enumerate(keys):
        assert cache.write_entry(key, {"x": np.arange(10 + number)})
        os.utime(cache_dir / (key + cache.SUFFIX), (1000 + number, 1000 + number))
        if number == 2:
            assert cache.read_entry(keys[0])["x"].shape == (10,)  # used: now the newest
    assert sorted(path.stem for path in entries(cache_dir)) == sorted([keys[0], keys[3], keys[4]])
    monkeypatch.setattr(cache, "MAX_TOTAL_BYTES", 1)  # the entry just written stays
    cache.write_entry(keys[1], {"x": np.arange(4)})
    assert [path.stem for path in entries(cache_dir)] == [keys[1]]
    assert not list(cache_dir.glob("*.tmp"))


def test_arrays_round_trip(cache_dir):
    arrays = {"a": np.arange(7, dtype=np.uint8), "b": np.arange(12, dtype=np.int32).reshape(3, 4),
              "c": np.zeros(0, dtype=np.int64), "d": np.array([-1, 2**40], dtype=np.int64)}
    assert cache.write_entry("f" * 64, dict(arrays))
    back = cache.read_entry("f" * 64)
    assert list(back) == list(arrays)
    for name, array in arrays.items():
        assert back[name].dtype == array.dtype and np.array_equal(back[name], array)
        assert back[name].flags.writeable
    assert cache.read_entry("e" * 64) is None
    (cache_dir / ("f" * 64 + cache.SUFFIX)).rename(cache_dir / ("e" * 64 + cache.SUFFIX))
    assert cache.read_entry("e" * 64) is None  # the key inside is another's


@pytest.mark.parametrize("tokens", [
    [b"a", b"", b"bc", b"\x00", b"d\x00e\x00", b"", b"\x00\x00", b"f"],  # \x00 is the rarest byte
    [bytes([i]) for i in range(256)] + [b"", bytes(range(256)), b"\x00\x01"],  # every byte appears
    [b"only"], [b""], [b"", b""],
])
def test_tokens_split_back_exactly(tokens):
    arrays = cache.token_arrays(tokens)
    separator = arrays["token_split_sep"][0]
    assert list(arrays["token_split_exceptions"]) == [i for i, t in enumerate(tokens) if separator in t]
    assert cache.tokens_from_arrays(arrays) == tokens
    assert all(type(token) is bytes for token in cache.tokens_from_arrays(arrays))
    ids, ends = arrays["token_split_exceptions"], arrays["token_exception_ends"]
    damaged = [{**arrays, "token_split_sep": np.zeros(0, np.uint8)},
               {**arrays, "token_exception_ends": np.append(ends, 1)}]  # one end too many
    if len(ids):
        damaged += [{**arrays, "token_split_exceptions": ids + len(tokens)},  # out of range
                    {**arrays, "token_split_exceptions": -1 - ids},  # negative
                    {**arrays, "token_exception_ends": ends + 1}]  # past the bytes held
    plain = [i for i, t in enumerate(tokens) if t and i not in set(ids.tolist())]
    if plain:  # an exception whose piece of the split is not empty
        damaged.append({**arrays, "token_split_exceptions": np.append(ids, plain[0]),
                        "token_exception_ends": np.append(ends, ends[-1] if len(ends) else 0)})
    for bad in damaged:
        with pytest.raises((ValueError, IndexError)):
            cache.tokens_from_arrays(bad)


def test_a_hit_splits_the_tokens(gpt2, cache_dir, monkeypatch):
    expected, _ = parsed(gpt2, monkeypatch)
    Vocabulary.from_tokenizer_json(gpt2)
    (entry,) = entries(cache_dir)
    arrays = cache.read_entry(entry.name[: -len(cache.SUFFIX)])
    assert arrays["token_split_exceptions"].tolist() == [i for i, t in enumerate(expected.tokens()) if b"\x00" in t]
    assert "token_bytes" not in arrays  # the split is the only copy of the tokens
    assert Vocabulary.from_tokenizer_json(gpt2).tokens() == expected.tokens()
    entry.write_bytes(entry.read_bytes())  # (unchanged: still a hit)
    with monkeypatch.context() as patch:  # a split that does not fit is parsed again
        patch.setattr(cache, "tokens_from_arrays", lambda arrays: (_ for _ in ()).throw(ValueError("damaged")))
        assert Vocabulary.from_tokenizer_json(gpt2).tokens() == expected.tokens()


def test_a_folder_that_refuses_writes(gpt2, cache_dir, monkeypatch):
    """As a read-only folder does for a user who is not root."""
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    expected, expected_trie = parsed(gpt2, monkeypatch)
    for _ in range(2):
        vocab = Vocabulary.from_tokenizer_json(gpt2)
        assert_same(vocab, TokenTrie(vocab), expected, expected_trie)
    assert entries(cache_dir) == [] and not list(cache_dir.glob("*.tmp"))


@pytest.mark.parametrize("name", ["gpt2", "llama3"])
def test_cached_slices_equal_the_computed_ones(name, cache_dir, monkeypatch):
    from leapgram.mask.slicer import DEFAULT_SLICES, SlicedVocabulary

    expected_vocab, expected_trie = parsed(tokenizer_path(name), monkeypatch)
    expected = SlicedVocabulary(expected_vocab, expected_trie)
    for _ in range(3):  # a miss (written), then hits
        vocab = Vocabulary.from_tokenizer_json(tokenizer_path(name))
        sliced = SlicedVocabulary(vocab, TokenTrie(vocab))
        assert [(s.char_regex, s.max_count) for s in sliced.slices] == [d for d in DEFAULT_SLICES]
        for got, want in [*zip(sliced.slices, expected.slices)]:
            assert got.mask.dtype == want.mask.dtype and np.array_equal(got.mask, want.mask)
            assert_same(vocab, got.trie, expected_vocab, want.trie)
        assert_same(vocab, sliced.rest, expected_vocab, expected.rest)
    assert len(entries(cache_dir)) == 2


def test_derived_arrays_need_a_cached_vocabulary(cache_dir):
    vocab = Vocabulary.byte_vocabulary()
    assert not cache.write_derived(vocab, "x", (__file__,), {"a": np.zeros(2)})
    assert cache.read_derived(vocab, "x", (__file__,)) is None


@pytest.mark.parametrize("name", ["gpt2", "llama3"])
def test_from_huggingface_is_cached_too(name, cache_dir):
    tokenizers = pytest.importorskip("tokenizers")
    tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path(name) / "tokenizer.json"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LEAPGRAM_VOCAB_CACHE", "0")
        expected = Vocabulary.from_huggingface(tokenizer)
        expected_trie = TokenTrie(expected)
    for eos in (None, [0], None):  # a miss, then hits (an ordinary EOS: that vocabulary's own trie)
        vocab = Vocabulary.from_huggingface(tokenizer, eos_token_ids=eos)
        assert cache.cached_trie(vocab) is not None or eos is not None
        if eos is None:
            assert_same(vocab, TokenTrie(vocab), expected, expected_trie)
        else:
            assert vocab.eos_token_ids == (0,) and 0 in vocab.special_token_ids
            assert not TokenTrie(vocab).node_token.tolist().count(0)
    assert len(entries(cache_dir)) == 1
    assert vocab.encode(b"Hello, world") == expected.encode(b"Hello, world")


def test_a_read_only_folder_still_serves_hits(gpt2, cache_dir, monkeypatch):
    Vocabulary.from_tokenizer_json(gpt2)
    from leapgram.vocab import loaders

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    def fail(*args, **kwargs):
        raise AssertionError("parsed on a hit")

    monkeypatch.setattr(os, "utime", refuse)
    monkeypatch.setattr(loaders, "parse_tokenizer_spec", fail)
    assert Vocabulary.from_tokenizer_json(gpt2).size == 50257


def _header_and_payload(entry) -> tuple[dict, bytearray]:
    data = bytearray(entry.read_bytes())
    start = len(cache.MAGIC) + 8
    end = start + int.from_bytes(data[len(cache.MAGIC):len(cache.MAGIC) + 4], "little")
    return json.loads(bytes(data[start:end])), data


@pytest.mark.parametrize("edit", ["not-a-dict", "offset", "deep", "renamed"])
def test_a_damaged_header_is_a_miss(edit, gpt2, cache_dir, monkeypatch):
    """The CRC-32 covers the header too: an edited header (a list, a shifted array offset, deep
    nesting, a renamed array) is a silent miss, never a wrong vocabulary or an exception."""
    expected, expected_trie = parsed(gpt2, monkeypatch)
    Vocabulary.from_tokenizer_json(gpt2)
    [entry] = entries(cache_dir)
    header, data = _header_and_payload(entry)
    if edit == "not-a-dict":
        text = b"[]"
    elif edit == "deep":
        text = b"[" * 100_000 + b"]" * 100_000
    else:
        if edit == "offset":
            header["arrays"][0][3] += 64
        else:
            header["arrays"][0][0] = "renamed"
        text = json.dumps(header).encode()
    start = len(cache.MAGIC) + 8
    old_end = start + int.from_bytes(data[len(cache.MAGIC):len(cache.MAGIC) + 4], "little")
    if len(text) <= header["payload"] - start:  # same layout, the old CRC-32 kept
        data[start:old_end] = text + b" " * max(0, old_end - start - len(text))
        data[start + len(text):header["payload"]] = bytes(header["payload"] - start - len(text))
        data[len(cache.MAGIC):len(cache.MAGIC) + 4] = len(text).to_bytes(4, "little")
    else:
        data[len(cache.MAGIC):len(cache.MAGIC) + 4] = len(text).to_bytes(4, "little")
        data[start:] = text
    entry.write_bytes(bytes(data))
    assert cache.read_entry(entry.stem) is None
    vocab = Vocabulary.from_tokenizer_json(gpt2)
    assert_same(vocab, TokenTrie(vocab), expected, expected_trie)


def test_inconsistent_trie_arrays_are_refused(monkeypatch):
    vocab, trie = parsed(tokenizer_path("gpt2"), monkeypatch)
    assert cache.trie_arrays_ok(trie.arrays(), vocab.size)
    for field, change in [("node_end", lambda a: a.__setitem__(5, 10**9)), ("node_end", lambda a: a.__setitem__(7, 3)),
                          ("node_token", lambda a: a.__setitem__(9, vocab.size)),
                          ("node_info", lambda a: a.__setitem__(9, a[9] | (vocab.size << 24)))]:
        arrays = {k: v.copy() for k, v in trie.arrays().items()}
        change(arrays[field])
        assert not cache.trie_arrays_ok(arrays, vocab.size), field
    arrays = trie.arrays()
    arrays["node_byte"] = arrays["node_byte"][:-1]
    assert not cache.trie_arrays_ok(arrays, vocab.size)
    assert not cache.trie_arrays_ok({}, vocab.size)


def test_a_killed_writers_temporary_file_is_removed(cache_dir, monkeypatch):
    cache_dir.mkdir(parents=True)
    old, new = cache_dir / ".abc.1.2.tmp", cache_dir / ".abd.1.2.tmp"
    old.write_bytes(b"x" * 100)
    new.write_bytes(b"x" * 100)
    os.utime(old, (1000, 1000))
    assert cache.write_entry("0" * 64, {"x": np.arange(4)})
    assert not old.exists() and new.exists()  # a recent one may be a writer still at work
