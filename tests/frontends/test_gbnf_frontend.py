"""The GBNF front end: grammars in the style of llama.cpp's ``grammars/`` folder, each piece of
syntax, the lexeme split, a differential test against independent references, and masks against
brute force.

References, written by hand from the same grammars: a Python regex for the regular grammars
(chess, list) and a Lark grammar parsed with Lark's scannerless-like ``dynamic_complete`` Earley
lexer (every split of the text into terminals is tried) for the recursive ones (json,
arithmetic, nested).
"""

from __future__ import annotations

import functools
import itertools
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from leapgram import Grammar, GrammarError, Matcher, Vocabulary, compile
from leapgram.frontends.gbnf import gbnf_to_ir

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mask"))
from mask_helpers import brute_force_allowed, mask_set, walk_to

lark = pytest.importorskip("lark")

# ----- grammars ------------------------------------------------------------------------------

JSON = r"""
# A JSON value, as in llama.cpp's grammars/json.gbnf
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [0-9]{0,15})? ws

# Optional space: after literal characters when allowed
ws ::= | " " | "\n" [ \t]{0,20}
"""

JSON_LARK = r"""
start: object
value: object | array | string | number | ("true" | "false" | "null") ws
object: "{" ws (string ":" ws value ("," ws string ":" ws value)*)? "}" ws
array: "[" ws (value ("," ws value)*)? "]" ws
string: "\"" (/[^"\\\x7F\x00-\x1F]/ | "\\" (/["\\bfnrt]/ | "u" HEX HEX HEX HEX))* "\"" ws
HEX: /[0-9a-fA-F]/
number: "-"? (DIGIT | /[1-9]/ DIGIT~0..15) ("." DIGIT+)? (/[eE]/ /[-+]/? DIGIT DIGIT~0..15)? ws
DIGIT: /[0-9]/
ws: | " " | "\n" /[ \t]/~0..20
"""

ARITHMETIC = r"""
root  ::= (expr "=" ws term "\n")+
expr  ::= term ([-+*/] term)*
term  ::= ident | num | "(" ws expr ")" ws
ident ::= [a-z] [a-z0-9_]* ws
num   ::= [0-9]+ ws
ws    ::= [ \t\n]*
"""

ARITHMETIC_LARK = r"""
start: (expr "=" ws term "\n")+
expr: term (/[-+*\/]/ term)*
term: ident | num | "(" ws expr ")" ws
ident: /[a-z]/ /[a-z0-9_]/* ws
num: /[0-9]/+ ws
ws: /[ \t\n]/*
"""

CHESS = r"""
# Numbered move pairs, a new line after each: 1. e4 e5
root ::= (
    "1. " move " " move "\n"
    ([1-9] [0-9]? ". " move " " move "\n")+
)
move    ::= (pawn | nonpawn | castle) [+#]?
pawn    ::= ([a-h] "x")? [a-h] [1-8] ("=" [NBKQR])?
nonpawn ::= [NBKQR] [a-h]? [1-8]? "x"? [a-h] [1-8]
castle  ::= "O-O" "-O"?
"""

_MOVE = r"(?:(?:[a-h]x)?[a-h][1-8](?:=[NBKQR])?|[NBKQR][a-h]?[1-8]?x?[a-h][1-8]|O-O(?:-O)?)[+#]?"
CHESS_REGEX = rf"1\. {_MOVE} {_MOVE}\n(?:[1-9][0-9]?\. {_MOVE} {_MOVE}\n)+"

LIST = r"""
root ::= item+
# Excludes various line break characters
item ::= "- " [^\r\n\x0b\x0c\x85\u2028\u2029]+ "\n"
"""

LIST_REGEX = "(?:- [^\r\n\x0b\x0c\x85\u2028\u2029]+\n)+"

NESTED = r"""
# Nested lists of quoted words: the word rule and the keywords become whole lexemes
root ::= list
list ::= "[" (elem ("," elem)*)? "]"
elem ::= list | word | "true" | "false"
word ::= "'" [a-z]* "'"
"""

NESTED_LARK = r"""
start: list
list: "[" (elem ("," elem)*)? "]"
elem: list | word | "true" | "false"
word: "'" /[a-z]/* "'"
"""

