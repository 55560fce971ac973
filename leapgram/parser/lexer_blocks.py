"""Lexer blocks, row templates and punctuation rows shared by the lexers of a pool family."""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass

import numpy as np

from ..regex.dfa import DEAD, ROW_TEMPLATE, TEMPLATE_MEMBER, make_row_template
from ..regex.expr import (
    EPSILON,
    K_BYTES,
    K_CONCAT,
    K_OR,
    ExprPool,
)

Items = tuple[tuple[int, int], ...]


def state_key(fresh: bool, items: Items) -> Items | tuple[bool, Items]:
    """The key of a lexer state in ``Lexer._ids``: its items, or ``(True, items)`` for a fresh
    state (an items tuple never equals that: its first element is a pair, not a bool). No
    ``(False, items)`` tuple per state: such a key outlives the young collections tracked (the
    collector moves the ``(lex, expr)`` pairs behind the tuples that hold them before it untracks
    tuples), and those keys were a third of what moves into the oldest generation and brings on
    full collections (performance-by-source.md, "Round 25: collections inside masks")."""
    return (True, items) if fresh else items
MAX_FAMILY_TEMPLATE_STATES = 256  # a pool family's (made once per process): the whitespace run's 120 states fit
_UNSEEN, _SEEN_ONCE = object(), object()  # row_template in a pool without a family
ACC_ARRAYS = ("accepting", "acc_start", "acc_len", "acc_id")  # LexerBlock.acc's order (acc_ignore_only apart)
BLOCK_SPARE = 512  # a lexer made from a block has room for this many more states: see Lexer._ready_rows
PUNCTUATION_ROOM = 8  # room after a block for the literals laid out with it (JSON's "{" and "[": 4 states)
SET_UP_LITERALS = ("literals set up with the block",)  # their chains' key in a family's memo (set_up_chains)
MAX_FAMILY_BLOCKS = 64  # lexer blocks kept per pool family, one per set of family lexemes (family_block)
MAX_PUNCTUATION_ROWS = 128  # punctuation layouts kept per pool family (punctuation_rows): 4 rows and 4 acc arrays each
BLOCKS_LOCK = threading.Lock()  # inserts into a family's blocks (the memo itself is shared by every thread)
LITERAL_SET_NODES = 1 << 16  # see is_literal_set: a larger set of names keeps the intersection


def row_template(pool: ExprPool, expr: int) -> tuple[tuple[int, ...], np.ndarray, bool] | None:
    """The rows of the single-lexeme states that ``expr`` reaches, in terms of expressions
    only: ``(exprs, table, root_reached)`` where ``exprs[0]`` is ``expr``, ``table[i, b]`` is
    ``1 + j`` for the state of ``exprs[j]`` after byte ``b`` from ``exprs[i]`` (0: dead), and
    ``root_reached`` says whether some byte leads back to ``expr``. Kept in the pool family's
    shared memo, so only for expressions of the family whose derivatives are all of the family
    too (the JSON Schema base pool warms its lexemes' derivatives); in a pool without a family
    (Lark, GBNF) in the pool's own memo, made at the second request for ``expr`` (lexemes that
    end the same way, each GBNF lexeme ending in ``ws``, then share the rows of their common
    tail; a tail asked for once is filled row by row, as reached). With no intersection or
    complement (a dead target is then exactly an empty derivative) and at most
    ``MAX_TEMPLATE_STATES`` states (``MAX_FAMILY_TEMPLATE_STATES`` in a family's memo: the
    flexible whitespace run has 120); ``None`` otherwise."""
    key = (ROW_TEMPLATE, expr)
    if pool.family is None:  # a Lark or GBNF grammar's own pool: made at the second request
        found = pool.memo.get(key, _UNSEEN)
        if found is _UNSEEN:  # rows one at a time, as reached, for a tail no other state shares
            pool.memo[key] = _SEEN_ONCE
            return None
        if found is _SEEN_ONCE:
            found = pool.memo[key] = make_row_template(pool, expr, 1 << 62)
        return found
    memo = pool.shared_memo(expr)
    if memo is None:
        return None
    found = memo.get(key, False)
    if found is False:
        found = memo[key] = make_row_template(pool, expr, pool.family.size, MAX_FAMILY_TEMPLATE_STATES)
    return found


