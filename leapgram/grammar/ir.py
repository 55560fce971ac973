"""The grammar intermediate form: lexemes (regex expressions in one pool) and rules over them.

For now a grammar is a single lexeme that must match the whole output (a regular expression);
rules over lexemes come with the context-free front ends.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..regex.expr import ExprPool


@dataclass(frozen=True)
class Lexeme:
    """A named regular expression; ``expr`` lives in the grammar's pool."""

    name: str
    expr: int


@dataclass(frozen=True)
class GrammarIR:
    """Lexemes in one expression pool. ``start`` is the lexeme the whole output must match."""

    pool: ExprPool
    lexemes: tuple[Lexeme, ...]
    start: int = 0

    @property
    def start_expr(self) -> int:
        return self.lexemes[self.start].expr
