"""``Matcher``: the per-request state of constrained decoding.

Error model: a matcher never raises for what the model does. A token the grammar does not allow,
a token after termination or an exhausted budget puts the matcher in an error state:
``is_error()`` turns true, ``error()`` says why, ``consume_token`` returns ``False``, and masks
allow only EOS so generation can stop. ``rollback`` or ``reset`` leave the error state (the
rejected token was never consumed). Misuse of the API itself (a token id out of range, a bitmask
of the wrong dtype or shape) raises :class:`ValueError`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .compiler import CompiledGrammar
from .errors import LeapgramError


_TERMINATED = object()


class Matcher:
    """Follows one output token by token; cheap to create from a :class:`CompiledGrammar`."""

    def __init__(self, compiled: CompiledGrammar) -> None:
        if not isinstance(compiled, CompiledGrammar):
            raise ValueError(f"Matcher needs a CompiledGrammar (from leapgram.compile), not {type(compiled).__name__}")
        self.compiled = compiled
        self._vocab_size = compiled.vocab.size
        self._eos = frozenset(compiled.vocab.eos_token_ids)
        self.reset()

    # ----- state --------------------------------------------------------------------------

    def reset(self) -> None:
        """Back to the start, as if no token had been consumed."""
        self._states: list[object] = [self.compiled.engine.initial]
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
        return self._error is None and not self._terminated and self.compiled.engine.is_accepting(self._states[-1])

    # ----- consuming ----------------------------------------------------------------------

    def consume_token(self, token_id: int) -> bool:
        """Advance by one token; ``False`` (and the error state) if the grammar forbids it."""
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
        state = self._states[-1]
        terminated = self._terminated
        engine = self.compiled.engine
        for token_id in token_ids:
            token_id = self._check_token(token_id)
            if terminated:
                break
            try:
                if token_id in self._eos:
                    if not engine.is_accepting(state):
                        break
                    terminated = True
                else:
                    state = self._next_state(state, token_id)
                    if state is None:
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
        self._terminated = self._states[-1] is _TERMINATED
        self._error = None

    def _advance(self, token_id: int) -> str | None:
        if self._terminated:
            return f"token {token_id} after the end of the output (EOS was consumed)"
        state = self._states[-1]
        try:
            if token_id in self._eos:
                if not self.compiled.engine.is_accepting(state):
                    return f"EOS token {token_id} before the output is complete"
                self._tokens.append(token_id)
                self._states.append(_TERMINATED)
                self._terminated = True
                return None
            new_state = self._next_state(state, token_id)
        except LeapgramError as exc:
            return str(exc)
        if new_state is None:
            return f"token {token_id} {self._describe(token_id)} not allowed here"
        self._tokens.append(token_id)
        self._states.append(new_state)
        return None

    def _next_state(self, state: object, token_id: int) -> object | None:
        if self.compiled.vocab.is_special(token_id):
            return None
        return self.compiled.engine.advance(state, self.compiled.vocab.token_bytes(token_id))

    def _describe(self, token_id: int) -> str:
        data = self.compiled.vocab.token_bytes(token_id)
        kind = "special token " if self.compiled.vocab.is_special(token_id) else ""
        return f"({kind}{data[:40]!r})"

    def _check_token(self, token_id: int) -> int:
        if not isinstance(token_id, (int, np.integer)) or isinstance(token_id, bool):
            raise ValueError(f"token id must be an int, not {type(token_id).__name__}")
        token_id = int(token_id)
        if not 0 <= token_id < self._vocab_size:
            raise ValueError(f"token id {token_id} out of range for a vocabulary of {self._vocab_size}")
        return token_id

    # ----- masks --------------------------------------------------------------------------

    def fill_next_token_bitmask(self, bitmask: np.ndarray, index: int = 0) -> None:
        """Write the allowed next tokens into row ``index`` of ``bitmask`` (int32, C-contiguous,
        shape ``(batch, >= ceil(vocab_size / 32))``). EOS is allowed exactly when accepting."""
        row = self._bitmask_row(bitmask, index)
        words = self.compiled.words
        allow_eos = self._terminated or self._error is not None
        if not allow_eos:
            try:
                mask, allow_eos = self.compiled.state_mask_and_accepting(self._states[-1])
                row[:words] = mask
            except LeapgramError as exc:
                self._error = str(exc)
                allow_eos = True
        if allow_eos and (self._terminated or self._error is not None):
            row[:words] = 0
        row[words:] = 0
        if allow_eos:
            for eos in self._eos:
                row[eos >> 5] |= np.uint32(1 << (eos & 31))

    def compute_mask(self) -> np.ndarray:
        """The next-token mask as a fresh ``(ceil(vocab_size / 32),)`` int32 array."""
        out = np.zeros((1, self.compiled.words), dtype=np.int32)
        self.fill_next_token_bitmask(out, 0)
        return out[0]

    def _bitmask_row(self, bitmask: np.ndarray, index: int) -> np.ndarray:
        if not isinstance(bitmask, np.ndarray):
            raise ValueError(f"bitmask must be a numpy int32 array, not {type(bitmask).__name__}; "
                             "allocate one with leapgram.allocate_token_bitmask")
        if bitmask.dtype != np.int32:
            raise ValueError(f"bitmask dtype must be int32, got {bitmask.dtype}")
        if bitmask.ndim == 1:
            bitmask = bitmask.reshape(1, -1)
        if bitmask.ndim != 2 or bitmask.shape[1] < self.compiled.words:
            raise ValueError(f"bitmask must have shape (batch, >= {self.compiled.words}), got {bitmask.shape}")
        if not 0 <= index < bitmask.shape[0]:
            raise ValueError(f"index {index} out of range for a bitmask of {bitmask.shape[0]} rows")
        row = bitmask[index]
        if not row.flags.c_contiguous:
            raise ValueError("bitmask rows must be C-contiguous; use np.ascontiguousarray")
        return row.view(np.uint32)

    def __repr__(self) -> str:
        status = "error" if self._error else "terminated" if self._terminated else "accepting" if self.is_accepting() else "running"
        return f"Matcher({self.compiled.grammar!r}, tokens={len(self._tokens)}, {status})"
