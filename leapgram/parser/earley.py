"""An Earley parser over lexemes.

Rules are laid out flat as *dotted rules*: ``dr = rule_base[r] + dot``; an Earley item is
``(dr, origin)``. A row is the closure of the items advanced over the scanned lexemes: prediction,
completion, and the Aycock–Horspool rule (predicting a nullable nonterminal also steps over it),
so empty rules need no special completion pass. Repetitions built by
:class:`leapgram.grammar.builder.GrammarBuilder` are left-recursive, which keeps rows of constant
size on long lists.

A :class:`ParserNode` is a chart: its row plus its parent's rows. Nodes form a tree (the trie walk
explores several continuations of one chart); the rows list is shared with the parent as long as
no sibling has extended it, so adding a row costs O(1). A node caches its children by scanned
lexemes: a row computed once for a chart and a lexeme is reused, as the llguidance design does.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ..errors import BudgetExceededError
from ..grammar.builder import nullable_nonterminals
from ..grammar.ir import GrammarIR, lexeme_index, lexeme_symbol
from ..limits import Limits

END = None


@dataclass
class Row:
    """One Earley row: its items, grouped by the symbol after the dot."""

    items: frozenset[tuple[int, int]]
    waiting: dict[int, list[tuple[int, int]]]
    lexemes: frozenset[int]
    accepting: bool


class EarleyParser:
    """Static tables of one grammar and the row computation."""

    def __init__(self, ir: GrammarIR, limits: Limits) -> None:
        self.ir = ir
        self.limits = limits
        self.next_symbol: list[int | None] = []
        self.lhs_of: list[int] = []
        self.first: dict[int, list[int]] = {}
        self.start_complete: set[int] = set()
        for rule in ir.rules:
            base = len(self.next_symbol)
            self.first.setdefault(rule.lhs, []).append(base)
            for symbol in rule.rhs:
                self.next_symbol.append(symbol)
                self.lhs_of.append(rule.lhs)
            self.next_symbol.append(END)
            self.lhs_of.append(rule.lhs)
            if rule.lhs == ir.start:
                self.start_complete.add(len(self.next_symbol) - 1)
        self.nullable = nullable_nonterminals(ir.rules)
        self._ids = itertools.count(1)

    def root(self) -> ParserNode:
        """The chart before any lexeme."""
        seeds = [(dr, 0) for dr in self.first.get(self.ir.start, [])]
        row = self.closure(seeds, [], 0)
        return ParserNode(self, None, 0, row, [row], next(self._ids))

    def closure(self, seeds: list[tuple[int, int]], rows: list[Row], index: int) -> Row:
        """The row at ``index`` grown from ``seeds``; ``rows`` holds the rows before it."""
        items: set[tuple[int, int]] = set()
        waiting: dict[int, list[tuple[int, int]]] = {}
        predicted: set[int] = set()
        agenda = list(seeds)
        budget = self.limits.max_earley_items
        next_symbol, nullable, first = self.next_symbol, self.nullable, self.first
        while agenda:
            item = agenda.pop()
            if item in items:
                continue
            items.add(item)
            if len(items) > budget:
                raise BudgetExceededError("max_earley_items", budget, "Earley row too large")
            dr, origin = item
            symbol = next_symbol[dr]
            if symbol is END:
                if origin != index:
                    lhs = self.lhs_of[dr]
                    agenda.extend((w + 1, o) for w, o in rows[origin].waiting.get(lhs, ()))
                continue
            waiting.setdefault(symbol, []).append(item)
            if symbol >= 0:
                if symbol not in predicted:
                    predicted.add(symbol)
                    agenda.extend((d, index) for d in first.get(symbol, ()))
                if symbol in nullable:
                    agenda.append((dr + 1, origin))
        lexemes = frozenset(lexeme_index(s) for s in waiting if s < 0)
        accepting = any(dr in self.start_complete and origin == 0 for dr, origin in items)
        return Row(frozenset(items), waiting, lexemes, accepting)


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
            seeds.extend((dr + 1, origin) for dr, origin in self.row.waiting.get(lexeme_symbol(lexeme), ()))
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
