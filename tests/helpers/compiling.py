"""One :class:`leapgram.GrammarCompiler` per vocabulary and options, shared by the tests."""

from __future__ import annotations

import weakref

from leapgram import CompiledGrammar, Grammar, GrammarCompiler, Limits, Vocabulary

_COMPILERS: weakref.WeakKeyDictionary[Vocabulary, dict[tuple, GrammarCompiler]] = weakref.WeakKeyDictionary()


def compile_for(grammar: Grammar, vocab: Vocabulary, *, limits: Limits | None = None, use_slicer: bool = True,
                use_leo: bool = True) -> CompiledGrammar:
    """``grammar`` compiled for ``vocab`` by the compiler the tests keep for these options."""
    options = (limits, use_slicer, use_leo)
    compilers = _COMPILERS.setdefault(vocab, {})
    compiler = compilers.get(options)
    if compiler is None:
        compiler = compilers[options] = GrammarCompiler(vocab, limits=limits, use_slicer=use_slicer, use_leo=use_leo)
    return compiler.compile(grammar)
