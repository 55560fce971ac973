"""The slicer: skip walking parts of the trie that are known to be allowed wholesale.

Masks are either small (cheap: the walk skips dead subtrees) or nearly full, and nearly full masks
come from unconstrained stretches such as the body of a string. A *slice* is a class of tokens
defined by a regex ``Y{1,n}`` with ``Y`` one character class (by default the JSON string
characters ``[^"\\\\\\x00-\\x1F\\x7F]`` up to 10, up to 30 and any number of times). Each token
belongs to the first slice whose regex it is a prefix of (``P(Y{1,n})``), or to the rest.

At a lexer state ``L``, a slice's tokens are all allowed when ``Y{1,n} ⊆ P(L)`` (every string of
the slice can be continued into ``L``). Then its precomputed mask is OR-ed in and its trie is not
walked. The check is the under-approximation of ``docs/design/slicer.md``: some alternative of
``L`` has the form ``X{m,k} T`` with ``Y ⊆ X`` (decided exactly by a search over pairs of
derivatives, :meth:`ExprPool.is_subset`) and ``n <= k``.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import BudgetExceededError
from ..regex.dfa import LazyDfa
from ..regex.expr import EPSILON, INF, K_AND, K_CONCAT, K_NOT, K_OR, K_REPEAT, ExprPool
from ..regex.syntax import parse_regex
from ..regex.utf8 import Ranges, class_within
from ..vocab.cache import read_derived, trie_arrays_ok, write_derived
from ..vocab.trie import TokenTrie, pack_node_info
from ..vocab.vocabulary import Vocabulary
from .walk import fill_dfa_mask

JSON_STRING_CHAR = r'[^"\\\x00-\x1F\x7F]'
# the code the slices depend on (their key in the on-disk vocabulary cache)
_SOURCES = (__file__, str(Path(__file__).with_name("walk.py")), str(Path(__file__).parents[1] / "regex"),
            str(Path(__file__).parents[1] / "_kernels" / "trie_walk.py"))
DEFAULT_SLICES: tuple[tuple[str, int], ...] = ((JSON_STRING_CHAR, 10), (JSON_STRING_CHAR, 30), (JSON_STRING_CHAR, INF))


@dataclass(frozen=True)
class Slice:
    """The tokens of one slice: ``char_regex`` repeated 1 to ``max_count`` times (INF: unbounded)."""

    char_regex: str
    max_count: int
    mask: np.ndarray
    trie: TokenTrie

    @property
    def longest(self) -> int:
        """A bound on the characters of ``char_regex`` in any of its tokens: ``max_count``, or
        the longest token in bytes if shorter (each character takes a byte at least). The check
        may use it for ``n``: every token of the slice is a prefix of ``Y{1,longest}``."""
        depth = self.trie.max_depth
        return depth if self.max_count == INF else min(self.max_count, depth)


def _stored_ok(stored: dict[str, np.ndarray], count: int, vocab_size: int) -> bool:
    """Whether the cache's arrays make ``count`` slices and the rest: masks of the vocabulary's
    words and tries the kernels can walk (else the slices are computed again)."""
    words = (vocab_size + 31) // 32
    masks = [stored.get(f"{k}.mask") for k in range(count)]
    return (all(m is not None and m.shape == (words,) and m.dtype == np.uint32 for m in masks)
            and all(trie_arrays_ok(stored, vocab_size, f"{k}.") for k in range(count))
            and trie_arrays_ok(stored, vocab_size, "rest."))


class SlicedVocabulary:
    """A vocabulary split into slices plus the rest, each with its own trie and mask."""

    def __init__(self, vocab: Vocabulary, full_trie: TokenTrie,
                 definitions: tuple[tuple[str, int], ...] = DEFAULT_SLICES) -> None:
        self._actual: dict[tuple[SliceClass, ...], tuple[SliceClass, ...]] = {}
        stored = read_derived(vocab, repr(definitions), _SOURCES)  # the on-disk vocabulary cache
        if stored is not None and _stored_ok(stored, len(definitions), vocab.size):
            self.slices = tuple(Slice(c, n, stored[f"{k}.mask"], TokenTrie.from_arrays(vocab.size, stored, f"{k}."))
                                for k, (c, n) in enumerate(definitions))
            self.rest = TokenTrie.from_arrays(vocab.size, stored, "rest.")
            return
        words = (vocab.size + 31) // 32
        claimed = np.zeros(words, dtype=np.uint32)
        slices = []
        for char_regex, max_count in definitions:
            members = _prefix_mask(full_trie, char_regex, max_count, words) & ~claimed
            claimed |= members
            slices.append(Slice(char_regex, max_count, members, sub_trie(full_trie, members)))
        self.slices = tuple(slices)
        self.rest = sub_trie(full_trie, ~claimed)
        arrays = self.rest.arrays("rest.")
        for k, slice_ in enumerate(slices):
            arrays.update(slice_.trie.arrays(f"{k}."), **{f"{k}.mask": slice_.mask})
        write_derived(vocab, repr(definitions), _SOURCES, arrays)

    def actual_classes(self, declared: tuple[SliceClass, ...]) -> tuple[SliceClass, ...]:
        """``declared`` (one class per slice) with the bounds of the actual tokens
        (:attr:`Slice.longest`), made once per vocabulary: the same tuple for every grammar."""
        found = self._actual.get(declared)
        if found is None:
            found = tuple(dataclasses.replace(c, max_count=s.longest) for c, s in zip(declared, self.slices))
            found = self._actual.setdefault(declared, found)
        return found


def sub_trie(full: TokenTrie, members: np.ndarray) -> TokenTrie:
    """The trie of the tokens of ``full`` whose bit is set in ``members`` (packed uint32 words),
    cut out of ``full``'s arrays: the same arrays ``TokenTrie(vocab, those ids)`` builds (tokens
    with equal bytes are all members or none, as ``members`` is a set of byte strings), without
    sorting and walking the tokens in Python again (a slice of Llama-3: 0.4 s -> a few ms)."""
    bits = np.unpackbits(members.view(np.uint8), bitorder="little").astype(bool)
    token = full.node_token
    is_member = np.zeros(token.shape[0], dtype=bool)
    has_token = token >= 0
    is_member[has_token] = bits[token[has_token]]
    below = np.concatenate(([0], np.cumsum(is_member)))
    keep = below[full.node_end] - below[:-1] > 0
    keep[0] = True
    before = np.concatenate(([0], np.cumsum(keep)))
    trie = object.__new__(TokenTrie)
    trie.vocab_size = full.vocab_size
    trie.node_byte = full.node_byte[keep]
    trie.node_depth = full.node_depth[keep]
    trie.node_token = np.where(is_member, token, -1)[keep].astype(np.int32)
    trie.node_end = before[full.node_end[keep]].astype(np.int32)
    dups = bits[full.dup_primary] if full.dup_primary.shape[0] else np.zeros(0, dtype=bool)
    trie.dup_primary = full.dup_primary[dups]
    trie.dup_other = full.dup_other[dups]
    trie.max_depth = int(trie.node_depth.max())
    trie.node_info = pack_node_info(trie.node_byte, trie.node_depth, trie.node_token)
    return trie


def _prefix_mask(trie: TokenTrie, char_regex: str, max_count: int, words: int) -> np.ndarray:
    pool = ExprPool()
    dfa = LazyDfa(pool, pool.repeat(parse_regex(char_regex, pool), 1, max_count))
    mask = np.zeros(words, dtype=np.uint32)
    fill_dfa_mask(trie, dfa, dfa.initial, mask, np.zeros(trie.max_depth + 1, dtype=np.int32))
    return mask


@dataclass(frozen=True)
class SliceClass:
    """What the containment check needs of one slice: ``Y`` as code points, the bytes that can
    start it, and the largest repeat count ``n``."""

    char: Ranges
    first_bytes: int
    max_count: int


def contained_slices(pool: ExprPool, state_expr: int, slices: tuple[SliceClass, ...], *,
                     unbounded_only: bool = False, memo: dict[int, tuple[bool, ...]] | None = None) -> tuple[bool, ...]:
    """For each slice ``Y{1,n}``, whether it is contained in the prefixes of ``state_expr``
    (under-approximated: see the module docstring). ``unbounded_only``: count only alternatives
    ``X{m,∞} T``. ``Y ⊆ X`` is remembered in the pool's memo (:func:`class_within`): the states of
    one string share their ``X``, and schemas share the JSON string character's. ``memo``: the
    answers with ``unbounded_only`` per expression for these ``slices``, which
    :func:`_contained_in_intersection` reads and adds to (see :class:`SliceChecker`)."""
    found = [False] * len(slices)
    starts = pool.first_bytes(state_expr)
    if all(slice_.first_bytes & ~starts for slice_ in slices):
        return tuple(found)
    alternatives = pool.args[state_expr] if pool.kind[state_expr] == K_OR else (state_expr,)
    for alt in alternatives:
        if pool.kind[alt] == K_AND:
            found = [a or b for a, b in zip(found, _contained_in_intersection(pool, alt, slices, memo))]
            continue
        head, tail = pool.args[alt] if pool.kind[alt] == K_CONCAT else (alt, None)
        if pool.kind[head] == K_AND and not unbounded_only:  # a string's content under a pattern,
            if _is_empty(pool, tail):  # then its closing quote: prefixes of the content are the
                continue  # state's prefixes
            found = [a or b for a, b in zip(found, _contained_in_intersection(pool, head, slices))]
            continue
        if pool.kind[head] != K_REPEAT:
            continue
        inner, _, high = pool.args[head]
        if unbounded_only and high != INF:
            continue
        starts = pool.first_bytes(inner)
        for k, slice_ in enumerate(slices):
            if found[k] or slice_.first_bytes & ~starts:
                continue
            if high != INF and (slice_.max_count == INF or slice_.max_count > high):
                continue
            found[k] = _is_char_subset(pool, slice_.char, inner, alt, tail)
    return tuple(found)


def _contained_in_intersection(pool: ExprPool, e: int, slices: tuple[SliceClass, ...],
                               memo: dict[int, tuple[bool, ...]] | None = None) -> tuple[bool, ...]:
    """``A ∩ ¬F1 ∩ ...`` with every ``Fi`` finite (a JSON key that is none of the declared
    names): a slice contained in ``A`` through an unbounded ``X{m,∞} T`` continues in infinitely
    many ways, only finitely many of which are in the ``Fi``, so it is contained in ``e`` too.
    ``A``'s answer is kept in ``memo`` (see :func:`contained_slices`): every state along the names
    of every key of a grammar has the same ``A``, the rest of a JSON string."""
    parts = pool.args[e]
    positives = [p for p in parts if pool.kind[p] != K_NOT]
    negatives = [pool.args[p][0] for p in parts if pool.kind[p] == K_NOT]
    if not positives or not all(pool.is_finite(f) for f in negatives):
        return (False,) * len(slices)
    if len(positives) == 1:
        return contained_minus_finite(pool, positives[0], slices, memo)
    return _contained_in_heads(pool, e, positives, negatives, slices)


def contained_minus_finite(pool: ExprPool, a: int, slices: tuple[SliceClass, ...],
                           memo: dict[int, tuple[bool, ...]] | None = None) -> tuple[bool, ...]:
    """For each slice, whether it is contained in the prefixes of ``A ∩ ¬F`` for every finite
    ``F`` (see :func:`_contained_in_intersection`), from ``A`` alone: a lexer item ``A`` with a
    shadow (``Lexer.slice_exprs``) asks this. ``memo`` as :func:`contained_slices` says."""
    if memo is None:
        return contained_slices(pool, a, slices, unbounded_only=True)
    found = memo.get(a)
    if found is None:
        found = memo[a] = contained_slices(pool, a, slices, unbounded_only=True)
    return found


def _contained_in_heads(pool: ExprPool, e: int, positives: list[int], negatives: list[int],
                        slices: tuple[SliceClass, ...]) -> tuple[bool, ...]:
    """``P1 ∩ P2 ∩ ... ∩ ¬F1 ∩ ...`` (a JSON key that must also match a pattern, a string that
    must contain some character), each ``Pi`` a union that includes alternatives ``X{m,∞} T``
    with ``Y ⊆ X``. Keep only those alternatives, ``Pi'``; when ``P1' ∩ P2' ∩ ... ∩ ¬F1 ∩ ...``
    is not empty, take ``t`` in it: each string ``w`` of the slice continues as ``w y^r t``
    (``y`` in ``Y``) inside every ``Pi'``, for every ``r``, and only finitely many of those are
    in the finite ``Fi``, so ``w`` is a prefix of ``e``."""
    found = []
    decided: dict[tuple[Ranges, int], bool] = {}  # the default slices share their character
    for slice_ in slices:
        key = (slice_.char, slice_.max_count)  # a bounded head depends on the count too
        inside = decided.get(key)
        if inside is None:
            inside = decided[key] = _heads_contain(pool, e, positives, negatives, slice_)
        found.append(inside)
    return tuple(found)


def _heads_contain(pool: ExprPool, e: int, positives: list[int], negatives: list[int], slice_: SliceClass) -> bool:
    """Also with a bounded head ``X{m,k} T`` (a ``maxLength`` beside a pattern) when there is no
    ``Fi`` and ``k - n >= m`` for the slice's ``n``: that alternative is kept as ``X{m,k-n} T``,
    and with ``t`` in the intersection, ``w t`` is in ``X{m,k} T`` (``w`` adds at most ``n``
    characters of ``X`` to the head) and in every other kept alternative (``r = 0`` above)."""
    kept = []
    dropped = False
    for positive in positives:
        alternatives = pool.args[positive] if pool.kind[positive] == K_OR else (positive,)
        good = []
        for alt in alternatives:
            shape = _counted_head(pool, alt)
            if (shape is None or slice_.first_bytes & ~pool.first_bytes(shape[0])
                    or not class_within(pool, slice_.char, shape[0])):
                continue
            inner, low, high, tail = shape
            if high == INF:
                good.append(alt)
            elif not negatives and slice_.max_count != INF and high - slice_.max_count >= low:
                good.append(pool.concat(pool.repeat(inner, low, high - slice_.max_count), tail))
                dropped = True
        if not good:
            return False
        dropped = dropped or len(good) < len(alternatives)
        kept.append(pool.alt(good))
    if dropped:
        e = pool.intersect([*kept, *(pool.complement(f) for f in negatives)])
    try:
        return not pool.is_empty(e)
    except BudgetExceededError:
        return False


def _counted_head(pool: ExprPool, e: int) -> tuple[int, int, int, int] | None:
    """``(X, m, k, T)`` when ``e`` is ``X{m,k} T`` (``T`` is ε for ``X{m,k}``), else ``None``."""
    head, tail = pool.args[e] if pool.kind[e] == K_CONCAT else (e, EPSILON)
    if pool.kind[head] != K_REPEAT:
        return None
    inner, low, high = pool.args[head]
    return inner, low, high, tail


def _is_empty(pool: ExprPool, e: int) -> bool:
    """``pool.is_empty``, taking an exhausted budget as empty (the slice is then not contained)."""
    try:
        return pool.is_empty(e)
    except BudgetExceededError:
        return True


def _is_char_subset(pool: ExprPool, char: Ranges, inner: int, alt: int, tail: int | None) -> bool:
    try:
        if pool.is_empty(alt) or (tail is not None and pool.is_empty(tail)):
            return False
    except BudgetExceededError:
        return False
    return class_within(pool, char, inner)


class SliceChecker:
    """Per compiled grammar: which slices are contained at which lexer state (cached per state).

    ``exprs_of(state)`` gives the expressions still alive in a lexer state (``~A`` for ``A`` minus
    some finite language, see ``Lexer.slice_exprs``); a slice is contained when it is contained
    in the prefixes of any of them (every byte of its tokens then keeps that lexeme alive). The sliced vocabulary is built (once per vocabulary, by ``get_sliced``) only
    when some state first contains a slice, so grammars that never allow one never pay for it.
    """

    def __init__(self, pool: ExprPool, exprs_of: Callable[[int], tuple[int, ...]],
                 get_sliced: Callable[[], SlicedVocabulary],
                 definitions: tuple[tuple[str, int], ...] = DEFAULT_SLICES) -> None:
        self.pool = pool
        self.exprs_of = exprs_of
        self.get_sliced = get_sliced
        self.slices = tuple(slice_class(char_regex, count) for char_regex, count in definitions)
        self.probe_bytes = probe_bytes(self.slices)
        self._actual: tuple[SliceClass, ...] | None = None  # bounds from the built slices
        self._contained: dict[int, tuple[bool, ...]] = {}
        self._classes_ids: dict[int, int] = {}  # id(classes) -> its number in _CLASSES_IDS
        self._by_expr: dict[tuple[int, bool], tuple[bool, ...]] = {}  # per expression: at most 2 × pool size
        self._unbounded: tuple[dict[int, tuple[bool, ...]], ...] = ({}, {})  # contained_slices' memo, by the same flag
        self._unions: dict[tuple[bool, ...], np.ndarray] = {}  # OR of the contained slices' masks
        self._splits: dict[int, tuple[np.ndarray | None, tuple[TokenTrie, ...]]] = {}
        self._whole: tuple[None, tuple[TokenTrie]] | None = None  # the one split with no slice contained

    def contained(self, state: int) -> tuple[bool, ...]:
        """For each slice, whether all its tokens are allowed at ``state``.

        Until the sliced vocabulary exists the declared bounds are used; once some slice is
        contained (so the slices are needed anyway), the bounds of the actual tokens
        (:attr:`Slice.longest`): a string of at most 500 characters then contains the unbounded
        slice too when no token is longer than 128 bytes."""
        found = self._contained.get(state)
        if found is None:
            with self.pool.lock:
                found = self._none_by_first_bytes(state) or self._decide(state, self._actual or self.slices)
                if self._actual is None and any(found):
                    self._actual = self.get_sliced().actual_classes(self.slices)
                    if not all(found):
                        found = self._decide(state, self._actual)
            self._contained[state] = found
        return found

    def _none_by_first_bytes(self, state: int) -> tuple[bool, ...] | None:
        """All ``False`` when no slice's first bytes all start some expression of ``state`` (a
        key or enum literal, a closing quote: most states a walk meets), which is the first test
        :func:`contained_slices` makes for each expression; else ``None`` (decide in full)."""
        first_bytes = self.pool.first_bytes
        starts = 0
        for expr in self.exprs_of(state):
            starts |= first_bytes(expr if expr >= 0 else ~expr)
        classes = self._actual or self.slices
        for slice_ in classes:
            if not slice_.first_bytes & ~starts:
                return None
        return (False,) * len(classes)

    def _decide(self, state: int, classes: tuple[SliceClass, ...]) -> tuple[bool, ...]:
        """The answer for the expressions alive in ``state``, from the pool family's memo when
        they are all family expressions: the same lexemes' states (a JSON string's content,
        whitespace) in every grammar of the family are then decided once per process. Sharing
        is exact: an answer depends on the expressions and the slice classes only, and a check
        that ran out of budget answers "not contained", which is always safe."""
        exprs = self.exprs_of(state)
        family = self.pool.family
        if not exprs or family is None or max(max(exprs), ~min(exprs)) >= family.size:  # (~A for A)
            return self._decide_exprs(exprs, classes)
        classes_id = self._classes_ids.get(id(classes))  # classes is self.slices or self._actual
        if classes_id is None:
            classes_id = self._classes_ids[id(classes)] = _classes_id(classes)
        key = ("slices contained", exprs, classes_id)  # an int: no hash of the classes' ranges
        found = family.memo.get(key)
        if found is None:
            found = family.memo[key] = self._decide_exprs(exprs, classes)
        return found

    def _decide_exprs(self, exprs: tuple[int, ...], classes: tuple[SliceClass, ...]) -> tuple[bool, ...]:
        """The OR of the answers for ``exprs``, the last first: an object's other keys come
        after its names, and once every slice is contained the rest are not asked."""
        found = (False,) * len(classes)
        by_expr = self._by_expr
        flag = classes is self._actual
        memo = self._unbounded[flag]
        for expr in reversed(exprs):
            key = (expr, flag)  # an expression is in many states (a key's pattern)
            here = by_expr.get(key)
            if here is None:
                here = by_expr[key] = contained_slices(self.pool, expr, classes, memo=memo) if expr >= 0 \
                    else contained_minus_finite(self.pool, ~expr, classes, memo)
            if any(here):
                found = tuple(a or b for a, b in zip(found, here))
                if all(found):
                    break
        return found

    def split(self, state: int, full_trie: TokenTrie) -> tuple[np.ndarray | None, tuple[TokenTrie, ...]]:
        """How to fill the mask of ``state``: the OR of the masks of the slices contained there
        (``None`` when no slice is) and the tries left to walk (those of the other slices and of
        the rest; with no slice contained, ``full_trie``, which must be the same at every call:
        the split is cached per state)."""
        found = self._splits.get(state)
        if found is None:
            contained = self.contained(state)
            if not any(contained):  # one tuple for all such states (fewer objects for the GC to track)
                found = self._whole
                if found is None or found[1][0] is not full_trie:
                    found = self._whole = (None, (full_trie,))
            else:
                sliced = self.get_sliced()
                union = self._unions.get(contained)
                if union is None:
                    union = np.zeros(sliced.slices[0].mask.shape, dtype=np.uint32)
                    for slice_, inside in zip(sliced.slices, contained):
                        if inside:
                            union |= slice_.mask
                    union.flags.writeable = False
                    self._unions[contained] = union
                tries = tuple(slice_.trie for slice_, inside in zip(sliced.slices, contained) if not inside)
                found = (union, (*tries, sliced.rest))
            self._splits[state] = found
        return found


_PROBE_ORDER = b"Q%"  # bytes JSON's punctuation, numbers, literals and whitespace never start


@functools.lru_cache(maxsize=64)
def probe_bytes(classes: tuple[SliceClass, ...]) -> tuple[int, int] | None:
    """Two bytes that every slice's characters can start with (those of ``_PROBE_ORDER`` there
    first), or ``None`` when no byte does: a lexer state whose row is dead on either contains no
    slice, since ``Y{1,n} ⊆ P(L)`` needs every first byte of ``Y`` to continue ``L``. The row
    test costs two reads where :meth:`SliceChecker.split` decides a new state in Python (most
    states a walk starts from are inside a key, after punctuation or in a number)."""
    common = (1 << 256) - 1
    for slice_ in classes:
        common &= slice_.first_bytes
    if not common:
        return None
    found = [byte for byte in _PROBE_ORDER if common >> byte & 1]
    found += [byte for byte in range(256) if common >> byte & 1 and byte not in found]
    return found[0], found[min(1, len(found) - 1)]  # (made once per classes: the same tuple for every grammar)


_CLASSES_IDS: dict[tuple[SliceClass, ...], int] = {}  # a small number per tuple of slice classes
_CLASSES_LOCK = threading.Lock()


def _classes_id(classes: tuple[SliceClass, ...]) -> int:
    with _CLASSES_LOCK:
        return _CLASSES_IDS.setdefault(classes, len(_CLASSES_IDS))


@functools.lru_cache(maxsize=64)
def slice_class(char_regex: str, max_count: int) -> SliceClass:
    """The :class:`SliceClass` of ``char_regex{1,max_count}``; ``char_regex`` must be one
    character class such as ``[^"\\\\]``."""
    pool = ExprPool()
    expr = parse_regex(char_regex, pool)
    ranges = pool.char_ranges.get(expr)
    if ranges is None:
        raise ValueError(f"slice regex {char_regex!r} is not a single character class")
    return SliceClass(ranges, pool.first_bytes(expr), max_count)
