"""``warm_up()``: load every compiled kernel, and a vocabulary's tables, before the first request.

A fresh process otherwise pays inside its first request what a server should pay at start-up:
numba loading the kernels from its on-disk cache (``cache=True``; ``import leapgram`` starts a
thread that loads most of them, see :func:`leapgram._kernels.start_loading_cached_kernels`; the
first run of an installation compiles them instead, about a minute), the JSON Schema front end's
base pool of regexes, and, per vocabulary, the token trie and the slices of the slicer (read
from the on-disk vocabulary cache, :mod:`leapgram.vocab.cache`, after the first run). With
Llama-3 it took 0.64-0.95 s on a loaded 2-core machine in round 14 (1.2-1.5 s before the kernels
skipped numba's refresh and the trie was built with numpy); in round 15, with the vocabulary
cache, 0.44-0.77 s at load 5-5.5. Measured costs are in ``docs/design/warm-up.md``.
"""

from __future__ import annotations

import time

# Grammars that together reach every kernel: a regex (trie walk), a JSON Schema (Earley charts,
# the CFG walk, scans, boundaries, table growth) and a Lark grammar with an ignored lexeme.
_REGEX = r'\{"a": [0-9]+\}'
_SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"},
                                            "c": {"type": "array", "items": {"enum": ["x", "yz"]}}},
           "required": ["a", "b"]}
_INSTANCE = b'{"a": 12, "b": "hi \\" there", "c": ["x", "yz"]}'
_LARK = 'start: item ("," item)*\nitem: NAME | NUMBER\nNAME: /[a-z]+/\nNUMBER: /[0-9]+/\n%ignore " "\n'
_LARK_TEXT = b"ab, 12,c"


def warm_up(vocab=None) -> dict[str, float]:
    """Load every kernel leapgram runs (with a 256-byte vocabulary), then, given ``vocab``,
    build what is kept per vocabulary (its trie, slices and the JSON Schema base pool) by
    compiling a small schema over it and walking an instance.

    Returns the seconds each part took (``kernels``, ``vocabulary``). Safe to call more than
    once and from any thread; later calls cost a few milliseconds.

    A server may then call ``gc.freeze()`` (its choice: leapgram never freezes): Python's full
    collections stop scanning what start-up loaded, about 55,000 objects with numba, which made
    each one cost 35-50 ms (more than a mask) in a process with Llama-3's vocabulary; right
    after the freeze one costs under 1 ms."""
    from .vocab import Vocabulary

    timings = {}
    start = time.perf_counter()
    _walk_all(Vocabulary.byte_vocabulary())
    from .frontends.json_schema.common import base_pool
    from .limits import DEFAULT_LIMITS

    base_pool(DEFAULT_LIMITS, formats=True)  # else built inside the first schema with a format (0.05-0.1 s)
    timings["kernels"] = time.perf_counter() - start
    if vocab is not None:
        start = time.perf_counter()
        _walk_all(vocab)
        timings["vocabulary"] = time.perf_counter() - start
    return timings


def _walk_all(vocab) -> None:
    from .compiler import GrammarCompiler
    from .grammars import Grammar

    compiler = GrammarCompiler(vocab, cache_size=0)
    for grammar, text in ((Grammar.from_regex(_REGEX), b'{"a": 12}'), (Grammar.from_json_schema(_SCHEMA), _INSTANCE),
                          (Grammar.from_lark(_LARK), _LARK_TEXT)):
        _walk(compiler.compile(grammar), vocab, text)


def _walk(compiled, vocab, text: bytes) -> None:
    """Masks along ``text`` (greedy longest tokens, so no tokenizer is loaded), then at its end."""
    from .bitmask import allocate_token_bitmask
    from .matcher import Matcher

    matcher = Matcher(compiled)
    bitmask = allocate_token_bitmask(1, vocab.size)
    for token in _greedy_tokens(vocab, text):
        matcher.fill_next_token_bitmask(bitmask, 0)
        if not matcher.consume_token(token):
            break
    matcher.fill_next_token_bitmask(bitmask, 0)


def _greedy_tokens(vocab, text: bytes) -> list[int]:
    ids = {}
    for token_id, token in enumerate(vocab.tokens()):
        if 0 < len(token) <= 8 and token in text and not vocab.is_special(token_id):
            ids.setdefault(token, token_id)
    tokens, at = [], 0
    while at < len(text):
        length = next((n for n in range(min(8, len(text) - at), 0, -1) if text[at:at + n] in ids), 0)
        if not length:
            break
        tokens.append(ids[text[at:at + length]])
        at += length
    return tokens
