"""The lexer driver and the Earley parser over lexemes."""

from .earley import EarleyParser, ParserNode
from .lexer import Lexer

__all__ = ["EarleyParser", "Lexer", "ParserNode"]
