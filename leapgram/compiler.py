"""``GrammarCompiler``: grammars bound to one vocabulary, ready for matchers."""

from __future__ import annotations

import threading
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from functools import partial
from typing import Any

import numpy as np
from numba.core import config as numba_config

from ._kernels import wait_for_kernels
from ._kernels.entry import DirectKernel
from ._kernels.rows import row_hash_kernel, row_hash_twin, rows_equal_kernel, rows_equal_twin
from .bitmask import bitmask_words
from .grammars import Grammar
from .limits import DEFAULT_LIMITS, Limits
from .mask.engines import CfgEngine, RegexEngine
from .mask.forced import ForcedBytes
from .mask.prefix import PrefixMasks
from .mask.slicer import SlicedVocabulary
from .mask.special import SpecialTokens
from .vocab.trie import TokenTrie
from .vocab.vocabulary import Vocabulary

_DERIVED_LOCK = threading.Lock()
_TRIES: weakref.WeakKeyDictionary[Vocabulary, TokenTrie] = weakref.WeakKeyDictionary()
_SLICED: weakref.WeakKeyDictionary[Vocabulary, SlicedVocabulary] = weakref.WeakKeyDictionary()
_ROW_STORES: weakref.WeakKeyDictionary[Vocabulary, RowStore] = weakref.WeakKeyDictionary()
_VOCABULARY_ROWS: weakref.WeakKeyDictionary[Vocabulary, VocabularyRows] = weakref.WeakKeyDictionary()
# numpy twins while numba is disabled: the kernels' loops in Python would cost ms a row
_ROW_HASH = DirectKernel(row_hash_twin if numba_config.DISABLE_JIT else row_hash_kernel)
_ROWS_EQUAL = DirectKernel(rows_equal_twin if numba_config.DISABLE_JIT else rows_equal_kernel)


def token_trie(vocab: Vocabulary) -> TokenTrie:
    """The trie of ``vocab``, built on first use and kept while the vocabulary lives."""
    with _DERIVED_LOCK:
        trie = _TRIES.get(vocab)
        if trie is None:
            trie = TokenTrie(vocab)
            _TRIES[vocab] = trie
        return trie


def sliced_vocabulary(vocab: Vocabulary) -> SlicedVocabulary:
    """The slices of ``vocab`` (``docs/design/slicer.md``), built on first use."""
    with _DERIVED_LOCK:
        found = _SLICED.get(vocab)
    if found is None:
        found = SlicedVocabulary(vocab, token_trie(vocab))
        with _DERIVED_LOCK:
            found = _SLICED.setdefault(vocab, found)
    return found


def row_store(vocab: Vocabulary) -> RowStore:
    """The :class:`RowStore` of ``vocab``, made on first use and kept while the vocabulary lives."""
    with _DERIVED_LOCK:
        found = _ROW_STORES.get(vocab)
        if found is None:
            found = _ROW_STORES[vocab] = RowStore()
        return found


class VocabularyRows:
    """What every grammar compiled for one vocabulary starts with, made once per vocabulary (a
    numpy row and a frozenset of the special ids cost 45 µs, 5% of a median schema's first mask):
    the EOS row (read-only) with its memoryview, the ids that are not plain text, and the
    vocabulary's trie, row store and (once made) slices, found here with one look-up."""

    __slots__ = ("eos_bits", "eos_row", "eos_view", "not_text", "rows", "sliced", "trie")

    def __init__(self, vocab: Vocabulary) -> None:
        self.trie = token_trie(vocab)
        self.rows = row_store(vocab)
        self.sliced: SlicedVocabulary | None = None
        eos_words = np.zeros(bitmask_words(vocab.size), dtype=np.uint32)
        for eos in vocab.eos_token_ids:
            eos_words[eos >> 5] |= np.uint32(1 << (eos & 31))
        self.eos_row = eos_words.view(np.int32)
        self.eos_row.flags.writeable = False
        self.eos_view = memoryview(self.eos_row)
        self.eos_bits = tuple((eos >> 5, np.uint32(1 << (eos & 31))) for eos in sorted(set(vocab.eos_token_ids)))
        self.not_text = frozenset(vocab.eos_token_ids) | vocab.special_token_ids


