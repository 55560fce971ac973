"""``ExprPool``: the hash-consed regular expressions over bytes of one grammar, with their caches.

The pool is composed of its sections: the constructors (:mod:`.construction`), derivatives and
byte classes (:mod:`.derivatives`), emptiness and inclusion (:mod:`.emptiness`) and widening
(:mod:`.widening`). Their names are re-exported here. Design: docs/design/regex-derivatives.md.
"""

from __future__ import annotations

import threading

from ..limits import DEFAULT_LIMITS, Limits
from .construction import (
    ALL_BYTES,
    EMPTY,
    EPSILON,
    INF,
    K_AND,
    K_BYTES,
    K_CONCAT,
    K_EMPTY,
    K_EPS,
    K_NOT,
    K_OR,
    K_REPEAT,
    bits_of,
)
from .derivatives import BY_FIRST_MIN, refine_partition
from .emptiness import Emptiness, SharedBudget
from .widening import Widening

__all__ = [
    "ALL_BYTES", "BY_FIRST_MIN", "EMPTY", "EPSILON", "INF", "K_AND", "K_BYTES", "K_CONCAT", "K_EMPTY", "K_EPS",
    "K_NOT", "K_OR", "K_REPEAT", "ExprPool", "PoolFamily", "SharedBudget", "bits_of", "refine_partition",
]


# Per-expression caches that a copy of a family template takes over on first use, not at the copy:
# a JSON Schema compile and first mask read none of them in 19 schemas of 20 (in one of 3: _deriv).
_LAZY_CACHES = ("_classes", "_bounds", "_shortest", "_deriv", "_refined", "char_ranges", "_by_first", "_within",
                "_widened", "_empty", "_expanded", "_shortest_strings", "_partners")


