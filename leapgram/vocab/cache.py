"""An on-disk cache of loaded vocabularies and their token tries, for a fresh process's first request.

Parsing Llama-3's ``tokenizer.json`` and building its trie take about 0.25 s of a fresh process;
reading both back from one file takes about 0.03 s. An entry holds the token bytes, the special
ids, the EOS ids a ``tokenizer_config.json`` beside the file names, and the trie's arrays. It is
keyed by a SHA-256 of the tokenizer file(s), of the sources that turn them into tokens and tries,
and of :data:`CACHE_FORMAT`, so an edited tokenizer or leapgram version misses.

Where: ``$LEAPGRAM_CACHE_DIR/vocab``, else ``$LEAPGRAM_CACHE/vocab`` (leapgram's cache folder,
where the embedded model is converted too), else the platform's cache folder (``$XDG_CACHE_HOME``
or ``~/.cache`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows) under
``leapgram/vocab``. ``LEAPGRAM_VOCAB_CACHE=0`` turns it off; tokenizer files under
:data:`MIN_FILE_BYTES` are not cached. At most :data:`MAX_ENTRIES` files of
:data:`MAX_TOTAL_BYTES` in all are kept (the least recently used go). Files are written to a
temporary name and renamed into place, so a reader never sees half a file; a file that is
truncated, corrupt (a CRC-32 over its header and arrays), of another format or another key is
ignored and the tokenizer parsed as without a cache; a trie read back is also checked for
consistency (array lengths, child links and token ids in range) before a kernel walks it. Every
error of the cache (a read-only or missing folder included) is silent: the cache only ever saves
time. The JSON Schema base pools use the same file format in a folder of their own, with bounds of
their own and read only where nobody else could have written (``private``: :func:`open_private`;
:mod:`leapgram.pool_cache`).

File layout: ``MAGIC``, a little-endian u32 header length, a u32 CRC-32 of everything after it,
a JSON header (format, key, and per array its dtype, shape and offset), then the arrays, each at
a 64-byte aligned offset. Arrays are read into one writable buffer (never memory-mapped: the kernels are
compiled for writable arrays, and a read-only one would be another signature).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import time
import weakref
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .vocabulary import Vocabulary

CACHE_FORMAT = 2
MAGIC = b"LEAPGRAM-VOCAB\0\2"
MAX_ENTRIES = 16  # a tokenizer takes two: its vocabulary and trie, and its slices
MAX_TOTAL_BYTES = 512 << 20
MIN_FILE_BYTES = 256 << 10  # a smaller tokenizer file parses about as fast as an entry is read
SUFFIX = ".lgv"
TRIE_FIELDS = ("node_byte", "node_depth", "node_token", "node_end", "node_info", "dup_primary", "dup_other")
# the sources whose code decides what an entry holds: an edit there is another key
_SOURCES = ("byte_level.py", "loaders.py", "trie.py", "vocabulary.py", "cache.py")
_ALIGN = 64
STALE_TEMPORARY_S = 3600  # a temporary file this old belongs to a writer that died: removed by _evict
# open_private needs POSIX owners, a folder's descriptor to open a file from, and no-follow opens
PRIVATE_READS = (hasattr(os, "geteuid") and hasattr(os, "O_DIRECTORY") and hasattr(os, "O_NOFOLLOW")
                 and os.open in os.supports_dir_fd)

# vocabularies loaded from (or written to) the cache -> their trie's arrays, for TokenTrie(vocab)
_TRIES: weakref.WeakKeyDictionary[Vocabulary, dict[str, np.ndarray]] = weakref.WeakKeyDictionary()
_KEYS: weakref.WeakKeyDictionary[Vocabulary, str] = weakref.WeakKeyDictionary()
_SOURCE_DIGEST: list[bytes] = []
_FILES_DIGESTS: dict[tuple[str, ...], bytes] = {}


def cache_folder() -> Path | None:
    """The folder of vocabulary entries, or None when ``LEAPGRAM_VOCAB_CACHE`` is ``0`` (or
    ``false``, ``no``, ``off``). ``$LEAPGRAM_CACHE_DIR/vocab``, else ``$LEAPGRAM_CACHE/vocab``
    (the folder the embedded model is converted into), else the platform's cache folder."""
    if os.environ.get("LEAPGRAM_VOCAB_CACHE", "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    explicit = os.environ.get("LEAPGRAM_CACHE_DIR") or os.environ.get("LEAPGRAM_CACHE")
    if explicit:
        return Path(explicit) / "vocab"
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "leapgram" / "vocab"


def entry_key(*contents: bytes | None) -> str:
    """The key of the files ``contents`` (None: a file that is absent) under this format and
    these sources."""
    digest = hashlib.sha256(f"leapgram-vocab-{CACHE_FORMAT}".encode())
    digest.update(_source_digest())
    for content in contents:
        digest.update(b"-" if content is None else b"+%d:" % len(content))
        digest.update(content or b"")
    return digest.hexdigest()


def _source_digest() -> bytes:
    if not _SOURCE_DIGEST:
        digest = hashlib.sha256()
        folder = Path(__file__).parent
        for name in _SOURCES:
            try:
                digest.update((folder / name).read_bytes())
            except OSError:
                digest.update(name.encode())
        _SOURCE_DIGEST.append(digest.digest())
    return _SOURCE_DIGEST[0]


def read_entry(key: str, folder: Path | None = None, *, private: bool = False) -> dict[str, np.ndarray] | None:
    """The arrays stored under ``key`` in ``folder`` (default :func:`cache_folder`), or None (no
    cache, no entry, or an unreadable one). ``private``: only a file that :func:`open_private`
    opens (the folder and the file this user's or root's, writable by nobody else)."""
    folder = cache_folder() if folder is None else folder
    if folder is None:
        return None
    path = folder / (key + SUFFIX)
    try:
        opened = open_private(folder, path.name) if private else open(path, "rb")  # noqa: SIM115
        if opened is None:
            return None
        with opened as f:
            size = os.fstat(f.fileno()).st_size
            buffer = bytearray(size)
            if f.readinto(buffer) != size:
                return None
        arrays = _decode(buffer, key)
    except Exception:  # noqa: BLE001 -- whatever a damaged file raises, the cache only misses
        return None
    if arrays is not None:
        try:
            os.utime(path)  # recently used: evicted last
        except OSError:  # a read-only folder (a cache shipped in an image) still serves hits
            pass
    return arrays


def open_private(folder: Path, name: str):
    """``folder/name`` opened for binary reading, or None unless the folder and the file are owned
    by this user or by root and writable by no one else (no group or other write bit), and the
    file is a regular file named without a link: an entry whose contents are trusted (the pool
    cache's :mod:`marshal`) is read only where no other user could have put it. The file is
    opened through the checked folder's descriptor, so neither can be swapped between the check
    and the read. None where :data:`PRIVATE_READS` is False (no POSIX owners: Windows). OSError
    when the folder or the file cannot be opened."""
    if not PRIVATE_READS:
        return None
    folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if not _private(os.fstat(folder_fd), stat.S_ISDIR):
            return None
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder_fd)
    finally:
        os.close(folder_fd)
    if not _private(os.fstat(fd), stat.S_ISREG):
        os.close(fd)
        return None
    return open(fd, "rb")  # (the caller closes it)


