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
list (``acc_id``) and whether they are all ignored lexemes (``acc_ignore_only``).
"""

from __future__ import annotations

import functools
import threading
from bisect import insort
from dataclasses import dataclass

import numpy as np

from .._kernels.views import lexer_views
from ..errors import BudgetExceededError
from ..grammar.ir import GrammarIR
from ..limits import Limits
from ..regex.dfa import DEAD, UNKNOWN, LazyRows, class_index, publish_row
from ..regex.emptiness import WITNESS_BYTES
from ..regex.expr import (
    ALL_BYTES,
    BY_FIRST_MIN,
    EMPTY,
    EPSILON,
    INF,
    K_AND,
    K_BYTES,
    K_CONCAT,
    K_NOT,
    K_OR,
    K_REPEAT,
    ExprPool,
    bits_of,
    refine_partition,
)
from .counted import CountedChar, CountedShape, PatternRows, ProductGraph, counted_char, split_counted

Items = tuple[tuple[int, int], ...]
MINUS_BYTES = 24  # see Lexer._fill_minus_some: past this many bytes, one derivative per byte class
MAX_TEMPLATE_STATES = 64  # see row_template: a larger closure is filled row by row, as reached
MAX_FAMILY_TEMPLATE_STATES = 256  # a pool family's (made once per process): the whitespace run's 120 states fit
MAX_LITERAL_STATES = 512  # see Lexer.lay_out_literals (1 KB each): the literals past it are filled as reached
_UNSEEN, _SEEN_ONCE = object(), object()  # row_template in a pool without a family
MAX_SHARED_ROWS = 8192  # rows kept per pool family (Lexer._share_row): 0.6 KB each
SHARED_ROWS = ("lexer rows",)  # their key in the family's memo
ACC_ARRAYS = ("accepting", "acc_start", "acc_len", "acc_id")  # LexerBlock.acc's order (acc_ignore_only apart)
BLOCK_SPARE = 512  # a lexer made from a block has room for this many more states: see Lexer._ready_rows
PUNCTUATION_ROOM = 8  # room after a block for the literals laid out with it (JSON's "{" and "[": 4 states)
SET_UP_LITERALS = ("literals set up with the block",)  # their chains' key in a family's memo (set_up_chains)
MAX_FAMILY_BLOCKS = 64  # lexer blocks kept per pool family, one per set of family lexemes (family_block)
MAX_PUNCTUATION_ROWS = 128  # punctuation layouts kept per pool family (punctuation_rows): 4 rows and 4 acc arrays each
_BLOCKS_LOCK = threading.Lock()  # inserts into a family's blocks (the memo itself is shared by every thread)
LITERAL_SET_NODES = 1 << 16  # see _is_literal_set: a larger set of names keeps the intersection
READY_ROWS = 64  # rows marked unknown at a time as states are numbered: see Lexer._ready_rows
_PLAIN_STARRED, _PLAIN_REPEAT = 2, 3  # Lexer._plain_pattern
MAX_PATTERN_FAILURES = 2  # pattern templates over MAX_PATTERN_STATES tried per grammar: see Lexer._product_graph
MAX_PRODUCT_GRAPHS = 8  # ProductGraphs of one pattern template (one per counted character)


class Lexer(LazyRows):
    """Lexer DFA for the lexemes of ``ir``; grows on demand within ``Limits.max_dfa_states``."""

    def __init__(self, ir: GrammarIR, limits: Limits) -> None:
        self.ir = ir
        self.pool = ir.pool
        self.limits = limits
        self._lock = ir.pool.lock
        self._items: list[Items] = []
        self._fresh = bytearray()  # per state, 1 where no byte of the lexeme is read: out of the collector's scans
        self._accepted: list[tuple[int, ...]] = []
        self._ids: dict[tuple[bool, Items], int] = {}
        self._start_of: dict[frozenset[int], int] = {}
        self._capacity = min(16, limits.max_dfa_states)  # states _new_state may add before it grows trans
        self._ready = 16  # rows of trans written (UNKNOWN past the states): see _ready_rows
        self._nullable = ir.pool.nullable  # appended to in place, never replaced
        self.acc_pool = np.zeros(64, dtype=np.int32)
        self._acc_used = 0
        self._acc_ids: dict[tuple[int, ...], int] = {(): 0}
        self._acc_slots: dict[tuple[int, ...], tuple[tuple[int, ...], int, int, int]] = {}  # see _mark_ended
        self._ignore = frozenset(ir.ignore)
        self._lexeme_exprs = [lexeme.expr for lexeme in ir.lexemes]
        self._widened: dict[tuple[int, int], int] = {}
        self._byte_of: dict[int, int] = {}  # _literal_tails: a class of bytes' byte (-1: not one byte)
        self._literals_laid_out = False  # lay_out_literals
        self._counted: dict[int, tuple[CountedShape, int, int, int]] = {}  # _fill_counted: expr -> its S(r, a, b)
        self._shapes: dict[tuple[int, int], CountedShape | None] = {}  # _counted_of: (X, T) -> its shape
        self._splits: dict[int, int | Items] = {}  # lexeme -> its start item's expression, or items (_start_item)
        self._intersections = frozenset(lex for lex, expr in enumerate(self._lexeme_exprs) if ir.pool.kind[expr] == K_AND)
        self._shadow_steps: dict[int, int] = {}  # _shadow_step: names << 8 | byte -> the names after it
        self._shadow_tails: dict[int, dict[int, list[int]]] = {}  # _tails_by_byte, per names
        self._shapes_of: dict[int, int] = {}  # _verdict: an item's P' -> 0 (ε), 1 (infinite), 2 (other)
        self._products: dict[int, tuple[ProductGraph, int, int, int, int]] = {}  # _fill_product: expr -> its state
        self._plain_patterns: dict[int, int] = {}  # _plain_and: a pattern state -> _plain_pattern
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

    def _punctuation(self) -> list[tuple[int, tuple[int, tuple[int, ...], tuple[int, ...]]]]:
        """``(lexeme, (expr, tails, path))`` of the grammar's literal lexemes whose expressions
        the pool family's front end names in ``PoolFamily.set_up`` (JSON's ``{`` and ``[``: an
        object's or array's first mask starts at the fresh state of one of them alone), to lay
        out with the block (:meth:`_lay_out_punctuation`); ``tails`` and ``path`` as
        :meth:`_literal_tails` says, kept in the family's memo (:func:`set_up_chains`). None in
        a grammar with ignored lexemes (their fresh states hold more than the literal)."""
        family = self.pool.family
        if family is None or self._ignore or not family.set_up:
            return []
        chains = set_up_chains(self.pool)
        if not chains:
            return []
        return [(lex, chains[expr]) for lex, expr in enumerate(self._lexeme_exprs) if expr in chains]

    def _lay_out_punctuation(self, punctuation: list[tuple[int, tuple[int, tuple[int, ...], tuple[int, ...]]]]) -> None:
        """Number the states of the literals ``punctuation`` (:meth:`_punctuation`), whose rows
        and ``acc_*`` entries :meth:`_start_with_block` wrote right after the block, and write
        their lexemes to ``acc_pool``, as :meth:`lay_out_literals` does for the other literals
        after the first mask: per literal the fresh state of its lexeme alone, then the state
        after each byte. A literal's items, ``_ids`` entries and slot are made once per lexeme
        id and first state (:func:`_literal_states`)."""
        state = len(self._items)
        used = self._acc_used
        first_id = len(self._acc_ids)
        acc_ids, slots = self._acc_ids, self._acc_slots
        for k, (lex, chain) in enumerate(punctuation):
            items, fresh, ids, accepted, slot = _literal_states(lex, chain, state, used + k, first_id + k)
            self._items.extend(items)
            self._fresh.extend(fresh)
            self._ids.update(ids)
            self._accepted.extend(accepted)
            acc_ids[slot[0]] = slot[2]  # as _acc_slot would
            slots[slot[0]] = slot
            state += len(items)
        ended = len(punctuation)
        if used + ended > self.acc_pool.shape[0]:
            self.acc_pool = np.concatenate([self.acc_pool, np.zeros(self.acc_pool.shape[0] + ended, np.int32)])
        self.acc_pool[used:used + ended] = [lex for lex, _ in punctuation]
        self._acc_used = used + ended

    def _start_with_block(self, punctuation: list[tuple[int, tuple[int, tuple[int, ...], tuple[int, ...]]]]
                          | None = None) -> bool:
        """States ``1..n`` (after ``DEAD``): the single-lexeme states of the grammar's lexemes
        that are expressions of the pool family (JSON whitespace, strings, numbers, punctuation)
        and every state they reach, with their rows, copied from the family's
        :func:`family_block` for this set of lexemes. Their rows are the same in every schema;
        a grammar numbers them and copies them at compile (one array copy, a few list
        extensions) instead of building them, template by template, during its first masks.
        The literals ``punctuation`` (:meth:`_punctuation`: JSON's ``{``, ``,``...) follow, their
        rows and ``acc_*`` entries copied with the block's from the family's
        :func:`punctuation_rows` (see :meth:`_lay_out_punctuation`); ``BLOCK_SPARE`` states
        after them. False (nothing made) where there is no block: no family, none of its
        lexemes, or a block too large for ``Limits.max_dfa_states``."""
        family = self.pool.family
        if family is None:
            return False
        lex_of: dict[int, int] = {}
        for lex, lexeme in enumerate(self.ir.lexemes):
            if lexeme.expr < family.size:  # a root shared by two lexemes is left to the rows as reached
                lex_of[lexeme.expr] = -1 if lexeme.expr in lex_of else lex
        roots = tuple(sorted(expr for expr, lex in lex_of.items() if lex >= 0))
        block = family_block(self.pool, roots) if roots else None
        if block is None or 4 * (block.size + 1) > self.limits.max_dfa_states:
            return False
        n = block.size
        count = sum([1 + len(chain[1]) for _, chain in punctuation]) if punctuation else 0
        if count > PUNCTUATION_ROOM or 2 * (n + 1 + count) > self.limits.max_dfa_states:  # rows as reached
            count = 0
        layout = punctuation_rows(self.pool, block, punctuation) if count else None
        capacity = min(n + count + BLOCK_SPARE, self.limits.max_dfa_states)
        trans = np.empty((capacity, 256), dtype=np.int32)  # rows past these written as states are numbered
        trans[DEAD] = DEAD
        trans[1:n + 1] = block.trans
        if layout is not None:
            trans[n + 1:n + 1 + count] = layout.trans
        self.trans = trans
        self._capacity = capacity
        self._ready = n + 1 + count
        lexes = [lex_of[root] for root in block.roots]
        for name, head in zip(ACC_ARRAYS, block.acc if layout is None else layout.acc):  # 0 for DEAD and past
            setattr(self, name, head[:capacity].copy())
        ignored = [lex in self._ignore for lex in lexes]
        self.acc_ignore_only = np.zeros(capacity, dtype=np.int8)
        if any(ignored[r] for r in block.end_roots):
            self.acc_ignore_only[block.ends] = np.array(ignored, dtype=np.int8)[block.end_root]
        state = 1
        for exprs, ends, lex in zip(block.segments, block.segment_ends, lexes):
            items, ids, accepted = _segment_states(exprs, ends, lex, state)
            self._items.extend(items)
            self._ids.update(ids)
            self._accepted.extend(accepted)
            state += len(items)
        self._fresh.extend(bytes(n))
        used = block.ends.shape[0]
        if used > self.acc_pool.shape[0]:
            self.acc_pool = np.zeros(2 * used, dtype=np.int32)
        if used:
            self.acc_pool[:used] = np.array(lexes, dtype=np.int32)[block.end_root]
        self._acc_ids.update({(lexes[r],): k for k, r in enumerate(block.end_roots, 1)})  # ids after () (0)
        self._acc_used = used
        if layout is not None:
            self._lay_out_punctuation(punctuation)
        return True

    def lay_out_literals(self) -> None:
        """Number the states of the grammar's literal lexemes that are not family expressions
        (an object's keys ``"name"``: most of a tool call's lexemes), the fresh state of each
        lexeme alone and the states after each of its bytes (see :meth:`_literal_chains`),
        and write their rows (``DEAD`` but for the next byte; ``DEAD`` at the end) and
        ``acc_*`` entries, all together with a few numpy writes. Built as the walks reach them,
        each key cost a return of the trie-walk kernel and a Python row fill inside a mask
        (:meth:`_fill_literal`). A literal with a state made already (reached by an earlier
        walk) is left to the rows as reached, as are fresh states of several lexemes (a key
        and the whitespace before it). Done once per lexer; :class:`leapgram.mask.engines.CfgEngine`
        calls it before its second mask walk, so that the first mask (inside the time to
        first mask) does not wait for it."""
        with self._lock:
            if self._literals_laid_out:
                return
            self._literals_laid_out = True
            keys, steps, ends = self._literal_chains()
            if keys:
                self._lay_out_literals(keys, steps, ends)

    def _literal_chains(self) -> tuple[list[tuple[bool, Items]], list[int], list[tuple[int, int]]]:
        """For :meth:`lay_out_literals`: the ``_ids`` keys of the states to make, each
        literal's in a row (first the fresh state of the literal's lexeme alone, where the
        parser allows only it: an object's ``{``, a ``,``, a key right after ``{``; then the
        states after each byte); per state the byte that leads to it from the previous one (-1
        for a literal's first); and ``(index, lexeme)`` of each literal's last state. At most
        ``MAX_LITERAL_STATES`` states (and a quarter of ``Limits.max_dfa_states``), in lexeme
        order; the literals past that are filled as reached."""
        keys: list[tuple[bool, Items]] = []
        steps: list[int] = []
        ends: list[tuple[int, int]] = []
        pool = self.pool
        if pool.family is None:
            return keys, steps, ends
        size = pool.family.size
        ids = self._ids
        alone = not self._ignore  # the fresh state of one lexeme holds that lexeme only
        room = min(MAX_LITERAL_STATES, self.limits.max_dfa_states // 4)
        for lex, lexeme in enumerate(self.ir.lexemes):
            if lexeme.expr < size:
                continue
            found = self._literal_tails(lexeme.expr)
            if found is None:  # not a literal: its rows as reached
                continue
            tails, path = found
            chain = [(False, ((lex, tail),)) for tail in tails]
            if any(map(ids.__contains__, chain)):  # reached already, in part at least: the rest as reached
                continue
            fresh = (True, ((lex, lexeme.expr),))  # the parser's start state for this lexeme alone
            if alone and fresh not in ids:
                chain.insert(0, fresh)
                path.insert(0, -1)
            else:  # (its first byte leads from fresh states, made as reached)
                path[0] = -1
            if len(keys) + len(chain) > room:
                break
            keys.extend(chain)
            steps.extend(path)
            ends.append((len(keys) - 1, lex))
        return keys, steps, ends

    def _literal_tails(self, expr: int) -> tuple[list[int], list[int]] | None:
        """``(tails, path)`` when ``expr`` is a literal (one byte after another: ``K_CONCAT``
        of one-byte classes, as the pool builds keys): its expressions after each of its bytes
        (the derivatives, ``EPSILON`` last) and those bytes; else ``None``."""
        return literal_tails(self.pool, expr, self._byte_of)

    def _lay_out_literals(self, keys: list[tuple[bool, Items]], steps: list[int], ends: list[tuple[int, int]]) -> None:
        """Make the states of :meth:`_literal_chains` (numbered from ``len(_items)``) with their
        rows and ``acc_*`` entries. No walk reaches them before some row leads to them, and
        none does yet (their keys were not in ``_ids``), so their rows are written in any
        order."""
        count = len(keys)
        base = len(self._items)
        if 2 * (base + count) > self.limits.max_dfa_states:  # rows as reached
            return
        if base + count > self._capacity:
            self._grow(min(max(2 * base, base + count + 32), self.limits.max_dfa_states))
        self._ready = max(self._ready, base + count)  # every entry of their rows is written below
        self._items.extend([key[1] for key in keys])
        self._fresh.extend([key[0] for key in keys])
        self._ids.update(zip(keys, range(base, base + count)))
        block = self.trans[base:base + count]  # a view: rows DEAD but for each literal's next byte
        block[...] = DEAD
        cells = [256 * index + byte for index, byte in enumerate(steps[1:]) if byte >= 0]  # a state to the next
        block.reshape(-1)[cells] = [base + 1 + (cell >> 8) for cell in cells]
        # the acc_* entries of the last states, from the slot of acc_pool of each lexeme alone (as _mark_ended)
        slots = self._acc_slots
        ended = [slots.get((lex,)) or slots.setdefault((lex,), self._acc_slot([lex])) for _, lex in ends]
        accepted: list[tuple[int, ...]] = [()] * count
        for (index, _), slot in zip(ends, ended):
            accepted[index] = slot[0]
        self._accepted.extend(accepted)
        states = [base + index for index, _ in ends]
        self.acc_start[states] = [slot[1] for slot in ended]
        self.acc_len[states] = [len(slot[0]) for slot in ended]
        self.acc_id[states] = [slot[2] for slot in ended]
        self.acc_ignore_only[states] = [slot[3] for slot in ended]
        self.accepting[states] = 1

    def _pack_views(self) -> None:
        """Make :attr:`views` again (after an array was replaced): the kernels' one argument for
        ``trans``, ``accepting`` and :attr:`kernel_arrays`. Walks on other threads read it
        unlocked; an old views array holds the arrays it names until their calls return
        (:mod:`leapgram._kernels.views`)."""
        self.views = lexer_views(self.trans, self.accepting, self.kernel_arrays)

    @property
    def kernel_arrays(self) -> tuple[np.ndarray, ...]:
        """``(acc_start, acc_len, acc_pool, acc_id, acc_ignore_only)`` as the kernels take them
        (read them again after the lexer grows)."""
        return self.acc_start, self.acc_len, self.acc_pool, self.acc_id, self.acc_ignore_only

    @property
    def num_states(self) -> int:
        return len(self._items)

    def start_state(self, lexemes: frozenset[int]) -> int:
        """The fresh state for the lexemes the parser allows (ignored lexemes are added);
        ``DEAD`` when the set is empty."""
        found = self._start_of.get(lexemes)
        if found is None:
            with self._lock:
                allowed = sorted(lexemes | self._ignore) if self._ignore else sorted(lexemes)
                if self._intersections.isdisjoint(allowed):  # most sets
                    items = tuple(zip(allowed, map(self._lexeme_exprs.__getitem__, allowed)))
                else:
                    items = self._start_items(allowed)
                found = self._state_of(True, items) if items else DEAD
                self._start_of[lexemes] = found
        return found

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

    def _shadow_split(self, expr: int) -> tuple[int, int] | None:
        """``(P, Q)`` when ``expr`` is ``P ∩ ¬Q`` with ``P`` free of intersection and complement
        and ``Q`` a finite set of literals (the keys other than an object's declared names ``Q``:
        :func:`_is_literal_set`), else ``None``. ``P ∩ ¬Q ∩ ¬R1 ∩ ...`` (the keys that are none
        of the names nor match a ``patternProperties`` pattern ``Ri``) gives ``(P ∩ ¬R1 ∩ ...,
        Q)``: the item keeps the patterns, whose states are few and shared by every node of the
        names' trie (round 23: clang-format's first mask made ~260 of them, each a search).

        Such a lexeme's states keep ``P`` as its item and ``Q`` as a *shadow* item beside it
        (its lexeme id complemented, ``~lex``), which is no lexeme of its own: it only vetoes
        the lexeme's end on a string of ``Q`` and kills the lexeme when every string left is in
        ``Q``. A byte then costs ``P`` its template row and ``Q`` a literal step, where the
        expression ``P' ∩ ¬Q'`` cost an intersection, a complement and an emptiness answer per
        node of the names' trie (docs/design/earley-walk.md, "Large schemas, round 22")."""
        pool = self.pool
        kind, args = pool.kind, pool.args
        if kind[expr] != K_AND:
            return None
        positive = names = -1
        rest = []  # the other complements ¬R (patternProperties' patterns): kept in the item, P ∩ ¬R
        for child in args[expr]:
            if kind[child] != K_NOT:
                if positive >= 0 or pool.has_bool[child]:
                    return None
                positive = child
            elif names < 0 and _is_literal_set(pool, args[child][0]):
                names = args[child][0]
            else:
                rest.append(child)
        if positive < 0 or names < 0:
            return None
        return (pool.intersect([positive, *rest]) if rest else positive), names

    def _veto(self, items: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """``items`` with each shadow ``(~lex, Q')`` (see :meth:`_shadow_split`) decided against
        its lexeme's item ``(lex, P')`` right before it: dropped with it when that item is gone;
        the item dropped too when ``P' ⊆ Q'`` (``P' ∩ ¬Q'`` is empty); the shadow dropped alone
        when it can veto nothing more (``Q'`` empty, or ``P'`` is ``ε`` not in ``Q'``)."""
        out: list[tuple[int, int]] = []
        for item in items:
            lex, q = item
            if lex >= 0:
                out.append(item)
            elif out and out[-1][0] == ~lex and q != EMPTY:
                verdict = self._verdict(out[-1][1], q)
                if verdict > 0:
                    out.append(item)
                elif verdict < 0:
                    out.pop()
        return out

    def _verdict(self, p: int, q: int) -> int:
        """For an item ``P'`` (``p``) with the shadow ``Q'`` (``q``, not empty): 1 when ``P' ∩ ¬Q'``
        is not empty and the shadow may still veto, 0 when it is ``P'`` (the shadow goes), -1
        when it is empty (both go). ``P'`` is ε (its lexeme's item is never ∅) or, most often,
        infinite: then it has strings longer than all of the finite ``Q'``. An item with an
        intersection (``P ∩ ¬R``, see :meth:`_shadow_split`) is decided by a search."""
        shape = self._shapes_of.get(p)
        if shape is None:
            pool = self.pool
            if pool.has_bool[p]:  # P ∩ ¬R (see _shadow_split): neither shape is known without a search
                shape = 2
            else:
                shape = 0 if pool.first_bytes(p) == 0 else 2 if pool.is_finite(p) else 1
            self._shapes_of[p] = shape
        if shape == 1:
            return 1
        if shape == 0:
            return -1 if self._nullable[q] else 0
        pool = self.pool
        return -1 if pool.is_empty(pool.intersect([p, pool.complement(q)])) else 1

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
        key = (fresh, items)
        found = self._ids.get(key)
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
        self._ids[(fresh, items)] = state
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
        trans = np.empty((capacity, 256), dtype=np.int32)
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
            if self.trans[state, 0] != UNKNOWN:
                return
            items = self._items[state]
            if len(items) == 1 and (not self.pool.has_bool[items[0][1]] or items[0][1] in self._products):
                # no search to budget (most rows; a counted lexeme under a pattern reads its counts)
                self._fill_row(state)
                return
            shared = self._shared_rows(items)
            if shared is not None and self._copy_shared_row(state, items, shared):
                return
            with self.pool.emptiness_budget("max_row_emptiness_steps", self.limits.max_row_emptiness_steps):
                self._fill_row(state)
            if shared is not None:
                self._share_row(state, items, shared)

    def _shared_rows(self, items: Items) -> dict | None:
        """The pool family's memo of rows (see :meth:`_share_row`) when every item of a state
        is an expression of the family's base pool (``PoolFamily.base_size``: the family's and
        JSON's punctuation, the same ids in every copy), else ``None``."""
        family = self.pool.family
        if family is None or any(expr >= family.base_size or lex < 0 for lex, expr in items):
            return None
        rows = family.memo.get(SHARED_ROWS)
        if rows is None:
            with _BLOCKS_LOCK:
                rows = family.memo.setdefault(SHARED_ROWS, {})
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
        row = ids[index]
        trans = self.trans  # read after the targets: a new state may grow (replace) the table
        trans[state, 1:] = row[1:]  # each entry written once, with its final value (walks run unlocked)
        trans[state, 0] = row[0]
        return True

    def _share_row(self, state: int, items: Items, shared: dict) -> None:
        """Keep the row of ``state`` (whose items are base pool expressions, see
        :meth:`_shared_rows`) in the family's memo as its targets' items, when those are base
        pool expressions too: a row is a function of the items, so every lexer of the family
        can number the targets and take it without a derivative or an emptiness search. These
        are the rows templates do not cover: states of several lexemes (a fresh state,
        punctuation beside whitespace or another token) and lexemes with an intersection or
        complement (GBNF's greedy lexemes), made once per grammar otherwise.
        At most ``MAX_SHARED_ROWS`` per family."""
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
            targets.append(target_items)
        position = np.empty(distinct[-1] + 1, dtype=np.int16)  # state -> its index in targets
        position[distinct] = np.arange(len(distinct), dtype=np.int16)
        index = position[row]
        index.flags.writeable = False
        shared.setdefault((bool(self._fresh[state]), items), (tuple(targets), index))

    def _fill_row(self, state: int) -> None:
        items = self._items[state]
        if len(items) == 1:
            self._fill_single(state, *items[0])
            return
        starts = [self.pool.first_bytes(expr) for _, expr in items]
        if self._fill_composed(state, items, starts):
            return
        parts, starts, by_byte = self._byte_classes(items)
        targets = [self._target(items, starts, part, by_byte) for part in parts]  # may grow self.trans
        publish_row(self.trans, state, parts, targets)

    def _fill_composed(self, state: int, items: Items, starts: list[int]) -> bool:
        """The row of a state where at most one item can start with more than one byte (a key
        of an object next to the pattern of its other keys; punctuation next to whitespace);
        ``False`` for other states.

        On a byte that none of the single-byte items starts with, only the wide item ``w`` can
        go on, so the target is the one of the state ``{w}`` alone: that row is computed once
        and shared by every state ``w`` appears in, and only the single-byte items' bytes are
        computed here (each item once, for its byte). (Composing the rows of several wide
        items was measured slower: their single rows are rarely shared, and the bytes they share
        cost a derivative each instead of one per byte class.)

        A wide item with a shadow (see :meth:`_shadow_split`) goes with it: the state of the
        two alone, ``{P', Q'}``, has its row computed once (the shadow's bytes stepped there,
        as single-byte items are here) and shared by every set of names beside them."""
        if len(items) == 2 and items[1][0] == ~items[0][0] and starts[0] & (starts[0] - 1):
            self._fill_shadowed(state, items, starts)  # a wide item and its shadow alone (most key rows)
            return True
        wide = -1
        unit = 1  # items in the wide item's own state: 2 with its shadow
        by_byte: dict[int, list[int]] = {}  # the single-byte items by their byte, in item order
        for index, first in enumerate(starts):
            lex = items[index][0]
            if lex < 0 and index == wide + 1 and wide >= 0 and len(items) > 2:  # the wide item's shadow
                unit = 2
            elif first & (first - 1) == 0:
                if first:
                    by_byte.setdefault(first.bit_length() - 1, []).append(index)
            elif lex < 0:  # a shadow: a literal step by each of its bytes
                for byte in bits_of(first):
                    by_byte.setdefault(byte, []).append(index)
            elif wide >= 0:
                return False
            else:
                wide = index
        if wide >= 0:
            alone = self._state_of(False, items[wide:wide + unit])
            if self.trans[alone, 0] == UNKNOWN:
                if unit == 1:
                    self._fill_single(alone, *items[wide])
                else:
                    self._fill_row(alone)
            row = self.trans[alone].copy()
            wide_first = starts[wide]
        else:
            row = np.zeros(256, dtype=np.int32)  # DEAD
            wide_first = 0
        for byte, members in by_byte.items():
            known = None
            if wide_first >> byte & 1:  # the wide item's derivative is in its own row: no new one
                insort(members, wide)
                alone_target = int(row[byte])
                known = (wide, self._items[alone_target] if alone_target != DEAD else ())
            row[byte] = self._target_of(items, members, byte, known)
        trans = self.trans  # read after the targets: a new state may grow (replace) the table
        trans[state, 1:] = row[1:]  # each entry written once, with its final value (walks run unlocked)
        trans[state, 0] = row[0]
        return True

    def _fill_shadowed(self, state: int, items: Items, starts: list[int]) -> None:
        """The row of a state ``{P', Q'}``, an item and its shadow (see :meth:`_shadow_split`),
        from the row of ``P'`` alone: only the bytes both start with step the shadow (what
        :meth:`_target_of` does for them, without its generic loop)."""
        (lex, p), (shadow, q) = items
        alone = self._state_of(False, items[:1])
        if self.trans[alone, 0] == UNKNOWN:
            self._fill_single(alone, lex, p)
        row = self.trans[alone].copy()
        ids = self._ids
        for byte in bits_of(starts[0] & starts[1]):
            target = int(row[byte])
            if target == DEAD:
                continue
            d = self._shadow_step(q, byte)
            if d == EMPTY:
                continue  # the string alone goes on
            after = self._items[target][0]
            verdict = self._verdict(after[1], d)
            if verdict > 0:
                key = (after, (shadow, d))
                found = ids.get((False, key))
                row[byte] = self._new_state(False, key) if found is None else found
            elif verdict < 0:
                row[byte] = DEAD
        trans = self.trans  # read after the targets: a new state may grow (replace) the table
        trans[state, 1:] = row[1:]  # each entry written once, with its final value (walks run unlocked)
        trans[state, 0] = row[0]

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
            twin = self._ids.get((False, self._items[state]))
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
            found = ids.get((False, items))
            targets.append(self._new_state(False, items) if found is None else found)
        publish_row(self.trans, state, parts, targets)

    def _fill_literal(self, state: int, lex: int, expr: int, first: int) -> tuple[int, int] | None:
        """The rows of ``state`` (one byte, ``first``, can continue ``expr``) and of the states
        after it along the literal while one byte at most continues each and their rows are
        unknown: each row is ``DEAD`` but for its byte. The new states are numbered together and
        the rows written with two array writes, instead of a state, a row and three writes per
        byte of a key. Returns ``(state, expr)`` of a state reached whose row needs byte
        classes, else ``None``."""
        pool = self.pool
        kind, args, has_bool = pool.kind, pool.args, pool.has_bool
        ids = self._ids
        trans = self.trans
        chain = [state]  # states whose rows are written here, in order
        row_bytes: list[int] = []  # per state of the chain: its byte (-1: a dead row)
        targets: list[int] = []
        new_items: list[Items] = []  # states numbered from len(self._items), in order
        base = next_state = len(self._items)
        limit = self.limits.max_dfa_states
        more = None
        added: list[tuple[bool, Items]] = []  # keys put in self._ids here, taken back if this raises
        try:
            while True:
                if first == 0:
                    row_bytes.append(-1)
                    targets.append(DEAD)
                    break
                byte = first.bit_length() - 1
                if kind[expr] == K_CONCAT and kind[args[expr][0]] == K_BYTES:  # _derivative, inlined: its tail
                    d = args[expr][1]
                elif kind[expr] == K_BYTES:  # its last byte (in the class: first is the class): ε
                    d = EPSILON
                else:
                    d = pool.derivative(expr, byte)
                if d == EMPTY or (has_bool[d] and self._is_empty(d)):
                    row_bytes.append(byte)
                    targets.append(DEAD)
                    break
                items = ((lex, d),)
                key = (False, items)
                found = ids.get(key)
                row_bytes.append(byte)
                if found is None:
                    found = next_state
                    if found >= limit:
                        raise BudgetExceededError("max_dfa_states", limit, "lexer DFA too large")
                    next_state += 1
                    ids[key] = found  # found again along this literal (a byte loop)
                    added.append(key)
                    new_items.append(items)
                    targets.append(found)
                else:
                    targets.append(found)
                    if found >= base or found in chain or trans[found, 0] != UNKNOWN:  # known or being written
                        break
                expr = d
                head = args[d][0] if kind[d] == K_CONCAT else EMPTY
                first = args[head][0] if kind[head] == K_BYTES else pool.first_bytes(d)  # first_bytes, inlined
                if first & (first - 1):  # several bytes: byte classes, after this chain's rows
                    more = (found, d)
                    break
                chain.append(found)
            if new_items and base + len(new_items) > self._capacity:
                self._grow(min(max(2 * base, base + len(new_items)), self.limits.max_dfa_states))
        except BaseException:  # out of budget (states, or an emptiness search): no state was made
            for key in added:
                ids.pop(key, None)
            raise
        if new_items:
            self._add_single_states(new_items, lex)
        rows = np.zeros((len(chain), 256), dtype=np.int32)  # DEAD everywhere but each state's byte
        for index in range(len(chain) if row_bytes[-1] >= 0 else len(chain) - 1):  # (-1: a dead row)
            rows[index, row_bytes[index]] = targets[index]  # a few scalar writes: cheaper than fancy indexing
        _write_rows(self.trans, chain, list(range(len(chain))), rows)  # (read after the new states: they may grow it)
        return more

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
        numpy write instead of a row at a time as the walks reach them). ``False`` when
        ``expr`` has no template or the states would not fit in ``Limits.max_dfa_states``."""
        template = row_template(self.pool, expr)
        if template is None:
            return False
        exprs, table, root_reached = template
        if len(self._items) + len(exprs) > self.limits.max_dfa_states:
            return False
        ids = self._ids
        fresh = bool(self._fresh[state])
        base = next_state = len(self._items)
        local = [DEAD]  # template state j is local[j + 1]
        new_items: list[Items] = []  # states numbered from base, in order
        for index, e in enumerate(exprs):
            if index == 0 and not (fresh and root_reached):
                local.append(state)  # itself (or, fresh, a twin no byte reaches: not made)
                continue
            items = ((lex, e),)
            key = (False, items)
            found = ids.get(key)
            if found is None:
                found = ids[key] = next_state
                next_state += 1
                new_items.append(items)
            local.append(found)
        if new_items:
            if next_state > self._capacity:  # within max_dfa_states: checked above
                try:
                    self._grow(min(max(2 * base, next_state), self.limits.max_dfa_states))
                except BaseException:  # (out of memory) no state was made: take their ids back
                    for items in new_items:
                        ids.pop((False, items), None)
                    raise
            self._add_single_states(new_items, lex)
        rows = np.array(local, dtype=np.int32)[table]
        trans = self.trans  # read after the new states: one may grow (replace) the table
        order = {int(state): 0}
        for index, target in enumerate(local[1:]):
            if target not in order and (target >= base or trans[target, 0] == UNKNOWN):
                order[target] = index
        _write_rows(trans, list(order), list(order.values()), rows)
        return True

    def _fill_counted(self, state: int, lex: int, expr: int,
                      found: tuple[CountedShape, int, int, int] | None = None) -> bool:
        """The row of a state of a counted lexeme, ``S(r, a, b) = r X{a,b} T`` (a JSON string
        with ``minLength``/``maxLength``; see :mod:`leapgram.parser.counted`), from the row of
        ``r`` (or, for ``r = ε``, of ``X`` with the counts one lower) in ``X``'s row template:
        only its targets' expressions are built, no derivative is taken (but of ``T``, by its
        bytes, where ``a = 0``). ``False`` for other states. ``found``: ``expr``'s entry in
        ``_counted``, if it has one."""
        if found is None:
            found = self._counted_entry(expr)
            if found is None:
                return False
        shape, index, low, high = found
        char = shape.char
        pool = self.pool
        row_index, low_after, high_after = index, low, high
        if index == char.eps:  # X{a,b} T: X's first row, one count used
            row_index, low_after, high_after = 0, max(low - 1, 0), high if high == INF else high - 1
        local = self._counted_targets(lex, shape, char.targets[row_index], low_after, high_after)
        row = np.array(local, dtype=np.int32)[char.table[row_index]]
        if index == char.eps and low == 0:  # T may start: its bytes c lead to d(T, c) (none starts X)
            self._tail_entries(row, lex, shape.tail)
        trans = self.trans  # read after the targets: a new state may grow (replace) the table
        trans[state, 1:] = row[1:]  # each entry written once, with its final value (walks run unlocked)
        trans[state, 0] = row[0]
        return True

    def _tail_entries(self, row: np.ndarray, lex: int, tail: int) -> None:
        """``row`` on the bytes ``tail`` starts with: ``d(tail, c)``, where a counted lexeme can
        end (``d(X{0,b} T, c) = alt([∅, d(T, c)]) = d(T, c)``: no byte starts both, and ``T`` has
        no intersection or complement)."""
        pool = self.pool
        first = pool.first_bytes(tail)
        for part in pool.byte_classes(tail) if first else ():
            part &= first
            if part:
                d = pool.derivative(tail, (part & -part).bit_length() - 1)
                row[bits_of(part)] = DEAD if d == EMPTY else self._state_of(False, ((lex, d),))

    def _counted_targets(self, lex: int, shape: CountedShape, targets: tuple[int, ...], low: int, high: int) -> list[int]:
        """``local[t]``: the state of ``S(exprs[t - 1], low, high)`` for each template entry ``t`` of
        ``targets`` (``DEAD`` elsewhere); the new ones are numbered together, as
        :meth:`_fill_from_template` numbers its states (a row of ``X{a,b} T`` makes the states
        after each kind of character, nine for a JSON string, and most are new)."""
        pool = self.pool
        char = shape.char
        base = shape.base(pool, low, high)
        counted = self._counted
        local = [DEAD] * (len(char.exprs) + 1)
        shared = pool.family.size if pool.family is not None else 0  # (X* T of a family: its row template)
        exprs = []
        for target in targets:
            i = target - 1
            e = shape.state_expr(pool, i, base)
            if e not in counted and (i != char.eps or high != 0) and e >= shared:  # (X{0,0} T is T)
                counted[e] = (shape, i, low, high)
            exprs.append(e)
        for target, found in zip(targets, self._number_singles(lex, exprs)):
            local[target] = found
        return local

    def _number_singles(self, lex: int, exprs: list[int]) -> list[int]:
        """The states of one item ``(lex, e)`` for each ``e`` of ``exprs`` (``DEAD`` for ∅), the
        new ones numbered together within ``Limits.max_dfa_states``."""
        ids = self._ids
        out = []
        start = next_state = len(self._items)
        new_items: list[Items] = []
        try:
            for e in exprs:
                if e == EMPTY:
                    out.append(DEAD)
                    continue
                items = ((lex, e),)
                key = (False, items)
                found = ids.get(key)
                if found is None:
                    if next_state >= self.limits.max_dfa_states:
                        raise BudgetExceededError("max_dfa_states", self.limits.max_dfa_states, "lexer DFA too large")
                    found = ids[key] = next_state
                    next_state += 1
                    new_items.append(items)
                out.append(found)
            if next_state > self._capacity:
                self._grow(min(max(2 * start, next_state), self.limits.max_dfa_states))
        except BaseException:  # out of budget (states, expressions) or memory: no state was made
            for items in new_items:
                ids.pop((False, items), None)
            raise
        if new_items:
            self._add_single_states(new_items, lex)
        return out

    def _counted_entry(self, expr: int) -> tuple[CountedShape, int, int, int] | None:
        """``(shape, index of r, a, b)`` when ``expr`` is ``S(r, a, b)`` of a shape whose rows
        shift exactly (:func:`counted_char`, ``T`` without intersection or complement and no
        byte starting both ``X`` and ``T``), else ``None``."""
        pool = self.pool
        split = split_counted(pool, expr)
        if split is None:
            return None
        heads, char, low, high, tail = split
        shape = self._counted_of(char, tail)
        if shape is None:
            return None
        index = shape.char.spine_index.get(heads)
        if index is None or (index == shape.char.eps and high == 0):
            return None
        if shape.state_expr(pool, index, shape.base(pool, low, high)) != expr:  # another form: by derivatives
            return None
        found = self._counted[expr] = (shape, index, low, high)
        return found

    def _counted_of(self, char: int, tail: int) -> CountedShape | None:
        """The :class:`CountedShape` of ``X{a,b} T`` in this lexer, or ``None`` (see
        :meth:`_counted_entry`). ``X``'s :class:`CountedChar` is kept with its row template: in
        the pool family's memo for a family expression (a JSON string character), else in the
        pool's memo."""
        key = (char, tail)
        if key in self._shapes:
            return self._shapes[key]
        pool = self.pool
        memo = pool.shared_memo(char)
        if memo is None:
            memo = pool.memo
        memo_key = ("counted char", char)
        found = memo.get(memo_key, False)
        if found is False:
            template = row_template(pool, char) if pool.family is not None and char < pool.family.size \
                else _row_template(pool, char, 1 << 62)
            found = memo[memo_key] = counted_char(pool, char, template)
        shape = None
        if found is not None and not pool.has_bool[tail] and not found.first & pool.first_bytes(tail):
            shape = CountedShape(found, tail)
        self._shapes[key] = shape
        return shape

    def _fill_product(self, state: int, lex: int, found: tuple[ProductGraph, int, int, int, int] | None) -> bool:
        """The row of a state ``(P ∩ r X{a,b}) T`` (a JSON string under a ``pattern`` or
        ``format`` and a length: one item, ``P`` a state of the pattern's row template, ``found``
        from :meth:`_product_entry`) from the rows of ``P`` and ``r``: each target is the pair of
        their targets with the counts of :meth:`_fill_counted`, and dead when no string can end
        within its counts (:meth:`ProductGraph.alive`), without a derivative or an emptiness
        search. ``False`` when ``found`` is ``None``."""
        if found is None:
            return False
        graph, node, low, high, tail = found
        made = graph.row(self.pool, node)
        if made is None:  # the pattern's template or the graph too large
            return False
        j, i = graph.pairs[node]
        eps = graph.char.eps
        if i == eps:  # a new character: X's first row, one count used
            low, high = max(low - 1, 0), high if high == INF else high - 1
        targets, index = made
        local = self._product_targets(lex, graph, targets, low, high, tail)
        row = np.array(local, dtype=np.int32)[index]
        if i == eps and found[2] == 0 and self.pool.nullable[graph.pattern.exprs[j]]:  # P ∩ X{0,b} ends: T may start
            self._tail_entries(row, lex, tail)
        trans = self.trans  # read after the targets: a new state may grow (replace) the table
        trans[state, 1:] = row[1:]  # each entry written once, with its final value (walks run unlocked)
        trans[state, 0] = row[0]
        return True

    def _product_targets(self, lex: int, graph: ProductGraph, targets: tuple[int, ...], low: int, high: int,
                         tail: int) -> list[int]:
        """The states of ``targets`` (nodes of ``graph``, ``-1`` dead) with ``low..high``
        characters after their residuals, each ``(P' ∩ r' X{low,high}) T`` as the derivative
        builds it; the new ones numbered together (:meth:`_number_singles`)."""
        pool = self.pool
        shape = graph.shape
        base = shape.base(pool, low, high)
        patterns, pairs, alive = graph.pattern.exprs, graph.pairs, graph.alive
        nullable = pool.nullable
        plain_tail = tail != EPSILON and not pool._is_star(tail)  # concat(A ∩ B, T) applies no law: interned
        products = self._products
        exprs = []
        for node in targets:
            verdict = False if node < 0 else alive(pool, node, low, high)  # (the derivative's emptiness search,
            if verdict is False:  # answered; None: the graph is too large to answer, the search does)
                exprs.append(EMPTY)
                continue
            j, i = pairs[node]
            counted = shape.state_expr(pool, i, base)
            both = self._plain_and(patterns[j], counted)
            if both is None:  # a law of intersect applies: as a derivative, by the constructors
                d = pool.concat(pool.intersect([patterns[j], counted]), tail)
                exprs.append(EMPTY if verdict is None and pool.is_empty(d) else d)
                continue
            d = pool._intern(K_CONCAT, (both, tail), nullable[both] and nullable[tail], True) if plain_tail \
                else pool.concat(both, tail)
            if verdict is None and pool.is_empty(d):
                exprs.append(EMPTY)
                continue
            if d not in products:
                products[d] = (graph, node, low, high, tail)
            exprs.append(d)
        return self._number_singles(lex, exprs)

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

    def _plain_and(self, pattern: int, counted: int) -> int | None:
        """``pattern ∩ counted`` when :meth:`ExprPool.intersect` would apply no law to it (no
        ε, byte class, star, two repeats, universe or starred superset): the interned
        intersection; ``None`` otherwise."""
        pool = self.pool
        kind = pool.kind
        flag = self._plain_patterns.get(pattern)
        if flag is None:
            flag = self._plain_patterns[pattern] = self._plain_pattern(pattern)
        if not flag or counted <= EPSILON or counted == pattern or kind[counted] == K_BYTES:
            return None
        if kind[counted] == K_REPEAT and (flag == _PLAIN_REPEAT or pool._is_star(counted)):
            return None
        if flag == _PLAIN_STARRED:  # R* T: dropped when counted is h1 … hk T (_drop_starred_supersets);
            tail, e = pool.args[pattern][1], counted  # counted ends with X{a,b}: only if T is one of
            while kind[e] == K_CONCAT and e != tail:  # its suffixes
                e = pool.args[e][1]
            if e == tail:
                return None
        children = (pattern, counted) if pattern < counted else (counted, pattern)
        return pool._intern(K_AND, children, pool.nullable[pattern] and pool.nullable[counted], True)

    def _plain_pattern(self, pattern: int) -> int:
        """What :meth:`_plain_and` needs to know of a pattern state: 0 when ``intersect`` may apply a
        law whatever the other side (ε, ∅, a byte class, the universe, a star),
        ``_PLAIN_STARRED`` for ``R* T``, ``_PLAIN_REPEAT`` for a repeat, else 1."""
        pool = self.pool
        kind = pool.kind[pattern]
        if pattern <= EPSILON or pattern == pool.universal() or kind == K_BYTES or pool._is_star(pattern):
            return 0
        if kind == K_CONCAT and pool._is_star(pool.args[pattern][0]):
            return _PLAIN_STARRED
        return _PLAIN_REPEAT if kind == K_REPEAT else 1

    def _product_entry(self, expr: int) -> tuple[ProductGraph, int, int, int, int] | None:
        """``(graph, node, a, b, T)`` when ``expr`` is ``(P ∩ r X{a,b}) T`` (or without ``T``)
        with ``P`` of at most ``MAX_PATTERN_STATES`` states without intersection or complement,
        ``X`` a character whose rows shift (:meth:`_counted_of`), no byte starting both ``X``
        and ``T``, and ``T`` without intersection or complement; else ``None``."""
        pool = self.pool
        kind, args = pool.kind, pool.args
        both, tail = expr, EPSILON
        if kind[expr] == K_CONCAT:
            both, tail = args[expr]
        if kind[both] != K_AND or len(args[both]) != 2 or pool.has_bool[tail]:
            return None
        for pattern, counted in (args[both], args[both][::-1]):
            if pool.has_bool[pattern]:
                continue
            split = split_counted(pool, counted)
            if split is None or split[4] != EPSILON:
                continue
            heads, char, low, high, _ = split
            if low == 0 and high == INF:  # no count to keep (a pattern with no length): derivatives,
                continue  # which make only the states reached, where a graph is built whole in one mask
            shape = self._counted_of(char, EPSILON)
            if shape is None or shape.char.first & pool.first_bytes(tail):
                continue
            index = shape.char.spine_index.get(heads)
            if index is None or (index == shape.char.eps and high == 0) \
                    or shape.state_expr(pool, index, shape.base(pool, low, high)) != counted:
                continue
            found = self._product_graph(pattern, shape.char, index)
            if found is not None:
                found = self._products[expr] = (*found, low, high, tail)
                return found
        return None

    def _product_graph(self, pattern: int, char: CountedChar, residual: int) -> tuple[ProductGraph, int] | None:
        """``(graph, node)`` of the pair ``(pattern, residual)`` in the :class:`ProductGraph` of
        ``char`` and the :class:`PatternRows` that holds ``pattern`` (a state reached by
        :meth:`fill_entry` is most often one of an earlier pattern state's), else ``pattern``'s
        own; ``None``: too large. Kept in the pool's memo (the pattern is the grammar's own). Both
        are made as strings reach their states (a short value makes few), each template at most
        ``MAX_PATTERN_STATES`` states; after ``MAX_PATTERN_FAILURES`` templates too large in a
        grammar no new one is begun (each cost up to 256 states' derivatives, ~1-10 ms)."""
        memo = self.pool.memo
        found = memo.get(("counted pattern", pattern))
        if found is None:
            if memo.get(("counted pattern failures",), 0) >= MAX_PATTERN_FAILURES:
                return None
            found = (PatternRows(memo, pattern), 0)
        rows, j = found
        if rows.failed:
            return None
        graph = next((g for g in rows.graphs if g.char is char), None)
        if graph is None:
            if len(rows.graphs) >= MAX_PRODUCT_GRAPHS:
                return None
            graph = ProductGraph(rows, char)
            rows.graphs.append(graph)
        node = graph.node((j, residual))
        return None if node is None else (graph, node)

    def _fill_minus_some(self, state: int, lex: int, expr: int) -> bool:
        """The row of ``P ∩ ¬Q1 ∩ ¬Q2 ...`` (one item; a key that is none of an object's declared
        names, after some bytes) from the row of ``P`` alone; ``False`` for other intersections
        or when the ``Qi`` can start with more than ``MINUS_BYTES`` bytes.

        A byte that no ``Qi`` can start with leaves every ``¬Qi`` unconstrained, so the
        derivative is ``P``'s: the target is the one of the state ``{P}``, whose row is computed
        once and shared by every prefix of a key (the JSON string's tail is the same after
        ``"a`` and ``"ab``). Only the bytes the ``Qi`` start with (the next byte of each name
        still possible) take a derivative of the intersection here."""
        pool = self.pool
        kind = pool.kind
        positive = -1
        cut = 0
        names = []  # the Qi
        for child in pool.args[expr]:
            if kind[child] == K_NOT:
                names.append(pool.args[child][0])
                cut |= pool.first_bytes(names[-1])
            elif positive >= 0:
                return False
            else:
                positive = child
        if positive < 0 or cut.bit_count() > MINUS_BYTES:
            return False
        alone = self._state_of(False, ((lex, positive),))
        if self.trans[alone, 0] == UNKNOWN:
            self._fill_single(alone, lex, positive)  # not an intersection: intersections are flat
        row = self.trans[alone].copy()
        for byte in bits_of(cut):
            d = self._minus_derivative(expr, self._derived(positive, int(row[byte]), byte), names, byte)
            row[byte] = DEAD if pool.is_empty(d) else self._state_of(False, ((lex, d),))
        trans = self.trans  # read after the targets: a new state may grow (replace) the table
        trans[state, 1:] = row[1:]  # each entry written once, with its final value (walks run unlocked)
        trans[state, 0] = row[0]
        return True

    def _derived(self, expr: int, target: int, byte: int) -> int:
        """The derivative of ``expr`` by ``byte``, read from ``target``, the state its lexeme
        reaches on ``byte`` from the state of ``expr`` alone (the JSON string's row, from its
        template: no derivative of the string per schema), else computed."""
        if target != DEAD and target != UNKNOWN:
            items = self._items[target]
            if len(items) == 1:
                return items[0][1]
        return self.pool.derivative(expr, byte)

    def _minus_derivative(self, expr: int, derived: int, names: list[int], byte: int) -> int:
        """The derivative of ``expr = P ∩ ¬names[0] ∩ ...`` by ``byte``, given ``P``'s
        (``derived``), with the names' tries derived here: a literal's next byte gives its tail,
        a small alternation of literals the alternation of those tails, without a derivative
        (and its memo entry) per node on the way. Recorded as ``expr``'s derivative."""
        pool = self.pool
        kind, args, first = pool.kind, pool.args, pool.first_bytes
        parts = [derived]
        for name in names:
            if not first(name) >> byte & 1:
                continue  # ¬name derives to everything
            if kind[name] == K_OR and len(args[name]) <= BY_FIRST_MIN:
                d = pool.alt([self._derivative(x, byte) for x in args[name] if first(x) >> byte & 1])
            else:
                d = self._derivative(name, byte)
            parts.append(pool.complement(d))
        d = pool.intersect(parts)
        pool.set_derivative(expr, byte, d)
        return d

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
        found = self._ids.get((False, alive))
        return self._new_state(False, alive) if found is None else found

    def _shadow_step(self, names: int, byte: int) -> int:
        """The derivative of a shadow's names (see :meth:`_shadow_split`) by ``byte``, kept per
        lexer: the same node of the names' trie is in the states of every set of names the
        parser allows (each position of an object's declared names)."""
        key = names << 8 | byte
        found = self._shadow_steps.get(key)
        if found is None:
            tails = self._shadow_tails.get(names)
            if tails is None:
                tails = self._shadow_tails[names] = self._tails_by_byte(names)
            found = self._shadow_steps[key] = self.pool.alt(tails[byte]) if byte in tails else EMPTY
        return found

    def _tails_by_byte(self, names: int) -> dict[int, list[int]]:
        """The derivatives of the alternatives of ``names`` by each byte they start with, in
        one pass: a literal's tail, else its derivative."""
        pool = self.pool
        kind, args = pool.kind, pool.args
        tails: dict[int, list[int]] = {}
        for name in args[names] if kind[names] == K_OR else (names,):
            if kind[name] == K_CONCAT and kind[args[name][0]] == K_BYTES:
                head, tail = args[name]
                bits = args[head][0]
                if bits & (bits - 1) == 0:  # a literal's next byte (most often)
                    found = tails.get(bits.bit_length() - 1)
                    if found is None:
                        tails[bits.bit_length() - 1] = [tail]
                    else:
                        found.append(tail)
                    continue
                for byte in bits_of(bits):
                    tails.setdefault(byte, []).append(tail)
            elif kind[name] == K_BYTES:
                for byte in bits_of(args[name][0]):
                    tails.setdefault(byte, []).append(EPSILON)
            else:
                for byte in bits_of(pool.first_bytes(name)):
                    tails.setdefault(byte, []).append(pool.derivative(name, byte))
        return tails

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
            parts = _split_off(parts, singles)
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


