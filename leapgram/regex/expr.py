"""Hash-consed regular expressions over bytes, with Brzozowski derivatives.

Every expression lives in an :class:`ExprPool` and is named by a small integer. Constructors
simplify as they build (``R|∅ = R``, ``∅R = ∅``, ``εR = R``, ``(R*)* = R*``, byte classes merged in
alternations and intersections, alternatives sorted and deduplicated), so structurally equal
expressions get the same id and the lazily built DFA stays small (Owens, Reppy and Turon,
"Regular-expression derivatives re-examined", 2009).

A byte class is a 256-bit Python ``int``: bit ``b`` set means byte ``b`` is in the class.
"""

from __future__ import annotations

import heapq
import threading

from ..errors import BudgetExceededError
from ..limits import DEFAULT_LIMITS, Limits

EMPTY = 0
EPSILON = 1

K_EMPTY, K_EPS, K_BYTES, K_CONCAT, K_OR, K_AND, K_NOT, K_REPEAT = range(8)
INF = -1
ALL_BYTES = (1 << 256) - 1
BY_FIRST_MIN = 8  # alternations with more children index them by first byte (ExprPool._starting_with)


def bits_of(mask: int) -> list[int]:
    """The bytes in a byte class, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class PoolFamily:
    """What a pool and all its copies share: their first ``size`` expressions have the same ids
    in each of them, so whatever depends on those expressions only (a lexer row template, a slice
    check) is computed once per family, in ``memo``, instead of once per grammar. Made by
    :meth:`ExprPool.warm_caches` (the JSON Schema base pool: every schema's pool is its copy)."""

    __slots__ = ("memo", "size")

    def __init__(self, size: int) -> None:
        self.size = size
        self.memo: dict[tuple, object] = {}


class ExprPool:
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
        self._ids: dict[tuple, int] = {}
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
        self._preds: dict[int, list[int]] = {}  # search edges backwards: x derives to d
        self._expanded: set[int] = set()
        self._shared_budget: list | None = None  # [limit name, value, steps left] (emptiness_budget)
        self.emptiness_steps = 0  # steps of every emptiness search so far (benchmarks read it)
        self._widened: dict[tuple[int, int], int] = {}
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
        hundred expressions), instead of parsing them again."""
        twin = ExprPool.__new__(ExprPool)
        twin.limits = self.limits
        twin.lock = threading.RLock()
        with self.lock:
            for name, value in self.__dict__.items():
                if name not in ("limits", "lock"):
                    setattr(twin, name, value.copy() if isinstance(value, (list, dict, set)) else value)
            twin._preds = {d: list(xs) for d, xs in self._preds.items()}  # grown in place: not shared
            twin._shared_budget = None
        return twin

    def warm_caches(self) -> None:
        """Fill the per-expression caches of every expression in the pool (first bytes, byte
        classes, count bounds, estimated and, without intersection or complement, longest
        lengths), so that :meth:`copy` hands them to every copy: a pool copied per grammar
        otherwise works them out again, bottom-up over hundreds of shared nodes, inside the
        first masks that meet them. The pool and its later copies then form a
        :class:`PoolFamily` (:meth:`shared_memo`)."""
        for e in range(len(self.kind)):
            self.first_bytes(e)
            self.byte_classes(e)
            self._count_bound(e)
            self._estimated_length(e)
            if not self.has_bool[e]:
                self._max_length(e)
        self.family = PoolFamily(len(self.kind))

    def shared_memo(self, e: int) -> dict[tuple, object] | None:
        """The memo this pool shares with every pool of its family, for a result that depends
        on expression ``e`` only; ``None`` when ``e`` is not one of the family's expressions."""
        family = self.family
        return family.memo if family is not None and e < family.size else None

    def _intern(self, kind: int, args: tuple, nullable: bool, has_bool: bool) -> int:
        key = (kind, args)
        found = self._ids.get(key)
        if found is not None:
            return found
        if len(self.kind) >= self.limits.max_regex_nodes:
            raise BudgetExceededError("max_regex_nodes", self.limits.max_regex_nodes, "too many regex expressions")
        eid = len(self.kind)
        self._ids[key] = eid
        self.kind.append(kind)
        self.args.append(args)
        self.nullable.append(nullable)
        self.has_bool.append(has_bool)
        return eid

    # ----- constructors -------------------------------------------------------------------

    def byteset(self, mask: int) -> int:
        """The expression matching one byte from ``mask``."""
        if mask == 0:
            return EMPTY
        return self._intern(K_BYTES, (mask,), False, False)

    def literal(self, data: bytes) -> int:
        """The expression matching exactly ``data`` (remembered in :attr:`memo`: grammars spell
        the same keys and punctuation many times)."""
        return self.remembered(("literal", bytes(data)), lambda: self._new_literal(data))

    def _new_literal(self, data: bytes) -> int:
        # concat_all without its checks: byte classes are never ε, ∅, nullable or concatenations.
        # Each suffix's longest string is its length: recorded here, so that deciding whether an
        # alternation of names is finite (a key that is none of them) looks at its top node only.
        single = self._single_bytes
        lengths = self._lengths
        out = EPSILON
        for size, b in enumerate(reversed(data), 1):
            byte = single[b]
            if byte is None:
                byte = single[b] = self.byteset(1 << b)
            out = byte if out == EPSILON else self._intern(K_CONCAT, (byte, out), False, False)
            lengths[out] = size
        return out

    def remembered(self, key: tuple, make) -> int:
        """``memo[key]``, made by ``make()`` the first time."""
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = make()
        return found

    def concat(self, a: int, b: int) -> int:
        """``ab``, kept right-associated."""
        if a == EMPTY or b == EMPTY:
            return EMPTY
        if a == EPSILON:
            return b
        if b == EPSILON:
            return a
        if self._is_star(b) and self.nullable[a] and self._within_star(a, self.args[b][0]):
            return b  # A R* = R* when ε ∈ A ⊆ R* (x* after a pattern's class: [a-z]* C* = C*)
        if self._is_star(a) and self.nullable[b] and self._within_star(b, self.args[a][0]):
            return a
        if self.kind[a] == K_CONCAT:  # (h t) b = h (t b), with a loop: a long literal nests deep
            heads = []
            while self.kind[a] == K_CONCAT:
                head, a = self.args[a]
                heads.append(head)
            out = self.concat(a, b)
            for head in reversed(heads):
                out = self.concat(head, out)
            return out
        return self._intern(K_CONCAT, (a, b), self.nullable[a] and self.nullable[b],
                            self.has_bool[a] or self.has_bool[b])

    def concat_all(self, items: list[int]) -> int:
        """``items[0] items[1] ...``; ε for an empty list."""
        out = EPSILON
        for item in reversed(items):
            out = self.concat(item, out)
        return out

    def alt(self, items: list[int]) -> int:
        """``items[0] | items[1] | ...``; ∅ for an empty list."""
        flat: set[int] = set()
        byte_mask = 0
        for item in items:
            kind = self.kind[item]
            if kind == K_OR:
                for sub in self.args[item]:
                    if self.kind[sub] == K_BYTES:
                        byte_mask |= self.args[sub][0]
                    else:
                        flat.add(sub)
            elif kind == K_BYTES:
                byte_mask |= self.args[item][0]
            elif item != EMPTY:
                flat.add(item)
        if byte_mask:
            flat.add(self.byteset(byte_mask))
        if self._universal() in flat:
            return self._universal()
        self._absorb_into_stars(flat)
        if EPSILON in flat and any(self.nullable[x] for x in flat if x != EPSILON):
            flat.discard(EPSILON)
        if not flat:
            return EMPTY
        if len(flat) == 1:
            return next(iter(flat))
        children = tuple(sorted(flat))
        return self._intern(K_OR, children, any(self.nullable[x] for x in children),
                            any(self.has_bool[x] for x in children))

    def _is_star(self, e: int) -> bool:
        return self.kind[e] == K_REPEAT and self.args[e][1] == 0 and self.args[e][2] == INF

    def _absorb_into_stars(self, flat: set[int]) -> None:
        """Drop from an alternation the members inside one of its ``R*`` members (``C* X+ C* | C*``
        after a pattern's character was read): the derivatives of an unanchored pattern then
        stay as small as the pattern instead of growing by a member per byte."""
        stars = [x for x in flat if self._is_star(x)]
        for star in stars:
            if star in flat:
                r = self.args[star][0]
                flat.difference_update([x for x in flat if x != star and self._within_star(x, r)])

    def _within_star(self, x: int, r: int, depth: int = 0) -> bool:
        """Whether every string of ``x`` is a sequence of strings of ``r`` (``x ⊆ r*``), by
        structure only: ``x`` built from ``r``, ε and single bytes that are strings of ``r``
        (members of its byte class) by concatenation, alternation and repetition. ``False``
        when unsure (intersections, complements, deep nesting)."""
        if x == r or x == EPSILON:
            return True
        key = (x, r)
        found = self._within.get(key)
        if found is None:
            kind = self.kind[x]
            if depth > 64 or self.has_bool[x]:
                return False
            if kind == K_BYTES:
                found = self.args[x][0] & ~self._single_bytes_of(r) == 0
            elif kind == K_REPEAT:
                found = self._within_star(self.args[x][0], r, depth + 1)
            elif kind == K_CONCAT or kind == K_OR:
                found = all(self._within_star(c, r, depth + 1) for c in self.args[x])
            else:
                found = False
            self._within[key] = found
        return found

    def _single_bytes_of(self, r: int) -> int:
        """The bytes ``b`` such that the one-byte string ``b`` is a string of ``r`` (a subset)."""
        kind = self.kind[r]
        if kind == K_BYTES:
            return self.args[r][0]
        found = 0
        if kind == K_OR:
            for c in self.args[r]:
                if self.kind[c] == K_BYTES:
                    found |= self.args[c][0]
        return found

    def intersect(self, items: list[int]) -> int:
        """``items[0] & items[1] & ...`` (intersection of languages); everything for an empty list."""
        flat: set[int] = set()
        byte_mask = ALL_BYTES
        has_bytes = False
        for item in items:
            kind = self.kind[item]
            subs = self.args[item] if kind == K_AND else (item,)
            for sub in subs:
                if sub == EMPTY:
                    return EMPTY
                if self.kind[sub] == K_BYTES:
                    byte_mask &= self.args[sub][0]
                    has_bytes = True
                else:
                    flat.add(sub)
        if has_bytes:
            flat.add(self.byteset(byte_mask))
        flat.discard(self._universal())
        for star in [x for x in flat if self._is_star(x)]:  # A & R* = A when A ⊆ R* (a length bound
            if any(x != star and self._within_star(x, self.args[star][0]) for x in flat):  # and a
                flat.discard(star)  # pattern already matched: C{2,254} & C* = C{2,254})
        if EMPTY in flat:
            return EMPTY
        if EPSILON in flat:
            return EPSILON if all(self.nullable[x] for x in flat) else EMPTY
        if not flat:
            return self._universal()
        if len(flat) == 1:
            return next(iter(flat))
        children = tuple(sorted(flat))
        return self._intern(K_AND, children, all(self.nullable[x] for x in children), True)

    def difference(self, a: int, b: int) -> int:
        """``a & ~b``: the strings of ``a`` that are not in ``b``."""
        return self.intersect([a, self.complement(b)])

    def complement(self, a: int) -> int:
        """``~a``: every byte string not matched by ``a``."""
        if self.kind[a] == K_NOT:
            return self.args[a][0]
        if a == EMPTY:
            return self._univ
        if a == self._univ:
            return EMPTY
        return self._intern(K_NOT, (a,), not self.nullable[a], True)

    def repeat(self, a: int, low: int, high: int = INF) -> int:
        """``a{low,high}``; ``high == INF`` means unbounded."""
        if high != INF and high < low:
            raise ValueError(f"repeat bounds {low}>{high}")
        if high == 0 or a == EPSILON:
            return EPSILON
        if a == EMPTY:
            return EPSILON if low == 0 else EMPTY
        if low == 1 and high == 1:
            return a
        if self.nullable[a]:
            low = 0
        if self.kind[a] == K_REPEAT and self.args[a][1] == 0 and self.args[a][2] == INF:
            return a
        if low > self.largest_count or high > self.largest_count:
            self.largest_count = max(low, high)
        return self._intern(K_REPEAT, (a, low, high), low == 0 or self.nullable[a], self.has_bool[a])

    def star(self, a: int) -> int:
        return self.repeat(a, 0, INF)

    def _universal(self) -> int:
        return self._univ

    def universal(self) -> int:
        """The expression matching every byte string."""
        return self._universal()

    # ----- derivatives --------------------------------------------------------------------

    def derivative(self, e: int, byte: int) -> int:
        """``d(e, byte)``: the strings ``s`` such that ``byte s`` is in ``e``. Cached."""
        key = e * 256 + byte
        found = self._deriv.get(key)
        if found is None:
            found = self._derivative(e, byte)
            self._deriv[key] = found
        return found

    def _derivative(self, e: int, byte: int) -> int:
        kind = self.kind[e]
        args = self.args[e]
        if kind == K_BYTES:
            return EPSILON if (args[0] >> byte) & 1 else EMPTY
        if kind == K_CONCAT:
            head, tail = args
            first = self.concat(self.derivative(head, byte), tail)
            if self.nullable[head]:
                return self.alt([first, self.derivative(tail, byte)])
            return first
        if kind == K_OR:  # children that cannot start with the byte derive to ∅: skipped (big enums)
            if len(args) > BY_FIRST_MIN:
                return self.alt([self.derivative(x, byte) for x in self._starting_with(e, byte)])
            first = self._first
            return self.alt([self.derivative(x, byte) for x in args
                             if (first[x] if x in first else self.first_bytes(x)) >> byte & 1])
        if kind == K_AND:  # ~x whose x cannot start with the byte derives to ~∅, everything: dropped
            first = self._first
            kinds = self.kind
            parts = []
            for x in args:
                if kinds[x] == K_NOT:
                    inner = self.args[x][0]
                    if not (first[inner] if inner in first else self.first_bytes(inner)) >> byte & 1:
                        continue
                parts.append(self.derivative(x, byte))
            return self.intersect(parts)
        if kind == K_NOT:
            return self.complement(self.derivative(args[0], byte))
        if kind == K_REPEAT:
            inner, low, high = args
            rest = self.repeat(inner, max(low - 1, 0), INF if high == INF else high - 1)
            return self.concat(self.derivative(inner, byte), rest)
        return EMPTY

    def _starting_with(self, e: int, byte: int) -> list[int]:
        """The children of the alternation ``e`` that can start with ``byte``. Its children that
        start with one byte only (the names of an object's keys, an enum's members) are indexed
        by that byte once per alternation: a lexer row derives the same alternation by each
        byte its members start with, which was a scan of all of them per byte."""
        index = self._by_first.get(e)
        if index is None:
            by_byte: dict[int, list[int]] = {}
            wide = []
            for x in self.args[e]:
                first = self.first_bytes(x)
                if first & (first - 1) == 0:
                    if first:
                        by_byte.setdefault(first.bit_length() - 1, []).append(x)
                else:
                    wide.append(x)
            index = self._by_first[e] = (by_byte, wide)
        by_byte, wide = index
        single = by_byte.get(byte, [])
        if not wide:
            return single
        first = self._first
        return single + [x for x in wide if first[x] >> byte & 1]

    def derivative_bytes(self, e: int, data: bytes) -> int:
        """The derivative by each byte of ``data`` in turn."""
        for byte in data:
            if e == EMPTY:
                break
            e = self.derivative(e, byte)
        return e

    def byte_classes(self, e: int) -> tuple[int, ...]:
        """A partition of the 256 bytes such that all bytes of one class give the same derivative
        (sorted). Built from the partitions of the subexpressions, each cached, so the derivatives
        of a large expression (a JSON string character with its escapes is ~4,500 nodes) cost
        one refinement each instead of a walk over the whole expression."""
        found = self._classes.get(e)
        if found is None:
            found = self._bottom_up(e, self._classes, self._classes_from)
        return found

    def first_bytes(self, e: int) -> int:
        """A byte class containing every byte that can start a string of ``e`` (over-approximated)."""
        found = self._first.get(e)
        if found is None:
            head = self.args[e][0] if self.kind[e] == K_CONCAT else EMPTY
            if self.kind[head] == K_BYTES:  # a literal's tail, a byte class first: never nullable
                found = self._first[e] = self.args[head][0]
            else:
                found = self._bottom_up(e, self._first, self._first_from)
        return found

    def _first_children(self, x: int) -> tuple[int, ...]:
        """The subexpressions whose first bytes can start a string of ``x``."""
        kind = self.kind[x]
        args = self.args[x]
        if kind == K_CONCAT:
            return args if self.nullable[args[0]] else args[:1]
        if kind == K_OR or kind == K_AND:
            return args
        if kind == K_NOT or kind == K_REPEAT:
            return args[:1]
        return ()

    def _bottom_up(self, e: int, cache: dict, combine, children_of=None) -> object:
        """``cache[e]`` from the cached values of ``e``'s first children (or ``children_of(e)``),
        filled in post-order with an explicit stack (a long literal is a deep right-associated
        concatenation)."""
        children_of = children_of or self._first_children
        stack = [e]
        while stack:
            x = stack[-1]
            if x in cache:
                stack.pop()
                continue
            children = children_of(x)
            missing = [c for c in children if c not in cache]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            cache[x] = combine(x, children)
        return cache[e]

    def _first_from(self, x: int, children: tuple[int, ...]) -> int:
        kind = self.kind[x]
        if kind == K_BYTES:
            return self.args[x][0]
        if kind == K_NOT:  # ~a matches strings that start with any byte
            return ALL_BYTES
        found = ALL_BYTES if kind == K_AND else 0
        for child in children:
            found = found & self._first[child] if kind == K_AND else found | self._first[child]
        return found

    def _classes_from(self, x: int, children: tuple[int, ...]) -> tuple[int, ...]:
        if self.kind[x] == K_BYTES:
            mask = self.args[x][0]
            return tuple(sorted(p for p in (mask, ALL_BYTES ^ mask) if p))
        if len(children) == 1:
            return self._classes[children[0]]
        distinct = frozenset(self._classes[child] for child in children)  # enum members share theirs
        parts = self._refined.get(distinct)
        if parts is None:  # the derivatives of an intersection combine the same few partitions
            parts = (ALL_BYTES,)
            for child_parts in distinct:
                parts = refine_partition(parts, child_parts)
            self._refined[distinct] = parts
        return parts

    # ----- widening for short strings -----------------------------------------------------

    def widened(self, e: int, span: int) -> int:
        """An expression equivalent to ``e`` on strings of at most ``span`` bytes: each such
        string is matched by one exactly when by the other, and is a prefix of a match of one
        exactly when of the other. A mask walks at most one token of bytes, so it may walk the
        widened form instead of ``e``; a JSON string with ``maxLength: 32767`` then has one
        widened form at every position until fewer than ``span`` characters are left, where
        ``e`` has a new expression (and lexer state) after every character.

        The widening: in a repeat ``x{low,high}``, ``high > span`` becomes unbounded and
        ``low > span + 1`` becomes ``span + 1``. Within ``span`` bytes a repeat makes at most
        ``span`` non-empty iterations, so a match or partial match of the widened form counts
        at most ``span`` iterations where ``e`` allows up to ``high``, and it can be completed in
        ``e`` by adding iterations up to ``low`` (every subexpression of an expression without
        intersection or complement matches some string). With an intersection or complement
        the completions of the two sides interact, so such expressions are left as they are."""
        if self.largest_count <= span + 1 or self.has_bool[e] or self._count_bound(e) <= span + 1:
            return e
        key = (e, span)
        found = self._widened.get(key)
        if found is None:
            found = self._widen(e, span, 0)
            self._widened[key] = found
        return found

    def _widen(self, e: int, span: int, depth: int) -> int:
        if self._count_bound(e) <= span + 1 or depth > 200:  # deeper: left exact (correct, not widened)
            return e
        kind = self.kind[e]
        args = self.args[e]
        if kind == K_CONCAT:
            return self.concat(self._widen(args[0], span, depth + 1), self._widen(args[1], span, depth + 1))
        if kind == K_OR:
            return self.alt([self._widen(x, span, depth + 1) for x in args])
        if kind == K_REPEAT:
            inner, low, high = args
            high = INF if high == INF or high > span else high
            return self.repeat(self._widen(inner, span, depth + 1), min(low, span + 1), high)
        return e

    def _count_bound(self, e: int) -> int:
        """The largest repeat bound (``low``, or a finite ``high``) anywhere in ``e``; 0 if none."""
        found = self._bounds.get(e)
        if found is None:
            found = self._bottom_up(e, self._bounds, self._bound_from, self._children)
        return found

    def _children(self, x: int) -> tuple[int, ...]:
        kind = self.kind[x]
        if kind == K_REPEAT:
            return self.args[x][:1]
        return () if kind == K_BYTES else self.args[x]

    def _bound_from(self, x: int, children: tuple[int, ...]) -> int:
        value = max((self._bounds[c] for c in children), default=0)
        if self.kind[x] == K_REPEAT:
            value = max(value, self.args[x][1], self.args[x][2])
        return value

    # ----- emptiness ----------------------------------------------------------------------

    def is_empty(self, e: int) -> bool:
        """Whether ``e`` matches no string at all.

        Without intersection or complement, only ∅ itself is empty (the constructors guarantee
        it). Otherwise search the derivatives for a nullable one, within
        ``Limits.max_emptiness_steps``.
        """
        if e == EMPTY:
            return True
        if not self.has_bool[e]:
            return False
        found = self._empty.get(e)
        if found is None:
            found = self._search_empty(e)
            self._empty[e] = found
        return found

    def is_known_empty(self, e: int) -> bool:
        """Whether ``e`` is known to match nothing without a search (∅, or an earlier answer)."""
        return e == EMPTY or self._empty.get(e) is True

    def are_all_empty(self, exprs: list[int]) -> bool:
        """Whether none of ``exprs`` matches anything. Those known to match something are looked
        at first, and the searches stop at the first non-empty one: a lexer state is dead only
        when all its lexemes are, and with hundreds of lexemes (the branches of an ``anyOf`` of
        patterns) one search then stands for hundreds."""
        unknown = []
        for e in exprs:
            if e == EMPTY:
                continue
            if self._is_known_nonempty(e):
                return False
            unknown.append(e)
        return all(self.is_empty(e) for e in unknown)

    def _search_empty(self, e: int) -> bool:
        # Best first: a state is taken in the order of its estimated distance to a match
        # (:meth:`_estimated_length`), nearest to ``e`` first among equals. Where no state gets
        # nearer (a JSON string with ``maxLength: 32767``) that is breadth first, which does not
        # walk the whole length as depth first would; where the parts of an intersection each
        # need their own bytes (a ``minLength`` and a few substrings, a pattern's end) it goes
        # straight to a string that has them all, where breadth first expands every state up to
        # that depth (escapes and multi-byte characters included). The order only changes how
        # soon a string is found: every state reachable is explored before "empty" is answered.
        # A derivative is tested when it is made, not when it is taken: the search stops at the
        # first class that leaves the intersection's boolean part behind (a key that is none of
        # the declared names), before the derivatives by the other classes are computed.
        # Remembered across searches: the edges taken, backwards, so a string found proves
        # every expression seen to lead to it non-empty (the lexer asks next about those
        # derivatives, and the next lexeme's search often meets the same states); and after an
        # empty answer, everything reached, which is empty too.
        if self._is_known_nonempty(e):
            self._empty[e] = False
            return False
        shared = self._shared_budget
        budget = self.limits.max_emptiness_steps if shared is None else min(self.limits.max_emptiness_steps, shared[2])
        steps = 0
        seen = {e}
        frontier = [(self._estimated_length(e), 0, e)]
        try:
            while frontier:
                _, depth, x = heapq.heappop(frontier)
                steps += 1
                if steps > budget:
                    raise self._emptiness_budget_error(shared, steps)
                if self._expand(x, depth + 1, seen, frontier):
                    return False
        finally:
            self.emptiness_steps += steps
            if shared is not None:
                shared[2] -= steps
        for x in seen:  # everything reachable from an empty expression is empty
            self._empty[x] = True
        return True

    def _expand(self, x: int, depth: int, seen: set[int], frontier: list) -> bool:
        """Queue the derivatives of ``x`` not seen yet (by estimated distance, then ``depth``);
        True, and remembered, when one of them is known to match something."""
        record = x not in self._expanded
        for part in self.byte_classes(x):
            d = self.derivative(x, (part & -part).bit_length() - 1)
            if d == EMPTY or self._empty.get(d):
                continue
            if record:
                self._preds.setdefault(d, []).append(x)
            if d in seen:
                continue
            seen.add(d)
            if self._is_known_nonempty(d):
                self._mark_nonempty(d)
                return True
            heapq.heappush(frontier, (self._estimated_length(d), depth, d))
        self._expanded.add(x)  # every edge out of it recorded
        return False

    def _emptiness_budget_error(self, shared: list | None, steps: int) -> BudgetExceededError:
        if shared is not None and steps > shared[2]:
            name, value = shared[0], shared[1]
            what = "deciding whether intersections or complements are empty, summed over one lexer row"
        else:
            name, value = "max_emptiness_steps", self.limits.max_emptiness_steps
            what = "deciding whether an intersection or complement is empty"
        return BudgetExceededError(name, value, what)

    def emptiness_budget(self, name: str, steps: int) -> SharedBudget:
        """A context manager: within the block, the emptiness searches share ``steps`` steps
        (each search also stays within ``Limits.max_emptiness_steps``); past them,
        ``BudgetExceededError`` names ``name``, the :class:`Limits` field that set ``steps``.
        Meant for one lexer row (``Limits.max_row_emptiness_steps``): a row asks about every
        lexeme's derivative by every byte class, thousands of searches where an ``anyOf`` of
        patterns makes hundreds of lexemes, each search within its own budget."""
        return SharedBudget(self, name, steps)

    def _mark_nonempty(self, d: int) -> None:
        """Remember that ``d`` and every expression seen to derive to it (in any search so far)
        match some string."""
        self._empty[d] = False
        stack = [d]
        while stack:
            for x in self._preds.get(stack.pop(), ()):
                if self._empty.get(x) is not False:
                    self._empty[x] = False
                    stack.append(x)

    def _is_known_nonempty(self, e: int) -> bool:
        if self.nullable[e] or not self.has_bool[e] or self._empty.get(e) is False:
            return True
        if self._is_infinite_minus_finite(e):
            self._empty[e] = False  # asked again for the same derivative: a lookup next time
            return True
        return False

    def _is_infinite_minus_finite(self, e: int) -> bool:
        """Whether ``e`` is ``P & ~Q1 & ~Q2 ...`` with ``P`` an infinite and every ``Qi`` a finite
        language, none with intersection or complement: then ``P`` has a string longer than every
        ``Qi``, so ``e`` is not empty. (A key that is not one of the declared names: the string
        lexeme minus the names, after each byte of a key, without a search.)"""
        if self.kind[e] != K_AND:
            return False
        positives = [x for x in self.args[e] if self.kind[x] != K_NOT]
        if len(positives) != 1 or self.has_bool[positives[0]] or self._max_length(positives[0]) != INF:
            return False
        for x in self.args[e]:
            if self.kind[x] == K_NOT:
                q = self.args[x][0]
                if self.has_bool[q] or self._max_length(q) == INF:
                    return False
        return True

    def _estimated_length(self, e: int) -> int:
        """The length of the shortest string of ``e`` where ``e`` has no intersection or
        complement; with them an estimate that orders the emptiness search: an intersection
        adds up its parts' (each part wants its own bytes: a minimum length, a substring), a
        complement counts 0 or 1."""
        found = self._shortest.get(e)
        if found is None:
            found = self._bottom_up(e, self._shortest, self._estimated_length_from, self._children)
        return found

    def _estimated_length_from(self, x: int, children: tuple[int, ...]) -> int:
        kind = self.kind[x]
        if kind == K_BYTES:
            return 1
        if kind == K_NOT:
            return 0 if self.nullable[x] else 1
        lengths = [self._shortest[c] for c in children]
        if kind == K_CONCAT:
            return sum(lengths)
        if kind == K_OR:
            return min(lengths)
        if kind == K_AND:
            return sum(lengths)
        if kind == K_REPEAT:
            return lengths[0] * self.args[x][1]
        return 0

    def is_finite(self, e: int) -> bool:
        """Whether ``e`` is known to match finitely many strings: no intersection or complement
        inside and no unbounded repeat of a non-empty string (cached bottom-up, so the
        derivatives of a big alternation of literals cost only their new nodes)."""
        return not self.has_bool[e] and self._max_length(e) != INF

    def _max_length(self, e: int) -> int:
        """The length of the longest string of ``e`` (no intersection or complement inside),
        ``INF`` when there is none."""
        found = self._lengths.get(e)
        if found is None:
            found = self._bottom_up(e, self._lengths, self._length_from, self._children)
        return found

    def _length_from(self, x: int, children: tuple[int, ...]) -> int:
        kind = self.kind[x]
        if kind == K_BYTES:
            return 1
        lengths = [self._lengths[c] for c in children]
        if INF in lengths and kind != K_REPEAT:
            return INF
        if kind == K_CONCAT:
            return sum(lengths)
        if kind == K_OR:
            return max(lengths)
        if kind == K_REPEAT:
            inner, high = lengths[0], self.args[x][2]
            if inner == 0:
                return 0
            return INF if inner == INF or high == INF else inner * high
        return 0

    def is_subset(self, a: int, b: int) -> bool:
        """Whether every string of ``a`` is in ``b``: a search over pairs of derivatives that
        fails at a string ``a`` accepts and ``b`` rejects. Within ``Limits.max_emptiness_steps``."""
        budget = self.limits.max_emptiness_steps
        seen = {(a, b)}
        frontier = [(a, b)]
        while frontier:
            x, y = frontier.pop()
            if self.nullable[x] and not self.nullable[y]:
                return False
            budget -= 1
            if budget < 0:
                raise BudgetExceededError("max_emptiness_steps", self.limits.max_emptiness_steps,
                                          "deciding whether one regex contains another")
            for part in self._joint_classes(x, y):
                byte = (part & -part).bit_length() - 1
                dx = self.derivative(x, byte)
                if self.is_empty(dx):
                    continue
                dy = self.derivative(y, byte)
                if dy == EMPTY:
                    return False
                if (dx, dy) not in seen:
                    seen.add((dx, dy))
                    frontier.append((dx, dy))
        return True

    def _joint_classes(self, x: int, y: int) -> list[int]:
        out = []
        for px in self.byte_classes(x):
            for py in self.byte_classes(y):
                if px & py:
                    out.append(px & py)
        return out

    # ----- convenience --------------------------------------------------------------------

    def matches(self, e: int, data: bytes) -> bool:
        """Whether ``e`` matches all of ``data``."""
        return self.nullable[self.derivative_bytes(e, data)]

    def describe(self, e: int) -> str:
        """A readable form of ``e`` for debugging and error messages."""
        kind = self.kind[e]
        args = self.args[e]
        if kind == K_EMPTY:
            return "∅"
        if kind == K_EPS:
            return "ε"
        if kind == K_BYTES:
            return _describe_bytes(args[0])
        if kind == K_CONCAT:
            return f"{self._paren(args[0])}{self._paren(args[1])}"
        if kind == K_OR:
            return "(" + "|".join(self.describe(x) for x in args) + ")"
        if kind == K_AND:
            return "(" + "&".join(self.describe(x) for x in args) + ")"
        if kind == K_NOT:
            return f"~{self._paren(args[0])}"
        inner, low, high = args
        bound = f"{{{low},}}" if high == INF else f"{{{low},{high}}}"
        return f"{self._paren(inner)}{bound}"

    def _paren(self, e: int) -> str:
        text = self.describe(e)
        if self.kind[e] in (K_CONCAT,):
            return f"({text})"
        return text


