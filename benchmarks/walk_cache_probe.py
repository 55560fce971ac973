"""A probe (round 21), not part of leapgram: a per-vocabulary cache of CFG mask walks keyed by
the lexer state's expressions and checked by their *transcript* (docs/design/trie-walk.md,
"The cache of walks by transcript"), to measure what a hit costs against a computed mask.

``python benchmarks/walk_cache_probe.py FOLDER [--sample N] [--pairs P] [--warm W] [--verify]``:
the cases of FOLDER (links to BFCL + Glaiveai2K files) are shuffled; after ``W`` cases run
through the cache untimed (a server that has seen them), the rest are cut into ``2 P`` disjoint
chunks and leapgram as is ("old") and with the cache patched into ``CfgEngine.new_mask``
("new") alternate over them, TBM thread CPU per chunk; the cache lives across chunks.
``--verify`` computes every hit's mask as well and counts differences (must be 0), and times
that computation (what the hit saved, before the work a hit skips is paid by later masks).

The parts, all exact (no hash decides alone):
- key: the root lexer state's items ``(lexeme's expression, remaining expression, ignored)``,
  only states whose expressions are all the base pool's (the same ids in every grammar), plus
  the grammar's ignored lexemes;
- canonical lexeme ids per grammar (:func:`lexeme_canon`): base pool expressions by id, keys
  ``key:NAME`` by the bytes of ``"NAME"`` (checked against the pool), others by structure;
- :func:`walk_record_kernel` (``walk_cfg_kernel`` plus a record, a patched copy: the cache
  proper would give the kernel the record argument) records each question ``(chart, lexemes
  ended)`` once, skipping ignored-only boundaries (they keep the chart);
- :func:`insert_kernel` puts a miss's transcript (questions and answers as sorted canonical
  ids) into the key's decision tree; :func:`replay_kernel` follows the tree from the chart,
  one Earley scan per question, an answer found by a hash and then compared id by id.
Single-threaded (the record is shared); bounded by ``WalkCache.max_keys`` and ``per_key``.

The probe's kernels inline leapgram's (``boundary_kernel``, ``scan_kernel``, ``table_get_kernel``
...), but numba keys their on-disk cache by this file alone: after an edit of a kernel in
``leapgram/_kernels`` the cached probe would run the old code. So a SHA-256 of those sources is
kept beside the cache files, and when it changes the probe's cache indexes are flushed at import
(:func:`flush_if_kernels_changed`): the probe compiles again, once.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import random
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np
from numba.core.dispatcher import Dispatcher

sys.path.insert(0, str(Path(__file__).resolve().parent))

from profile_masks import run

from leapgram import _kernels
from leapgram._kernels import njit
from leapgram._kernels.cfg_walk import DONE, MISSING_ROW, MISSING_ROW_AFTER_STEP, tables_filling
from leapgram._kernels.earley import NEED_SPACE, NONE, OK, SET, boundary_kernel, scan_kernel
from leapgram._kernels.entry import DirectKernel
from leapgram._kernels.tables import ABSENT, table_get_kernel
from leapgram._kernels.trie_walk import copy_duplicate_bits_kernel
from leapgram._kernels.views import arena_of, grammar_of, lexer_of
from leapgram.mask import engines
from leapgram.mask.engines import CfgEngine

_clock = time.thread_time_ns  # the probe's own timers (``--lean``: none)
ADDED, EXISTS, CONFLICT, OVERFLOW = 1, 2, 3, 7  # insert_kernel's answers (and NEED_SPACE)
RECORD = 256  # boundaries recorded per walk (past it: not cached)


@njit(cache=True, nogil=True)
def walk_record_kernel(node_info, node_end, dup_primary, dup_other, lexer_views, grammar_views, arena_views,
                       max_row, use_leo, stack, start, mask, record):
    """walk_cfg_kernel, also appending each boundary looked up (packed key, answer) to ``record``
    (``record[0]`` the count, -1 once full)."""
    lexer = lexer_of(lexer_views)
    trans, accepting, lexer = lexer[0], lexer[1], lexer[2:]
    grammar = grammar_of(grammar_views)
    arena = arena_of(arena_views)
    bound_keys = arena[3]
    bound_vals = arena[4]
    n = node_info.shape[0]
    i = start
    last_key = np.int64(-1)
    last_found = np.int64(NONE)
    low = np.int64(0xFFFFFFFF)
    while i < n:
        info = node_info[np.uint64(i)]
        depth = np.uint64((info >> 8) & 0xFFFF)
        top = stack[depth - np.uint64(1)]
        lex = top & low
        byte = np.uint64(info & 0xFF)
        state = trans[np.uint64(lex), byte]
        if state <= 0:
            if state < 0:
                return i, MISSING_ROW, 0
            if accepting[np.uint64(lex)] == 0:
                i = node_end[np.uint64(i)]
                continue
            if top == last_key:
                found = last_found
            else:
                found = table_get_kernel(bound_keys, bound_vals, top)
                if found == ABSENT:
                    status, found = boundary_kernel(grammar, arena, lexer, top >> 32, lex, max_row, use_leo)
                    if status != OK:
                        return i, status, found
                last_key = top
                last_found = found
                # record: from here to the end marker, the lines walk_cfg_kernel has not (kernel_drift)
                r = record[0]
                if r >= 0 and lexer[4][np.uint64(lex)] == 0:
                    question = (top & ~low) | lexer[3][np.uint64(lex)]
                    seen = False
                    for w in range(r):
                        if record[3 * w + 1] == question:
                            seen = True
                            break
                    if not seen:
                        if 3 * r + 4 > record.shape[0]:
                            record[0] = -1
                        else:
                            record[3 * r + 1] = question
                            record[3 * r + 2] = lex
                            record[3 * r + 3] = found
                            record[0] = r + 1
                # end record
            if found == NONE:
                i = node_end[np.uint64(i)]
                continue
            state = trans[np.uint64(found & low), byte]
            if state < 0:
                return i, MISSING_ROW_AFTER_STEP, found
            if state == 0:
                i = node_end[np.uint64(i)]
                continue
            stack[depth] = (found & ~low) | state
        else:
            stack[depth] = (top & ~low) | state
        token = info >> 24
        if token >= 0:
            mask[np.uint64(token >> 5)] |= np.uint32(1) << np.uint32(token & 31)
        i += 1
    copy_duplicate_bits_kernel(mask, dup_primary, dup_other)
    return n, DONE, tables_filling(arena)


def kernel_drift() -> str | None:
    """``None`` while :func:`walk_record_kernel` is the engine's ``walk_cfg_kernel`` plus its
    ``record`` argument and the lines between its ``# record`` markers (compared as syntax trees:
    comments, docstrings and layout aside); else what to do. Checked by ``tests/test_bench.py``
    and at the start of :func:`main`, so a change to the engine's kernel is not lost on the copy."""
    import ast
    import inspect
    import textwrap

    from leapgram._kernels.cfg_walk import walk_cfg_kernel

    def tree(kernel, cut: bool) -> str:
        lines = inspect.getsource(getattr(kernel, "py_func", kernel)).splitlines()
        if cut:
            begin = next(k for k, line in enumerate(lines) if line.strip().startswith("# record:"))
            end = next(k for k, line in enumerate(lines) if line.strip() == "# end record")
            lines = lines[:begin] + lines[end + 1:]
        function = ast.parse(textwrap.dedent("\n".join(lines))).body[0]
        function.name, function.decorator_list = "kernel", []
        function.args.args = [arg for arg in function.args.args if arg.arg != "record"]
        function.body = function.body[1:]  # the docstring
        return ast.dump(function)

    if tree(walk_record_kernel, True) == tree(walk_cfg_kernel, False):
        return None
    return ("walk_cfg_kernel (leapgram/_kernels/cfg_walk.py) changed: carry the change over to "
            "walk_record_kernel in benchmarks/walk_cache_probe.py (outside its # record lines)")


