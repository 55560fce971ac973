"""The slicer never changes a mask; it only skips walking what it proved allowed."""

from __future__ import annotations

import numpy as np
import pytest

from leapgram import Grammar, Matcher, Vocabulary
from leapgram.compiler import sliced_vocabulary, token_trie
from leapgram.mask.slicer import DEFAULT_SLICES, JSON_STRING_CHAR, contained_slices, slice_class
from leapgram.regex import ExprPool, parse_regex
from leapgram.regex.expr import INF, K_OR
from tests.helpers.compiling import compile_for
from tests.helpers.masks import walk_to

SLICES = tuple(slice_class(char, count) for char, count in DEFAULT_SLICES)
STRINGY = [
    r'"[^"\\]*"',
    r'"([^"\\]|\\["\\/bfnrt])*"',
    r'"[^"\\\x00-\x1f]{0,20}"',
    r'"[a-z ]*"',
    r".*",
    r"(.{0,12}|[0-9]+)x",
    r"[^\n]{5,40}\n",
    r"(?s).*",
    r'"[^"\\]{0,500}"',
    r'"[^"\\]{2,127}"',
    r'"[^"\\]{0,128}"',
]


def contained(pattern: str, prefix: bytes = b"") -> tuple[bool, ...]:
    pool = ExprPool()
    expr = pool.derivative_bytes(parse_regex(pattern, pool), prefix)
    return contained_slices(pool, expr, SLICES)


def slices_met(vocab, schema, text: str) -> list[tuple[bool, ...]]:
    """Walk ``text`` under ``schema`` with and without the slicer, asserting equal masks at every
    token; per token, which slices were contained."""
    sliced = Matcher(compile_for(Grammar.from_json_schema(schema), vocab))
    plain = Matcher(compile_for(Grammar.from_json_schema(schema), vocab, use_slicer=False))
    met = []
    for token in vocab.encode(text.encode()):
        assert np.array_equal(sliced.compute_mask(), plain.compute_mask())
        met.append(sliced.compiled._engine.slicer.contained(sliced._states[-1][2]))
        assert sliced.consume_token(token) and plain.consume_token(token)
    return met


@pytest.mark.parametrize("pattern, prefix, expected", [
    (r'"[^"\\]*"', b'"', (True, True, True)),
    (r'"[^"\\]*"', b"", (False, False, False)),
    (r'"[^"\\]{0,20}"', b'"', (True, False, False)),
    (r'"[^"\\]{0,30}"', b'"abc', (True, False, False)),
    (r'"[^"\\]{0,40}"', b'"', (True, True, False)),
    (r".*", b"", (True, True, True)),
    (r"[a-z]*", b"", (False, False, False)),
    (r"[^\x00-\x08]*", b"", (True, True, True)),
    (r"[^é]*", b"", (False, False, False)),
    (r'(\d+|[^"]*)', b"", (True, True, True)),
    (r"x.*", b"x", (True, True, True)),
])
def test_containment_decisions(pattern, prefix, expected):
    assert contained(pattern, prefix) == expected


def test_is_subset_exact_on_expressions():
    pool = ExprPool()
    dot = parse_regex(".", pool)
    json_char = parse_regex(JSON_STRING_CHAR, pool)
    word = parse_regex(r"\w", pool)
    alt = parse_regex(r"(é|[a-z]|[^a-z])", pool)
    assert pool.is_subset(json_char, dot) and not pool.is_subset(dot, json_char)
    assert pool.is_subset(word, dot) and not pool.is_subset(json_char, word)
    assert pool.is_subset(dot, alt) and pool.is_subset(alt, parse_regex("(?s).", pool))


def test_slices_partition_the_vocabulary(llama3_vocab):
    sliced = sliced_vocabulary(llama3_vocab)
    words = (llama3_vocab.size + 31) // 32
    total = np.zeros(words, dtype=np.uint32)
    for slice_ in sliced.slices:
        assert not (total & slice_.mask).any(), "slices are disjoint"
        total |= slice_.mask
    in_slices = int(np.unpackbits(total.view(np.uint8)).sum())
    trie_tokens = lambda trie: int((trie.node_token >= 0).sum()) + len(trie.dup_other)
    assert in_slices == sum(trie_tokens(s.trie) for s in sliced.slices)
    assert in_slices + trie_tokens(sliced.rest) == trie_tokens(token_trie(llama3_vocab))
    assert in_slices > 0.9 * llama3_vocab.size


