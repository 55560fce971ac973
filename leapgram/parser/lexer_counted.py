"""A lexer's counted rows: ``X{a,b} T`` strings by rows shifted by the count, and a pattern ∩ length
string by rows of (pattern state, count) pairs made as values reach them
(docs/design/lexer-templates.md). A part of :class:`leapgram.parser.lexer.Lexer`, mixed in."""

from __future__ import annotations

import numpy as np

from ..errors import BudgetExceededError
from ..regex.dfa import DEAD, write_row
from ..regex.expr import (
    EMPTY,
    EPSILON,
    INF,
    K_AND,
    K_BYTES,
    K_CONCAT,
    K_REPEAT,
    bits_of,
)
from . import lexer_blocks
from .counted import CountedChar, CountedShape, PatternRows, ProductGraph, counted_char, split_counted
from .lexer_blocks import Items

_PLAIN_STARRED, _PLAIN_REPEAT = 2, 3  # Lexer._plain_pattern
MAX_PRODUCT_GRAPHS = 8  # ProductGraphs of one pattern template (one per counted character)
MAX_PATTERN_FAILURES = 2  # pattern templates over MAX_PATTERN_STATES tried per grammar: see Lexer._product_graph


class CountedRows:
    """The methods of :class:`leapgram.parser.lexer.Lexer` this module holds; the state is the lexer's."""

    def _fill_counted(self, state: int, lex: int, expr: int,
                      found: tuple[int, int, int, int] | None = None) -> bool:
        """The row of a state of a counted lexeme, ``S(r, a, b) = r X{a,b} T`` (a JSON string
        with ``minLength``/``maxLength``; see :mod:`leapgram.parser.counted`), from the row of
        ``r`` (or, for ``r = ε``, of ``X`` with the counts one lower) in ``X``'s row template:
        only its targets' expressions are built, no derivative is taken (but of ``T``, by its
        bytes, where ``a = 0``). ``False`` for other states. ``found``: ``expr``'s entry in
        ``_counted``, if it has one (see :meth:`_counted_entry`)."""
        if found is None:
            found = self._counted_entry(expr)
            if found is None:
                return False
        shape_id, index, low, high = found
        shape = self._counted_shapes[shape_id]
        char = shape.char
        row_index, low_after, high_after = index, low, high
        if index == char.eps:  # X{a,b} T: X's first row, one count used
            row_index, low_after, high_after = 0, max(low - 1, 0), high if high == INF else high - 1
        local = self._counted_targets(lex, shape_id, char.targets[row_index], low_after, high_after)
        if index == char.eps and low == 0:  # T may start: its bytes c lead to d(T, c) (none starts X)
            row = np.array(local, dtype=np.int32)[char.table[row_index]]
            self._tail_entries(row, lex, shape.tail)
            trans = self.trans  # read after the targets: a new state may grow (replace) the table
            trans[state, 1:] = row[1:]  # each entry written once, with its final value (walks run unlocked)
            trans[state, 0] = row[0]
            return True
        write_row(self.trans, state, np.array(local, dtype=np.int32), char.table[row_index])  # (trans read after
        return True  # the targets: a new state may grow it)

    def _tail_entries(self, row: np.ndarray, lex: int, tail: int) -> None:
        """``row`` on the bytes ``tail`` starts with: ``d(tail, c)``, where a counted lexeme can
        end (``d(X{0,b} T, c) = alt([∅, d(T, c)]) = d(T, c)``: no byte starts both, and ``T`` has
        no intersection or complement)."""
        pool = self.pool
        first = pool.first_bytes(tail)
        for part in pool.byte_classes(tail) if first else ():
            part &= first
            if part:
                d = pool.derivative(tail, (part & -part).bit_length() - 1)
                row[bits_of(part)] = DEAD if d == EMPTY else self._state_of(False, ((lex, d),))

    def _counted_targets(self, lex: int, shape_id: int, targets: tuple[int, ...], low: int, high: int) -> list[int]:
        """``local[t]``: the state of ``S(exprs[t - 1], low, high)`` for each template entry ``t`` of
        ``targets`` (``DEAD`` elsewhere), ``S`` of the shape ``_counted_shapes[shape_id]``; the new
        ones are numbered together, as :meth:`_fill_from_template` numbers its states (a row of
        ``X{a,b} T`` makes the states after each kind of character, nine for a JSON string, and
        most are new)."""
        pool = self.pool
        shape = self._counted_shapes[shape_id]
        char = shape.char
        base = shape.base(pool, low, high)
        counted = self._counted
        local = [DEAD] * (len(char.exprs) + 1)
        shared = pool.family.size if pool.family is not None else 0  # (X* T of a family: its row template)
        exprs = []
        for target in targets:
            i = target - 1
            e = shape.state_expr(pool, i, base)
            if e not in counted and (i != char.eps or high != 0) and e >= shared:  # (X{0,0} T is T)
                counted[e] = (shape_id, i, low, high)
            exprs.append(e)
        for target, found in zip(targets, self._number_singles(lex, exprs)):
            local[target] = found
        return local

    def _number_singles(self, lex: int, exprs: list[int]) -> list[int]:
        """The states of one item ``(lex, e)`` for each ``e`` of ``exprs`` (``DEAD`` for ∅), the
        new ones numbered together within ``Limits.max_dfa_states``."""
        ids = self._ids
        out = []
        start = next_state = len(self._items)
        new_items: list[Items] = []
        try:
            for e in exprs:
                if e == EMPTY:
                    out.append(DEAD)
                    continue
                items = ((lex, e),)
                found = ids.get(items)
                if found is None:
                    if next_state >= self.limits.max_dfa_states:
                        raise BudgetExceededError("max_dfa_states", self.limits.max_dfa_states, "lexer DFA too large")
                    found = ids[items] = next_state
                    next_state += 1
                    new_items.append(items)
                out.append(found)
            if next_state > self._capacity:
                self._grow(min(max(2 * start, next_state), self.limits.max_dfa_states))
        except BaseException:  # out of budget (states, expressions) or memory: no state was made
            for items in new_items:
                ids.pop(items, None)
            raise
        if new_items:
            self._add_single_states(new_items, lex)
        return out

    def _counted_entry(self, expr: int) -> tuple[int, int, int, int] | None:
        """``(shape id, index of r, a, b)`` when ``expr`` is ``S(r, a, b)`` of the shape
        ``_counted_shapes[shape id]``, one whose rows shift exactly (:func:`counted_char`, ``T``
        without intersection or complement and no byte starting both ``X`` and ``T``), else
        ``None``. The entry holds ints only, no reference to the shape: the collector stops
        tracking it at its first collection, where a tuple holding the shape stayed tracked and
        reached the oldest generation (one per counted state: 7% of what moved there;
        docs/design/performance-by-source.md, "Round 26: young collections")."""
        pool = self.pool
        split = split_counted(pool, expr)
        if split is None:
            return None
        heads, char, low, high, tail = split
        shape_id = self._counted_shape_id(char, tail)
        if shape_id < 0:
            return None
        shape = self._counted_shapes[shape_id]
        index = shape.char.spine_index.get(heads)
        if index is None or (index == shape.char.eps and high == 0):
            return None
        if shape.state_expr(pool, index, shape.base(pool, low, high)) != expr:  # another form: by derivatives
            return None
        found = self._counted[expr] = (shape_id, index, low, high)
        return found

    def _counted_of(self, char: int, tail: int) -> CountedShape | None:
        """The :class:`CountedShape` of ``X{a,b} T`` in this lexer, or ``None`` (see
        :meth:`_counted_entry`)."""
        shape_id = self._counted_shape_id(char, tail)
        return None if shape_id < 0 else self._counted_shapes[shape_id]

    def _counted_shape_id(self, char: int, tail: int) -> int:
        """The index in ``_counted_shapes`` of the :class:`CountedShape` of ``X{a,b} T``, or -1
        when it has none (see :meth:`_counted_entry`). ``X``'s :class:`CountedChar` is kept with
        its row template: in the pool family's memo for a family expression (a JSON string
        character), else in the pool's memo."""
        key = (char, tail)
        found = self._shapes.get(key)
        if found is not None:
            return found
        pool = self.pool
        memo = pool.shared_memo(char)
        if memo is None:
            memo = pool.memo
        memo_key = ("counted char", char)
        found = memo.get(memo_key, False)
        if found is False:
            template = lexer_blocks.row_template(pool, char) if pool.family is not None and char < pool.family.size \
                else lexer_blocks.make_row_template(pool, char, 1 << 62)
            found = memo[memo_key] = counted_char(pool, char, template)
        shape_id = -1
        if found is not None and not pool.has_bool[tail] and not found.first & pool.first_bytes(tail):
            shape_id = len(self._counted_shapes)
            self._counted_shapes.append(CountedShape(found, tail))
        self._shapes[key] = shape_id
        return shape_id

    def _fill_product(self, state: int, lex: int, found: tuple[ProductGraph, int, int, int, int] | None) -> bool:
        """The row of a state ``(P ∩ r X{a,b}) T`` (a JSON string under a ``pattern`` or
        ``format`` and a length: one item, ``P`` a state of the pattern's row template, ``found``
        from :meth:`_product_entry`) from the rows of ``P`` and ``r``: each target is the pair of
        their targets with the counts of :meth:`_fill_counted`, and dead when no string can end
        within its counts (:meth:`ProductGraph.alive`), without a derivative or an emptiness
        search. ``False`` when ``found`` is ``None``."""
        if found is None:
            return False
        graph, node, low, high, tail = found
        made = graph.row(self.pool, node)
        if made is None:  # the pattern's template or the graph too large
            return False
        j, i = graph.pairs[node]
        eps = graph.char.eps
        if i == eps:  # a new character: X's first row, one count used
            low, high = max(low - 1, 0), high if high == INF else high - 1
        targets, index = made
        local = self._product_targets(lex, graph, targets, low, high, tail)
        if i == eps and found[2] == 0 and self.pool.nullable[graph.pattern.exprs[j]]:  # P ∩ X{0,b} ends: T may start
            row = np.array(local, dtype=np.int32)[index]
            self._tail_entries(row, lex, tail)
            trans = self.trans  # read after the targets: a new state may grow (replace) the table
            trans[state, 1:] = row[1:]  # each entry written once, with its final value (walks run unlocked)
            trans[state, 0] = row[0]
            return True
        write_row(self.trans, state, np.array(local, dtype=np.int32), index)  # (trans read after the targets)
        return True

    def _product_targets(self, lex: int, graph: ProductGraph, targets: tuple[int, ...], low: int, high: int,
                         tail: int) -> list[int]:
        """The states of ``targets`` (nodes of ``graph``, ``-1`` dead) with ``low..high``
        characters after their residuals, each ``(P' ∩ r' X{low,high}) T`` as the derivative
        builds it; the new ones numbered together (:meth:`_number_singles`)."""
        pool = self.pool
        shape = graph.shape
        base = shape.base(pool, low, high)
        patterns, pairs, alive = graph.pattern.exprs, graph.pairs, graph.alive
        nullable = pool.nullable
        plain_tail = tail != EPSILON and not pool._is_star(tail)  # concat(A ∩ B, T) applies no law: interned
        products = self._products
        exprs = []
        for node in targets:
            verdict = False if node < 0 else alive(pool, node, low, high)  # (the derivative's emptiness search,
            if verdict is False:  # answered; None: the graph is too large to answer, the search does)
                exprs.append(EMPTY)
                continue
            j, i = pairs[node]
            counted = shape.state_expr(pool, i, base)
            both = self._plain_and(patterns[j], counted)
            if both is None:  # a law of intersect applies: as a derivative, by the constructors
                d = pool.concat(pool.intersect([patterns[j], counted]), tail)
                exprs.append(EMPTY if verdict is None and pool.is_empty(d) else d)
                continue
            d = pool._intern_pair((both, tail), nullable[both] and nullable[tail], True) if plain_tail \
                else pool.concat(both, tail)
            if verdict is None and pool.is_empty(d):
                exprs.append(EMPTY)
                continue
            if d not in products:
                products[d] = (graph, node, low, high, tail)
            exprs.append(d)
        return self._number_singles(lex, exprs)

    def _plain_and(self, pattern: int, counted: int) -> int | None:
        """``pattern ∩ counted`` when :meth:`ExprPool.intersect` would apply no law to it (no
        ε, byte class, star, two repeats, universe or starred superset): the interned
        intersection; ``None`` otherwise."""
        pool = self.pool
        kind = pool.kind
        flag = self._plain_patterns.get(pattern)
        if flag is None:
            flag = self._plain_patterns[pattern] = self._plain_pattern(pattern)
        if not flag or counted <= EPSILON or counted == pattern or kind[counted] == K_BYTES:
            return None
        if kind[counted] == K_REPEAT and (flag == _PLAIN_REPEAT or pool._is_star(counted)):
            return None
        if flag == _PLAIN_STARRED:  # R* T: dropped when counted is h1 … hk T (_drop_starred_supersets);
            tail, e = pool.args[pattern][1], counted  # counted ends with X{a,b}: only if T is one of
            while kind[e] == K_CONCAT and e != tail:  # its suffixes
                e = pool.args[e][1]
            if e == tail:
                return None
        children = (pattern, counted) if pattern < counted else (counted, pattern)
        return pool._intern(K_AND, children, pool.nullable[pattern] and pool.nullable[counted], True)

    def _plain_pattern(self, pattern: int) -> int:
        """What :meth:`_plain_and` needs to know of a pattern state: 0 when ``intersect`` may apply a
        law whatever the other side (ε, ∅, a byte class, the universe, a star),
        ``_PLAIN_STARRED`` for ``R* T``, ``_PLAIN_REPEAT`` for a repeat, else 1."""
        pool = self.pool
        kind = pool.kind[pattern]
        if pattern <= EPSILON or pattern == pool.universal() or kind == K_BYTES or pool._is_star(pattern):
            return 0
        if kind == K_CONCAT and pool._is_star(pool.args[pattern][0]):
            return _PLAIN_STARRED
        return _PLAIN_REPEAT if kind == K_REPEAT else 1

    def _product_entry(self, expr: int) -> tuple[ProductGraph, int, int, int, int] | None:
        """``(graph, node, a, b, T)`` when ``expr`` is ``(P ∩ r X{a,b}) T`` (or without ``T``)
        with ``P`` of at most ``MAX_PATTERN_STATES`` states without intersection or complement,
        ``X`` a character whose rows shift (:meth:`_counted_of`), no byte starting both ``X``
        and ``T``, and ``T`` without intersection or complement; else ``None``."""
        pool = self.pool
        kind, args = pool.kind, pool.args
        both, tail = expr, EPSILON
        if kind[expr] == K_CONCAT:
            both, tail = args[expr]
        if kind[both] != K_AND or len(args[both]) != 2 or pool.has_bool[tail]:
            return None
        for pattern, counted in (args[both], args[both][::-1]):
            if pool.has_bool[pattern]:
                continue
            split = split_counted(pool, counted)
            if split is None or split[4] != EPSILON:
                continue
            heads, char, low, high, _ = split
            if low == 0 and high == INF:  # no count to keep (a pattern with no length): derivatives,
                continue  # which make only the states reached, where a graph is built whole in one mask
            shape = self._counted_of(char, EPSILON)
            if shape is None or shape.char.first & pool.first_bytes(tail):
                continue
            index = shape.char.spine_index.get(heads)
            if index is None or (index == shape.char.eps and high == 0) \
                    or shape.state_expr(pool, index, shape.base(pool, low, high)) != counted:
                continue
            found = self._product_graph(pattern, shape.char, index)
            if found is not None:
                found = self._products[expr] = (*found, low, high, tail)
                return found
        return None

    def _product_graph(self, pattern: int, char: CountedChar, residual: int) -> tuple[ProductGraph, int] | None:
        """``(graph, node)`` of the pair ``(pattern, residual)`` in the :class:`ProductGraph` of
        ``char`` and the :class:`PatternRows` that holds ``pattern`` (a state reached by
        :meth:`fill_entry` is most often one of an earlier pattern state's), else ``pattern``'s
        own; ``None``: too large. Kept in the pool's memo (the pattern is the grammar's own). Both
        are made as strings reach their states (a short value makes few), each template at most
        ``MAX_PATTERN_STATES`` states; after ``MAX_PATTERN_FAILURES`` templates too large in a
        grammar no new one is begun (each cost up to 256 states' derivatives, ~1-10 ms)."""
        memo = self.pool.memo
        found = memo.get(("counted pattern", pattern))
        if found is None:
            if memo.get(("counted pattern failures",), 0) >= MAX_PATTERN_FAILURES:
                return None
            found = (PatternRows(memo, pattern), 0)
        rows, j = found
        if rows.failed:
            return None
        graph = next((g for g in rows.graphs if g.char is char), None)
        if graph is None:
            if len(rows.graphs) >= MAX_PRODUCT_GRAPHS:
                return None
            graph = ProductGraph(rows, char)
            rows.graphs.append(graph)
        node = graph.node((j, residual))
        return None if node is None else (graph, node)
