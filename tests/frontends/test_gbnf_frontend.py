"""GBNF front end: sentences, an independent reference on random strings, and masks."""

from __future__ import annotations

import random
from functools import cache

import numpy as np
import pytest

from leapgram import Grammar, GrammarError, Matcher, Vocabulary
from leapgram.frontends.gbnf import gbnf_to_ir, greedy_conflicts
from tests.helpers.compiling import compile_for
from tests.helpers.gbnf_grammars import ALPHABETS, ARITHMETIC_LARK, CHESS_RE, GRAMMARS, JSON_LARK, LIST_RE
from tests.helpers.masks import brute_force_allowed, mask_set, walk_to

lark = pytest.importorskip("lark")


@cache
def compiled(name: str, vocab: Vocabulary):
    return compile_for(Grammar.from_gbnf(GRAMMARS[name][0]), vocab)


def accepts(name: str, vocab: Vocabulary, text: str) -> bool:
    matcher = Matcher(compiled(name, vocab))
    return matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()


@cache
def lark_parser(source: str):
    return lark.Lark(source, start="root", parser="earley", lexer="dynamic_complete")


def reference_accepts(name: str, text: str) -> bool:
    if name == "chess":
        return CHESS_RE.fullmatch(text) is not None
    if name == "list":
        return LIST_RE.fullmatch(text) is not None
    try:
        lark_parser(JSON_LARK if name == "json" else ARITHMETIC_LARK).parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_sentences_accepted_then_eos(byte_vocab, name):
    for sentence in GRAMMARS[name][1]:
        matcher = Matcher(compiled(name, byte_vocab))
        assert matcher.consume_tokens(list(sentence.encode())), (sentence, matcher.error())
        assert matcher.is_accepting(), sentence
        assert matcher.consume_token(byte_vocab.eos_token_ids[0])


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_bad_sentences_rejected(byte_vocab, name):
    for sentence in GRAMMARS[name][2]:
        assert not accepts(name, byte_vocab, sentence), sentence


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_samples_agree_with_the_reference(name):
    _, good, bad = GRAMMARS[name]
    assert all(reference_accepts(name, s) for s in good)
    assert not any(reference_accepts(name, s) for s in bad)


def test_regular_grammars_are_one_regex():
    for name in ("chess", "list"):
        assert Grammar.from_gbnf(GRAMMARS[name][0]).ir.is_regex
    assert not Grammar.from_gbnf(GRAMMARS["json"][0]).ir.is_regex


def test_json_keeps_whole_values_as_lexemes():
    names = {lexeme.name for lexeme in Grammar.from_gbnf(GRAMMARS["json"][0]).ir.lexemes}
    assert {"string", "number", '"{" ws'} <= names


@pytest.mark.parametrize("name", ["json", "arithmetic"])
def test_chosen_lexemes_are_greedy_safe(name):
    assert not greedy_conflicts(gbnf_to_ir(GRAMMARS[name][0]))


def random_strings(name: str, count: int, seed: int) -> list[str]:
    """Mutations of the sample sentences and short strings over the grammar's alphabet."""
    rng = random.Random(seed)
    alphabet = ALPHABETS[name]
    samples = GRAMMARS[name][1] + GRAMMARS[name][2]
    out = []
    for _ in range(count):
        if rng.random() < 0.3:
            out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))))
            continue
        text = list(rng.choice(samples))
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(text))
            op = rng.random()
            if op < 0.4:
                text.insert(at, rng.choice(alphabet))
            elif op < 0.7 and at < len(text):
                del text[at]
            elif at < len(text):
                text[at] = rng.choice(alphabet)
        out.append("".join(text))
    return out


def differential(name: str, vocab: Vocabulary, count: int, seed: int) -> None:
    agreed = 0
    for text in random_strings(name, count, seed):
        expected = reference_accepts(name, text)
        assert accepts(name, vocab, text) == expected, (name, text, expected)
        agreed += expected
    assert agreed > 0, "no random string was in the language: the test is too weak"


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_random_strings_agree_with_the_reference(byte_vocab, name):
    differential(name, byte_vocab, 120, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(GRAMMARS))
@pytest.mark.parametrize("seed", [2, 3, 4])
def test_more_random_strings_agree_with_the_reference(byte_vocab, name, seed):
    differential(name, byte_vocab, 600, seed=seed)


TRICKY = [
    # a greedy lexer would read "aa" as one lexeme and never see the separate "a"
    ('root ::= x "a"\nx ::= "a"+ | "(" root ")"', ["aa", "aaa", "(aa)a"], ["a", "(a)a", ""]),
    # ("ab" | "a") "bc": the short branch must stay reachable
    ('root ::= ("ab" | "a") "bc" | "(" root ")"', ["abc", "abbc", "(abc)"], ["ab", "abcbc"]),
    # trailing whitespace that the next literal also starts with
    ('root ::= t "\\n" | "[" root "]" ws "\\n"\nt ::= [a-z]+ ws\nws ::= [ \\n]*', ["ab\n", "ab \n\n", "[a\n] \n\n"],
     ["ab", "[a\n]"]),
]