def vocabulary_rows(vocab: Vocabulary) -> VocabularyRows:
    """The :class:`VocabularyRows` of ``vocab``, made on first use and kept while it lives."""
    with _DERIVED_LOCK:
        found = _VOCABULARY_ROWS.get(vocab)
    if found is None:  # made outside the lock: token_trie and row_store take it
        found = VocabularyRows(vocab)
        with _DERIVED_LOCK:
            found = _VOCABULARY_ROWS.setdefault(vocab, found)
    return found


class RowStore:
    """Bitmask rows held once per content, for every compiled grammar of one vocabulary.

    The same bits are often the mask of states in many grammars (over 80 tool-call schemas, the
    2,097 rows cached held 400 distinct contents). A row is found by a hash of its words and
    confirmed word by word. The store holds weak references, so it never holds more rows than the
    mask caches that use them. Thread-safe without a lock: each step is one dictionary operation,
    and a race between two threads can only leave a row unshared."""

    def __init__(self) -> None:
        self._rows: dict[int, weakref.ref] = {}  # hash -> a memoryview of the row held for it

    def intern(self, row: np.ndarray) -> memoryview:
        """A memoryview of the held row equal to ``row`` (int32 words, C-contiguous, writeable,
        not shared yet), or of ``row`` itself, now held; read-only either way (``.obj`` is the
        array). Grammars sharing a row share its view too: a view and its buffer are two objects
        the garbage collector tracks, and a long-lived server holds tens of thousands of rows."""
        digest = _ROW_HASH.call(row)
        held = self._rows.get(digest)
        found = None if held is None else held()
        if found is not None and _ROWS_EQUAL.call(found.obj, row):
            return found
        row.setflags(write=False)
        view = memoryview(row)
        if found is None:  # (else another row has this hash: ``row`` stays unshared)
            self._rows[digest] = weakref.ref(view, partial(_forget_row, self._rows, digest))
        return view

    def __len__(self) -> int:
        return len(self._rows)


def _forget_row(rows: dict[int, weakref.ref], digest: int, held: weakref.ref) -> None:
    """A held row died: drop its entry unless another row took the hash since."""
    if rows.get(digest) is held:
        rows.pop(digest, None)


class MaskRow:
    """A mask cache entry: what a bitmask row gets in a state (``row``, int32 words, read-only and
    maybe shared with other grammars, see :class:`RowStore`), whether the output is complete there
    (``accepting``), a memoryview of the row (``view``: a fill copies it with one ``memmove``, a
    third of numpy's cost for a 16 KB row; shared like the row) and whether it was hit since the
    eviction last passed over it (``used``)."""

    __slots__ = ("accepting", "row", "used", "view")

    def __init__(self, view: memoryview, accepting: bool) -> None:
        self.row = view.obj
        self.accepting = accepting
        self.view = view
        self.used = False


