"""Loaders behind the ``Vocabulary.from_*`` constructors.

Token strings become exact bytes the way the tokenizer's decoder would turn them into bytes,
token by token (byte-level BPE and SentencePiece-style decoders; the rules are in
docs/design/vocabulary.md). Ids no token uses become special placeholders with empty bytes. The
``tokenizers`` and ``regex`` packages are optional; they are imported only to encode text.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import TokenizerError
from . import cache
from .byte_level import byte_level_bytes, utf8_text

if TYPE_CHECKING:
    from .vocabulary import Vocabulary

_SP_STEPS = frozenset({"Replace", "ByteFallback", "Fuse", "Strip", "Metaspace"})
_HEX = frozenset("0123456789abcdefABCDEF")
_EOS_CONFIGS = ("tokenizer_config.json", "special_tokens_map.json")


def load_tokenizer_json(
    cls: type[Vocabulary], path: str | os.PathLike[str], *, eos_token_ids: Iterable[int] | None
) -> Vocabulary:
    """``Vocabulary.from_tokenizer_json``: see there. Read from the on-disk cache
    (:mod:`leapgram.vocab.cache`) when it holds this file, else parsed and written there."""
    file = _tokenizer_json_file(Path(path))
    with open(file, "rb") as f:
        content = f.read()
    key = _cache_key(file, content)
    if key is not None:
        vocab = _cached_vocabulary(cls, key, eos_token_ids, TokenizersEncoder(str(file)), file.parent.name)
        if vocab is not None:
            return vocab
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TokenizerError(f"{file}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    if "\r" in text:  # as text mode reads it
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        spec = read_spec_without_merges(text)
    except json.JSONDecodeError as exc:
        raise TokenizerError(f"{file}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from exc
    tokens, special, ids_by_text = parse_tokenizer_spec(spec, source=str(file))
    config_eos: tuple[int, ...] | None = None
    if eos_token_ids is None:
        eos_token_ids = config_eos = _config_eos_ids(file.parent, ids_by_text)
    encoder = TokenizersEncoder(str(file))
    vocab = cls(
        tokens, special_token_ids=special, eos_token_ids=eos_token_ids, encoder=encoder, name=file.parent.name
    )
    if key is not None:
        _write_cached_vocabulary(vocab, key, special, config_eos, file.parent, ids_by_text)
    return vocab


def _cache_key(file: Path, content: bytes) -> str | None:
    """The cache key of ``file`` and the EOS config files beside it; None with the cache off."""
    if len(content) < cache.MIN_FILE_BYTES or cache.cache_folder() is None:
        return None
    configs = []
    for name in _EOS_CONFIGS:
        try:
            configs.append((file.parent / name).read_bytes())
        except OSError:
            configs.append(None)
    return cache.entry_key(content, *configs)


def _cached_vocabulary(cls: type[Vocabulary], key: str, eos_token_ids: Iterable[int] | None,
                       encoder: Callable[[bytes], list[int]], name: str) -> Vocabulary | None:
    arrays = cache.read_entry(key)
    if arrays is None:
        return None
    try:
        if eos_token_ids is None:
            if not arrays["config_eos_ok"][0]:
                return None  # the config names an EOS the vocabulary lacks: parse, and raise that
            eos_token_ids = arrays["config_eos"].tolist()
        tokens = cache.tokens_from_arrays(arrays)
        vocab = cls(tokens, special_token_ids=arrays["special"].tolist(), eos_token_ids=eos_token_ids,
                    encoder=encoder, name=name, _checked=True)
    except (KeyError, ValueError, IndexError):
        return None
    if vocab.special_token_ids == frozenset(arrays["trie_special"].tolist()):
        cache.remember_trie(vocab, {field: arrays["trie_" + field] for field in cache.TRIE_FIELDS})
    cache.remember_key(vocab, key)
    return vocab


def _write_cached_vocabulary(vocab: Vocabulary, key: str, special: set[int], config_eos: tuple[int, ...] | None,
                             folder: Path | None, ids_by_text: dict[str, int]) -> None:
    """Build ``vocab``'s trie now (the first compile needs it) and store it with the vocabulary
    and the EOS ids of the config files in ``folder`` (none without one)."""
    from .trie import TokenTrie

    if config_eos is None and folder is not None:
        try:
            config_eos = _config_eos_ids(folder, ids_by_text)
        except (TokenizerError, OSError, ValueError, AttributeError):
            config_eos = None
    try:
        trie = TokenTrie(vocab)
    except ValueError:
        return  # a token too long for the trie: TokenTrie raises again where it is needed
    trie_arrays = trie.arrays()
    cache.remember_trie(vocab, trie_arrays)
    arrays = {
        **cache.token_arrays(vocab.tokens()),
        "special": np.array(sorted(special), dtype=np.int64),
        "config_eos": np.array(config_eos or (), dtype=np.int64),
        "config_eos_ok": np.array([config_eos is not None], dtype=np.uint8),
        "trie_special": np.array(sorted(vocab.special_token_ids), dtype=np.int64),
        **{"trie_" + name: array for name, array in trie_arrays.items()},
    }
    if cache.write_entry(key, arrays):
        cache.remember_key(vocab, key)


def load_huggingface(
    cls: type[Vocabulary], tokenizer: Any, *, eos_token_ids: Iterable[int] | None
) -> Vocabulary:
    """``Vocabulary.from_huggingface``: see there. The on-disk cache is keyed by the tokenizer's
    serialization (``to_str()``), so it saves parsing that text and building the trie."""
    backend = getattr(tokenizer, "backend_tokenizer", tokenizer)
    if not callable(getattr(backend, "to_str", None)):
        raise TokenizerError(
            f"from_huggingface takes a tokenizers.Tokenizer or a transformers fast tokenizer, not "
            f"{type(tokenizer).__name__}; load it with use_fast=True or use from_tokenizer_json"
        )
    text = backend.to_str()
    if eos_token_ids is None:
        eos_token_ids = _as_ids(getattr(tokenizer, "eos_token_id", None))
    name = getattr(tokenizer, "name_or_path", "") or ""
    key = None
    if len(text) >= cache.MIN_FILE_BYTES and cache.cache_folder() is not None:
        key = cache.entry_key(b"huggingface", text.encode("utf-8"))
        vocab = _cached_vocabulary(cls, key, eos_token_ids, TokenizersEncoder(backend), name)
        if vocab is not None:
            return vocab
    tokens, special, _ = parse_tokenizer_spec(json.loads(text), source=type(tokenizer).__name__)
    vocab = cls(
        tokens,
        special_token_ids=special,
        eos_token_ids=eos_token_ids,
        encoder=TokenizersEncoder(backend),
        name=name,
    )
    if key is not None:
        _write_cached_vocabulary(vocab, key, special, None, None, {})
    return vocab


def load_tiktoken(
    cls: type[Vocabulary],
    path: str | os.PathLike[str],
    *,
    pattern: str,
    special_tokens: dict[str, int],
    eos_token_ids: Iterable[int] | None,
) -> Vocabulary:
    """``Vocabulary.from_tiktoken``: see there."""
    if not isinstance(pattern, str) or not pattern:
        raise TokenizerError(
            "from_tiktoken needs pattern=, the encoding's pre-tokenizer regex (tiktoken's pat_str)"
        )
    ranks = read_tiktoken_ranks(path)
    by_id = {rank: token for token, rank in ranks.items()}
    if len(set(special_tokens.values())) != len(special_tokens):
        raise TokenizerError(f"special_tokens gives two tokens the same id: {special_tokens}")
    for text, token_id in special_tokens.items():
        if not isinstance(token_id, int) or token_id < 0:
            raise TokenizerError(f"special token {text!r} needs a non-negative int id, not {token_id!r}")
        if token_id in by_id:
            raise TokenizerError(f"special token {text!r} has id {token_id}, which the rank file already uses")
    size = max([*by_id, *special_tokens.values()]) + 1
    tokens = [by_id.get(i, b"") for i in range(size)]
    for text, token_id in special_tokens.items():
        tokens[token_id] = text.encode("utf-8")
    unused = set(range(size)).difference(by_id, special_tokens.values())
    special = unused.union(special_tokens.values())
    encoder = RankBPEEncoder(ranks, pattern)
    return cls(
        tokens,
        special_token_ids=special,
        eos_token_ids=() if eos_token_ids is None else eos_token_ids,
        encoder=encoder,
        name=Path(path).stem,
    )


def read_tiktoken_ranks(path: str | os.PathLike[str]) -> dict[bytes, int]:
    """The ``{token bytes: rank}`` of a tiktoken file; :class:`leapgram.TokenizerError` naming a bad line."""
    ranks: dict[bytes, int] = {}
    seen: set[int] = set()
    with open(path, "rb") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            token, rank = _parse_rank_line(line, number, path)
            if token in ranks or rank in seen:
                raise TokenizerError(f"{path}:{number}: token {token!r} or rank {rank} appears twice")
            ranks[token] = rank
            seen.add(rank)
    if not ranks:
        raise TokenizerError(f"{path} holds no ranks; expected lines of 'base64-token rank'")
    return ranks


def _parse_rank_line(line: bytes, number: int, path: object) -> tuple[bytes, int]:
    parts = line.split()
    try:
        if len(parts) != 2:
            raise TokenizerError
        token, rank = base64.b64decode(parts[0], validate=True), int(parts[1])
    except (ValueError, binascii.Error):
        raise TokenizerError(f"{path}:{number}: expected 'base64-token rank', got {line[:80]!r}") from None
    if rank < 0 or not token:
        raise TokenizerError(f"{path}:{number}: rank must be >= 0 and the token non-empty, got {line[:80]!r}")
    return token, rank


def parse_tokenizer_spec(
    spec: dict[str, Any], *, source: str
) -> tuple[list[bytes], set[int], dict[str, int]]:
    """Token bytes, special ids and ``{token string: id}`` of a parsed ``tokenizer.json``; a
    document of another shape is a :class:`TokenizerError` that says where it went wrong."""
    if not isinstance(spec, dict):
        raise TokenizerError(f"{source}: not a tokenizer.json (a JSON object with a 'model'), but a "
                             f"{type(spec).__name__}")
    try:
        return _parse_tokenizer_spec(spec, source)
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        raise TokenizerError(f"{source}: a malformed tokenizer.json ({type(exc).__name__}: {exc})") from exc


def _parse_tokenizer_spec(spec: dict[str, Any], source: str) -> tuple[list[bytes], set[int], dict[str, int]]:
    model_vocab = _model_vocab(spec.get("model") or {}, source)
    to_bytes = token_bytes_function(spec.get("decoder"), source)
    added = spec.get("added_tokens") or []
    size = max([-1, *model_vocab.values(), *(a["id"] for a in added)]) + 1
    if size == 0:
        raise TokenizerError(f"{source}: the tokenizer has no tokens")
    tokens: list[bytes | None] = [None] * size
    for text, token_id in model_vocab.items():
        tokens[token_id] = to_bytes(text)
    special = set()
    for token in added:
        tokens[token["id"]] = token["content"].encode("utf-8")
        if token.get("special"):
            special.add(token["id"])
    gaps = [i for i, token in enumerate(tokens) if token is None]
    for i in gaps:
        tokens[i] = b""
    ids_by_text = dict(model_vocab)
    ids_by_text.update((token["content"], token["id"]) for token in added)
    return tokens, special.union(gaps), ids_by_text  # type: ignore[return-value]


def read_spec_without_merges(text: str) -> dict[str, Any]:
    """A ``tokenizer.json`` parsed without its BPE merges, which only the encoder reads (from the
    file): they are 60-80% of the file, so this halves Llama-3's 0.12 s of parsing.

    The text is cut before ``"merges"`` only in the layout the ``tokenizers`` package writes, where
    the merges are the last key of ``model``, the last top-level key: the key sits at indent 4 and
    no key at indent 2 or 4 follows it (a JSON string holds no raw newline). Otherwise, or when
    the cut text is not JSON, the whole text is parsed.
    """
    at = text.rfind('"merges"')
    if at > 0 and text[at - 5:at] == "\n    " and text.find('\n  "', at) < 0 and text.find('\n    "', at) < 0:
        try:
            return json.loads(text[:at] + '"merges": []}}')
        except ValueError:
            pass
    return json.loads(text)


def _model_vocab(model: dict[str, Any], source: str) -> dict[str, int]:
    kind = model.get("type")
    if kind in ("BPE", "WordLevel", None) and isinstance(model.get("vocab"), dict):
        return model["vocab"]
    if kind == "Unigram":
        return {piece: i for i, (piece, _score) in enumerate(model["vocab"])}
    raise TokenizerError(
        f"{source}: unsupported tokenizer model {kind!r}; leapgram reads BPE, WordLevel and Unigram"
    )


def token_bytes_function(
    decoder: dict[str, Any] | None, source: str = "tokenizer.json"
) -> Callable[[str], bytes]:
    """The function from a token string to its bytes that the ``decoder`` of a tokenizer implies."""
    if not decoder:
        raise TokenizerError(f"{source} has no decoder, so the bytes of its tokens are unknown")
    steps = decoder["decoders"] if decoder.get("type") == "Sequence" else [decoder]
    kinds = [step.get("type") for step in steps]
    _check_strip(kinds, source)
    if "ByteLevel" in kinds:
        if set(kinds) - {"ByteLevel", "Fuse", "Strip"}:
            raise TokenizerError(
                f"{source}: unsupported decoder sequence {kinds}; ByteLevel mixes only with Fuse"
            )
        return byte_level_bytes
    unsupported = [kind for kind in kinds if kind not in _SP_STEPS]
    if unsupported:
        raise TokenizerError(
            f"{source}: unsupported decoder {unsupported[0]!r}; leapgram reads ByteLevel and "
            "SentencePiece-style decoders (Replace, ByteFallback, Fuse, Strip, Metaspace)"
        )
    return _sentencepiece_function(steps, source)


def _check_strip(kinds: list[str | None], source: str) -> None:
    for i, kind in enumerate(kinds):
        if kind == "Strip" and "Fuse" not in kinds[:i]:
            raise TokenizerError(f"{source}: a Strip decoder before Fuse cuts every token; this is not supported")


def _sentencepiece_function(steps: list[dict[str, Any]], source: str) -> Callable[[str], bytes]:
    replacements = [_replacement(step, source) for step in steps if step["type"] in ("Replace", "Metaspace")]
    byte_fallback = any(step["type"] == "ByteFallback" for step in steps)

    def to_bytes(text: str) -> bytes:
        if (
            byte_fallback
            and len(text) == 6
            and text[:3] == "<0x"
            and text[5] == ">"
            and _HEX.issuperset(text[3:5])
        ):
            return bytes((int(text[3:5], 16),))
        for old, new in replacements:
            text = text.replace(old, new)
        return text.encode("utf-8")

    return to_bytes


def _replacement(step: dict[str, Any], source: str) -> tuple[str, str]:
    if step["type"] == "Metaspace":
        return step.get("replacement", "▁"), " "
    pattern = step.get("pattern") or {}
    if "String" not in pattern:
        raise TokenizerError(
            f"{source}: a Replace decoder with pattern {pattern!r} is not supported (only String)"
        )
    return pattern["String"], step["content"]


def _tokenizer_json_file(path: Path) -> Path:
    file = path / "tokenizer.json" if path.is_dir() else path
    if not file.is_file():
        raise TokenizerError(f"no tokenizer.json at {path}")
    return file


def _config_eos_ids(folder: Path, ids_by_text: dict[str, int]) -> tuple[int, ...]:
    for config_file in (folder / name for name in _EOS_CONFIGS):
        eos = _config_eos_text(config_file)
        if eos is None:
            continue
        if eos not in ids_by_text:
            raise TokenizerError(
                f"{config_file}: eos_token {eos!r} is not in the vocabulary; pass eos_token_ids="
            )
        return (ids_by_text[eos],)
    return ()


def _config_eos_text(config_file: Path) -> str | None:
    if not config_file.is_file():
        return None
    with open(config_file, encoding="utf-8") as f:
        eos = json.load(f).get("eos_token")
    return eos.get("content") if isinstance(eos, dict) else eos


def _as_ids(value: object) -> tuple[int, ...]:
    if value is None:
        return ()
    if isinstance(value, int):
        return (value,)
    return tuple(value)  # type: ignore[arg-type]


class TokenizersEncoder:
    """Encodes with a private ``tokenizers.Tokenizer`` built on first use.

    The copy never truncates or pads, and encodes special-token text as ordinary text, so
    ``encode`` returns no special ids. ``source`` is a ``tokenizer.json`` path or a tokenizer.
    Without the ``tokenizers`` package, a byte-level BPE ``tokenizer.json`` is encoded by the
    same algorithm in plain Python (:mod:`leapgram.vocab.hf_bpe`).
    """

    def __init__(self, source: Any) -> None:
        self._source = source
        self._tokenizer: Any = None

    def __call__(self, data: bytes) -> list[int]:
        tokenizer = self._private_tokenizer()
        if not hasattr(tokenizer, "encode"):
            return tokenizer(data)
        return tokenizer.encode(utf8_text(data), add_special_tokens=False).ids

    def _builtin(self) -> Any:
        from .hf_bpe import ByteLevelBPE

        message = "encoding needs the tokenizers package: pip install leapgram[hf]"
        if not isinstance(self._source, str):
            raise ImportError(message)
        with open(self._source, encoding="utf-8") as f:
            spec = json.load(f)
        try:
            return ByteLevelBPE(spec, self._source)
        except ValueError as err:
            raise ImportError(f"{message} (the built-in byte-level BPE cannot read it: {err})") from None

    def _private_tokenizer(self) -> Any:
        if self._tokenizer is None:
            try:
                from tokenizers import Tokenizer
            except ImportError:
                self._tokenizer = self._builtin()
                return self._tokenizer
            if isinstance(self._source, str):
                tokenizer = Tokenizer.from_file(self._source)
            else:
                tokenizer = Tokenizer.from_str(self._source.to_str())
            tokenizer.no_truncation()
            tokenizer.no_padding()
            tokenizer.encode_special_tokens = True
            self._tokenizer = tokenizer
        return self._tokenizer

    def __getstate__(self) -> dict[str, Any]:
        return {"_source": self._source, "_tokenizer": None}


class RankBPEEncoder:
    """Encodes with tiktoken's rank-based BPE (see :mod:`leapgram.vocab.bpe`)."""

    def __init__(self, ranks: dict[bytes, int], pattern: str) -> None:
        from .bpe import RankBPE

        self._bpe = RankBPE(ranks, pattern)

    def __call__(self, data: bytes) -> list[int]:
        return self._bpe.encode(utf8_text(data))
