"""A lexer's rows for an object's other keys: ``P ∩ ¬Q`` as the string ``P`` with a shadow of the
declared names ``Q``, and the intersections' rows by derivatives with one emptiness answer per
byte class (docs/design/earley-walk.md). A part of :class:`leapgram.parser.lexer.Lexer`, mixed in."""

from __future__ import annotations

from ..regex.dfa import DEAD, UNKNOWN, publish_row
from ..regex.expr import (
    BY_FIRST_MIN,
    EMPTY,
    EPSILON,
    K_AND,
    K_BYTES,
    K_CONCAT,
    K_NOT,
    K_OR,
    bits_of,
)
from .lexer_blocks import Items, is_literal_set

MINUS_BYTES = 24  # see Lexer._fill_minus_some: past this many bytes, one derivative per byte class


class OtherKeyRows:
    """The methods of :class:`leapgram.parser.lexer.Lexer` this module holds; the state is the lexer's."""

    def _shadow_split(self, expr: int) -> tuple[int, int] | None:
        """``(P, Q)`` when ``expr`` is ``P ∩ ¬Q`` with ``P`` free of intersection and complement
        and ``Q`` a finite set of literals (the keys other than an object's declared names ``Q``:
        :func:`is_literal_set`), else ``None``. ``P ∩ ¬Q ∩ ¬R1 ∩ ...`` (the keys that are none
        of the names nor match a ``patternProperties`` pattern ``Ri``) gives ``(P ∩ ¬R1 ∩ ...,
        Q)``: the item keeps the patterns, whose states are few and shared by every node of the
        names' trie (round 23: clang-format's first mask made ~260 of them, each a search).

        Such a lexeme's states keep ``P`` as its item and ``Q`` as a *shadow* item beside it
        (its lexeme id complemented, ``~lex``), which is no lexeme of its own: it only vetoes
        the lexeme's end on a string of ``Q`` and kills the lexeme when every string left is in
        ``Q``. A byte then costs ``P`` its template row and ``Q`` a literal step, where the
        expression ``P' ∩ ¬Q'`` cost an intersection, a complement and an emptiness answer per
        node of the names' trie (docs/design/earley-walk.md, "Large schemas, round 22")."""
        pool = self.pool
        kind, args = pool.kind, pool.args
        if kind[expr] != K_AND:
            return None
        positive = names = -1
        rest = []  # the other complements ¬R (patternProperties' patterns): kept in the item, P ∩ ¬R
        for child in args[expr]:
            if kind[child] != K_NOT:
                if positive >= 0 or pool.has_bool[child]:
                    return None
                positive = child
            elif names < 0 and is_literal_set(pool, args[child][0]):
                names = args[child][0]
            else:
                rest.append(child)
        if positive < 0 or names < 0:
            return None
        return (pool.intersect([positive, *rest]) if rest else positive), names

    def _veto(self, items: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """``items`` with each shadow ``(~lex, Q')`` (see :meth:`_shadow_split`) decided against
        its lexeme's item ``(lex, P')`` right before it: dropped with it when that item is gone;
        the item dropped too when ``P' ⊆ Q'`` (``P' ∩ ¬Q'`` is empty); the shadow dropped alone
        when it can veto nothing more (``Q'`` empty, or ``P'`` is ``ε`` not in ``Q'``)."""
        out: list[tuple[int, int]] = []
        for item in items:
            lex, q = item
            if lex >= 0:
                out.append(item)
            elif out and out[-1][0] == ~lex and q != EMPTY:
                verdict = self._verdict(out[-1][1], q)
                if verdict > 0:
                    out.append(item)
                elif verdict < 0:
                    out.pop()
        return out

    def _verdict(self, p: int, q: int) -> int:
        """For an item ``P'`` (``p``) with the shadow ``Q'`` (``q``, not empty): 1 when ``P' ∩ ¬Q'``
        is not empty and the shadow may still veto, 0 when it is ``P'`` (the shadow goes), -1
        when it is empty (both go). ``P'`` is ε (its lexeme's item is never ∅) or, most often,
        infinite: then it has strings longer than all of the finite ``Q'``. An item with an
        intersection (``P ∩ ¬R``, see :meth:`_shadow_split`) is decided by a search."""
        shape = self._shapes_of.get(p)
        if shape is None:
            pool = self.pool
            if pool.has_bool[p]:  # P ∩ ¬R (see _shadow_split): neither shape is known without a search
                shape = 2
            else:
                shape = 0 if pool.first_bytes(p) == 0 else 2 if pool.is_finite(p) else 1
            self._shapes_of[p] = shape
        if shape == 1:
            return 1
        if shape == 0:
            return -1 if self._nullable[q] else 0
        pool = self.pool
        return -1 if pool.is_empty(pool.intersect([p, pool.complement(q)])) else 1

    def _fill_shadowed(self, state: int, items: Items, starts: list[int]) -> None:
        """The row of a state ``{P', Q'}``, an item and its shadow (see :meth:`_shadow_split`),
        from the row of ``P'`` alone: only the bytes both start with step the shadow (what
        :meth:`_target_of` does for them, without its generic loop)."""
        (lex, p), (shadow, q) = items
        alone = self._state_of(False, items[:1])
        if self.trans[alone, 0] == UNKNOWN:
            self._fill_single(alone, lex, p)
        row = self.trans[alone].copy()
        ids = self._ids
        for byte in bits_of(starts[0] & starts[1]):
            target = int(row[byte])
            if target == DEAD:
                continue
            d = self._shadow_step(q, byte)
            if d == EMPTY:
                continue  # the string alone goes on
            after = self._items[target][0]
            verdict = self._verdict(after[1], d)
            if verdict > 0:
                key = (after, (shadow, d))
                found = ids.get(key)
                row[byte] = self._new_state(False, key) if found is None else found
            elif verdict < 0:
                row[byte] = DEAD
        trans = self.trans  # read after the targets: a new state may grow (replace) the table
        trans[state, 1:] = row[1:]  # each entry written once, with its final value (walks run unlocked)
        trans[state, 0] = row[0]

    def _fill_minus_some(self, state: int, lex: int, expr: int) -> bool:
        """The row of ``P ∩ ¬Q1 ∩ ¬Q2 ...`` (one item; a key that is none of an object's declared
        names, after some bytes) from the row of ``P`` alone; ``False`` for other intersections
        or when the ``Qi`` can start with more than ``MINUS_BYTES`` bytes.

        A byte that no ``Qi`` can start with leaves every ``¬Qi`` unconstrained, so the
        derivative is ``P``'s: the target is the one of the state ``{P}``, whose row is computed
        once and shared by every prefix of a key (the JSON string's tail is the same after
        ``"a`` and ``"ab``). Only the bytes the ``Qi`` start with (the next byte of each name
        still possible) take a derivative of the intersection here."""
        pool = self.pool
        kind = pool.kind
        positive = -1
        cut = 0
        names = []  # the Qi
        for child in pool.args[expr]:
            if kind[child] == K_NOT:
                names.append(pool.args[child][0])
                cut |= pool.first_bytes(names[-1])
            elif positive >= 0:
                return False
            else:
                positive = child
        if positive < 0 or cut.bit_count() > MINUS_BYTES:
            return False
        alone = self._state_of(False, ((lex, positive),))
        if self.trans[alone, 0] == UNKNOWN:
            self._fill_single(alone, lex, positive)  # not an intersection: intersections are flat
        row = self.trans[alone].copy()
        for byte in bits_of(cut):
            d = self._minus_derivative(expr, self._derived(positive, int(row[byte]), byte), names, byte)
            row[byte] = DEAD if pool.is_empty(d) else self._state_of(False, ((lex, d),))
        trans = self.trans  # read after the targets: a new state may grow (replace) the table
        trans[state, 1:] = row[1:]  # each entry written once, with its final value (walks run unlocked)
        trans[state, 0] = row[0]
        return True

    def _fill_minus_beside(self, state: int, items: Items, starts: list[int]) -> bool:
        """The row of a state of several items, one of them ``P ∩ ¬Q1 ∩ ...`` and every other
        able to start only with bytes some ``Qi`` starts with (a key in a ``patternProperties``
        pattern ``Q`` beside the other keys' ``S* " ∩ ¬Q``, at each count of a counted pattern);
        ``False`` for other states (``starts``: the items' first bytes). As in
        :meth:`_fill_minus_some`, a byte no ``Qi`` starts with leaves the others dead and
        ``P ∩ ¬Q1 ∩ ...`` derived to ``P``'s derivative: the target of the state ``{P}``, whose
        row is computed once. Only the byte classes that meet the ``Qi``'s first bytes are
        derived here, where every byte class was for each count."""
        pool = self.pool
        kind, args, has_bool = pool.kind, pool.args, pool.has_bool
        minus = -1
        for index, (lex, expr) in enumerate(items):
            if lex < 0:  # a shadow: _target_of decides it against its item
                return False
            if kind[expr] == K_AND:
                if minus >= 0:
                    return False
                minus = index
        if minus < 0:
            return False
        lex, expr = items[minus]
        positive = -1
        cut = 0
        for child in args[expr]:
            if kind[child] == K_NOT:
                cut |= pool.first_bytes(args[child][0])
            elif positive >= 0 or has_bool[child]:
                return False
            else:
                positive = child
        others = 0
        for index, first in enumerate(starts):
            if index != minus:
                others |= first
        if positive < 0 or others & ~cut or not starts[minus] & ~cut:
            return False
        alone = self._state_of(False, ((lex, positive),))
        if self.trans[alone, 0] == UNKNOWN:
            self._fill_single(alone, lex, positive)  # no intersection in P
        row = self.trans[alone].copy()
        parts, starts, by_byte = self._byte_classes(items)  # (every item's target is one per class)
        targets = [self._target(items, starts, part, by_byte) if part & cut else int(row[(part & -part).bit_length() - 1])
                   for part in parts]
        publish_row(self.trans, state, parts, targets)  # (trans read after the targets: they may grow it)
        return True

    def _minus_derivative(self, expr: int, derived: int, names: list[int], byte: int) -> int:
        """The derivative of ``expr = P ∩ ¬names[0] ∩ ...`` by ``byte``, given ``P``'s
        (``derived``), with the names' tries derived here: a literal's next byte gives its tail,
        a small alternation of literals the alternation of those tails, without a derivative
        (and its memo entry) per node on the way. Recorded as ``expr``'s derivative."""
        pool = self.pool
        kind, args, first = pool.kind, pool.args, pool.first_bytes
        parts = [derived]
        for name in names:
            if not first(name) >> byte & 1:
                continue  # ¬name derives to everything
            if kind[name] == K_OR and len(args[name]) <= BY_FIRST_MIN:
                d = pool.alt([self._derivative(x, byte) for x in args[name] if first(x) >> byte & 1])
            else:
                d = self._derivative(name, byte)
            parts.append(pool.complement(d))
        d = pool.intersect(parts)
        pool.set_derivative(expr, byte, d)
        return d

    def _shadow_step(self, names: int, byte: int) -> int:
        """The derivative of a shadow's names (see :meth:`_shadow_split`) by ``byte``, kept per
        lexer: the same node of the names' trie is in the states of every set of names the
        parser allows (each position of an object's declared names)."""
        key = names << 8 | byte
        found = self._shadow_steps.get(key)
        if found is None:
            tails = self._shadow_tails.get(names)
            if tails is None:
                tails = self._shadow_tails[names] = self._tails_by_byte(names)
            found = self._shadow_steps[key] = self.pool.alt(tails[byte]) if byte in tails else EMPTY
        return found

    def _tails_by_byte(self, names: int) -> dict[int, list[int]]:
        """The derivatives of the alternatives of ``names`` by each byte they start with, in
        one pass: a literal's tail, else its derivative."""
        pool = self.pool
        kind, args = pool.kind, pool.args
        tails: dict[int, list[int]] = {}
        for name in args[names] if kind[names] == K_OR else (names,):
            if kind[name] == K_CONCAT and kind[args[name][0]] == K_BYTES:
                head, tail = args[name]
                bits = args[head][0]
                if bits & (bits - 1) == 0:  # a literal's next byte (most often)
                    found = tails.get(bits.bit_length() - 1)
                    if found is None:
                        tails[bits.bit_length() - 1] = [tail]
                    else:
                        found.append(tail)
                    continue
                for byte in bits_of(bits):
                    tails.setdefault(byte, []).append(tail)
            elif kind[name] == K_BYTES:
                for byte in bits_of(args[name][0]):
                    tails.setdefault(byte, []).append(EPSILON)
            else:
                for byte in bits_of(pool.first_bytes(name)):
                    tails.setdefault(byte, []).append(pool.derivative(name, byte))
        return tails