TRAP = r"""
# Greedy lexing of "ab" would reject "abb": the strings here must stay single characters
root ::= "(" root ")" | [a-z] "bb" | "ab" "c" | "a" "b"+
"""

TRAP_LARK = r"""
start: "(" start ")" | /[a-z]/ "bb" | "ab" "c" | "a" "b"+
"""

KEYS = r"""
# Fixed keys, as llama.cpp's JSON-Schema-to-GBNF converter writes them: keys and strings whole
root   ::= "{" ws kv-a "," ws kv-ab "}" ws
kv-a   ::= "\"a\"" ws ":" ws value
kv-ab  ::= "\"ab\"" ws ":" ws value
value  ::= "[" ws (value ("," ws value)*)? "]" ws | string
string ::= "\"" [^"\\]* "\"" ws
ws     ::= | " "
"""

KEYS_LARK = r"""
start: "{" ws kv_a "," ws kv_ab "}" ws
kv_a: "\"a\"" ws ":" ws value
kv_ab: "\"ab\"" ws ":" ws value
value: "[" ws (value ("," ws value)*)? "]" ws | string
string: "\"" /[^"\\]/* "\"" ws
ws: | " "
"""

SENTENCES = {
    "json": ['{}', '{"a": 1}', '{"key": [1, -2.5e+3, true, false, null, "x\\n\\u00e9"]}',
             '{\n  "a":{"b":[ ]} }', '{"é☃": "🙂"}'],
    "arithmetic": ["1+2=3\n", "(x *y1_2) -3 = z\n1=1\n", "f/(a+b)\t=\n0\n"],
    "chess": ["1. e4 e5\n2. Nf3 Nc6\n", "1. d4 d5\n2. c4 dxc4\n3. O-O-O Qxd8#\n10. exd8=Q+ Ke7\n"],
    "list": ["- one\n", "- milk\n- eggs ☃\n- tea\t(green)\n"],
    "nested": ["[]", "['a',[],['bc',true],false]", "[[[['']]]]"],
    "trap": ["abb", "abc", "ab", "abbbb", "(((zbb)))", "(ab)"],
    "keys": ['{"a":"","ab":"x"}', '{ "a" : [ "a" , [] ] , "ab":"é"} '],
}

BAD_SENTENCES = {
    "json": ['{"a" 1}', "[1]", '{"a": 01}', '{"a": tru}', '{"a": "\x01"}', '{"a": 1,}', '{} {}'],
    "arithmetic": ["1+2=3", "=3\n", "1++2=3\n", "A=1\n"],
    "chess": ["1. e4 e5\n", "1. e4 e5\n2. Nf9 Nc6\n", "1. e4 e5\n0. e4 e5\n"],
    "list": ["", "- \n", "-one\n", "- a\r\n"],
    "nested": ["['A']", "[,]", "['a'", "[tru]", "[] []"],
    "trap": ["a", "(abb", "cbbb", "abbc", "()"],
    "keys": ['{"ab":"","a":"x"}', '{"a":"","ab":"x" }x', '{"a":"","ab":"x"', '{"a":"","ab":"\\\""}'],
}

GRAMMARS = {"json": JSON, "arithmetic": ARITHMETIC, "chess": CHESS, "list": LIST, "nested": NESTED,
            "trap": TRAP, "keys": KEYS}
LARK_REFERENCES = {"json": JSON_LARK, "arithmetic": ARITHMETIC_LARK, "nested": NESTED_LARK, "trap": TRAP_LARK,
                   "keys": KEYS_LARK}
REGEX_REFERENCES = {"chess": CHESS_REGEX, "list": LIST_REGEX}


@functools.cache
def byte_compiled(name: str):
    return compile(Grammar.from_gbnf(GRAMMARS[name]), Vocabulary.byte_vocabulary())


def accepts(name: str, text: str) -> bool:
    matcher = Matcher(byte_compiled(name))
    return matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()


@functools.cache
def lark_parser(name: str):
    return lark.Lark(LARK_REFERENCES[name], parser="earley", lexer="dynamic_complete")


