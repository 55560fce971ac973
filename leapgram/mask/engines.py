"""The two ways a compiled grammar follows the output and computes masks.

Both expose the same small interface to :class:`leapgram.compiler.CompiledGrammar`:
``initial`` (the start state), ``advance(state, data)`` (the state after some bytes, ``None`` when
they are not allowed), ``is_accepting(state)``, ``mask_key(state)`` (a hashable key for the mask
cache), ``fill_mask(state, mask)`` (OR the allowed tokens, EOS excluded, into uint32 words) and
``new_mask(state, key)`` (the same into a new array, given the state's ``mask_key``).

* :class:`RegexEngine`: one lexeme, no parser; a state is a DFA state.
* :class:`CfgEngine`: lexer plus Earley parser; a state is ``(chart arena, chart, lexer state)``.
"""

from __future__ import annotations

import sys

import numpy as np

from .._kernels.cfg_walk import (
    DONE,
    MISSING_ROW,
    MISSING_ROW_AFTER_STEP,
    advance_cfg_kernel,
    lexeme_walk_kernel,
    walk_cfg_kernel,
    walk_frontier_kernel,
)
from .._kernels.earley import NEED_FRESH
from .._kernels.entry import DirectKernel
from ..bitmask import bitmask_words
from ..grammar.ir import GrammarIR
from ..limits import Limits
from ..parser.arena import ChartArena, ParserTables
from ..parser.lexer import Lexer
from ..regex.dfa import DEAD, UNKNOWN, LazyDfa
from ..vocab.trie import TokenTrie
from .slicer import SliceChecker
from .walk import fill_dfa_mask, fill_rows_down

CfgState = tuple[ChartArena, int, int]
_WALK_KERNEL = DirectKernel(walk_cfg_kernel)  # the mask walks over TokenTrie arrays: always the same types
# CfgEngine.advance: ``bytes``, the lexer's and the arena's arrays, integers: always the same types
_ADVANCE_KERNEL = DirectKernel(advance_cfg_kernel)
_LEXEME_WALK = DirectKernel(lexeme_walk_kernel)  # TokenTrie arrays, a lexer's views: always the same types
_FRONTIER_WALK = DirectKernel(walk_frontier_kernel)  # as _WALK_KERNEL
# CfgEngine._lexeme_walks: a walk start whose lexeme walk met a row not computed, and one not kept (see _lexeme_walk)
_SEEN, _NOT_KEPT = 1, 0
LEXEME_WALKS = 1024  # walk starts (trie, lexer state) a grammar remembers
LEXEME_WALK_ITEMS = 1 << 20  # tokens and frontier nodes a grammar keeps over all its lexeme walks
LEXEME_WALK_CAP = 8192  # tokens, or frontier nodes, of one lexeme walk