def template_member(pool: ExprPool, expr: int) -> tuple[tuple[tuple[int, ...], np.ndarray, bool], int, bool] | None:
    """``(template, index, reached)`` when ``expr`` is state ``index`` of a row template that
    ``pool``'s family made with its base pool (a format's value: ``json_schema.common``'s
    ``keep_templates``), ``reached`` whether some byte leads back to it; else ``None``."""
    memo = pool.shared_memo(expr)
    return None if memo is None else memo.get((TEMPLATE_MEMBER, expr))


@dataclass(frozen=True)
class LexerBlock:
    """The single-lexeme states of some family lexemes (``roots``) and of all they reach, as
    states ``1..size`` of a lexer: state ``s`` holds ``(lexeme of its root, exprs[s - 1])``, the
    states of each root in turn (``segments``); ``trans`` their rows (targets in ``1..size``, ``DEAD``); ``ends`` the states
    where the lexeme can end, ``end_root`` its index in ``roots``. What a lexer's ``acc_*``
    entries of these states need beyond the lexemes' ids is here too, whatever ids the
    grammar gives the roots' lexemes: ``acc`` (``accepting``, ``acc_start``, ``acc_len`` and
    ``acc_id`` of states ``0..size + PUNCTUATION_ROOM + BLOCK_SPARE - 1``), ``end_roots`` (the roots that end
    somewhere, ascending: the list of the ``r``-th of them has id ``r + 1``) and
    ``segment_ends`` (per segment, the indices of its states where the lexeme ends)."""

    roots: tuple[int, ...]
    segments: tuple[tuple[int, ...], ...]  # per root, the expressions of its states, in order
    exprs: tuple[int, ...]
    trans: np.ndarray
    ends: np.ndarray
    end_root: np.ndarray
    acc: tuple[np.ndarray, ...]
    end_roots: tuple[int, ...]
    segment_ends: tuple[tuple[int, ...], ...]

    @property
    def size(self) -> int:
        return len(self.exprs)


def family_block(pool: ExprPool, roots: tuple[int, ...]) -> LexerBlock | None:
    """The :class:`LexerBlock` of the family lexemes ``roots`` (sorted expressions of ``pool``'s
    family), made from their row templates (a root without one is left out) and kept in the
    family's memo: at most ``MAX_FAMILY_BLOCKS`` sets of lexemes per family (JSON schemas use a
    handful: strings, numbers, integers, whitespace, punctuation); past that, ``None``."""
    family = pool.family
    if family is None:
        return None
    blocks = family.memo.get(("lexer blocks",))
    if blocks is None:
        with BLOCKS_LOCK:
            blocks = family.memo.setdefault(("lexer blocks",), {})
    found = blocks.get(roots, False)
    if found is False:
        if len(blocks) >= MAX_FAMILY_BLOCKS:
            return None
        with pool.lock:
            found = _family_block(pool, roots)
        with BLOCKS_LOCK:
            if len(blocks) < MAX_FAMILY_BLOCKS:
                found = blocks.setdefault(roots, found)
    return found


