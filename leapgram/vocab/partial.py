"""Tokenizing a piece of text as the tokenizer would inside a longer text, and backing off.

Fast-forward tokens and token healing both need :func:`encode_in_context` (the tokenizer's own
tokens for bytes that follow recent tokens; ``None`` when no canonical answer exists) and
:func:`kept_tokens` (dropping final tokens the following text may merge with). Why pre-tokenizers
need the context: docs/design/fast-forward.md. A vocabulary without an encoder (hand-made test
vocabularies) is tokenized by greedy longest match, canonical for no real tokenizer.
"""

from __future__ import annotations

import threading
import weakref
from bisect import bisect_left
from collections.abc import Callable, Sequence
from itertools import accumulate
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .vocabulary import Vocabulary

CONTEXT_TOKENS = 3
"""Recent tokens whose bytes are encoded in front of a piece (pre-tokenizers look back one
character; three tokens also cover a context token that is a lone byte of a UTF-8 character)."""

DEFAULT_BACKOFF = 4
"""Final tokens examined by the back-off when the caller gives no depth (llguidance checks 4)."""


class TokenPrefixes:
    """The distinct bytes of a vocabulary's ordinary tokens, sorted: which strings some longer
    token starts with (a binary search), and the longest token that starts a string."""

    def __init__(self, vocab: Vocabulary) -> None:
        special = vocab.special_token_ids
        first_id: dict[bytes, int] = {}
        for token_id, data in enumerate(vocab.tokens()):
            if data and token_id not in special:
                first_id.setdefault(data, token_id)
        self._sorted = sorted(first_id)
        self._ids = first_id
        self._max_len = max((len(t) for t in self._sorted), default=0)

    def has_longer(self, data: bytes) -> bool:
        """Whether some token starts with ``data`` and is longer than it."""
        tokens = self._sorted
        i = bisect_left(tokens, data)
        if i < len(tokens) and tokens[i] == data:
            i += 1
        return i < len(tokens) and tokens[i].startswith(data)

    def greedy(self, data: bytes) -> list[int]:
        """Longest-match tokenization (for vocabularies without an encoder); stops at a byte no
        token starts with."""
        out: list[int] = []
        i = 0
        while i < len(data):
            for size in range(min(self._max_len, len(data) - i), 0, -1):
                token_id = self._ids.get(data[i:i + size])
                if token_id is not None:
                    out.append(token_id)
                    i += size
                    break
            else:
                break
        return out


_PREFIXES: weakref.WeakKeyDictionary[Vocabulary, TokenPrefixes] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def token_prefixes(vocab: Vocabulary) -> TokenPrefixes:
    """The :class:`TokenPrefixes` of ``vocab``, built on first use (about 0.1 s for 128k tokens)."""
    with _LOCK:
        found = _PREFIXES.get(vocab)
    if found is None:
        found = TokenPrefixes(vocab)
        with _LOCK:
            found = _PREFIXES.setdefault(vocab, found)
    return found


