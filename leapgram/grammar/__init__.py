"""The one intermediate form every front end compiles to, and its builder."""

from .analysis import nullable_nonterminals, productive_nonterminals
from .builder import GrammarBuilder
from .ir import GrammarIR, Lexeme, Rule, is_lexeme, lexeme_index, lexeme_symbol

__all__ = ["GrammarBuilder", "GrammarIR", "Lexeme", "Rule", "is_lexeme", "lexeme_index", "lexeme_symbol",
           "nullable_nonterminals", "productive_nonterminals"]
