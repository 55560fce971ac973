"""The lexer: one lazily built DFA over all lexemes of a grammar.

A lexer state is the set of pairs ``(lexeme, remaining expression)`` still alive, as in the
llguidance design: the transition by a byte takes the derivative of every expression and drops the
dead ones. States where a lexeme has not started yet (*fresh* states, one per set of lexemes the
parser allows) are kept apart from states reached by bytes, so "no lexeme in progress" is part of
the state.

The table layout is the one of :class:`leapgram.regex.dfa.LazyDfa` (int32 ``(capacity, 256)``,
``-1`` unknown, ``0`` dead), so the same kernels read it; ``accepting[s]`` is 1 when some lexeme
can end in state ``s``. For the parser kernels, :attr:`Lexer.kernel_arrays` lists per state the
lexemes that end there (``acc_pool[acc_start[s]:acc_start[s] + acc_len[s]]``), an id per distinct
list (``acc_id``) and whether they are all ignored lexemes (``acc_ignore_only``); then per lexeme
the fresh state of that lexeme alone where the lexer has it, and last that of no lexeme
(``single_fresh``, -1 where unknown), so that a chart arena's kernel needs no Python for them
(docs/design/earley-walk.md, "Round 25: known fresh states").

This module holds the lexer's state and its core: numbering states, fresh states, the table's
growth and the rows of composed and single-lexeme states. The row builders of the special shapes
are mixed in from their own modules: :mod:`.lexer_literals` (punctuation and key literals laid out
in batches), :mod:`.lexer_counted` (counted and pattern ∩ length rows), :mod:`.lexer_shifted`
(rows shifted from another count), :mod:`.lexer_keys` (an object's other keys); :mod:`.lexer_blocks` holds what the lexers of a pool family share (blocks,
row templates, punctuation rows).
"""

from __future__ import annotations

from bisect import insort
from operator import attrgetter

import numpy as np

from .._kernels.views import lexer_views
from ..errors import BudgetExceededError
from ..grammar.ir import GrammarIR
from ..limits import Limits
from ..regex.dfa import DEAD, UNKNOWN, LazyRows, empty_table, publish_row, write_row
from ..regex.emptiness import WITNESS_BYTES
from ..regex.expr import (
    ALL_BYTES,
    EMPTY,
    K_AND,
    K_BYTES,
    K_CONCAT,
    K_OR,
    bits_of,
    refine_partition,
)
from . import lexer_blocks
from .counted import CountedShape, ProductGraph
from .lexer_blocks import BLOCKS_LOCK, Items, split_off, write_rows
from .lexer_counted import CountedRows
from .lexer_keys import OtherKeyRows
from .lexer_literals import LiteralRows
from .lexer_shifted import ShiftedRows

_EXPR_OF = attrgetter("expr")  # a lexeme's expression

MAX_SHARED_ROWS = 8192  # rows kept per pool family (Lexer._share_row): 0.6 KB each
SHARED_ROWS = ("lexer rows",)  # their key in the family's memo
READY_ROWS = 64  # rows marked unknown at a time as states are numbered: see Lexer._ready_rows


def new_items(items: Items) -> Items:
    """New tuples equal to ``items``, for a memo as old as the process (the family's shared
    rows): the collector stops tracking a tuple once its items are untracked, but never one
    that holds a tuple it still tracks, and a process that froze its objects after ``warm_up``
    (``gc.freeze()``, as the benchmarks' workers do) keeps the items made before the freeze
    tracked for good: a memo entry holding one of them was scanned by every full collection
    (3,700 of the 5,000 objects left between schemas after 1,450 schemas)."""
    return tuple([(lex, expr) for lex, expr in items])