class RegexEngine:
    """A grammar that is one regular expression: the lazy DFA is the whole state."""

    def __init__(self, ir: GrammarIR, trie: TokenTrie, limits: Limits, slicer_source) -> None:
        self.dfa = LazyDfa(ir.pool, ir.start_expr, limits)
        self.trie = trie
        self.initial = self.dfa.initial
        self._widened: dict[int, int] = {}
        self.slicer = None
        if slicer_source is not None:
            dfa = self.dfa  # captured alone: a closure over self would make a reference cycle
            self.slicer = SliceChecker(ir.pool, lambda s: (dfa.expr_of(s),), slicer_source)

    def start(self) -> tuple[int, None]:
        """The start state, and no lease (see :meth:`CfgEngine.start`)."""
        return self.initial, None

    def advance(self, state: int, data: bytes) -> int | None:
        state = self.dfa.run(state, data)
        return None if state == DEAD else state

    def is_accepting(self, state: int) -> bool:
        return self.dfa.is_accepting(state)

    def mask_key(self, state: int) -> int:
        return self.widened(state)

    def state_key(self, state: int) -> int:
        """Equal for states with the same future (see ``Matcher.state_key``): the DFA state."""
        return state

    def widened(self, state: int) -> int:
        """The state masks are walked from: the same tokens are allowed (a token has at most
        ``trie.max_depth`` bytes), with repeat counts beyond that forgotten
        (:meth:`ExprPool.widened`), so the positions inside a long counted repeat share it."""
        found = self._widened.get(state)
        if found is None:
            dfa = self.dfa
            with dfa.pool.lock:
                found = dfa.state_of(dfa.pool.widened(dfa.expr_of(state), self.trie.max_depth))
            self._widened[state] = found
        return found

    def fill_mask_over(self, state: int, trie, mask: np.ndarray) -> None:
        """:meth:`fill_mask` over another trie (a re-rooted sub-trie for token healing, see
        :mod:`leapgram.mask.prefix`), without the slicer."""
        fill_dfa_mask(trie, self.dfa, state, mask, np.zeros(trie.max_depth + 1, dtype=np.int32))

    def fill_mask(self, state: int, mask: np.ndarray) -> None:
        mask |= self.new_mask(state, self.mask_key(state))

    def new_mask(self, state: int, key: int) -> np.ndarray:
        """The mask of ``state`` (EOS excluded) in a new uint32 array; ``key`` is its
        :meth:`mask_key`, the widened state the walk starts from."""
        union, tries = (None, (self.trie,)) if self.slicer is None else self.slicer.split(key, self.trie)
        mask = np.zeros(bitmask_words(self.trie.vocab_size), dtype=np.uint32) if union is None else union.copy()
        stack = np.zeros(self.trie.max_depth + 1, dtype=np.int32)
        for trie in tries:
            fill_dfa_mask(trie, self.dfa, key, mask, stack)
        return mask


