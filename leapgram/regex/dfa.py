"""A DFA over bytes built lazily from derivatives.

States are expressions; state 0 is the dead state (the empty language). The transition table is a
``(capacity, 256)`` int32 array where ``-1`` marks a transition not computed yet. Compiled kernels
read the table directly and stop at a ``-1``; :meth:`LazyDfa.fill_row` then computes the
missing row in Python (one derivative per byte class, not per byte) and the kernel resumes.
"""

from __future__ import annotations

import functools
import mmap

import numpy as np

from ..errors import BudgetExceededError
from ..limits import Limits
from .expr import EMPTY, ExprPool

DEAD = 0
UNKNOWN = -1
DFA_READY_ROWS = 64  # rows LazyDfa marks unknown at a time as states are numbered (as the lexer's READY_ROWS)
MAX_TEMPLATE_STATES = 64  # see parser.lexer_blocks.row_template: a larger closure is filled row by row, as reached
ROW_TEMPLATE = "lexer row template"  # a row template's key in a pool's or a family's memo: (ROW_TEMPLATE, expr)
TEMPLATE_MEMBER = "lexer row template member"  # (TEMPLATE_MEMBER, expr) in a family's memo: parser.lexer_blocks.template_member
SMALL_PAGES_FROM = 1 << 22  # numpy advises huge pages for arrays of 4 MiB or more: see empty_table


def empty_table(rows: int) -> np.ndarray:
    """An int32 ``(rows, 256)`` transition table, not written. From 4 MiB on, numpy advises the
    kernel to back an array with transparent huge pages; a table's pages not had before (a
    growth's copy) may then wait on the kernel's compaction for each huge page. The table's
    pages are advised back to small ones: a growth copying 5,528 rows into new memory took
    12-17 ms that way and 3-4 ms now, and the same into memory the process had 0.3-0.7 ms
    either way (docs/design/performance-by-source.md, "Round 24")."""
    table = np.empty((rows, 256), dtype=np.int32)
    if table.nbytes >= SMALL_PAGES_FROM:
        _advise_small_pages(table)
    return table


def _advise_small_pages(table: np.ndarray) -> None:
    """``madvise(MADV_NOHUGEPAGE)`` on the whole pages of ``table`` (Linux; elsewhere nothing)."""
    madvise = _madvise()
    if madvise is None:
        return
    page = mmap.PAGESIZE
    start = -(-table.ctypes.data // page) * page
    length = (table.ctypes.data + table.nbytes - start) // page * page
    madvise(start, length, mmap.MADV_NOHUGEPAGE)  # advice only: a failure leaves huge pages


@functools.cache
def _madvise():
    """libc's ``madvise``, or ``None`` where there is no ``MADV_NOHUGEPAGE`` (not Linux)."""
    if not hasattr(mmap, "MADV_NOHUGEPAGE"):
        return None
    import ctypes

    try:
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    return madvise


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
        self.trans = np.empty((16, 256), dtype=np.int32)  # rows written as states are numbered: _ready_rows
        self._ready = 0  # rows of trans written (UNKNOWN past the states)
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
        if state >= self._ready:  # (the rows of the states so far are written: one test for most states)
            if state >= self.trans.shape[0]:
                self._grow(state * 2)
            self._ready_rows(state + 1)
        self._state_expr.append(expr)
        self._expr_state[expr] = state
        self.accepting[state] = self.pool.nullable[expr]
        return state

    def _ready_rows(self, rows: int) -> None:
        """Rows ``< rows`` of ``trans`` written: those past the states so far marked unknown, with
        up to :data:`DFA_READY_ROWS` more at once. No row of a state is read before the state is
        numbered, so growing copies the states' rows only, and rows no state reaches are never
        written (nor, where their pages were never touched, in memory): the lexer's way
        (``Lexer._ready_rows``)."""
        end = min(self.trans.shape[0], max(rows, self._ready + DFA_READY_ROWS))
        self.trans[self._ready:end] = UNKNOWN
        self._ready = end

    @property
    def unwritten_bytes(self) -> int:
        """Bytes of ``trans`` allocated but not written yet (see :meth:`_ready_rows`), which
        :func:`leapgram.compiler.memory_of` leaves out."""
        return (self.trans.shape[0] - self._ready) * self.trans.shape[1] * self.trans.itemsize

    def _grow(self, capacity: int) -> None:
        """Room for ``capacity`` states: the states' rows and flags copied (see :meth:`_ready_rows`)."""
        used = len(self._state_expr)
        trans = empty_table(capacity)
        trans[:used] = self.trans[:used]
        accepting = np.zeros(capacity, dtype=self.accepting.dtype)
        accepting[:used] = self.accepting[:used]
        self.trans, self.accepting = trans, accepting
        self._ready = used

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


def publish_row(trans: np.ndarray, state: int, parts: tuple[int, ...], targets: list[int]) -> None:
    """Write the row of ``state``: byte class ``parts[k]`` goes to ``targets[k]``. Byte 0, the
    "row known" marker that kernels test, is written last."""
    write_row(trans, state, np.array(targets, dtype=np.int32), class_index(parts))


def write_row(trans: np.ndarray, state: int, targets: np.ndarray, index: np.ndarray) -> None:
    """Write the row of ``state``: byte ``b`` goes to ``targets[index[b]]`` (int32 ``targets``;
    ``index`` best as ``intp``, which numpy takes without a cast). The bytes are gathered
    straight into the row, each entry written once with its final value, and byte 0, the "row
    known" marker that kernels test, last (walks read the table unlocked)."""
    targets.take(index[1:], out=trans[state, 1:], mode="clip")  # (clip: no buffer; every index is in range)
    trans[state, 0] = targets.item(index.item(0))


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


def make_row_template(pool: ExprPool, expr: int, size: int,
                      max_states: int = MAX_TEMPLATE_STATES) -> tuple[tuple[int, ...], np.ndarray, bool] | None:
    """The row template of ``expr`` (``(exprs, table, root_reached)``, as
    :func:`leapgram.parser.lexer_blocks.row_template` describes it): its derivative states by
    one byte of each class, breadth first. ``None`` when ``expr`` or a state has an intersection
    or complement, a state is not below ``size`` (a family's members) or there are more than
    ``max_states``. Kept under ``(ROW_TEMPLATE, expr)`` in a memo (the JSON Schema front end
    makes its formats' templates with its base pool)."""
    if pool.has_bool[expr]:
        return None
    index = {expr: 0}
    exprs = [expr]
    rows = []
    root_reached = False
    for e in exprs:  # grows while walked
        parts = pool.byte_classes(e)
        targets = []
        for part in parts:
            d = pool.derivative(e, (part & -part).bit_length() - 1)
            if d == EMPTY:
                targets.append(0)
                continue
            if d >= size or pool.has_bool[d]:
                return None
            if d not in index:
                if len(exprs) == max_states:
                    return None
                index[d] = len(exprs)
                exprs.append(d)
            root_reached = root_reached or d == expr
            targets.append(1 + index[d])
        rows.append(np.array(targets, dtype=np.intp)[class_index(parts)])
    table = np.stack(rows)  # intp: an index numpy gathers by without a cast (Lexer._fill_from_template)
    table.flags.writeable = False
    return tuple(exprs), table, root_reached
