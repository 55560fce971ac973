"""The two ways a compiled grammar follows the output and computes masks.

Both expose the same small interface to :class:`leapgram.compiler.CompiledGrammar`:
``initial`` (the start state), ``advance(state, data)`` (the state after some bytes, ``None`` when
they are not allowed), ``is_accepting(state)``, ``mask_key(state)`` (a hashable key for the mask
cache) and ``fill_mask(state, mask)`` (OR the allowed tokens, EOS excluded, into uint32 words).

* :class:`RegexEngine`: one lexeme, no parser; a state is a DFA state.
* :class:`CfgEngine`: lexer plus Earley parser; a state is ``(chart, lexer state)``.
"""

from __future__ import annotations

import weakref

import numpy as np

from .._kernels.cfg_walk import (
    DONE,
    EMPTY_KEY,
    MISSING_ROW,
    MISSING_STEP,
    NO_CHILD,
    table_get_kernel,
    table_rehash_kernel,
    table_slot_kernel,
    walk_cfg_kernel,
)
from .._kernels.trie_walk import copy_duplicate_bits_kernel
from ..grammar.ir import GrammarIR
from ..limits import Limits
from ..parser.earley import EarleyParser, ParserNode
from ..parser.lexer import Lexer
from ..regex.dfa import DEAD, LazyDfa
from ..vocab.trie import TokenTrie
from .slicer import SliceChecker
from .walk import fill_dfa_mask

CfgState = tuple[ParserNode, int]


class RegexEngine:
    """A grammar that is one regular expression: the lazy DFA is the whole state."""

    def __init__(self, ir: GrammarIR, trie: TokenTrie, limits: Limits, slicer_source) -> None:
        self.dfa = LazyDfa(ir.pool, ir.start_expr, limits)
        self.trie = trie
        self.initial = self.dfa.initial
        self.slicer = None
        if slicer_source is not None:
            self.slicer = SliceChecker(ir.pool, lambda s: (self.dfa.expr_of(s),), slicer_source)

    def advance(self, state: int, data: bytes) -> int | None:
        state = self.dfa.run(state, data)
        return None if state == DEAD else state

    def is_accepting(self, state: int) -> bool:
        return self.dfa.is_accepting(state)

    def mask_key(self, state: int) -> int:
        return state

    def fill_mask(self, state: int, mask: np.ndarray) -> None:
        stack = np.zeros(self.trie.max_depth + 1, dtype=np.int32)

        def walk(trie: TokenTrie) -> None:
            fill_dfa_mask(trie, self.dfa, state, mask, stack)

        if self.slicer is None:
            walk(self.trie)
        else:
            self.slicer.fill(state, self.trie, mask, walk)


class BoundaryTable:
    """``(chart id, lexer state) -> child chart id << 32 | its fresh lexer state`` for the kernel.

    Open addressing over int64 arrays, doubled at half load and emptied past ``max_entries``
    (it is a cache: the charts keep their own children).
    """

    def __init__(self, capacity: int = 1024, max_entries: int = 1 << 20) -> None:
        self.keys = np.full(capacity, EMPTY_KEY, dtype=np.int64)
        self.values = np.zeros(capacity, dtype=np.int64)
        self.count = 0
        self.max_entries = max_entries

    def get(self, key: int) -> int:
        return int(table_get_kernel(self.keys, self.values, np.int64(key)))

    def put(self, key: int, value: int) -> None:
        if (self.count + 1) * 2 > self.keys.shape[0]:
            self._resize()
        slot = int(table_slot_kernel(self.keys, np.int64(key)))
        if self.keys[slot] == EMPTY_KEY:
            self.count += 1
        self.keys[slot] = key
        self.values[slot] = value

    def _resize(self) -> None:
        old_keys, old_values = self.keys, self.values
        capacity = old_keys.shape[0] * 2
        if self.count >= self.max_entries:
            capacity = old_keys.shape[0]
            old_keys = old_keys[:0]
        self.keys = np.full(capacity, EMPTY_KEY, dtype=np.int64)
        self.values = np.zeros(capacity, dtype=np.int64)
        self.count = int(table_rehash_kernel(old_keys, old_values, self.keys, self.values))