def _private(status: os.stat_result, kind: Callable[[int], bool]) -> bool:
    """Of ``kind``, owned by this user or root (who can change anything anyway), and writable
    by its owner alone."""
    return (kind(status.st_mode) and status.st_uid in (os.geteuid(), 0)
            and not status.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def _decode(buffer: bytearray, key: str) -> dict[str, np.ndarray] | None:
    start = len(MAGIC) + 8
    if len(buffer) < start or buffer[:len(MAGIC)] != MAGIC:
        return None
    header_end = start + int.from_bytes(buffer[len(MAGIC):len(MAGIC) + 4], "little")
    if header_end > len(buffer) or zlib.crc32(memoryview(buffer)[len(MAGIC) + 8:]) != int.from_bytes(
            buffer[len(MAGIC) + 4:start], "little"):
        return None
    header = json.loads(bytes(buffer[start:header_end]))
    if not isinstance(header, dict) or header.get("format") != CACHE_FORMAT or header.get("key") != key:
        return None
    payload = header["payload"]
    if payload < header_end or payload + header["payload_bytes"] != len(buffer):
        return None
    arrays = {}
    for name, dtype, shape, offset in header["arrays"]:
        kind = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        if offset < payload or offset + count * kind.itemsize > len(buffer):
            return None
        arrays[name] = np.frombuffer(buffer, dtype=kind, count=count, offset=offset).reshape(shape)
    return arrays


def write_entry(key: str, arrays: dict[str, np.ndarray], folder: Path | None = None, *, private: bool = False,
                bounds: tuple[int, int] | None = None) -> bool:
    """Store ``arrays`` under ``key`` in ``folder`` (default :func:`cache_folder`), atomically,
    then drop the least recently used entries over ``bounds`` (entries, bytes; default
    :data:`MAX_ENTRIES`, :data:`MAX_TOTAL_BYTES`); False when nothing was written (no cache, or
    the folder is not writable). ``private``: the folder made ``0o700`` and the file ``0o600``,
    and nothing written where :func:`read_entry` with ``private`` would not read it."""
    folder = cache_folder() if folder is None else folder
    if folder is None or (private and not PRIVATE_READS):
        return False
    table = []
    offset = 0
    for name, array in arrays.items():
        array = np.ascontiguousarray(array)
        arrays[name] = array
        table.append([name, array.dtype.str, list(array.shape), offset])
        offset = -(-(offset + array.nbytes) // _ALIGN) * _ALIGN
    payload_bytes = table[-1][3] + arrays[table[-1][0]].nbytes if table else 0
    body = bytearray(payload_bytes)
    for name, _, _, at in table:
        data = arrays[name].view(np.uint8).reshape(-1)
        body[at:at + data.shape[0]] = data.tobytes()
    header = {"format": CACHE_FORMAT, "key": key, "payload_bytes": payload_bytes, "payload": 0, "arrays": table}
    # the header's length depends on the offsets it holds: leave room for the shifted offsets
    head_size = len(MAGIC) + 8 + len(json.dumps(header)) + 8 * len(table) + 64
    payload = -(-head_size // _ALIGN) * _ALIGN
    header["payload"] = payload
    header["arrays"] = [[name, dtype, shape, at + payload] for name, dtype, shape, at in table]
    text = json.dumps(header).encode()
    padding = payload - (len(MAGIC) + 8 + len(text))
    if padding < 0:  # cannot happen (an offset gains at most a few digits)
        return False
    checked = zlib.crc32(body, zlib.crc32(bytes(padding), zlib.crc32(text)))
    head = MAGIC + len(text).to_bytes(4, "little") + checked.to_bytes(4, "little") + text
    path = folder / (key + SUFFIX)
    temporary = folder / f".{key}.{os.getpid()}.{id(body):x}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700 if private else 0o777)
        if private and not _private(os.stat(folder), stat.S_ISDIR):
            return False  # (a folder another user could write: its entries would never be read)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                     0o600 if private else 0o666)
        with open(fd, "wb") as f:
            f.write(head + bytes(padding))
            f.write(body)
        os.replace(temporary, path)
    except OSError:
        try:
            temporary.unlink()
        except OSError:
            pass
        return False
    _evict(folder, path, *(bounds or (MAX_ENTRIES, MAX_TOTAL_BYTES)))
    return True


def _evict(folder: Path, kept: Path, max_entries: int, max_bytes: int) -> None:
    try:
        entries = []
        stale = time.time() - STALE_TEMPORARY_S
        for entry in os.scandir(folder):
            if entry.name.endswith(SUFFIX) and entry.is_file():
                stat = entry.stat()
                entries.append((stat.st_mtime, stat.st_size, entry.path))
            elif entry.name.startswith(".") and entry.name.endswith(".tmp") and entry.stat().st_mtime < stale:
                try:  # left by a writer that was killed mid-write
                    os.unlink(entry.path)
                except OSError:
                    pass
    except OSError:
        return
    entries.sort(reverse=True)  # newest first
    total = 0
    for number, (_, size, path) in enumerate(entries):
        total += size
        if path != str(kept) and (number >= max_entries or total > max_bytes):
            try:
                os.unlink(path)
            except OSError:
                pass


def remember_key(vocab: Vocabulary, key: str) -> None:
    """``vocab`` was read from (or written to) the entry ``key``: arrays derived from it can be
    cached beside it (:func:`read_derived`)."""
    _KEYS[vocab] = key


def read_derived(vocab: Vocabulary, name: str, sources: tuple[str, ...]) -> dict[str, np.ndarray] | None:
    """The arrays :func:`write_derived` stored for ``vocab`` under ``name``, or None (also for a
    vocabulary that is not cached). ``sources`` are the files (or folders of ``.py`` files) whose
    code computes them: an edit there is another key."""
    key = _derived_key(vocab, name, sources)
    return None if key is None else read_entry(key)


def write_derived(vocab: Vocabulary, name: str, sources: tuple[str, ...], arrays: dict[str, np.ndarray]) -> bool:
    """Store arrays computed from ``vocab`` (its tokens and special ids) alone, for
    :func:`read_derived` in later processes; False when ``vocab`` is not cached."""
    key = _derived_key(vocab, name, sources)
    return key is not None and write_entry(key, arrays)


def _derived_key(vocab: Vocabulary, name: str, sources: tuple[str, ...]) -> str | None:
    key = _KEYS.get(vocab)
    if key is None:
        return None
    digest = hashlib.sha256(f"{key}\0{name}\0".encode())
    digest.update(np.array(sorted(vocab.special_token_ids), dtype=np.int64).tobytes())
    digest.update(_files_digest(sources))
    return digest.hexdigest()


def files_digest(sources: tuple[str, ...]) -> bytes:
    """A SHA-256 of ``sources`` (files, or folders of ``.py`` files), computed once per process:
    the part of a key that makes an edit of the code computing an entry miss."""
    return _files_digest(sources)


def _files_digest(sources: tuple[str, ...]) -> bytes:
    found = _FILES_DIGESTS.get(sources)
    if found is None:
        digest = hashlib.sha256()
        for source in sources:
            path = Path(source)
            for file in sorted(path.glob("*.py")) if path.is_dir() else [path]:
                digest.update(file.name.encode())
                try:
                    digest.update(file.read_bytes())
                except OSError:
                    digest.update(b"?")
        found = _FILES_DIGESTS[sources] = digest.digest()
    return found


def remember_trie(vocab: Vocabulary, arrays: dict[str, np.ndarray]) -> None:
    """``TokenTrie(vocab)`` takes ``arrays`` (:data:`TRIE_FIELDS`) rather than building them,
    if they make a consistent trie (:func:`trie_arrays_ok`)."""
    if trie_arrays_ok(arrays, vocab.size):
        _TRIES[vocab] = arrays


def trie_arrays_ok(arrays: dict[str, np.ndarray], vocab_size: int, prefix: str = "") -> bool:
    """Whether ``arrays`` (:data:`TRIE_FIELDS` after ``prefix``) can be walked by the kernels:
    one-dimensional node arrays of one length, each node's subtree ending after it and within
    its parent's, token ids below ``vocab_size``. A file that passed its CRC-32 but was written
    by something else must not send a kernel out of bounds."""
    try:
        nodes = arrays[prefix + "node_end"]
        count = nodes.shape[0]
        if count == 0 or nodes.ndim != 1:
            return False
        for name in ("node_byte", "node_depth", "node_token", "node_info"):
            if arrays[prefix + name].shape != (count,):
                return False
        index = np.arange(count, dtype=np.int64)
        ends = nodes.astype(np.int64)
        if int(nodes[0]) != count or np.any(ends <= index) or np.any(ends > count):
            return False
        for tokens in (arrays[prefix + "node_token"].astype(np.int64), arrays[prefix + "node_info"] >> 24):
            if np.any(tokens >= vocab_size) or np.any(tokens < -1):
                return False
        for name in ("dup_primary", "dup_other"):
            dups = arrays[prefix + name]
            if dups.ndim != 1 or (dups.shape[0] and (int(dups.min()) < 0 or int(dups.max()) >= vocab_size)):
                return False
        return arrays[prefix + "dup_primary"].shape == arrays[prefix + "dup_other"].shape
    except (KeyError, AttributeError, TypeError, ValueError):
        return False


def cached_trie(vocab: Vocabulary) -> dict[str, np.ndarray] | None:
    """The trie arrays remembered for ``vocab`` (a vocabulary read from the cache), or None."""
    return _TRIES.get(vocab)


def tokens_from_arrays(arrays: dict[str, np.ndarray]) -> list[bytes]:
    """The token bytes :func:`token_arrays` stored: one ``bytes.split`` (about 4 ms for Llama-3's
    128,256 tokens, against about 20 ms slicing a flat buffer token by token), then the few
    tokens that hold the separator put back. ValueError or IndexError when the arrays do not fit
    together."""
    separator = arrays["token_split_sep"]
    if separator.shape != (1,):
        raise ValueError("the separator is one byte")
    tokens = arrays["token_split"].tobytes().split(separator.tobytes())
    ids = arrays["token_split_exceptions"].tolist()
    ends = arrays["token_exception_ends"].tolist()
    data = arrays["token_exception_bytes"].tobytes()
    if len(ids) != len(ends) or (ids and min(ids) < 0) or (ends and ends[-1] != len(data)):
        raise ValueError("inconsistent exceptions")
    start = 0
    for i, stop in zip(ids, ends):
        if tokens[i] or stop < start:
            raise ValueError("inconsistent exceptions")
        tokens[i] = data[start:stop]
        start = stop
    return tokens


def token_arrays(tokens: list[bytes]) -> dict[str, np.ndarray]:
    """``tokens`` as arrays for :func:`tokens_from_arrays`: joined by the byte the fewest of them
    hold (``token_split_sep``); those that hold it (``token_split_exceptions``, a handful:
    byte-level vocabularies have bytes that no UTF-8 text holds) are empty there and stored
    apart (``token_exception_bytes``, ``token_exception_ends``)."""
    counts = np.bincount(np.frombuffer(b"".join(tokens), dtype=np.uint8), minlength=256)
    separator = bytes([int(np.argmin(counts))])
    ids = [i for i, token in enumerate(tokens) if separator in token] if counts[separator[0]] else []
    pieces = list(tokens)
    for i in ids:
        pieces[i] = b""
    held = [tokens[i] for i in ids]
    return {"token_split": np.frombuffer(separator.join(pieces), dtype=np.uint8),
            "token_split_sep": np.frombuffer(separator, dtype=np.uint8),
            "token_split_exceptions": np.array(ids, dtype=np.int64),
            "token_exception_bytes": np.frombuffer(b"".join(held), dtype=np.uint8),
            "token_exception_ends": np.cumsum(np.array([len(token) for token in held], dtype=np.int64))}