def reference_accepts(name: str, text: str) -> bool:
    if name in REGEX_REFERENCES:
        return re.fullmatch(REGEX_REFERENCES[name], text) is not None
    try:
        lark_parser(name).parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


# ----- whole grammars ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_sentences_accepted(name):
    for text in SENTENCES[name]:
        assert accepts(name, text), text
        assert reference_accepts(name, text), text


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_bad_sentences_rejected(name):
    for text in BAD_SENTENCES[name]:
        assert not accepts(name, text), text
        assert not reference_accepts(name, text), text


def test_eos_terminates_after_a_complete_output():
    vocab = Vocabulary.byte_vocabulary()
    matcher = Matcher(byte_compiled("json"))
    assert matcher.consume_tokens(list(b'{"a": 1}'))
    assert matcher.consume_token(vocab.eos_token_ids[0])
    assert matcher.is_terminated()


@pytest.mark.parametrize("name", ["chess", "list"])
def test_regular_grammars_become_one_regex(name):
    assert gbnf_to_ir(GRAMMARS[name]).is_regex


def test_safe_regular_rules_and_strings_become_whole_lexemes():
    names = {lexeme.name for lexeme in gbnf_to_ir(NESTED).lexemes}
    assert {"word", '"true"', '"false"', '"["', '"]"', '","'} <= names


def test_prefix_conflicts_keep_single_characters():
    lexemes = gbnf_to_ir(TRAP).lexemes
    assert all(len(lexeme.name) <= 5 for lexeme in lexemes), [lexeme.name for lexeme in lexemes]


def test_keys_and_strings_are_whole_lexemes():
    ir = gbnf_to_ir(KEYS)
    assert {'"\\"a\\""', '"\\"ab\\""'} <= {lexeme.name for lexeme in ir.lexemes}
    assert any(ir.pool.matches(lexeme.expr, b'"xyz"') for lexeme in ir.lexemes)


def test_json_strings_are_one_lexeme_and_numbers_single_characters():
    ir = gbnf_to_ir(JSON)
    whole = [lexeme for lexeme in ir.lexemes if ir.pool.matches(lexeme.expr, b'"a\\n\\u00e9"')]
    assert len(whole) == 1 and not ir.pool.matches(whole[0].expr, b'"a" ')   # the string, without ws
    assert not any(ir.pool.matches(lexeme.expr, b"12") for lexeme in ir.lexemes)   # "1" is a prefix of "12"
    assert any(ir.pool.matches(lexeme.expr, b"false") for lexeme in ir.lexemes)


# ----- syntax --------------------------------------------------------------------------------

SYNTAX_CASES = [
    ('root ::= "a" "b"', ["ab"], ["a", "abb", ""]),
    ('root ::= "a" | "b" | ', ["a", "b", ""], ["ab"]),
    ('root ::= ("a" | "bc")+', ["a", "bcabc", "aa"], ["", "b"]),
    ('root ::= [a-c]*', ["", "abcca"], ["d"]),
    ('root ::= [^a-c\\n]', ["d", "é", "☃", "🙂"], ["a", "\n", "dd"]),
    ('root ::= .', ["a", "\n", "🙂"], ["", "ab"]),
    ('root ::= "a"? "b"', ["b", "ab"], ["aab"]),
    ('root ::= "a"{3}', ["aaa"], ["aa", "aaaa"]),
    ('root ::= "a"{2,}', ["aa", "aaaaa"], ["a"]),
    ('root ::= "a"{1,3}', ["a", "aaa"], ["", "aaaa"]),
    ('root ::= "a"{0,1}"b"{ 2 , 2 }', ["bb", "abb"], ["b"]),
    ('root ::= "a"*?', ["", "aaa"], ["b"]),
    ('root ::= "\\n\\t\\r\\\\\\"\\[\\]"', ['\n\t\r\\"[]'], []),
    ('root ::= "\\x41\\u00e9\\U0001F642"', ["Aé🙂"], []),
    ('root ::= [\\x41-\\x43\\]\\\\]', ["A", "C", "]", "\\"], ["D"]),
    ('root ::= [-a]+ [a-]', ["--", "a-a"], ["b"]),
    ('root ::= "é" [☃-☄]', ["é☃", "é☄"], ["é☂"]),
    ('root ::= item-list\nitem-list ::= "x" "y"', ["xy"], []),
    ('# comment\nroot ::= a # after\n  "b"  # more\na ::=\n  "a"\n  | "c"\n', ["ab", "cb"], ["a"]),
    ('root ::= a\na ::= "(" a ")" | ', ["", "()", "(())"], ["(()"]),
    ('root ::= a b\na ::= "x" a | "x"\nb ::= [0-9]', ["x1", "xxx9"], ["1"]),
    ('root ::= []', [], ["", "a"]),
    ('root ::= [^]', ["a", "\n"], [""]),
]


