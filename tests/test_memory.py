"""What compiled grammars keep alive: ``memory_of`` (the estimate the serving backends' caches are
bounded by) against a walk over the objects."""

from __future__ import annotations

import sys

import numpy as np

from leapgram import Grammar, GrammarCompiler, Matcher, Vocabulary
from leapgram.compiler import memory_of, running_memory

SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 20},
                                           "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}},
                                           "size": {"type": "integer"}},
          "required": ["name", "size"]}
INSTANCE = b'{"name": "leapgram", "tags": ["a", "c"], "size": 12}'


def walked(compiler: GrammarCompiler, grammar: Grammar, data: bytes):
    """The compiled grammar with the masks along ``data`` (one byte a token) cached."""
    compiled = compiler.compile(grammar)
    matcher = Matcher(compiled)
    for byte in data:
        matcher.compute_mask()
        assert matcher.consume_token(byte)
    matcher.compute_mask()
    return compiled


def deep_bytes(root: object, skip: tuple) -> int:
    """Bytes reachable from ``root`` (numpy data counted once per buffer), not through ``skip``."""
    seen, stack, total = {id(s) for s in skip}, [root], 0
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (type, type(sys), type(deep_bytes))):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, np.ndarray) and obj.base is not None and id(obj.base) not in seen:
            stack.append(obj.base)
        elif isinstance(obj, memoryview):
            stack.append(obj.obj)
        stack.extend(__import__("gc").get_referents(obj))
    return total


def test_the_estimate_grows_with_the_masks_and_is_near_a_walk_over_the_objects():
    vocab = Vocabulary.byte_vocabulary()
    compiler = GrammarCompiler(vocab, cache_size=0)
    fresh = compiler.compile(Grammar.from_json_schema(SCHEMA))
    before = memory_of([fresh])
    compiled = walked(compiler, Grammar.from_json_schema(SCHEMA), INSTANCE)
    estimate = memory_of([compiled])
    assert estimate > before + len(INSTANCE) * compiled._eos_row.nbytes // 2  # half the rows at least differ
    shared = (vocab, compiled.vocab, compiled._trie, compiled._rows, compiled._engine.trie, compiled.limits,
              compiled._engine.lexer.pool.family, compiled._engine.lexer._shared, compiled._token_bytes,
              compiled._not_text)
    walk = deep_bytes(compiled, shared) - compiled._engine.lexer.unwritten_bytes  # allocated rows never written: no memory
    assert 0.5 * walk < estimate < 2 * walk


def test_rows_two_grammars_share_are_counted_once():
    compiler = GrammarCompiler(Vocabulary.byte_vocabulary(), cache_size=0)
    one = walked(compiler, Grammar.from_regex("[a-z]+@[a-z]+"), b"ab@cd")
    two = walked(compiler, Grammar.from_regex("[a-z]+@[a-z]+\\.com"), b"ab@cd")  # equal rows before the dot
    together, alone = memory_of([one, two]), memory_of([one])
    assert max(alone, memory_of([two])) < together < alone + memory_of([two])
    assert list(running_memory([one, None, two, one])) == [alone, alone, together, together]
    assert memory_of([]) == 0


def recounted(grammars) -> list[int]:
    """``running_memory`` taken afresh: every grammar's mask cache read now, row by row."""
    out, rows, total = [], set(), 0
    for grammar in grammars:
        total += grammar._table_bytes()
        for entry in list(grammar._masks.values()):
            if id(entry.row) not in rows:
                rows.add(id(entry.row))
                total += entry.row.nbytes
        out.append(total)
    return out


def test_each_grammar_keeps_its_rows_until_its_mask_cache_changes():
    from leapgram.limits import Limits

    compiler = GrammarCompiler(Vocabulary.byte_vocabulary(), cache_size=0, limits=Limits(max_cached_masks=4))
    one = walked(compiler, Grammar.from_regex("[a-z]+@[a-z]+"), b"ab@cd")
    two = walked(compiler, Grammar.from_regex("[a-z]+@[a-z]+\\.com"), b"ab@")
    assert list(running_memory([two, one])) == recounted([two, one])
    ids, _ = one._row_ids()
    assert one._row_ids()[0] is ids  # kept: nothing changed
    matcher = Matcher(two)
    for byte in b"xy@zz.co":  # new states: rows added, and the oldest evicted (4 kept)
        matcher.compute_mask()
        assert matcher.consume_token(byte)
    assert list(running_memory([two, one])) == recounted([two, one])
    assert list(running_memory([one, two])) == recounted([one, two])
    assert one._row_ids()[0] is ids and len(two._masks) == 4
