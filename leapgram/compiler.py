"""``compile()``: a grammar bound to a vocabulary, ready for matchers."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

import numpy as np

from .grammars import Grammar
from .limits import DEFAULT_LIMITS, Limits
from .mask.engines import CfgEngine, RegexEngine
from .mask.slicer import SlicedVocabulary
from .regex.dfa import LazyDfa
from .vocab.trie import TokenTrie
from .vocab.vocabulary import Vocabulary
from .bitmask import bitmask_words

_TRIES: weakref.WeakKeyDictionary[Vocabulary, TokenTrie] = weakref.WeakKeyDictionary()
_TRIES_LOCK = threading.Lock()
_SLICED: weakref.WeakKeyDictionary[Vocabulary, SlicedVocabulary] = weakref.WeakKeyDictionary()
_COMPILED: OrderedDict[tuple, CompiledGrammar] = OrderedDict()
_COMPILED_MAX = 64


def token_trie(vocab: Vocabulary) -> TokenTrie:
    """The trie of ``vocab``, built on first use and kept while the vocabulary lives."""
    with _TRIES_LOCK:
        trie = _TRIES.get(vocab)
        if trie is None:
            trie = TokenTrie(vocab)
            _TRIES[vocab] = trie
        return trie


def sliced_vocabulary(vocab: Vocabulary) -> SlicedVocabulary:
    """The slices of ``vocab`` (see :mod:`leapgram.mask.slicer`), built on first use."""
    with _TRIES_LOCK:
        found = _SLICED.get(vocab)
    if found is None:
        found = SlicedVocabulary(vocab, token_trie(vocab))
        with _TRIES_LOCK:
            found = _SLICED.setdefault(vocab, found)
    return found


class CompiledGrammar:
    """A grammar bound to a vocabulary: immutable from outside and shareable across threads.

    Internal tables (the lazy lexer DFA, parser charts, a bounded cache of masks) grow under a
    lock as matchers explore new states. ``engine`` is a :class:`RegexEngine` for a grammar that
    is one regular expression and a :class:`CfgEngine` otherwise.
    """

    def __init__(self, grammar: Grammar, vocab: Vocabulary, limits: Limits, *, use_slicer: bool = True,
                 use_leo: bool = True) -> None:
        self.grammar = grammar
        self.vocab = vocab
        self.limits = limits
        self.trie = token_trie(vocab)
        self.words = bitmask_words(vocab.size)
        slicer_source = (lambda: sliced_vocabulary(vocab)) if use_slicer else None
        if grammar.ir.is_regex:
            self.engine: RegexEngine | CfgEngine = RegexEngine(grammar.ir, self.trie, limits, slicer_source)
        else:
            self.engine = CfgEngine(grammar.ir, self.trie, limits, slicer_source, use_leo=use_leo)
        self.eos_token_ids = np.array(vocab.eos_token_ids, dtype=np.int64)
        self._masks: OrderedDict[object, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def dfa(self) -> LazyDfa:
        """The lexer DFA of a regex grammar (for tests and benchmarks)."""
        if not isinstance(self.engine, RegexEngine):
            raise AttributeError("only regex grammars have a single DFA")
        return self.engine.dfa

    @property
    def slicer(self):
        return self.engine.slicer

    def state_mask(self, state) -> np.ndarray:
        """uint32 words of the tokens (EOS excluded) allowed in ``state``; do not modify."""
        return self.state_mask_and_accepting(state)[0]

    def state_mask_and_accepting(self, state) -> tuple[np.ndarray, bool]:
        """The mask of ``state`` (do not modify) and whether the output is complete there (EOS
        allowed); both cached together, under ``Limits.max_cached_masks``."""
        key = self.engine.mask_key(state)
        with self._lock:
            cached = self._masks.get(key)
            if cached is not None:
                self._masks.move_to_end(key)
                return cached
        mask = np.zeros(self.words, dtype=np.uint32)
        self.engine.fill_mask(state, mask)
        entry = (mask, self.engine.is_accepting(state))
        with self._lock:
            self._masks[key] = entry
            while len(self._masks) > self.limits.max_cached_masks:
                self._masks.popitem(last=False)
        return entry

    def __repr__(self) -> str:
        return f"CompiledGrammar({self.grammar!r}, vocab_size={self.vocab.size})"


def compile(grammar: Grammar, vocab: Vocabulary, *, limits: Limits | None = None,
            use_slicer: bool = True, use_leo: bool = True) -> CompiledGrammar:
    """Bind ``grammar`` to ``vocab``.

    ``use_slicer=False`` walks the whole trie for every mask and ``use_leo=False`` turns off Leo's
    optimization of right recursion in the Earley parser (both for comparison and tests).
    Cached: a grammar with the same source and options, the same vocabulary object and the same
    limits give the same object back (the 64 most recent are kept; :func:`clear_cache` empties it).
    """
    if not isinstance(grammar, Grammar):
        raise ValueError(f"grammar must be a leapgram.Grammar, not {type(grammar).__name__}")
    if not isinstance(vocab, Vocabulary):
        raise ValueError(f"vocab must be a leapgram.Vocabulary, not {type(vocab).__name__}")
    limits = limits or DEFAULT_LIMITS
    key = (grammar.key, id(vocab), limits, use_slicer, use_leo)
    with _TRIES_LOCK:
        found = _COMPILED.get(key)
        if found is not None and found.vocab is vocab:
            _COMPILED.move_to_end(key)
            return found
    compiled = CompiledGrammar(grammar, vocab, limits, use_slicer=use_slicer, use_leo=use_leo)
    with _TRIES_LOCK:
        _COMPILED[key] = compiled
        while len(_COMPILED) > _COMPILED_MAX:
            _COMPILED.popitem(last=False)
    return compiled


def clear_cache() -> None:
    """Forget every cached compiled grammar (tries stay cached per vocabulary)."""
    with _TRIES_LOCK:
        _COMPILED.clear()