@njit(cache=True, inline="always")
def _sorted_into(out, at, values, lo, hi, canon_of_lex):
    """Write the canonical ids of ``values[lo:hi]`` sorted at ``out[at:]``; returns the count."""
    m = 0
    for j in range(lo, hi):
        v = canon_of_lex[values[j]]
        q = at + m - 1
        while q >= at and out[q] > v:
            out[q + 1] = out[q]
            q -= 1
        out[q + 1] = v
        m += 1
    return m


@njit(cache=True, inline="always")
def _list_hash(values, lo, n):
    """The order-free hash of ``values[lo:lo + n]`` (uint64 wraparound)."""
    h = np.uint64(0)
    for j in range(lo, lo + max(n, 0)):
        x = np.uint64(values[j]) * np.uint64(0x9E3779B97F4A7C15)
        h += x ^ (x >> np.uint64(29))
    return h


@njit(cache=True, inline="always")
def _find_edge(edges, e_hash, lists, e, a_len, values, lo):
    """The edge from ``e`` on (a node's list) whose answer is ``values[lo:lo + a_len]`` (sorted
    canonical ids; ``a_len`` -1: none), or -1."""
    h = _list_hash(values, lo, a_len)
    while e >= 0:
        if edges[e, 2] == a_len and (a_len < 0 or e_hash[e] == h):
            same = True
            for j in range(max(a_len, 0)):
                if lists[edges[e, 1] + j] != values[lo + j]:
                    same = False
                    break
            if same:
                return e
        e = edges[e, 0]
    return -1