class CompiledGrammar:
    """A grammar bound to a vocabulary, made by :meth:`GrammarCompiler.compile`.

    Immutable from outside and shareable across threads: create a :class:`leapgram.Matcher`
    per request from it. Its internal tables (the lazy lexer DFA, parser charts, a bounded
    cache of masks) grow under a lock as matchers explore new states.
    """

    def __init__(self, grammar: Grammar, vocab: Vocabulary, limits: Limits, *, use_slicer: bool = True,
                 use_leo: bool = True) -> None:
        self.grammar = grammar
        self.vocab = vocab
        self.limits = limits
        shared = vocabulary_rows(vocab)
        self._trie = shared.trie
        self._words = bitmask_words(vocab.size)
        slicer_source = (lambda: sliced_vocabulary(vocab)) if use_slicer else None
        if use_slicer and not grammar.ir.is_regex and shared.sliced is None:
            shared.sliced = sliced_vocabulary(vocab)  # once per vocabulary, here rather than inside a mask (60 ms for Llama-3)
        if grammar.ir.is_regex:
            self._engine: RegexEngine | CfgEngine = RegexEngine(grammar.ir, self._trie, limits, slicer_source)
        else:
            self._engine = CfgEngine(grammar.ir, self._trie, limits, slicer_source, use_leo=use_leo)
        self._eos_row = shared.eos_row  # the row after EOS and in the error state (read-only)
        self._eos_bits = shared.eos_bits  # (word, bit) of each EOS id: set one by one in accepting rows
        self._eos_entry = MaskRow(shared.eos_view, False)
        self._rows = shared.rows
        self._masks: dict[object, MaskRow] = {}  # insertion order; evicted by second chance (_state_row)
        self._lock = threading.Lock()
        self._special_tokens = SpecialTokens(grammar.ir, vocab)  # control tokens the grammar spells out
        # for Matcher.consume_token's common step: the bytes of every token (shared, read-only)
        # and the ids that are not plain text (EOS and special tokens take the full path)
        self._token_bytes = vocab.tokens()
        self._not_text = shared.not_text
        self._bytes_seen: tuple[tuple[int, ...], int] | None = None  # _table_bytes's last (signature, bytes)
        self._masks_changed = 0  # bumped by each _new_row, so _row_ids knows when to look again
        self._rows_seen: tuple[int, frozenset[int], int] | None = None  # _row_ids's last (_masks_changed, ...)

    @property
    def vocab_size(self) -> int:
        """Token ids this grammar's masks cover (a bitmask row has ``ceil(vocab_size / 32)`` words)."""
        return self.vocab.size

    @property
    def _forced(self) -> ForcedBytes:
        """Forced bytes per state (``docs/design/fast-forward.md``), made on first use."""
        return self._made_once("_forced_bytes", lambda: ForcedBytes(self._engine, self.limits.max_forced_bytes))

    @property
    def _prefix_masks(self) -> PrefixMasks:
        """Masks with a required prefix pending, made on first use."""
        return self._made_once("_prefix_masks_table", lambda: PrefixMasks(self._engine, self._trie, self._words))

    def _made_once(self, name: str, make):
        found = self.__dict__.get(name)
        if found is None:
            with self._lock:
                found = self.__dict__.get(name)
                if found is None:
                    found = self.__dict__[name] = make()
        return found

    def _state_mask(self, state) -> np.ndarray:
        """uint32 words of the tokens (EOS excluded) allowed in ``state``; do not modify."""
        return self._state_mask_and_accepting(state)[0]

    def _state_mask_and_accepting(self, state) -> tuple[np.ndarray, bool]:
        """The mask of ``state`` (EOS excluded; do not modify) and whether the output is complete there."""
        entry = self._state_row(state)
        if entry.accepting:  # EOS ids are special tokens, never in a walked mask
            return entry.row.view(np.uint32) & ~self._eos_row.view(np.uint32), True
        return entry.row.view(np.uint32), False

    def _state_row(self, state) -> MaskRow:
        """The :class:`MaskRow` of ``state``: its bitmask row (EOS included exactly when the
        output is complete), from the cache or computed."""
        key = self._engine.mask_key(state)
        return self._cached_row(state, key) or self._new_row(state, key)

    def _cached_row(self, state, key: object = None) -> MaskRow | None:
        """The cached :class:`MaskRow` of ``state`` (``key``: its ``mask_key`` when known), flagged
        used, or ``None``. The lookup is one C call, atomic under the GIL (not on free-threaded
        builds): no lock. ``Matcher.fill_next_token_bitmask`` inlines this (a call is 5% of a fill)."""
        entry = self._masks.get(self._engine.mask_key(state) if key is None else key)
        if entry is not None:
            entry.used = True
        return entry

    def _new_row(self, state, key: object) -> MaskRow:
        """Compute the row of ``state`` (whose ``mask_key`` is ``key``) and cache it.
        ``Limits.max_cached_masks`` rows are kept, keyed by the engine's ``mask_key``, evicted
        oldest first except that a row used since it was last passed over gets a second chance
        (the clock approximation of least recently used: a hit only sets a flag)."""
        mask = self._engine.new_mask(state, key)
        if self._special_tokens:
            self._special_tokens.fill(self._engine, state, mask)
        accepting = self._engine.is_accepting(state)
        if accepting:  # EOS's bits set alone: an OR of the whole EOS row read and wrote every word
            for word, bit in self._eos_bits:
                mask[word] |= bit
        entry = MaskRow(self._rows.intern(mask.view(np.int32)), accepting)
        masks = self._masks
        with self._lock:
            masks[key] = entry
            while len(masks) > self.limits.max_cached_masks:
                oldest = next(iter(masks))
                old = masks.pop(oldest)
                if old.used:  # used since last passed over: back to the end, unflagged
                    old.used = False
                    masks[oldest] = old
            self._masks_changed += 1
        return entry

    def _table_bytes(self) -> int:
        """What :func:`memory_of` counts for this grammar but its mask cache's rows. Taken again
        only when the automaton's states, the pool's expressions, the cached masks or the spare
        arenas changed in number since the last time (a walk over the arrays costs ~15 µs)."""
        engine = self._engine
        automaton = engine.dfa if isinstance(engine, RegexEngine) else engine.lexer
        spare = tuple(getattr(engine, "_spare", ()))
        pool = len(self.grammar.ir.pool)
        signature = (automaton.num_states, pool, len(self._masks), len(spare))
        walks = getattr(engine, "lexeme_walk_bytes", 0)  # the lexeme walks kept (grows apart from the states)
        last = self._bytes_seen
        if last is not None and last[0] == signature:
            return last[1] + walks
        parts = (automaton, getattr(engine, "tables", None), *spare)
        arrays = sum(_array_bytes(part) for part in parts if part is not None) - getattr(automaton, "unwritten_bytes", 0)
        found = (arrays + signature[0] * _STATE_BYTES + pool * _EXPRESSION_BYTES
                 + signature[2] * _MASK_ENTRY_BYTES)
        self._bytes_seen = (signature, found)
        return found + walks

    def _row_ids(self) -> tuple[frozenset[int], int]:
        """The ``id`` of each distinct row of the mask cache now (a snapshot, taken under the lock)
        and the bytes of one: every row has the vocabulary's width. Kept with the grammar and
        taken again only after the cache changed (:meth:`_new_row`): until then the rows named
        are still held. (A pass of :func:`running_memory` racing a new mask may be off by a row,
        as a snapshot is.)"""
        seen = self._rows_seen
        if seen is not None and seen[0] == self._masks_changed:
            return seen[1], seen[2]
        with self._lock:
            changed = self._masks_changed
            rows = [entry.row for entry in self._masks.values()]
        ids = frozenset(map(id, rows))
        width = rows[0].nbytes if rows else 0
        self._rows_seen = (changed, ids, width)
        return ids, width

    def __repr__(self) -> str:
        return f"CompiledGrammar({self.grammar!r}, vocab_size={self.vocab.size})"


