"""A DFA over bytes built lazily from derivatives.

States are expressions; state 0 is the dead state (the empty language). The transition table is a
``(capacity, 256)`` int32 array where ``-1`` marks a transition not computed yet. Compiled kernels
read the table directly and stop at a ``-1``; :meth:`LazyDfa.fill_row` then computes the
missing row in Python (one derivative per byte class, not per byte) and the kernel resumes.
"""

from __future__ import annotations

import numpy as np

from ..errors import BudgetExceededError
from ..limits import Limits
from .expr import EMPTY, ExprPool

DEAD = 0
UNKNOWN = -1


class LazyRows:
    """A transition table (``trans``, int32 ``(states, 256)``) whose rows a subclass fills on
    first use (``fill_row``); ``UNKNOWN`` marks a row not filled yet."""

    trans: np.ndarray

    def fill_row(self, state: int) -> None:
        raise NotImplementedError

    def step(self, state: int, byte: int) -> int:
        """The state after ``byte``; ``DEAD`` when nothing can continue."""
        target = self.trans[state, byte]
        if target == UNKNOWN:
            self.fill_row(state)
            target = self.trans[state, byte]
        return int(target)


class LazyDfa(LazyRows):
    """The DFA of one expression, grown on demand within ``Limits.max_dfa_states``.

    Safe to share between threads: growth is serialised by a lock and a row is published only once
    it is complete (byte 0, the "row known" marker, is written last).
    """

    def __init__(self, pool: ExprPool, root: int, limits: Limits | None = None) -> None:
        self.pool = pool
        self.limits = limits or pool.limits
        self._lock = pool.lock
        self._state_expr: list[int] = []
        self._expr_state: dict[int, int] = {}
        self.trans = np.full((16, 256), UNKNOWN, dtype=np.int32)
        self.accepting = np.zeros(16, dtype=np.bool_)
        self._new_state(EMPTY)
        self.trans[DEAD, :] = DEAD
        self.initial = self.state_of(root)

    @property
    def num_states(self) -> int:
        return len(self._state_expr)

    def expr_of(self, state: int) -> int:
        """The expression a state stands for."""
        return self._state_expr[state]

    def state_of(self, expr: int) -> int:
        """The state of ``expr`` (created if new; the dead state if ``expr`` matches nothing)."""
        with self._lock:
            return self._state_of(expr)

    def _state_of(self, expr: int) -> int:
        found = self._expr_state.get(expr)
        if found is not None:
            return found
        if self.pool.is_empty(expr):
            self._expr_state[expr] = DEAD
            return DEAD
        return self._new_state(expr)

    def _new_state(self, expr: int) -> int:
        state = len(self._state_expr)
        if state >= self.limits.max_dfa_states:
            raise BudgetExceededError("max_dfa_states", self.limits.max_dfa_states, "lexer DFA too large")
        if state >= self.trans.shape[0]:
            self._grow(state * 2)
        self._state_expr.append(expr)
        self._expr_state[expr] = state
        self.accepting[state] = self.pool.nullable[expr]
        return state

    def _grow(self, capacity: int) -> None:
        self.trans, self.accepting = grown_table(self.trans, self.accepting, capacity)

    def fill_row(self, state: int) -> None:
        """Compute every transition out of ``state``."""
        with self._lock:
            if self.trans[state, 0] != UNKNOWN:
                return
            expr = self._state_expr[state]
            derivative = self.pool.derivative
            parts = self.pool.byte_classes(expr)
            targets = [self._state_of(derivative(expr, (part & -part).bit_length() - 1)) for part in parts]
            publish_row(self.trans, state, parts, targets)

    def run(self, state: int, data: bytes) -> int:
        """The state after all of ``data`` (``DEAD`` as soon as it dies)."""
        for byte in data:
            state = self.step(state, byte)
            if state == DEAD:
                break
        return state

    def is_accepting(self, state: int) -> bool:
        return bool(self.accepting[state])


def grown_table(trans: np.ndarray, flags: np.ndarray, capacity: int) -> tuple[np.ndarray, np.ndarray]:
    """A transition table and per-state flags of ``capacity`` states, old rows copied, new unknown."""
    new_trans = np.empty((capacity, 256), dtype=np.int32)
    new_trans[: trans.shape[0]] = trans
    new_trans[trans.shape[0]:] = UNKNOWN  # each entry written once
    new_flags = np.zeros(capacity, dtype=flags.dtype)
    new_flags[: flags.shape[0]] = flags
    return new_trans, new_flags


def publish_row(trans: np.ndarray, state: int, parts: tuple[int, ...], targets: list[int]) -> None:
    """Write the row of ``state``: byte class ``parts[k]`` goes to ``targets[k]``. Byte 0, the
    "row known" marker that kernels test, is written last."""
    row = np.array(targets, dtype=np.int32)[class_index(parts)]
    trans[state, 1:] = row[1:]
    trans[state, 0] = row[0]


_CLASS_INDEX: dict[tuple[int, ...], np.ndarray] = {}


def class_index(parts: tuple[int, ...]) -> np.ndarray:
    """For a partition of the bytes, the index of each byte's class (cached: partitions recur)."""
    found = _CLASS_INDEX.get(parts)
    if found is None:
        if len(_CLASS_INDEX) > 16_384:
            _CLASS_INDEX.clear()
        found = np.empty(256, dtype=np.intp)
        for index, part in enumerate(parts):
            raw = np.frombuffer(part.to_bytes(32, "little"), dtype=np.uint8)
            found[np.unpackbits(raw, bitorder="little").astype(bool)] = index
        _CLASS_INDEX[parts] = found
    return found
