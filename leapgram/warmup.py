"""``warm_up()``: load every compiled kernel, and a vocabulary's tables, before the first request.

A fresh process otherwise pays inside its first request what a server should pay at start-up:
numba loading the kernels from its on-disk cache (``cache=True``; ``import leapgram`` starts a
thread that loads most of them, see :func:`leapgram._kernels.start_loading_cached_kernels`; the
first run of an installation compiles them instead, about a minute), the JSON Schema front end's
base pools of regexes (:mod:`leapgram.pool_cache`), and, per vocabulary,
the token trie and the slices of the slicer (both read from the on-disk cache,
:mod:`leapgram.vocab.cache`, after the first run). With
Llama-3 it took 0.64-0.95 s on a loaded 2-core machine in round 14 (1.2-1.5 s before the kernels
skipped numba's refresh and the trie was built with numpy); in round 15, with the vocabulary
cache, 0.44-0.77 s at load 5-5.5. Measured costs are in ``docs/design/warm-up.md``.
"""

from __future__ import annotations

import itertools
import time

# Grammars that together reach every kernel: a regex (trie walk), a JSON Schema (Earley charts,
# the CFG walk, scans, boundaries, table growth) and a Lark grammar with an ignored lexeme.
_REGEX = r'\{"a": [0-9]+\}'
_SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                                            "c": {"type": "array", "items": {"enum": ["x", "yz"]}},
                                            "d": {"type": "string"}},
           "required": ["a", "b"]}
# a second string: its first mask is walked from the lexeme walk the first one made (CfgEngine._lexeme_walk)
_INSTANCE = b'{"a": 12, "b": "hi \\" there", "c": ["x", "yz"], "d": "ok"}'
_LARK = 'start: item ("," item)*\nitem: NAME | NUMBER\nNAME: /[a-z]+/\nNUMBER: /[0-9]+/\n%ignore " "\n'
_LARK_TEXT = b"ab, 12,c"


def warm_up(vocab=None) -> dict[str, float]:
    """Load every kernel leapgram runs, then, given ``vocab``, build what is kept per vocabulary
    (its trie, slices and the JSON Schema base pool) by compiling three small grammars over it
    and walking an instance of each. Without ``vocab`` the grammars are walked over the 256-byte
    vocabulary instead: that loads the kernels too (with ``vocab`` its walk does).

    Returns the seconds each part took (``kernels``, ``vocabulary``). Safe to call more than
    once and from any thread; later calls cost a few milliseconds.

    A server may then call ``gc.freeze()`` (its choice: leapgram never freezes): Python's full
    collections stop scanning what start-up loaded, about 55,000 objects with numba, which made
    each one cost 35-50 ms (more than a mask) in a process with Llama-3's vocabulary; right
    after the freeze one costs under 1 ms."""
    from ._kernels import wait_for_kernels
    from .frontends.json_schema.common import base_pool
    from .limits import DEFAULT_LIMITS
    from .vocab import Vocabulary

    timings = {}
    start = time.perf_counter()
    wait_for_kernels()
    if vocab is None:
        _walk_all(Vocabulary.byte_vocabulary())
    _rehash_a_table()
    base_pool(DEFAULT_LIMITS, formats=True)  # else made in the first schema with a format (read: 7 ms; built: 0.09 s)
    timings["kernels"] = time.perf_counter() - start
    if vocab is not None:
        start = time.perf_counter()
        _walk_all(vocab)
        timings["vocabulary"] = time.perf_counter() - start
    return timings


def _rehash_a_table() -> None:
    """Run the arena's table growth once (``table_rehash_kernel``): the small grammars never
    fill a table past half load, so on an installation whose kernels are not compiled yet a long
    process's first rehash compiled it inside a mask (170 ms, round 24's 480-case run)."""
    from .parser.arena import rehash_a_small_table

    rehash_a_small_table()


def _walk_all(vocab) -> None:
    from .compiler import GrammarCompiler
    from .grammars import Grammar

    compiler = GrammarCompiler(vocab, cache_size=0)
    texts = (b'{"a": 12}', _INSTANCE, _LARK_TEXT)
    ids = _token_ids(vocab, texts)
    for grammar, text in zip((Grammar.from_regex(_REGEX), Grammar.from_json_schema(_SCHEMA), Grammar.from_lark(_LARK)),
                             texts):
        _walk(compiler.compile(grammar), vocab, _greedy_tokens(ids, text))


def _walk(compiled, vocab, tokens: list[int]) -> None:
    """Masks along ``tokens``, then at their end."""
    from .bitmask import allocate_token_bitmask
    from .matcher import Matcher

    matcher = Matcher(compiled)
    bitmask = allocate_token_bitmask(1, vocab.size)
    for token in tokens:
        matcher.fill_next_token_bitmask(bitmask, 0)
        if not matcher.consume_token(token):
            break
    matcher.fill_next_token_bitmask(bitmask, 0)


def _token_ids(vocab, texts) -> dict[bytes, int]:
    """The first id of each ordinary token of ``vocab`` that is one to 8 bytes of some text in
    ``texts``: one pass over the vocabulary for all of them, testing each token against the set of
    those substrings (a set lookup at C speed; testing ``token in text`` per token and text took
    about 20 ms per text with Llama-3)."""
    wanted = {text[at:at + size] for text in texts for at in range(len(text)) for size in range(1, 9)}
    special = vocab.special_token_ids
    tokens = vocab.tokens()
    ids: dict[bytes, int] = {}
    for token_id in itertools.compress(itertools.count(), map(wanted.__contains__, tokens)):
        if token_id not in special:
            ids.setdefault(tokens[token_id], token_id)
    return ids


def _greedy_tokens(ids: dict[bytes, int], text: bytes) -> list[int]:
    """``text`` as its longest tokens from the left (no tokenizer is loaded), up to the first byte
    that starts no token of ``ids`` (:func:`_token_ids` of a tuple of texts holding ``text``)."""
    tokens, at = [], 0
    while at < len(text):
        length = next((n for n in range(min(8, len(text) - at), 0, -1) if text[at:at + n] in ids), 0)
        if not length:
            break
        tokens.append(ids[text[at:at + length]])
        at += length
    return tokens