def row_template(pool: ExprPool, expr: int) -> tuple[tuple[int, ...], np.ndarray, bool] | None:
    """The rows of the single-lexeme states that ``expr`` reaches, in terms of expressions
    only: ``(exprs, table, root_reached)`` where ``exprs[0]`` is ``expr``, ``table[i, b]`` is
    ``1 + j`` for the state of ``exprs[j]`` after byte ``b`` from ``exprs[i]`` (0: dead), and
    ``root_reached`` says whether some byte leads back to ``expr``. Kept in the pool family's
    shared memo, so only for expressions of the family whose derivatives are all of the family
    too (the JSON Schema base pool warms its lexemes' derivatives); in a pool without a family
    (Lark, GBNF) in the pool's own memo, made at the second request for ``expr`` (lexemes that
    end the same way, each GBNF lexeme ending in ``ws``, then share the rows of their common
    tail; a tail asked for once is filled row by row, as reached). With no intersection or
    complement (a dead target is then exactly an empty derivative) and at most
    ``MAX_TEMPLATE_STATES`` states (``MAX_FAMILY_TEMPLATE_STATES`` in a family's memo: the
    flexible whitespace run has 120); ``None`` otherwise."""
    key = ("lexer row template", expr)
    if pool.family is None:  # a Lark or GBNF grammar's own pool: made at the second request
        found = pool.memo.get(key, _UNSEEN)
        if found is _UNSEEN:  # rows one at a time, as reached, for a tail no other state shares
            pool.memo[key] = _SEEN_ONCE
            return None
        if found is _SEEN_ONCE:
            found = pool.memo[key] = _row_template(pool, expr, 1 << 62)
        return found
    memo = pool.shared_memo(expr)
    if memo is None:
        return None
    found = memo.get(key, False)
    if found is False:
        found = memo[key] = _row_template(pool, expr, pool.family.size, MAX_FAMILY_TEMPLATE_STATES)
    return found