_PLANS: dict[tuple[tuple[str, ...], bool], tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {}


def _copy_plan(own: dict, template: bool) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """How :meth:`ExprPool.copy` treats the attributes of a pool (``own``, its ``__dict__``):
    those the copy shares (values that are no container), those it copies, and, from a
    template, the ``_LAZY_CACHES`` it copies on first use. Remembered per tuple of names (an
    attribute's kind never changes, and pools have one of a few sets of names), so each copy
    skips the tests; the values are read at each copy."""
    key = (tuple(own), template)
    found = _PLANS.get(key)
    if found is None:
        names = key[0]
        skipped = {"lock", "_lazy", "_template", "_preds", "_shared_budget"}
        deferred = tuple(name for name in _LAZY_CACHES if name in names) if template else ()
        kept = [name for name in names if name not in skipped and name not in deferred]
        containers = {name for name in kept if isinstance(own[name], (list, dict, set))}
        found = _PLANS.setdefault(key, (tuple(name for name in kept if name not in containers),
                                        tuple(name for name in kept if name in containers), deferred))
    return found


class PoolFamily:
    """What a pool and all its copies share: their first ``size`` expressions have the same ids
    in each of them, so whatever depends on those expressions only (a lexer row template, a slice
    check) is computed once per family, in ``memo``, instead of once per grammar. Made by
    :meth:`ExprPool.warm_caches` (the JSON Schema base pool: every schema's pool is its copy).
    ``base_size`` (at least ``size``): the expressions the base pool held when the family was
    made, in every copy with the same ids too (a pool only appends; the family is made by the
    pool itself and copies take it over), though not family members (JSON's punctuation).
    ``set_up``: literals among those base expressions (not family members) that the pool's
    front end names for every lexer of the family to lay out with its block (JSON's ``{`` and
    ``[``: parser.lexer's ``set_up_chains``); the seam by which a front end names them without
    importing the parser."""

    __slots__ = ("base_size", "memo", "set_up", "size")

    def __init__(self, size: int, base_size: int | None = None) -> None:
        self.size = size
        self.base_size = size if base_size is None else max(size, base_size)
        self.memo: dict[tuple, object] = {}
        self.set_up: tuple[int, ...] = ()


class ExprPool(Emptiness, Widening):
    """Interned expressions plus the caches that make derivatives cheap.

    Not thread-safe by itself: whoever grows it after construction (the lazy DFAs) holds
    ``lock``. ``memo`` keeps the results of constructions by their arguments (literals, parsed
    regexes, a front end's derived expressions): ids, valid in this pool and its copies.
    """

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.lock = threading.RLock()
        self.kind: list[int] = []
        self.args: list[tuple] = []
        self.nullable: list[bool] = []
        self.has_bool: list[bool] = []
        self._ids: dict[tuple, int] = {}  # (kind, args) -> id, but for concatenations:
        self._pairs: dict[tuple[int, int], int] = {}  # their args -> id (Constructors._intern_pair)
        self._deriv: dict[int, int] = {}
        self._classes: dict[int, tuple[int, ...]] = {}
        self._refined: dict[frozenset, tuple[int, ...]] = {}
        self._empty: dict[int, bool] = {}
        self.char_ranges: dict[int, tuple[tuple[int, int], ...]] = {}
        self._first: dict[int, int] = {}
        self._by_first: dict[int, tuple[dict[int, list[int]], list[int]]] = {}  # see _starting_with
        self._bounds: dict[int, int] = {}
        self.largest_count = 0  # the largest repeat bound built in this pool (widening is moot below it)
        self._lengths: dict[int, int] = {}
        self._shortest: dict[int, int] = {}
        self._shortest_strings: dict[int, bytes | None] = {}  # Emptiness._shortest_string
        self._preds: dict[int, list[int]] = {}  # search edges backwards: x derives to d
        self._expanded: set[int] = set()
        self._shared_budget: list | None = None  # [limit name, value, steps left] (emptiness_budget)
        self.emptiness_steps = 0  # steps of every emptiness search so far (benchmarks read it)
        self._widened: dict[tuple[int, int], int] = {}
        self._partners: dict[tuple, object] = {}  # Widening._partner_reach
        self.memo: dict[tuple, int] = {}
        self._single_bytes: list[int | None] = [None] * 256
        self.family: PoolFamily | None = None  # shared with copies (see PoolFamily)
        self._within: dict[tuple[int, int], bool] = {}  # _within_star
        self._intern(K_EMPTY, (), False, False)
        self._intern(K_EPS, (), True, False)
        any_byte = self._intern(K_BYTES, (ALL_BYTES,), False, False)
        self._univ = self._intern(K_REPEAT, (any_byte, 0, INF), True, False)

    def __len__(self) -> int:
        return len(self.kind)

    def copy(self) -> ExprPool:
        """An independent pool with the same expressions (same ids) and caches: a pool of
        expressions every grammar needs is built once and copied per grammar (a few µs per
        hundred expressions), instead of parsing them again. The caches most grammars never
        read (``_LAZY_CACHES``) of a pool that :meth:`warm_caches` made a family's template
        (never grown after) are copied on first use (:meth:`__getattr__`)."""
        twin = ExprPool.__new__(ExprPool)
        with self.lock:
            own = self.__dict__
            template = bool(own.get("_template"))
            shared, copied, deferred = _copy_plan(own, template)
            state = twin.__dict__
            state.update({name: own[name] for name in shared})
            state.update({name: own[name].copy() for name in copied})
            lazy = {name: value for name, value in own.get("_lazy", {}).items() if name not in own}
            if template:
                lazy.update({name: own[name] for name in deferred})
            twin.lock = threading.RLock()
            twin._lazy = lazy
            twin._preds = {d: list(xs) for d, xs in self._preds.items()}  # grown in place: not shared
            twin._shared_budget = None
        return twin

    def __getattr__(self, name: str):
        """A cache of ``_LAZY_CACHES`` not copied yet from the template (see :meth:`copy`)."""
        source = self.__dict__.get("_lazy", {}).get(name)
        if source is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self.__dict__.setdefault(name, source.copy())

    def warm_caches(self, family_size: int | None = None) -> None:
        """Fill the per-expression caches of every expression in the pool (first bytes, byte
        classes, count bounds, estimated and, without intersection or complement, longest
        lengths), so that :meth:`copy` hands them to every copy: a pool copied per grammar
        otherwise works them out again, bottom-up over hundreds of shared nodes, inside the
        first masks that meet them. The pool and its later copies then form a
        :class:`PoolFamily` (:meth:`shared_memo`) of the first ``family_size`` expressions
        (default: all of them; those after it are in every copy, but outside the family)."""
        for e in range(len(self.kind)):
            self.first_bytes(e)
            self.byte_classes(e)
            self._count_bound(e)
            self._estimated_length(e)
            if not self.has_bool[e]:
                self._max_length(e)
        self.family = PoolFamily(len(self.kind) if family_size is None else family_size, len(self.kind))
        self._template = True  # only copied from now on (copy() shares its caches until first use)

    def shared_memo(self, e: int) -> dict[tuple, object] | None:
        """The memo this pool shares with every pool of its family, for a result that depends
        on expression ``e`` only; ``None`` when ``e`` is not one of the family's expressions."""
        family = self.family
        return family.memo if family is not None and e < family.size else None

    def matches(self, e: int, data: bytes) -> bool:
        """Whether ``e`` matches all of ``data``."""
        return self.nullable[self.derivative_bytes(e, data)]

    def describe(self, e: int, limit: int | None = None) -> str:
        """A readable form of ``e`` for debugging and error messages; with ``limit``, cut after
        ``limit`` characters (ending in ``…``). An expression is a graph with shared nodes, and
        its text a tree, exponentially longer for some (a ``multipleOf`` by remainders: over a
        minute of printing for one state): with ``limit`` the printing stops there."""
        out: list[str] = []
        room = [INF if limit is None else limit]
        try:
            self._describe_into(e, out, room)
        except _Cut:
            return "".join(out)[:limit] + "…"
        return "".join(out)

    def _describe_into(self, e: int, out: list[str], room: list[int]) -> None:
        """Append the text of ``e`` to ``out``; raise ``_Cut`` once ``room[0]`` characters are
        passed (``INF``: no limit)."""
        kind = self.kind[e]
        args = self.args[e]
        if kind == K_EMPTY:
            _put(out, room, "∅")
        elif kind == K_EPS:
            _put(out, room, "ε")
        elif kind == K_BYTES:
            _put(out, room, _describe_bytes(args[0]))
        elif kind == K_CONCAT:
            self._paren_into(args[0], out, room)
            self._paren_into(args[1], out, room)
        elif kind == K_OR or kind == K_AND:
            _put(out, room, "(")
            for i, x in enumerate(args):
                if i:
                    _put(out, room, "|" if kind == K_OR else "&")
                self._describe_into(x, out, room)
            _put(out, room, ")")
        elif kind == K_NOT:
            _put(out, room, "~")
            self._paren_into(args[0], out, room)
        else:
            inner, low, high = args
            self._paren_into(inner, out, room)
            _put(out, room, f"{{{low},}}" if high == INF else f"{{{low},{high}}}")

    def _paren_into(self, e: int, out: list[str], room: list[int]) -> None:
        wrap = self.kind[e] == K_CONCAT
        if wrap:
            _put(out, room, "(")
        self._describe_into(e, out, room)
        if wrap:
            _put(out, room, ")")


class _Cut(Exception):
    """``ExprPool.describe`` reached its limit."""


def _put(out: list[str], room: list[int], text: str) -> None:
    """Append ``text`` to ``out`` within ``room[0]`` characters (``INF``: no limit)."""
    out.append(text)
    if room[0] != INF:
        room[0] -= len(text)
        if room[0] < 0:
            raise _Cut


def _describe_bytes(mask: int) -> str:
    members = bits_of(mask)
    if len(members) == 1:
        b = members[0]
        return chr(b) if 0x21 <= b < 0x7F and chr(b) not in "()[]|&~*+?{}.\\" else f"\\x{b:02x}"
    if mask == ALL_BYTES:
        return "[\\x00-\\xff]"
    return "[" + ",".join(f"{b:02x}" for b in members[:8]) + ("..." if len(members) > 8 else "") + "]"
