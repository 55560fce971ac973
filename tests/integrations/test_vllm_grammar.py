"""The vLLM adapter's per-request grammar and grammar cache, without vLLM: stop tokens, a padded
model vocabulary, special tokens, validate/rollback semantics and masks filled from threads."""

from __future__ import annotations

import json
import os
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import leapgram
from leapgram import Grammar, Matcher, Vocabulary
from leapgram.compiler import memory_of
from leapgram.integrations.vllm import (
    GrammarCache,
    LeapgramGrammar,
    MaskPrefetcher,
    ValidatedGrammars,
    _compiler_for,
    _prefetch_mode,
    cache_budget,
    cache_count,
    choice_regex,
    grammar_for,
    precompute_budget,
    trim_cache,
    warm_first_masks,
)

EOS, SPECIAL, NEWLINE = 256, 257, 10
MODEL_VOCAB = 300  # the model's padded vocabulary: ids 258..299 have no token


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    tokens = [bytes([i]) for i in range(256)] + [b"<eos>", b"<|im_start|>"]
    return Vocabulary(tokens, special_token_ids=[SPECIAL], eos_token_ids=[EOS], encoder=list, name="bytes+")


@pytest.fixture(scope="module")
def cache(vocab: Vocabulary) -> GrammarCache:
    return GrammarCache(_compiler_for(vocab), size=8)


def request(cache: GrammarCache, kind: str, spec: str, stops=(EOS,)) -> LeapgramGrammar:
    return LeapgramGrammar(Matcher(cache.get(kind, spec)), stops)


