"""Forced bytes (what every continuation starts with) and fast-forward tokens (the tokenizer's
own tokens for a prefix of them, backed off where an allowed token could run past them).

A *cursor* is ``(pending, state)``: bytes of a required prefix still to come, then the engine
state. Design and examples: ``docs/design/fast-forward.md``.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Sequence
from itertools import accumulate

import numpy as np

from ..errors import LeapgramError
from ..limits import Limits
from ..regex.dfa import DEAD, UNKNOWN
from ..vocab.partial import encode_in_context, kept_tokens
from ..vocab.trie import TokenTrie
from ..vocab.vocabulary import Vocabulary
from .engines import CfgEngine, RegexEngine

CAPPED_MARGIN = 128
"""When a forced run reaches ``Limits.max_forced_bytes``, the bytes after the cap are forced too but
unknown, so tokens ending in the last ``CAPPED_MARGIN`` bytes are left to a later call (a word cut
by the cap would otherwise tokenize differently, whatever the back-off depth)."""

_CACHE_SIZE = 4_096

Cursor = tuple[bytes, object]


def next_bytes(engine: RegexEngine | CfgEngine, state) -> np.ndarray:
    """The bytes that can come next in ``state``, as a bool array of 256."""
    if isinstance(engine, RegexEngine):
        return _live_row(engine.dfa, state)
    lex = state[2]
    if lex == DEAD:
        return np.zeros(256, dtype=bool)
    lexer = engine.lexer
    live = _live_row(lexer, lex)
    if lexer.accepting[lex]:
        ended = engine.boundary(state)
        if ended is not None:
            live |= _live_row(lexer, ended[1])
    return live


def _live_row(table, state: int) -> np.ndarray:
    if table.trans[state, 0] == UNKNOWN:
        table.fill_row(state)
    return table.trans[state] > 0


class ForcedBytes:
    """Forced bytes per state of one compiled grammar, cached by the engine's mask key."""

    def __init__(self, engine: RegexEngine | CfgEngine, limit: int) -> None:
        self.engine = engine
        self.limit = limit
        self._cache: OrderedDict[object, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, state) -> bytes:
        """The bytes every continuation of ``state`` starts with (the first ``limit`` of
        them). May raise :class:`LeapgramError` (a budget)."""
        key = self.engine.mask_key(state)
        with self._lock:
            found = self._cache.get(key)
            if found is not None:
                self._cache.move_to_end(key)
                return found
        out, keys = self._compute(state)
        with self._lock:
            for index, step_key in enumerate(keys):
                self._cache[step_key] = out[index:]
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return out

    def _compute(self, state) -> tuple[bytes, list[object]]:
        """The forced bytes, and the keys of the states along them whose own forced bytes are
        the suffixes (all of them unless the cap cut the run)."""
        engine = self.engine
        out = bytearray()
        keys = [engine.mask_key(state)]
        while not engine.is_accepting(state):
            live = np.flatnonzero(next_bytes(engine, state))
            if live.shape[0] != 1:
                break
            if len(out) == self.limit:
                return bytes(out), keys[:1]
            state = engine.advance(state, bytes((int(live[0]),)))
            if state is None:  # a live byte always advances; stop rather than trust a bad table
                return bytes(out), keys[:1]
            out.append(int(live[0]))
            keys.append(engine.mask_key(state))
        return bytes(out), keys


def advance_cursor(engine: RegexEngine | CfgEngine, cursor: Cursor, data: bytes) -> Cursor | None:
    """The cursor after ``data``: the pending prefix first, then the grammar."""
    pending, state = cursor
    shared = min(len(pending), len(data))
    if data[:shared] != pending[:shared]:
        return None
    rest = data[shared:]
    if rest:
        state = engine.advance(state, rest)
        if state is None:
            return None
    return pending[shared:], state


def trie_node(trie: TokenTrie, data: bytes) -> int:
    """The trie node of the path ``data``, or -1 when no token starts with ``data``."""
    node_byte, node_end = trie.node_byte, trie.node_end
    node = 0
    for byte in data:
        child, end = node + 1, int(node_end[node])
        while child < end and node_byte[child] != byte:
            child = int(node_end[child])
        if child >= end:
            return -1
        node = child
    return node