class Lexer(LiteralRows, CountedRows, ShiftedRows, OtherKeyRows, LazyRows):
    """Lexer DFA for the lexemes of ``ir``; grows on demand within ``Limits.max_dfa_states``."""

    def __init__(self, ir: GrammarIR, limits: Limits) -> None:
        self.ir = ir
        self.pool = ir.pool
        self.limits = limits
        self._lock = ir.pool.lock
        self._items: list[Items] = []
        self._fresh = bytearray()  # per state, 1 where no byte of the lexeme is read: out of the collector's scans
        self._accepted: list[tuple[int, ...]] = []
        self._ids: dict[Items | tuple[bool, Items], int] = {}  # by lexer_blocks.state_key
        self._start_of: dict[bytes, int] = {}  # fresh_state: a sorted set's int32 bytes -> its state
        self._capacity = min(16, limits.max_dfa_states)  # states _new_state may add before it grows trans
        self._ready = 16  # rows of trans written (UNKNOWN past the states): see _ready_rows
        self._nullable = ir.pool.nullable  # appended to in place, never replaced
        self.acc_pool = np.zeros(64, dtype=np.int32)
        self._acc_used = 0
        self._acc_ids: dict[tuple[int, ...], int] = {(): 0}
        self._acc_slots: dict[tuple[int, ...], tuple[tuple[int, ...], int, int, int]] = {}  # see _mark_ended
        self._ignore = frozenset(ir.ignore)
        self._lexeme_exprs = exprs = list(map(_EXPR_OF, ir.lexemes))
        self.single_fresh = np.full(len(exprs) + 1, -1, dtype=np.int32)  # see _note_singles
        if not self._ignore:
            self.single_fresh[-1] = DEAD  # the fresh state of no lexeme
        self._widened: dict[tuple[int, int], int] = {}
        self._byte_of: dict[int, int] = {}  # _literal_tails: a class of bytes' byte (-1: not one byte)
        self._literals_laid_out = False  # lay_out_literals
        self._counted: dict[int, tuple[int, int, int, int]] = {}  # _fill_counted: expr -> its S(r, a, b), ints only
        self._counted_shapes: list[CountedShape] = []  # the shapes _counted's entries name by index
        self._shapes: dict[tuple[int, int], int] = {}  # _counted_shape_id: (X, T) -> its shape's index, -1: none
        self._shifted_refs: dict[tuple, tuple[int, int]] = {}  # _fill_shifted: shape -> (state, count) it shifts
        self._shifted_of: dict[int, tuple[tuple, int]] = {}  # _fill_shifted: target expr -> (shape, count)
        self._repeats_in: dict[int, frozenset] = {}  # _repeats: expr -> its repeats
        self._splits: dict[int, int | Items] = {}  # lexeme -> its start item's expression, or items (_start_item)
        kinds = ir.pool.kind
        self._intersections = frozenset([lex for lex, expr in enumerate(exprs) if kinds[expr] == K_AND])
        self._shadow_steps: dict[int, int] = {}  # _shadow_step: names << 8 | byte -> the names after it
        self._shadow_tails: dict[int, dict[int, list[int]]] = {}  # _tails_by_byte, per names
        self._shapes_of: dict[int, int] = {}  # _verdict: an item's P' -> 0 (ε), 1 (infinite), 2 (other)
        self._products: dict[int, tuple[ProductGraph, int, int, int, int]] = {}  # _fill_product: expr -> its state
        self._plain_patterns: dict[int, int] = {}  # _plain_and: a pattern state -> _plain_pattern
        family = ir.pool.family
        self._base_size = 0 if family is None else family.base_size  # _shared_rows
        self._shared: dict | None = None  # the family's memo of rows, once read (_shared_rows)
        self._row_budget = ["max_row_emptiness_steps", limits.max_row_emptiness_steps, 0]  # fill_row's, reused
        self._new_state(False, ())  # DEAD (no table read)
        if not self._start_with_block(self._punctuation()):
            self._set_up_tables()
        self._pack_views()

    def _set_up_tables(self) -> None:
        """``trans`` and the ``acc_*`` arrays of a lexer with no family block (which
        :meth:`_start_with_block` copies them from): room for 16 states, ``DEAD``'s row written."""
        self.trans = np.full((16, 256), UNKNOWN, dtype=np.int32)
        self.trans[DEAD, :] = DEAD
        self.accepting = np.zeros(16, dtype=np.int8)
        self.acc_start = np.zeros(16, dtype=np.int32)
        self.acc_len = np.zeros(16, dtype=np.int32)
        self.acc_id = np.zeros(16, dtype=np.int32)
        self.acc_ignore_only = np.zeros(16, dtype=np.int8)

    def _pack_views(self) -> None:
        """Make :attr:`views` again (after an array was replaced): the kernels' one argument for
        ``trans``, ``accepting`` and :attr:`kernel_arrays`. Walks on other threads read it
        unlocked; an old views array holds the arrays it names until their calls return
        (:mod:`leapgram._kernels.views`)."""
        self.views = lexer_views(self.trans, self.accepting, self.kernel_arrays)

    @property
    def kernel_arrays(self) -> tuple[np.ndarray, ...]:
        """``(acc_start, acc_len, acc_pool, acc_id, acc_ignore_only, single_fresh)`` as the kernels
        take them (read them again after the lexer grows)."""
        return self.acc_start, self.acc_len, self.acc_pool, self.acc_id, self.acc_ignore_only, self.single_fresh

    @property
    def num_states(self) -> int:
        return len(self._items)

    def start_state(self, lexemes: frozenset[int]) -> int:
        """The fresh state for the lexemes the parser allows (ignored lexemes are added);
        ``DEAD`` when the set is empty."""
        return self.fresh_state(np.array(sorted(lexemes), dtype=np.int32))

    def fresh_state(self, members: np.ndarray) -> int:
        """:meth:`start_state` of the lexemes ``members``, sorted and distinct int32 (a chart
        arena's set of lexemes, as the kernel interned it), keyed by their bytes: no frozenset,
        and no sort when the grammar ignores nothing (docs/design/lexer-templates.md, "Round 24:
        fresh states")."""
        key = members.tobytes()
        found = self._start_of.get(key)
        if found is None:
            with self._lock:
                allowed = members.tolist()
                if self._ignore:
                    allowed = sorted(self._ignore.union(allowed))
                if self._intersections.isdisjoint(allowed):  # most sets
                    items = tuple(zip(allowed, map(self._lexeme_exprs.__getitem__, allowed)))
                else:
                    items = self._start_items(allowed)
                found = self._state_of(True, items) if items else DEAD
                self._start_of[key] = found
                if members.shape[0] == 1:
                    self.single_fresh[members.item(0)] = found  # written once, its final value (walks run unlocked)
        return found

    def _note_singles(self, states) -> None:
        """Write ``single_fresh`` for the states of ``states`` (pairs ``((fresh, items), state)``, just
        numbered) that are :meth:`fresh_state` of one lexeme alone: fresh, one item, the
        lexeme's own expression (no shadow split), in a grammar that ignores no lexeme."""
        if self._ignore:
            return
        exprs, intersections, single = self._lexeme_exprs, self._intersections, self.single_fresh
        for (fresh, items), state in states:
            if fresh and len(items) == 1:
                lex, expr = items[0]
                if lex >= 0 and expr == exprs[lex] and lex not in intersections:
                    single[lex] = state  # written once, its final value (walks run unlocked)

    def _start_items(self, allowed: list[int]) -> Items:
        """The items of the fresh state of the lexemes ``allowed`` (sorted): ``(lexeme, its
        expression)``, but for a lexeme ``P ∩ ¬Q`` with a finite ``Q`` (:meth:`_shadow_split`: a
        key that is none of an object's declared names), which gets ``(lexeme, P)`` and right
        after it the shadow ``(~lexeme, Q)``."""
        exprs = self._lexeme_exprs
        items = []
        splits = self._splits
        for lex in allowed:
            found = splits.get(lex)
            if found is None:
                found = splits[lex] = self._start_item(lex, exprs[lex])
            if found.__class__ is tuple:
                items.extend(found)
            else:
                items.append((lex, found))
        return tuple(items)

    def _start_item(self, lex: int, expr: int) -> int | Items:
        """``expr``, or the items of lexeme ``lex`` with a shadow (see :meth:`_shadow_split`)."""
        split = self._shadow_split(expr)
        if split is None:
            return expr
        items = self._veto([(lex, split[0]), (~lex, split[1])])
        return tuple(items) if len(items) == 2 else expr  # (no shadow needed: the plain expression)

    def plain_items(self, state: int) -> Items:
        """The items of ``state`` with each shadow folded into its lexeme's item as the
        expression ``P' ∩ ¬Q'`` (made in the pool: for tests and tools, not for the hot path)."""
        out: list[tuple[int, int]] = []
        pool = self.pool
        for lex, expr in self._items[state]:
            if lex < 0:
                out[-1] = (~lex, pool.intersect([out[-1][1], pool.complement(expr)]))
            else:
                out.append((lex, expr))
        return tuple(out)

    def slice_exprs(self, state: int) -> tuple[int, ...]:
        """The expressions of ``state``'s lexemes for the slicer: a lexeme with a shadow (see
        :meth:`_shadow_split`) as ``~P'``, its item's expression complemented (``P' ∩ ¬Q'`` with
        a finite ``Q'``, which :func:`leapgram.mask.slicer.contained_slices` decides from ``P'``),
        shadows left out."""
        items = self._items[state]
        if len(items) == 1 or min(items)[0] >= 0:
            return tuple([expr for _, expr in items])
        out: list[int] = []
        for lex, expr in items:
            if lex < 0:
                out[-1] = ~out[-1]
            else:
                out.append(expr)
        return tuple(out)

    def is_fresh(self, state: int) -> bool:
        """Whether no byte of the current lexeme has been read in ``state``."""
        return bool(self._fresh[state])

    def accepted(self, state: int) -> tuple[int, ...]:
        """Lexemes that can end in ``state``: the non-ignored ones if any, else the ignored."""
        return self._accepted[state]

    def items(self, state: int) -> Items:
        return self._items[state]

    def widened(self, state: int, span: int) -> int:
        """A state that allows exactly the byte strings of at most ``span`` bytes that ``state``
        allows, with the same lexemes ending at the same places (each expression replaced by
        :meth:`ExprPool.widened`): masks are walked from it, so the positions inside a long
        counted repeat share one state, its rows and its cached mask."""
        if self.pool.largest_count <= span + 1:  # no count in the grammar needs widening
            return state
        key = (state, span)
        found = self._widened.get(key)
        if found is None:
            with self._lock:
                items = self._items[state]
                shadowed = {~lex for lex, _ in items if lex < 0}  # these items and their shadows kept as they are
                wide = tuple((lex, expr if lex < 0 or lex in shadowed else self.pool.widened(expr, span))
                             for lex, expr in items)
                found = state if wide == items else self._state_of(bool(self._fresh[state]), wide)
                self._widened[key] = found
        return found

    def _state_of(self, fresh: bool, items: Items) -> int:
        found = self._ids.get((True, items) if fresh else items)
        if found is None:
            found = self._new_state(fresh, items)
        return found

    def _new_state(self, fresh: bool, items: Items) -> int:
        state = len(self._items)
        if state >= self._capacity:
            if state >= self.limits.max_dfa_states:
                raise BudgetExceededError("max_dfa_states", self.limits.max_dfa_states, "lexer DFA too large")
            self._grow(min(state * 2, self.limits.max_dfa_states))
        if state >= self._ready:
            self._ready_rows(state + 1)
        nullable = self._nullable
        if len(items) == 1:  # most states
            ended = [items[0][0]] if nullable[items[0][1]] else ()
        else:
            ended = [lex for lex, expr in items if nullable[expr]]
            if ended and min(ended) < 0:  # a shadow with ε vetoes its lexeme's end (see _shadow_split)
                ended = [lex for lex in ended if lex >= 0 and ~lex not in ended]
        self._items.append(items)
        self._fresh.append(fresh)
        self._ids[(True, items) if fresh else items] = state
        if not ended:  # most states: the acc_* entries keep their zeros (no lexeme, list id 0 is ())
            self._accepted.append(())
            return state
        self._accepted.append(self._mark_ended(state, ended))
        return state

    def _mark_ended(self, state: int, ended: list[int]) -> tuple[int, ...]:
        """Write the ``acc_*`` entries of ``state``, where the lexemes ``ended`` can end; returns
        the lexemes its boundary reports. States with the same list share its slot of
        ``acc_pool`` (the ends of a grammar's keys: one list per key lexeme, many states)."""
        slot = self._acc_slots.get(tuple(ended))
        if slot is None:
            slot = self._acc_slots[tuple(ended)] = self._acc_slot(ended)
        accepted, start, list_id, ignore_only = slot
        self.acc_start[state] = start
        self.acc_len[state] = len(accepted)
        self.acc_id[state] = list_id
        self.acc_ignore_only[state] = ignore_only
        self.accepting[state] = 1
        return accepted

    def _acc_slot(self, ended: list[int]) -> tuple[tuple[int, ...], int, int, int]:
        """``(lexemes reported, start in acc_pool, list id, ignored only)`` of the list ``ended``,
        its lexemes written to ``acc_pool``."""
        ignore = self._ignore
        accepted = tuple(lex for lex in ended if lex not in ignore) or tuple(ended)
        if self._acc_used + len(accepted) > self.acc_pool.shape[0]:
            self.acc_pool = np.concatenate([self.acc_pool, np.zeros(self.acc_pool.shape[0] + len(accepted), np.int32)])
            self._pack_views()
        start = self._acc_used
        self.acc_pool[start:start + len(accepted)] = accepted
        self._acc_used += len(accepted)
        list_id = self._acc_ids.setdefault(accepted, len(self._acc_ids))
        return accepted, start, list_id, 1 if all(lex in ignore for lex in accepted) else 0

    def _ready_rows(self, rows: int) -> None:
        """Rows ``< rows`` of ``trans`` written: those past the states so far marked unknown, with
        up to :data:`READY_ROWS` more at once (one row's write costs what 6 rows' do in one).

        ``trans`` holds ``_capacity`` rows but only its first ``_ready`` are written; no row of
        a state is read before the state is numbered, and a state's row is marked unknown then
        (here), not when the table grows. So growing copies the states' rows only, and a
        grammar's start block gets :data:`BLOCK_SPARE` more rows allocated, which cost no time
        until states reach them (nor memory, where their pages were never written). Over 518
        tool-call cases, the tables grew 681 times inside masks before and none now
        (docs/design/performance-by-source.md, "Round 21")."""
        end = min(self._capacity, max(rows, self._ready + READY_ROWS))
        self.trans[self._ready:end] = UNKNOWN
        self._ready = end

    @property
    def unwritten_bytes(self) -> int:
        """Bytes of ``trans`` allocated but not written yet (the rows past ``_ready``, see
        :meth:`_ready_rows`): pages no row reached take no memory, so
        :func:`leapgram.compiler.memory_of` leaves them out."""
        return (self.trans.shape[0] - self._ready) * self.trans.shape[1] * self.trans.itemsize

    def _grow(self, capacity: int) -> None:
        """Room for ``capacity`` states: the states' rows copied (see :meth:`_ready_rows`)."""
        used = len(self._items)
        trans = empty_table(capacity)
        trans[:used] = self.trans[:used]
        self.trans = trans
        self._ready = used
        self._capacity = capacity
        for name in ("accepting", "acc_start", "acc_len", "acc_id", "acc_ignore_only"):
            array = getattr(self, name)
            grown = np.zeros(capacity, dtype=array.dtype)
            grown[:array.shape[0]] = array
            setattr(self, name, grown)
        self._pack_views()

    def fill_row(self, state: int) -> None:
        """Compute every transition out of ``state`` (one derivative per byte class and lexeme).
        The emptiness searches of one row share ``Limits.max_row_emptiness_steps``."""
        with self._lock:
            if self.trans.item(state, 0) != UNKNOWN:
                return
            items = self._items[state]
            if len(items) == 1:
                lex, expr = items[0]
                if not self.pool.has_bool[expr] or expr in self._products:
                    # no search to budget (most rows; a counted lexeme under a pattern reads its counts)
                    self._fill_single(state, lex, expr)
                    return
            shared = self._shared_rows(items)
            if shared is not None and self._copy_shared_row(state, items, shared):
                return
            pool = self.pool
            outer = pool.enter_budget(self._row_budget)
            try:
                self._fill_row(state)
            finally:
                pool.leave_budget(outer)
            if shared is not None:
                self._share_row(state, items, shared)

    def _shared_rows(self, items: Items) -> dict | None:
        """The pool family's memo of rows (see :meth:`_share_row`) when every item of a state
        is an expression of the family's base pool (``PoolFamily.base_size``: the family's and
        JSON's punctuation, the same ids in every copy), else ``None``."""
        size = self._base_size  # (0 without a family)
        for lex, expr in items:
            if expr >= size or lex < 0:
                return None
        rows = self._shared
        if rows is None:
            memo = self.pool.family.memo
            rows = memo.get(SHARED_ROWS)
            if rows is None:
                with BLOCKS_LOCK:
                    rows = memo.setdefault(SHARED_ROWS, {})
            self._shared = rows
        return rows

    def _copy_shared_row(self, state: int, items: Items, shared: dict) -> bool:
        """The row of ``state`` made from the family's memo (see :meth:`_share_row`): its
        targets' items numbered in this lexer; ``False`` when it is not there."""
        found = shared.get((bool(self._fresh[state]), items))
        if found is None:
            return False
        targets, index = found
        ids = np.array([DEAD if target is None else self._state_of(False, target) for target in targets],
                       dtype=np.int32)
        write_row(self.trans, state, ids, index)  # (self.trans read after the targets: a new state may grow it)
        return True

    def _share_row(self, state: int, items: Items, shared: dict) -> None:
        """Keep the row of ``state`` (whose items are base pool expressions, see
        :meth:`_shared_rows`) in the family's memo as its targets' items, when those are base
        pool expressions too: a row is a function of the items, so every lexer of the family
        can number the targets and take it without a derivative or an emptiness search. These
        are the rows templates do not cover: states of several lexemes (a fresh state,
        punctuation beside whitespace or another token) and lexemes with an intersection or
        complement (GBNF's greedy lexemes), made once per grammar otherwise.
        At most ``MAX_SHARED_ROWS`` per family. The memo keeps new tuples equal to the items
        (:func:`new_items`), not the lexer's own."""
        if len(shared) >= MAX_SHARED_ROWS:
            return
        size = self.pool.family.base_size
        row = self.trans[state]
        distinct = sorted(set(row.tolist()))  # a few states: np.unique took 40 µs here, in a cold process
        targets = []
        for target in distinct:
            if target == DEAD:
                targets.append(None)
                continue
            if target < 0 or self._fresh[target]:
                return
            target_items = self._items[target]
            if any(expr >= size for _, expr in target_items):
                return
            targets.append(new_items(target_items))
        position = np.empty(distinct[-1] + 1, dtype=np.int16)  # state -> its index in targets
        position[distinct] = np.arange(len(distinct), dtype=np.int16)
        index = position[row]
        index.flags.writeable = False
        shared.setdefault((bool(self._fresh[state]), new_items(items)), (tuple(targets), index))

    def _fill_row(self, state: int) -> None:
        items = self._items[state]
        if len(items) == 1:
            self._fill_single(state, *items[0])
            return
        starts = [self.pool.first_bytes(expr) for _, expr in items]
        if self._fill_composed(state, items, starts) or self._fill_minus_beside(state, items, starts):
            return
        parts, starts, by_byte = self._byte_classes(items)
        targets = [self._target(items, starts, part, by_byte) for part in parts]  # may grow self.trans
        publish_row(self.trans, state, parts, targets)

    def _fill_composed(self, state: int, items: Items, starts: list[int]) -> bool:
        """The row of a state where at most one item can start with more than one byte (a key
        of an object next to the pattern of its other keys; punctuation next to whitespace),
        or several next to each other followed by the last one's shadow; ``False`` for other
        states.

        On a byte that none of the single-byte items starts with, only the wide item ``w`` can
        go on, so the target is the one of the state ``{w}`` alone: that row is computed once
        and shared by every state ``w`` appears in, and only the single-byte items' bytes are
        computed here (each item once, for its byte). (Composing the rows of several wide
        items was measured slower: their single rows are rarely shared, and the bytes they share
        cost a derivative each instead of one per byte class.)

        A wide item with a shadow (see :meth:`_shadow_split`) goes with it: the state of the
        two alone, ``{P', Q'}``, has its row computed once (the shadow's bytes stepped there,
        as single-byte items are here) and shared by every set of names beside them. Several
        wide items with a shadow (a ``patternProperties`` key beside the other keys, at each
        node of the names' trie) take the row of the wide items alone, shared by the nodes,
        and the shadow is stepped with the single-byte items."""
        if len(items) == 2 and items[1][0] == ~items[0][0] and starts[0] & (starts[0] - 1):
            self._fill_shadowed(state, items, starts)  # a wide item and its shadow alone (most key rows)
            return True
        wide = end = shadow = -1  # the wide items are items[wide:end], then maybe the last one's shadow
        by_byte: dict[int, list[int]] = {}  # the single-byte items by their byte, in item order
        for index, first in enumerate(starts):
            lex = items[index][0]
            if lex < 0 and index == end and len(items) > 2:  # the (last) wide item's shadow
                shadow = index
            elif first & (first - 1) == 0:
                if first:
                    by_byte.setdefault(first.bit_length() - 1, []).append(index)
            elif lex < 0:  # a shadow: a literal step by each of its bytes
                for byte in bits_of(first):
                    by_byte.setdefault(byte, []).append(index)
            elif wide < 0:
                wide, end = index, index + 1
            elif index == end and shadow < 0:
                end += 1
            else:
                return False
        if end - wide > 1 and shadow < 0:
            return False  # (several wide items: byte classes, or _fill_minus_beside)
        row, wide_first = self._wide_row(items, wide, end, shadow, starts, by_byte)
        for byte, members in by_byte.items():
            known = None
            if wide_first >> byte & 1:  # the wide items' derivatives are in their own row: no new one
                insort(members, wide)
                alone_target = int(row[byte])
                known = (wide, self._items[alone_target] if alone_target != DEAD else ())
            row[byte] = self._target_of(items, members, byte, known)
        trans = self.trans  # read after the targets: a new state may grow (replace) the table
        trans[state, 1:] = row[1:]  # each entry written once, with its final value (walks run unlocked)
        trans[state, 0] = row[0]
        return True

    def _wide_row(self, items: Items, wide: int, end: int, shadow: int, starts: list[int],
                  by_byte: dict[int, list[int]]) -> tuple[np.ndarray, int]:
        """For :meth:`_fill_composed`: a copy of the row of the wide items ``items[wide:end]``
        alone (with the shadow at ``shadow`` when there is one wide item; DEAD without them)
        and their first bytes. With several, the shadow is added to ``by_byte`` on the bytes
        they start with, to be stepped there with the single-byte items (:meth:`_target_of`)."""
        if wide < 0:
            return np.zeros(256, dtype=np.int32), 0  # DEAD
        first = 0
        for index in range(wide, end):
            first |= starts[index]
        if end - wide == 1:
            return self._row_alone(items[wide:end if shadow < 0 else shadow + 1]), first
        for byte in bits_of(first & starts[shadow]):
            insort(by_byte.setdefault(byte, []), shadow)
        return self._row_alone(items[wide:end]), first

    def _row_alone(self, items: Items) -> np.ndarray:
        """A copy of the row of the state of ``items`` (filled if new)."""
        alone = self._state_of(False, items)
        if self.trans[alone, 0] == UNKNOWN:
            if len(items) == 1:
                self._fill_single(alone, *items[0])
            else:
                self._fill_row(alone)
        return self.trans[alone].copy()

    def _fill_single(self, state: int, lex: int, expr: int) -> None:
        """The row of a state with one lexeme in progress; when one byte at most can continue it
        (inside a key or an enum member, or at the end of a lexeme) the row is written without
        byte classes."""
        counted = self._counted.get(expr)
        if counted is not None:  # a state of a counted lexeme that _fill_counted made
            self._fill_counted(state, lex, expr, counted)
            return
        product = self._products.get(expr)
        if product is not None and self._fill_product(state, lex, product):  # a state _fill_product made
            return  # (else the pattern's template grew too large since: derivatives)
        pool = self.pool
        first = pool.first_bytes(expr)
        if first == 0:  # the lexeme is complete (most often ε): a dead row, no template needed
            trans = self.trans
            trans[state, 1:] = DEAD
            trans[state, 0] = DEAD
            return
        if self._fresh[state]:  # the row of its twin that bytes reach (a block state, most often)
            twin = self._ids.get(self._items[state])
            if twin is not None and self.trans[twin, 0] != UNKNOWN:
                row = self.trans[twin].copy()
                trans = self.trans
                trans[state, 1:] = row[1:]  # each entry written once, with its final value (walks run unlocked)
                trans[state, 0] = row[0]
                return
        if self._fill_from_template(state, lex, expr):
            return
        if first & (first - 1) == 0:  # along a literal (a key, an enum member), while rows are new
            more = self._fill_literal(state, lex, expr, first)
            if more is None:
                return
            state, expr = more
            if pool.family is not None and self._fill_from_template(state, lex, expr):  # a format's value, after "
                return
        if self._fill_counted(state, lex, expr):
            return
        if pool.has_bool[expr] and self._fill_product(state, lex, self._product_entry(expr)):
            return
        if pool.kind[expr] == K_AND and self._fill_minus_some(state, lex, expr):
            return
        if pool.kind[expr] == K_OR and self._lay_out_trie(state, lex, expr):  # an enum's trie, at once
            return
        shifted = None if pool.has_bool[expr] else self._fill_shifted(state, lex, expr)
        if shifted is True:
            return
        parts = pool.byte_classes(expr)
        derivative = pool.derivative
        has_bool = pool.has_bool
        ids = self._ids
        targets = []
        for part in parts:  # a target per byte class
            d = derivative(expr, (part & -part).bit_length() - 1)
            if d == EMPTY or (has_bool[d] and self._is_empty(d)):
                targets.append(DEAD)
                continue
            items = ((lex, d),)
            found = ids.get(items)
            targets.append(self._new_state(False, items) if found is None else found)
        publish_row(self.trans, state, parts, targets)
        if shifted is not None:
            self._note_shifted(state, shifted, expr)

    def _add_numbered_states(self, new_items: list[Items], lex: int, capacity: int) -> None:
        """:meth:`_add_single_states`, the table grown to ``capacity`` first when they do not fit
        in it; if growing fails (out of memory), no state is made and their ids are taken back
        out of ``_ids``."""
        if len(self._items) + len(new_items) > self._capacity:
            try:
                self._grow(capacity)
            except BaseException:
                for items in new_items:
                    self._ids.pop(items, None)
                raise
        self._add_single_states(new_items, lex)

    def _add_single_states(self, new_items: list[Items], lex: int) -> None:
        """Number the states ``new_items`` (each one item of lexeme ``lex``, not fresh, their
        ids already in ``_ids`` from ``len(_items)`` on, within ``_capacity``) in one go: what
        :meth:`_new_state` does for each."""
        base = len(self._items)
        count = len(new_items)
        if base + count > self._ready:
            self._ready_rows(base + count)
        self._items.extend(new_items)
        self._fresh.extend(bytes(count))
        self._accepted.extend([()] * count)
        nullable = self._nullable
        for state, items in enumerate(new_items, base):
            if nullable[items[0][1]]:  # the end of a literal, most often
                self._accepted[state] = self._mark_ended(state, [lex])

    def _fill_from_template(self, state: int, lex: int, expr: int) -> bool:
        """The rows of ``state`` and of every state its lexeme reaches from ``expr`` (the JSON
        whitespace's counted run, a string's escapes and UTF-8 sequences, a number), written
        together from the row template their pool family keeps (:func:`row_template`): those
        rows are the same in every schema, so their derivatives and byte classes are worked out
        once per process, and each grammar only numbers its states and copies the rows (one
        numpy write instead of a row at a time as the walks reach them). A state of a format's
        value reached otherwise than from its first state (past an ``anyOf`` of formats) takes
        the rows of that format's whole template (:func:`template_member`). ``False`` when
        ``expr`` has no template or the states would not fit in ``Limits.max_dfa_states``."""
        pool = self.pool
        template = lexer_blocks.row_template(pool, expr)
        start = 0
        if template is None:
            member = lexer_blocks.template_member(pool, expr)
            if member is None:
                return False
            template, start, root_reached = member
        else:
            root_reached = template[2]
        exprs, table, _ = template
        if len(self._items) + len(exprs) > self.limits.max_dfa_states:
            return False
        ids = self._ids
        fresh = bool(self._fresh[state])
        base = next_state = len(self._items)
        local = [DEAD]  # template state j is local[j + 1]
        new_items: list[Items] = []  # states numbered from base, in order
        for index, e in enumerate(exprs):
            if index == start and not (fresh and root_reached):
                local.append(state)  # itself (or, fresh, a twin no byte reaches: not made)
                continue
            items = ((lex, e),)
            found = ids.get(items)
            if found is None:
                found = ids[items] = next_state
                next_state += 1
                new_items.append(items)
            local.append(found)
        if new_items:  # (within max_dfa_states: checked above)
            self._add_numbered_states(new_items, lex, min(max(2 * base, next_state), self.limits.max_dfa_states))
        rows = np.array(local, dtype=np.int32)[table]
        trans = self.trans  # read after the new states: one may grow (replace) the table
        order = {int(state): start}
        for index, target in enumerate(local[1:]):
            if target not in order and (target >= base or trans[target, 0] == UNKNOWN):
                order[target] = index
        write_rows(trans, list(order), list(order.values()), rows)
        return True

    def _is_empty(self, expr: int) -> bool:
        """``pool.is_empty(expr)``, read from the counts of its :class:`ProductGraph` when
        ``expr`` is a state of a counted lexeme under a pattern (:meth:`_product_entry`; the
        string's first state, after its opening quote), instead of a search over its
        derivatives; the answer is kept as the search's would be."""
        pool = self.pool
        known = pool._empty.get(expr)
        if known is not None:
            return known
        found = self._products.get(expr)
        if found is None:  # a string's first state: the search's first step finds a string at once
            if pool._is_known_nonempty(expr) or pool._witness(expr, WITNESS_BYTES) is not None:  # most often,
                pool._empty[expr] = False  # without the graph (made when its rows are)
                return False
            found = self._product_entry(expr)
        if found is None:
            return pool.is_empty(expr)
        graph, node, low, high, _ = found
        verdict = graph.alive(pool, node, low, high)
        if verdict is None:  # the graph too large to say
            return pool.is_empty(expr)
        empty = pool._empty[expr] = not verdict
        return empty

    def _all_empty(self, exprs: list[int]) -> bool:
        """``pool.are_all_empty(exprs)``, the states of counted lexemes under a pattern among
        them answered by :meth:`_is_empty`."""
        rest = []
        for expr in exprs:
            if self.pool._empty.get(expr) is False:
                return False
            if self._products.get(expr) is None and self._product_entry(expr) is None:
                rest.append(expr)
            elif not self._is_empty(expr):
                return False
        return self.pool.are_all_empty(rest)

    def _derived(self, expr: int, target: int, byte: int) -> int:
        """The derivative of ``expr`` by ``byte``, read from ``target``, the state its lexeme
        reaches on ``byte`` from the state of ``expr`` alone (the JSON string's row, from its
        template: no derivative of the string per schema), else computed."""
        if target != DEAD and target != UNKNOWN:
            items = self._items[target]
            if len(items) == 1:
                return items[0][1]
        return self.pool.derivative(expr, byte)

    def _target_of(self, items: Items, indices: list[int], byte: int,
                   known: tuple[int, Items] | None = None) -> int:
        """The state of the items at ``indices`` (in item order) after ``byte``. An item whose
        derivative is known to be empty is dropped; the others are kept without a search, and
        the state is dead only when all of them are empty: with hundreds of lexemes (an
        ``anyOf`` of patterns) one search that finds a string stands for all of them. A state
        may then hold lexemes that match nothing; their rows and the masks are the same.
        ``known``: ``(index, items after the byte)`` for an item (with its shadow, if it has one)
        whose derivative is known to match something (``()``: known empty), taken as it is."""
        pool = self.pool
        has_bool = pool.has_bool
        alive = []
        certain = False  # some item is non-empty without a search (no intersection or complement)
        vetoed = False
        for index in indices:
            if known is not None and index == known[0]:
                if known[1]:
                    alive.extend(known[1])
                    certain = True
                continue
            lex, expr = items[index]
            if lex < 0:  # a shadow (see _shadow_split), right after its lexeme's item if that is alive
                d = self._shadow_step(expr, byte)
                if d != EMPTY and alive and alive[-1][0] == ~lex:
                    verdict = self._verdict(alive[-1][1], d)
                    if verdict > 0:  # its item matches some string: the state is alive
                        alive.append((lex, d))
                        certain = True
                    elif verdict < 0:
                        alive.pop()
                        vetoed = True
                continue
            d = self._derivative(expr, byte)
            if d == EMPTY or (has_bool[d] and pool.is_known_empty(d)):
                continue
            certain = certain or not has_bool[d]
            alive.append((lex, d))
        if vetoed:
            certain = any(lex < 0 or not has_bool[d] for lex, d in alive)
        if not alive or (not certain and self._all_empty([d for lex, d in alive if lex >= 0])):
            return DEAD
        alive = tuple(alive)
        found = self._ids.get(alive)
        return self._new_state(False, alive) if found is None else found

    def _derivative(self, expr: int, byte: int) -> int:
        """The derivative of ``expr`` by ``byte`` (a literal's next byte gives its tail directly:
        keys and enum members)."""
        pool = self.pool
        if pool.kind[expr] == K_CONCAT:
            head, tail = pool.args[expr]
            if pool.kind[head] == K_BYTES and pool.args[head][0] == 1 << byte:
                return tail
        return pool.derivative(expr, byte)

    def fill_entry(self, state: int, byte: int) -> None:
        """Compute the one transition of ``state`` by ``byte`` (consuming text needs one byte of a
        row, a mask walk all of them). Byte 0 is the "row known" marker, so it fills the row."""
        if byte == 0:
            self.fill_row(state)
            return
        with self._lock:
            if self.trans[state, byte] != UNKNOWN:
                return
            items = self._items[state]
            starts = [self.pool.first_bytes(expr) for _, expr in items]
            with self.pool.emptiness_budget("max_row_emptiness_steps", self.limits.max_row_emptiness_steps):
                target = self._target(items, starts, 1 << byte, None)
            self.trans[state, byte] = target  # after _target: it may grow (replace) self.trans

    def _byte_classes(self, items: Items) -> tuple[tuple[int, ...], list[int], dict[int, list[int]]]:
        """A partition of the bytes on which every item's derivative is constant, each item's
        first bytes, and the items that only one byte can continue, by that byte (the keys of
        an object are such literals: each gets its byte as a class of its own, and is
        considered only for it, instead of refining the partition once per key)."""
        pool = self.pool
        starts = [pool.first_bytes(expr) for _, expr in items]
        by_byte: dict[int, list[int]] = {}
        singles = 0
        partitions = set()
        for index, ((_, expr), first) in enumerate(zip(items, starts)):
            if first & (first - 1) == 0:
                if first:
                    by_byte.setdefault(first.bit_length() - 1, []).append(index)
                    singles |= first
            else:
                partitions.add(pool.byte_classes(expr))
        parts: tuple[int, ...] = (ALL_BYTES,)
        for classes in partitions:
            parts = refine_partition(parts, classes)
        if singles:
            parts = split_off(parts, singles)
        return parts, starts, by_byte

    def _target(self, items: Items, starts: list[int], part: int, by_byte: dict[int, list[int]] | None) -> int:
        """The state after the bytes of ``part``; lexemes none of them can start are skipped.
        With ``by_byte`` (see :meth:`_byte_classes`), single-byte items are looked up there."""
        byte = (part & -part).bit_length() - 1
        candidates = [index for index, first in enumerate(starts)
                      if first & part and (by_byte is None or first & (first - 1))]
        if by_byte and part == 1 << byte and byte in by_byte:
            candidates = sorted(candidates + by_byte[byte])
        return self._target_of(items, candidates, byte)