@pytest.mark.parametrize("grammar, good, bad", SYNTAX_CASES)
def test_syntax(byte_vocab, grammar, good, bad):
    compiled = compile(Grammar.from_gbnf(grammar), byte_vocab)
    for text, expected in [(t, True) for t in good] + [(t, False) for t in bad]:
        matcher = Matcher(compiled)
        assert (matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()) == expected, text


@pytest.mark.parametrize("grammar", ['root ::= .', 'root ::= [^a]', 'root ::= "(" root ")" | .'])
def test_any_character_is_valid_utf8_only(byte_vocab, grammar):
    compiled = compile(Grammar.from_gbnf(grammar), byte_vocab)
    for data in (b"\xed\xa0\x80", b"\xc0\x80", b"\xff", b"\xf4\x90\x80\x80"):   # surrogate, overlong, ...
        matcher = Matcher(compiled)
        assert not (matcher.consume_tokens(list(data)) and matcher.is_accepting()), (grammar, data)


def test_unused_rules_are_checked_but_not_built():
    ir = gbnf_to_ir('root ::= "a" root | "b"\nunused ::= "zzz"')
    assert "unused" not in ir.nonterminals
    with pytest.raises(Exception, match="rule nope is used but not defined"):
        gbnf_to_ir('root ::= "a"\nunused ::= nope')


# ----- differential --------------------------------------------------------------------------

ALPHABETS = {
    "json": '{}[]":,. \n-+0123eE\\utrfalsnb\x01é',
    "arithmetic": "abz019_+-*/()= \n\t",
    "chess": "12345689. \nO-xabefhNBKQR=+#",
    "list": "- \nab☃\r\x0b",
    "nested": "[],'abtruefalsA",
    "trap": "()abcz",
    "keys": '{}[]",: ab\\',
}


def mutate(text: str, data, alphabet: str) -> str:
    for _ in range(data.draw(st.integers(0, 3))):
        op = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        at = data.draw(st.integers(0, len(text)))
        char = data.draw(st.sampled_from(alphabet))
        if op == "insert":
            text = text[:at] + char + text[at:]
        elif at < len(text):
            text = text[:at] + (char if op == "replace" else "") + text[at + 1:]
    return text


def check_differential(name: str, data) -> None:
    alphabet = ALPHABETS[name]
    if data.draw(st.booleans()):
        text = mutate(data.draw(st.sampled_from(SENTENCES[name])), data, alphabet)
    else:
        text = data.draw(st.text(alphabet=alphabet, max_size=10))
    assert accepts(name, text) == reference_accepts(name, text), text


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(GRAMMARS)), data=st.data())
def test_agrees_with_reference(name, data):
    check_differential(name, data)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(name=st.sampled_from(sorted(GRAMMARS)), data=st.data())
def test_agrees_with_reference_many(name, data):
    check_differential(name, data)


# ----- masks ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["json", "nested", "trap", "keys"])
def test_byte_vocab_masks_equal_brute_force_along_a_sentence(byte_vocab, name):
    matcher = Matcher(byte_compiled(name))
    for byte in SENTENCES[name][-1].encode():
        assert mask_set(matcher, byte_vocab) == brute_force_allowed(matcher, byte_vocab), matcher.num_tokens
        assert matcher.consume_token(byte)
    assert mask_set(matcher, byte_vocab) == brute_force_allowed(matcher, byte_vocab)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(GRAMMARS)), seed=st.integers(0, 10_000))
