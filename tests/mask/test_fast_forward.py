"""Forced bytes, fast-forward tokens and required-prefix (token healing) masks."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from conftest import SMALL_TOKENS, tokenizer_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leapgram import Grammar, Matcher, Vocabulary, allowed_tokens
from tests.helpers.cfg_grammars import GRAMMARS
from tests.helpers.compiling import compile_for
from tests.helpers.masks import REGEXES, brute_force_allowed, mask_set, walk_to

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
FORCING_REGEXES = [*REGEXES, r'\{"(orderId|orderName)": [0-9]+\}', r"(true|false|null)(, (true|null))*", r"é[ab]x"]
GRAMMAR_NAMES = sorted(GRAMMARS)


def make_grammar(kind: str, name: str) -> Grammar:
    return Grammar.from_regex(name) if kind == "regex" else GRAMMARS[name]()


grammars = st.one_of(st.tuples(st.just("regex"), st.sampled_from(FORCING_REGEXES)),
                     st.tuples(st.just("cfg"), st.sampled_from(GRAMMAR_NAMES)))


def forced_by_masks(matcher: Matcher, vocab: Vocabulary) -> bytes:
    """On the byte vocabulary: follow the masks while exactly one byte and no EOS is allowed."""
    out = b""
    consumed = 0
    while len(out) < 256:
        allowed = allowed_tokens(matcher.compute_mask(), vocab.size).tolist()
        if len(allowed) != 1 or allowed[0] in vocab.eos_token_ids:
            break
        out += vocab.token_bytes(allowed[0])
        assert matcher.consume_token(allowed[0])
        consumed += 1
    matcher.rollback(consumed)
    return out


@SETTINGS
@given(grammar=grammars, seed=st.integers(0, 10_000), steps=st.integers(0, 6))
def test_forced_bytes_follow_the_masks(byte_vocab, grammar, seed, steps):
    matcher = Matcher(compile_for(make_grammar(*grammar), byte_vocab))
    walk_to(matcher, byte_vocab, np.random.default_rng(seed), steps)
    assert matcher.forced_bytes() == forced_by_masks(matcher, byte_vocab)


@pytest.mark.parametrize("vocab_name", ["small_vocab", "byte_vocab"])
@SETTINGS
@given(grammar=grammars, seed=st.integers(0, 10_000), steps=st.integers(0, 5), depth=st.integers(0, 3))
def test_fast_forward_tokens_are_consumable(request, vocab_name, grammar, seed, steps, depth):
    vocab = request.getfixturevalue(vocab_name)
    matcher = Matcher(compile_for(make_grammar(*grammar), vocab), ff_backoff=depth)
    walk_to(matcher, vocab, np.random.default_rng(seed), steps)
    forced = matcher.forced_bytes()
    run = matcher.fast_forward_tokens()
    assert forced.startswith(vocab.decode(run))
    assert not any(vocab.is_special(t) for t in run)
    assert matcher.validate_tokens(run) == len(run)
    assert len(matcher.fast_forward_tokens(backoff=depth + 1)) <= len(run) <= len(matcher.fast_forward_tokens(0))


@pytest.mark.parametrize("vocab_name", ["small_vocab", "byte_vocab"])
@SETTINGS
@given(grammar=grammars, seed=st.integers(0, 10_000), steps=st.integers(1, 6))
def test_rollback_restores_mask_and_forced_bytes(request, vocab_name, grammar, seed, steps):
    vocab = request.getfixturevalue(vocab_name)
    matcher = Matcher(compile_for(make_grammar(*grammar), vocab))
    rng = np.random.default_rng(seed)
    seen = [(matcher.compute_mask().copy(), matcher.forced_bytes(), matcher.fast_forward_tokens())]
    for _ in range(steps):
        if not walk_to(matcher, vocab, rng, 1):
            break
        seen.append((matcher.compute_mask().copy(), matcher.forced_bytes(), matcher.fast_forward_tokens()))
    back = int(rng.integers(1, len(seen) + 1))
    matcher.rollback(back - 1)
    mask, forced, run = seen[len(seen) - back]
    assert np.array_equal(matcher.compute_mask(), mask)
    assert matcher.forced_bytes() == forced and matcher.fast_forward_tokens() == run
    matcher.rollback(matcher.num_tokens)
    assert np.array_equal(matcher.compute_mask(), seen[0][0]) and matcher.forced_bytes() == seen[0][1]


def test_forced_bytes_stop_where_eos_is_allowed(byte_vocab):
    matcher = Matcher(compile_for(Grammar.from_regex(r"ab(cd)?"), byte_vocab))
    assert matcher.forced_bytes() == b"ab"
    assert matcher.consume_tokens(b"ab") and matcher.forced_bytes() == b""
    assert matcher.consume_token(ord("c")) and matcher.forced_bytes() == b"d"
    assert matcher.consume_tokens([ord("d"), 256]) and matcher.forced_bytes() == b""


def test_forced_bytes_are_capped_by_the_limit(byte_vocab):
    from leapgram import Limits

    compiled = compile_for(Grammar.from_regex("abcdefghij(k|l)"), byte_vocab, limits=Limits(max_forced_bytes=4))
    matcher = Matcher(compiled)
    assert matcher.forced_bytes() == b"abcd"
    assert matcher.fast_forward_tokens() == list(b"ab")  # the last half of a capped run waits
    assert matcher.consume_tokens(b"abcdefgh") and matcher.forced_bytes() == b"ij"


def test_cfg_forced_bytes_cross_lexeme_boundaries(byte_vocab):
    matcher = Matcher(compile_for(GRAMMARS["json"](with_ws=False), byte_vocab))
    assert matcher.consume_tokens(b'{"a":t')
    assert matcher.forced_bytes() == b"rue"
    assert matcher.consume_tokens(b"rue,") and matcher.forced_bytes() == b'"'


@SETTINGS
@given(grammar=grammars, seed=st.integers(0, 10_000), steps=st.integers(0, 4),
       stem=st.sampled_from(sorted({t[:i] for t in SMALL_TOKENS for i in range(1, len(t))})))
def test_extension_check_equals_brute_force(small_vocab, grammar, seed, steps, stem):
    """``has_allowed_extension``: some token longer than ``stem`` that starts with it has its
    rest allowed from the state, exactly when one of the tokens, tried one by one, is."""
    from leapgram.mask.forced import advance_cursor, has_allowed_extension, trie_node

    matcher = Matcher(compile_for(make_grammar(*grammar), small_vocab))
    walk_to(matcher, small_vocab, np.random.default_rng(seed), steps)
    compiled = matcher.compiled
    cursor = (b"", matcher._states[-1])
    expected = any(advance_cursor(compiled._engine, cursor, t[len(stem):]) is not None
                   for t in SMALL_TOKENS if t.startswith(stem) and len(t) > len(stem))
    node = trie_node(compiled._trie, stem)
    assert has_allowed_extension(compiled._engine, compiled._trie, node, cursor, 10_000) == expected


# ---------------------------------------------------------------- required prefix (healing)


@pytest.mark.parametrize("vocab_name", ["small_vocab", "byte_vocab"])
@SETTINGS
@given(grammar=grammars, prefix=st.lists(st.sampled_from(SMALL_TOKENS), min_size=1, max_size=3).map(b"".join),
       seed=st.integers(0, 10_000), steps=st.integers(0, 3))
def test_required_prefix_masks_equal_brute_force(request, vocab_name, grammar, prefix, seed, steps):
    vocab = request.getfixturevalue(vocab_name)
    matcher = Matcher(compile_for(make_grammar(*grammar), vocab), required_prefix=prefix)
    rng = np.random.default_rng(seed)
    for _ in range(steps + 1):
        assert mask_set(matcher, vocab) == brute_force_allowed(matcher, vocab)
        if not walk_to(matcher, vocab, rng, 1):
            break


def test_required_prefix_then_grammar(small_vocab):
    matcher = Matcher(compile_for(Grammar.from_regex(r"bc[0-9]"), small_vocab), required_prefix=b" a")
    ids = {small_vocab.token_bytes(t): t for t in range(small_vocab.size)}
    allowed = {small_vocab.token_bytes(t) for t in mask_set(matcher, small_vocab)}
    assert allowed == {b" ", b" a", b" ab"}
    assert not matcher.is_accepting() and matcher.forced_bytes() == b" abc"
    assert matcher.consume_token(ids[b" "])
    allowed = {small_vocab.token_bytes(t) for t in mask_set(matcher, small_vocab)}
    assert allowed == {b"a", b"ab", b"abc"}
    matcher.rollback(1)
    assert matcher.consume_tokens([ids[b" a"], ids[b"bc"], ids[b"1"]]) and matcher.is_accepting()


# ---------------------------------------------------------------- real tokenizers


@pytest.mark.tokenizers
def test_llama3_order_is_not_forced_alone(llama3_vocab):
    compiled = compile_for(Grammar.from_regex(r'\{"(orderId|orderName)": [0-9]+\}'), llama3_vocab)
    matcher = Matcher(compiled)
    assert matcher.forced_bytes() == b'{"order'
    show = lambda ids: [llama3_vocab.token_bytes(t) for t in ids]
    assert show(matcher.fast_forward_tokens(0)) == [b'{"', b"order"]
    assert show(matcher.fast_forward_tokens()) == [b'{"']
    assert matcher.consume_tokens(matcher.fast_forward_tokens())
    assert matcher.fast_forward_tokens() == []


@pytest.mark.tokenizers
def test_llama3_long_forced_run_is_canonical_across_the_cap(llama3_vocab):
    text = "analytics_identifier " * 20  # forced runs longer than max_forced_bytes, cut mid-word
    matcher = Matcher(compile_for(Grammar.from_regex(re.escape(text)), llama3_vocab), ff_backoff=1)
    forwarded = []
    while run := matcher.fast_forward_tokens():
        forwarded += run
        assert matcher.consume_tokens(run)
    assert forwarded == llama3_vocab.encode(text.encode())


@pytest.mark.tokenizers
def test_llama3_back_off_settles_where_the_freed_bytes_merge_leftwards(llama3_vocab):
    """Compact JSON: ``Options":[]`` then ``,"`` or ``}``. The forced bytes tokenize as ... ``":``
    ``[]``; ``],"`` may start at ``]``, so ``[]`` is backed off, and with ``,"`` after it the
    tokenizer writes ``":[`` ``],"``: ``":`` is not canonical either and must go too."""
    grammar = Grammar.from_regex(r'\{"aggregationOptions":\[\](,"child":[0-9]+)?\}')
    matcher = Matcher(compile_for(grammar, llama3_vocab))
    show = lambda ids: [llama3_vocab.token_bytes(t) for t in ids]
    whole = llama3_vocab.encode(b'{"aggregationOptions":[],"child":1}')
    for depth in (1, 2, 4):
        run = matcher.fast_forward_tokens(depth)
        assert run == whole[:len(run)], (depth, show(run), show(whole))
        assert b'":' not in show(run)
    assert show(whole)[:len(matcher.fast_forward_tokens())] == show(matcher.fast_forward_tokens())


