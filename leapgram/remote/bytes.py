"""The grammar over bytes: a :class:`leapgram.Matcher` on the 256-token byte vocabulary.

An API returns text, not token ids of a vocabulary we hold, so the output is followed byte by
byte: the grammar compiled for :meth:`Vocabulary.byte_vocabulary` (token ``i`` is byte ``i``,
token 256 is EOS) gives a matcher that is exact at every byte, whatever tokenizer the model uses.
"""

from __future__ import annotations

import heapq
import itertools
import time

import numpy as np

from ..compiler import GrammarCompiler
from ..grammars import Grammar
from ..matcher import Matcher
from ..vocab import Vocabulary

EOS = 256

# Tie-break among equally short completions: readable bytes first (digits, letters, closers).
_PREFERRED = b'0123456789abcdefghijklmnopqrstuvwxyz"}]){[ABCDEFGHIJKLMNOPQRSTUVWXYZ.,:;-_'
_ORDER = {b: i for i, b in enumerate(_PREFERRED)} | {b: 2000 + b for b in b" \t\r\n"}
_CLOSERS = b'"}])'


def byte_compiler() -> GrammarCompiler:
    """A compiler for the byte vocabulary (one per :class:`~leapgram.remote.Endpoint`)."""
    return GrammarCompiler(Vocabulary.byte_vocabulary())


class ByteMatcher:
    """Follows text byte by byte; ``text`` is what it has consumed so far."""

    def __init__(self, compiled) -> None:
        self._m = Matcher(compiled, ff_backoff=0)
        self.text = bytearray()

    @classmethod
    def for_grammar(cls, grammar: Grammar, compiler: GrammarCompiler | None = None) -> ByteMatcher:
        return cls((compiler or byte_compiler()).compile(grammar))

    def feed(self, data: bytes) -> int:
        """Consume ``data`` up to the first byte the grammar refuses; returns how many were taken."""
        m = self._m
        for count, byte in enumerate(data):
            if not m.consume_token(byte):
                m.rollback(0)  # leaves the error state; the refused byte was never consumed
                self.text += data[:count]
                return count
        self.text += data
        return len(data)

    def accepts(self, data: bytes) -> bool:
        """Whether all of ``data`` could be consumed now (the state does not change)."""
        return self._m.validate_tokens(list(data)) == len(data)

    def truncate(self, length: int) -> None:
        """Go back to the state after the first ``length`` bytes."""
        self._m.rollback(len(self.text) - length)
        del self.text[length:]

    def is_accepting(self) -> bool:
        return self._m.is_accepting()

    def allowed_bytes(self) -> list[int]:
        """The bytes the grammar allows next, in ascending order (EOS not included)."""
        mask = self._m.compute_mask().view(np.uint32)
        bits = np.unpackbits(mask.view(np.uint8), bitorder="little")
        return [int(b) for b in np.flatnonzero(bits[:256])]

    def can_continue(self) -> bool:
        return bool(self.allowed_bytes())

    def forced(self) -> bytes:
        """The bytes every continuation starts with (empty at a branch or where the text may end)."""
        return self._m.forced_bytes()

    def shortest_completion(self, max_nodes: int = 2_000, max_seconds: float = 0.5) -> bytes | None:
        """A short completion after which the grammar accepts, or ``None`` if none was found.

        First a greedy walk (forced runs, closers first), then Dijkstra over matcher states (a
        forced run is one edge of its length), pruned by the greedy length and stopped after
        ``max_nodes`` states or ``max_seconds``; the shorter of the two is returned. States are
        merged by the matcher's own state key, so text inside one lexeme collapses; at a byte set
        wider than 24, letters, digits and non-ASCII bytes are each tried through their first
        member only (``docs/design/remote.md``)."""
        best = self.greedy_completion()
        limit = len(best) if best is not None else 1 << 30
        stop_at = time.monotonic() + max_seconds
        counter = itertools.count()
        heap = [(0, next(counter), b"", self._m.fork())]
        dist: dict[object, int] = {}
        done: set[object] = set()
        while heap and len(done) < max_nodes and time.monotonic() < stop_at:
            cost, _, path, m = heapq.heappop(heap)
            key = m.state_key()
            if key in done:
                continue
            done.add(key)
            if m.is_accepting():
                return path
            for data, child in _successors(m):
                total = cost + len(data)
                child_key = child.state_key()
                if total >= limit or child_key in done or dist.get(child_key, total + 1) <= total:
                    continue
                dist[child_key] = total
                heapq.heappush(heap, (total, next(counter), path + data, child))
        return best

    def greedy_completion(self, max_bytes: int = 4096) -> bytes | None:
        """A completion found by always taking the first preferred byte: a quote or closer where
        the choice is narrow, a digit or letter inside text (a wide choice) unless ``"`` may end it."""
        m = self._m.fork()
        out = bytearray()
        while not m.is_accepting() and len(out) < max_bytes:
            forced = m.forced_bytes()
            if forced:
                m.consume_tokens(list(forced))
                out += forced
                continue
            allowed = _allowed(m)
            if not allowed:
                return None
            closers = b'"' if len(allowed) > 24 else _CLOSERS  # a wide set is text inside a string
            byte = min(allowed, key=lambda b: (b not in closers, _ORDER.get(b, 1000 + b)))
            m.consume_token(byte)
            out.append(byte)
        return bytes(out) if m.is_accepting() else None


def _allowed(m: Matcher) -> list[int]:
    bits = np.unpackbits(m.compute_mask().view(np.uint8), bitorder="little")
    return [int(b) for b in np.flatnonzero(bits[:256])]


def _successors(m: Matcher):
    forced = m.forced_bytes()
    if forced:
        child = m.fork()
        if child.consume_tokens(list(forced)):
            yield forced, child
        return
    for byte in _representatives(_allowed(m)):
        child = m.fork()
        if child.consume_token(byte):
            yield bytes([byte]), child


_CLASSES = (range(48, 58), range(97, 123), range(65, 91), range(128, 256), tuple(b" \t\r\n"),
            tuple(set(range(32, 127)) - set(b"\"'}])\\") - set(range(48, 58)) - set(range(65, 91)) - set(range(97, 123))))


def _representatives(allowed: list[int]) -> list[int]:
    """The bytes a search tries, preferred first: all of them for a narrow set; in a wide one
    (text inside a string), the quotes, closers and backslash, and the first allowed byte of each
    class (digits, lower, upper, non-ASCII, whitespace, other punctuation, control bytes)."""
    if len(allowed) > 24:
        kept = [b for b in allowed if b in b"\"'}])\\"]
        classes = (*_CLASSES, range(32))
        kept += [next(b for b in allowed if b in c) for c in classes if any(b in c for b in allowed)]
        allowed = kept
    return sorted(set(allowed), key=lambda b: _ORDER.get(b, 1000 + b))