def has_allowed_extension(engine: RegexEngine | CfgEngine, trie: TokenTrie, node: int, cursor: Cursor,
                          budget: int) -> bool:
    """Whether a token strictly below trie ``node`` can be consumed from ``cursor``, where the
    cursor is the state after the bytes of ``node``'s path. Conservatively ``True`` past
    ``budget`` nodes or when a grammar budget runs out."""
    return allowed_extension(engine, trie, node, cursor, budget) is not None


def allowed_extension(engine: RegexEngine | CfgEngine, trie: TokenTrie, node: int, cursor: Cursor,
                      budget: int) -> bytes | None:
    """:func:`has_allowed_extension` with a witness: the bytes after ``node``'s path of one such
    token (depth first, lowest bytes first), ``None`` when there is none, and ``b""`` when the
    answer is a conservative yes (past ``budget`` nodes or a grammar budget)."""
    node_byte, node_end, node_token = trie.node_byte, trie.node_end, trie.node_token
    stack = [(node, cursor, b"")]
    try:
        while stack:
            parent, at, path = stack.pop()
            child, end = parent + 1, int(node_end[parent])
            below = []
            while child < end:
                budget -= 1
                if budget < 0:
                    return b""
                byte = bytes((int(node_byte[child]),))
                after = advance_cursor(engine, at, byte)
                if after is not None:
                    if node_token[child] >= 0:
                        return path + byte
                    below.append((child, after, path + byte))
                child = int(node_end[child])
            stack.extend(reversed(below))
    except LeapgramError:
        return b""
    return None


def fast_forward(engine: RegexEngine | CfgEngine, trie: TokenTrie, vocab: Vocabulary, limits: Limits,
                 cursor: Cursor, forced: bytes, recent_tokens: Sequence[int], depth: int) -> list[int]:
    """The canonical tokens for a prefix of ``forced`` (the forced bytes at ``cursor``; a run
    that reached ``limits.max_forced_bytes`` keeps its last :data:`CAPPED_MARGIN` bytes out)."""
    ids = encode_in_context(vocab, forced, recent_tokens)
    if ids is None and recent_tokens:
        # The last token ends where the tokenizer puts no boundary (a tag's ">" written alone,
        # where Llama-3 has '>{"'): the output is off the canonical path already, so the forced
        # bytes get their own tokens.
        recent_tokens = ()
        ids = encode_in_context(vocab, forced, recent_tokens)
    if not ids:
        return []
    lengths = [len(vocab.token_bytes(t)) for t in ids]
    if len(forced) >= limits.max_forced_bytes:
        margin = min(CAPPED_MARGIN, limits.max_forced_bytes // 2)
        keep = bisect_right(list(accumulate(lengths)), len(forced) - margin)
        ids, lengths = ids[:keep], lengths[:keep]
    piece = forced[:sum(lengths)]  # without an incomplete UTF-8 character, or where greedy stopped
    if depth == 0:
        return ids
    end = advance_cursor(engine, cursor, piece)
    if end is None:
        return []

    witnesses: list[bytes] = []

    def extends(position: int) -> bool:
        node = trie_node(trie, piece[position:])
        tail = None if node < 0 else allowed_extension(engine, trie, node, end, limits.max_extension_nodes)
        if tail is None:
            return False
        witnesses.append(tail)
        return True

    keep = kept_tokens(lengths, depth, extends)
    if 0 < keep < len(ids) and witnesses[-1]:
        keep = _settled(vocab, ids, keep, piece + witnesses[-1], recent_tokens)
    return ids[:keep]


def _settled(vocab: Vocabulary, ids: list[int], keep: int, longer: bytes, recent_tokens: Sequence[int]) -> int:
    """How many of the ``keep`` tokens the back-off kept are also the first tokens of ``longer``
    (the piece followed by the extension that cut it): freed from the dropped tokens, the
    bytes before the cut may merge with them in another way (``":`` ``[]`` becomes ``":[``
    ``],"`` when ``,"`` follows), and the kept tokens must not depend on that."""
    again = encode_in_context(vocab, longer, recent_tokens)
    if not again:
        return 0
    same = 0
    while same < keep and same < len(again) and again[same] == ids[same]:
        same += 1
    return same
