"""Earley charts in flat arrays, driven by the kernels of :mod:`leapgram._kernels.earley`.

:class:`ParserTables` holds one grammar's static tables (shared by its matchers); :class:`ChartArena`
holds the charts of one matcher and its forks, a tree that only grows, so a state is
``(chart id, lexer state)`` and rollback costs nothing. The arena answers the kernels' requests
(``NEED_SPACE``, ``NEED_FRESH``) and enforces the item budgets. Design: docs/design/earley-walk.md.
"""

from __future__ import annotations

import threading

import numpy as np

from .._kernels import earley as k
from .._kernels.entry import DirectKernel
from .._kernels.rule_tables import rule_tables_kernel
from .._kernels.tables import ABSENT, EMPTY_KEY, table_get_kernel, table_rehash_kernel
from .._kernels.views import arena_views, grammar_views
from ..errors import BudgetExceededError, GrammarError
from ..grammar.ir import GrammarIR
from ..limits import Limits
from .lexer import Lexer

_TABLE_GET = DirectKernel(table_get_kernel)  # ChartArena.boundary: int64 tables and an int key, always
_RULE_TABLES = DirectKernel(rule_tables_kernel)  # int32 and int8 arrays and ints, always
_ROOT = DirectKernel(k.root_kernel)  # ParserTables.grammar and ChartArena.arrays (fixed types) and an int


class ParserTables:
    """Dotted rules, first rules per nonterminal and nullability of one grammar, as int arrays."""

    def __init__(self, ir: GrammarIR) -> None:
        self.num_nonterminals = len(ir.nonterminals)
        self.num_lexemes = len(ir.lexemes)
        self.dr_next, self.dr_lhs, self.dr_accept, self.first_ptr, self.first_drs = rule_arrays(ir)
        self.nullable = np.zeros(self.num_nonterminals, dtype=np.int8)
        self.nullable[list(ir.nullable_nonterminals())] = 1
        self.grammar = (self.dr_next, self.dr_lhs, self.dr_accept, self.nullable, self.first_ptr,
                        self.first_drs, np.int64(ir.start))
        self.grammar_views = grammar_views(self.grammar)  # valid while self.grammar lives (see views.py)


def rule_arrays(ir: GrammarIR) -> tuple[np.ndarray, ...]:
    """``dr_next``, ``dr_lhs``, ``dr_accept``, ``first_ptr`` and ``first_drs`` of ``ir``'s rules
    (the int32 ones views of one array), written by :func:`rule_tables_kernel` from the rules
    packed into one array (:meth:`GrammarIR.packed_rules`). Lists in Python, or a dozen numpy
    calls past 256 rules, took twice as long (2.2x a small schema's, 1.6x a large one's)."""
    packed = ir.packed_rules()
    count, num_nonterminals = len(ir.rules), len(ir.nonterminals)
    size = (0 if packed is None else packed.shape[0]) - count + 1  # each rule's symbols and END, then the sentinel
    ptr_end = 2 * size + num_nonterminals + 1
    flat = np.empty(ptr_end + max(count, 1), dtype=np.int32)
    accept = np.zeros(size, dtype=np.int8)
    if packed is None or not _RULE_TABLES.call(packed, count, ir.start, num_nonterminals, flat, accept):
        raise GrammarError("a rule names a nonterminal the grammar does not have, or a symbol past int32")
    return flat[:size], flat[size:2 * size], accept, flat[2 * size:ptr_end], flat[ptr_end:]


# the layout of ChartArena's first buffers (see its __init__)
_CHARTS_END = 2080 + 256 * k.CHART_FIELDS
_CHAIN_END = _CHARTS_END + 3 * k.LEO_CHAIN
_SMALL_FIXED = _CHAIN_END + 289 + 128
_WIDE = 5760 + k.COUNT_FIELDS


_WIDE_START = np.zeros(_WIDE, dtype=np.int64)  # what ChartArena's int64 buffer starts as (copied)
_WIDE_START[:2560] = EMPTY_KEY  # a JSON document's charts: about 200 boundaries (no rehash below 254)
_WIDE_START.flags.writeable = False


def _empty_table(size: int) -> tuple[np.ndarray, np.ndarray]:
    return np.full(size, EMPTY_KEY, dtype=np.int64), np.zeros(size, dtype=np.int64)