def masks_with_and_without_slicer(vocab: Vocabulary, pattern: str, seed: int, steps: int):
    sliced = Matcher(compile_for(Grammar.from_regex(pattern), vocab, use_slicer=True))
    plain = Matcher(compile_for(Grammar.from_regex(pattern), vocab, use_slicer=False))
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        yield sliced.compute_mask(), plain.compute_mask()
        taken = walk_to(plain, vocab, rng, 1)
        if not taken:
            break
        assert sliced.consume_token(taken[0])


@pytest.mark.parametrize("pattern", STRINGY)
def test_slicer_masks_equal_plain_masks_llama3(llama3_vocab, pattern):
    for with_slicer, without in masks_with_and_without_slicer(llama3_vocab, pattern, 7, 5):
        assert np.array_equal(with_slicer, without), pattern


@pytest.mark.parametrize("pattern", STRINGY)
def test_slicer_masks_equal_plain_masks_small(small_vocab, pattern):
    for with_slicer, without in masks_with_and_without_slicer(small_vocab, pattern, 8, 6):
        assert np.array_equal(with_slicer, without), pattern


def test_bounded_string_uses_only_short_slice(llama3_vocab):
    compiled = compile_for(Grammar.from_regex(r'"[^"\\]{0,15}"'), llama3_vocab)
    matcher = Matcher(compiled)
    assert matcher.consume_token(llama3_vocab.encode(b'"')[0])
    state = matcher._states[-1]
    assert compiled._engine.slicer.contained(state) == (True, False, False)
    assert INF == SLICES[2].max_count


@pytest.mark.parametrize("second, expected", [
    (r'[^"\\]*(a|é)*"', (True, True, True)),   # both unbounded over Y, and they meet
    (r'[a-z]*"', (False, False, False)),         # Y ⊄ [a-z]
    (r'[^"\\]{0,40}"', (True, True, False)),  # bounded: the slices of at most 40 characters
    (r'[^"\\]*[^"\\\n][^"\\]*"', (True, True, True)),  # no common tail: a string with some character
    (r'[^"\\]*a[^"\\]*b"', (True, True, True)),   # must still write a, then end in b
    (r'[^"\\]*"x', (False, False, False)),  # no string ends both in " and in "x: empty
])
def test_containment_in_an_intersection_of_strings(second, expected):
    """A key that is a JSON string and must also match a pattern: ``X1* T1 ∩ X2* T2``."""
    pool = ExprPool()
    first = parse_regex(r'[^"\\]*"', pool)
    both = pool.intersect([first, parse_regex(second, pool)])
    assert contained_slices(pool, both, SLICES) == expected


def test_containment_in_an_intersection_with_excluded_names():
    """``string ∩ pattern ∩ ¬{names}``: the finite names never stop a slice; an empty
    intersection contains none."""
    pool = ExprPool()
    string = parse_regex(r'[^"\\]*"', pool)
    some = parse_regex(r'[^"\\]*[^"\\\n][^"\\]*"', pool)
    names = parse_regex(r'(a|bc)"', pool)
    key = pool.intersect([string, some, pool.complement(names)])
    assert contained_slices(pool, key, SLICES) == (True,) * 3
    after = pool.derivative_bytes(key, b"D")  # the pattern's part is now a union: done, or not yet
    assert pool.kind[pool.args[after][1]] == K_OR or pool.kind[pool.args[after][0]] == K_OR
    assert contained_slices(pool, after, SLICES) == (True,) * 3
    escape = pool.derivative_bytes(key, b"\\")  # inside an escape: no unbounded head, not contained
    assert contained_slices(pool, escape, SLICES) == (False,) * 3
    nothing = pool.intersect([string, parse_regex(r'[^"\\]*x', pool)])  # never ends in a quote
    assert contained_slices(pool, nothing, SLICES) == (False,) * 3


@pytest.mark.parametrize("pattern", [".+", "^.+$", "[a-z]", "^x-"])
def test_slicer_keeps_masks_at_pattern_keys_without_a_common_tail(llama3_vocab, pattern):
    """Keys under ``patternProperties`` whose pattern asks for some character (``.+`` is a key
    with one character that is not a line terminator): the masks equal those without the slicer."""
    schema = {"type": "object", "patternProperties": {pattern: {"type": ["string", "number", "null"]}},
              "additionalProperties": False}
    text = '{"x-DB_HOST": "db", "x-\\u00e9": 1, "x-port number": null}'
    assert any(any(contained) for contained in slices_met(llama3_vocab, schema, text))


