"""Brzozowski derivatives of pool expressions, with the byte classes that make them cheap.

``derivative(e, byte)`` is cached per pool; the first bytes and the byte partition of each
expression are built bottom-up from its children's, so a derivative of a large expression costs
one refinement (see docs/design/regex-derivatives.md).
"""

from __future__ import annotations

import itertools

from .construction import (
    ALL_BYTES,
    EMPTY,
    EPSILON,
    INF,
    K_AND,
    K_BYTES,
    K_CONCAT,
    K_NOT,
    K_OR,
    K_REPEAT,
    Constructors,
)

WIDE_MEMBERS = 32  # alternations with more members have their first bytes and byte classes read off their heads
BY_FIRST_MIN = 8  # alternations with more children index them by first byte (Derivatives._starting_with)


def refine_partition(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The coarsest partition of the bytes finer than both ``a`` and ``b`` (sorted)."""
    if len(b) == 1:
        return a
    if len(a) == 1:
        return b
    return tuple(sorted(x & y for x in a for y in b if x & y))


class Derivatives(Constructors):
    """Derivatives, first bytes and byte classes of the pool's expressions."""

    _deriv: dict[int, int]
    _classes: dict[int, tuple[int, ...]]
    _refined: dict[frozenset, tuple[int, ...]]
    _first: dict[int, int]
    _by_first: dict[int, tuple[dict[int, list[int]], list[int]]]

    def derivative(self, e: int, byte: int) -> int:
        """``d(e, byte)``: the strings ``s`` such that ``byte s`` is in ``e``. Cached."""
        key = e * 256 + byte
        found = self._deriv.get(key)
        if found is None:
            found = self._derivative(e, byte)
            self._deriv[key] = found
        return found

    def derivatives_known(self) -> int:
        """How many derivatives the pool has cached (see :meth:`forget_derivatives`)."""
        return len(self._deriv)

    def forget_derivatives(self, known: int) -> None:
        """Forget the derivatives cached after the first ``known`` (:meth:`derivatives_known`):
        a base pool that took derivatives only to make expressions and their row templates
        (the JSON Schema formats' value states), whose copies would otherwise copy them all."""
        self._deriv = dict(itertools.islice(self._deriv.items(), known))  # compact: a dict keeps the room of deleted keys

    def set_derivative(self, e: int, byte: int, d: int) -> None:
        """Record ``d`` as the derivative of ``e`` by ``byte``. Exact only where ``d`` matches the
        same strings as the computed derivative: for a caller that knows an automaton of ``e``
        (a ``multipleOf`` by remainders, written by state elimination, derives to a new
        expression per digit string; pinned, each remainder is one expression, so one lexer
        state)."""
        self._deriv[e * 256 + byte] = d

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
            found = self._bottom_up(e, self._classes, self._classes_from, self._first_children)
        return found

    def _wide_heads(self, e: int) -> set[int] | None:
        """The byte classes that start the members of ``e`` when it is an alternation of at
        least ``WIDE_MEMBERS`` members, each a byte class or a concatenation headed by one (a
        wide character class as UTF-8 sequences, or its JSON spellings), else ``None``. The
        first bytes and byte classes of such an alternation are those of the heads: read
        directly, not by a walk that gives each member and head a cache entry (~1,000 of them for
        ``\\p{L}``, in each grammar's pool)."""
        kind, args = self.kind, self.args
        if kind[e] != K_OR or len(args[e]) < WIDE_MEMBERS:
            return None
        heads = set()
        for x in args[e]:
            k = kind[x]
            if k == K_CONCAT:
                x = args[x][0]
                k = kind[x]
            if k != K_BYTES:
                return None
            heads.add(args[x][0])
        return heads

    def _refine(self, distinct: frozenset) -> tuple[int, ...]:
        """The coarsest partition finer than each of ``distinct`` (remembered per set)."""
        parts = self._refined.get(distinct)
        if parts is None:
            parts = (ALL_BYTES,)
            for child_parts in distinct:
                parts = refine_partition(parts, child_parts)
            self._refined[distinct] = parts
        return parts

    def first_bytes(self, e: int) -> int:
        """A byte class containing every byte that can start a string of ``e`` (over-approximated)."""
        found = self._first.get(e)
        if found is None:
            head = self.args[e][0] if self.kind[e] == K_CONCAT else EMPTY
            if self.kind[head] == K_BYTES:  # a literal's tail, a byte class first: never nullable
                found = self._first[e] = self.args[head][0]
            else:
                found = self._bottom_up(e, self._first, self._first_from, self._first_children)
        return found

    def _first_children(self, x: int) -> tuple[int, ...]:
        """The subexpressions whose first bytes can start a string of ``x``."""
        kind = self.kind[x]
        args = self.args[x]
        if kind == K_CONCAT:
            return args if self.nullable[args[0]] else args[:1]
        if kind == K_OR:  # a wide alternation of byte-headed members: none (see _wide_heads)
            return () if len(args) >= WIDE_MEMBERS and self._wide_heads(x) is not None else args
        if kind == K_AND:
            return args
        if kind == K_NOT or kind == K_REPEAT:
            return args[:1]
        return ()

    def _first_from(self, x: int, children: tuple[int, ...]) -> int:
        kind = self.kind[x]
        if kind == K_BYTES:
            return self.args[x][0]
        if kind == K_NOT:  # ~a matches strings that start with any byte
            return ALL_BYTES
        if not children and kind == K_OR:  # _wide_heads
            found = 0
            for mask in self._wide_heads(x):
                found |= mask
            return found
        found = ALL_BYTES if kind == K_AND else 0
        for child in children:
            found = found & self._first[child] if kind == K_AND else found | self._first[child]
        return found

    def _classes_from(self, x: int, children: tuple[int, ...]) -> tuple[int, ...]:
        if self.kind[x] == K_BYTES:
            return _split_by(self.args[x][0])
        if len(children) == 1:
            return self._classes[children[0]]
        if not children and self.kind[x] == K_OR:  # a wide alternation (_wide_heads): its heads' classes
            return self._refine(frozenset(_split_by(mask) for mask in self._wide_heads(x)))
        # enum members share theirs; the derivatives of an intersection combine the same few partitions
        return self._refine(frozenset(self._classes[child] for child in children))


def _split_by(mask: int) -> tuple[int, ...]:
    """The byte classes of a byte class ``mask``: it and the rest, sorted, empty ones left out."""
    return tuple(sorted(p for p in (mask, ALL_BYTES ^ mask) if p))