def test_small_vocab_random_walks_equal_brute_force(small_vocab, name, seed):
    matcher = Matcher(compile(Grammar.from_gbnf(GRAMMARS[name]), small_vocab))
    rng = np.random.default_rng(seed)
    for _ in range(8):
        assert mask_set(matcher, small_vocab) == brute_force_allowed(matcher, small_vocab)
        if not walk_to(matcher, small_vocab, rng, 1):
            break


# ----- random grammars: the lexeme split never changes the language ----------------------------


def random_item(data, depth: int, rules: int) -> tuple[str, str]:
    """One item as (GBNF, Lark) text over the letters a, b and the brackets ( )."""
    kind = data.draw(st.sampled_from(["lit", "class", "ref", "rep", "group"] if depth < 2 else ["lit", "class", "ref"]))
    if kind == "lit":
        text = data.draw(st.text(alphabet="ab()", min_size=1, max_size=3))
        return f'"{text}"', f'"{text}"'
    if kind == "class":
        chars = data.draw(st.sampled_from(["a", "ab", "b(", ")"]))
        body = "".join("\\" + c if c in "()" else c for c in chars)
        return f"[{chars}]", f"/[{body}]/"
    if kind == "ref":
        name = f"r{data.draw(st.integers(0, rules - 1))}"
        return name, name
    if kind == "rep":
        gbnf, lark_text = random_item(data, depth + 1, rules)
        op = data.draw(st.sampled_from("?*+"))
        return f"({gbnf}){op}", f"({lark_text}){op}"
    options = [random_sequence(data, depth + 1, rules) for _ in range(data.draw(st.integers(1, 2)))]
    return "(" + " | ".join(o[0] for o in options) + ")", "(" + " | ".join(o[1] for o in options) + ")"


def random_sequence(data, depth: int, rules: int) -> tuple[str, str]:
    items = [random_item(data, depth, rules) for _ in range(data.draw(st.integers(1, 3)))]
    return " ".join(i[0] for i in items), " ".join(i[1] for i in items)


SHORT_TEXTS = ["".join(chars) for n in range(5) for chars in itertools.product("ab()", repeat=n)]


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_random_grammars_agree_with_lark(data):
    """Every string of up to four characters, on random grammars whose strings, classes and
    rules overlap in every way (prefixes, shared characters, recursion)."""
    rules = data.draw(st.integers(1, 3))
    gbnf, lark_text = [], []
    for k in range(rules):
        options = [random_sequence(data, 0, rules) for _ in range(data.draw(st.integers(1, 3)))]
        gbnf.append(f"r{k} ::= " + " | ".join(o[0] for o in options))
        lark_text.append(f"r{k}: " + " | ".join(o[1] for o in options))
    try:
        compiled = compile(Grammar.from_gbnf("root ::= r0\n" + "\n".join(gbnf)), Vocabulary.byte_vocabulary())
    except GrammarError:
        return   # the start rule derives no string
    parser = lark.Lark("start: r0\n" + "\n".join(lark_text), parser="earley", lexer="dynamic_complete")
    accepted = 0
    for text in SHORT_TEXTS:
        matcher = Matcher(compiled)
        ours = matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()
        try:
            parser.parse(text)
            theirs = True
        except lark.exceptions.LarkError:
            theirs = False
        assert ours == theirs, (text, gbnf)
        accepted += ours
    note(f"accepted {accepted} of {len(SHORT_TEXTS)}")


@pytest.mark.tokenizers
@pytest.mark.parametrize("name", ["json", "keys", "chess"])
def test_llama3_masks_agree_with_consuming(llama3_vocab, name):
    vocab = llama3_vocab
    rng = np.random.default_rng(5)
    matcher = Matcher(compile(Grammar.from_gbnf(GRAMMARS[name]), vocab))
    for token in vocab.encode(SENTENCES[name][-1].encode()):
        allowed = set(mask_set(matcher, vocab))
        assert token in allowed
        probes = set(rng.choice(vocab.size, size=150, replace=False).tolist()) | set(sorted(allowed)[:150])
        for probe in probes:
            ok = matcher.consume_token(probe)
            assert ok == (probe in allowed), (probe, vocab.token_bytes(probe))
            matcher.rollback(1 if ok else 0)
        assert matcher.consume_token(token)
    assert matcher.is_accepting()
