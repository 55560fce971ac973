"""The token vocabulary: token id → exact bytes, special tokens, EOS and the tokenizer's encoder.

A :class:`Vocabulary` is immutable and safe to share across threads. Every id in ``range(size)``
has bytes; a *special* token (BOS, EOS, ``<|...|>`` control tokens, placeholders for unused ids)
is never produced by matching text and never enters the token trie, but ``token_bytes`` still
returns its text as UTF-8 so that it can be shown. EOS tokens are always special.

Misuse (an id out of range, tokens that are not bytes) raises :class:`ValueError`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence

Encoder = Callable[[bytes], list[int]]


class Vocabulary:
    """Token ids of one tokenizer and the exact bytes each one stands for.

    ``tokens[i]`` is the byte string of token ``i``. ``special_token_ids`` are control tokens and
    placeholders; ``eos_token_ids`` end generation and are added to the special tokens.
    ``encoder`` maps UTF-8 text to the tokenizer's own ids (without BOS or other special
    tokens); without one, :meth:`encode` raises. Build one with the ``from_*`` loaders rather
    than by hand.
    """

    def __init__(
        self,
        tokens: Sequence[bytes],
        *,
        special_token_ids: Iterable[int] = (),
        eos_token_ids: Iterable[int] = (),
        encoder: Encoder | None = None,
        name: str = "",
        _checked: bool = False,
    ) -> None:
        # _checked: ``tokens`` is a fresh list of bytes (the on-disk cache's loader)
        self._tokens = tokens if _checked and type(tokens) is list and tokens else _checked_tokens(tokens)
        self._eos = tuple(dict.fromkeys(self._checked_ids(eos_token_ids, "eos_token_ids")))
        special = set(self._checked_ids(special_token_ids, "special_token_ids"))
        self._special = frozenset(special.union(self._eos))
        if encoder is not None and not callable(encoder):
            raise TypeError(f"encoder must be callable or None, not {type(encoder).__name__}")
        self._encoder = encoder
        self.name = str(name)

    @property
    def size(self) -> int:
        """The number of token ids; ids run from 0 to ``size - 1``."""
        return len(self._tokens)

    @property
    def eos_token_ids(self) -> tuple[int, ...]:
        """The ids that end generation, in the order given (may be empty)."""
        return self._eos

    @property
    def special_token_ids(self) -> frozenset[int]:
        """Ids of special tokens: control tokens, EOS and placeholders for unused ids."""
        return self._special

    def token_bytes(self, token_id: int) -> bytes:
        """The exact bytes of ``token_id``; for a special token, its text as UTF-8."""
        self._check_id(token_id)
        return self._tokens[token_id]

    def tokens(self) -> list[bytes]:
        """The bytes of every token, indexed by id. The list is shared: do not mutate it."""
        return self._tokens

    def is_special(self, token_id: int) -> bool:
        """Whether ``token_id`` is a special token (never produced by matching text)."""
        self._check_id(token_id)
        return token_id in self._special

    def decode(self, ids: Iterable[int]) -> bytes:
        """The concatenated bytes of ``ids``, special tokens included as their text."""
        return b"".join(self.token_bytes(i) for i in ids)

    def encode(self, data: bytes) -> list[int]:
        """The tokenizer's own tokenization of the UTF-8 text ``data``, without special tokens.

        Text such as ``<|im_end|>`` is encoded as ordinary text, never as the special token.
        It is otherwise exactly what the tokenizer produces, normalizer included: a SentencePiece
        tokenizer that prepends ``▁`` (Mistral, Llama-2) returns ids whose bytes start with a
        space that ``data`` lacks, and a tokenizer with no token for some byte drops it. Raises
        :class:`ValueError` when the vocabulary has no encoder, or when a loaded tokenizer is
        given invalid UTF-8 (the byte vocabulary encodes any bytes).
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"encode takes bytes, not {type(data).__name__}; use text.encode()")
        if self._encoder is None:
            raise ValueError(
                f"{self!r} has no encoder; load it with Vocabulary.from_tokenizer_json, "
                "from_huggingface or from_tiktoken, or pass encoder= to the constructor"
            )
        return list(self._encoder(bytes(data)))

    @property
    def has_encoder(self) -> bool:
        """Whether :meth:`encode` runs the tokenizer's own algorithm (loaded vocabularies do)."""
        return self._encoder is not None

    def tokenize_partial(self, data: bytes, recent_tokens: Iterable[int] = (), *,
                         max_backoff: int = 4) -> tuple[list[int], bytes]:
        """Tokens for a prefix of ``data`` that stay canonical whatever text follows, and the
        bytes left over: ``(tokens, leftover)`` with ``decode(tokens) + leftover == data``.

        ``data`` is tokenized by the tokenizer's own algorithm after the bytes of the last few
        ``recent_tokens`` (pre-tokenizers look back). Then final tokens are dropped while a
        token of the vocabulary starts inside the last ``max_backoff`` tokens and runs past the
        end of ``data`` (``b'order'`` gives ``([], b'order')`` on Llama-3, which has
        ``orderId``). A tokenizer that takes only UTF-8 text leaves an incomplete character at
        the end over. Without an encoder the tokenization is greedy longest match. See ``docs/design/fast-forward.md``.
        """
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"tokenize_partial takes bytes, not {type(data).__name__}")
        if isinstance(max_backoff, bool) or not isinstance(max_backoff, int) or max_backoff < 0:
            raise ValueError(f"max_backoff must be an int >= 0, not {max_backoff!r}")
        from .partial import tokenize_partial

        recent = self._checked_ids(recent_tokens, "recent_tokens")
        return tokenize_partial(self, bytes(data), recent, max_backoff)

    @classmethod
    def from_tokenizer_json(
        cls, path: str | os.PathLike[str], *, eos_token_ids: Iterable[int] | None = None
    ) -> Vocabulary:
        """Load a Hugging Face ``tokenizer.json`` (a file, or a folder that holds one).

        Byte-level BPE (GPT-2, Llama-3, Qwen) and SentencePiece-style vocabularies (``▁`` for
        space, ``<0xNN>`` byte fallback: Mistral, Llama-2, Gemma) are supported. Added tokens
        marked ``special`` become special; other added tokens are ordinary tokens whose bytes are
        their content. Ids missing from the file become special placeholders with empty bytes,
        so that ``size`` is the largest id + 1.

        EOS: ``eos_token_ids`` when given; else the ``eos_token`` of a ``tokenizer_config.json``
        (or ``special_tokens_map.json``) beside the ``tokenizer.json``; else none (an empty tuple). :meth:`encode` uses the
        optional ``tokenizers`` package (``pip install leapgram[hf]``); without it, byte-level
        BPE files (GPT-2, Llama-3, Qwen, SmolLM2) are encoded by the same algorithm in plain
        Python (:mod:`leapgram.vocab.hf_bpe`, needs ``regex``) and others raise ImportError.
        """
        from .loaders import load_tokenizer_json

        return load_tokenizer_json(cls, path, eos_token_ids=eos_token_ids)

    @classmethod
    def from_huggingface(cls, tokenizer: object, *, eos_token_ids: Iterable[int] | None = None) -> Vocabulary:
        """Build from a ``tokenizers.Tokenizer`` or a transformers fast tokenizer.

        The token bytes follow the same rules as :meth:`from_tokenizer_json`. EOS:
        ``eos_token_ids`` when given; else the tokenizer's ``eos_token_id`` (transformers
        tokenizers only; a bare ``tokenizers.Tokenizer`` knows no EOS, so none).
        """
        from .loaders import load_huggingface

        return load_huggingface(cls, tokenizer, eos_token_ids=eos_token_ids)

    @classmethod
    def from_tiktoken(
        cls,
        path: str | os.PathLike[str],
        *,
        pattern: str,
        special_tokens: dict[str, int] | None = None,
        eos_token_ids: Iterable[int] | None = None,
    ) -> Vocabulary:
        """Load a tiktoken rank file: one ``base64-token rank`` pair a line; the rank is the id.

        ``pattern`` is the encoding's pre-tokenizer regex (``pat_str`` in tiktoken) and
        ``special_tokens`` maps special token text to its id. Unused ids become special
        placeholders with empty bytes. :meth:`encode` runs a rank-based BPE in pure Python and
        needs the ``regex`` package (``pip install regex``, part of ``leapgram[hf]``).
        """
        from .loaders import load_tiktoken

        return load_tiktoken(
            cls, path, pattern=pattern, special_tokens=special_tokens or {}, eos_token_ids=eos_token_ids
        )

    @classmethod
    def byte_vocabulary(cls) -> Vocabulary:
        """A test vocabulary: token ``i`` is ``bytes([i])`` for i < 256, and 256 is ``<eos>``."""
        tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]
        return cls(tokens, eos_token_ids=(256,), encoder=_encode_bytes, name="bytes")

    def __repr__(self) -> str:
        name = f"{self.name!r}, " if self.name else ""
        return f"Vocabulary({name}size={self.size}, special={len(self._special)}, eos={list(self._eos)})"

    def _check_id(self, token_id: int) -> None:
        if not 0 <= token_id < len(self._tokens):
            raise ValueError(f"token id {token_id} out of range for a vocabulary of size {len(self._tokens)}")

    def _checked_ids(self, ids: Iterable[int], what: str) -> list[int]:
        if isinstance(ids, (str, bytes)):
            raise TypeError(f"{what} must be an iterable of ints, not {type(ids).__name__}")
        checked = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, int):
                raise ValueError(f"{what} must hold ints, got {i!r}")
            self._check_id(i)
            checked.append(i)
        return checked


def _checked_tokens(tokens: Sequence[bytes]) -> list[bytes]:
    if isinstance(tokens, (str, bytes)):
        raise ValueError(f"tokens must be a sequence of bytes, not {type(tokens).__name__}")
    checked = list(tokens)
    if not checked:
        raise ValueError("a vocabulary needs at least one token")
    for i, token in enumerate(checked):
        if type(token) is not bytes:
            if not isinstance(token, (bytearray, memoryview)):
                raise ValueError(f"token {i} must be bytes, not {type(token).__name__}: {token!r}")
            checked[i] = bytes(token)
    return checked


def _encode_bytes(data: bytes) -> list[int]:
    return list(data)
