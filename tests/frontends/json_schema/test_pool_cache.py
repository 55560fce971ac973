"""The JSON Schema base pools on disk (pool_cache): read back equal to the built pool, missed
when a setting or a file changes, off on request, read only from a folder and files no other user
could have written, bounded apart from the vocabularies, and the masks of a format schema unchanged."""

from __future__ import annotations

import os

import numpy as np
import pytest

from leapgram import Grammar, GrammarCompiler, Matcher, Vocabulary, allocate_token_bitmask, pool_cache
from leapgram.frontends.json_schema import common
from leapgram.limits import DEFAULT_LIMITS
from leapgram.regex.dfa import ROW_TEMPLATE, TEMPLATE_MEMBER
from leapgram.vocab import cache


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("LEAPGRAM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LEAPGRAM_VOCAB_CACHE", raising=False)
    monkeypatch.delenv("LEAPGRAM_POOL_CACHE", raising=False)
    return tmp_path / "cache" / "pools"


def assert_same(a, b, path="pool"):
    """Equal values of the same types, arrays of the same dtype, shape and writability."""
    assert type(a) is type(b), path
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and a.flags.writeable == b.flags.writeable, path
        assert np.array_equal(a, b), path
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), path
        for index, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{index}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for key in a:
            assert_same(a[key], b[key], f"{path}[{key!r}]")
    else:
        assert a == b, path


def written_and_read(formats: bool):
    settings = common._build_settings(formats)
    built = common._build_base_pool(DEFAULT_LIMITS, formats)
    assert pool_cache.write_pool(built, DEFAULT_LIMITS, formats, settings)
    return built, pool_cache.read_pool(DEFAULT_LIMITS, formats, settings), settings


@pytest.mark.parametrize("formats", [False, True])
def test_a_pool_reads_back_equal_to_the_built_one(cache_dir, formats):
    built, read, _ = written_and_read(formats)
    assert read is not None and list(read.__dict__) == list(built.__dict__)
    for name, value in built.__dict__.items():
        if name == "family":
            family = read.family
            assert (family.size, family.base_size, family.set_up) == (value.size, value.base_size, value.set_up)
            assert_same(value.memo, family.memo, "family.memo")
        elif name != "lock":
            assert_same(value, read.__dict__[name], name)
    members = [value for key, value in read.family.memo.items() if key[0] == TEMPLATE_MEMBER]
    templates = {id(value) for key, value in read.family.memo.items() if key[0] == ROW_TEMPLATE}
    assert all(id(member[0]) in templates for member in members)  # the templates stay shared
    assert (len(members) > 0) == formats


def test_another_setting_or_a_damaged_file_misses(cache_dir):
    _, read, settings = written_and_read(False)
    assert read is not None
    assert pool_cache.read_pool(DEFAULT_LIMITS, False, settings + ("patched",)) is None
    assert pool_cache.read_pool(DEFAULT_LIMITS, True, settings) is None
    for path in cache_dir.glob("*.lgv"):
        data = bytearray(path.read_bytes())
        data[-100] ^= 0xFF
        path.write_bytes(bytes(data))
    assert pool_cache.read_pool(DEFAULT_LIMITS, False, settings) is None


def test_the_pools_have_a_folder_and_bounds_of_their_own(cache_dir, monkeypatch):
    assert pool_cache.pool_folder() == cache_dir
    vocab_entry = "0" * 64
    assert cache.write_entry(vocab_entry, {"x": np.arange(3)})
    monkeypatch.setattr(cache, "MAX_ENTRIES", 1)  # the vocabularies' bound: pools do not count
    monkeypatch.setattr(pool_cache, "MAX_ENTRIES", 1)
    written_and_read(False)
    written_and_read(True)  # the newest: the other pool goes, the vocabulary stays
    assert len(list(cache_dir.glob("*.lgv"))) == 1
    assert cache.read_entry(vocab_entry) is not None
    assert (os.stat(cache_dir).st_mode & 0o777, os.stat(next(cache_dir.glob("*.lgv"))).st_mode & 0o777) == (
        0o700, 0o600)


@pytest.mark.skipif(not cache.PRIVATE_READS, reason="no POSIX owners: the pools are not cached")
def test_a_folder_or_file_others_could_write_is_not_read(cache_dir):
    _, read, settings = written_and_read(False)
    assert read is not None
    entry = next(cache_dir.glob("*.lgv"))
    for path, mode, good in ((cache_dir, 0o770, 0o700), (cache_dir, 0o702, 0o700), (entry, 0o620, 0o600),
                             (entry, 0o602, 0o600)):
        path.chmod(mode)
        assert pool_cache.read_pool(DEFAULT_LIMITS, False, settings) is None, (path.name, oct(mode))
        path.chmod(good)
        assert pool_cache.read_pool(DEFAULT_LIMITS, False, settings) is not None
    moved = cache_dir.parent / "elsewhere.lgv"
    entry.rename(moved)
    entry.symlink_to(moved)  # a link, even to a good file, is not followed
    assert pool_cache.read_pool(DEFAULT_LIMITS, False, settings) is None
    entry.unlink()
    cache_dir.chmod(0o770)  # nothing is written where it would not be read
    assert not pool_cache.write_pool(common._build_base_pool(DEFAULT_LIMITS, False), DEFAULT_LIMITS, False,
                                     settings)
    assert not entry.exists()


@pytest.mark.skipif(not cache.PRIVATE_READS or os.geteuid() != 0, reason="chown needs root")
def test_a_folder_or_file_of_another_user_is_not_read(cache_dir):
    _, read, settings = written_and_read(False)
    assert read is not None
    entry = next(cache_dir.glob("*.lgv"))
    for path in (cache_dir, entry):
        os.chown(path, 12345, -1)
        assert pool_cache.read_pool(DEFAULT_LIMITS, False, settings) is None, path.name
        os.chown(path, 0, -1)
        assert pool_cache.read_pool(DEFAULT_LIMITS, False, settings) is not None


def test_off_on_request(cache_dir, monkeypatch):
    monkeypatch.setenv("LEAPGRAM_POOL_CACHE", "0")
    built = common._build_base_pool(DEFAULT_LIMITS, False)
    assert not pool_cache.write_pool(built, DEFAULT_LIMITS, False, common._build_settings(False))
    assert not cache_dir.exists()


def masks_along(schema: dict, text: bytes) -> list[bytes]:
    vocab = Vocabulary.byte_vocabulary()
    matcher = Matcher(GrammarCompiler(vocab, cache_size=0).compile(Grammar.from_json_schema(schema)))
    bitmask = allocate_token_bitmask(1, vocab.size)
    masks = []
    for byte in text:
        matcher.fill_next_token_bitmask(bitmask, 0)
        masks.append(np.asarray(bitmask).tobytes())
        assert matcher.consume_token(byte)
    return masks


def test_a_format_schema_has_the_same_masks_on_a_read_pool(cache_dir, monkeypatch):
    schema = {"type": "object", "properties": {"when": {"type": "string", "format": "date-time"},
                                               "site": {"type": "string", "format": "uri"}}}
    text = b'{"when": "2024-02-29T10:00:00Z", "site": "http://a.b/c?d"}'
    monkeypatch.setattr(common, "_base_pool", common.functools.lru_cache(maxsize=8)(common._base_pool.__wrapped__))
    built = masks_along(schema, text)  # builds the pool and writes it
    assert list(cache_dir.glob("*.lgv"))
    monkeypatch.setattr(common, "_base_pool", common.functools.lru_cache(maxsize=8)(common._base_pool.__wrapped__))
    assert masks_along(schema, text) == built  # from the pool read back
