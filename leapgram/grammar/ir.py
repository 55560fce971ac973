"""The grammar intermediate form: lexemes (regexes in one pool) and rules over them.

Every front end (regex, Lark, GBNF, JSON Schema) produces a :class:`GrammarIR` through
:class:`leapgram.grammar.builder.GrammarBuilder`; the parser and the mask code see nothing else.

Symbols are integers: a nonterminal is its index ``k >= 0``; lexeme ``j`` is ``~j`` (negative).
Lexemes never match the empty string (the builder rewrites a nullable lexeme into an optional
one). The lexer is greedy over the lexemes the parser allows next: a lexeme ends when the next
byte cannot extend any allowed lexeme. ``ignore`` lexemes (``%ignore WS``) may occur between any
two lexemes and are not seen by the parser.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..regex.expr import ExprPool


def lexeme_symbol(index: int) -> int:
    """The symbol of lexeme ``index``."""
    return ~index


def is_lexeme(symbol: int) -> bool:
    return symbol < 0


def lexeme_index(symbol: int) -> int:
    """The lexeme index of a lexeme symbol."""
    return ~symbol


@dataclass(frozen=True, slots=True)
class Lexeme:
    """A named regular expression; ``expr`` lives in the grammar's pool and is not nullable."""

    name: str
    expr: int


_new_object = object.__new__
_set_name = Lexeme.name.__set__  # the slots' descriptors: what the frozen class's __init__ calls,
_set_expr = Lexeme.expr.__set__  # through object.__setattr__ twice


def new_lexeme(name: str, expr: int) -> Lexeme:
    """``Lexeme(name, expr)`` at a quarter of its cost (the frozen dataclass's ``__init__`` sets
    each slot through ``object.__setattr__``): the builder makes one per key of a schema, about
    1% of a schema's time to first mask that way."""
    lexeme = _new_object(Lexeme)
    _set_name(lexeme, name)
    _set_expr(lexeme, expr)
    return lexeme


Rule = tuple[int, tuple[int, ...]]
"""``(lhs, rhs)``, for ``lhs -> rhs``: a nonterminal index and a tuple of symbols (possibly empty).

A plain tuple of ints, not an object: Python's cycle collector stops tracking such tuples, so the
thousands of rules of a large grammar are not walked by every full collection (a dataclass
instance stays tracked, and a JSON Schema compile made a full collection every few schemas)."""


@dataclass(frozen=True)
class GrammarIR:
    """Lexemes and rules in one expression pool, with a start nonterminal.

    A regular expression is the grammar ``start -> lexeme0`` with no ignored lexemes
    (:attr:`is_regex`); the compiler gives such grammars a faster path with no parser, and only
    there may the lexeme match the empty string.
    """

    pool: ExprPool
    lexemes: tuple[Lexeme, ...]
    nonterminals: tuple[str, ...] = ("start",)
    rules: tuple[Rule, ...] = ((0, (~0,)),)
    start: int = 0
    ignore: tuple[int, ...] = ()
    nullable: frozenset[int] | None = None  # set by the builder; see nullable_nonterminals()

    def packed_rules(self) -> np.ndarray | None:
        """The rules in one int32 array (:func:`leapgram.grammar.analysis.pack_rules`: what the
        parser tables' kernel reads), made once per IR (the builder hands over its own); ``None``
        when a symbol is no int32. Kept outside the fields: ``dataclasses.replace`` makes an IR
        that packs its own rules."""
        found = self.__dict__.get("_packed_rules", False)
        if found is False:
            from .analysis import pack_rules

            found = pack_rules(self.rules)
            self.keep_packed_rules(found)
        return found

    def keep_packed_rules(self, packed: np.ndarray | None) -> None:
        """Remember ``packed``, :func:`leapgram.grammar.analysis.pack_rules` of this IR's rules."""
        object.__setattr__(self, "_packed_rules", packed)

    def nullable_nonterminals(self) -> frozenset[int]:
        """The nonterminals that derive the empty sequence (the builder's, else computed)."""
        if self.nullable is not None:
            return self.nullable
        from .analysis import nullable_nonterminals

        return frozenset(nullable_nonterminals(self.rules))

    @property
    def is_regex(self) -> bool:
        """Whether the whole grammar is one lexeme (no parser needed)."""
        if self.ignore or len(self.rules) != 1:
            return False
        lhs, rhs = self.rules[0]
        return lhs == self.start and len(rhs) == 1 and is_lexeme(rhs[0])

    @property
    def start_expr(self) -> int:
        """For a regex grammar, the expression the whole output must match."""
        if not self.is_regex:
            raise ValueError("start_expr is only defined for regex grammars")
        return self.lexemes[lexeme_index(self.rules[0][1][0])].expr

    def symbol_name(self, symbol: int) -> str:
        """Readable name of a symbol, for error messages."""
        if is_lexeme(symbol):
            return self.lexemes[lexeme_index(symbol)].name
        return self.nonterminals[symbol]

    def describe(self) -> str:
        """The rules in a readable, BNF-like form."""
        lines = []
        for lhs, rhs in self.rules:
            text = " ".join(self.symbol_name(s) for s in rhs) or "ε"
            lines.append(f"{self.nonterminals[lhs]} -> {text}")
        for lexeme in self.lexemes:
            lines.append(f"{lexeme.name} = /{self.pool.describe(lexeme.expr)}/")
        if self.ignore:
            lines.append("%ignore " + " ".join(self.lexemes[i].name for i in self.ignore))
        return "\n".join(lines)
