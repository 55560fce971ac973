"""Emptiness, finiteness and inclusion of pool expressions.

Without intersection or complement only ∅ is empty; with them ``is_empty`` searches the
derivatives for a nullable one, best first, within ``Limits.max_emptiness_steps`` (see
docs/design/regex-derivatives.md).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator

from ..errors import BudgetExceededError
from .construction import EMPTY, INF, K_AND, K_BYTES, K_CONCAT, K_NOT, K_OR, K_REPEAT
from .derivatives import Derivatives

WITNESS_BYTES = 256  # the longest string ``Emptiness._witness`` builds before it leaves the question to the search
MAX_PUMP_CLASSES = 8  # byte classes Emptiness.pump_bytes looks at
UNBOUNDED = 1 << 62  # Emptiness._subset_search without that bound


class Emptiness(Derivatives):
    """Whether expressions match anything, finitely many strings, or a subset of another."""

    _empty: dict[int, bool]
    _shortest: dict[int, int]
    _preds: dict[int, list[int]]  # search edges backwards: x derives to d
    _expanded: set[int]
    _shared_budget: list | None  # [limit name, value, steps left] (emptiness_budget)
    emptiness_steps: int

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
        # Best first by estimated distance to a match, nearest to ``e`` among equals; each
        # derivative tested when made; edges remembered backwards across searches (see
        # docs/design/regex-derivatives.md, "Emptiness").
        if self._is_known_nonempty(e) or self._witness(e, WITNESS_BYTES) is not None:
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

    def _witness(self, e: int, room: int, depth: int = 0) -> bytes | None:
        """A string of ``e`` of at most ``room`` bytes found without deriving an intersection, or
        ``None`` (not found: ``e`` may still match something). An intersection takes the
        shortest string of one part without intersection or complement and checks the other
        parts match it: a string with a length bound and a ``pattern`` (``S{5,254} & P``) is
        then known to match something from ``P``'s shortest string, where the search would
        derive the intersection itself (new expressions for every count)."""
        if not self.has_bool[e]:
            return self._shortest_string(e, room)
        if depth > 200:  # deeper: left to the search (no recursion limit reached here)
            return None
        kind, args = self.kind[e], self.args[e]
        if kind == K_CONCAT:
            head = self._witness(args[0], room, depth + 1)
            tail = None if head is None else self._witness(args[1], room - len(head), depth + 1)
            return None if tail is None else head + tail
        if kind == K_OR:
            return next((w for w in (self._witness(x, room, depth + 1) for x in args) if w is not None), None)
        if kind == K_REPEAT:
            inner = b"" if args[1] == 0 else self._witness(args[0], room // args[1], depth + 1)
            return None if inner is None else inner * args[1]
        if kind == K_AND:
            for part in args:
                if not self.has_bool[part]:
                    found = self._shortest_string(part, room)
                    if found is not None and all(x == part or self.matches(x, found) for x in args):
                        return found
            return self._pumped_witness(args, room)
        return None

    def _pumped_witness(self, parts: tuple[int, ...], room: int) -> bytes | None:
        """A string ``s c^k`` of every one of ``parts`` (an intersection's) within ``room`` bytes,
        or ``None``: ``s`` the shortest string of a part without intersection or complement whose
        end (its derivative by ``s``) a byte ``c`` pumps (:meth:`pump_bytes`, ``c`` one that every
        part can go on with), ``k`` the fewest ``c`` after which every part's derivative is
        nullable (:meth:`_pump`). A ``pattern`` with a ``minLength`` longer than its shortest
        string (``S{35,} & P``, an unanchored pattern's ``X*`` tail) is then known to match
        something without a search over counts (each a new intersection)."""
        for part in parts:
            if self.has_bool[part]:
                continue
            start = self._shortest_string(part, room)
            if start is None:
                continue
            ends = [self.derivative_bytes(x, start) for x in parts]
            if EMPTY in ends:
                continue
            common = -1  # the bytes every part can go on with
            for x in ends:
                common &= self.first_bytes(x)
            for c in self.pump_bytes(ends[parts.index(part)], common):
                k = self._pump(ends, c, room - len(start))
                if k is not None:
                    return start + bytes([c]) * k
        return None

    def pump_bytes(self, end: int, allowed: int) -> Iterator[int]:
        """Bytes ``c`` of ``allowed`` with ``d(end, c)`` nullable and its own derivative by ``c``
        (``end`` matches ``c``, ``cc``, ...): the least byte of ``allowed`` in each of ``end``'s
        byte classes, at most ``MAX_PUMP_CLASSES`` classes looked at (``end`` without
        intersection or complement: derivatives without a search)."""
        looked = 0
        for byte_class in self.byte_classes(end):
            byte_class &= allowed
            if not byte_class:
                continue
            c = (byte_class & -byte_class).bit_length() - 1
            once = self.derivative(end, c)
            if once != EMPTY and self.nullable[once] and self.derivative(once, c) == once:
                yield c
            looked += 1
            if looked >= MAX_PUMP_CLASSES:
                return

    def _pump(self, states: list[int], c: int, room: int) -> int | None:
        """The fewest ``k <= room`` after which every one of ``states`` derived by ``c`` ``k``
        times is nullable; ``None`` when one dies, the states repeat or ``room`` runs out."""
        nullable, seen = self.nullable, set()
        for k in range(room + 1):
            if all(nullable[x] for x in states):
                return k
            key = tuple(states)
            if key in seen:
                return None
            seen.add(key)
            states = [self.derivative(x, c) for x in states]
            if EMPTY in states:
                return None
        return None

    def _shortest_string(self, e: int, room: int) -> bytes | None:
        """The shortest string of ``e`` (no intersection or complement inside), or ``None`` when
        it is longer than ``room``; remembered per expression (the pattern's side of a bounded
        string is the same expression at every count)."""
        found = self._shortest_strings.get(e, False)
        if found is False:
            found = self._shortest_strings[e] = self._build_shortest_string(e)
        return found if found is not None and len(found) <= room else None

    def _build_shortest_string(self, e: int) -> bytes | None:
        """``_shortest_string`` up to ``WITNESS_BYTES``: without intersection or complement the
        estimated length is exact, so each step takes a byte whose derivative is one shorter."""
        out = bytearray()
        while not self.nullable[e]:
            if len(out) >= WITNESS_BYTES:
                return None
            target = self._estimated_length(e) - 1
            for part in self.byte_classes(e):
                byte = (part & -part).bit_length() - 1
                d = self.derivative(e, byte)
                if d != EMPTY and self._estimated_length(d) == target:
                    break
            else:
                return None
            out.append(byte)
            e = d
        return bytes(out)

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

    def enter_budget(self, budget: list) -> list | None:
        """Put ``budget`` (``[limit name, value, steps left]``) in force for the emptiness
        searches, refilled to its value, and return the budget it replaces, for
        :meth:`leave_budget`. What :meth:`emptiness_budget` does without an object per use (a
        lexer row reuses one list); a budget already in force (a row filled inside another's)
        goes in as a copy, so each row's steps stay its own."""
        outer = self._shared_budget
        if outer is budget:
            budget = [budget[0], budget[1], budget[1]]
        else:
            budget[2] = budget[1]
        self._shared_budget = budget
        return outer

    def leave_budget(self, outer: list | None) -> None:
        """Put back ``outer``, the budget :meth:`enter_budget` replaced."""
        self._shared_budget = outer

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
        return self._bottom_up(e, self._shortest, self._estimated_length_from, self._children) if found is None else found

    def _estimated_length_from(self, x: int, children: tuple[int, ...]) -> int:
        kind = self.kind[x]
        if kind == K_BYTES or kind == K_NOT:  # a byte class is never nullable
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
        return self._bottom_up(e, self._lengths, self._length_from, self._children) if found is None else found

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
        found, _ = self._subset_search(a, b, self.limits.max_emptiness_steps)
        if found is None:
            raise BudgetExceededError("max_emptiness_steps", self.limits.max_emptiness_steps,
                                      "deciding whether one regex contains another")
        return found

    def _subset_search(self, a: int, b: int, pops: int = UNBOUNDED, pairs: int = UNBOUNDED
                      ) -> tuple[bool | None, set[tuple[int, int]]]:
        """``(a ⊆ b, the pairs of derivatives seen)``, by a depth-first search over pairs
        ``(a', b')`` that fails at a string ``a`` accepts and ``b`` rejects. The answer is ``None``
        when the search runs out: at its ``pops + 1``-th pair taken (after that pair's own test),
        or at a pair's successor met while ``pairs`` pairs are seen. Two bounds, as its two users
        count: :meth:`is_subset` the pairs taken (and raises), ``Widening._within_char_star``
        the pairs seen (and answers ``False``; with ``True`` every pair seen is a subset too)."""
        nullable, has_bool, derivative = self.nullable, self.has_bool, self.derivative
        seen = {(a, b)}
        frontier = [(a, b)]
        while frontier:
            x, y = frontier.pop()
            if nullable[x] and not nullable[y]:
                return False, seen
            pops -= 1
            if pops < 0:
                return None, seen
            for part in self._joint_classes(x, y):
                byte = (part & -part).bit_length() - 1
                dx = derivative(x, byte)
                if dx == EMPTY or (has_bool[dx] and self.is_empty(dx)):  # is_empty, its first tests inline
                    continue
                dy = derivative(y, byte)
                if dy == EMPTY:
                    return False, seen
                if len(seen) >= pairs:
                    return None, seen
                if (dx, dy) not in seen:
                    seen.add((dx, dy))
                    frontier.append((dx, dy))
        return True, seen

    def _joint_classes(self, x: int, y: int) -> list[int]:
        out = []
        for px in self.byte_classes(x):
            for py in self.byte_classes(y):
                if px & py:
                    out.append(px & py)
        return out


class SharedBudget:
    """The context manager of :meth:`Emptiness.emptiness_budget` (a class, not a generator: a
    lexer enters one per row, and a generator-based manager costs several times more)."""

    __slots__ = ("budget", "outer", "pool")

    def __init__(self, pool: Emptiness, name: str, steps: int) -> None:
        self.pool = pool
        self.budget = [name, steps, steps]
        self.outer: list | None = None

    def __enter__(self) -> None:
        self.outer = self.pool._shared_budget
        self.pool._shared_budget = self.budget

    def __exit__(self, *exc_info) -> None:
        self.pool._shared_budget = self.outer