@dataclass(frozen=True)
class LexerBlock:
    """The single-lexeme states of some family lexemes (``roots``) and of all they reach, as
    states ``1..size`` of a lexer: state ``s`` holds ``(lexeme of its root, exprs[s - 1])``, the
    states of each root in turn (``segments``); ``trans`` their rows (targets in ``1..size``, ``DEAD``); ``ends`` the states
    where the lexeme can end, ``end_root`` its index in ``roots``. What a lexer's ``acc_*``
    entries of these states need beyond the lexemes' ids is here too, whatever ids the
    grammar gives the roots' lexemes: ``acc`` (``accepting``, ``acc_start``, ``acc_len`` and
    ``acc_id`` of states ``0..size + PUNCTUATION_ROOM + BLOCK_SPARE - 1``), ``end_roots`` (the roots that end
    somewhere, ascending: the list of the ``r``-th of them has id ``r + 1``) and
    ``segment_ends`` (per segment, the indices of its states where the lexeme ends)."""

    roots: tuple[int, ...]
    segments: tuple[tuple[int, ...], ...]  # per root, the expressions of its states, in order
    exprs: tuple[int, ...]
    trans: np.ndarray
    ends: np.ndarray
    end_root: np.ndarray
    acc: tuple[np.ndarray, ...]
    end_roots: tuple[int, ...]
    segment_ends: tuple[tuple[int, ...], ...]

    @property
    def size(self) -> int:
        return len(self.exprs)


