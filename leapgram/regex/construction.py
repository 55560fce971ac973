"""Hash-consed regular expressions over bytes: node kinds and the simplifying constructors.

An expression is a small integer naming a node of its :class:`~leapgram.regex.expr.ExprPool`.
The constructors apply the algebraic laws as they build, so equal languages built the same way get
one id (see docs/design/regex-derivatives.md).
"""

from __future__ import annotations

from ..errors import BudgetExceededError
from ..limits import Limits

EMPTY = 0
EPSILON = 1

K_EMPTY, K_EPS, K_BYTES, K_CONCAT, K_OR, K_AND, K_NOT, K_REPEAT = range(8)
INF = -1
ALL_BYTES = (1 << 256) - 1
TRIE_MIN = 16  # literal_set: this many strings or more are built as their trie
MAX_TRIE_DEPTH = 64  # branch points nested in one trie (deeper: the alternation of the suffixes)
MAX_WITHIN_DEPTH = 4  # concatenations Constructors._within_by_structure looks through
MAX_WITHIN_MEMBERS = 16  # members of an alternation it looks among (an object's names: hundreds)
LITERAL_WITHIN = 8  # see Constructors._literal_within_star: longer literals are not decided


def bits_of(mask: int) -> list[int]:
    """The bytes in a byte class, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class Constructors:
    """The node store and its smart constructors (the base of ``ExprPool``, which creates the
    attributes below). A byte class is a 256-bit ``int``: bit ``b`` set means byte ``b``."""

    limits: Limits
    kind: list[int]
    args: list[tuple]
    nullable: list[bool]
    has_bool: list[bool]  # an intersection or complement inside
    memo: dict[tuple, int]
    largest_count: int
    _ids: dict[tuple, int]  # (kind, args) -> id, for every kind but K_CONCAT
    _pairs: dict[tuple[int, int], int]  # a concatenation's args -> its id
    _lengths: dict[int, int]
    _single_bytes: list[int | None]
    _within: dict[tuple[int, int], bool]
    _univ: int

    def _intern(self, kind: int, args: tuple, nullable: bool, has_bool: bool) -> int:
        if kind == K_CONCAT:
            return self._intern_pair(args, nullable, has_bool)
        key = (kind, args)
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = self._new_node(kind, args, nullable, has_bool)
        return found

    def _intern_pair(self, pair: tuple[int, int], nullable: bool, has_bool: bool) -> int:
        """:meth:`_intern` of the concatenation ``pair``: keyed in ``_pairs`` by its ``args``
        tuple itself, where another kind's key wraps its ``args`` in a second tuple (most of a
        schema's nodes are concatenations, one per byte of a key: a tuple fewer each for the
        allocator and for the collection after the translation to scan)."""
        found = self._pairs.get(pair)
        if found is None:
            found = self._pairs[pair] = self._new_node(K_CONCAT, pair, nullable, has_bool)
        return found

    def _new_node(self, kind: int, args: tuple, nullable: bool, has_bool: bool) -> int:
        """Append a node (not interned yet) and return its id; past ``Limits.max_regex_nodes``,
        :class:`BudgetExceededError`, nothing appended."""
        eid = len(self.kind)
        if eid >= self.limits.max_regex_nodes:
            raise BudgetExceededError("max_regex_nodes", self.limits.max_regex_nodes, "too many regex expressions")
        self.kind.append(kind)
        self.args.append(args)
        self.nullable.append(nullable)
        self.has_bool.append(has_bool)
        return eid

    def byteset(self, mask: int) -> int:
        """The expression matching one byte from ``mask``."""
        if mask == 0:
            return EMPTY
        return self._intern(K_BYTES, (mask,), False, False)

    def literal(self, data: bytes) -> int:
        """The expression matching exactly ``data`` (remembered in :attr:`memo`: grammars spell
        the same keys and punctuation many times)."""
        key = ("literal", bytes(data))
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = self._new_literal(data)
        return found

    def literal_set(self, texts: list[bytes]) -> int:
        """Every string of ``texts`` (an enum's spellings). ``TRIE_MIN`` or more are built as
        their trie, ``a(b|cd)`` for ``ab`` and ``acd``: the language of the alternation of the
        literals, but a derivative by a byte is one member's tail, where the alternation's
        derives every member that starts with the byte and builds and sorts a new alternation of
        the tails (an enum of 400 time zones: hundreds of members at each of the first bytes a
        mask walks). Fewer: that alternation."""
        if len(texts) < TRIE_MIN:
            return self.alt([self.literal(t) for t in texts])
        return self._trie(sorted(set(texts)), 0, 0)

    def _trie(self, texts: list[bytes], start: int, depth: int) -> int:
        """The trie of the ``texts[i][start:]`` (``texts`` sorted, distinct, with the same first
        ``start`` bytes): their common prefix, then an alternation of ε (when one of them ends
        there) and, per next byte, the byte and the trie of the texts that go on with it."""
        if len(texts) == 1 or depth > MAX_TRIE_DEPTH:
            return self.alt([self.literal(t[start:]) for t in texts])
        first, last = texts[0], texts[-1]
        common = start  # the common prefix of sorted texts is that of the first and the last
        while common < len(first) and first[common] == last[common]:
            common += 1
        members = [EPSILON] if len(first) == common else []
        rest = texts[len(members):]
        i = 0
        while i < len(rest):
            byte = rest[i][common]
            j = i + 1
            while j < len(rest) and rest[j][common] == byte:
                j += 1
            members.append(self.concat(self.literal(rest[i][common:common + 1]), self._trie(rest[i:j], common + 1, depth + 1)))
            i = j
        return self.concat(self.literal(first[start:common]), self.alt(members))

    def holds_byte(self, b: int) -> bool:
        """Whether the pool holds the expression of byte ``b`` alone (:meth:`find_literal` finds
        no literal with a byte it does not hold)."""
        return (K_BYTES, (1 << b,)) in self._ids

    def find_literal(self, data: bytes) -> int:
        """The expression matching exactly ``data`` (non-empty) if the pool holds it, else -1;
        nothing is added. Unlike a look-up in :attr:`memo`, the answer does not depend on how the
        expression was built (a literal, or a regex spelling it byte by byte)."""
        ids = self._ids
        pairs = self._pairs
        out = EPSILON
        for b in reversed(data):
            byte = ids.get((K_BYTES, (1 << b,)))
            if byte is None:
                return -1
            if out != EPSILON:
                byte = pairs.get((byte, out))
                if byte is None:
                    return -1
            out = byte
        return out if data else -1

    def _new_literal(self, data: bytes) -> int:
        # concat_all without its checks: byte classes are never ε, ∅, nullable or concatenations.
        # Each suffix's longest string is its length: recorded here, so that deciding whether an
        # alternation of names is finite (a key that is none of them) looks at its top node only.
        # The suffixes the pool holds are looked up; once one is new, every longer one is new
        # too (no node holds a node made here), so those are appended without a look-up, with
        # _intern's steps inlined (a literal is one node per byte; keys are most of a schema's).
        single = self._single_bytes
        lengths = self._lengths
        pairs = self._pairs
        out = EPSILON
        size = 0
        n = len(data)
        while size < n:
            b = data[n - 1 - size]
            byte = single[b]
            if byte is None:
                byte = single[b] = self.byteset(1 << b)
            if out != EPSILON:
                found = pairs.get((byte, out))
                if found is None:
                    break
                byte = found
            out = byte
            size += 1
            lengths[out] = size
        else:
            return out
        return self._new_prefixes(data, n - size, byte, out)

    def _new_prefixes(self, data: bytes, rest: int, byte: int, out: int) -> int:
        """The nodes of ``data[k:]`` for ``k = rest - 1`` down to 0, none of which the pool
        holds: ``byte`` is the node of ``data[rest - 1]`` and ``out`` that of ``data[rest:]``."""
        single = self._single_bytes
        lengths = self._lengths
        pairs = self._pairs
        kinds = self.kind
        args = self.args
        nullable = self.nullable
        has_bool = self.has_bool
        limit = self.limits.max_regex_nodes
        size = len(data) - rest
        while True:
            pair = (byte, out)
            if len(kinds) >= limit:
                return self._intern_pair(pair, False, False)  # raises
            out = pairs[pair] = len(kinds)
            kinds.append(K_CONCAT)
            args.append(pair)
            nullable.append(False)
            has_bool.append(False)
            size += 1
            lengths[out] = size
            rest -= 1
            if not rest:
                return out
            b = data[rest - 1]
            byte = single[b]
            if byte is None:
                byte = single[b] = self.byteset(1 << b)

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
        nullable = self.nullable  # (tested first: most heads are not nullable, no star test then)
        if nullable[a] and self._is_star(b) and self._within_star(a, self.args[b][0]):
            return b  # A R* = R* when ε ∈ A ⊆ R* (x* after a pattern's class: [a-z]* C* = C*)
        if nullable[b] and self._is_star(a) and self._within_star(b, self.args[a][0]):
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
        return self._intern_pair((a, b), self.nullable[a] and self.nullable[b], self.has_bool[a] or self.has_bool[b])

    def concat_all(self, items: list[int]) -> int:
        """``items[0] items[1] ...``; ε for an empty list."""
        out = EPSILON
        for item in reversed(items):
            out = self.concat(item, out)
        return out

    def alt(self, items: list[int]) -> int:
        """``items[0] | items[1] | ...``; ∅ for an empty list."""
        if len(items) == 1 and self.kind[items[0]] != K_OR and self.kind[items[0]] != K_BYTES:
            return items[0]  # nothing to flatten, merge or absorb (a derivative of a name's trie)
        flat: set[int] = set()
        byte_mask = 0
        kinds, args = self.kind, self.args
        repeats = False  # a member R{a,b} or R{a,b} T: only then can a member absorb others (below)
        for item in items:
            kind = kinds[item]
            if kind == K_OR:
                for sub in args[item]:
                    kind = kinds[sub]
                    if kind == K_BYTES:
                        byte_mask |= args[sub][0]
                    else:
                        flat.add(sub)
                        repeats = repeats or kind == K_REPEAT or (kind == K_CONCAT and kinds[args[sub][0]] == K_REPEAT)
            elif kind == K_BYTES:
                byte_mask |= args[item][0]
            elif item != EMPTY:
                flat.add(item)
                repeats = repeats or kind == K_REPEAT or (kind == K_CONCAT and kinds[args[item][0]] == K_REPEAT)
        if byte_mask:
            flat.add(self.byteset(byte_mask))
        if repeats:  # (the universe is a star: with none, it is not in flat)
            if self._universal() in flat:
                return self._universal()
            self._absorb_into_stars(flat)
            if len(flat) > 1:
                self._absorb_counted_heads(flat)
        if EPSILON in flat and any(self.nullable[x] for x in flat if x != EPSILON):
            flat.discard(EPSILON)
        if not flat:
            return EMPTY
        if len(flat) == 1:
            return next(iter(flat))
        children = tuple(sorted(flat))
        found = self._ids.get((K_OR, children))  # most often: its flags are not read again
        if found is not None:
            return found
        return self._intern(K_OR, children, any(map(self.nullable.__getitem__, children)),
                            any(map(self.has_bool.__getitem__, children)))

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

    def _absorb_counted_heads(self, flat: set[int]) -> None:
        """Keep, of the members ``X{a,b} R* T`` with the same ``X``, ``R* T`` and ``X ⊆ R*``, the
        one with the least ``a``: it holds the others (``X{c,d} R* T ⊆ X{a} R* T`` for ``a ≤ c``,
        as ``X{c-a} R* ⊆ R*``). An unanchored ``C{n}`` inside a string (``S* C{n} S*"``) then
        derives to two members (the search and its longest run) instead of one per byte read."""
        kinds, args, groups = self.kind, self.args, None
        for x in flat:
            if kinds[x] != K_CONCAT:
                continue
            head, rest = args[x]
            if kinds[head] != K_REPEAT:
                continue
            star = args[rest][0] if kinds[rest] == K_CONCAT else rest
            if kinds[star] != K_REPEAT or args[star][1] != 0 or args[star][2] != INF:
                continue
            inner = args[head][0]
            if self._within_star(inner, args[star][0]):
                if groups is None:
                    groups = {}
                groups.setdefault((inner, rest), []).append((args[head][1], x))
        for members in groups.values() if groups else ():
            if len(members) > 1:
                keep = min(members)[1]
                flat.difference_update([x for _, x in members if x != keep])

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
                if not found and kind == K_CONCAT:
                    found = self._literal_within_star(x, r)
            else:
                found = False
            self._within[key] = found
        return found

    def _literal_within_star(self, x: int, r: int) -> bool:
        """Whether ``x``, one short string (a literal of one-byte classes: ``\\/``, a JSON
        escape of a pattern's ``/``), is a string of ``r*``: its derivatives by those bytes
        end nullable. ``False`` for other ``x``."""
        kind, args = self.kind, self.args
        data = []
        start = x
        while kind[x] == K_CONCAT and kind[args[x][0]] == K_BYTES and len(data) < LITERAL_WITHIN:
            bits = args[args[x][0]][0]
            if bits & (bits - 1):
                return False
            data.append(bits.bit_length() - 1)
            x = args[x][1]
        if kind[x] != K_BYTES or args[x][0] & (args[x][0] - 1):
            return False
        data.append(args[x][0].bit_length() - 1)
        self._within[(start, r)] = False  # unsure while its derivatives are made (they may ask again)
        return bool(self.nullable[self.derivative_bytes(self.star(r), bytes(data))])

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
        if len(items) == 2:
            found = self._intersect_minus(*items)
            if found is not None:
                return found
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
        if any(self.kind[x] == K_NOT and self.args[x][0] in flat for x in flat):  # A & ~A & ...
            return EMPTY
        for star in [x for x in flat if self._is_star(x)]:  # A & R* = A when A ⊆ R* (a length bound
            if any(x != star and self._within_star(x, self.args[star][0]) for x in flat):  # and a
                flat.discard(star)  # pattern already matched: C{2,254} & C* = C{2,254})
        if len(flat) == 2:
            merged = self._merge_counts(*flat)
            if merged is not None:
                return merged
        if len(flat) > 1:
            self._drop_starred_supersets(flat)
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

    def _merge_counts(self, p: int, q: int) -> int | None:
        """``C{m,n} & X{a,b}`` as ``C{max(m,a), min(n,b)}`` where every string of ``C`` is one
        string of ``X`` and ``X`` is a prefix code (:meth:`_one_char_within`): a string of
        ``C^k`` is in ``X^k`` and in no other power of ``X`` (its factorization into ``X``s is
        unique), so it is in ``X{a,b}`` exactly when ``a ≤ k ≤ b``. A string with a length bound
        whose pattern ends in a class loop (``\\d+\\.\\d+.*`` with ``maxLength``, once the
        prefix is read) is then a counted string, with no intersection. ``None`` for other pairs."""
        kind, args = self.kind, self.args
        if kind[p] != K_REPEAT or kind[q] != K_REPEAT or self.has_bool[p] or self.has_bool[q]:
            return None
        for (c, m, n), (x, a, b) in ((args[p], args[q]), (args[q], args[p])):
            if not self.nullable[c] and self._one_char_within(c, x):
                low, high = max(m, a), (b if n == INF else n if b == INF else min(n, b))
                return EMPTY if high != INF and high < low else self.repeat(c, low, high)
        return None

    def _one_char_within(self, c: int, x: int) -> bool:
        """Whether every string of ``c`` is a string of ``x`` and ``x`` is a prefix code (see
        :meth:`_merge_counts`); ``False`` when unsure. Here: ``c == x`` and nothing else (the
        pool's ``Widening`` section decides it by a bounded search)."""
        return False

    def _intersect_minus(self, a: int, b: int) -> int | None:
        """``a & ~q`` for ``b = ~q`` (either order) and ``a`` a concatenation or alternation (a
        key other than an object's names, after some bytes), as :meth:`intersect` builds it,
        without its scans: no byte class, star or intersection to fold, and ``a = R* T`` drops
        only when ``T`` is ``b``; ``None`` for other pairs."""
        kind = self.kind
        if kind[a] == K_NOT:
            a, b = b, a
        if kind[b] != K_NOT or (kind[a] != K_CONCAT and kind[a] != K_OR):
            return None
        if self._within_by_structure(a, self.args[b][0], MAX_WITHIN_DEPTH):  # A & ~B, A ⊆ B: A & ~A (a key
            return EMPTY  # that a patternProperties prefix took, after it), A & ~(A | C) (a `not: pattern`
        # whose prefix matched: S* " & ~((S* | C) "))
        if kind[a] == K_CONCAT and self.args[a][1] == b and self._is_star(self.args[a][0]):
            return None
        children = (a, b) if a < b else (b, a)
        return self._intern(K_AND, children, self.nullable[a] and self.nullable[b], True)

    def _within_by_structure(self, a: int, q: int, depth: int) -> bool:
        """Whether every string of ``a`` is one of ``q`` by their structure alone: ``a`` is
        ``q``, a member of the alternation ``q`` (of at most ``MAX_WITHIN_MEMBERS``), or ``h T`` where ``q`` is ``g T`` (the same
        ``T``) and ``h`` is within ``g`` so, or ``h T`` where ``q`` is ``h U`` and ``T`` is within
        ``U`` so (at most ``depth`` concatenations deep); ``False`` when unsure."""
        if a == q:
            return True
        kind, args = self.kind, self.args
        if kind[q] == K_OR and len(args[q]) <= MAX_WITHIN_MEMBERS and a in args[q]:
            return True
        if depth > 0 and kind[a] == K_CONCAT and kind[q] == K_CONCAT:
            (h, t), (g, u) = args[a], args[q]
            if t == u:
                return self._within_by_structure(h, g, depth - 1)
            if h == g:
                return self._within_by_structure(t, u, depth - 1)
        return False

    def _drop_starred_supersets(self, flat: set[int]) -> None:
        """Drop from an intersection each member ``R* T`` that holds another member ``h1 … hk T``
        (the same tail ``T``, every ``hi ⊆ R*``, by structure): a string under a `pattern` and
        its JSON string, ``S* " & C{1,255} "``, is then ``C{1,255} "``, no intersection."""
        kinds, args = self.kind, self.args
        for x in [x for x in flat if kinds[x] == K_CONCAT and self._is_star(args[x][0])]:
            r, tail = args[args[x][0]][0], args[x][1]
            if any(y != x and self._prefix_within_star(y, tail, r) for y in flat):
                flat.discard(x)

    def _prefix_within_star(self, y: int, tail: int, r: int) -> bool:
        """Whether ``y`` is ``h1 (h2 (… (hk tail)))`` with every ``hi ⊆ r*`` (by structure; at
        most 32 heads)."""
        kinds, args = self.kind, self.args
        for _ in range(32):
            if y == tail:
                return True
            if kinds[y] != K_CONCAT:
                return False
            head, y = args[y]
            if not self._within_star(head, r):
                return False
        return False

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

    def _bottom_up(self, e: int, cache: dict, combine, children_of) -> object:
        """``cache[e]`` from the cached values of ``children_of(e)`` (``combine(e, children)``),
        filled in post-order with an explicit stack (a long literal is a deep right-associated
        concatenation)."""
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

    def fold(self, e: int, combine) -> object:
        """``combine(x, children)`` of ``e``, each subexpression's value combined once from its
        children's (``combine`` reads them from the dict it is given as ``values``, keyed by
        expression): a measure of an expression's graph, bottom-up, with no recursion."""
        values: dict[int, object] = {}
        return self._bottom_up(e, values, lambda x, children: combine(x, children, values), self._children)

    def _children(self, x: int) -> tuple[int, ...]:
        """The subexpressions of ``x``."""
        kind = self.kind[x]
        if kind == K_REPEAT:
            return self.args[x][:1]
        return () if kind == K_BYTES else self.args[x]
