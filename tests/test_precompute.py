"""``leapgram.precompute_masks``: masks computed ahead are the masks computed on demand, the layout
it explores, its budgets, and its errors."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from leapgram import Grammar, GrammarCompiler, Limits, Matcher, precompute_masks
from tests.helpers.masks import masks_along

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string", "enum": ["x", "yz"]},
                                           "c": {"type": "boolean"}},
          "required": ["a"], "additionalProperties": False}


def _compiled(vocab, grammar, **limits):
    return GrammarCompiler(vocab, limits=Limits(**limits), cache_size=0).compile(grammar)


def _computed_along(compiled, text: bytes) -> list[bytes]:
    """The prefixes of ``text`` (a byte vocabulary) whose mask was not in the cache."""
    matcher, missed = Matcher(compiled), []
    for i in range(len(text) + 1):
        if compiled._engine.mask_key(matcher._states[-1]) not in compiled._masks:
            missed.append(text[:i])
        matcher.compute_mask()
        if i < len(text):
            assert matcher.consume_token(text[i])
    return missed


def test_a_finite_grammar_is_explored_whole_and_every_later_mask_is_a_hit(byte_vocab):
    compiled = _compiled(byte_vocab, Grammar.from_regex(r"(ab|cd){1,3}x[0-9]"))
    done = precompute_masks(compiled, max_ms=10_000)
    assert done.complete and done.stopped_by is None
    assert done.states == done.masks == len(compiled._masks) > 10
    for text in (b"abx1", b"cdabcdx9", b"abab"):
        assert _computed_along(compiled, text) == []


@pytest.mark.parametrize("text", [b'{"a": 12, "b": "yz", "c": true}', b'{"a": -3}', b'{"a": 0, "c": false}'])
def test_the_masks_are_the_ones_computed_on_demand(byte_vocab, text):
    grammar = Grammar.from_json_schema(SCHEMA)
    expected = masks_along(_compiled(byte_vocab, grammar), text)
    compiled = _compiled(byte_vocab, grammar)
    assert precompute_masks(compiled, max_ms=10_000).states > 0
    assert _computed_along(compiled, text) == []  # json.dumps's layout, ", " and ": ", is explored
    got = masks_along(compiled, text)
    assert len(got) == len(expected)
    for mine, theirs in zip(got, expected):
        np.testing.assert_array_equal(mine, theirs)


def test_the_layout_explored_is_the_separators_given(byte_vocab):
    grammar = Grammar.from_json_schema(SCHEMA)
    spaced = _compiled(byte_vocab, grammar)
    precompute_masks(spaced, max_ms=10_000)
    compact = _compiled(byte_vocab, grammar)
    precompute_masks(compact, max_ms=10_000, separators=())
    assert _computed_along(compact, b'{"a":1,"c":true}') == []
    assert _computed_along(compact, b'{"a": 1}') == [b'{"a": ', b'{"a": 1']  # a space it did not follow
    assert _computed_along(spaced, b'{"a":1}') == [b'{"a":1']  # the other way round (the end merges again)
    pretty = _computed_along(spaced, b'{\n  "a": 1\n}')  # other whitespace: computed on demand, still exact
    assert pretty and pretty[0] == b"{\n"


def test_budgets_stop_it_and_the_cache_bound_holds(byte_vocab):
    grammar = Grammar.from_json_schema({"type": "array", "items": {}})  # any JSON values: never ends
    compiled = _compiled(byte_vocab, grammar, max_cached_masks=40)
    done = precompute_masks(compiled, max_ms=10_000)
    assert (done.states, done.complete, done.stopped_by) == (40, False, "states")
    assert len(compiled._masks) == 40
    assert precompute_masks(_compiled(byte_vocab, grammar), max_states=7).states == 7
    stopped = precompute_masks(_compiled(byte_vocab, grammar), max_ms=0)
    assert (stopped.states, stopped.stopped_by) == (0, "time")
    assert _computed_along(compiled, b'[1, {"k": [true]}]')  # what it did not reach is computed on demand


def test_a_second_call_computes_nothing_again(byte_vocab):
    compiled = _compiled(byte_vocab, Grammar.from_json_schema(SCHEMA))
    first = precompute_masks(compiled, max_ms=10_000)
    again = precompute_masks(compiled, max_ms=10_000)
    assert first.complete and again.complete
    assert first.masks > 0 and again.masks == 0 and again.states == first.states


def test_a_real_vocabulary(llama3_vocab):
    compiled = _compiled(llama3_vocab, Grammar.from_json_schema(SCHEMA))
    assert precompute_masks(compiled, max_ms=10_000).complete
    tokens = llama3_vocab.encode(b'{"a": 12, "b": "yz", "c": true}')
    matcher = Matcher(compiled)
    before = len(compiled._masks)
    for token in tokens:
        matcher.compute_mask()
        assert matcher.consume_token(token)
    assert len(compiled._masks) == before


@pytest.mark.parametrize(("kwargs", "error"), [({"max_ms": -1}, ValueError), ({"separators": (",",)}, ValueError),
                                               ({"separators": (" ,",)}, ValueError),
                                               ({"max_states": -2}, ValueError)])
def test_bad_arguments(byte_vocab, kwargs, error):
    compiled = _compiled(byte_vocab, Grammar.from_regex("a+"))
    with pytest.raises(error):
        precompute_masks(compiled, **kwargs)


def test_it_takes_a_compiled_grammar():
    with pytest.raises(TypeError, match="CompiledGrammar"):
        precompute_masks(Grammar.from_regex("a"))


def test_it_runs_beside_matchers_of_the_same_grammar(byte_vocab):
    grammar = Grammar.from_json_schema({"type": "array", "items": SCHEMA})
    texts = [b'[{"a": 1}, {"a": 22, "b": "x"}]', b'[{"a": -5, "c": true}]', b"[]"]
    expected = {text: masks_along(_compiled(byte_vocab, grammar), text) for text in texts}
    compiled = _compiled(byte_vocab, grammar)
    with ThreadPoolExecutor(4) as pool:
        ahead = pool.submit(precompute_masks, compiled, max_ms=10_000, max_states=400)
        walks = [pool.submit(masks_along, compiled, text) for text in texts * 3]
        assert ahead.result().states > 50
        for text, walk in zip(texts * 3, walks):
            for mine, theirs in zip(walk.result(), expected[text], strict=True):
                np.testing.assert_array_equal(mine, theirs)
