"""Widening: an expression equal to a pool expression on strings of at most ``span`` bytes,
with repeat bounds above ``span`` relaxed, so a long bounded repeat (``maxLength: 32767``) keeps
one expression at every position until its end is near (argument: docs/design/regex-derivatives.md).
"""

from __future__ import annotations

from .construction import EMPTY, EPSILON, INF, K_AND, K_CONCAT, K_OR, K_REPEAT, Constructors

MAX_PARTNER_STATES = 512  # states of a counted string's partner explored (shortest completions, A ⊆ X*)


class Widening(Constructors):
    """``widened(e, span)`` and the repeat bounds it reads. (Derivatives, byte classes, shortest
    strings and lengths come from the pool's other sections, ``ExprPool`` being all of them.)"""

    _bounds: dict[int, int]
    _widened: dict[tuple[int, int], int]
    _partners: dict[tuple, object]  # _partner_reach: ("reach", e), ("within", e, star), ("answer", e, char)

    def widened(self, e: int, span: int) -> int:
        """An expression equivalent to ``e`` on strings of at most ``span`` bytes (as matches and
        as prefixes of matches): repeat bounds above ``span`` are relaxed, so a mask, which walks
        at most one token of bytes, may walk it instead of ``e``. Under an intersection, only a
        counted string and its pattern are widened (:meth:`_widen_counted_and`); complements and
        other intersections are left as they are. Argument: docs/design/regex-derivatives.md."""
        if self.largest_count <= span + 1 or self._count_bound(e) <= span + 1:
            return e
        key = (e, span)
        found = self._widened.get(key)
        if found is None:
            found = self._widen(e, span, 0, {})
            self._widened[key] = found
        return found

    def _widen(self, e: int, span: int, depth: int, done: dict[int, int]) -> int:
        """``done``: the subexpressions widened so far in this call (an expression is a DAG: the
        flexible whitespace run shares each state's tail twice, 2^20 paths without it)."""
        found = done.get(e)
        if found is not None:
            return found
        if self._count_bound(e) <= span + 1 or depth > 200:  # deeper: left exact (correct, not widened)
            return e
        kind = self.kind[e]
        args = self.args[e]
        found = e
        if kind == K_CONCAT:
            found = self.concat(self._widen(args[0], span, depth + 1, done), self._widen(args[1], span, depth + 1, done))
        elif kind == K_OR:
            found = self.alt([self._widen(x, span, depth + 1, done) for x in args])
        elif kind == K_AND:
            found = self._widen_counted_and(e, span, depth, done)
        elif kind == K_REPEAT and not self.has_bool[e]:
            inner, low, high = args
            high = INF if high == INF or high > span else high
            found = self.repeat(self._widen(inner, span, depth + 1, done), min(low, span + 1), high)
        done[e] = found
        return found

    def _widen_counted_and(self, e: int, span: int, depth: int, done: dict[int, int]) -> int:
        """``A & X{a,b}`` (a string with a length bound and a pattern, at a character boundary) as
        ``A & X{min(a, span + 1), ∞}`` where that is exact on strings of at most ``span`` bytes:
        ``A`` without intersection, complement or count above ``span + 1``, every string of ``A``
        a sequence of ``X`` (``A ⊆ X*``), every state ``A`` reaches with a completion of at most
        ``b - span`` bytes and, where ``a > 0``, ``A`` ending in a loop that takes some one-``X``
        string ``x`` (``A x ⊆ A``) or no string of ``A`` with fewer than ``a`` ``X``s. Then a
        string ``w`` of at most ``span`` bytes that the widened form allows has a completion in
        ``A``; its shortest ends within ``b`` ``X``s, and has ``a`` or more, or ``x`` repeated
        brings it to ``a``: the exact form allows ``w`` too (the converse holds as
        ``X{a,b} ⊆ X{min(a, span + 1), ∞}``). Else ``e`` as it is."""
        if len(self.args[e]) != 2:
            return e
        for counted, partner in (self.args[e], self.args[e][::-1]):
            if self.kind[counted] != K_REPEAT or self.has_bool[counted] or self.has_bool[partner]:
                continue
            char, low, high = self.args[counted]
            wide = self._widen(counted, span, depth + 1, done)
            if wide == counted:
                continue
            if self.nullable[char] or self._count_bound(partner) > span + 1 or self._count_bound(char) > span + 1:
                return e
            reach = self._partner_reach(partner, char)
            if reach == INF or (high != INF and reach > high - span):
                return e
            if low and self._fewest_chars(partner, char) >= low:  # A & X{a,b} = A & X{0,b}: widened, A & X*
                return self.intersect([partner, self.star(char)])
            if low and self._pumping_string(partner, char) is None:
                return e
            return self.intersect([partner, wide])
        return e

    def _partner_reach(self, partner: int, char: int) -> int:
        """The longest shortest completion, in bytes, of the states ``partner`` reaches (an upper
        bound), or ``INF`` where ``partner`` is not within ``char*`` or the searches pass
        ``MAX_PARTNER_STATES`` states. Remembered, with what each search proves of the states it
        passed (their reach is at most their origin's; a pair of an inclusion that holds holds
        too): the partners at later positions are states of the first."""
        partners = self._partners
        key = ("answer", partner, char)
        found = partners.get(key)
        if found is None:
            found = INF
            star = self.star(char)
            if self._within_char_star(partner, star):
                found = self._reach(partner)
            partners[key] = found
        return found

    def _reach(self, partner: int) -> int:
        partners = self._partners
        found = partners.get(("reach", partner))
        if found is not None:
            return found
        seen = {partner}
        queue = [partner]
        longest = 0
        for e in queue:  # grows while walked
            longest = max(longest, self._estimated_length(e))  # exact: no intersection or complement
            for part in self.byte_classes(e):
                d = self.derivative(e, (part & -part).bit_length() - 1)
                if d != EMPTY and d not in seen:
                    if len(queue) >= MAX_PARTNER_STATES:
                        partners[("reach", partner)] = INF
                        return INF
                    seen.add(d)
                    queue.append(d)
        for e in queue:
            partners.setdefault(("reach", e), longest)
        return longest

    def _within_char_star(self, a: int, star: int) -> bool:
        """``a ⊆ star`` (both without intersection or complement), ``False`` where not known
        within ``MAX_PARTNER_STATES`` pairs of derivatives (``Emptiness._subset_search``); a
        ``True`` answer also proves every pair the search passed. Remembered."""
        partners = self._partners
        found = partners.get(("within", a, star))
        if found is not None:
            return found
        found, seen = self._subset_search(a, star, pairs=MAX_PARTNER_STATES)
        found = bool(found)
        if found:
            for x, y in seen:
                partners[("within", x, y)] = True
        partners[("within", a, star)] = found
        return found

    def _fewest_chars(self, partner: int, char: int) -> int:
        """The fewest ``char`` in a string of ``partner`` (within ``char*``), where ``char`` is a
        prefix code (no string of it a proper prefix of another: a string of ``char*`` is then one
        sequence of ``char``, and ``char*`` derives back to itself exactly at its ends); 0 when
        not known within ``MAX_PARTNER_STATES`` pairs. A search over pairs of derivatives, a step
        that ends a ``char`` costing one. Remembered."""
        key = ("fewest", partner, char)
        found = self._partners.get(key)
        if found is None:
            found = self._search_fewest(partner, char) if self._is_prefix_code(char) else 0
            self._partners[key] = found
        return found

    def _search_fewest(self, partner: int, char: int) -> int:
        star = self.star(char)
        best = {(partner, star): 0}
        ring: list[list[tuple[int, int]]] = [[(partner, star)]]
        cost = 0
        while cost < len(ring):  # by cost: a list of pairs per number of chars ended
            level = ring[cost]
            for x, y in level:
                if best[(x, y)] != cost:
                    continue
                if self.nullable[x] and y == star:
                    return cost
                for part in self._joint_classes(x, y):
                    byte = (part & -part).bit_length() - 1
                    dx = self.derivative(x, byte)
                    dy = self.derivative(y, byte)
                    if dx == EMPTY or dy == EMPTY:
                        continue
                    step = cost + (dy == star)
                    if best.get((dx, dy), INF) == INF or best[(dx, dy)] > step:
                        if len(best) >= MAX_PARTNER_STATES:
                            return 0
                        best[(dx, dy)] = step
                        while len(ring) <= step:
                            ring.append([])
                        ring[step].append((dx, dy))
            cost += 1
        return 0

    def _one_char_within(self, c: int, x: int) -> bool:
        """Whether every string of ``c`` is a string of ``x`` and ``x`` is a prefix code, both
        without intersection or complement (for ``Constructors._merge_counts``): searched within
        ``MAX_PARTNER_STATES`` states each, ``False`` when unsure. Remembered."""
        key = ("one char", c, x)
        found = self._partners.get(key)
        if found is None:
            found = (not self.has_bool[c] and not self.has_bool[x] and self._is_prefix_code(x)
                     and (c == x or self._within_char_star(c, x)))
            self._partners[key] = found
        return found

    def _is_prefix_code(self, char: int) -> bool:
        """Whether no string of ``char`` is a proper prefix of another: every state it reaches
        after a byte that matches the empty string is ε (within ``MAX_PARTNER_STATES`` states)."""
        key = ("prefix code", char)
        found = self._partners.get(key)
        if found is None:
            found = True
            seen = {char}
            queue = [char]
            for e in queue:
                if e != char and self.nullable[e] and e != EPSILON:
                    found = False
                    break
                for part in self.byte_classes(e):
                    d = self.derivative(e, (part & -part).bit_length() - 1)
                    if d != EMPTY and d not in seen:
                        if len(seen) >= MAX_PARTNER_STATES:
                            found = False
                            break
                        seen.add(d)
                        queue.append(d)
                if not found:
                    break
            if self.nullable[char]:
                found = False
            self._partners[key] = found
        return found

    def _pumping_string(self, partner: int, char: int) -> bytes | None:
        """A string ``x`` of one ``char`` with ``partner x ⊆ partner``, found by structure: every
        alternative of ``partner`` ends in a repeat ``R{k,∞}`` and ``x`` is in each ``R`` (the
        shortest string of the first such ``R``); ``None`` if none is found."""
        loops: list[int] = []
        stack = [partner]
        while stack:
            e = stack.pop()
            kind, args = self.kind[e], self.args[e]
            while kind == K_CONCAT:
                e = args[1]
                kind, args = self.kind[e], self.args[e]
            if kind == K_OR:
                stack.extend(args)
            elif kind == K_REPEAT and args[2] == INF:
                loops.append(args[0])
            else:
                return None
            if len(loops) + len(stack) > 64:
                return None
        x = self._shortest_string(loops[0], 64)
        if x is None or not x or not self.matches(char, x):
            return None
        return x if all(self.matches(r, x) for r in loops) else None

    def _count_bound(self, e: int) -> int:
        """The largest repeat bound (``low``, or a finite ``high``) anywhere in ``e``; 0 if none."""
        found = self._bounds.get(e)
        return self._bottom_up(e, self._bounds, self._bound_from, self._children) if found is None else found

    def count_bound_known(self, e: int) -> int | None:
        """:meth:`_count_bound` of ``e`` if it is known already, else ``None`` (no walk)."""
        return self._bounds.get(e)

    def set_count_bound(self, e: int, bound: int) -> None:
        """Record ``bound`` as :meth:`_count_bound` of ``e``, for a caller that knows it by
        construction (a class's JSON spellings have no repeat: ``json_schema.strings``): with
        ``0``, :meth:`Emptiness.is_finite` needs no walk either."""
        self._bounds.setdefault(e, bound)

    def _bound_from(self, x: int, children: tuple[int, ...]) -> int:
        value = max((self._bounds[c] for c in children), default=0)
        if self.kind[x] == K_REPEAT:
            value = max(value, self.args[x][1], self.args[x][2])
        return value
