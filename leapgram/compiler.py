"""``compile()``: a grammar bound to a vocabulary, ready for matchers."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

import numpy as np

from .grammars import Grammar
from .limits import DEFAULT_LIMITS, Limits
from .mask.engines import CfgEngine, RegexEngine
from .mask.forced import ForcedBytes
from .mask.prefix import PrefixMasks
from .mask.slicer import SlicedVocabulary
from .mask.special import SpecialTokens
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
        eos_words = np.zeros(self.words, dtype=np.uint32)
        for eos in vocab.eos_token_ids:
            eos_words[eos >> 5] |= np.uint32(1 << (eos & 31))
        self.eos_row = eos_words.view(np.int32)  # the row after EOS and in the error state
        self.eos_row.flags.writeable = False
        self._masks: OrderedDict[object, tuple[np.ndarray, bool]] = OrderedDict()
        self._lock = threading.Lock()
        self._special_tokens = SpecialTokens(grammar.ir, vocab)  # control tokens the grammar spells out

    @property
    def dfa(self) -> LazyDfa:
        """The lexer DFA of a regex grammar (for tests and benchmarks)."""
        if not isinstance(self.engine, RegexEngine):
            raise AttributeError("only regex grammars have a single DFA")
        return self.engine.dfa

    @property
    def slicer(self):
        return self.engine.slicer

    @property
    def forced(self) -> ForcedBytes:
        """Forced bytes per state (:mod:`leapgram.mask.forced`), made on first use."""
        found = self.__dict__.get("_forced")
        if found is None:
            with self._lock:
                found = self.__dict__.setdefault("_forced", ForcedBytes(self.engine, self.limits.max_forced_bytes))
        return found

    @property
    def prefix_masks(self) -> PrefixMasks:
        """Masks with a required prefix pending (:mod:`leapgram.mask.prefix`), made on first use."""
        found = self.__dict__.get("_prefix_masks")
        if found is None:
            with self._lock:
                found = self.__dict__.setdefault("_prefix_masks", PrefixMasks(self.engine, self.trie, self.words))
        return found

    def state_mask(self, state) -> np.ndarray:
        """uint32 words of the tokens (EOS excluded) allowed in ``state``; do not modify."""
        return self.state_mask_and_accepting(state)[0]

    def state_mask_and_accepting(self, state) -> tuple[np.ndarray, bool]:
        """The mask of ``state`` (do not modify) and whether the output is complete there (EOS
        allowed); both cached together, under ``Limits.max_cached_masks``."""
        row, accepting = self.state_row(state)
        if accepting:  # EOS ids are special tokens, never in a walked mask
            return row.view(np.uint32) & ~self.eos_row.view(np.uint32), True
        return row.view(np.uint32), False

    def state_row(self, state) -> tuple[np.ndarray, bool]:
        """What a bitmask row gets in ``state``: int32 words of the allowed tokens, EOS included
        exactly when the output is complete there (do not modify), and whether it is. Cached
        by ``engine.mask_key``, the ``Limits.max_cached_masks`` most recently used."""
        key = self.engine.mask_key(state)
        masks = self._masks
        with self._lock:
            entry = masks.get(key)
            if entry is not None:
                masks.move_to_end(key)
                return entry
        mask = self.engine.new_mask(state, key)
        if self._special_tokens:
            self._special_tokens.fill(self.engine, state, mask)
        accepting = self.engine.is_accepting(state)
        if accepting:
            mask |= self.eos_row.view(np.uint32)
        entry = (mask.view(np.int32), accepting)
        with self._lock:
            masks[key] = entry
            while len(masks) > self.limits.max_cached_masks:
                masks.popitem(last=False)
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