# memory_of's estimates of what numpy's nbytes does not see (measured: docs/design/memory.md)
_EXPRESSION_BYTES = 200  # per pool expression: its kind, arguments, id and its caches' entries
_STATE_BYTES = 450  # per automaton state: its items, id and accepted lexemes (Python objects)
_MASK_ENTRY_BYTES = 550  # per cached mask: its MaskRow, key and dictionary slot


def _array_bytes(part: object) -> int:
    """Bytes of the numpy arrays held as attributes of ``part``."""
    return sum(value.nbytes for value in tuple(vars(part).values()) if isinstance(value, np.ndarray))


def memory_of(grammars: Iterable[CompiledGrammar]) -> int:
    """An estimate of the bytes compiled ``grammars`` keep alive together, cheap to take (no walk
    over their objects): each one's automaton (lexer or DFA) and parser tables, the parse arena
    kept for its next matcher, its expression pool and its mask cache, whose rows are counted once
    however many grammars share them (equal rows are held once per vocabulary). It grows as
    matchers explore new states. ``docs/design/memory.md`` compares it with a walk over the
    objects. Not counted: what every grammar of the vocabulary shares, and live matchers."""
    total = 0
    for total in running_memory(grammars):
        pass
    return total


def running_memory(grammars: Iterable[CompiledGrammar | None]) -> Iterator[int]:
    """:func:`memory_of` of the first 1, 2, ... of ``grammars`` (``None``, or a grammar seen
    before, adds nothing), one total per item: a cache keeps the newest grammars that fit its budget
    in one pass. Each grammar keeps its own figures (:meth:`CompiledGrammar._table_bytes`,
    :meth:`CompiledGrammar._row_ids`) until they change, so a pass is two set operations per
    grammar: ~0.2 ms for 128 grammars and their 3,900 masks, cheap enough for every insert."""
    total = 0
    rows: set[int] = set()
    counted: set[int] = set()
    for grammar in grammars:
        if grammar is None or id(grammar) in counted:
            yield total
            continue
        counted.add(id(grammar))
        total += grammar._table_bytes()
        ids, width = grammar._row_ids()
        new = ids.difference(rows)  # a walk over the grammar's rows, not over ``rows``
        rows |= new
        total += len(new) * width
        yield total