DOCUMENTS = [
    {"name_of_the_person": "John", "age": 42, "orderId": 7, "nested": {"tags": ["a", "bc"], "ok": True}},
    {"url": "https://x.org", "é_key": "café", "list": [1, 2.5, -3], "none": None, "z": ""},
]


def skeleton_regex(value) -> str:
    """A regex with the document's keys and punctuation, generic values."""
    if isinstance(value, dict):
        members = [re.escape(json.dumps(k, ensure_ascii=False) + ": ") + skeleton_regex(v) for k, v in value.items()]
        return r"\{" + re.escape(", ").join(members) + r"\}"
    if isinstance(value, list):
        return r"\[" + re.escape(", ").join(skeleton_regex(v) for v in value) + r"\]"
    if isinstance(value, bool) or value is None:
        return "(true|false|null)"
    return r'"[^"\\]*"' if isinstance(value, str) else r"-?[0-9]+(\.[0-9]+)?"


@pytest.mark.tokenizers
@pytest.mark.slow
@pytest.mark.parametrize("name", ["llama3", "qwen3", "mistral-v1"])
def test_fast_forward_tokens_are_canonical(name):
    """Walking documents by their own tokenization, every forced run (back-off 2) is the
    tokenizer's own tokens at that place, and the runs cover a good part of the document."""
    vocab = Vocabulary.from_tokenizer_json(tokenizer_path(name))
    forwarded = total = 0
    for document in DOCUMENTS:
        tokens = document_tokens(vocab, document)
        matcher = Matcher(compile_for(Grammar.from_regex(skeleton_regex(document)), vocab), ff_backoff=2)
        forwarded += walk_fast_forwarding(matcher, tokens)
        total += len(tokens)
    assert forwarded >= total // 4


