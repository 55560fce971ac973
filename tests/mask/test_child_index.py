"""The trie walk's child index: the same masks as the walk without it and as the kernel's twin."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leapgram import Grammar, Matcher, Vocabulary
from leapgram._kernels.cfg_walk import walk_cfg_twin
from leapgram.compiler import token_trie
from leapgram.mask import engines
from leapgram.mask.walk import CHILD_INDEX_MIN, NO_CHILD_INDEX, _child_index, child_index
from tests.helpers.cfg_grammars import GRAMMARS
from tests.helpers.compiling import compile_for
from tests.helpers.masks import walk_to

ALPHABET = b'{}[]",:. \n\\-+eE0123456789abcdeflnrstux'
WORDS = [b'": ', b'", "', b'{"a', b'{"b', b'"a"', b'true', b'null', b'false', b'tru', b'nul', b'fal', b'  "', b'\n  ',
         b'1.5', b'-0.', b'e+3', b'"x\\', b'\\u00', b', {', b'}, ', b']]', b'"},']


@pytest.fixture(scope="module")
def dense_vocab() -> Vocabulary:
    """Every byte, every pair over a JSON-ish alphabet and some longer words: the root and the
    depth-1 nodes of the alphabet have many children, so the walk uses the child index."""
    tokens = [bytes([b]) for b in range(256)] + [bytes([a, b]) for a in ALPHABET for b in ALPHABET] + WORDS
    tokens.append(b"<eos>")
    return Vocabulary(tokens, special_token_ids=[len(tokens) - 1], eos_token_ids=[len(tokens) - 1], name="dense")


def test_index_lists_children_by_byte(dense_vocab):
    trie = token_trie(dense_vocab)
    kids = child_index(trie)
    assert child_index(trie) is kids  # made once per trie
    root_children = trie.children(0)
    assert kids[0, 256] == 1 and sorted(kids[0, :256][kids[0, :256] > 0].tolist()) == root_children
    for node in root_children:
        byte = int(trie.node_byte[node])
        children = trie.children(node)
        row = kids[1 + byte]
        assert sorted(row[:256][row[:256] > 0].tolist()) == children
        assert all(int(trie.node_byte[row[int(trie.node_byte[c])]]) == int(trie.node_byte[c]) for c in children)
        assert row[256] == (len(children) >= CHILD_INDEX_MIN)


def test_siblings_out_of_byte_order_turn_the_index_off():
    node_byte = np.array([0, 7, 1, 5, 3] + list(range(20)), dtype=np.uint8)
    node_depth = np.array([0, 1, 2, 1, 1] + [1] * 20, dtype=np.int32)
    assert not _child_index(node_byte, node_depth)[:, 256].any()


def _masks_with_and_without_index(compiled, state) -> tuple[np.ndarray, np.ndarray]:
    engine = compiled._engine
    key = engine.mask_key(state)
    with_index = engine.new_mask(state, key)
    kids, index_of = engine._kids, engines.child_index
    engine._kids = NO_CHILD_INDEX
    engines.child_index = lambda trie: NO_CHILD_INDEX  # the slices' tries too
    try:
        without = engine.new_mask(state, key)
    finally:
        engine._kids, engines.child_index = kids, index_of
    return with_index, without


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(GRAMMARS)), seed=st.integers(0, 10_000))
def test_index_changes_no_mask(dense_vocab, name, seed):
    compiled = compile_for(GRAMMARS[name](), dense_vocab, use_slicer=False)
    matcher = Matcher(compiled)
    rng = np.random.default_rng(seed)
    for _ in range(12):
        state = matcher._states[-1]
        with_index, without = _masks_with_and_without_index(compiled, state)
        assert np.array_equal(with_index, without)
        arena, chart, lex = state
        twin = np.zeros(compiled._words, dtype=np.uint32)
        walk_cfg_twin(token_trie(dense_vocab), compiled._engine.lexer.step, arena.boundary, chart, lex, twin)
        assert np.array_equal(with_index, twin)
        if not walk_to(matcher, dense_vocab, rng, 1):
            break


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                                      "tags": {"type": "array", "items": {"enum": ["a", "b", "c-d"]}}},
     "required": ["name"]},
    {"type": "object", "additionalProperties": {"type": "number"}},
])
def test_index_changes_no_json_schema_mask(dense_vocab, schema):
    """With the slicer: its slices' tries get their own index."""
    compiled = compile_for(Grammar.from_json_schema(schema), dense_vocab)
    matcher = Matcher(compiled)
    rng = np.random.default_rng(3)
    for _ in range(25):
        with_index, without = _masks_with_and_without_index(compiled, matcher._states[-1])
        assert np.array_equal(with_index, without)
        if not walk_to(matcher, dense_vocab, rng, 1):
            break