class GrammarCompiler:
    """Compiles grammars for one vocabulary: owns the vocabulary, the limits and a bounded cache.

    ``cache_size``: compiled grammars kept, most recently used first (a grammar with the same
    source and options gives the same :class:`CompiledGrammar` back). ``use_slicer=False`` walks
    the whole trie for every mask and ``use_leo=False`` turns off Leo's optimization of right
    recursion in the Earley parser: both for comparisons and tests. Thread-safe.
    """

    def __init__(self, vocab: Vocabulary, *, limits: Limits | None = None, cache_size: int = 64,
                 use_slicer: bool = True, use_leo: bool = True) -> None:
        if not isinstance(vocab, Vocabulary):
            raise TypeError(f"vocab must be a leapgram.Vocabulary, not {type(vocab).__name__}")
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError(f"limits must be a leapgram.Limits, not {type(limits).__name__}")
        if isinstance(cache_size, bool) or not isinstance(cache_size, int):
            raise TypeError(f"cache_size must be an int, not {type(cache_size).__name__}")
        if cache_size < 0:
            raise ValueError(f"cache_size must be >= 0, not {cache_size}")
        self.vocab = vocab
        self.limits = limits or DEFAULT_LIMITS
        self.cache_size = cache_size
        self._options = (bool(use_slicer), bool(use_leo))
        self._cache: OrderedDict[tuple, CompiledGrammar] = OrderedDict()
        self._lock = threading.Lock()

    def compile(self, grammar: Grammar) -> CompiledGrammar:
        """Bind ``grammar`` to this compiler's vocabulary (cached)."""
        if not isinstance(grammar, Grammar):
            raise TypeError(f"grammar must be a leapgram.Grammar, not {type(grammar).__name__}; "
                            "build one with Grammar.from_regex / from_json_schema / from_lark / from_gbnf")
        key = grammar.key
        with self._lock:
            found = self._cache.get(key)
            if found is not None:
                self._cache.move_to_end(key)
                return found
        use_slicer, use_leo = self._options
        compiled = CompiledGrammar(grammar, self.vocab, self.limits, use_slicer=use_slicer, use_leo=use_leo)
        wait_for_kernels()  # a fresh process: its first masks find the kernels loaded
        if self.cache_size:
            with self._lock:
                compiled = self._cache.setdefault(key, compiled)
                self._cache.move_to_end(key)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return compiled

    def compile_regex(self, pattern: str, **options: Any) -> CompiledGrammar:
        """``compile(Grammar.from_regex(pattern, **options))`` under this compiler's limits."""
        return self.compile(Grammar.from_regex(pattern, limits=self.limits, **options))

    def compile_json_schema(self, schema: Any, **options: Any) -> CompiledGrammar:
        """``compile(Grammar.from_json_schema(schema, **options))`` under this compiler's limits."""
        return self.compile(Grammar.from_json_schema(schema, limits=self.limits, **options))

    def compile_lark(self, text: str, **options: Any) -> CompiledGrammar:
        """``compile(Grammar.from_lark(text, **options))`` under this compiler's limits."""
        return self.compile(Grammar.from_lark(text, limits=self.limits, **options))

    def compile_gbnf(self, text: str, **options: Any) -> CompiledGrammar:
        """``compile(Grammar.from_gbnf(text, **options))`` under this compiler's limits."""
        return self.compile(Grammar.from_gbnf(text, limits=self.limits, **options))

    def clear_cache(self) -> None:
        """Forget every cached compiled grammar."""
        with self._lock:
            self._cache.clear()

    def __repr__(self) -> str:
        return f"GrammarCompiler(vocab_size={self.vocab.size}, cached={len(self._cache)}/{self.cache_size})"


