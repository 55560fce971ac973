"""An Earley parser over lexemes: the plain reference the numba kernels are tested against.

An item is ``(dotted rule, origin)``; a row is the closure of prediction, completion and the
Aycock–Horspool step over nullable nonterminals. A :class:`ParserNode` is a chart (its row plus
its parent's rows) in a tree that shares rows with the parent and caches its children by scanned
lexeme. Design: docs/design/earley-walk.md.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ..errors import BudgetExceededError
from ..grammar.ir import GrammarIR, lexeme_index, lexeme_symbol
from ..limits import Limits

END = None


@dataclass
class Row:
    """One Earley row. ``waiting`` maps a symbol to the items ``(dotted rule, origin)`` whose dot
    stands before it; ``predicted`` maps a symbol to the dotted rules predicted in this row (their
    origin is the row's own index), kept apart because they depend only on which nonterminals were
    expected and are shared between rows."""

    waiting: dict[int, list[tuple[int, int]]]
    predicted: dict[int, tuple[int, ...]]
    lexemes: frozenset[int]
    accepting: bool
    size: int


@dataclass(frozen=True)
class Prediction:
    """Everything predicted at a position from a set of expected nonterminals."""

    by_symbol: dict[int, tuple[int, ...]]
    lexemes: frozenset[int]
    accepting_dotted: bool
    size: int


class EarleyParser:
    """Static tables of one grammar and the row computation."""

    def __init__(self, ir: GrammarIR, limits: Limits) -> None:
        self.ir = ir
        self.limits = limits
        self.next_symbol: list[int | None] = []
        self.lhs_of: list[int] = []
        self.first: dict[int, list[int]] = {}
        self.start_complete: set[int] = set()
        for lhs, rhs in ir.rules:
            base = len(self.next_symbol)
            self.first.setdefault(lhs, []).append(base)
            for symbol in rhs:
                self.next_symbol.append(symbol)
                self.lhs_of.append(lhs)
            self.next_symbol.append(END)
            self.lhs_of.append(lhs)
            if lhs == ir.start:
                self.start_complete.add(len(self.next_symbol) - 1)
        self.nullable = ir.nullable_nonterminals()
        self._ids = itertools.count(1)
        self._predictions: dict[frozenset[int], Prediction] = {}

    def root(self) -> ParserNode:
        """The chart before any lexeme."""
        row = self.closure([], [], 0, frozenset([self.ir.start]))
        return ParserNode(self, None, 0, row, [row], next(self._ids))

    def prediction(self, expected: frozenset[int]) -> Prediction:
        """The dotted rules predicted (transitively, stepping over nullable nonterminals) from the
        nonterminals ``expected`` at some position. Cached: it does not depend on the position."""
        found = self._predictions.get(expected)
        if found is not None:
            return found
        dotted: set[int] = set()
        agenda = [d for nt in expected for d in self.first.get(nt, ())]
        predicted = set(expected)
        while agenda:
            dr = agenda.pop()
            if dr in dotted:
                continue
            dotted.add(dr)
            symbol = self.next_symbol[dr]
            if symbol is END or symbol < 0:
                continue
            if symbol not in predicted:
                predicted.add(symbol)
                agenda.extend(self.first.get(symbol, ()))
            if symbol in self.nullable:
                agenda.append(dr + 1)
        by_symbol: dict[int, list[int]] = {}
        for dr in dotted:
            symbol = self.next_symbol[dr]
            if symbol is not END:
                by_symbol.setdefault(symbol, []).append(dr)
        found = Prediction({k: tuple(v) for k, v in by_symbol.items()},
                           frozenset(lexeme_index(k) for k in by_symbol if k < 0),
                           any(dr in self.start_complete for dr in dotted), len(dotted))
        if len(self._predictions) > 4096:
            self._predictions.clear()
        self._predictions[expected] = found
        return found

    def closure(self, seeds: list[tuple[int, int]], rows: list[Row], index: int,
                expected: frozenset[int] = frozenset()) -> Row:
        """The row at ``index`` grown from ``seeds`` (items with origins before ``index``) and the
        nonterminals ``expected`` there; ``rows`` holds the rows before it."""
        items: set[tuple[int, int]] = set()
        waiting: dict[int, list[tuple[int, int]]] = {}
        needed = set(expected)
        agenda = list(seeds)
        next_symbol, nullable, lhs_of = self.next_symbol, self.nullable, self.lhs_of
        accepting = False
        while agenda:
            item = agenda.pop()
            if item in items:
                continue
            items.add(item)
            dr, origin = item
            symbol = next_symbol[dr]
            if symbol is END:
                if origin == 0 and dr in self.start_complete:
                    accepting = True
                row = rows[origin]
                lhs = lhs_of[dr]
                agenda.extend((w + 1, o) for w, o in row.waiting.get(lhs, ()))
                agenda.extend((w + 1, origin) for w in row.predicted.get(lhs, ()))
                continue
            waiting.setdefault(symbol, []).append(item)
            if symbol >= 0:
                needed.add(symbol)
                if symbol in nullable:
                    agenda.append((dr + 1, origin))
        prediction = self.prediction(frozenset(needed))
        size = len(items) + prediction.size
        if size > self.limits.max_earley_items:
            raise BudgetExceededError("max_earley_items", self.limits.max_earley_items, "Earley row too large")
        lexemes = prediction.lexemes | frozenset(lexeme_index(s) for s in waiting if s < 0)
        accepting = accepting or (index == 0 and prediction.accepting_dotted)
        return Row(waiting, prediction.by_symbol, lexemes, accepting, size)


@dataclass(eq=False)
class ParserNode:
    """A chart: the rows up to ``index``, the last of which is ``row``."""

    parser: EarleyParser
    parent: ParserNode | None
    index: int
    row: Row
    rows: list[Row]
    id: int
    start_state: int = -1
    children: dict[tuple[int, ...], ParserNode | None] = field(default_factory=dict)

    @property
    def accepting(self) -> bool:
        """Whether the output so far is a complete sentence."""
        return self.row.accepting

    @property
    def allowed_lexemes(self) -> frozenset[int]:
        return self.row.lexemes

    def scan(self, lexemes: tuple[int, ...]) -> ParserNode | None:
        """The chart after the next lexeme, which matched every one of ``lexemes``; ``None`` when
        the parser allows none of them. Cached per node."""
        if lexemes in self.children:
            return self.children[lexemes]
        seeds = []
        for lexeme in lexemes:
            symbol = lexeme_symbol(lexeme)
            seeds.extend((dr + 1, origin) for dr, origin in self.row.waiting.get(symbol, ()))
            seeds.extend((dr + 1, self.index) for dr in self.row.predicted.get(symbol, ()))
        child = None
        if seeds:
            rows = self.rows if len(self.rows) == self.index + 1 else self.rows[: self.index + 1]
            row = self.parser.closure(seeds, rows, self.index + 1)
            rows.append(row)
            child = ParserNode(self.parser, self, self.index + 1, row, rows, next(self.parser._ids))
        if len(self.children) >= 256:
            self.children.clear()
        self.children[lexemes] = child
        return child

    def __hash__(self) -> int:
        return self.id