@njit(cache=True, nogil=True)
def replay_kernel(grammar, arena, max_row, use_leo, root, tree, lists, lex_of_canon, canon_of_lex, charts_of,
                  scratch):
    """Follow a key's decision tree from chart ``root``: ``(status, leaf)``, ``leaf >= 0`` the
    mask found, ``-1 - node`` when the answer at ``node`` is not in the tree.
    ``tree = (start, q, e_first, edges, e_hash)``: ``start[0]`` the first node (``~leaf`` when
    the walk asks nothing); ``q[node] = (chart number, ended offset, ended count)`` into
    ``lists``; ``edges[e] = (next edge, allowed offset, allowed count or -1 for none, target)``,
    target a node or ``~leaf``; ``e_hash[e]`` the hash of the allowed list."""
    start, q, e_first, edges, e_hash = tree
    charts = arena[1]
    set_ptr = arena[11]
    set_items = arena[12]
    charts_of[0] = root
    made = 1
    cur = start[0]
    while cur >= 0:
        chart = charts_of[q[cur, 0]]
        e_off = q[cur, 1]
        e_len = q[cur, 2]
        if e_len > scratch.shape[0]:
            return OK, -1 - cur
        for j in range(e_len):
            c = lists[e_off + j]
            if c >= lex_of_canon.shape[0] or lex_of_canon[c] < 0:
                return OK, -1 - cur
            scratch[j] = lex_of_canon[c]
        status, child = scan_kernel(grammar, arena, chart, scratch[:e_len], max_row, use_leo)
        if status != OK:
            return status, 0
        a_len = -1
        if child != NONE:
            s = charts[child, SET]
            if set_ptr[s + 1] - set_ptr[s] > scratch.shape[0]:
                return OK, -1 - cur
            a_len = _sorted_into(scratch, 0, set_items, set_ptr[s], set_ptr[s + 1], canon_of_lex)
        nxt = _find_edge(edges, e_hash, lists, e_first[cur], a_len, scratch, 0)
        if nxt < 0:
            return OK, -1 - cur
        if child != NONE:
            charts_of[made] = child
            made += 1
        cur = edges[nxt, 3]
    return OK, ~cur


