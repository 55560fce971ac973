"""A lexer's literals: JSON's punctuation laid out with the family block, an object's key literals
laid out in one batch before the second mask, and the rows of a literal lexeme
(docs/design/lexer-templates.md). A part of :class:`leapgram.parser.lexer.Lexer`, mixed in."""

from __future__ import annotations

import numpy as np

from ..errors import BudgetExceededError
from ..regex.dfa import DEAD, UNKNOWN, empty_table
from ..regex.expr import (
    EMPTY,
    EPSILON,
    K_BYTES,
    K_CONCAT,
    K_OR,
)
from . import lexer_blocks
from .lexer_blocks import (
    ACC_ARRAYS,
    PUNCTUATION_ROOM,
    Items,
    family_block,
    literal_states,
    literal_tails,
    punctuation_rows,
    segment_states,
    set_up_chains,
    write_rows,
)

MAX_LITERAL_STATES = 512  # see Lexer.lay_out_literals (1 KB each): the literals past it are filled as reached
MAX_TRIE_STATES = 512  # see Lexer._lay_out_trie: new states per layout (1 KB each); the nodes past them as reached
# (a walk that reaches an enum's root from before its quote needs few of them: 2,048 made o31994 a 5.8 ms mask)


class LiteralRows:
    """The methods of :class:`leapgram.parser.lexer.Lexer` this module holds; the state is the lexer's."""

    def _punctuation(self) -> list[tuple[int, tuple[int, tuple[int, ...], tuple[int, ...]]]]:
        """``(lexeme, (expr, tails, path))`` of the grammar's literal lexemes whose expressions
        the pool family's front end names in ``PoolFamily.set_up`` (JSON's ``{`` and ``[``: an
        object's or array's first mask starts at the fresh state of one of them alone), to lay
        out with the block (:meth:`_lay_out_punctuation`); ``tails`` and ``path`` as
        :meth:`_literal_tails` says, kept in the family's memo (:func:`set_up_chains`). None in
        a grammar with ignored lexemes (their fresh states hold more than the literal)."""
        family = self.pool.family
        if family is None or self._ignore or not family.set_up:
            return []
        chains = set_up_chains(self.pool)
        if not chains:
            return []
        return [(lex, chains[expr]) for lex, expr in enumerate(self._lexeme_exprs) if expr in chains]

    def _lay_out_punctuation(self, punctuation: list[tuple[int, tuple[int, tuple[int, ...], tuple[int, ...]]]]) -> None:
        """Number the states of the literals ``punctuation`` (:meth:`_punctuation`), whose rows
        and ``acc_*`` entries :meth:`_start_with_block` wrote right after the block, and write
        their lexemes to ``acc_pool``, as :meth:`lay_out_literals` does for the other literals
        after the first mask: per literal the fresh state of its lexeme alone, then the state
        after each byte. A literal's items, ``_ids`` entries and slot are made once per lexeme
        id and first state (:func:`literal_states`)."""
        state = len(self._items)
        used = self._acc_used
        first_id = len(self._acc_ids)
        acc_ids, slots = self._acc_ids, self._acc_slots
        firsts = []
        for k, (lex, chain) in enumerate(punctuation):
            items, fresh, ids, accepted, slot = literal_states(lex, *chain[:2], state, used + k, first_id + k)
            firsts.append(((bool(fresh[0]), items[0]), state))
            self._items.extend(items)
            self._fresh.extend(fresh)
            self._ids.update(ids)
            self._accepted.extend(accepted)
            acc_ids[slot[0]] = slot[2]  # as _acc_slot would
            slots[slot[0]] = slot
            state += len(items)
        self._note_singles(firsts)
        ended = len(punctuation)
        if used + ended > self.acc_pool.shape[0]:
            self.acc_pool = np.concatenate([self.acc_pool, np.zeros(self.acc_pool.shape[0] + ended, np.int32)])
        self.acc_pool[used:used + ended] = [lex for lex, _ in punctuation]
        self._acc_used = used + ended

    def _start_with_block(self, punctuation: list[tuple[int, tuple[int, tuple[int, ...], tuple[int, ...]]]]
                          | None = None) -> bool:
        """States ``1..n`` (after ``DEAD``): the single-lexeme states of the grammar's lexemes
        that are expressions of the pool family (JSON whitespace, strings, numbers, punctuation)
        and every state they reach, with their rows, copied from the family's
        :func:`family_block` for this set of lexemes. Their rows are the same in every schema;
        a grammar numbers them and copies them at compile (one array copy, a few list
        extensions) instead of building them, template by template, during its first masks.
        The literals ``punctuation`` (:meth:`_punctuation`: JSON's ``{``, ``,``...) follow, their
        rows and ``acc_*`` entries copied with the block's from the family's
        :func:`punctuation_rows` (see :meth:`_lay_out_punctuation`); ``BLOCK_SPARE`` states
        after them. False (nothing made) where there is no block: no family, none of its
        lexemes, or a block too large for ``Limits.max_dfa_states``."""
        family = self.pool.family
        if family is None:
            return False
        lex_of: dict[int, int] = {}
        size = family.size
        for lex, expr in enumerate(self._lexeme_exprs):
            if expr < size:  # a root shared by two lexemes is left to the rows as reached
                lex_of[expr] = -1 if expr in lex_of else lex
        roots = tuple(sorted(expr for expr, lex in lex_of.items() if lex >= 0))
        block = family_block(self.pool, roots) if roots else None
        if block is None or 4 * (block.size + 1) > self.limits.max_dfa_states:
            return False
        n = block.size
        count = sum([1 + len(chain[1]) for _, chain in punctuation]) if punctuation else 0
        if count > PUNCTUATION_ROOM or 2 * (n + 1 + count) > self.limits.max_dfa_states:  # rows as reached
            count = 0
        layout = punctuation_rows(self.pool, block, punctuation) if count else None
        capacity = min(n + count + lexer_blocks.BLOCK_SPARE, self.limits.max_dfa_states)
        trans = empty_table(capacity)  # rows past these written as states are numbered
        trans[DEAD] = DEAD
        trans[1:n + 1] = block.trans
        if layout is not None:
            trans[n + 1:n + 1 + count] = layout.trans
        self.trans = trans
        self._capacity = capacity
        self._ready = n + 1 + count
        lexes = [lex_of[root] for root in block.roots]
        for name, head in zip(ACC_ARRAYS, block.acc if layout is None else layout.acc):  # 0 for DEAD and past
            setattr(self, name, head[:capacity].copy())
        ignored = [lex in self._ignore for lex in lexes]
        self.acc_ignore_only = np.zeros(capacity, dtype=np.int8)
        if any(ignored[r] for r in block.end_roots):
            self.acc_ignore_only[block.ends] = np.array(ignored, dtype=np.int8)[block.end_root]
        state = 1
        for exprs, ends, lex in zip(block.segments, block.segment_ends, lexes):
            items, ids, accepted = segment_states(exprs, ends, lex, state)
            self._items.extend(items)
            self._ids.update(ids)
            self._accepted.extend(accepted)
            state += len(items)
        self._fresh.extend(bytes(n))
        used = block.ends.shape[0]
        if used > self.acc_pool.shape[0]:
            self.acc_pool = np.zeros(2 * used, dtype=np.int32)
        if used:
            self.acc_pool[:used] = np.array(lexes, dtype=np.int32)[block.end_root]
        self._acc_ids.update({(lexes[r],): k for k, r in enumerate(block.end_roots, 1)})  # ids after () (0)
        self._acc_used = used
        if layout is not None:
            self._lay_out_punctuation(punctuation)
        return True

    def lay_out_literals(self) -> None:
        """Number the states of the grammar's literal lexemes that are not family expressions
        (an object's keys ``"name"``: most of a tool call's lexemes), the fresh state of each
        lexeme alone and the states after each of its bytes (see :meth:`_literal_chains`),
        and write their rows (``DEAD`` but for the next byte; ``DEAD`` at the end) and
        ``acc_*`` entries, all together with a few numpy writes. Built as the walks reach them,
        each key cost a return of the trie-walk kernel and a Python row fill inside a mask
        (:meth:`_fill_literal`). A literal with a state made already (reached by an earlier
        walk) is left to the rows as reached, as are fresh states of several lexemes (a key
        and the whitespace before it). Done once per lexer; :class:`leapgram.mask.engines.CfgEngine`
        calls it before its second mask walk, so that the first mask (inside the time to
        first mask) does not wait for it."""
        with self._lock:
            if self._literals_laid_out:
                return
            self._literals_laid_out = True
            chains = self._literal_chains()
            if chains[0]:
                self._lay_out_literals(*chains)

    def _literal_chains(self) -> tuple[list[Items], bytearray, list[Items | tuple[bool, Items]], list[int],
                                       list[tuple[int, int]]]:
        """For :meth:`lay_out_literals`: the states to make, each literal's in a row (first the
        fresh state of the literal's lexeme alone, where the parser allows only it: an object's
        ``{``, a ``,``, a key right after ``{``; then the states after each byte), as their
        items, fresh flags and ``_ids`` keys (:func:`state_key`); per state the byte that leads
        to it from the previous one (-1 for a literal's first); and ``(index, lexeme)`` of each
        literal's last state. At most ``MAX_LITERAL_STATES`` states (and a quarter of
        ``Limits.max_dfa_states``), in lexeme order; the literals past that are filled as
        reached. Built as three flat lists, not a ``(fresh, items)`` pair per state
        (docs/design/lexer-templates.md, "Round 26: fresh states and missing rows")."""
        states: list[Items] = []
        fresh_flags = bytearray()
        keys: list[Items | tuple[bool, Items]] = []
        steps: list[int] = []
        ends: list[tuple[int, int]] = []
        pool = self.pool
        if pool.family is None:
            return states, fresh_flags, keys, steps, ends
        size = pool.family.size
        ids = self._ids
        byte_of = self._byte_of
        alone = not self._ignore  # the fresh state of one lexeme holds that lexeme only
        room = min(MAX_LITERAL_STATES, self.limits.max_dfa_states // 4)
        for lex, expr in enumerate(self._lexeme_exprs):
            if expr < size:
                continue
            found = literal_tails(pool, expr, byte_of)  # (Lexer._literal_tails)
            if found is None:  # not a literal: its rows as reached
                continue
            tails, path = found
            chain = [((lex, tail),) for tail in tails]
            if any(map(ids.__contains__, chain)):  # reached already, in part at least: the rest as reached
                continue
            fresh = (True, ((lex, expr),))  # the parser's start state for this lexeme alone
            if alone and fresh not in ids:
                if len(states) + len(chain) + 1 > room:
                    break
                states.append(fresh[1])
                keys.append(fresh)
                fresh_flags.append(1)
                path.insert(0, -1)
            else:  # (its first byte leads from fresh states, made as reached)
                if len(states) + len(chain) > room:
                    break
                path[0] = -1
            states.extend(chain)
            keys.extend(chain)
            fresh_flags.extend(bytes(len(chain)))
            steps.extend(path)
            ends.append((len(states) - 1, lex))
        return states, fresh_flags, keys, steps, ends

    def _literal_tails(self, expr: int) -> tuple[list[int], list[int]] | None:
        """``(tails, path)`` when ``expr`` is a literal (one byte after another: ``K_CONCAT``
        of one-byte classes, as the pool builds keys): its expressions after each of its bytes
        (the derivatives, ``EPSILON`` last) and those bytes; else ``None``."""
        return literal_tails(self.pool, expr, self._byte_of)

    def _lay_out_literals(self, states: list[Items], fresh: bytearray, keys: list[Items | tuple[bool, Items]],
                          steps: list[int], ends: list[tuple[int, int]]) -> None:
        """Make the states of :meth:`_literal_chains` (numbered from ``len(_items)``) with their
        rows and ``acc_*`` entries. No walk reaches them before some row leads to them, and
        none does yet (their keys were not in ``_ids``), so their rows are written in any
        order."""
        count = len(states)
        base = len(self._items)
        if 2 * (base + count) > self.limits.max_dfa_states:  # rows as reached
            return
        if base + count > self._capacity:
            self._grow(min(max(2 * base, base + count + 32), self.limits.max_dfa_states))
        self._ready = max(self._ready, base + count)  # every entry of their rows is written below
        self._items.extend(states)
        self._fresh.extend(fresh)
        self._ids.update(zip(keys, range(base, base + count)))
        self._note_singles([((bool(fresh[index]), states[index]), base + index)
                            for index, byte in enumerate(steps) if byte < 0])  # firsts
        block = self.trans[base:base + count]  # a view: rows DEAD but for each literal's next byte
        block[...] = DEAD
        cells = [256 * index + byte for index, byte in enumerate(steps[1:]) if byte >= 0]  # a state to the next
        block.reshape(-1)[cells] = [base + 1 + (cell >> 8) for cell in cells]
        ended = self._single_slots([lex for _, lex in ends])
        accepted: list[tuple[int, ...]] = [()] * count
        for (index, _), slot in zip(ends, ended):
            accepted[index] = slot[0]
        self._accepted.extend(accepted)
        where = [base + index for index, _ in ends]
        self.acc_start[where] = [slot[1] for slot in ended]
        self.acc_len[where] = [len(slot[0]) for slot in ended]
        self.acc_id[where] = [slot[2] for slot in ended]
        self.acc_ignore_only[where] = [slot[3] for slot in ended]
        self.accepting[where] = 1

    def _single_slots(self, lexemes: list[int]) -> list[tuple[tuple[int, ...], int, int, int]]:
        """The slots of ``acc_pool`` (``Lexer._acc_slots``) of each lexeme of ``lexemes`` alone, as
        :meth:`Lexer._acc_slot` makes them one at a time (the same starts, list ids and growth of
        ``acc_pool``), the new ones written to ``acc_pool`` with one numpy write."""
        slots = self._acc_slots
        ignore = self._ignore
        acc_ids = self._acc_ids
        used = start = self._acc_used
        new: list[int] = []
        for lex in lexemes:
            accepted = (lex,)
            if accepted not in slots:
                slots[accepted] = (accepted, used, acc_ids.setdefault(accepted, len(acc_ids)), 1 if lex in ignore else 0)
                new.append(lex)
                used += 1
        if new:
            size = self.acc_pool.shape[0]
            while used > size:  # (_acc_slot's growth, one lexeme at a time)
                size = 2 * size + 1
            if size > self.acc_pool.shape[0]:
                self.acc_pool = np.concatenate([self.acc_pool, np.zeros(size - self.acc_pool.shape[0], np.int32)])
                self._pack_views()
            self.acc_pool[start:used] = new
            self._acc_used = used
        return [slots[(lex,)] for lex in lexemes]

    def _fill_literal(self, state: int, lex: int, expr: int, first: int) -> tuple[int, int] | None:
        """The rows of ``state`` (one byte, ``first``, can continue ``expr``) and of the states
        after it along the literal while one byte at most continues each and their rows are
        unknown: each row is ``DEAD`` but for its byte. The new states are numbered together and
        the rows written with two array writes, instead of a state, a row and three writes per
        byte of a key. Returns ``(state, expr)`` of a state reached whose row needs byte
        classes, else ``None``."""
        pool = self.pool
        kind, args, has_bool = pool.kind, pool.args, pool.has_bool
        ids = self._ids
        trans = self.trans
        chain = [state]  # states whose rows are written here, in order
        row_bytes: list[int] = []  # per state of the chain: its byte (-1: a dead row)
        targets: list[int] = []
        new_items: list[Items] = []  # states numbered from len(self._items), in order
        base = next_state = len(self._items)
        limit = self.limits.max_dfa_states
        more = None
        added: list[Items] = []  # keys put in self._ids here, taken back if this raises
        try:
            while True:
                if first == 0:
                    row_bytes.append(-1)
                    targets.append(DEAD)
                    break
                byte = first.bit_length() - 1
                if kind[expr] == K_CONCAT and kind[args[expr][0]] == K_BYTES:  # _derivative, inlined: its tail
                    d = args[expr][1]
                elif kind[expr] == K_BYTES:  # its last byte (in the class: first is the class): ε
                    d = EPSILON
                else:
                    d = pool.derivative(expr, byte)
                if d == EMPTY or (has_bool[d] and self._is_empty(d)):
                    row_bytes.append(byte)
                    targets.append(DEAD)
                    break
                items = ((lex, d),)
                found = ids.get(items)
                row_bytes.append(byte)
                if found is None:
                    found = next_state
                    if found >= limit:
                        raise BudgetExceededError("max_dfa_states", limit, "lexer DFA too large")
                    next_state += 1
                    ids[items] = found  # found again along this literal (a byte loop)
                    added.append(items)
                    new_items.append(items)
                    targets.append(found)
                else:
                    targets.append(found)
                    if found >= base or found in chain or trans[found, 0] != UNKNOWN:  # known or being written
                        break
                expr = d
                head = args[d][0] if kind[d] == K_CONCAT else EMPTY
                first = args[head][0] if kind[head] == K_BYTES else pool.first_bytes(d)  # first_bytes, inlined
                if first & (first - 1):  # several bytes: byte classes, after this chain's rows
                    more = (found, d)
                    break
                chain.append(found)
            if new_items and base + len(new_items) > self._capacity:
                self._grow(min(max(2 * base, base + len(new_items)), self.limits.max_dfa_states))
        except BaseException:  # out of budget (states, or an emptiness search): no state was made
            for key in added:
                ids.pop(key, None)
            raise
        if new_items:
            self._add_single_states(new_items, lex)
        rows = np.zeros((len(chain), 256), dtype=np.int32)  # DEAD everywhere but each state's byte
        for index in range(len(chain) if row_bytes[-1] >= 0 else len(chain) - 1):  # (-1: a dead row)
            rows[index, row_bytes[index]] = targets[index]  # a few scalar writes: cheaper than fancy indexing
        write_rows(self.trans, chain, list(range(len(chain))), rows)  # (read after the new states: they may grow it)
        return more

    def _trie_step(self, expr: int) -> tuple[tuple[int, int], ...] | None:
        """``(byte, tail)`` for each byte that continues ``expr`` when ``expr`` is a node of a
        literal trie (:meth:`ExprPool.literal_set`: an enum's spellings): a byte then its tail,
        one byte alone (its tail ``ε``), ``ε`` (none), or an alternation of those whose first
        bytes differ; ``tail`` is the derivative by ``byte`` (a one-byte head's tail, which the
        alternation's derivative, ``alt([tail])``, gives back: the pool's alternations are kept
        flat and sorted). ``None`` for other expressions."""
        pool = self.pool
        kind, args = pool.kind, pool.args
        k = kind[expr]
        if k == K_CONCAT:
            head, tail = args[expr]
            if kind[head] == K_BYTES:
                bits = args[head][0]
                if bits & (bits - 1) == 0:
                    return ((bits.bit_length() - 1, tail),)
            return None
        if k == K_OR:
            out = []
            seen = 0
            for child in args[expr]:
                k = kind[child]
                if k == K_CONCAT:
                    head, tail = args[child]
                    if kind[head] != K_BYTES:
                        return None
                    bits = args[head][0]
                elif k == K_BYTES:
                    bits, tail = args[child][0], EPSILON
                elif child == EPSILON:
                    continue
                else:
                    return None
                if bits & (bits - 1) or seen & bits:
                    return None
                seen |= bits
                out.append((bits.bit_length() - 1, tail))
            return tuple(out)
        if k == K_BYTES:
            bits = args[expr][0]
            return ((bits.bit_length() - 1, EPSILON),) if bits & (bits - 1) == 0 else None
        return () if expr == EPSILON else None

    def _lay_out_trie(self, state: int, lex: int, expr: int) -> bool:
        """The rows of ``state`` (its item ``expr`` an alternation of a literal trie: an enum of
        16 strings or more, :meth:`_trie_step`) and of the trie's nodes below it, breadth first,
        at most ``MAX_TRIE_STATES`` new states: numbered together and their rows written with a
        few numpy writes. Reached one walk return at a time, galaxy's ~500 licences made 850
        states in one mask, a byte-class row or a :meth:`_fill_literal` chain per return. A node
        whose row is known already is left, as is one that is no trie node (its row as
        reached). ``False`` (nothing made) when ``expr`` is no such alternation or its own
        targets do not fit in ``Limits.max_dfa_states``."""
        children = self._trie_step(expr) if self.pool.kind[expr] == K_OR else None
        if not children:
            return False
        ids = self._ids
        step_of = self._trie_step
        base = next_state = len(self._items)
        room = min(MAX_TRIE_STATES, self.limits.max_dfa_states - base)
        queue = [(state, children)]  # the nodes whose rows are written here, breadth first
        queued = {state}  # of the states made before (new ones are queued once, when made)
        cells: list[int] = []  # 256 * (index in queue) + byte
        targets: list[int] = []
        new_items: list[Items] = []
        index = 0
        while index < len(queue):
            kids = queue[index][1]
            if next_state - base + len(kids) > room:
                break  # this node and those after it: rows as reached
            for byte, tail in kids:
                items = ((lex, tail),)
                found = ids.get(items)
                if found is None:
                    found = ids[items] = next_state
                    next_state += 1
                    new_items.append(items)
                    step = step_of(tail)
                    if step is not None:
                        queue.append((found, step))
                elif found < base and found not in queued and self.trans[found, 0] == UNKNOWN:
                    step = step_of(tail)
                    if step is not None:
                        queue.append((found, step))
                        queued.add(found)
                cells.append(index << 8 | byte)
                targets.append(found)
            index += 1
        if index == 0:
            return False
        if new_items:
            self._add_numbered_states(new_items, lex, min(max(2 * base, next_state + 32), self.limits.max_dfa_states))
        rows = np.zeros((index, 256), dtype=np.int32)  # DEAD but for each node's bytes
        rows.reshape(-1)[cells] = targets
        write_rows(self.trans, [node for node, _ in queue[:index]], list(range(index)), rows)
        return True