def family_block(pool: ExprPool, roots: tuple[int, ...]) -> LexerBlock | None:
    """The :class:`LexerBlock` of the family lexemes ``roots`` (sorted expressions of ``pool``'s
    family), made from their row templates (a root without one is left out) and kept in the
    family's memo: at most ``MAX_FAMILY_BLOCKS`` sets of lexemes per family (JSON schemas use a
    handful: strings, numbers, integers, whitespace, punctuation); past that, ``None``."""
    family = pool.family
    if family is None:
        return None
    blocks = family.memo.get(("lexer blocks",))
    if blocks is None:
        with _BLOCKS_LOCK:
            blocks = family.memo.setdefault(("lexer blocks",), {})
    found = blocks.get(roots, False)
    if found is False:
        if len(blocks) >= MAX_FAMILY_BLOCKS:
            return None
        with pool.lock:
            found = _family_block(pool, roots)
        with _BLOCKS_LOCK:
            if len(blocks) < MAX_FAMILY_BLOCKS:
                found = blocks.setdefault(roots, found)
    return found


def _family_block(pool: ExprPool, roots: tuple[int, ...]) -> LexerBlock | None:
    kept, root_index, exprs, tables, segments = [], [], [], [], []
    for root in roots:
        template = row_template(pool, root)
        if template is None:
            continue
        template_exprs, table, _ = template
        offset = len(exprs)  # template state j is block state offset + 1 + j: table entry 1 + j
        tables.append(np.where(table > 0, table + offset, DEAD).astype(np.int32))
        root_index.extend([len(kept)] * len(template_exprs))
        segments.append(template_exprs)
        exprs.extend(template_exprs)
        kept.append(root)
    if not exprs:
        return None
    nullable = pool.nullable
    ends = np.array([s for s, e in enumerate(exprs, 1) if nullable[e]], dtype=np.intp)
    end_root = np.array([root_index[s - 1] for s in ends.tolist()], dtype=np.intp)
    trans = np.concatenate(tables)
    end_roots = tuple(sorted(set(end_root.tolist())))
    acc = tuple(np.zeros(len(exprs) + PUNCTUATION_ROOM + BLOCK_SPARE, dtype=dtype) for dtype in (np.int8, np.int32, np.int32, np.int32))
    accepting, acc_start, acc_len, acc_id = acc
    accepting[ends] = 1
    acc_start[ends] = np.arange(ends.shape[0], dtype=np.int32)
    acc_len[ends] = 1
    rank = {r: k for k, r in enumerate(end_roots, 1)}  # the id of [lexeme of root r] in every lexer
    acc_id[ends] = [rank[r] for r in end_root.tolist()]
    segment_ends = [tuple(j for j, e in enumerate(template_exprs) if nullable[e]) for template_exprs in segments]
    for array in (trans, ends, end_root, *acc):
        array.flags.writeable = False
    return LexerBlock(tuple(kept), tuple(segments), tuple(exprs), trans, ends, end_root, acc, end_roots,
                      tuple(segment_ends))