def document_tokens(vocab: Vocabulary, document) -> list[int]:
    """The tokenizer's tokens of the document's ``json.dumps`` as a text on its own (after a
    newline that is cut off again, for tokenizers that add a space in front of a text)."""
    from leapgram.vocab.partial import encode_in_context

    return encode_in_context(vocab, json.dumps(document, ensure_ascii=False).encode(), vocab.encode(b"\n"))


def walk_fast_forwarding(matcher: Matcher, tokens: list[int]) -> int:
    """Walk ``tokens``, checking that every fast-forward run is the next tokens; returns how many
    tokens were fast-forwarded."""
    vocab = matcher.compiled.vocab
    forwarded = index = 0
    while index < len(tokens):
        run = matcher.fast_forward_tokens()
        assert run == tokens[index:index + len(run)], [vocab.token_bytes(t) for t in run]
        step = run or tokens[index:index + 1]
        forwarded += len(run)
        assert matcher.consume_tokens(step), matcher.error()
        index += len(step)
    return forwarded


@SETTINGS
@given(prompt=st.lists(st.integers(0, len(SMALL_TOKENS) - 1), min_size=1, max_size=6),
       pattern=st.sampled_from([r"[0-9]+", r"(ab|c)*1?", r" *(abc|ab|a)\n?", r'"[^"\\]*"']),
       seed=st.integers(0, 10_000))