@njit(cache=True, nogil=True)
def insert_kernel(tree, lists, counts, record, acc, arena, chart, canon_of_lex, work, steps, charts_of, leaf):
    """Put the recorded walk (leaf ``leaf``) into a key's tree. ``counts = (nodes, edges, list
    entries, start set)``. Returns ``ADDED``, ``EXISTS``, ``CONFLICT``, ``OVERFLOW`` or ``NEED_SPACE``
    (``counts[4:7]`` the sizes wanted)."""
    start, q, e_first, edges, e_hash = tree
    acc_start, acc_len, acc_pool = acc[0], acc[1], acc[2]
    charts = arena[1]
    set_ptr = arena[11]
    set_items = arena[12]
    n = record[0]
    if n < 0 or n > steps.shape[0]:
        return OVERFLOW
    # canonical steps: (chart number, ended offset, ended count, allowed offset, allowed count or -1) into work
    charts_of[0] = chart
    made = 1
    w = 0
    for k in range(n):
        c = record[3 * k + 1] >> 32
        lex = record[3 * k + 2]
        found = record[3 * k + 3]
        number = -1
        for j in range(made):
            if charts_of[j] == c:
                number = j
                break
        if number < 0 or w + acc_len[lex] > work.shape[0]:
            return OVERFLOW
        steps[k, 0] = number
        steps[k, 1] = w
        steps[k, 2] = _sorted_into(work, w, acc_pool, acc_start[lex], acc_start[lex] + acc_len[lex], canon_of_lex)
        w += steps[k, 2]
        if found == NONE:
            steps[k, 3] = 0
            steps[k, 4] = -1
            continue
        child = found >> 32
        s = charts[child, SET]
        if w + set_ptr[s + 1] - set_ptr[s] > work.shape[0]:
            return OVERFLOW
        steps[k, 3] = w
        steps[k, 4] = _sorted_into(work, w, set_items, set_ptr[s], set_ptr[s + 1], canon_of_lex)
        w += steps[k, 4]
        charts_of[made] = child
        made += 1
    # follow the tree
    if counts[3] == 0:
        at = 0
        cur = np.int64(-1)
    else:
        at = n + 1  # no divergence yet
        cur = np.int64(start[0])
        for k in range(n):
            if cur < 0:
                return CONFLICT
            if q[cur, 0] != steps[k, 0] or q[cur, 2] != steps[k, 2]:
                return CONFLICT
            for j in range(steps[k, 2]):
                if lists[q[cur, 1] + j] != work[steps[k, 1] + j]:
                    return CONFLICT
            nxt = _find_edge(edges, e_hash, lists, e_first[cur], steps[k, 4], work, steps[k, 3])
            if nxt < 0:
                at = k
                break
            cur = edges[nxt, 3]
        if at == n + 1:
            return EXISTS if cur < 0 else CONFLICT
    # new nodes: steps new_from..n-1; new edges: steps at..n-1 (the first from ``cur`` when it exists)
    fresh_tree = counts[3] == 0
    new_from = at if fresh_tree else at + 1
    n_q, n_e, n_l = counts[0], counts[1], counts[2]
    want_l = 0
    for k in range(at, n):
        want_l += steps[k, 2] + max(steps[k, 4], 0)
    if n_q + n - new_from > q.shape[0] or n_e + n - at > edges.shape[0] or n_l + want_l > lists.shape[0]:
        counts[4] = n_q + n - new_from
        counts[5] = n_e + n - at
        counts[6] = n_l + want_l
        return NEED_SPACE
    if fresh_tree and n == 0:
        start[0] = ~leaf
        counts[3] = 1
        return ADDED
    for k in range(new_from, n):
        node = n_q + k - new_from
        q[node, 0] = steps[k, 0]
        q[node, 1] = n_l
        q[node, 2] = steps[k, 2]
        for j in range(steps[k, 2]):
            lists[n_l + j] = work[steps[k, 1] + j]
        n_l += steps[k, 2]
        e_first[node] = n_e + k - at
    for k in range(at, n):
        e = n_e + k - at
        a_len = steps[k, 4]
        for j in range(max(a_len, 0)):
            lists[n_l + j] = work[steps[k, 3] + j]
        h = _list_hash(work, steps[k, 3], a_len)
        edges[e, 0] = e_first[cur] if (k == at and not fresh_tree) else -1
        edges[e, 1] = n_l if a_len >= 0 else 0
        edges[e, 2] = a_len
        edges[e, 3] = n_q + k + 1 - new_from if k + 1 < n else ~leaf
        e_hash[e] = h
        n_l += max(a_len, 0)
    counts[0] = n_q + n - new_from
    counts[1] = n_e + n - at
    counts[2] = n_l
    if fresh_tree:
        start[0] = n_q
        counts[3] = 1
    else:
        e_first[cur] = n_e  # last: a reader sees the old edge list or the new one
    return ADDED


