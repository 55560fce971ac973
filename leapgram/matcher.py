"""``Matcher``: the per-request state of constrained decoding.

Error model: a matcher never raises for what the model does. A token the grammar does not allow,
a token after termination or an exhausted budget puts the matcher in an error state:
``is_error()`` turns true, ``error()`` says why, ``consume_token`` returns ``False``, and masks
allow only EOS so generation can stop. ``rollback`` or ``reset`` leave the error state (the
rejected token was never consumed). Misuse of the API itself raises :class:`TypeError` for an
argument of the wrong type (a token id that is not an int, a bitmask that is not int32) and
:class:`ValueError` for a wrong value (a token id out of range, a bitmask of the wrong shape).

Fast-forward tokens, token healing, draft masks and forks: ``docs/design/fast-forward.md``.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable

import numpy as np

from .compiler import CompiledGrammar
from .errors import LeapgramError
from .mask.forced import advance_cursor, fast_forward
from .vocab.partial import CONTEXT_TOKENS

DEFAULT_FF_BACKOFF = 4
"""Final tokens of a forced run that :meth:`Matcher.fast_forward_tokens` re-examines."""


_TERMINATED = object()
_INT32 = np.dtype(np.int32)


class Matcher:
    """Follows one output token by token; cheap to create from a :class:`CompiledGrammar`.

    ``required_prefix``: bytes the output must start with before the grammar's text (the end of a
    prompt that :func:`leapgram.heal_prompt` backed off); a token may run from inside it into the
    grammar. ``ff_backoff``: how many final tokens of a forced run :meth:`fast_forward_tokens`
    re-examines (0 turns the canonicality back-off off). ``recent_tokens``: the last prompt
    tokens, the tokenizer's context for the first fast-forward tokens.
    """

    def __init__(self, compiled: CompiledGrammar, *, required_prefix: bytes = b"",
                 ff_backoff: int = DEFAULT_FF_BACKOFF, recent_tokens: Iterable[int] = ()) -> None:
        if not isinstance(compiled, CompiledGrammar):
            raise TypeError(f"Matcher needs a CompiledGrammar (from GrammarCompiler.compile), not {type(compiled).__name__}")
        if not isinstance(required_prefix, (bytes, bytearray)):
            raise TypeError(f"required_prefix must be bytes, not {type(required_prefix).__name__}")
        self.compiled = compiled
        self._vocab_size = compiled.vocab.size
        self._eos = frozenset(compiled.vocab.eos_token_ids)
        self.required_prefix = bytes(required_prefix)
        self.ff_backoff = _checked_depth(ff_backoff)
        self._recent = [self._check_token(t) for t in recent_tokens][-CONTEXT_TOKENS:]
        self._checked_bitmask: tuple = (_TERMINATED, 0, [])  # none checked yet
        self.reset()

    # ----- state --------------------------------------------------------------------------

    def reset(self) -> None:
        """Back to the start, as if no token had been consumed."""
        state, self._lease = self.compiled._engine.start()  # the lease recycles a chart arena
        self._states: list[object] = [state]
        self._pending: list[bytes] = [self.required_prefix]
        self._tokens: list[int] = []
        self._terminated = False
        self._error: str | None = None

    @property
    def num_tokens(self) -> int:
        """Tokens consumed so far (EOS included)."""
        return len(self._tokens)

    def is_error(self) -> bool:
        return self._error is not None

    def error(self) -> str | None:
        """Why the matcher is in its error state, or ``None``."""
        return self._error

    def is_terminated(self) -> bool:
        """Whether EOS was consumed."""
        return self._terminated

    def is_accepting(self) -> bool:
        """Whether the output so far is complete (EOS would be allowed)."""
        return (self._error is None and not self._terminated and not self._pending[-1]
                and self.compiled._engine.is_accepting(self._states[-1]))

    def state_key(self) -> Hashable:
        """A hashable key of where the output is: two matchers of the same compiled grammar with
        equal keys allow the same continuations (every later mask and ``consume_token`` result
        is the same), so a search over outputs can merge them. Keys of different compiled
        grammars are not comparable. The key of a context-free state is its chart's fingerprints
        (``docs/design/earley-walk.md``) with its lexer state; of a regex, its DFA state; a
        pending required prefix is part of it."""
        if self._error is not None:
            return ("error",)
        if self._terminated:
            return ("terminated",)
        return self._pending[-1], self.compiled._engine.state_key(self._states[-1])

    # ----- consuming ----------------------------------------------------------------------

    def consume_token(self, token_id: int) -> bool:
        """Advance by one token; ``False`` (and the error state) if the grammar forbids it."""
        compiled = self.compiled
        if (token_id.__class__ is int and 0 <= token_id < self._vocab_size and token_id not in compiled._not_text
                and self._error is None and not self._terminated and not self._pending[-1]):
            # the common step (a text token, no prefix pending): what _advance does, inlined
            data = compiled._token_bytes[token_id]
            if data:
                try:
                    state = compiled._engine.advance(self._states[-1], data)
                except LeapgramError as exc:
                    self._error = str(exc)
                    return False
                if state is None:
                    self._error = f"token {token_id} {self._describe(token_id)} not allowed here"
                    return False
                self._tokens.append(token_id)
                self._pending.append(b"")
                self._states.append(state)
                return True
        token_id = self._check_token(token_id)
        if self._error is not None:
            return False
        reason = self._advance(token_id)
        if reason is not None:
            self._error = reason
            return False
        return True

    def consume_tokens(self, token_ids: Iterable[int]) -> bool:
        """Consume tokens in order; stops at the first rejected one (the error state says which)."""
        return all(self.consume_token(t) for t in token_ids)

    def validate_tokens(self, token_ids: Iterable[int]) -> int:
        """How many leading tokens of ``token_ids`` would be accepted; the state does not change."""
        if self._error is not None:
            return 0
        count = 0
        cursor = (self._pending[-1], self._states[-1])
        terminated = self._terminated
        engine = self.compiled._engine
        for token_id in token_ids:
            token_id = self._check_token(token_id)
            if terminated:
                break
            try:
                if token_id in self._eos:
                    if cursor[0] or not engine.is_accepting(cursor[1]):
                        break
                    terminated = True
                else:
                    cursor = self._next_cursor(cursor, token_id)
                    if cursor is None:
                        break
            except LeapgramError:
                break
            count += 1
        return count

    def rollback(self, num_tokens: int) -> None:
        """Undo the last ``num_tokens`` consumed tokens (and any error state)."""
        if not 0 <= num_tokens <= len(self._tokens):
            raise ValueError(f"cannot roll back {num_tokens} tokens: {len(self._tokens)} consumed")
        if num_tokens:
            del self._tokens[-num_tokens:]
            del self._states[len(self._tokens) + 1 :]
            del self._pending[len(self._tokens) + 1 :]
        self._terminated = self._states[-1] is _TERMINATED
        self._error = None

    def _advance(self, token_id: int) -> str | None:
        if self._terminated:
            return f"token {token_id} after the end of the output (EOS was consumed)"
        cursor = (self._pending[-1], self._states[-1])
        try:
            if token_id in self._eos:
                if cursor[0]:
                    return f"EOS token {token_id} before the required prefix {cursor[0]!r}"
                if not self.compiled._engine.is_accepting(cursor[1]):
                    return f"EOS token {token_id} before the output is complete"
                self._push(token_id, (b"", _TERMINATED))
                self._terminated = True
                return None
            new_cursor = self._next_cursor(cursor, token_id)
        except LeapgramError as exc:
            return str(exc)
        if new_cursor is None:
            return f"token {token_id} {self._describe(token_id)} not allowed here"
        self._push(token_id, new_cursor)
        return None

    def _push(self, token_id: int, cursor: tuple[bytes, object]) -> None:
        self._tokens.append(token_id)
        self._pending.append(cursor[0])
        self._states.append(cursor[1])

    def _next_cursor(self, cursor: tuple[bytes, object], token_id: int) -> tuple[bytes, object] | None:
        """``(pending prefix, engine state)`` after ``token_id``, or ``None`` if it is not allowed."""
        if self.compiled.vocab.is_special(token_id):  # allowed only where the grammar spells its text
            state = None if cursor[0] else self.compiled._special_tokens.advance(self.compiled._engine, cursor[1], token_id)
            return None if state is None else (b"", state)
        return advance_cursor(self.compiled._engine, cursor, self.compiled.vocab.token_bytes(token_id))

    def _describe(self, token_id: int) -> str:
        data = self.compiled.vocab.token_bytes(token_id)
        kind = "special token " if self.compiled.vocab.is_special(token_id) else ""
        return f"({kind}{data[:40]!r})"

    def _check_token(self, token_id: int) -> int:
        if not isinstance(token_id, (int, np.integer)) or isinstance(token_id, bool):
            raise TypeError(f"token id must be an int, not {type(token_id).__name__}")
        token_id = int(token_id)
        if not 0 <= token_id < self._vocab_size:
            raise ValueError(f"token id {token_id} out of range for a vocabulary of {self._vocab_size}")
        return token_id

    # ----- masks --------------------------------------------------------------------------

    def fill_next_token_bitmask(self, bitmask: np.ndarray, index: int = 0) -> None:
        """Write the allowed next tokens into row ``index`` of ``bitmask`` (int32, C-contiguous,
        shape ``(batch, >= ceil(vocab_size / 32))``). EOS is allowed exactly when accepting."""
        checked = self._checked_bitmask  # (bitmask, rows, row views, flat words, columns) of the last call
        if (bitmask is checked[0] and index.__class__ is int and 0 <= index < checked[1] and bitmask.ndim == 2
                and len(bitmask) == checked[1] and bitmask.dtype is _INT32):
            out = checked[2][index]  # the bitmask is unchanged: no checks again
            if out is None:  # a row not filled yet: its views only, cut from the whole bitmask's
                flat, cols, words = checked[3], checked[4], self.compiled._words
                start = index * cols
                out = checked[2][index] = (flat[start : start + words],
                                           flat[start + words : start + cols] if cols > words else None)
        else:
            out = self._row_views(bitmask, index)
        compiled = self.compiled
        if self._terminated or self._error is not None:
            view = compiled._eos_entry.view
        else:
            try:
                pending = self._pending[-1]
                if pending:
                    view = memoryview(compiled._prefix_masks.mask(self._states[-1], pending).view(np.int32))
                else:  # CompiledGrammar._state_row inlined: the key made once, hit or miss
                    state = self._states[-1]
                    key = compiled._engine.mask_key(state)
                    entry = compiled._masks.get(key)
                    if entry is None:
                        entry = compiled._new_row(state, key)
                    else:
                        entry.used = True
                    view = entry.view
            except LeapgramError as exc:
                self._error = str(exc)
                view = compiled._eos_entry.view
        out[0][:] = view
        if out[1] is not None:  # words past the vocabulary
            out[1][:] = _zeros(len(out[1]))

    def compute_mask(self) -> np.ndarray:
        """The next-token mask as a fresh ``(ceil(vocab_size / 32),)`` int32 array."""
        out = np.zeros((1, self.compiled._words), dtype=np.int32)
        self.fill_next_token_bitmask(out, 0)
        return out[0]

    def _next_row(self, compute: bool = True) -> memoryview | None:
        """For :mod:`leapgram.batch`: a memoryview of the int32 words that
        :meth:`fill_next_token_bitmask` would write (shared: do not modify), or ``None`` when
        ``compute`` is false and the state's mask is not cached (a pending prefix is never)."""
        compiled = self.compiled
        if self._terminated or self._error is not None:
            return compiled._eos_entry.view
        try:
            pending = self._pending[-1]
            if pending:
                return memoryview(compiled._prefix_masks.mask(self._states[-1], pending).view(np.int32)) \
                    if compute else None
            state = self._states[-1]
            entry = compiled._state_row(state) if compute else compiled._cached_row(state)
            return None if entry is None else entry.view
        except LeapgramError as exc:
            self._error = str(exc)
            return compiled._eos_entry.view

    # ----- fast-forward, drafts, forks ---------------------------------------------------

    def forced_bytes(self) -> bytes:
        """The bytes every continuation must start with: the rest of the required prefix, then
        the bytes the grammar forces (up to a branch, a point where EOS is allowed, or
        ``Limits.max_forced_bytes``). Empty after EOS and in the error state."""
        if self._error is not None or self._terminated:
            return b""
        try:
            return self._pending[-1] + self.compiled._forced.of(self._states[-1])
        except LeapgramError as exc:
            self._error = str(exc)
            return b""

    def fast_forward_tokens(self, backoff: int | None = None) -> list[int]:
        """Tokens to append without sampling: the tokenizer's own tokens for a prefix of
        :meth:`forced_bytes`, with the last ones dropped while a token allowed by the grammar
        could start inside them and run past the forced bytes (``backoff`` tokens re-examined,
        default ``ff_backoff``). Every token returned can be consumed in order; the matcher's
        state does not change (consume them to advance)."""
        depth = self.ff_backoff if backoff is None else _checked_depth(backoff)
        forced = self.forced_bytes()
        if not forced:
            return []
        compiled = self.compiled
        recent = (self._recent + self._tokens)[-CONTEXT_TOKENS:]
        cursor = (self._pending[-1], self._states[-1])
        if compiled._special_tokens and not cursor[0]:  # a tag the vocabulary holds as one special token
            special, forced = compiled._special_tokens.split_forced(compiled._engine, cursor[1], forced)
            if special is not None or not forced:
                return [special] if special is not None else []
        try:
            return fast_forward(compiled._engine, compiled._trie, compiled.vocab, compiled.limits, cursor, forced,
                                recent, depth)
        except LeapgramError as exc:
            self._error = str(exc)
            return []

    def draft_masks(self, token_ids: Iterable[int]) -> np.ndarray:
        """Masks for every position of a draft in one call: a fresh ``(k + 1, words)`` int32
        array whose row ``j`` is what :meth:`fill_next_token_bitmask` gives after the first ``j``
        draft tokens (row ``k``: after all of them). When draft token ``j`` is rejected, the
        rows after ``j`` are zero; compare with :meth:`validate_tokens`. The matcher's state
        does not change."""
        ids = [self._check_token(t) for t in token_ids]
        out = np.zeros((len(ids) + 1, self.compiled._words), dtype=np.int32)
        error = self._error
        consumed = 0
        for index in range(len(ids) + 1):
            self.fill_next_token_bitmask(out, index)
            if index == len(ids) or not self.consume_token(ids[index]):
                break
            consumed += 1
        self.rollback(consumed)
        self._error = error
        return out

    def fork(self, *, share_charts: bool = True) -> Matcher:
        """A matcher in the same state that then goes its own way.

        By default the fork shares the compiled grammar and, for a context-free grammar, the
        chart arena (charts only grow, so neither side can disturb the other's states): a fork
        costs a copy of the token list. Each matcher is used from one thread at a time; a matcher
        and its forks may be used on different threads, but their calls that walk or grow the
        shared arena take turns on its lock (see :class:`leapgram.parser.arena.ChartArena`).
        ``share_charts=False`` replays the tokens into a new arena instead (cost: consuming them
        again), for a fork that should run in parallel with its parent.
        """
        if not share_charts:
            clone = Matcher(self.compiled, required_prefix=self.required_prefix, ff_backoff=self.ff_backoff,
                            recent_tokens=self._recent)
            clone.consume_tokens(self._tokens)
            clone._error = self._error
            return clone
        if self._lease is not None:  # a context-free grammar's arena, now shared
            self._lease.arena.share()
        clone = object.__new__(Matcher)
        clone.__dict__.update(self.__dict__)
        clone._states, clone._pending = list(self._states), list(self._pending)
        clone._tokens, clone._recent = list(self._tokens), list(self._recent)
        return clone

    def _row_views(self, bitmask: np.ndarray, index: int) -> tuple[memoryview, memoryview | None]:
        """Row ``index`` of ``bitmask``, checked, as memoryviews of its first ``ceil(vocab_size /
        32)`` words and of the words past them (``None`` if none); kept for the next call with
        the same 2-D bitmask."""
        if not isinstance(bitmask, np.ndarray):
            raise TypeError(f"bitmask must be a numpy int32 array, not {type(bitmask).__name__}; "
                             "allocate one with leapgram.allocate_token_bitmask")
        if bitmask.dtype is not _INT32 and bitmask.dtype != _INT32:
            raise TypeError(f"bitmask dtype must be int32, got {bitmask.dtype}")
        whole = bitmask
        if bitmask.ndim == 1:
            bitmask = bitmask.reshape(1, -1)
        shape = bitmask.shape
        words = self.compiled._words
        if len(shape) != 2 or shape[1] < words:
            raise ValueError(f"bitmask must have shape (batch, >= {words}), got {shape}")
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            raise TypeError(f"the row index must be an int, not {type(index).__name__}")
        if not 0 <= index < shape[0]:
            raise ValueError(f"index {index} out of range for a bitmask of {shape[0]} rows")
        row = bitmask[index]
        if not row.flags.c_contiguous:
            raise ValueError("bitmask rows must be C-contiguous; use np.ascontiguousarray")
        if not row.flags.writeable:
            raise ValueError("bitmask is read-only")
        out = (memoryview(row[:words]), memoryview(row[words:]) if shape[1] > words else None)
        if whole is bitmask and bitmask.flags.c_contiguous and bitmask.dtype is _INT32:
            checked = self._checked_bitmask
            if checked[0] is not bitmask or checked[1] != shape[0]:
                flat = memoryview(bitmask).cast("B").cast(out[0].format)
                checked = self._checked_bitmask = (bitmask, shape[0], [None] * shape[0], flat, shape[1])
            checked[2][int(index)] = out
        return out

    def __repr__(self) -> str:
        status = "error" if self._error else "terminated" if self._terminated else "accepting" if self.is_accepting() else "running"
        return f"Matcher({self.compiled.grammar!r}, tokens={len(self._tokens)}, {status})"


_ZEROS: dict[int, memoryview] = {}
_ZEROS_KEPT = 16  # padding widths: a bitmask's columns past the vocabulary's words (a few per process)


def _zeros(words: int) -> memoryview:
    """A read-only memoryview of ``words`` int32 zeros, shared (``_ZEROS_KEPT`` widths at most)."""
    found = _ZEROS.get(words)
    if found is None:
        zeros = np.zeros(words, dtype=np.int32)
        zeros.flags.writeable = False
        found = memoryview(zeros)
        if len(_ZEROS) >= _ZEROS_KEPT:
            _ZEROS.clear()
        _ZEROS[words] = found
    return found


def _checked_depth(depth: int) -> int:
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 0:
        raise ValueError(f"the back-off depth must be an int >= 0, not {depth!r}")
    return int(depth)