def literal_tails(pool: ExprPool, expr: int, byte_of: dict[int, int]) -> tuple[list[int], list[int]] | None:
    """``(tails, path)`` when ``expr`` is a literal of ``pool`` (:meth:`Lexer._literal_tails`);
    ``byte_of`` caches a class of bytes' byte (-1: not one byte)."""
    kind, args = pool.kind, pool.args
    tails: list[int] = []
    path: list[int] = []
    while True:
        literal = kind[expr] == K_CONCAT
        head = args[expr][0] if literal else expr
        byte = byte_of.get(head)
        if byte is None:
            bits = args[head][0] if kind[head] == K_BYTES else 0
            byte = byte_of[head] = bits.bit_length() - 1 if bits and not bits & (bits - 1) else -1
        if byte < 0:
            return None
        path.append(byte)
        if not literal:  # its last byte
            tails.append(EPSILON)
            return tails, path
        expr = args[expr][1]
        tails.append(expr)


def set_up_chains(pool: ExprPool) -> dict[int, tuple[int, tuple[int, ...], tuple[int, ...]]]:
    """``expr -> (expr, tails, path)`` of the literals that ``pool``'s family names in
    ``PoolFamily.set_up`` (outside the family but in its base pool: the same ids in every copy),
    which every lexer of the family lays out with its block (:meth:`Lexer._punctuation`);
    made once per family, kept in its memo under ``SET_UP_LITERALS``."""
    family = pool.family
    chains = family.memo.get(SET_UP_LITERALS)
    if chains is None:
        chains = {}
        for expr in family.set_up:
            found = literal_tails(pool, expr, {}) if family.size <= expr < family.base_size else None
            if found is not None:
                chains[expr] = (expr, tuple(found[0]), tuple(found[1]))
        chains = family.memo.setdefault(SET_UP_LITERALS, chains)
    return chains