class CfgEngine:
    """A context-free grammar: the lexer DFA plus Earley charts, walked together."""

    def __init__(self, ir: GrammarIR, trie: TokenTrie, limits: Limits, slicer_source) -> None:
        self.lexer = Lexer(ir, limits)
        self.parser = EarleyParser(ir, limits)
        self.trie = trie
        self.table = BoundaryTable()
        self._charts: weakref.WeakValueDictionary[int, ParserNode] = weakref.WeakValueDictionary()
        root = self._register(self.parser.root())
        self.initial: CfgState = (root, root.start_state)
        self.slicer = None
        if slicer_source is not None:
            self.slicer = SliceChecker(ir.pool, lambda s: tuple(e for _, e in self.lexer.items(s)), slicer_source)

    def _register(self, chart: ParserNode) -> ParserNode:
        if chart.start_state < 0:
            chart.start_state = self.lexer.start_state(chart.allowed_lexemes)
            self._charts[chart.id] = chart
        return chart

    def end_lexeme(self, chart: ParserNode, lex: int) -> tuple[ParserNode, int] | None:
        """The chart and fresh lexer state after the lexeme that ends in ``lex``; ``None`` if no
        lexeme can end there or the parser rejects it. Ignored lexemes leave the chart as is."""
        if not self.lexer.accepting[lex]:
            return None
        accepted = self.lexer.accepted(lex)
        if all(a in self.lexer._ignore for a in accepted):
            return chart, chart.start_state
        child = chart.scan(accepted)
        if child is None:
            return None
        self._register(child)
        return child, child.start_state

    def advance(self, state: CfgState, data: bytes) -> CfgState | None:
        chart, lex = state
        step = self.lexer.step
        for byte in data:
            nxt = step(lex, byte)
            if nxt == DEAD:
                ended = self.end_lexeme(chart, lex)
                if ended is None:
                    return None
                chart, fresh = ended
                nxt = step(fresh, byte)
                if nxt == DEAD:
                    return None
            lex = nxt
        return chart, lex

    def is_accepting(self, state: CfgState) -> bool:
        chart, lex = state
        if self.lexer.is_fresh(lex) or lex == DEAD:
            return chart.accepting
        ended = self.end_lexeme(chart, lex)
        return ended is not None and ended[0].accepting

    def mask_key(self, state: CfgState) -> tuple[int, int]:
        return state[0].id, state[1]

    def fill_mask(self, state: CfgState, mask: np.ndarray) -> None:
        chart, lex = state
        depth = self.trie.max_depth + 1
        lex_stack = np.zeros(depth, dtype=np.int32)
        par_stack = np.zeros(depth, dtype=np.int32)

        def walk(trie: TokenTrie) -> None:
            self._walk(trie, chart, lex, mask, lex_stack, par_stack)

        if self.slicer is None or lex == DEAD:
            walk(self.trie)
        else:
            self.slicer.fill(lex, self.trie, mask, walk)

    def _walk(self, trie: TokenTrie, chart: ParserNode, lex: int, mask: np.ndarray,
              lex_stack: np.ndarray, par_stack: np.ndarray) -> None:
        lex_stack[0] = lex
        par_stack[0] = chart.id
        start = 1
        while True:
            start, code = walk_cfg_kernel(trie.node_byte, trie.node_end, trie.node_depth, trie.node_token,
                                          self.lexer.trans, self.lexer.accepting, self.table.keys,
                                          self.table.values, lex_stack, par_stack, start, mask)
            if code == DONE:
                break
            depth = trie.node_depth[start]
            parent_lex = int(lex_stack[depth - 1])
            parent_chart = int(par_stack[depth - 1])
            if code == MISSING_ROW:
                self.lexer.fill_row(parent_lex)
            elif code == MISSING_STEP:
                self._learn_step(parent_chart, parent_lex)
            else:
                found = self.table.get((parent_chart << 32) | parent_lex)
                self.lexer.fill_row(found & 0xFFFFFFFF)
        if trie.dup_primary.shape[0]:
            copy_duplicate_bits_kernel(mask, trie.dup_primary, trie.dup_other)

    def _learn_step(self, chart_id: int, lex: int) -> None:
        chart = self._charts[chart_id]
        ended = self.end_lexeme(chart, lex)
        value = NO_CHILD if ended is None else (ended[0].id << 32) | ended[1]
        self.table.put((chart_id << 32) | lex, value)