_VOCABULARY_COMPILERS: weakref.WeakKeyDictionary[Vocabulary, dict[tuple, GrammarCompiler]] = \
    weakref.WeakKeyDictionary()


def compiler_for(vocab: Vocabulary, *, limits: Limits | None = None, use_slicer: bool = True,
                 use_leo: bool = True) -> GrammarCompiler:
    """The :class:`GrammarCompiler` kept with ``vocab`` for these options, made on first use: for
    integrations that are handed a vocabulary, not a compiler (it lives as long as the vocabulary)."""
    if not isinstance(vocab, Vocabulary):
        raise TypeError(f"vocab must be a leapgram.Vocabulary, not {type(vocab).__name__}")
    options = (limits or DEFAULT_LIMITS, bool(use_slicer), bool(use_leo))
    with _DERIVED_LOCK:
        compilers = _VOCABULARY_COMPILERS.setdefault(vocab, {})
        compiler = compilers.get(options)
        if compiler is None:
            compiler = compilers[options] = GrammarCompiler(vocab, limits=options[0], use_slicer=use_slicer,
                                                            use_leo=use_leo)
    return compiler


def compile(grammar: Grammar, vocab: Vocabulary, *, limits: Limits | None = None,
            use_slicer: bool = True, use_leo: bool = True) -> CompiledGrammar:
    """Deprecated: use ``GrammarCompiler(vocab, limits=...).compile(grammar)``."""
    warnings.warn("leapgram.compile(grammar, vocab) is deprecated and will be removed in 0.3; "
                  "use leapgram.GrammarCompiler(vocab).compile(grammar)", DeprecationWarning, stacklevel=2)
    return compiler_for(vocab, limits=limits, use_slicer=use_slicer, use_leo=use_leo).compile(grammar)


def clear_cache() -> None:
    """Deprecated: each :class:`GrammarCompiler` owns its cache (``GrammarCompiler.clear_cache``)."""
    warnings.warn("leapgram.clear_cache() is deprecated; use GrammarCompiler.clear_cache()", DeprecationWarning,
                  stacklevel=2)
    with _DERIVED_LOCK:
        _VOCABULARY_COMPILERS.clear()