@dataclass(frozen=True)
class PunctuationRows:
    """The rows (``trans``) of the states :meth:`Lexer._lay_out_punctuation` numbers after a
    family block, and the ``acc_*`` arrays of the block and of them together (``acc``, as
    :attr:`LexerBlock.acc`), whatever the ids of the literals' lexemes
    (:func:`punctuation_rows`)."""

    trans: np.ndarray
    acc: tuple[np.ndarray, ...]


def punctuation_rows(pool: ExprPool, block: LexerBlock,
                     punctuation: list[tuple[int, tuple[int, tuple[int, ...], tuple[int, ...]]]]) -> PunctuationRows:
    """The :class:`PunctuationRows` of the literals ``punctuation`` (``(lexeme, (expr, tails,
    path))`` each, in lexeme order: :meth:`Lexer._punctuation`; the lexemes' ids do not matter)
    laid out after ``block``: per literal the fresh state of its lexeme alone, then the state
    after each byte, each row ``DEAD`` but for the next byte; their lexemes' entries of
    ``acc_pool`` after the block's, their list ids after the block's. Kept in ``pool``'s family
    memo, at most ``MAX_PUNCTUATION_ROWS`` (one per block and set of JSON tokens a grammar
    spells: 36 over 100 schemas of the dev set)."""
    key = (block.roots, *[chain[0] for _, chain in punctuation])
    family = pool.family
    kept = family.memo.get(("punctuation rows",))
    if kept is None:
        with _BLOCKS_LOCK:
            kept = family.memo.setdefault(("punctuation rows",), {})
    found = kept.get(key)
    if found is None:
        found = _punctuation_rows(block, [chain for _, chain in punctuation])
        if len(kept) < MAX_PUNCTUATION_ROWS:
            with _BLOCKS_LOCK:
                found = kept.setdefault(key, found)
    return found


