"""Calling the trie walk through its compiled entry point, and compiled grammars freed by
reference counting alone."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from numba import config, njit

from leapgram import Grammar, GrammarCompiler, Matcher, allocate_token_bitmask
from leapgram._kernels.entry import DirectKernel
from tests.helpers.compiling import compile_for


@njit(cache=False)
def _scaled_sum(values, factor):
    return values.sum() * factor


def test_direct_kernel_uses_the_entry_point_after_the_first_call():
    kernel = DirectKernel(_scaled_sum)
    values = np.arange(10, dtype=np.int64)
    assert kernel.call(values, 3) == 135
    if config.DISABLE_JIT:
        assert kernel.call is _scaled_sum  # a plain function: called as it is
    else:
        assert kernel.call is not _scaled_sum
        assert kernel.call is next(iter(_scaled_sum.overloads.values())).entry_point
    assert kernel.call(values[:4], 2) == 12


@pytest.mark.skipif(config.DISABLE_JIT, reason="numba disabled: no compiled signatures")
def test_direct_kernel_keeps_the_dispatcher_for_several_signatures():
    @njit(cache=False)
    def double(x):
        return x * 2

    assert double(1.5) == 3.0  # a second signature exists before the wrapper's first call
    kernel = DirectKernel(double)
    assert kernel.call(4) == 8
    assert kernel.call(2.5) == 5.0
    assert kernel.call is double


@pytest.mark.skipif(config.DISABLE_JIT, reason="numba disabled: no compiled signatures")
def test_direct_kernel_takes_the_entry_point_over_read_only_variants():
    @njit(cache=False)
    def total(x, y):
        return x.sum() + y.sum()

    frozen = np.arange(4, dtype=np.int64)
    frozen.flags.writeable = False
    assert total(frozen, np.ones(2, dtype=np.int64)) == 8  # read-only and writable signatures
    kernel = DirectKernel(total)
    assert kernel.call(np.arange(3, dtype=np.int64), np.ones(2, dtype=np.int64)) == 5
    assert len(total.overloads) == 2
    assert kernel.call is not total
    assert kernel.call(frozen, np.zeros(1, dtype=np.int64)) == 6


def test_masks_through_the_entry_point_equal_the_dispatcher(small_vocab):
    """The same masks, grammar after grammar, whichever way the walk kernel is called."""
    from leapgram.mask import engines

    grammar = Grammar.from_lark('start: "{" ITEM ("," ITEM)* "}"\nITEM: /[a-z]{1,3}/')
    compiled = compile_for(grammar, small_vocab)
    matcher = Matcher(compiled)
    direct = allocate_token_bitmask(1, small_vocab.size)
    matcher.fill_next_token_bitmask(direct)
    state = matcher._states[-1]
    through_dispatcher = compiled._engine.new_mask(state, compiled._engine.mask_key(state))
    saved = engines._WALK_KERNEL.call
    try:
        engines._WALK_KERNEL.call = engines.walk_cfg_kernel
        again = compiled._engine.new_mask(state, compiled._engine.mask_key(state))
    finally:
        engines._WALK_KERNEL.call = saved
    assert np.array_equal(through_dispatcher, again)


@pytest.mark.parametrize("grammar", [
    Grammar.from_json_schema({"type": "object", "properties": {"name": {"type": "string"}}}),
    Grammar.from_regex(r'"[a-z ]{0,40}"'),
], ids=["json-schema", "regex"])
def test_a_dropped_grammar_is_freed_without_a_collection(small_vocab, grammar):
    """No reference cycle through the engine (the slicer's closure once made one): a grammar
    and its lexer go as soon as the last reference does, not at the next full collection."""
    compiler = GrammarCompiler(small_vocab)
    compiled = compiler.compile(grammar)
    matcher = Matcher(compiled)
    matcher.fill_next_token_bitmask(allocate_token_bitmask(1, small_vocab.size))
    refs = [weakref.ref(compiled), weakref.ref(compiled._engine), weakref.ref(compiled._engine.slicer or compiled)]
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        del compiled, matcher
        compiler.clear_cache()  # the last reference
        assert [ref() for ref in refs] == [None, None, None]
    finally:
        if was_enabled:
            gc.enable()
