"""The compiled grammars the tests use: one compiler per vocabulary and options."""

from __future__ import annotations

from leapgram import CompiledGrammar, Grammar, Limits, Vocabulary
from leapgram.compiler import compiler_for


def compile_for(grammar: Grammar, vocab: Vocabulary, *, limits: Limits | None = None, use_slicer: bool = True,
                use_leo: bool = True) -> CompiledGrammar:
    """``grammar`` compiled for ``vocab`` by the compiler kept with the vocabulary for these options."""
    return compiler_for(vocab, limits=limits, use_slicer=use_slicer, use_leo=use_leo).compile(grammar)