def utf8_prefix_length(data: bytes) -> int:
    """Length of the longest prefix of ``data`` that is valid UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        return err.start
    return len(data)


def encode_in_context(vocab: Vocabulary, data: bytes, recent_tokens: Sequence[int] = ()) -> list[int] | None:
    """The tokens of ``data`` when it follows ``recent_tokens``; ``None`` when the tokenizer puts
    no token boundary between them. A tokenizer that takes only UTF-8 text gets the longest
    prefix of ``data`` that is UTF-8 (an incomplete character at the end stays out).

    Only the ordinary tokens after the last special one are context, at most
    :data:`CONTEXT_TOKENS`; the oldest are dropped while the text is not valid UTF-8 before
    ``data`` starts (a context token may be a lone continuation byte, and ``data`` may start
    inside a character the context began). Bytes that a normalizer adds in front
    (SentencePiece's ``▁``) are accounted for.
    """
    if not vocab.has_encoder:
        return token_prefixes(vocab).greedy(data)
    context_ids = _context_ids(vocab, recent_tokens)
    while True:
        context = vocab.decode(context_ids)
        try:
            ids = vocab.encode(context + data)
        except ValueError:
            usable = utf8_prefix_length(context + data)
            if usable == len(context) + len(data):  # refused for another reason than UTF-8
                return None
            if usable > len(context):
                data = data[:usable - len(context)]
            elif context_ids:
                context_ids = context_ids[1:]
            else:
                return None
            continue
        return _after_context(vocab, ids, context, data)


def _context_ids(vocab: Vocabulary, recent_tokens: Sequence[int]) -> list[int]:
    ids: list[int] = []
    for token_id in reversed(list(recent_tokens)[-CONTEXT_TOKENS:]):
        if vocab.is_special(int(token_id)):
            break
        ids.append(int(token_id))
    return ids[::-1]


def _after_context(vocab: Vocabulary, ids: list[int], context: bytes, data: bytes) -> list[int] | None:
    text = context + data
    decoded = vocab.decode(ids)
    extra = len(decoded) - len(text)
    if extra < 0 or decoded[extra:] != text:
        return None
    cut = extra + len(context)
    for index, end in enumerate(accumulate((len(vocab.token_bytes(t)) for t in ids), initial=0)):
        if end == cut:
            return ids[index:]
        if end > cut:
            return None
    return None


def kept_tokens(lengths: Sequence[int], depth: int, extends: Callable[[int], bool]) -> int:
    """How many leading tokens survive the back-off.

    ``lengths`` are the byte lengths of the tokens of a piece. Positions inside the last
    ``depth`` tokens are tried in order; at the first position ``p`` where ``extends(p)`` (some
    token starting at ``p`` runs past the end of the piece), every token that ends after ``p``
    is dropped. ``depth == 0`` keeps everything.
    """
    ends = list(accumulate(lengths))
    first = max(len(ends) - depth, 0)
    start = ends[first - 1] if first else 0
    for position in range(start, ends[-1] if ends else 0):
        if extends(position):
            return bisect_left(ends, position + 1)
    return len(ends)


def tokenize_partial(vocab: Vocabulary, data: bytes, recent_tokens: Sequence[int] = (),
                     max_backoff: int = DEFAULT_BACKOFF) -> tuple[list[int], bytes]:
    """``Vocabulary.tokenize_partial``: see there."""
    ids = encode_in_context(vocab, data, recent_tokens) if data else []
    if not ids:
        return [], data
    prefixes = token_prefixes(vocab)
    piece = data[:sum(len(vocab.token_bytes(t)) for t in ids)]
    keep = kept_tokens([len(vocab.token_bytes(t)) for t in ids], max_backoff,
                       lambda p: prefixes.has_longer(piece[p:]))
    covered = sum(len(vocab.token_bytes(t)) for t in ids[:keep])
    return ids[:keep], data[covered:]


DEFAULT_HEAL_BACKOFF = 2
"""Final prompt tokens that :func:`heal_prompt` examines when the caller gives no depth."""


def heal_prompt(vocab: Vocabulary, prompt_tokens: Sequence[int],
                max_backoff: int = DEFAULT_HEAL_BACKOFF) -> tuple[list[int], bytes]:
    """Token healing: back off the end of a prompt so the model may tokenize across it.

    Returns ``(kept tokens, required prefix)`` with ``decode(kept) + prefix == decode(prompt)``.
    Positions inside the last ``max_backoff`` ordinary tokens (never across a special token, such
    as a chat template's markers) are tried in order; at the first where some token starts and
    runs past the end of the prompt (``" http"`` when ``" https"`` exists), the tokens ending
    after it are removed and their bytes become the prefix. Generate with
    ``Matcher(compiled, required_prefix=prefix)``: its first tokens may span the old boundary.
    """
    if isinstance(max_backoff, bool) or not isinstance(max_backoff, int) or max_backoff < 0:
        raise ValueError(f"max_backoff must be an int >= 0, not {max_backoff!r}")
    tokens = [int(t) for t in prompt_tokens]
    window = 0
    while window < min(max_backoff, len(tokens)) and not vocab.is_special(tokens[-1 - window]):
        window += 1
    tail = tokens[len(tokens) - window:]
    data = vocab.decode(tail)
    prefixes = token_prefixes(vocab)
    keep = kept_tokens([len(vocab.token_bytes(t)) for t in tail], window, lambda p: prefixes.has_longer(data[p:]))
    return tokens[:len(tokens) - window + keep], vocab.decode(tail[keep:])