def flush_if_kernels_changed(stamp: Path | None = None) -> bool:
    """Flush the cache indexes of this file's kernels when ``leapgram/_kernels/*.py`` differ from
    the sources they were cached with (their SHA-256 in ``stamp``, by default
    ``walk_cache_probe.kernels.sha256`` beside the cache files); True when it flushed. Nothing
    to do while numba is disabled."""
    kernels = probe_kernels()
    if not kernels:
        return False
    digest = hashlib.sha256()
    for source in sorted(Path(_kernels.__file__).parent.glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    if stamp is None:
        stamp = Path(kernels[0]._cache.cache_path) / f"{Path(__file__).stem}.kernels.sha256"
    try:
        if stamp.read_text() == digest.hexdigest():
            return False
    except OSError:
        pass  # no stamp yet: the cache may predate this check
    for kernel in kernels:
        kernel._cache.flush()
    try:
        stamp.write_text(digest.hexdigest())
    except OSError:  # a read-only cache folder: numba does not write there either
        pass
    return True


def probe_kernels() -> list[Dispatcher]:
    """This file's numba kernels (none while numba is disabled)."""
    return [value for value in globals().values()
            if isinstance(value, Dispatcher) and value.py_func.__module__ == __name__]


flush_if_kernels_changed()  # before any kernel is loaded from the cache
_RECORD_KERNEL = DirectKernel(walk_record_kernel)
_REPLAY_KERNEL = DirectKernel(replay_kernel)


class WalkCache:
    """Per vocabulary: key -> list of (steps, lists, row view); bounded FIFO."""

    def __init__(self, max_keys: int = 20000, per_key: int = 256) -> None:
        self.canon: dict[tuple, int] = {}
        self.walks: dict[tuple, list] = {}
        self.lock = threading.Lock()
        self.max_keys = max_keys
        self.per_key = per_key
        self.stats = dict.fromkeys(("hit", "miss", "ineligible", "overflow", "tries", "new", "exists", "conflict",
                                    "kernel_calls", "hit_ns", "miss_ns", "inel_ns", "canon_ns", "store_ns", "key_ns",
                                    "replay_ns", "walk_ns", "would_ns", "insert_ns", "kernel_ns"), 0)

    def intern(self, key: tuple) -> int:
        found = self.canon.get(key)
        if found is None:
            with self.lock:
                found = self.canon.setdefault(key, len(self.canon))
        return found

    def expr_canon(self, pool, base: int, e: int, memo: dict) -> int:
        if e < base:
            return self.intern(("B", e))
        found = memo.get(e)
        if found is None:
            from leapgram.regex.expr import K_BYTES, K_CONCAT, K_REPEAT
            kind, args = pool.kind, pool.args
            data = bytearray()
            x = e
            while kind[x] == K_CONCAT and x >= base:  # a literal: its bytes
                head, x = args[x]
                mask = args[head][0] if kind[head] == K_BYTES else 0
                if mask & (mask - 1) or not mask:
                    break
                data.append(mask.bit_length() - 1)
            else:
                mask = args[x][0] if kind[x] == K_BYTES else 0
                if mask and not mask & (mask - 1):
                    data.append(mask.bit_length() - 1)
                    found = memo[e] = self.intern(("lit", bytes(data)))
                    return found
            k = kind[e]
            kids = tuple(self.expr_canon(pool, base, c, memo) for c in pool._children(e))
            found = memo[e] = self.intern(("S", k, args[e][0]) if k == K_BYTES else
                                          ("S", k, *kids, *args[e][1:]) if k == K_REPEAT else ("S", k, *kids))
        return found


CACHE = WalkCache()


def grammar_info(engine):
    """Per engine: (base size, canon_of_lex, lex_of_canon, ignore key, state-key memo) or None
    (no family, or two lexemes with one canonical id)."""
    info = engine.__dict__.get("_walk_info", 0)
    if info != 0:
        return info
    t0 = _clock()
    lexer = engine.lexer
    pool = lexer.pool
    family = pool.family
    info = None
    if family is not None:
        base = family.base_size
        ignore = lexer._ignore
        memo: dict = {}
        canon = [lexeme_canon(pool, base, lexeme, x in ignore, memo) for x, lexeme in enumerate(lexer.ir.lexemes)]
        if len(set(canon)) == len(canon):
            canon_of_lex = np.array(canon, dtype=np.int32)
            lex_of_canon = np.full(max(canon) + 1 if canon else 1, -1, dtype=np.int32)
            lex_of_canon[canon_of_lex] = np.arange(len(canon), dtype=np.int32)
            ignore_key = tuple(sorted(canon[x] for x in ignore))
            info = [base, canon_of_lex, lex_of_canon, ignore_key, {}, canon, {}, np.empty(64, dtype=np.int64), np.empty(256, dtype=np.int32),
                    (np.empty(4096, dtype=np.int32), np.empty((RECORD, 5), dtype=np.int32), np.empty(RECORD + 1, dtype=np.int64))]
    engine._walk_info = info
    CACHE.stats["canon_ns"] += _clock() - t0
    return info


_LEXEME_CANON: dict = {}  # (base expression, ignored) or (key name, ignored) -> (literal bytes, canonical id)


def lexeme_canon(pool, base: int, lexeme, ignored: bool, memo: dict) -> int:
    """A lexeme's canonical id: a base pool expression's from a process-wide table; a key named
    ``key:NAME`` whose expression is the literal ``"NAME"`` (looked up in the pool, so exact)
    by its bytes, also from a table; any other expression by its structure."""
    e = lexeme.expr
    if e < base:
        found = _LEXEME_CANON.get((e, ignored))
        if found is None:
            found = _LEXEME_CANON[(e, ignored)] = (None, CACHE.intern(("L", CACHE.intern(("B", e)), ignored)))
        return found[1]
    name = lexeme.name
    if name.startswith("key:"):
        found = _LEXEME_CANON.get((name, ignored))
        if found is None:
            data = json.dumps(name[4:], ensure_ascii=False).encode()
            found = _LEXEME_CANON[(name, ignored)] = (data, CACHE.intern(("L", CACHE.intern(("lit", data)), ignored)))
        if pool.memo.get(("literal", found[0])) == e:
            return found[1]
    return CACHE.intern(("L", CACHE.expr_canon(pool, base, e, memo), ignored))


def state_key(engine, info, lex: int):
    memo = info[4]
    found = memo.get(lex, 0)
    if found == 0:
        base = info[0]
        lexer = engine.lexer
        exprs = lexer._lexeme_exprs
        items = lexer.items(lex)
        found = None
        if all(e < base and exprs[x] < base for x, e in items):
            ignore = lexer._ignore
            found = (info[3], lexer.is_fresh(lex), tuple(sorted((exprs[x], e, x in ignore) for x, e in items)))
        memo[lex] = found
    return found


def _grown(array: np.ndarray, size: int, fill) -> np.ndarray:
    if size <= array.shape[0]:
        return array
    grown = np.full((max(size, 2 * array.shape[0]),) + array.shape[1:], fill, dtype=array.dtype)
    grown[:array.shape[0]] = array
    return grown


_INSERT_KERNEL = DirectKernel(insert_kernel)


class ArrayTree:
    """A key's decision tree in arrays only, filled by :func:`insert_kernel`."""

    __slots__ = ("arrays", "counts", "leaves", "lists", "packed")

    def __init__(self) -> None:
        self.arrays = (np.zeros(1, dtype=np.int32), np.zeros((16, 3), dtype=np.int32), np.full(16, -1, dtype=np.int32),
                       np.zeros((16, 4), dtype=np.int32), np.zeros(16, dtype=np.uint64))
        self.lists = np.zeros(256, dtype=np.int32)
        self.counts = np.zeros(7, dtype=np.int64)
        self.leaves: list = []
        self.packed = None

    def insert(self, engine, info, arena, chart, record, mask) -> str:
        scratch = info[9]
        while True:
            self.leaves.append(mask)
            tk = _clock()
            code = _INSERT_KERNEL.call(self.arrays, self.lists, self.counts, record, engine.lexer.kernel_arrays,
                                       arena.arrays, chart, info[1], scratch[0], scratch[1], scratch[2],
                                       len(self.leaves) - 1)
            CACHE.stats["insert_ns"] += _clock() - tk
            if code != ADDED:
                self.leaves.pop()
            if code == NEED_SPACE:
                self._grow()
                continue
            if code == ADDED:
                self.packed = (self.arrays, self.lists, int(self.counts[0]) + 2)
            return {ADDED: "new", EXISTS: "exists", CONFLICT: "conflict", OVERFLOW: "overflow"}[code]

    def _grow(self) -> None:
        start, q, e_first, edges, e_hash = self.arrays
        want_q, want_e, want_l = (int(x) for x in self.counts[4:7])
        if want_q > q.shape[0]:
            q = _grown(q, want_q, 0)
            e_first = _grown(e_first, want_q, -1)
        if want_e > edges.shape[0]:
            edges = _grown(edges, want_e, 0)
            e_hash = _grown(e_hash, want_e, 0)
        self.arrays = (start, q, e_first, edges, e_hash)
        self.lists = _grown(self.lists, want_l, 0)


def replay(engine, info, arena, chart: int, packed) -> int:
    """The leaf the tree leads to from ``chart``, or a negative number."""
    tree, lists, depth = packed
    if tree[0][0] < 0:
        return ~int(tree[0][0])
    charts_of = info[7]
    if charts_of.shape[0] < depth:
        charts_of = np.empty(2 * depth, dtype=np.int64)
        info[7] = charts_of
    scratch = info[8]
    grammar, max_row, use_leo = engine.tables.grammar, engine.limits.max_earley_items, engine.use_leo
    while True:
        tk = _clock()
        status, leaf = _REPLAY_KERNEL.call(grammar, arena.arrays, max_row, use_leo, chart, tree, lists, info[2],
                                           info[1], charts_of, scratch)
        CACHE.stats["kernel_ns"] += _clock() - tk
        CACHE.stats["kernel_calls"] += 1
        if status == OK:
            return int(leaf)
        arena.handle(status, 0)


def recording(original, engine, state, key, record):
    """``original`` (``CfgEngine.new_mask``) with the walk kernel recording the boundaries (one
    thread at a time: the direct entry is swapped while it runs)."""
    saved = engines._WALK_KERNEL.call
    record[0] = 0
    engines._WALK_KERNEL.call = lambda *args: _RECORD_KERNEL.call(*args, record)
    try:
        return original(engine, state, key)
    finally:
        engines._WALK_KERNEL.call = saved


VERIFY = [False, 0, 0]  # on, checked, differences


def patched_new_mask(original):
    record = np.zeros(3 * RECORD + 1, dtype=np.int64)

    def new_mask(self, state, key):
        stats = CACHE.stats
        t0 = _clock()
        lex = key[2]
        info = grammar_info(self) if lex != 0 else None
        skey = state_key(self, info, lex) if info is not None else None
        if skey is None:
            mask = original(self, state, key)
            stats["ineligible"] += 1
            stats["inel_ns"] += _clock() - t0
            return mask
        arena, chart, _ = state
        tree = CACHE.walks.get(skey)
        tk = _clock()
        stats["key_ns"] += tk - t0
        if tree is not None:
            stats["tries"] += 1
            leaf = replay(self, info, arena, chart, tree.packed) if tree.packed is not None else -1
            tr = _clock()
            stats["replay_ns"] += tr - tk
            if leaf >= 0:
                stats["hit"] += 1
                mask = tree.leaves[leaf].copy()
                stats["hit_ns"] += _clock() - t0
                if VERIFY[0]:
                    VERIFY[1] += 1
                    tv = _clock()
                    again = original(self, state, key)
                    stats["would_ns"] += _clock() - tv
                    VERIFY[2] += int(not np.array_equal(mask, again))
                return mask
        tw = _clock()
        mask = recording(original, self, state, key, record)
        t1 = _clock()
        stats["walk_ns"] += t1 - tw
        row = mask.copy()
        row.setflags(write=False)
        with CACHE.lock:
            tree = CACHE.walks.get(skey)
            if tree is None:
                tree = CACHE.walks[skey] = ArrayTree()
                while len(CACHE.walks) > CACHE.max_keys:
                    CACHE.walks.pop(next(iter(CACHE.walks)))
            if len(tree.leaves) < CACHE.per_key:
                stats[tree.insert(self, info, arena, chart, record, row)] += 1
        stats["store_ns"] += _clock() - t1
        stats["miss"] += 1
        stats["miss_ns"] += _clock() - t0
        return mask

    return new_mask


OLD = {"elig": 0, "elig_ns": 0, "inel": 0, "inel_ns": 0}


def timed_old(original):
    """The old new_mask, timed by whether the new one could look the state up (the test untimed)."""

    def new_mask(self, state, key):
        lex = key[2]
        info = grammar_info(self) if lex != 0 else None
        skey = state_key(self, info, lex) if info is not None else None
        t0 = _clock()
        mask = original(self, state, key)
        kind = "inel" if skey is None else "elig"
        OLD[kind] += 1
        OLD[kind + "_ns"] += _clock() - t0
        return mask

    return new_mask


def run_chunk(cases, engine, new_mask=None) -> tuple[float, int]:
    """Sum of TBM thread CPU (µs) and masks over the valid instances of ``cases``, with
    ``CfgEngine.new_mask`` replaced by ``new_mask`` meanwhile."""
    saved = CfgEngine.new_mask
    CfgEngine.new_mask = new_mask or saved
    try:
        tbm = run(cases, engine)[1]
    finally:
        CfgEngine.new_mask = saved
    return sum(tbm), len(tbm)


def alternate(cases, engine, pairs: int, old, new) -> list[tuple[float, int, float, int]]:
    """``(old µs, old masks, new µs, new masks)`` per pair of disjoint chunks, the order
    alternating from pair to pair."""
    size = len(cases) // (2 * pairs)
    got = []
    for p in range(pairs):
        chunk_old = cases[2 * p * size:(2 * p + 1) * size]
        chunk_new = cases[(2 * p + 1) * size:(2 * p + 2) * size]
        if p % 2 == 0:
            t_old, m_old = run_chunk(chunk_old, engine, old)
            t_new, m_new = run_chunk(chunk_new, engine, new)
        else:
            t_new, m_new = run_chunk(chunk_new, engine, new)
            t_old, m_old = run_chunk(chunk_old, engine, old)
        got.append((t_old, m_old, t_new, m_new))
        print(f"pair {p}: old {t_old / max(m_old, 1):.1f} µs/mask ({m_old}), new {t_new / max(m_new, 1):.1f} ({m_new}),"
              f" new/old {t_new / max(m_new, 1) / (t_old / max(m_old, 1)):.3f}", flush=True)
    return got


def report(got, verify: bool) -> None:
    """Print the ratios and the cache's counts and costs."""
    ratios = [t_new / max(m_new, 1) / (t_old / max(m_old, 1)) for t_old, m_old, t_new, m_new in got]
    sums = [sum(column) for column in zip(*got)]
    print("ratios median", round(statistics.median(ratios), 3), "min", round(min(ratios), 3), "max",
          round(max(ratios), 3), "; sums new/old per mask", round(sums[2] / sums[3] / (sums[0] / sums[1]), 3))
    s = CACHE.stats
    hits, misses, inel = s["hit"], s["miss"], s["ineligible"]
    print(f"old: eligible {OLD['elig']} at {OLD['elig_ns'] / max(OLD['elig'], 1) / 1e3:.1f} µs, ineligible"
          f" {OLD['inel']} at {OLD['inel_ns'] / max(OLD['inel'], 1) / 1e3:.1f} µs")
    print(f"hits {hits} misses {misses} ineligible {inel} overflow {s['overflow']} tries {s['tries']}")
    print(f"mean µs: hit {s['hit_ns'] / max(hits, 1) / 1e3:.1f}, miss {s['miss_ns'] / max(misses, 1) / 1e3:.1f}"
          f" (store {s['store_ns'] / max(misses, 1) / 1e3:.1f}; new {s['new']} exists {s['exists']}"
          f" conflict {s['conflict']}), ineligible {s['inel_ns'] / max(inel, 1) / 1e3:.1f},"
          f" canon per grammar total ms {s['canon_ns'] / 1e6:.1f}")
    print(f"per lookup µs: key {s['key_ns'] / max(hits + misses, 1) / 1e3:.1f},"
          f" replay {s['replay_ns'] / max(s['tries'], 1) / 1e3:.1f}; per miss: insert kernel"
          f" {s['insert_ns'] / max(misses, 1) / 1e3:.1f}, recording walk {s['walk_ns'] / max(misses, 1) / 1e3:.1f}")
    print(f"replay kernel call alone {s['kernel_ns'] / max(s['kernel_calls'], 1) / 1e3:.1f} µs ({s['kernel_calls']} calls)")
    print(f"keys {len(CACHE.walks)} leaves {sum(len(t.leaves) for t in CACHE.walks.values())} nodes"
          f" {sum(int(t.counts[0]) for t in CACHE.walks.values())} canon ids {len(CACHE.canon)}")
    if verify:
        print(f"verified {VERIFY[1]} differences {VERIFY[2]}; the hits computed cost"
              f" {s['would_ns'] / max(hits, 1) / 1e3:.1f} µs")


def _no_clock() -> int:
    return 0


def name_at_compile(engine, patched) -> None:
    """Make each grammar's canonical lexeme ids right after its compile while the cache is on."""
    compile_schema = engine.compile

    def compile_and_name(schema):
        compiled = compile_schema(schema)
        if CfgEngine.new_mask is patched and hasattr(compiled._engine, "lexer"):
            grammar_info(compiled._engine)
        return compiled

    engine.compile = compile_and_name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder")
    parser.add_argument("--tokenizer", default="llama3")
    parser.add_argument("--sample", type=int, default=200)
    parser.add_argument("--pairs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--verify", action="store_true", help="compute each hit's mask too and compare")
    parser.add_argument("--warm", type=int, default=0, help="cases run through the cache first, untimed")
    parser.add_argument("--lean", action="store_true", help="no timers inside new_mask (counts only)")
    parser.add_argument("--ids-at-compile", action="store_true",
                        help="the canonical lexeme ids made after each compile (in TTFM, as a front end would)")
    args = parser.parse_args()
    drift = kernel_drift()
    if drift:
        print(f"warning: {drift}", file=sys.stderr)
    if args.lean:
        global _clock
        _clock = _no_clock
    from bench_schemas import LeapgramEngine, load_cases, resolve_tokenizer

    tokenizer = resolve_tokenizer(args.tokenizer)
    cases = load_cases(Path(args.folder), tokenizer, None, args.sample)
    random.Random(args.seed).shuffle(cases)
    engine = LeapgramEngine(tokenizer)
    gc.freeze()
    original = CfgEngine.new_mask
    patched = patched_new_mask(original)
    VERIFY[0] = args.verify
    if args.ids_at_compile:
        name_at_compile(engine, patched)
    run_chunk(cases[-4:], engine, patched)  # compiles the kernels, untimed
    run_chunk(cases[:args.warm], engine, patched)
    cases = cases[args.warm:-4]
    for name in CACHE.stats:
        CACHE.stats[name] = 0
    old = original if args.lean else timed_old(original)  # (the classification costs inside the fill)
    report(alternate(cases, engine, args.pairs, old, patched), args.verify)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