def _punctuation_rows(block: LexerBlock, chains: list[tuple[int, tuple[int, ...], tuple[int, ...]]]) -> PunctuationRows:
    first = block.size + 1
    used = block.ends.shape[0]  # the acc_pool entries and list ids of the block's lexemes come first
    first_id = 1 + len(block.end_roots)
    count = sum(1 + len(tails) for _, tails, _ in chains)
    trans = np.full((count, 256), DEAD, dtype=np.int32)
    acc = tuple(array.copy() for array in block.acc)
    accepting, acc_start, acc_len, acc_id = acc
    state = first
    for k, (_, _, path) in enumerate(chains):
        for byte in path:
            trans[state - first, byte] = state + 1
            state += 1
        accepting[state] = 1
        acc_start[state] = used + k
        acc_len[state] = 1
        acc_id[state] = first_id + k
        state += 1
    for array in (trans, *acc):
        array.flags.writeable = False
    return PunctuationRows(trans, acc)


@functools.lru_cache(maxsize=4096)
def _literal_states(lex: int, chain: tuple[int, tuple[int, ...], tuple[int, ...]], first: int, start: int, list_id: int
                    ) -> tuple[list[Items], list[bool], dict[tuple[bool, Items], int], list[tuple[int, ...]],
                               tuple[tuple[int, ...], int, int, int]]:
    """For :meth:`Lexer._lay_out_punctuation`: the states of literal lexeme ``lex`` (its
    ``(expr, tails, path)``: :meth:`Lexer._punctuation`) numbered from ``first``, the fresh
    state of the lexeme alone and then the state after each byte: their items, fresh flags,
    ``_ids`` entries, ``_accepted`` entries (``(lex,)`` at the end) and the slot of ``(lex,)``
    (``Lexer._acc_slots``) at ``start`` in ``acc_pool``, with list id ``list_id``. Not
    modified by the lexers."""
    expr, tails, _ = chain
    items: list[Items] = [((lex, expr),)]
    items.extend([((lex, tail),) for tail in tails])
    fresh = [True] + [False] * len(tails)
    accepted: list[tuple[int, ...]] = [()] * len(tails)
    accepted.append((lex,))
    ids = {key: state for state, key in enumerate(zip(fresh, items), first)}
    return items, fresh, ids, accepted, ((lex,), start, list_id, 0)