def _family_block(pool: ExprPool, roots: tuple[int, ...]) -> LexerBlock | None:
    kept, root_index, exprs, tables, segments = [], [], [], [], []
    for root in roots:
        template = row_template(pool, root)
        if template is None:
            continue
        template_exprs, table, _ = template
        offset = len(exprs)  # template state j is block state offset + 1 + j: table entry 1 + j
        tables.append(np.where(table > 0, table + offset, DEAD).astype(np.int32))
        root_index.extend([len(kept)] * len(template_exprs))
        segments.append(template_exprs)
        exprs.extend(template_exprs)
        kept.append(root)
    if not exprs:
        return None
    nullable = pool.nullable
    ends = np.array([s for s, e in enumerate(exprs, 1) if nullable[e]], dtype=np.intp)
    end_root = np.array([root_index[s - 1] for s in ends.tolist()], dtype=np.intp)
    trans = np.concatenate(tables)
    end_roots = tuple(sorted(set(end_root.tolist())))
    acc = tuple(np.zeros(len(exprs) + PUNCTUATION_ROOM + BLOCK_SPARE, dtype=dtype) for dtype in (np.int8, np.int32, np.int32, np.int32))
    accepting, acc_start, acc_len, acc_id = acc
    accepting[ends] = 1
    acc_start[ends] = np.arange(ends.shape[0], dtype=np.int32)
    acc_len[ends] = 1
    rank = {r: k for k, r in enumerate(end_roots, 1)}  # the id of [lexeme of root r] in every lexer
    acc_id[ends] = [rank[r] for r in end_root.tolist()]
    segment_ends = [tuple(j for j, e in enumerate(template_exprs) if nullable[e]) for template_exprs in segments]
    for array in (trans, ends, end_root, *acc):
        array.flags.writeable = False
    return LexerBlock(tuple(kept), tuple(segments), tuple(exprs), trans, ends, end_root, acc, end_roots,
                      tuple(segment_ends))


def literal_tails(pool: ExprPool, expr: int, byte_of: dict[int, int]) -> tuple[list[int], list[int]] | None:
    """``(tails, path)`` when ``expr`` is a literal of ``pool`` (:meth:`Lexer._literal_tails`);
    ``byte_of`` caches a class of bytes' byte (-1: not one byte)."""
    kind, args = pool.kind, pool.args
    tails: list[int] = []
    path: list[int] = []
    while True:
        literal = kind[expr] == K_CONCAT
        head = args[expr][0] if literal else expr
        byte = byte_of.get(head)
        if byte is None:
            bits = args[head][0] if kind[head] == K_BYTES else 0
            byte = byte_of[head] = bits.bit_length() - 1 if bits and not bits & (bits - 1) else -1
        if byte < 0:
            return None
        path.append(byte)
        if not literal:  # its last byte
            tails.append(EPSILON)
            return tails, path
        expr = args[expr][1]
        tails.append(expr)


def set_up_chains(pool: ExprPool) -> dict[int, tuple[int, tuple[int, ...], tuple[int, ...]]]:
    """``expr -> (expr, tails, path)`` of the literals that ``pool``'s family names in
    ``PoolFamily.set_up`` (outside the family but in its base pool: the same ids in every copy),
    which every lexer of the family lays out with its block (:meth:`Lexer._punctuation`);
    made once per family, kept in its memo under ``SET_UP_LITERALS``."""
    family = pool.family
    chains = family.memo.get(SET_UP_LITERALS)
    if chains is None:
        chains = {}
        for expr in family.set_up:
            found = literal_tails(pool, expr, {}) if family.size <= expr < family.base_size else None
            if found is not None:
                chains[expr] = (expr, tuple(found[0]), tuple(found[1]))
        chains = family.memo.setdefault(SET_UP_LITERALS, chains)
    return chains


@dataclass(frozen=True)
class PunctuationRows:
    """The rows (``trans``) of the states :meth:`Lexer._lay_out_punctuation` numbers after a
    family block, and the ``acc_*`` arrays of the block and of them together (``acc``, as
    :attr:`LexerBlock.acc`), whatever the ids of the literals' lexemes
    (:func:`punctuation_rows`)."""

    trans: np.ndarray
    acc: tuple[np.ndarray, ...]