class CfgEngine:
    """A context-free grammar: the lexer DFA plus Earley charts, walked together.

    The lexer and the parser tables are shared by every matcher of the compiled grammar; each
    matcher gets its own :class:`ChartArena` (``initial`` makes a new one), so a state is
    ``(arena, chart id, lexer state)``.
    """

    def __init__(self, ir: GrammarIR, trie: TokenTrie, limits: Limits, slicer_source, *,
                 use_leo: bool = True) -> None:
        self.lexer = Lexer(ir, limits)
        self.tables = ParserTables(ir)
        self.limits = limits
        self.trie = trie
        self.use_leo = use_leo
        self._spare: list[ChartArena] = []
        self._widened: dict[int, int] = {}  # lexer.widened(state, trie.max_depth), one dict lookup per mask
        self._walks = 0  # masks walked, counted up to 2 (see new_mask)
        self._words = bitmask_words(trie.vocab_size)
        self._lexeme_walks: dict[tuple[TokenTrie, int], tuple[np.ndarray, np.ndarray] | int] = {}  # see _lexeme_walk
        self._lexeme_walk_items = 0
        self.lexeme_walk_bytes = 0  # of the walks kept: memory_of counts them
        self.slicer = None
        if slicer_source is not None:
            self.slicer = SliceChecker(ir.pool, self.lexer.slice_exprs, slicer_source)  # (no reference to self: no cycle)

    @property
    def initial(self) -> CfgState:
        """The start state, in a new arena of charts."""
        arena = ChartArena(self.tables, self.lexer, self.limits, use_leo=self.use_leo)
        return arena, 0, arena.fresh_of(0)

    def start(self) -> tuple[CfgState, ArenaLease]:
        """The start state in an arena a finished matcher gave back, if any, else in a new one;
        and the lease that gives it back once the caller (a matcher and its forks) drops it.

        Charts only grow and never change, so a later matcher can start from chart 0 of a used
        arena: the charts, lexeme boundaries and fresh lexer states the earlier ones computed are
        found again instead of recomputed (a server sees the same schema's prefixes many times).
        An arena is reused only after its lease is gone, so it is never shared between threads."""
        try:
            arena = self._spare.pop()
        except IndexError:
            arena = ChartArena(self.tables, self.lexer, self.limits, use_leo=self.use_leo)
        return (arena, 0, arena.fresh_of(0)), ArenaLease(arena, self._spare, self.limits.max_parse_items // 64)

    def advance(self, state: CfgState, data: bytes, _locked: bool = False) -> CfgState | None:
        arena, chart, lex = state
        if arena.lock is not None and not _locked:  # a shared arena: forks take turns (see ChartArena)
            with arena.lock:
                return self.advance(state, data, True)
        if not data:
            return state
        if data.__class__ is not bytes:  # one argument type for the direct entry (see _ADVANCE_KERNEL)
            data = bytes(data)
        start = 0
        lexer = self.lexer
        kernel = _ADVANCE_KERNEL.call
        while True:
            index, code, payload, chart, lex = kernel(data, lexer.views, self.tables.grammar_views, arena.views,
                                                      self.limits.max_earley_items, self.use_leo, chart, lex, start)
            if index < 0:
                return None
            if code == DONE:
                return arena, int(chart), int(lex)
            start = index
            if code == MISSING_ROW:  # one entry: the rows of the states text passes through are rarely walked
                lexer.fill_entry(int(lex), data[index])
            elif code == MISSING_ROW_AFTER_STEP:
                lexer.fill_entry(int(payload) & 0xFFFFFFFF, data[index])
            else:
                arena.handle(code, payload)

    def is_accepting(self, state: CfgState) -> bool:
        arena, chart, lex = state
        if lex == DEAD or self.lexer.is_fresh(lex):
            return arena.accepting(chart)
        ended = self.boundary(state)
        return ended is not None and arena.accepting(ended[0])

    def boundary(self, state: CfgState) -> tuple[int, int] | None:
        """:meth:`ChartArena.boundary` of the state's chart and lexer state (under the arena's lock)."""
        arena, chart, lex = state
        if arena.lock is None:
            return arena.boundary(chart, lex)
        with arena.lock:
            return arena.boundary(chart, lex)

    def allowed_lexemes(self, state: CfgState) -> frozenset[int]:
        """The lexemes the parser allows to start at the state's chart."""
        arena, chart, _ = state
        return arena.allowed_lexemes(chart)

    def state_key(self, state: CfgState) -> tuple[int, int, int]:
        """Equal for states with the same future, in any arena (see ``Matcher.state_key``):
        the chart's fingerprints and the lexer state."""
        arena, chart, lex = state
        fps = arena.fps
        return fps.item(chart, 0), fps.item(chart, 1), lex

    def mask_key(self, state: CfgState) -> tuple[int, int, int]:
        """The chart's fingerprints and the widened lexer state (the one masks are walked from:
        a token has at most ``trie.max_depth`` bytes): equal for states of any matcher that have
        the same future, so they share one cached mask (see ``ChartArena.fingerprint``)."""
        arena, chart, lex = state
        wide = self._widened.get(lex)
        if wide is None:
            wide = self._widened[lex] = self.lexer.widened(lex, self.trie.max_depth)
        fps = arena.fps
        return fps.item(chart, 0), fps.item(chart, 1), wide

    def fill_mask_over(self, state: CfgState, trie, mask: np.ndarray) -> None:
        """:meth:`fill_mask` over another trie (a re-rooted sub-trie for token healing, see
        :mod:`leapgram.mask.prefix`), without the slicer."""
        arena, chart, lex = state
        stack = np.zeros(trie.max_depth + 1, dtype=np.int64)
        if arena.lock is None:
            self._walk(trie, arena, chart, lex, mask, stack)
            return
        with arena.lock:
            self._walk(trie, arena, chart, lex, mask, stack)

    def fill_mask(self, state: CfgState, mask: np.ndarray) -> None:
        mask |= self.new_mask(state, self.mask_key(state))

    def new_mask(self, state: CfgState, key: tuple[int, int, int], _locked: bool = False) -> np.ndarray:
        """The mask of ``state`` (EOS excluded) in a new uint32 array; ``key`` is its
        :meth:`mask_key`, whose last field is the lexer state the walk starts from."""
        arena, chart, _ = state
        if arena.lock is not None and not _locked:  # a shared arena: forks take turns (see ChartArena)
            with arena.lock:
                return self.new_mask(state, key, True)
        lex = key[2]
        if self._walks < 2:  # no lock: threads may lose or add increments (tests/mask/test_walk_counter.py)
            self._walks += 1
            if self._walks >= 2:  # not in the first mask: it is in the time to first mask
                self.lexer.lay_out_literals()
        union, tries = None, (self.trie,)
        if self.slicer is not None and lex != DEAD:
            trans = self.lexer.trans
            if trans.item(lex, 0) == UNKNOWN:  # what the walk's first call would ask for
                fill_rows_down(self.trie, self.lexer, 1, lex)
                trans = self.lexer.trans
            probe = self.slicer.probe_bytes
            if probe is None or (trans.item(lex, probe[0]) != DEAD and trans.item(lex, probe[1]) != DEAD):
                union, tries = self.slicer.split(lex, self.trie)  # (else no slice is contained: see probe_bytes)
        mask = np.zeros(self._words, dtype=np.uint32) if union is None else union.copy()
        stack = arena.walk_stack
        if stack.shape[0] <= self.trie.max_depth:  # every trie walked is a subset of this one
            stack = arena.walk_stack = np.zeros(self.trie.max_depth + 1, dtype=np.int64)
        kernel = _WALK_KERNEL.call
        for trie in tries:
            known = None if union is None else self._lexeme_walk(trie, lex, stack)
            if known is None:
                self._walk(trie, arena, chart, lex, mask, stack, kernel)
            else:
                self._walk_frontier(trie, arena, chart, known, mask, stack)
        return mask

    def _lexeme_walk(self, trie: TokenTrie, lex: int, stack: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """The lexeme walk of ``lex`` over ``trie`` (:func:`lexeme_walk_kernel`: the tokens that
        stay inside one lexeme and the frontier where lexemes end), kept when it is well under
        the nodes it visits; else ``None``. Made the first time a mask is walked from there, and
        once more if a row it needs was not computed then. Rows are never rewritten, so it stays
        right for every chart. Bounded: ``LEXEME_WALKS`` walk starts, ``LEXEME_WALK_ITEMS``
        entries in all."""
        key = (trie, lex)
        known = self._lexeme_walks.get(key)
        if known.__class__ is tuple:
            return known
        if known == _NOT_KEPT or len(self._lexeme_walks) >= LEXEME_WALKS:
            return None
        tokens = np.empty(LEXEME_WALK_CAP, dtype=np.int32)
        frontier = np.empty(2 * LEXEME_WALK_CAP, dtype=np.int64)
        n_tokens, n_frontier, visits = _LEXEME_WALK.call(trie.node_info, trie.node_end, self.lexer.views, stack, lex,
                                                         tokens, frontier)
        if n_tokens < 0:  # a row not computed yet (the whole walk computes it), or an output full
            self._lexeme_walks[key] = _NOT_KEPT if known == _SEEN else _SEEN
            return None
        kept = n_tokens + n_frontier
        if visits < 2 * kept + 64 or self._lexeme_walk_items + kept > LEXEME_WALK_ITEMS:
            self._lexeme_walks[key] = _NOT_KEPT
            return None
        self._lexeme_walk_items += kept
        known = self._lexeme_walks[key] = (tokens[:n_tokens].copy(), frontier[:2 * n_frontier].copy())
        self.lexeme_walk_bytes += known[0].nbytes + known[1].nbytes
        return known

    def _walk_frontier(self, trie: TokenTrie, arena: ChartArena, chart: int, known: tuple[np.ndarray, np.ndarray],
                       mask: np.ndarray, stack: np.ndarray) -> None:
        """Walk ``trie`` into ``mask`` from ``chart`` and the lexer state of the lexeme walk
        ``known`` (:func:`walk_frontier_kernel`), resumed where it stopped after each thing filled."""
        tokens, frontier = known
        grammar, max_row, use_leo = self.tables.grammar_views, self.limits.max_earley_items, self.use_leo
        where = np.zeros(2, dtype=np.int64)
        while True:
            start, code, payload = _FRONTIER_WALK.call(trie.node_info, trie.node_end, trie.dup_primary,
                                                       trie.dup_other, self.lexer.views, grammar, arena.views,
                                                       max_row, use_leo, stack, chart, tokens, frontier, where, mask)
            if code == DONE:
                if payload:
                    arena.tidy()
                return
            self._fill_missing(trie, arena, stack, start, code, payload)

    def _walk(self, trie: TokenTrie, arena: ChartArena, chart: int, lex: int, mask: np.ndarray,
              stack: np.ndarray, kernel=walk_cfg_kernel) -> None:
        """Walk ``trie`` from ``(chart, lex)`` into ``mask`` (uint32 words; ``stack`` int64).
        ``kernel`` may be the direct entry of ``_WALK_KERNEL`` only for the tries of
        :class:`TokenTrie` (the vocabulary's and its slices'), whose array types never change."""
        stack[0] = (chart << 32) | lex
        start = 1
        lexer = self.lexer
        if trie.num_nodes > 1 and lexer.trans.item(lex, trie.node_byte.item(1)) == UNKNOWN:
            fill_rows_down(trie, lexer, 1, lex)  # what the kernel's first call would ask for (a new state)
        node_info, node_end, dup_primary, dup_other = trie.node_info, trie.node_end, trie.dup_primary, trie.dup_other
        grammar, max_row, use_leo = self.tables.grammar_views, self.limits.max_earley_items, self.use_leo
        while True:
            start, code, payload = kernel(node_info, node_end, dup_primary, dup_other, lexer.views, grammar,
                                          arena.views, max_row, use_leo, stack, start, mask)
            if code == DONE:
                if payload:  # a memo table past a quarter full (the kernel's test of ChartArena.tidy)
                    arena.tidy()
                return
            self._fill_missing(trie, arena, stack, start, code, payload)

    def _fill_missing(self, trie: TokenTrie, arena: ChartArena, stack: np.ndarray, node: int, code: int,
                      payload: int) -> None:
        """What a walk kernel stopped at ``node`` for (``code``, ``payload``): a lexer row, a
        fresh state or a parser request."""
        if code == MISSING_ROW:
            fill_rows_down(trie, self.lexer, node, stack.item(trie.node_depth.item(node) - 1) & 0xFFFFFFFF)
        elif code == MISSING_ROW_AFTER_STEP:
            fill_rows_down(trie, self.lexer, node, int(payload) & 0xFFFFFFFF)
        elif code == NEED_FRESH:  # the fresh state's row is the next thing the kernel asks for
            fill_rows_down(trie, self.lexer, node, arena.fresh_of(int(payload)))
        else:
            arena.handle(code, payload)


class ArenaLease:
    """Held by a matcher and its forks; when the last of them is gone, the chart arena goes back
    to its engine for the next matcher, unless it holds more than ``max_items`` Earley items
    (the next matcher's budget, ``Limits.max_parse_items``, counts them) or a spare is there."""

    __slots__ = ("arena", "max_items", "spare")
    SPARES = 1  # per compiled grammar: a few MB at most, times the 64 cached grammars

    def __init__(self, arena: ChartArena, spare: list[ChartArena], max_items: int) -> None:
        self.arena = arena
        self.spare = spare
        self.max_items = max_items

    def __del__(self, _finalizing=sys.is_finalizing) -> None:  # bound here: at exit the module's sys may be None
        if _finalizing():  # at interpreter exit numpy may already be half torn down
            return
        if len(self.spare) < self.SPARES and self.arena.num_items <= self.max_items:
            self.arena.release()  # the next matcher holds it alone: no lock
            self.spare.append(self.arena)