def test_slicer_keeps_masks_at_keys_that_match_a_pattern(llama3_vocab):
    """``patternProperties: {".*": ...}`` makes keys ``string ∩ pattern``: slices contained, same
    masks as without the slicer."""
    schema = {"type": "object", "patternProperties": {".*": {"type": "number"}}}
    text = '{"temperature": 25, "humidity at night": 60}'
    assert any(all(contained) for contained in slices_met(llama3_vocab, schema, text))


@pytest.mark.parametrize("bound, expected", [
    (127, (True, True, False)), (128, (True, True, True)), (500, (True, True, True)),
])
def test_bounded_string_contains_slices_as_long_as_their_tokens(llama3_vocab, bound, expected):
    """No Llama-3 token is longer than 128 bytes, so once the slices exist a string of at most
    128 characters contains the unbounded slice too (its tokens are prefixes of ``Y{1,128}``)."""
    assert sliced_vocabulary(llama3_vocab).slices[2].longest == 128
    compiled = compile_for(Grammar.from_regex(f'"[^"\\\\]{{0,{bound}}}"'), llama3_vocab)
    matcher = Matcher(compiled)
    assert matcher.consume_token(llama3_vocab.encode(b'"')[0])
    assert compiled._engine.slicer.contained(matcher._states[-1]) == expected


@pytest.mark.parametrize("inner, expected", [
    (r'[^"\\\n]|\\.', True), (r'[^"\\]|\\["\\/bfnrt]|\\u[0-9a-f]{4}', True), (r"[a-z]|\\.", False),
    (r"[^\x80-\U0010FFFF]|é", False), (r"[\x00-\U0010FFFF]|a", True),
])
def test_quick_class_inclusion_agrees_with_automata(inner, expected):
    from leapgram.regex.utf8 import _pieces_included, ranges_to_expr

    pool = ExprPool()
    x = parse_regex(inner, pool)
    char = slice_class(JSON_STRING_CHAR, 10).char
    exact = pool.is_subset(ranges_to_expr(pool, char), x)
    assert exact == expected
    quick = _pieces_included(pool, char, pool.args[x])
    assert quick <= exact  # sufficient, never wrong
    assert quick or not expected or "U0010FFFF" in inner  # and it decides the JSON string bodies


def test_slicer_keeps_masks_at_keys_that_exclude_declared_names(llama3_vocab):
    """Undeclared keys are ``string ∩ ¬{declared}``: the slices are contained there (the string
    goes on without bound), and the masks are the same with and without the slicer."""
    schema = {"type": "object", "properties": {"bookmark": {"type": "integer"}, "name": {"type": "string"}}}
    text = '{"bookmark": 1, "name": "x", "bookmarkThumbWidth": 2, "other key with spaces": [true]}'  # undeclared keys last
    assert any(any(contained) for contained in slices_met(llama3_vocab, schema, text))


def test_schema_pools_start_with_the_slice_checks_of_the_string_character():
    """The JSON Schema base pool decides ``Y ⊆ X`` for the slicer's string character and the
    repeats of the string lexemes (remembered in its memo, so every schema's copy knows it);
    the answers equal a fresh decision, and the front end's copy of the character is the
    slicer's."""
    from leapgram.frontends.json_schema.common import SLICE_CHAR, schema_pool
    from leapgram.limits import Limits
    from leapgram.mask.slicer import JSON_STRING_CHAR
    from leapgram.regex.utf8 import _class_within

    assert SLICE_CHAR == JSON_STRING_CHAR
    pool = schema_pool(Limits())
    known = {key: value for key, value in pool.memo.items() if key[0] == "class within"}
    assert any(known.values())
    for (_, char, inner), value in known.items():
        assert _class_within(pool, char, inner) == value


def test_containment_in_a_bounded_string_under_a_pattern():
    """``(C{3,255} ∩ C* X+ C*) "``, a JSON string with ``minLength``, ``maxLength`` and an
    unanchored ``pattern``, right after its opening quote: the bounded head is kept as
    ``C{3,255-n}``, so the slices of at most ``n`` characters are contained, the unbounded one
    is not; a bound below the slice's count contains none."""
    pool = ExprPool()
    char = r'[^"\\\x00-\x1F\x7F]'
    pattern = parse_regex(f"{char}*[a-z]+{char}*", pool)
    for high, expected in ((255, (True, True, False)), (20, (True, False, False)), (12, (False, False, False))):
        content = pool.intersect([pool.repeat(parse_regex(char, pool), 3, high), pattern])
        state = pool.concat(content, parse_regex('"', pool))
        assert contained_slices(pool, state, SLICES) == expected, high