def punctuation_rows(pool: ExprPool, block: LexerBlock,
                     punctuation: list[tuple[int, tuple[int, tuple[int, ...], tuple[int, ...]]]]) -> PunctuationRows:
    """The :class:`PunctuationRows` of the literals ``punctuation`` (``(lexeme, (expr, tails,
    path))`` each, in lexeme order: :meth:`Lexer._punctuation`; the lexemes' ids do not matter)
    laid out after ``block``: per literal the fresh state of its lexeme alone, then the state
    after each byte, each row ``DEAD`` but for the next byte; their lexemes' entries of
    ``acc_pool`` after the block's, their list ids after the block's. Kept in ``pool``'s family
    memo, at most ``MAX_PUNCTUATION_ROWS`` (one per block and set of JSON tokens a grammar
    spells: 36 over 100 schemas of the dev set)."""
    key = (block.roots, *[chain[0] for _, chain in punctuation])
    family = pool.family
    kept = family.memo.get(("punctuation rows",))
    if kept is None:
        with BLOCKS_LOCK:
            kept = family.memo.setdefault(("punctuation rows",), {})
    found = kept.get(key)
    if found is None:
        found = _punctuation_rows(block, [chain for _, chain in punctuation])
        if len(kept) < MAX_PUNCTUATION_ROWS:
            with BLOCKS_LOCK:
                found = kept.setdefault(key, found)
    return found


def _punctuation_rows(block: LexerBlock, chains: list[tuple[int, tuple[int, ...], tuple[int, ...]]]) -> PunctuationRows:
    first = block.size + 1
    used = block.ends.shape[0]  # the acc_pool entries and list ids of the block's lexemes come first
    first_id = 1 + len(block.end_roots)
    count = sum(1 + len(tails) for _, tails, _ in chains)
    trans = np.full((count, 256), DEAD, dtype=np.int32)
    acc = tuple(array.copy() for array in block.acc)
    accepting, acc_start, acc_len, acc_id = acc
    state = first
    for k, (_, _, path) in enumerate(chains):
        for byte in path:
            trans[state - first, byte] = state + 1
            state += 1
        accepting[state] = 1
        acc_start[state] = used + k
        acc_len[state] = 1
        acc_id[state] = first_id + k
        state += 1
    for array in (trans, *acc):
        array.flags.writeable = False
    return PunctuationRows(trans, acc)


@functools.lru_cache(maxsize=4096)
def literal_states(lex: int, expr: int, tails: tuple[int, ...], first: int, start: int, list_id: int
                   ) -> tuple[tuple[Items, ...], bytes, dict[tuple[bool, Items], int], tuple[tuple[int, ...], ...],
                              tuple[tuple[int, ...], int, int, int]]:
    """For :meth:`Lexer._lay_out_punctuation`: the states of literal lexeme ``lex`` (``expr``
    and ``tails`` of its ``(expr, tails, path)``: :meth:`Lexer._punctuation`; not the chain
    itself, which a process that froze its objects after ``warm_up`` may keep tracked, and with
    it every key that held it) numbered from ``first``, the fresh
    state of the lexeme alone and then the state after each byte: their items, fresh flags,
    ``_ids`` entries, ``_accepted`` entries (``(lex,)`` at the end) and the slot of ``(lex,)``
    (``Lexer._acc_slots``) at ``start`` in ``acc_pool``, with list id ``list_id``. Not
    modified by the lexers; tuples and bytes, not lists, so that the collector stops tracking
    what this cache keeps (see :func:`segment_states`)."""
    items = ((lex, expr),), *[((lex, tail),) for tail in tails]
    fresh = [True] + [False] * len(tails)
    ids = {state_key(is_fresh, item): state for state, (is_fresh, item) in enumerate(zip(fresh, items), first)}
    return items, bytes(fresh), ids, ((),) * len(tails) + ((lex,),), ((lex,), start, list_id, 0)