@functools.lru_cache(maxsize=4096)
def _segment_states(exprs: tuple[int, ...], ends: tuple[int, ...], lex: int,
                    first: int) -> tuple[list[Items], dict[tuple[bool, Items], int], list[tuple[int, ...]]]:
    """The items of the block states ``exprs`` of lexeme ``lex``, numbered from ``first``,
    their entries in ``Lexer._ids`` and in ``Lexer._accepted`` (``(lex,)`` at the indices
    ``ends``): the lexeme ids of a root recur across schemas, and a segment starts at the same
    state in every lexer of its block, so these are made once, not per grammar (a dict merges
    into ``_ids`` without hashing its keys again). Neither is modified by the lexers."""
    items = [((lex, e),) for e in exprs]
    accepted: list[tuple[int, ...]] = [()] * len(exprs)
    for j in ends:
        accepted[j] = (lex,)
    return items, {(False, item): state for state, item in enumerate(items, first)}, accepted


def _row_template(pool: ExprPool, expr: int, size: int,
                  max_states: int = MAX_TEMPLATE_STATES) -> tuple[tuple[int, ...], np.ndarray, bool] | None:
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
        rows.append(np.array(targets, dtype=np.int32)[class_index(parts)])
    table = np.stack(rows)
    table.flags.writeable = False
    return tuple(exprs), table, root_reached


def _write_rows(trans: np.ndarray, states: list[int], sources: list[int], rows: np.ndarray) -> None:
    """``trans[states[i]] = rows[sources[i]]`` for each ``i``: every entry written once, with its
    final value, and column 0 (the "row known" marker) after the others (walks run unlocked). The
    states after the first are most often new, numbered in a row, with their rows in order: then
    slices, a third of the cost of fancy indexing."""
    head, rest = states[0], states[1:]
    count = len(rest)
    first = sources[1] if count else 0
    if not count or (rest == list(range(rest[0], rest[0] + count)) and sources[1:] == list(range(first, first + count))):
        source = sources[0]
        trans[head, 1:] = rows[source, 1:]
        if count:
            trans[rest[0]:rest[0] + count, 1:] = rows[first:first + count, 1:]
        trans[head, 0] = rows[source, 0]
        if count:
            trans[rest[0]:rest[0] + count, 0] = rows[first:first + count, 0]
        return
    where = np.array(states, dtype=np.intp)
    take = np.array(sources, dtype=np.intp)
    trans[where, 1:] = rows[take, 1:]
    trans[where, 0] = rows[take, 0]


def _split_off(parts: tuple[int, ...], singles: int) -> tuple[int, ...]:
    """``parts`` with each byte of ``singles`` made a class of its own (sorted)."""
    out = []
    for part in parts:
        rest = part & ~singles
        if rest:
            out.append(rest)
        inside = part & singles
        while inside:
            low = inside & -inside
            out.append(low)
            inside ^= low
    return tuple(sorted(out))


def _is_literal_set(pool: ExprPool, expr: int, limit: int = LITERAL_SET_NODES) -> bool:
    """Whether ``expr`` is a set of literal byte strings written with single bytes,
    concatenations and alternations only (an object's declared names), within ``limit`` nodes.
    The shadow (:meth:`Lexer._shadow_split`) steps such a set by a literal step per byte. A
    finite set written otherwise (a ``patternProperties`` pattern with a length bound, such as
    ``^[a-zA-Z0-9_-]{0,250}$``) makes each step a derivative of a class-and-repeat expression,
    slower than the intersection it replaces: o64731's first mask went from 7 to 29 ms."""
    kind, args = pool.kind, pool.args
    seen = set()
    todo = [expr]
    while todo:
        node = todo.pop()
        if node in seen or node == EPSILON:
            continue
        seen.add(node)
        if len(seen) > limit:
            return False
        k = kind[node]
        if k == K_BYTES:
            byte_class = args[node][0]
            if byte_class & (byte_class - 1):
                return False
        elif k == K_CONCAT or k == K_OR:
            todo.extend(args[node])
        else:
            return False
    return True