def allowed(grammar: LeapgramGrammar, words: int = (MODEL_VOCAB + 31) // 32) -> set[int]:
    bitmask = np.full((2, words), -1, dtype=np.int32)
    grammar.fill_bitmask(bitmask, 1)
    bits = np.unpackbits(bitmask[1].view(np.uint8), bitorder="little")
    return set(np.flatnonzero(bits).tolist())


def test_padded_ids_and_other_specials_stay_masked(cache: GrammarCache) -> None:
    grammar = request(cache, "REGEX", "[a-c]+")
    assert allowed(grammar) == {ord("a"), ord("b"), ord("c")}
    grammar.accept_tokens("r", [ord("a")])
    assert allowed(grammar) == {ord("a"), ord("b"), ord("c"), EOS}
    assert not grammar.accept_tokens("r", [SPECIAL]) and not grammar.accept_tokens("r", [MODEL_VOCAB - 1])
    assert grammar.accept_tokens("r", [ord("b")])  # a rejected token leaves the state usable


def test_torch_bitmask_is_filled_in_place(cache: GrammarCache) -> None:
    torch = pytest.importorskip("torch")
    bitmask = torch.full((1, (MODEL_VOCAB + 31) // 32), -1, dtype=torch.int32)
    request(cache, "REGEX", "b").fill_bitmask(bitmask, 0)
    assert bitmask[0, ord("b") // 32].item() == 1 << (ord("b") % 32)
    assert int(bitmask.ne(0).sum()) == 1


def test_request_stop_tokens_replace_the_vocabulary_eos(cache: GrammarCache) -> None:
    grammar = request(cache, "REGEX", "ab|abab", stops={NEWLINE, 200})
    assert allowed(grammar) == {ord("a")}
    grammar.accept_tokens("r", [ord("a"), ord("b")])
    assert allowed(grammar) == {ord("a"), NEWLINE, 200}  # complete: the stops, never EOS 256
    assert grammar.validate_tokens([ord("a"), NEWLINE]) == [ord("a")]
    assert grammar.validate_tokens([NEWLINE, ord("a")]) == [NEWLINE]
    assert grammar.accept_tokens("r", [NEWLINE, ord("x")]) and grammar.is_terminated()
    assert grammar.validate_tokens([ord("a")]) == []
    grammar.rollback(1)
    assert not grammar.is_terminated() and grammar.num_processed_tokens == 2
    assert grammar.accept_tokens("r", [ord("a"), ord("b"), 200]) and grammar.is_terminated()


def test_stop_token_before_the_output_is_complete_is_rejected(cache: GrammarCache) -> None:
    grammar = request(cache, "REGEX", "abc")
    assert grammar.validate_tokens([ord("a"), EOS]) == [ord("a")]
    assert not grammar.accept_tokens("r", [ord("a"), EOS]) and not grammar.is_terminated()
    assert grammar.accept_tokens("r", [ord("b"), ord("c"), EOS]) and grammar.is_terminated()


def test_validate_tokens_leaves_the_state_and_reset_restarts(cache: GrammarCache) -> None:
    grammar = request(cache, "JSON", json.dumps({"type": "integer"}))
    grammar.accept_tokens("r", [ord("1")])
    before = allowed(grammar)
    assert grammar.validate_tokens([ord("2"), ord("3"), ord("x"), ord("4")]) == [ord("2"), ord("3")]
    assert grammar.validate_tokens([ord("2"), EOS, ord("5")]) == [ord("2"), EOS]
    assert allowed(grammar) == before and grammar.num_processed_tokens == 1
    grammar.reset()
    assert ord("-") in allowed(grammar) and EOS not in allowed(grammar)


def test_each_request_type(cache: GrammarCache, vocab: Vocabulary) -> None:
    cases = {
        ("JSON", '{"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a"]}'): b'{"a": true}',
        ("JSON_OBJECT", ""): b'{"k": [1, {}]}',
        ("REGEX", r"\d{2}-[a-z]+"): b"42-abc",
        ("GRAMMAR", 'start: "SELECT " NAME\nNAME: /[a-z]+/'): b"SELECT abc",
        ("GRAMMAR", 'root ::= "(" [0-9]+ ")"'): b"(12)",
        ("CHOICE", json.dumps(["yes", "no"])): b"no",
    }
    for (kind, spec), text in cases.items():
        grammar = request(cache, kind, spec)
        assert grammar.accept_tokens("r", list(text) + [EOS]) and grammar.is_terminated(), (kind, spec)


def test_choice_regex_escapes_every_option(vocab: Vocabulary) -> None:
    options = ["a.b", "x|y", "(p)", "tab\there", "c:\\d", "[?]*+", "^$", "{1}", "ünï"]
    compiled = leapgram.GrammarCompiler(vocab).compile(Grammar.from_regex(choice_regex(options)))
    for option in options:
        matcher = Matcher(compiled)
        assert matcher.consume_tokens(list(option.encode())) and matcher.is_accepting(), option
    assert not Matcher(compiled).consume_tokens(list(b"axb"))


def test_grammar_type_is_told_apart_as_vllm_does() -> None:
    assert grammar_for("GRAMMAR", 'root ::= "a"').kind == "gbnf"
    assert grammar_for("GRAMMAR", '// root ::= "a" is a comment\nstart: "a"').kind == "lark"
    with pytest.raises(leapgram.GrammarError):
        grammar_for("JSON", '{"type": "object", "properties": 3}')
    with pytest.raises(leapgram.GrammarError):
        grammar_for("REGEX", "(unclosed")


def test_structural_tags_are_served() -> None:
    spec = json.dumps({"structures": [{"begin": "<f>", "schema": {"type": "integer"}, "end": "</f>"}],
                       "triggers": ["<f>"]})
    assert grammar_for("STRUCTURAL_TAG", spec).kind == "structural_tag"
    with pytest.raises(leapgram.GrammarError):
        grammar_for("STRUCTURAL_TAG", json.dumps({"structures": [{"begin": "<f>"}], "triggers": 3}))


def test_cache_is_bounded_and_reuses(vocab: Vocabulary) -> None:
    cache = GrammarCache(_compiler_for(vocab), size=2)
    first = cache.get("REGEX", "a")
    assert cache.get("REGEX", "a") is first
    cache.get("REGEX", "b")
    cache.get("REGEX", "c")
    assert len(cache) == 2 and cache.get("REGEX", "a") is not first


def test_cache_is_bounded_by_memory_too(vocab: Vocabulary) -> None:
    one = GrammarCache(_compiler_for(vocab), size=8, max_bytes=1)
    for pattern in "abc":
        newest = one.get("REGEX", pattern)
    assert len(one) == 1 and one.get("REGEX", "c") is newest  # the newest stays, even over the budget
    sizes = GrammarCache(_compiler_for(vocab), size=8)
    for pattern in "abc":
        sizes.get("REGEX", pattern)
    two = GrammarCache(_compiler_for(vocab), size=8, max_bytes=sizes.memory_bytes() - 1)
    for pattern in "abc":
        two.get("REGEX", pattern)
    assert len(two) == 2 and two.memory_bytes() <= two.max_bytes


def test_a_cache_with_a_precompute_budget_computes_masks_ahead_once(vocab: Vocabulary) -> None:
    spec = json.dumps({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False})
    plain = GrammarCache(_compiler_for(vocab), size=8).get("JSON", spec)
    ahead = GrammarCache(_compiler_for(vocab), size=8, precompute_ms=10_000)
    compiled = ahead.get("JSON", spec)
    assert len(plain._masks) == 0 and len(compiled._masks) > 10
    filled = len(compiled._masks)
    assert ahead.get("JSON", spec) is compiled and len(compiled._masks) == filled  # a hit: nothing again
    grammar = LeapgramGrammar(Matcher(compiled), (EOS,))
    for token in b'{"a": 12}':  # json.dumps's layout: every mask was computed ahead
        allowed(grammar)
        assert grammar.accept_tokens("r", [token])
    assert len(compiled._masks) == filled
    compact = GrammarCache(_compiler_for(vocab), size=8, compact=True, precompute_ms=10_000).get("JSON", spec)
    grammar = LeapgramGrammar(Matcher(compact), (EOS,))
    before = len(compact._masks)
    for token in b'{"a":12}':  # --disable-any-whitespace: the compact layout
        allowed(grammar)
        assert grammar.accept_tokens("r", [token])
    assert len(compact._masks) == before


@pytest.mark.parametrize(("setting", "expected"), [("", 0.0), ("0", 0.0), ("25", 25.0), ("2.5", 2.5),
                                                   ("-3", 0.0), ("soon", 0.0), ("inf", 0.0)])
def test_the_precompute_budget_setting(monkeypatch: pytest.MonkeyPatch, setting: str, expected: float) -> None:
    monkeypatch.setenv("LEAPGRAM_VLLM_PRECOMPUTE_MS", setting)
    assert precompute_budget("LEAPGRAM_VLLM_PRECOMPUTE_MS") == expected


def test_trim_cache_skips_values_without_a_grammar(vocab: Vocabulary) -> None:
    compiled = _compiler_for(vocab).compile(Grammar.from_regex("x+"))
    entries = OrderedDict([("old", compiled), ("none", None), ("new", compiled)])
    trim_cache(entries, 8, memory_of([compiled]))  # the same grammar twice counts once
    assert list(entries) == ["old", "none", "new"]
    trim_cache(entries, 2, None)
    assert list(entries) == ["none", "new"]


def test_cache_budget_reads_megabytes(monkeypatch) -> None:
    monkeypatch.delenv("LEAPGRAM_TEST_MB", raising=False)
    assert cache_budget("LEAPGRAM_TEST_MB", 64) == 64 * 2**20
    for setting, expected in (("1.5", 3 * 2**19), ("0", None), ("off", None), ("lots", 64 * 2**20),
                              ("inf", 64 * 2**20), ("1e400", 64 * 2**20), ("nan", 64 * 2**20), ("-5", 64 * 2**20)):
        monkeypatch.setenv("LEAPGRAM_TEST_MB", setting)
        assert cache_budget("LEAPGRAM_TEST_MB", 64) == expected


def test_cache_count_takes_the_default_for_a_bad_setting(monkeypatch) -> None:
    monkeypatch.delenv("LEAPGRAM_TEST_N", raising=False)
    assert cache_count("LEAPGRAM_TEST_N", 128) == 128
    for setting, expected in (("8", 8), ("8.0", 8), ("0", 128), ("-3", 128), ("2.5", 128), ("many", 128),
                              ("inf", 128)):
        monkeypatch.setenv("LEAPGRAM_TEST_N", setting)
        assert cache_count("LEAPGRAM_TEST_N", 128) == expected


def test_masks_filled_from_threads_equal_serial_masks(cache: GrammarCache) -> None:
    specs = [("JSON", json.dumps({"type": "array", "items": {"type": "integer"}})),
             ("JSON", json.dumps({"type": "object", "properties": {"k": {"enum": ["x", "yz"]}}})),
             ("REGEX", "[a-f]{3}[0-9]*"), ("GRAMMAR", 'start: "(" start ")" | "x"')]
    prefixes = [b"[1, 2", b'{"k": "y', b"abc1", b"((x"]
    grammars = []
    for copy in range(8):
        for (kind, spec), prefix in zip(specs, prefixes):
            grammar = request(cache, kind, spec)
            assert grammar.accept_tokens("r", list(prefix[: 1 + copy % len(prefix)]))
            grammars.append(grammar)
    words = (MODEL_VOCAB + 31) // 32
    serial = np.zeros((len(grammars), words), dtype=np.int32)
    for i, grammar in enumerate(grammars):
        grammar.fill_bitmask(serial, i)
    threaded = np.full((len(grammars), words), -1, dtype=np.int32)
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda i: grammars[i].fill_bitmask(threaded, i), range(len(grammars))))
    np.testing.assert_array_equal(threaded, serial)


def test_warming_the_first_masks_leaves_the_matcher_at_its_start(vocab: Vocabulary) -> None:
    """compile_grammar warms the masks of the start and forced states (in vLLM's compile thread):
    the matcher stays at its start and then gives the masks a cold matcher gives."""
    spec = json.dumps({"type": "object", "properties": {"key": {"enum": ["x", "yz"]}}, "required": ["key"]})
    warm = Matcher(GrammarCache(_compiler_for(vocab), size=1).get("JSON", spec))
    warm_first_masks(warm)
    cold = Matcher(GrammarCache(_compiler_for(vocab), size=1).get("JSON", spec))
    assert warm.num_tokens == 0 and not warm.is_error()
    for token in b'{"key": "yz"}':
        np.testing.assert_array_equal(warm.compute_mask(), cold.compute_mask())
        assert warm.consume_token(token) and cold.consume_token(token)
    assert warm.is_accepting()


def test_prefetched_masks_equal_masks_filled_on_demand(vocab: Vocabulary) -> None:
    """With a MaskPrefetcher, each accept queues the new state's mask for its thread; the engine
    may touch the grammar before, while or after the prefetch runs, and every mask, validation
    and rollback answers as without one (fresh caches, so that the prefetches compute)."""
    specs = [("JSON", json.dumps({"type": "object", "properties": {"k": {"enum": ["x", "yz"]}, "n": {"type": "integer"}},
                                  "required": ["k", "n"]})), ("REGEX", "[a-f]{3}[0-9]*")]
    texts = [b'{"k": "yz", "n": -12}', b"abc123"]
    prefetcher = MaskPrefetcher((MODEL_VOCAB + 31) // 32)
    try:
        for (kind, spec), text in zip(specs, texts):
            plain = LeapgramGrammar(Matcher(GrammarCache(_compiler_for(vocab), 1).get(kind, spec)), [EOS])
            fetched = LeapgramGrammar(Matcher(GrammarCache(_compiler_for(vocab), 1).get(kind, spec)), [EOS],
                                      prefetcher)
            for step, token in enumerate(list(text) + [EOS]):
                if step % 3 == 1:
                    time.sleep(0.01)  # let the prefetch finish; otherwise the engine's fill races it
                assert allowed(fetched) == allowed(plain), (kind, step)
                if step % 4 == 2:
                    assert fetched.validate_tokens([token, token]) == plain.validate_tokens([token, token])
                assert fetched.accept_tokens("r", [token]) and plain.accept_tokens("r", [token])
                prefetcher.release()  # vLLM's scheduler, once the step is scheduled
                if step % 5 == 3:  # a rollback and the token again, as the manager does with drafts
                    fetched.rollback(1), plain.rollback(1)
                    assert fetched.accept_tokens("r", [token]) and plain.accept_tokens("r", [token])
            assert fetched.is_terminated() and plain.is_terminated()
        deadline = time.monotonic() + 5
        while prefetcher.jobs == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert prefetcher.jobs > 0  # the thread did compute masks
    finally:
        prefetcher.close()


@pytest.mark.parametrize(("setting", "speculative", "expected"), [
    (None, False, True),
    ("1", False, True),
    ("on", False, True),
    ("0", False, False),
    ("off", False, False),
    (None, True, False),  # drafts: the manager fills right after each accept, nothing to overlap
    ("1", True, False),
    ("sometimes", False, True),  # unknown: warned about, then the default
    ("idle", False, True),
    ("idle", True, False),
])
def test_prefetch_switch(monkeypatch, setting, speculative, expected) -> None:
    from types import SimpleNamespace

    if setting is None:
        monkeypatch.delenv("LEAPGRAM_VLLM_PREFETCH", raising=False)
    else:
        monkeypatch.setenv("LEAPGRAM_VLLM_PREFETCH", setting)
    config = SimpleNamespace(speculative_config=object() if speculative else None)
    assert (_prefetch_mode(config) is not None) is expected  # whether the backend runs a prefetch thread


@pytest.mark.parametrize(("setting", "mode"), [(None, "on"), ("", "on"), ("1", "on"), ("on", "on"), ("0", None),
                                               ("idle", "idle"), (" IDLE ", "idle"), ("nice", "nice"),
                                               ("sometimes", "on")])
def test_prefetch_mode(monkeypatch, setting, mode) -> None:
    from types import SimpleNamespace

    if setting is None:
        monkeypatch.delenv("LEAPGRAM_VLLM_PREFETCH", raising=False)
    else:
        monkeypatch.setenv("LEAPGRAM_VLLM_PREFETCH", setting)
    assert _prefetch_mode(SimpleNamespace(speculative_config=None)) == mode


def prefetched_once(prefetcher: MaskPrefetcher, vocab: Vocabulary) -> None:
    """One mask computed by ``prefetcher``'s thread; it is the mask a grammar without one gives."""
    grammar = LeapgramGrammar(Matcher(GrammarCache(_compiler_for(vocab), 1).get("REGEX", "[a-f]{3}[0-9]*")),
                              [EOS], prefetcher)
    plain = LeapgramGrammar(Matcher(GrammarCache(_compiler_for(vocab), 1).get("REGEX", "[a-f]{3}[0-9]*")), [EOS])
    assert grammar.accept_tokens("r", [ord("a")]) and plain.accept_tokens("r", [ord("a")])
    prefetcher.release()
    deadline = time.monotonic() + 10
    while prefetcher.jobs == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert prefetcher.jobs == 1
    assert allowed(grammar) == allowed(plain)


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux's")
def test_idle_prefetch_thread_runs_under_sched_idle(vocab: Vocabulary) -> None:
    """``LEAPGRAM_VLLM_PREFETCH=idle``: the prefetch thread (only it) runs under SCHED_IDLE and
    still computes the masks the engine then finds cached."""
    before = os.sched_getscheduler(0)
    prefetcher = MaskPrefetcher((MODEL_VOCAB + 31) // 32, idle=True)
    try:
        prefetched_once(prefetcher, vocab)
        assert prefetcher.idle  # SCHED_IDLE was set (lowering one's own priority needs no privilege)
        assert os.sched_getscheduler(prefetcher._thread.native_id) == os.SCHED_IDLE
        assert os.sched_getscheduler(0) == before  # the caller's thread is untouched
    finally:
        prefetcher.close()


@pytest.mark.skipif(not hasattr(os, "setpriority"), reason="per-thread nice values are Linux's")
def test_nice_prefetch_thread_runs_at_a_higher_nice_value(vocab: Vocabulary) -> None:
    """``LEAPGRAM_VLLM_PREFETCH=nice``: the prefetch thread (only it) runs ``NICE_STEP`` nice
    levels above the caller and still computes the masks the engine then finds cached."""
    from leapgram.integrations.vllm import NICE_STEP

    before = os.getpriority(os.PRIO_PROCESS, 0)
    prefetcher = MaskPrefetcher((MODEL_VOCAB + 31) // 32, nice=NICE_STEP)
    try:
        prefetched_once(prefetcher, vocab)
        assert prefetcher.nice == min(19, before + NICE_STEP) - before
        assert os.getpriority(os.PRIO_PROCESS, prefetcher._thread.native_id) == before + prefetcher.nice
        assert os.getpriority(os.PRIO_PROCESS, 0) == before  # the caller's thread is untouched
    finally:
        prefetcher.close()


def test_validated_grammars_are_kept_only_beside_a_backend_and_taken_once() -> None:
    kept = ValidatedGrammars(size=2)
    grammar = grammar_for("REGEX", "a+")
    kept.put(("REGEX", "a+", False), grammar)
    assert len(kept) == 0  # no backend in this process (a front end): nothing kept
    kept.activate(True)
    for spec in ("a+", "b+", "c+"):
        kept.put(("REGEX", spec, False), grammar_for("REGEX", spec))
    assert len(kept) == 2  # bounded: the oldest dropped
    assert kept.take(("REGEX", "a+", False)) is None
    assert kept.take(("REGEX", "b+", False)) is not None
    assert kept.take(("REGEX", "b+", False)) is None  # taken once
    assert kept.take(("REGEX", "c+", True)) is None  # the whitespace setting is part of the key
    kept.activate(False)
    assert len(kept) == 0  # the last backend gone: cleared


def test_grammar_cache_compiles_the_validated_grammar(monkeypatch, vocab: Vocabulary) -> None:
    """In one process, the compile takes the grammar validation translated instead of
    translating the spec again, and compiles the same language."""
    import leapgram.integrations.vllm as module

    kept = ValidatedGrammars()
    monkeypatch.setattr(module, "VALIDATED", kept)
    spec = json.dumps({"type": "object", "properties": {"k": {"enum": ["x", "yz"]}}, "required": ["k"]})
    kept.activate(True)
    validated = grammar_for("JSON", spec)
    kept.put(("JSON", spec, False), validated)
    calls = []
    monkeypatch.setattr(module, "grammar_for", lambda *a, **k: calls.append(a) or grammar_for(*a, **k))
    compiled = GrammarCache(_compiler_for(vocab), 4).get("JSON", spec)
    assert calls == [] and len(kept) == 0
    again = GrammarCache(_compiler_for(vocab), 4).get("JSON", spec)  # nothing kept now: translated
    assert len(calls) == 1
    for text in (b'{"k": "yz"}', b'{"k": "x"}'):
        one, two = Matcher(compiled), Matcher(again)
        for byte in text:
            assert np.array_equal(one.compute_mask(), two.compute_mask())
            assert one.consume_token(byte) and two.consume_token(byte)
        assert one.is_accepting() and two.is_accepting()