@functools.lru_cache(maxsize=4096)
def segment_states(exprs: tuple[int, ...], ends: tuple[int, ...], lex: int,
                    first: int) -> tuple[tuple[Items, ...], dict[tuple[bool, Items], int], tuple[tuple[int, ...], ...]]:
    """The items of the block states ``exprs`` of lexeme ``lex``, numbered from ``first``,
    their entries in ``Lexer._ids`` and in ``Lexer._accepted`` (``(lex,)`` at the indices
    ``ends``): the lexeme ids of a root recur across schemas, and a segment starts at the same
    state in every lexer of its block, so these are made once, not per grammar (a dict merges
    into ``_ids`` without hashing its keys again). Neither is modified by the lexers. Tuples,
    not lists: the cache lives as long as the process, and the collector untracks a tuple of
    untracked tuples (and a dict of them, at a full collection) but scans every list at every
    full collection (2,700 lists after 1,450 schemas of the dev set, about half of what then
    stayed between schemas)."""
    items = tuple(((lex, e),) for e in exprs)
    accepted: list[tuple[int, ...]] = [()] * len(exprs)
    for j in ends:
        accepted[j] = (lex,)
    return items, {item: state for state, item in enumerate(items, first)}, tuple(accepted)


def write_rows(trans: np.ndarray, states: list[int], sources: list[int], rows: np.ndarray) -> None:
    """``trans[states[i]] = rows[sources[i]]`` for each ``i``: every entry written once, with its
    final value, and column 0 (the "row known" marker) after the others (walks run unlocked). The
    states after the first are most often new, numbered in a row, with their rows in order: then
    slices, a third of the cost of fancy indexing."""
    head, rest = states[0], states[1:]
    count = len(rest)
    first = sources[1] if count else 0
    if not count or (rest == list(range(rest[0], rest[0] + count)) and sources[1:] == list(range(first, first + count))):
        source = sources[0]
        trans[head, 1:] = rows[source, 1:]
        if count:
            trans[rest[0]:rest[0] + count, 1:] = rows[first:first + count, 1:]
        trans[head, 0] = rows[source, 0]
        if count:
            trans[rest[0]:rest[0] + count, 0] = rows[first:first + count, 0]
        return
    where = np.array(states, dtype=np.intp)
    take = np.array(sources, dtype=np.intp)
    trans[where, 1:] = rows[take, 1:]
    trans[where, 0] = rows[take, 0]


def split_off(parts: tuple[int, ...], singles: int) -> tuple[int, ...]:
    """``parts`` with each byte of ``singles`` made a class of its own (sorted)."""
    out = []
    for part in parts:
        rest = part & ~singles
        if rest:
            out.append(rest)
        inside = part & singles
        while inside:
            low = inside & -inside
            out.append(low)
            inside ^= low
    return tuple(sorted(out))


def is_literal_set(pool: ExprPool, expr: int, limit: int = LITERAL_SET_NODES) -> bool:
    """Whether ``expr`` is a set of literal byte strings written with single bytes,
    concatenations and alternations only (an object's declared names), within ``limit`` nodes.
    The shadow (:meth:`Lexer._shadow_split`) steps such a set by a literal step per byte. A
    finite set written otherwise (a ``patternProperties`` pattern with a length bound, such as
    ``^[a-zA-Z0-9_-]{0,250}$``) makes each step a derivative of a class-and-repeat expression,
    slower than the intersection it replaces: o64731's first mask went from 7 to 29 ms."""
    kind, args = pool.kind, pool.args
    seen = {EPSILON}  # ε is no node of the limit: hence limit + 1 below
    todo = [expr]
    pop, extend, add = todo.pop, todo.extend, seen.add
    while todo:
        node = pop()
        if node in seen:
            continue
        add(node)
        k = kind[node]
        if k == K_CONCAT or k == K_OR:
            if len(seen) > limit + 1:
                return False
            extend(args[node])
        elif k != K_BYTES:
            return False
        else:
            byte_class = args[node][0]
            if byte_class & (byte_class - 1):
                return False
    return len(seen) <= limit + 1