def test_healed_prompt_and_generation_decode_to_prompt_and_output(small_vocab, prompt, pattern, seed):
    from leapgram import heal_prompt

    kept, prefix = heal_prompt(small_vocab, prompt, max_backoff=2)
    matcher = Matcher(compile_for(Grammar.from_regex(pattern), small_vocab), required_prefix=prefix)
    generated = walk_to(matcher, small_vocab, np.random.default_rng(seed), 8)
    text = small_vocab.decode(kept + generated)
    whole_prompt = small_vocab.decode(prompt)
    if matcher.is_accepting():
        assert text.startswith(whole_prompt)
        assert re.fullmatch(pattern.encode(), text[len(whole_prompt):])
    else:
        assert text.startswith(whole_prompt) or whole_prompt.startswith(text)


PERSON_LARK = r"""
start: "{\"name_of_the_person\": " STRING ", \"orderId\": " NUMBER (", \"orderName\": " STRING)? ", \"tags\": [" (STRING (", " STRING)*)? "]}"
STRING: /"[^"\\]*"/
NUMBER: /-?[0-9]+/
"""
PEOPLE = [{"name_of_the_person": "Ann", "orderId": 12, "orderName": "x y", "tags": ["a", "bc"]},
          {"name_of_the_person": "Jürgen Öz", "orderId": -3, "tags": []},
          {"name_of_the_person": "", "orderId": 0, "orderName": "", "tags": ["naïve café"]}]


@pytest.mark.tokenizers
@pytest.mark.slow
@pytest.mark.parametrize("name", ["llama3", "qwen3", "mistral-v1"])
def test_cfg_fast_forward_tokens_are_canonical(name):
    """The same on a Lark grammar: keys forced across lexeme boundaries, an optional member."""
    vocab = Vocabulary.from_tokenizer_json(tokenizer_path(name))
    compiled = compile_for(Grammar.from_lark(PERSON_LARK), vocab)
    forwarded = 0
    for person in PEOPLE:
        matcher = Matcher(compiled, ff_backoff=1)
        forwarded += walk_fast_forwarding(matcher, document_tokens(vocab, person))
        assert matcher.is_accepting()
    assert forwarded >= 10