class ChartArena:
    """The charts of one matcher (and its forks). Chart 0 is the root.

    Thread rules. An arena is written by every walk on it, so one thread at a time uses it:
    while one matcher holds it (the common case), that matcher's thread; once a fork shares it
    (:meth:`share`, from ``Matcher.fork``), :class:`leapgram.mask.engines.CfgEngine` takes
    :attr:`lock` around each of its calls on it, so forks on different threads take turns. The
    kernels read the arrays through :attr:`views` (raw addresses); a views array holds the
    arrays it names (:func:`leapgram._kernels.views.holding`), so a kernel still running on
    views made before :meth:`_grow` or :meth:`tidy` replaced an array reads the old one, alive
    until that call returns: even a misuse (one matcher on two threads at once) reads stale
    charts, never freed memory.
    """

    def __init__(self, tables: ParserTables, lexer: Lexer, limits: Limits, *, use_leo: bool = True) -> None:
        self.tables = tables
        self.lexer = lexer
        self.limits = limits
        self.use_leo = use_leo
        # the first arrays are views of two buffers, two allocations instead of twenty (a small
        # grammar's matcher pays them in its TTFM); every growth replaces a view by a new array.
        # Sized for a short JSON document's walks, so they rarely grow; a table's keys start at
        # EMPTY_KEY and ``set_fresh`` at -1, so those come first in their buffer.
        lexemes, nonterminals = max(tables.num_lexemes, 1), max(tables.num_nonterminals, 1)
        small = np.zeros(_SMALL_FIXED + nonterminals + 2 * lexemes, dtype=np.int32)
        small[:32] = -1
        self.set_fresh = small[:32]
        self.items = small[32:2080].reshape(1024, 2)
        self.charts = small[2080:_CHARTS_END].reshape(256, k.CHART_FIELDS)
        self.chain = small[_CHARTS_END:_CHAIN_END].reshape(k.LEO_CHAIN, 3)
        self.set_ptr = small[_CHAIN_END:_CHAIN_END + 33]
        self.set_items = small[_CHAIN_END + 33:_CHAIN_END + 289]
        self.scr_gen = small[_CHAIN_END + 289:_SMALL_FIXED]
        self.nt_gen = small[_SMALL_FIXED:_SMALL_FIXED + nonterminals]
        self.lex_gen = small[_SMALL_FIXED + nonterminals:_SMALL_FIXED + nonterminals + lexemes]
        self.tmp = small[_SMALL_FIXED + nonterminals + lexemes:]
        wide = _WIDE_START.copy()  # the tables' keys EMPTY_KEY, the rest 0
        self.bound_keys, self.child_keys = wide[:1024], wide[1024:2048]
        self.leo_keys, self.set_keys = wide[2048:2304], wide[2304:2560]
        self.bound_vals, self.child_vals = wide[2560:3584], wide[3584:4608]
        self.leo_vals, self.set_vals = wide[4608:4864], wide[4864:5120]
        self.scr_keys = wide[5120:5248]
        self.fps = wide[5248:5760].reshape(256, 2)
        self.counts = wide[5760:]
        self.walk_stack = np.zeros(0, dtype=np.int64)  # the trie walk's scratch, sized by its engine
        self.lock: threading.RLock | None = None  # taken by CfgEngine's calls once the arena is shared
        self._pack()
        while True:
            status = _ROOT.call(tables.grammar, self.arrays, limits.max_earley_items)
            if status == k.OK:
                break
            self.handle(status, 0)
        self.fresh_of(0)

    # ----- kernel plumbing --------------------------------------------------------------

    def share(self) -> None:
        """From now on, each engine call on this arena holds :attr:`lock` (a fork shares it)."""
        if self.lock is None:
            self.lock = threading.RLock()

    def release(self) -> None:
        """No matcher holds the arena any more (its lease is gone): drop the lock (the next
        matcher may hold it alone)."""
        self.lock = None

    def _pack(self) -> None:
        self.arrays = (self.items, self.charts, self.counts, self.bound_keys, self.bound_vals,
                       self.child_keys, self.child_vals, self.leo_keys, self.leo_vals, self.set_keys,
                       self.set_vals, self.set_ptr, self.set_items, self.set_fresh, self.scr_keys,
                       self.scr_gen, self.nt_gen, self.lex_gen, self.tmp, self.chain, self.fps)
        self.views = arena_views(self.arrays)  # the walk kernels' (holding these arrays)

        # tidy() grows a table once its count passes a quarter of its size: (count + 2) * 4 > size
        self._bound_room = self.bound_keys.shape[0] // 4 - 2
        self._child_room = self.child_keys.shape[0] // 4 - 2
        self._leo_room = self.leo_keys.shape[0] // 4 - 2

    def handle(self, status: int, payload: int) -> None:
        """Act on a kernel's request: grow what is full, or fill a fresh lexer state."""
        if status == k.NEED_FRESH:
            self.fresh_of(int(payload))
        elif status == k.NEED_SPACE:
            self._grow(int(self.counts[k.WANT]))
        elif status == k.STALE_LEXER:  # the lexer grew under the call: calling again reads its new arrays
            return
        elif status == k.OVER_BUDGET:
            raise BudgetExceededError("max_earley_items", self.limits.max_earley_items, "Earley row too large")
        else:
            raise AssertionError(f"unexpected kernel status {status}")

    def _grow(self, want: int) -> None:
        counts = self.counts
        if want == k.WANT_ITEMS:
            size = self.items.shape[0] * 2
            if size > self.limits.max_parse_items:
                raise BudgetExceededError("max_parse_items", self.limits.max_parse_items,
                                          "parser charts too large (long output or a very ambiguous grammar)")
            self.items = _grown_rows(self.items, size)
        elif want == k.WANT_CHARTS:
            self.charts = _grown_rows(self.charts, self.charts.shape[0] * 2)
            self.fps = _grown_rows(self.fps, self.charts.shape[0])
        elif want == k.WANT_SCRATCH:
            size = self.scr_keys.shape[0] * 2
            self.scr_keys = np.zeros(size, dtype=np.int64)
            self.scr_gen = np.zeros(size, dtype=np.int32)
        elif want == k.WANT_SETS:
            if counts[k.N_SETS] + 2 > self.set_ptr.shape[0]:
                self.set_ptr = _grown_rows(self.set_ptr, self.set_ptr.shape[0] * 2)
                fresh = np.full(self.set_ptr.shape[0] - 1, -1, dtype=np.int32)
                fresh[: self.set_fresh.shape[0]] = self.set_fresh
                self.set_fresh = fresh
            if counts[k.N_SET_ITEMS] + self.tables.num_lexemes > self.set_items.shape[0]:
                size = max(self.set_items.shape[0] * 2, int(counts[k.N_SET_ITEMS]) + self.tables.num_lexemes)
                self.set_items = _grown_rows(self.set_items, size)
            if (counts[k.SET_COUNT] + 2) * 2 > self.set_keys.shape[0]:
                self.set_keys, self.set_vals = _rehashed(self.set_keys, self.set_vals)
        elif want == k.WANT_TABLES:
            self._grow_tables(force=True)
        else:
            raise AssertionError(f"unexpected space request {want}")
        self._pack()

    def _grow_tables(self, force: bool = False) -> None:
        """Double the memo tables past a quarter load (the kernels refuse inserts past half)."""
        counts = self.counts
        limit = 2 if force else 4
        if (counts[k.BOUND_COUNT] + 2) * limit > self.bound_keys.shape[0]:
            self.bound_keys, self.bound_vals = _rehashed(self.bound_keys, self.bound_vals)
        if (counts[k.CHILD_COUNT] + 2) * limit > self.child_keys.shape[0]:
            self.child_keys, self.child_vals = _rehashed(self.child_keys, self.child_vals)
        if (counts[k.LEO_COUNT] + 2) * 4 > self.leo_keys.shape[0]:
            self.leo_keys, self.leo_vals = _rehashed(self.leo_keys, self.leo_vals)

    def tidy(self) -> None:
        """Grow tables that are filling up (called after each walk, so memoization never stops)."""
        if (self.counts.item(k.BOUND_COUNT) > self._bound_room or self.counts.item(k.CHILD_COUNT) > self._child_room
                or self.counts.item(k.LEO_COUNT) > self._leo_room):
            self._grow_tables()
            self._pack()

    def fresh_of(self, chart: int) -> int:
        """The lexer's fresh state for the lexemes ``chart`` allows (computed once per set)."""
        set_id = self.charts.item(chart, k.SET)
        fresh = self.set_fresh.item(set_id)
        if fresh < 0:
            lo, hi = self.set_ptr.item(set_id), self.set_ptr.item(set_id + 1)
            fresh = self.lexer.fresh_state(self.set_items[lo:hi])
            self.set_fresh[set_id] = fresh
        return fresh

    # ----- queries --------------------------------------------------------------------------

    def boundary(self, chart: int, lex: int) -> tuple[int, int] | None:
        """The chart and fresh lexer state after the lexeme that ends in lexer state ``lex`` at
        ``chart``; ``None`` when the parser allows none of the lexemes that end there."""
        if not self.lexer.accepting[lex]:
            return None
        value = _TABLE_GET.call(self.bound_keys, self.bound_vals, (chart << 32) | lex)
        if value == ABSENT:
            while value == ABSENT:
                status, value = k.boundary_kernel(self.tables.grammar, self.arrays, self.lexer.kernel_arrays,
                                                  np.int64(chart), np.int64(lex), self.limits.max_earley_items,
                                                  self.use_leo)
                if status != k.OK:
                    self.handle(status, value)
                    value = ABSENT
            self.tidy()
        if value == k.NONE:
            return None
        return int(value >> 32), int(value & 0xFFFFFFFF)

    def scan(self, chart: int, lexemes: tuple[int, ...]) -> int | None:
        """The chart after a lexeme that matched each of ``lexemes`` at ``chart``, or ``None``
        when the parser allows none of them (not memoized: the trie walk uses :meth:`boundary`)."""
        wanted = np.array(lexemes, dtype=np.int32)
        while True:
            status, child = k.scan_kernel(self.tables.grammar, self.arrays, np.int64(chart), wanted,
                                          self.limits.max_earley_items, self.use_leo)
            if status == k.OK:
                break
            self.handle(status, child)
        return None if child == k.NONE else int(child)

    def fingerprint(self, chart: int) -> tuple[int, int]:
        """Two 62-bit fingerprints of the chart's row and, through its origins, of every row
        its future depends on: charts with equal fingerprints (in any arena of the same grammar)
        allow the same lexeme sequences, so they have the same token masks."""
        return int(self.fps[chart, 0]), int(self.fps[chart, 1])

    def accepting(self, chart: int) -> bool:
        """Whether the lexemes up to ``chart`` form a complete sentence."""
        return self.charts.item(chart, k.ACCEPT) != 0

    def allowed_lexemes(self, chart: int) -> frozenset[int]:
        """The lexemes the parser allows next at ``chart``."""
        set_id = int(self.charts[chart, k.SET])
        return frozenset(self.set_items[int(self.set_ptr[set_id]):int(self.set_ptr[set_id + 1])].tolist())

    def row(self, chart: int) -> list[tuple[int, int]]:
        """The items ``(dotted rule, origin chart)`` of ``chart``'s row (for tests)."""
        lo, hi = int(self.charts[chart, k.START]), int(self.charts[chart, k.STOP])
        return [(int(d), int(o)) for d, o in self.items[lo:hi]]

    @property
    def num_charts(self) -> int:
        return int(self.counts[k.N_CHARTS])

    @property
    def num_boundaries(self) -> int:
        """Memoized lexeme boundaries ``(chart, lexer state) -> (child chart, fresh state)``."""
        return int(self.counts[k.BOUND_COUNT])

    def depth(self, chart: int) -> int:
        """How many lexemes were scanned from the root to ``chart``."""
        depth = 0
        while chart != 0:
            chart = int(self.charts[chart, k.PARENT])
            depth += 1
        return depth

    @property
    def num_items(self) -> int:
        return int(self.counts[k.N_ITEMS])


def _grown_rows(array: np.ndarray, size: int) -> np.ndarray:
    grown = np.zeros((size, *array.shape[1:]), dtype=array.dtype)
    grown[: array.shape[0]] = array
    return grown


def rehash_a_small_table() -> None:
    """Grow a 2-slot table once: ``warm_up`` loads (or, on a fresh installation, compiles)
    ``table_rehash_kernel`` with it, which its small grammars never reach."""
    _rehashed(*_empty_table(2))


def _rehashed(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    new_keys, new_values = _empty_table(keys.shape[0] * 2)
    table_rehash_kernel(keys, values, new_keys, new_values)
    return new_keys, new_values
