"""Speculative drafts from the grammar, the document's layout and the prompt (framework-free).

A :class:`Drafter` follows one output and proposes the tokens the model is likely to write next,
each labelled with its kind (``forced``, ``layout``, ``lookup``, ``prompt``). Every proposal is
checked on a fork of the matcher and cut where the grammar refuses, so a draft is always
grammatical; :func:`draft_length` keeps the prefix whose expected accepted tokens pay for the
wider pass (:class:`DraftPolicy`). The kinds and their measurements: docs/design/generation.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .matcher import Matcher
from .vocab import Vocabulary
from .vocab.partial import encode_in_context

KINDS = ("forced", "layout", "lookup", "prompt")
"""Draft kinds, in the order :meth:`GenerationStats`-like reports list them."""

_WHITESPACE = frozenset(b" \t\n\r")
_OPENERS = frozenset(b"{[")
_CLOSERS = frozenset(b"}]")
_STRUCTURE_BYTES = b'"{}[],:'
_STRUCTURE = frozenset(_STRUCTURE_BYTES)
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_VALUE_END = ord('"')  # the layout key of a string value's closing quote
_KEY_END = 0x100  # the layout key of a member name's closing quote
_SIBLINGS = {ord(","): (ord("{"), ord("[")), ord("{"): (ord(","),), ord("["): (ord(","),)}
_CONTEXT = 8  # recent tokens given to the tokenizer as context


# ----- the document's layout -------------------------------------------------------------------

@dataclass
class _Scan:
    """A JSON-ish byte scanner: nesting depth, inside a string or not, and the last structural
    byte with the whitespace written since (what the layout is keyed by)."""

    depth: int = 0
    in_string: bool = False
    escape: bool = False
    string_is_key: bool = False
    stack: list[int] = field(default_factory=list)
    last: int | None = None     # structural byte (or _VALUE_END) the whitespace follows
    last_depth: int = 0
    space: bytearray = field(default_factory=bytearray)
    expect_key: bool = False

    def copy(self) -> _Scan:
        return _Scan(self.depth, self.in_string, self.escape, self.string_is_key, list(self.stack), self.last,
                     self.last_depth, bytearray(self.space), self.expect_key)

    def feed(self, data: bytes, record: Layout | None = None) -> None:
        for byte in data:
            if self.in_string:
                if self.escape:
                    self.escape = False
                elif byte == 0x5C:  # backslash
                    self.escape = True
                elif byte == 0x22:
                    self.in_string = False
                    self._mark(_KEY_END if self.string_is_key else _VALUE_END)
                continue
            if byte in _WHITESPACE:
                if self.last is not None:
                    self.space.append(byte)
                continue
            if self.last is not None and record is not None:
                record.note(self.last, self.last_depth, bytes(self.space), byte)
            self.last = None
            if byte == 0x22:
                self.in_string = True
                self.string_is_key = bool(self.stack) and self.stack[-1] == 0x7B and self.expect_key
                continue
            if byte in _OPENERS:
                self.stack.append(byte)
                self.depth += 1
                self.expect_key = byte == 0x7B
                self._mark(byte)
            elif byte in _CLOSERS:
                if self.stack:
                    self.stack.pop()
                self.depth = max(0, self.depth - 1)
                self.expect_key = False
            elif byte == 0x2C:  # ,
                self.expect_key = bool(self.stack) and self.stack[-1] == 0x7B
                self._mark(byte)
            elif byte == 0x3A:  # :
                self.expect_key = False
                self._mark(byte)

    def _mark(self, byte: int) -> None:
        self.last = byte
        self.last_depth = self.depth
        self.space = bytearray()


class Layout:
    """What the document wrote after each separator at each depth: ``(separator, depth)`` →
    ``{next byte: the whitespace before it}``, most recent last."""

    def __init__(self) -> None:
        self.seen: dict[tuple[int, int], dict[int, bytes]] = {}

    def note(self, after: int, depth: int, space: bytes, following: int) -> None:
        slot = self.seen.setdefault((after, depth), {})
        slot.pop(following, None)
        slot[following] = space

    def predict(self, after: int, depth: int) -> list[bytes]:
        """Candidate continuations (whitespace and the next byte), most likely first: what
        followed ``after`` at ``depth``; else at another depth, re-indented; else what followed
        its sibling (``{`` for ``,`` and back: a member starts alike after either)."""
        for key in (after, *_SIBLINGS.get(after, ())):
            slot = self.seen.get((key, depth))
            if slot:
                guesses = [_guess(space, following) for following, space in reversed(slot.items())]
            else:
                guesses = []
                for (other_after, other_depth), other in self.seen.items():
                    if other_after != key or other_depth == depth:
                        continue
                    for following, space in reversed(other.items()):
                        scaled = _reindent(space, other_depth, depth, following) if b"\n" in space else space
                        if scaled is not None:
                            guesses.append(_guess(scaled, following))
            guesses += [guess.rstrip(_STRUCTURE_BYTES) for guess in guesses]  # the whitespace alone
            guesses = [guess for guess in dict.fromkeys(guesses) if guess]
            if guesses:
                return guesses
        return []


def _guess(space: bytes, following: int) -> bytes:
    """The whitespace, and the byte after it when that is structure (a value's first byte is
    the model's choice)."""
    return space + bytes([following]) if following in _STRUCTURE else space


def _reindent(space: bytes, depth: int, new_depth: int, following: int) -> bytes | None:
    """``space`` (a newline and an indentation for ``depth``) re-indented for ``new_depth``; a
    closing bracket sits one level out."""
    if not space.startswith(b"\n") or space[1:].strip(b" ") or space[1:].count(b" ") != len(space) - 1:
        return None
    level, new_level = (depth - 1, new_depth - 1) if following in _CLOSERS else (depth, new_depth)
    indent = len(space) - 1
    if level <= 0 or new_level < 0 or indent % level:
        return None
    return b"\n" + b" " * (indent // level * new_level)


# ----- proposals -------------------------------------------------------------------------------

class Drafter:
    """Proposes draft tokens for one output (see the module docstring).

    ``prompt_tokens``: the prompt's ids (looked up token by token, and as text); call
    :meth:`append` with every token the output takes, then :meth:`propose` at a step.
    ``kinds``: the draft kinds to use (default all of :data:`KINDS`).
    """

    def __init__(self, vocab: Vocabulary, prompt_tokens: Sequence[int] = (), *,
                 kinds: Sequence[str] = KINDS, max_ngram: int = 3) -> None:
        unknown = set(kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown draft kinds {sorted(unknown)}; known: {KINDS}")
        self.vocab = vocab
        self.kinds = frozenset(kinds)
        self.max_ngram = max_ngram
        self.history: list[int] = [int(t) for t in prompt_tokens if not vocab.is_special(int(t))]
        self.prompt_length = len(self.history)
        self.prompt_text = vocab.decode(self.history)
        self.output_text = bytearray()
        self._grams: list[dict[tuple[int, ...], int]] = [{} for _ in range(max_ngram + 1)]
        for end in range(1, len(self.history)):
            self._index(end)
        self.layout = Layout()
        self.scan = _Scan()

    def append(self, token: int) -> None:
        """The output took ``token``."""
        token = int(token)
        if self.vocab.is_special(token):
            return
        self.history.append(token)
        self._index(len(self.history) - 1)
        data = self.vocab.token_bytes(token)
        self.output_text += data
        self.scan.feed(data, self.layout)

    def _index(self, end: int) -> None:
        """Record the n-grams that end just before ``history[end]`` as followed by it."""
        for n in range(1, self.max_ngram + 1):
            if end - n < 0:
                break
            self._grams[n][tuple(self.history[end - n:end])] = end

    def propose(self, matcher: Matcher, limit: int) -> tuple[list[int], list[str]]:
        """Up to ``limit`` tokens that ``matcher`` accepts in order, and the kind of each."""
        tokens: list[int] = []
        kinds: list[str] = []
        if limit <= 0 or matcher.is_terminated() or matcher.is_error():
            return tokens, kinds
        fork = matcher.fork()
        scan = self.scan.copy()
        while len(tokens) < limit:
            chunk, chunk_kinds = self._next(fork, scan, tokens)
            chunk = chunk[: limit - len(tokens)]
            chunk = chunk[: fork.validate_tokens(chunk)] if chunk else chunk
            if not chunk:
                break
            fork.consume_tokens(chunk)
            tokens.extend(chunk)
            kinds.extend(chunk_kinds[: len(chunk)])
            scan.feed(self.vocab.decode(chunk))
            if fork.is_terminated():
                break
        return tokens, kinds

    def _next(self, fork: Matcher, scan: _Scan, draft: list[int]) -> tuple[list[int], list[str]]:
        """The next chunk and its kinds: the model's own spelling where the output repeats itself
        (2+ tokens of context, one of them not just JSON punctuation), then the forced bytes and
        the layout, the prompt's text, and a 1-token-context lookup."""
        recent = (self.history[-_CONTEXT:] + draft)[-_CONTEXT:]
        chunk, kind = self._lookup(draft, min_n=2)
        if chunk and fork.validate_tokens(chunk[:1]):
            return chunk, [kind] * len(chunk)
        chunk, kinds = self._structure(fork, scan, recent)
        if chunk:
            return chunk, kinds
        if "prompt" in self.kinds:
            chunk = self._prompt_text(draft, recent)
            if chunk:
                return chunk, ["prompt"] * len(chunk)
        chunk, kind = self._lookup(draft, min_n=1)
        return chunk, [kind] * len(chunk)

    def _structure(self, fork: Matcher, scan: _Scan, recent: list[int], *, rounds: int = 6) -> tuple[list[int], list[str]]:
        """The bytes the grammar forces and the whitespace (and next structural byte) the layout
        predicts, alternately, tokenized together so that a token may span both (``house`` then
        ``":`` then `` "``); each token's kind is that of its last byte."""
        data = b""
        ends: list[tuple[int, str]] = []
        sub: Matcher | None = None
        scan = scan.copy()
        for _ in range(rounds):
            current = fork if sub is None else sub
            piece, kind = b"", ""
            if "forced" in self.kinds:
                piece, kind = current.forced_bytes(), "forced"
            if not piece and "layout" in self.kinds and scan.last is not None and not scan.space \
                    and not scan.in_string:
                for guess in self.layout.predict(scan.last, scan.last_depth):
                    ids = self.vocab.encode(guess) if self.vocab.has_encoder else []
                    if ids and current.validate_tokens(ids) == len(ids):
                        piece, kind = guess, "layout"
                        break
            if not piece:
                break
            ids = self.vocab.encode(piece) if self.vocab.has_encoder else None  # any spelling: for the state
            if not ids or current.validate_tokens(ids) != len(ids):
                break
            if sub is None:
                sub = fork.fork()
            sub.consume_tokens(ids)
            data += piece
            ends.append((len(data), kind))
            scan.feed(piece)
            if sub.is_terminated() or sub.is_error():
                break
        if not data:
            return [], []
        tokens = encode_in_context(self.vocab, data, recent) or []
        kinds = []
        position = 0
        for token in tokens:
            position += len(self.vocab.token_bytes(token))
            kinds.append(next((kind for end, kind in ends if position <= end), ends[-1][1]))
        return tokens, kinds

    def _lookup(self, draft: list[int], *, min_n: int, length: int = 16) -> tuple[list[int], str]:
        """The tokens that followed the most recent earlier occurrence of the longest tail of
        (history + draft), ``min_n`` to ``max_ngram`` tokens long, not all punctuation; kind
        ``prompt`` where that occurrence is in the prompt, ``lookup`` in the output."""
        tail = (self.history[-self.max_ngram:] + draft)[-self.max_ngram:]
        for n in range(min(self.max_ngram, len(tail)), min_n - 1, -1):
            if all(self._punctuation(t) for t in tail[-n:]):
                continue
            end = self._grams[n].get(tuple(tail[-n:]))
            if end is None:
                continue
            kind = "prompt" if end < self.prompt_length else "lookup"
            if kind in self.kinds:
                return self.history[end:end + length], kind
        return [], ""

    def _punctuation(self, token: int) -> bool:
        """Whether the token is only JSON punctuation and whitespace (a weak context)."""
        return not any(byte in _WORD for byte in self.vocab.token_bytes(token))

    def _prompt_text(self, draft: list[int], recent: list[int], *, length: int = 48) -> list[int]:
        """The tokens of the prompt's text after the longest tail of the output that occurs in it:
        4 bytes or more, or a word begun in both (``"H`` → ``arry Potter``)."""
        text = self.prompt_text
        if not text:
            return []
        out = bytes(self.output_text[-64:]) + self.vocab.decode(draft)
        best = -1
        for n in range(min(len(out), 24), 0, -1):
            piece = out[-n:]
            at = text.rfind(piece)
            if at < 0:
                continue
            if n < 4:
                if not self._word_start(out, n):
                    break
                while at > 0 and text[at - 1] in _WORD:
                    at = text.rfind(piece, 0, at)
                if at < 0:
                    break
            best = at + n
            break
        if best < 0 or best >= len(text):
            return []
        follow = text[best:best + length]
        ids = encode_in_context(self.vocab, follow, recent[-_CONTEXT:]) or []
        return ids[:-1] if len(ids) > 1 else ids  # the last token may be cut by the window

    @staticmethod
    def _word_start(out: bytes, n: int) -> bool:
        piece = out[-n:]
        return piece[0] in _WORD and (n == len(out) or out[-n - 1] not in _WORD)


# ----- how long a draft pays -------------------------------------------------------------------

@dataclass
class DraftPolicy:
    """Measured pass costs and acceptance rates that :func:`draft_length` weighs.

    ``pass_cost(w)``: a forward pass that feeds ``w`` new tokens (and keeps their logits), relative
    to a 1-token pass, learned from :meth:`observe_pass` timings with a prior of the shape measured
    on a 1-thread CPU (a 2-token pass costs about 1.6 single ones: the matrix-vector product
    becomes a matrix product; each further token about 0.045 more). ``acceptance(kind)``: the
    share of drafted tokens of ``kind`` the model kept, among those it was asked about, with a
    prior of one half over a few tokens and old observations fading."""

    step_cost: float = 1.55
    token_cost: float = 0.045
    decay: float = 0.98
    one_pass: float | None = None
    wide_scale: float | None = None
    accepted: dict[str, float] = field(default_factory=lambda: dict.fromkeys(KINDS, 2.0))
    reached: dict[str, float] = field(default_factory=lambda: dict.fromkeys(KINDS, 4.0))

    def _shape(self, width: int) -> float:
        return self.step_cost + self.token_cost * (width - 2)

    def pass_cost(self, width: int) -> float:
        if width <= 1:
            return 1.0
        ratio = self._shape(width)
        if self.one_pass is not None and self.wide_scale is not None:
            ratio *= self.wide_scale / self.one_pass
        return max(1.0, ratio)

    def observe_pass(self, width: int, seconds: float) -> None:
        """A decoding pass (not a prefill) of ``width`` new tokens took ``seconds``."""
        if width <= 1:
            self.one_pass = seconds if self.one_pass is None else 0.9 * self.one_pass + 0.1 * seconds
            return
        scale = seconds / self._shape(width)
        self.wide_scale = scale if self.wide_scale is None else 0.9 * self.wide_scale + 0.1 * scale

    def acceptance(self, kind: str) -> float:
        return self.accepted[kind] / self.reached[kind]

    def observe_draft(self, kind: str, accepted: bool) -> None:
        self.accepted[kind] = self.accepted[kind] * self.decay + accepted
        self.reached[kind] = self.reached[kind] * self.decay + 1.0


def draft_length(kinds: Sequence[str], policy: DraftPolicy) -> int:
    """How many leading draft tokens to feed: the ``k`` that maximizes the expected tokens per
    unit of model time, ``(1 + E[accepted of k]) / pass_cost(1 + k)`` (0 when no draft pays)."""
    best, best_gain = 0, 1.0
    expected = 0.0
    chance = 1.0
    for k, kind in enumerate(kinds, start=1):
        chance *= policy.acceptance(kind)
        expected += chance
        gain = (1.0 + expected) / policy.pass_cost(1 + k)
        if gain > best_gain:
            best, best_gain = k, gain
    return best