@pytest.mark.parametrize("grammar, good, bad", TRICKY)
def test_languages_a_greedy_lexer_would_change(byte_vocab, grammar, good, bad):
    compiled_grammar = compile_for(Grammar.from_gbnf(grammar), byte_vocab)
    for text, expected in [(t, True) for t in good] + [(t, False) for t in bad]:
        matcher = Matcher(compiled_grammar)
        assert (matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()) == expected, text


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_byte_masks_equal_brute_force_along_sentences(byte_vocab, name):
    for sentence in GRAMMARS[name][1][:3]:
        matcher = Matcher(compiled(name, byte_vocab))
        for byte in sentence.encode():
            assert mask_set(matcher, byte_vocab) == brute_force_allowed(matcher, byte_vocab), sentence
            assert matcher.consume_token(byte)
        assert mask_set(matcher, byte_vocab) == brute_force_allowed(matcher, byte_vocab)


@pytest.mark.parametrize("name", sorted(GRAMMARS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_small_vocab_masks_equal_brute_force_on_random_walks(small_vocab, name, seed):
    matcher = Matcher(compiled(name, small_vocab))
    rng = np.random.default_rng(seed)
    for _ in range(12):
        assert mask_set(matcher, small_vocab) == brute_force_allowed(matcher, small_vocab)
        if not walk_to(matcher, small_vocab, rng, 1):
            break


# ----- random grammars: the whole language up to a length, against Lark ------------------------

ALPHABET = "ab("


def random_item(rng: random.Random, rules: int, depth: int) -> tuple[str, str]:
    """One item as (GBNF text, Lark text)."""
    roll = rng.random()
    if roll < 0.35:
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 2)))
        return f'"{text}"', f'"{text}"'
    if roll < 0.45:
        return "[ab]", "/[ab]/"
    if roll < 0.75 or depth > 1:
        name = f"r{rng.randrange(rules)}"
        return name, name
    inner = [random_item(rng, rules, depth + 1) for _ in range(rng.randint(1, 2))]
    op = rng.choice(["?", "*", "+", ""])
    return ("(" + " ".join(g for g, _ in inner) + ")" + op, "(" + " ".join(lk for _, lk in inner) + ")" + op)


def random_grammar(seed: int) -> tuple[str, str]:
    rng = random.Random(seed)
    rules = rng.randint(1, 3)
    gbnf, lark_text = [], []
    for r in range(rules):
        options = []
        for _ in range(rng.randint(1, 2)):
            options.append([random_item(rng, rules, 0) for _ in range(rng.randint(1, 3))])
        if r == 0 and rules > 1:
            options.append([('"b"', '"b"')])  # keeps r0 productive more often
        gbnf.append(f"r{r} ::= " + " | ".join(" ".join(g for g, _ in o) for o in options))
        lark_text.append(f"r{r}: " + " | ".join(" ".join(lk for _, lk in o) for o in options))
    return "\n".join(gbnf), "\n".join(lark_text)


def all_strings(alphabet: str, max_length: int) -> list[str]:
    out = [""]
    frontier = [""]
    for _ in range(max_length):
        frontier = [s + ch for s in frontier for ch in alphabet]
        out.extend(frontier)
    return out


def check_random_grammar(seed: int, vocab: Vocabulary, max_length: int) -> None:
    gbnf, lark_text = random_grammar(seed)
    try:
        grammar = Grammar.from_gbnf(gbnf, start="r0")
    except GrammarError as err:
        assert "derives no string" in err.message, err
        return
    parser = lark.Lark(lark_text, start="r0", parser="earley", lexer="dynamic_complete")
    compiled_grammar = compile_for(grammar, vocab)
    for text in all_strings(ALPHABET, max_length):
        try:
            parser.parse(text)
            expected = True
        except lark.exceptions.LarkError:
            expected = False
        matcher = Matcher(compiled_grammar)
        got = matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()
        assert got == expected, (gbnf, text, expected)


@pytest.mark.parametrize("seed", range(25))
def test_random_grammars_match_lark_on_every_short_string(byte_vocab, seed):
    check_random_grammar(seed, byte_vocab, 4)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(25, 200))
def test_more_random_grammars_match_lark_on_every_short_string(byte_vocab, seed):
    check_random_grammar(seed, byte_vocab, 5)


def nested_objects_grammar(depth: int) -> str:
    rules = ['root ::= obj0', 'ws ::= [ \\t\\n]*', 'string ::= "\\"" [^"\\\\]* "\\"" ws',
             'num ::= "-"? [0-9]+ ("." [0-9]+)? ws', 'value ::= obj0 | string | num | "[" ws (value ("," ws value)*)? "]" ws']
    for i in range(depth):
        inner = f"obj{i + 1}" if i < depth - 1 else "value"
        rules.append(f'obj{i} ::= "{{" ws "\\"k{i}\\"" ws ":" ws {inner} ("," ws "\\"x{i}\\"" ws ":" ws string)? "}}" ws')
    return "\n".join(rules)


def test_nested_contexts_keep_strings_whole(byte_vocab):
    """Splitting runs from the front resolves ``","`` against ``"," ws "x0" ...`` without
    breaking ``string`` into characters."""
    grammar = Grammar.from_gbnf(nested_objects_grammar(6))
    assert "string" in {lexeme.name for lexeme in grammar.ir.lexemes}
    compiled_grammar = compile_for(grammar, byte_vocab)
    good = '{"k0": {"k1": {"k2": {"k3": {"k4": {"k5": [1, "a", {"k0":{"k1":{"k2":{"k3":{"k4":{"k5":2}}}}}}]}}}}, "x1": "s"}}'
    for text, expected in [(good, True), (good[:-1], False), (good.replace('"x1"', '"x2"'), False)]:
        matcher = Matcher(compiled_grammar)
        assert (matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()) == expected, text
