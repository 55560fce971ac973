"""Byte-level BPE read from a ``tokenizer.json``, in plain Python.

The encoder of a :class:`leapgram.Vocabulary` is the ``tokenizers`` package when installed;
without it, this reimplementation serves the byte-level BPE tokenizers (GPT-2, Llama-3, Qwen,
SmolLM2). What it supports, step by step: docs/design/vocabulary.md; anything else raises
:class:`ValueError` naming it. The pattern needs the ``regex`` module, imported on first use.
"""

from __future__ import annotations

import itertools
import unicodedata
from functools import lru_cache
from typing import Any

from .byte_level import gpt2_unicode_to_bytes, utf8_text

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
_BYTE_CHARS = {byte: char for char, byte in gpt2_unicode_to_bytes().items()}
_NO_RANK = 1 << 62


class ByteLevelBPE:
    """The encoder of a byte-level BPE ``tokenizer.json`` (the parsed JSON ``spec``)."""

    def __init__(self, spec: dict[str, Any], source: str = "tokenizer.json") -> None:
        self._nfc = _normalizer(spec.get("normalizer"), source)
        self._patterns = _pre_tokenizers(spec.get("pre_tokenizer"), source)
        model = spec.get("model") or {}
        _check_model(model, source)
        if any(not token.get("special") for token in spec.get("added_tokens") or []):
            raise ValueError(f"{source}: non-special added tokens are not supported by the built-in BPE")
        self._vocab: dict[str, int] = model["vocab"]
        merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in model.get("merges", [])]
        self._ranks = {pair: rank for rank, pair in reversed(list(enumerate(merges)))}
        self._ignore_merges = bool(model.get("ignore_merges"))
        self._compiled: list[Any] | None = None
        self._word_ids = lru_cache(maxsize=65_536)(self._encode_word)

    def __call__(self, data: bytes) -> list[int]:
        text = utf8_text(data)
        if self._nfc:
            text = unicodedata.normalize("NFC", text)
        pieces = [text]
        for pattern in self._regexes():
            pieces = [part for piece in pieces for part in _isolated(pattern, piece)]
        ids: list[int] = []
        for piece in pieces:
            ids.extend(self._word_ids("".join(_BYTE_CHARS[b] for b in piece.encode("utf-8"))))
        return ids

    def _encode_word(self, word: str) -> tuple[int, ...]:
        vocab = self._vocab
        if self._ignore_merges and word in vocab:
            return (vocab[word],)
        symbols = list(word)
        ranks = self._ranks
        while len(symbols) > 1:
            pairs = [ranks.get((a, b), _NO_RANK) for a, b in itertools.pairwise(symbols)]
            best = min(pairs)
            if best == _NO_RANK:
                break
            i = pairs.index(best)
            symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
        try:
            return tuple(vocab[s] for s in symbols)
        except KeyError as err:
            raise ValueError(f"the tokenizer has no token for {err.args[0]!r}") from None

    def _regexes(self) -> list[Any]:
        if self._compiled is None:
            try:
                import regex
            except ImportError:
                raise ImportError("encoding without the tokenizers package needs regex: pip install regex") from None
            self._compiled = [regex.compile(p) for p in self._patterns]
        return self._compiled

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_compiled"] = None
        del state["_word_ids"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._word_ids = lru_cache(maxsize=65_536)(self._encode_word)


def _isolated(pattern: Any, text: str) -> list[str]:
    """``text`` split at the matches of ``pattern``, matches and gaps both kept, empty ones not."""
    parts = []
    last = 0
    for match in pattern.finditer(text):
        if match.start() > last:
            parts.append(text[last:match.start()])
        if match.end() > match.start():
            parts.append(match.group())
        last = match.end()
    if last < len(text):
        parts.append(text[last:])
    return parts


def _normalizer(spec: dict[str, Any] | None, source: str) -> bool:
    if spec is None:
        return False
    if spec.get("type") == "NFC":
        return True
    raise ValueError(f"{source}: normalizer {spec.get('type')!r} is not supported by the built-in BPE")


def _pre_tokenizers(spec: dict[str, Any] | None, source: str) -> list[str]:
    steps = (spec or {}).get("pretokenizers", [spec] if spec else [])
    patterns = []
    for step in steps:
        kind = step.get("type")
        if kind == "Split" and step.get("behavior") == "Isolated" and not step.get("invert"):
            pattern = step.get("pattern") or {}
            patterns.append(pattern["Regex"] if "Regex" in pattern else _escaped(pattern["String"]))
        elif kind == "Digits":
            patterns.append(r"\p{N}" if step.get("individual_digits") else r"\p{N}+")
        elif kind == "ByteLevel" and not step.get("add_prefix_space"):
            if step.get("use_regex", True):
                patterns.append(GPT2_PATTERN)
        else:
            raise ValueError(f"{source}: pre-tokenizer {kind!r} {step} is not supported by the built-in BPE")
    return patterns


def _escaped(text: str) -> str:
    import re

    return re.escape(text)


def _check_model(model: dict[str, Any], source: str) -> None:
    if model.get("type") != "BPE" or not isinstance(model.get("vocab"), dict):
        raise ValueError(f"{source}: the built-in encoder reads byte-level BPE models only, not {model.get('type')!r}")
    for key in ("dropout", "continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise ValueError(f"{source}: BPE option {key}={model[key]!r} is not supported by the built-in BPE")
    if model.get("byte_fallback"):
        raise ValueError(f"{source}: BPE byte fallback is not supported by the built-in BPE")