def test_key_states_take_the_answer_of_their_string_once():
    """The states along an object's names (the names' tails beside ``string ∩ ¬names``) are
    decided as the OR of their expressions' answers, the other key's from its string's answer,
    kept per string (``SliceChecker._unbounded``): the same answers as deciding each alone."""
    from leapgram.mask.slicer import SliceChecker
    from leapgram.regex.expr import EMPTY

    pool = ExprPool()
    string = parse_regex(r'"[^"\\]*"', pool)
    names = [pool.literal(b'"' + name + b'"') for name in (b"kind", b"key", b"metadata")]
    key = pool.intersect([string, pool.complement(pool.alt(names))])
    checker = SliceChecker(pool, lambda state: (), lambda: None)
    for prefix in (b'"', b'"k', b'"ke', b'"m', b'"meta', b'"x'):
        tails = [t for t in (pool.derivative_bytes(name, prefix) for name in names) if t != EMPTY]
        exprs = (*tails, pool.derivative_bytes(key, prefix))
        expected = tuple(map(any, zip(*(contained_slices(pool, e, SLICES) for e in exprs))))
        assert checker._decide_exprs(exprs, SLICES) == expected == (True,) * 3
    assert len(checker._unbounded[False]) == 1  # the string after the quote, decided once


def test_key_states_with_a_shadow_take_the_answer_of_their_expression(llama3_vocab):
    """A key other than the declared names is kept as its string with the names as a shadow
    (``Lexer._shadow_split``); the slicer reads it as ``~P'`` (``Lexer.slice_exprs``) and
    decides it from ``P'``: the answers equal those for the expressions ``P' ∩ ¬Q'``."""
    from leapgram.mask.slicer import SliceChecker

    schema = {"type": "object", "properties": {"bookmark": {"type": "integer"}, "name": {"type": "string"}}}
    text = '{"bookmark": 1, "name": "x", "bookmarkThumbWidth": 2, "nam": [true], "other key": 3}'
    matcher = Matcher(compile_for(Grammar.from_json_schema(schema), llama3_vocab))
    for token in llama3_vocab.encode(text.encode()):
        matcher.compute_mask()
        assert matcher.consume_token(token)
    lexer = matcher.compiled._engine.lexer
    slicer = matcher.compiled._engine.slicer
    plain = SliceChecker(lexer.pool, lambda state: tuple(e for _, e in lexer.plain_items(state)), lambda: None)
    shadowed = [s for s in range(1, lexer.num_states) if any(lex < 0 for lex, _ in lexer.items(s))]
    assert len(shadowed) >= 5
    for state in shadowed:
        assert slicer._decide_exprs(lexer.slice_exprs(state), SLICES) == \
            plain._decide_exprs(plain.exprs_of(state), SLICES), lexer.plain_items(state)


def test_a_row_dead_on_a_probe_byte_contains_no_slice(llama3_vocab):
    """``probe_bytes``: a lexer state whose row is dead on either byte contains no slice (the
    walk then skips ``SliceChecker.split``); the rule agrees with the full decision at every
    state the instances reach, and some of those states are ruled out by it."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "kind": {"enum": ["Quick", "%slow"]},
                                               "n": {"type": "number"}}, "required": ["name", "kind", "n"]}
    compiled = compile_for(Grammar.from_json_schema(schema), llama3_vocab)
    matcher = Matcher(compiled)
    for token in llama3_vocab.encode(b'{"name": "Q% a quick string", "kind": "%slow", "n": -1.5e3}'):
        matcher.compute_mask()
        assert matcher.consume_token(token)
    engine = compiled._engine
    first, second = engine.slicer.probe_bytes
    lexer = engine.lexer
    ruled_out = 0
    for state in range(1, lexer.num_states):
        if lexer.trans[state, 0] < 0:  # a row not computed
            continue
        if lexer.trans[state, first] == 0 or lexer.trans[state, second] == 0:
            ruled_out += 1
            assert not any(engine.slicer.contained(state))
    assert ruled_out > 10


def test_probe_bytes_start_every_slice():
    from leapgram.mask.slicer import probe_bytes

    assert probe_bytes(SLICES) == (ord("Q"), ord("%"))
    digits = (slice_class("[0-9]", 10),)
    assert probe_bytes(digits) == (ord("0"), ord("1"))
    assert probe_bytes((slice_class("[a]", 10), slice_class("[b]", 10))) is None  # no byte starts both
