"""Context-free masks: brute force, the kernel's twin, rollback, on small and real vocabularies."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leapgram import Grammar, GrammarCompiler, Limits, Matcher, Vocabulary, allowed_tokens
from leapgram._kernels.cfg_walk import lexeme_walk_kernel, lexeme_walk_twin, walk_cfg_twin
from leapgram.compiler import memory_of, token_trie
from tests.helpers.cfg_grammars import GRAMMARS, SENTENCES
from tests.helpers.compiling import compile_for
from tests.helpers.masks import brute_force_allowed, mask_set, masks_along, walk_to


def byte_matcher(name: str, vocab: Vocabulary) -> Matcher:
    return Matcher(compile_for(GRAMMARS[name](), vocab))


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_sentences_accepted_byte_by_byte(byte_vocab, name):
    for sentence in SENTENCES[name]:
        matcher = byte_matcher(name, byte_vocab)
        assert matcher.consume_tokens(list(sentence.encode())), (sentence, matcher.error())
        assert matcher.is_accepting(), sentence
        assert matcher.consume_token(byte_vocab.eos_token_ids[0])


@pytest.mark.parametrize("name, text", [
    ("json", '{"a" 1}'), ("json", "[1,]"), ("json", "tru"), ("json", '{"a":01}'),
    ("arithmetic", "1+"), ("arithmetic", "(1"), ("arithmetic", "f(,)"),
    ("keywords", "if 1;"), ("keywords", "x=1"),
])
def test_bad_sentences_rejected(byte_vocab, name, text):
    matcher = byte_matcher(name, byte_vocab)
    assert not (matcher.consume_tokens(list(text.encode())) and matcher.is_accepting())


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_byte_vocab_masks_equal_brute_force_along_sentences(byte_vocab, name):
    for sentence in SENTENCES[name]:
        matcher = byte_matcher(name, byte_vocab)
        for byte in sentence.encode():
            assert mask_set(matcher, byte_vocab) == brute_force_allowed(matcher, byte_vocab), (sentence, matcher.num_tokens)
            assert matcher.consume_token(byte)
        assert mask_set(matcher, byte_vocab) == brute_force_allowed(matcher, byte_vocab)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(GRAMMARS)), seed=st.integers(0, 10_000))
def test_small_vocab_random_walks_equal_brute_force(small_vocab, name, seed):
    matcher = byte_matcher(name, small_vocab)
    rng = np.random.default_rng(seed)
    for _ in range(8):
        assert mask_set(matcher, small_vocab) == brute_force_allowed(matcher, small_vocab)
        if not walk_to(matcher, small_vocab, rng, 1):
            break


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(GRAMMARS)), seed=st.integers(0, 10_000))
def test_kernel_agrees_with_twin(small_vocab, name, seed):
    compiled = compile_for(GRAMMARS[name](), small_vocab, use_slicer=False)
    matcher = Matcher(compiled)
    walk_to(matcher, small_vocab, np.random.default_rng(seed), 4)
    arena, chart, lex = state = matcher._states[-1]
    engine = compiled._engine
    expected = np.zeros(compiled._words, dtype=np.uint32)
    walk_cfg_twin(token_trie(small_vocab), engine.lexer.step, arena.boundary, chart, lex, expected)
    assert np.array_equal(compiled._state_mask(state), expected)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(GRAMMARS)), seed=st.integers(0, 10_000))
def test_lexeme_walk_kernel_agrees_with_twin(small_vocab, name, seed):
    compiled = compile_for(GRAMMARS[name](), small_vocab, use_slicer=False)
    matcher = Matcher(compiled)
    walk_to(matcher, small_vocab, np.random.default_rng(seed), 4)
    lex = matcher._states[-1][2]
    lexer, trie = compiled._engine.lexer, token_trie(small_vocab)
    tokens, frontier = lexeme_walk_twin(trie, lexer.step, lambda state: bool(lexer.accepting[state]), lex)
    out_tokens, out_frontier = np.empty(trie.num_nodes, dtype=np.int32), np.empty(2 * trie.num_nodes, dtype=np.int64)
    stack = np.zeros(trie.max_depth + 1, dtype=np.int64)
    n_tokens, n_frontier, visits = lexeme_walk_kernel(trie.node_info, trie.node_end, lexer.views, stack, lex,
                                                      out_tokens, out_frontier)
    assert out_tokens[:n_tokens].tolist() == tokens and visits >= n_tokens + n_frontier
    pairs = out_frontier[:2 * n_frontier]
    assert [(int(e >> 32), int(e & 0xFFFFFFFF)) for e in pairs[0::2]] == frontier
    assert [(int(e >> 8), int(e & 0xFF)) for e in pairs[1::2]] == [
        (int(trie.node_end[node]), int(trie.node_byte[node])) for node, _ in frontier]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(GRAMMARS)), seed=st.integers(0, 10_000))
def test_leo_does_not_change_masks(small_vocab, name, seed):
    with_leo = Matcher(compile_for(GRAMMARS[name](), small_vocab, use_slicer=False))
    without = Matcher(compile_for(GRAMMARS[name](), small_vocab, use_slicer=False, use_leo=False))
    rng = np.random.default_rng(seed)
    for _ in range(10):
        mask = with_leo.compute_mask().copy()
        assert np.array_equal(mask, without.compute_mask())
        if not walk_to(with_leo, small_vocab, rng, 1):
            break
        assert without.consume_token(with_leo._tokens[-1])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(GRAMMARS)), seed=st.integers(0, 10_000), steps=st.integers(1, 10))
def test_rollback_restores_identical_mask(small_vocab, name, seed, steps):
    matcher = byte_matcher(name, small_vocab)
    rng = np.random.default_rng(seed)
    masks = [matcher.compute_mask().copy()]
    for _ in range(steps):
        if not walk_to(matcher, small_vocab, rng, 1):
            break
        masks.append(matcher.compute_mask().copy())
    for expected in reversed(masks[:-1]):
        matcher.rollback(1)
        assert np.array_equal(matcher.compute_mask(), expected)


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_llama3_masks_agree_with_consuming(llama3_vocab, name):
    vocab = llama3_vocab
    rng = np.random.default_rng(11)
    for sentence in SENTENCES[name][:2]:
        matcher = Matcher(compile_for(GRAMMARS[name](), vocab))
        for token in vocab.encode(sentence.encode()):
            allowed = set(allowed_tokens(matcher.compute_mask(), vocab.size).tolist())
            assert token in allowed
            probes = set(rng.choice(vocab.size, size=400, replace=False).tolist()) | set(list(allowed)[:300])
            for probe in probes:
                ok = matcher.consume_token(probe)
                assert ok == (probe in allowed), (sentence, probe, vocab.token_bytes(probe))
                matcher.rollback(1 if ok else 0)
            assert matcher.consume_token(token)
        assert matcher.is_accepting()


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_slicer_does_not_change_cfg_masks(llama3_vocab, name):
    sentence = SENTENCES[name][0]
    sliced = Matcher(compile_for(GRAMMARS[name](), llama3_vocab))
    plain = Matcher(compile_for(GRAMMARS[name](), llama3_vocab, use_slicer=False))
    for token in llama3_vocab.encode(sentence.encode()):
        assert np.array_equal(sliced.compute_mask(), plain.compute_mask())
        assert sliced.consume_token(token) and plain.consume_token(token)


def test_charts_with_the_same_future_share_fingerprints(byte_vocab):
    compiled = compile_for(GRAMMARS["json"](), byte_vocab)

    def state_after(text: str):
        matcher = Matcher(compiled)
        assert matcher.consume_tokens(list(text.encode()))
        return matcher._states[-1]

    def key(text: str):
        return compiled._engine.mask_key(state_after(text))

    assert key('{"a": 1, "b":') == key('{"c": [2], "d":')  # a later member, any earlier ones
    assert key('{"e":') == key('{"ff":')  # the first member (other dotted rules: not merged)
    assert key('[{"a": 1, "b":') != key('{"a": 1, "b":')  # one more open bracket to close
    assert key('[1, 2') == key('[3, 4, 5') != key('[[3, 4')
    assert key('{"a": "x') == key('{"b": "yz')
    assert key('{"a": "x') != key('["x')


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(GRAMMARS)), seed=st.integers(0, 10_000))
def test_shared_mask_cache_equals_fresh_walks(small_vocab, name, seed):
    """Masks served from the cache shared by all matchers (keyed by chart fingerprints) equal a
    walk computed for the state itself."""
    compiled = compile_for(GRAMMARS[name](), small_vocab)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        matcher = Matcher(compiled)
        for _ in range(8):
            state = matcher._states[-1]
            expected = np.zeros(compiled._words, dtype=np.uint32)
            compiled._engine.fill_mask(state, expected)
            assert np.array_equal(compiled._state_mask(state), expected)
            if not walk_to(matcher, small_vocab, rng, 1):
                break


def test_matchers_on_several_threads_share_one_bounded_mask_cache(byte_vocab):
    """Matchers on four threads share one compiled grammar whose mask cache (four entries) keeps
    evicting; every mask, EOS bit included, equals the one a matcher computes on its own."""
    sentences = [s.encode() for s in SENTENCES["json"]] * 4
    alone = {s: masks_along(compile_for(GRAMMARS["json"](), byte_vocab), s) for s in set(sentences)}
    shared = compile_for(GRAMMARS["json"](), byte_vocab, limits=Limits(max_cached_masks=4))
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda s: masks_along(shared, s), sentences))
    for sentence, rows in zip(sentences, found):
        assert all(np.array_equal(a, b) for a, b in zip(rows, alone[sentence], strict=True)), sentence
    assert len(shared._masks) <= 4


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), low=st.integers(0, 9), extra=st.integers(0, 20))
def test_masks_inside_long_counted_repeats_equal_brute_force(small_vocab, seed, low, extra):
    """Masks are walked from the widened lexer state (counts beyond the longest token forgotten):
    they must stay exact at every position, near both ends of the count included."""
    from leapgram import Grammar

    grammar = Grammar.from_lark(f'start: "{{" ITEM ("," ITEM)* "}}"\nITEM: /"[a-c1 ]{{{low},{low + extra}}}"/')
    matcher = Matcher(compile_for(grammar, small_vocab))
    rng = np.random.default_rng(seed)
    for _ in range(25):
        assert mask_set(matcher, small_vocab) == brute_force_allowed(matcher, small_vocab), matcher.num_tokens
        if not walk_to(matcher, small_vocab, rng, 1):
            break


def test_a_finished_matcher_gives_its_charts_to_the_next(small_vocab):
    """The chart arena of a dropped matcher (and all its forks) is reused by the next matcher of
    the same compiled grammar; a live fork keeps it; masks stay exact on a reused arena."""
    compiled = compile_for(GRAMMARS["json"](), small_vocab)
    first = Matcher(compiled)
    rng = np.random.default_rng(5)
    assert walk_to(first, small_vocab, rng, 2)
    arena = first._states[0][0]
    fork = first.fork()
    del first
    other = Matcher(compiled)
    assert other._states[0][0] is not arena  # the fork still holds it
    del fork
    again = Matcher(compiled)
    assert again._states[0][0] is arena
    for _ in range(12):
        assert mask_set(again, small_vocab) == brute_force_allowed(again, small_vocab)
        if not walk_to(again, small_vocab, rng, 1):
            break


def test_row_emptiness_budget_is_an_error_state_naming_the_limit(small_vocab):
    """Lexemes whose derivatives are intersections: a row's searches share one budget, and when
    it runs out the matcher enters its error state (no crash, no hang) naming the limit; with
    the default budget the same masks equal brute force. (Two patterns: a pattern with a length
    reads emptiness from the counts, no search: tests/parser/test_lexer_counted_product.py.)"""
    schema = {"anyOf": [{"type": "string", "allOf": [{"pattern": p}, {"pattern": q}]}
                        for p, q in (("a.*b", "b.*c"), ("c.*a", "ab"), ("ca", "a.*c"))]}
    grammar = Grammar.from_json_schema(schema)
    tight = Matcher(compile_for(grammar, small_vocab, limits=Limits(max_row_emptiness_steps=1)))
    tight.compute_mask()
    assert tight.is_error() and "max_row_emptiness_steps" in tight.error()
    matcher = Matcher(compile_for(grammar, small_vocab))
    assert not matcher.is_error()
    for _ in range(3):
        mask = mask_set(matcher, small_vocab)
        assert mask == brute_force_allowed(matcher, small_vocab)
        assert matcher.consume_token(min(t for t in mask if t not in small_vocab.eos_token_ids))


def test_masks_from_a_lexeme_walk_equal_whole_walks(llama3_vocab):
    """A string's mask is walked from the frontier of its lexer state's lexeme walk (made once,
    kept for every chart: ``CfgEngine._lexeme_walk``); the same masks as the whole walk, along
    several strings, in a first matcher and in a second one on another arena."""
    from leapgram.mask import engines

    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"},
                                               "c": {"type": "array", "items": {"type": "string"}}}}
    text = '{"a": "x y", "b": "he said \\"hi\\" é", "c": ["p", "q\\n", ""]}'
    tokens = llama3_vocab.encode(text.encode())
    grammar = Grammar.from_json_schema(schema)
    memo, whole = GrammarCompiler(llama3_vocab).compile(grammar), GrammarCompiler(llama3_vocab).compile(grammar)
    assert memo._engine is not whole._engine
    whole._engine._lexeme_walk = lambda trie, lex, stack: None
    for _ in range(2):
        fast, slow = Matcher(memo), Matcher(whole)
        for token in tokens:
            for matcher in (fast, slow):
                state = matcher._states[-1]
                matcher.compiled._masks.pop(matcher.compiled._engine.mask_key(state), None)
            assert np.array_equal(fast.compute_mask(), slow.compute_mask())
            assert fast.consume_token(token) and slow.consume_token(token)
    kept = [known for known in memo._engine._lexeme_walks.values() if known.__class__ is tuple]
    assert kept and all(len(frontier) % 2 == 0 for _, frontier in kept)
    assert len(memo._engine._lexeme_walks) <= engines.LEXEME_WALKS
    walks = sum(tokens.nbytes + frontier.nbytes for tokens, frontier in kept)
    assert memo._engine.lexeme_walk_bytes == walks > 0  # memory_of counts them beside the grammar's tables
    counted = memory_of([memo])
    memo._engine.lexeme_walk_bytes = 0
    assert counted - memory_of([memo]) == walks  # memory_of holds them
