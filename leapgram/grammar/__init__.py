"""The one intermediate form every front end compiles to."""

from .ir import GrammarIR, Lexeme

__all__ = ["GrammarIR", "Lexeme"]
