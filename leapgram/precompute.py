"""Masks computed ahead, when a grammar is compiled, for servers that reuse it (opt-in).

leapgram computes a state's mask the first time a matcher reaches it and keeps it in the compiled
grammar's cache, so the same schema's next requests cost a cache hit per token (~3 µs). The first
request pays the computed masks (~60-110 µs each on tool-call schemas). :func:`precompute_masks`
moves that work to compile time: it explores the states the grammar can reach, byte by byte from
the start, most likely first, computing and caching the mask of each, until no state is left or a
budget (CPU time, states) runs out. What it did not reach is computed on demand as before: the
budget trades compile time for mask time, and the masks are the ones the matchers would compute,
by the same code, for states an advance really reached.

- **Which bytes.** A byte is followed where the state's mask allows that byte's single-byte token
  (every byte is a token in byte-level vocabularies; a byte without one is tried). Bytes that
  take the lexer to the same next state are followed once.
- **Which layout.** Optional whitespace multiplies the states: a chart after ``{"a"`` differs from
  one after ``{ "a"``, and so on at every separator, until the enclosing rule completes. So
  whitespace is followed only as a layout says: after the first byte of a ``separators`` entry
  only the entry's whitespace (json.dumps's default ``(", ", ": ")``; ``()``: the compact
  layout, no whitespace at all). Other layouts stay exact; their states are computed on demand.
- **Which order.** Cheapest first, where a byte costs ``log(n)`` for a state with ``n`` successors
  (a random walk choosing uniformly among them), plus a little per byte: forced runs such as a key's
  letters cost almost nothing, so the declared keys and values come before deep nesting under
  an open object's other keys.
- **Bounds.** ``max_ms`` of the calling thread's CPU time (a busy machine does not shrink what it
  covers) and ``max_states``, capped by the mask cache's bound (``Limits.max_cached_masks``). The
  explored charts stay in the parse arena later matchers reuse (``CfgEngine.start``).

Use it where compile time is off the critical path and one grammar serves many requests (a
server's grammar cache, a tool schema used by every call), not on a one-off schema. XGrammar makes
this trade always (its compile computes per-state masks); llguidance never.
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
import weakref
from dataclasses import dataclass

import numpy as np

from .compiler import CompiledGrammar
from .errors import LeapgramError
from .mask.engines import CfgEngine
from .regex.dfa import DEAD, UNKNOWN
from .vocab import Vocabulary

WHITESPACE = frozenset(b" \t\n\r")
CLASS_WIDTH, CLASS_COST = 16, 2.0  # a successor many bytes lead to, beside others: free text, which costs more
RARE_COST = 3.0  # a non-ASCII byte or a backslash beside other choices: rare in the outputs served
_STEP = 0.01  # the cost of a byte with no alternative: forced runs are explored shortest first

_SINGLE_BYTE: weakref.WeakKeyDictionary[Vocabulary, tuple[int, ...]] = weakref.WeakKeyDictionary()
_SINGLE_BYTE_LOCK = threading.Lock()


@dataclass(frozen=True)
class Precomputed:
    """What :func:`precompute_masks` did: ``states`` explored, ``masks`` computed (the others were
    cached already or shared a mask key), ``seconds`` of CPU spent, and whether every reachable state was
    explored (``complete``) or a budget stopped it first (``stopped_by``: ``"time"`` or ``"states"``)."""

    states: int
    masks: int
    seconds: float
    stopped_by: str | None

    @property
    def complete(self) -> bool:
        """Whether every reachable state was explored (no budget stopped it)."""
        return self.stopped_by is None


def single_byte_tokens(vocab: Vocabulary) -> tuple[int, ...]:
    """For each byte value, the id of the plain-text token that is that byte alone, or -1."""
    with _SINGLE_BYTE_LOCK:
        found = _SINGLE_BYTE.get(vocab)
    if found is not None:
        return found
    ids = [-1] * 256
    skip = frozenset(vocab.eos_token_ids) | vocab.special_token_ids
    for token_id, data in enumerate(vocab.tokens()):
        if len(data) == 1 and ids[data[0]] < 0 and token_id not in skip:
            ids[data[0]] = token_id
    found = tuple(ids)
    with _SINGLE_BYTE_LOCK:
        _SINGLE_BYTE[vocab] = found
    return found


def precompute_masks(compiled: CompiledGrammar, *, max_ms: float = 50.0, max_states: int | None = None,
                     separators: tuple[str, ...] = (", ", ": ")) -> Precomputed:
    """Compute and cache the masks of the states ``compiled`` can reach, most likely first, for at
    most ``max_ms`` milliseconds of this thread's CPU and ``max_states`` states (default and cap: the
    grammar's ``Limits.max_cached_masks``), following whitespace only after the first byte of each
    of ``separators`` (see the module's text). It takes the locks matchers take, so matchers may
    run meanwhile. A second call explores the same states and computes only the masks evicted
    since. ``ValueError`` for a negative budget or a separator that is not one byte then
    whitespace; ``TypeError`` for anything but a :class:`CompiledGrammar`."""
    if not isinstance(compiled, CompiledGrammar):
        raise TypeError(f"precompute_masks needs a CompiledGrammar, not {type(compiled).__name__}")
    if max_ms < 0 or (max_states is not None and max_states < 0):
        raise ValueError(f"precompute_masks: max_ms and max_states must be >= 0, not {max_ms!r} and {max_states!r}")
    after = {}  # the first byte of a separator -> the bytes that follow it in the layout
    for separator in separators:
        data = separator.encode()
        if len(data) < 2 or data[0] in WHITESPACE or any(b not in WHITESPACE for b in data[1:]):
            raise ValueError(f"precompute_masks: a separator is one byte and its whitespace, not {separator!r}")
        after[data[0]] = data[1:]
    cap = compiled.limits.max_cached_masks
    max_states = cap if max_states is None else min(max_states, cap)
    engine = compiled._engine
    ids = np.array(single_byte_tokens(compiled.vocab), dtype=np.int64)
    no_token = ids < 0
    words, bits = np.where(no_token, 0, ids >> 5), np.where(no_token, 0, ids & 31).astype(np.uint32)
    not_space = np.ones(256, dtype=bool)
    not_space[list(WHITESPACE)] = False
    begin = time.thread_time()
    deadline = begin + max_ms / 1e3
    state, lease = engine.start()
    automaton = engine.lexer if isinstance(engine, CfgEngine) else engine.dfa  # its table grows: read it per state
    lexer_of = _lexer_state if isinstance(engine, CfgEngine) else int
    seen = {engine.state_key(state)}
    order = itertools.count()
    frontier = [(0, next(order), b"", state)]
    explored = computed = 0
    stopped = None
    try:
        while frontier:
            if explored >= max_states:
                stopped = "states"
                break
            if time.thread_time() >= deadline:
                stopped = "time"
                break
            cost, _, layout, state = heapq.heappop(frontier)
            explored += 1
            key = engine.mask_key(state)
            entry = compiled._cached_row(state, key)
            if entry is None:
                entry = compiled._new_row(state, key)
                computed += 1
            row = entry.row.view(np.uint32)
            successors = []
            widths = None  # how many bytes lead to each candidate's target
            allowed = ((row[words] >> bits) & 1).astype(bool)
            allowed |= no_token  # (a byte without its own token is tried)
            if layout and allowed[layout[0]]:
                candidates = layout[:1]
            else:
                if not layout:
                    allowed &= not_space
                candidates = np.flatnonzero(allowed)
                if candidates.size:
                    targets = automaton.trans[lexer_of(state), candidates]
                    live = (targets != UNKNOWN) & (targets != DEAD)
                    _, first, counts = np.unique(targets[live], return_index=True, return_counts=True)
                    singles_out = candidates[~live]
                    candidates = np.concatenate((singles_out, candidates[live][first]))
                    widths = [1] * singles_out.size + counts.tolist()
                candidates = candidates.tolist()
            for i, byte in enumerate(candidates):
                try:
                    nxt = engine.advance(state, bytes((byte,)))
                except LeapgramError:  # a budget of the parser: that path is left to the matchers
                    continue
                if nxt is not None:
                    successors.append((byte, nxt, 1 if widths is None else widths[i]))
            plain = sum(1 for byte, _, width in successors if not _free(byte, width))
            step = _STEP + math.log(plain) if plain > 1 else _STEP
            for byte, nxt, width in successors:
                found = engine.state_key(nxt)
                if found in seen:
                    continue
                seen.add(found)
                extra = RARE_COST if byte >= 0x80 or byte == 0x5C else CLASS_COST if width >= CLASS_WIDTH else 0.0
                heapq.heappush(frontier, (cost + step + (extra if len(successors) > 1 else 0.0), next(order),
                                          layout[1:] if layout else after.get(byte, b""), nxt))
    finally:
        del lease  # the arena goes back to the grammar's spares, with the charts explored
    return Precomputed(explored, computed, time.thread_time() - begin, stopped)


def _lexer_state(state) -> int:
    """The lexer state of a context-free grammar's state ``(arena, chart, lexer state)``."""
    return state[2]


def _free(byte: int, width: int) -> bool:
    """Whether a successor is free text or a rare byte (its own cost) rather than one of the
    grammar's literal choices (which share ``log(n)``)."""
    return byte >= 0x80 or byte == 0x5C or width >= CLASS_WIDTH