class SharedBudget:
    """The context manager of :meth:`ExprPool.emptiness_budget` (a class, not a generator: a
    lexer enters one per row, and a generator-based manager costs several times more)."""

    __slots__ = ("budget", "outer", "pool")

    def __init__(self, pool: ExprPool, name: str, steps: int) -> None:
        self.pool = pool
        self.budget = [name, steps, steps]
        self.outer: list | None = None

    def __enter__(self) -> None:
        self.outer = self.pool._shared_budget
        self.pool._shared_budget = self.budget

    def __exit__(self, *exc_info) -> None:
        self.pool._shared_budget = self.outer


def refine_partition(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The coarsest partition of the bytes finer than both ``a`` and ``b`` (sorted)."""
    if len(b) == 1:
        return a
    if len(a) == 1:
        return b
    return tuple(sorted(x & y for x in a for y in b if x & y))


def _describe_bytes(mask: int) -> str:
    members = bits_of(mask)
    if len(members) == 1:
        b = members[0]
        return chr(b) if 0x21 <= b < 0x7F and chr(b) not in "()[]|&~*+?{}.\\" else f"\\x{b:02x}"
    if mask == ALL_BYTES:
        return "[\\x00-\\xff]"
    return "[" + ",".join(f"{b:02x}" for b in members[:8]) + ("..." if len(members) > 8 else "") + "]"
