"""The Lark front end: the IR of real grammars, each piece of syntax, and a differential test
against Lark itself.

The differential harness feeds the same text to leapgram (a byte vocabulary, one byte per token,
then ``is_accepting()``) and to ``lark.Lark``. Sentences come from Lark's own compiled view of the
grammar (its BNF rules and terminal regexes, expanded at random with a depth bound), plus random
mutations of them and short random strings.

Intended differences (see :mod:`leapgram.frontends.lark`): leapgram's lexer is greedy over the
lexemes the parser allows at each point, so a keyword is reserved only where the parser could take
it. Lark's ``basic`` lexer reserves keywords everywhere, its ``dynamic`` lexer is not greedy across
terminals. Each grammar names the Lark configuration that agrees with leapgram on it, and the
sentence generator never draws a keyword as a regex terminal (``else`` as a ``NAME``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import tokenizer_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import leapgram
from leapgram import Grammar, Matcher, UnsupportedError, Vocabulary
from leapgram.frontends.lark import lark_to_ir
from leapgram.frontends.lark_common import COMMON_TERMINALS
from leapgram.regex import fullmatch
from tests.helpers.compiling import compile_for

lark = pytest.importorskip("lark")

# ----- grammars ------------------------------------------------------------------------------

JSON = r"""
?start: value

?value: object
      | array
      | string
      | SIGNED_NUMBER      -> number
      | "true"             -> true
      | "false"            -> false
      | "null"             -> null

array  : "[" [value ("," value)*] "]"
object : "{" [pair ("," pair)*] "}"
pair   : string ":" value

string : ESCAPED_STRING

%import common.ESCAPED_STRING
%import common.SIGNED_NUMBER
%import common.WS
%ignore WS
"""

ARITHMETIC = r"""
?start: sum

?sum: product
    | sum "+" product   -> add
    | sum "-" product   -> sub

?product: power
    | product "*" power -> mul
    | product "/" power -> div

?power: atom
    | atom "^" power    -> pow      // right recursive

?atom: NUMBER           -> number
     | "-" atom         -> neg
     | NAME             -> var
     | NAME "(" [sum ("," sum)*] ")" -> call
     | "(" sum ")"

%import common.CNAME -> NAME
%import common.NUMBER
%import common.WS_INLINE
%ignore WS_INLINE
"""

SQL = r"""
start: select ";"?

select: "select"i columns "from"i NAME where? order?
columns: "*" | column ("," column)*
column: NAME ("." NAME)? ("as"i NAME)?
where: "where"i condition
order: "order"i "by"i NAME ("asc"i | "desc"i)?

?condition: conjunction ("or"i conjunction)*
?conjunction: comparison ("and"i comparison)*
?comparison: operand COMPARE operand
           | "not"i comparison
           | "(" condition ")"
?operand: NAME | NUMBER | STRING

COMPARE: "=" | "<>" | "!=" | "<=" | ">=" | "<" | ">"
NAME: /[a-z_][a-z0-9_]*/i
STRING: /'[^']*'/

%import common.NUMBER
%import common.WS
%ignore WS
"""

PROGRAM = r"""
start: statement*

?statement: "let" NAME "=" expression ";"                  -> let
          | NAME "=" expression ";"                        -> assign
          | "if" "(" expression ")" block ("else" block)?  -> if_
          | "while" "(" expression ")" block               -> while_
          | "return" expression? ";"                       -> return_
          | expression ";"                                 -> expression_statement
          | block

block: "{" statement* "}"

?expression: disjunction
?disjunction: conjunction ("||" conjunction)*
?conjunction: comparison ("&&" comparison)*
?comparison: sum (COMPARE sum)?
?sum: term (("+" | "-") term)*
?term: unary (("*" | "/" | "%") unary)*
?unary: ("!" | "-") unary | call
?call: primary ("(" arguments? ")")*
arguments: expression ("," expression)*
?primary: NUMBER | STRING | NAME | "true" | "false" | "(" expression ")"

COMPARE: "==" | "!=" | "<=" | ">=" | "<" | ">"
NAME: /[a-z_][a-z0-9_]*/
STRING: ESCAPED_STRING
LINE_COMMENT: "//" /[^\n]*/

%import common.INT -> NUMBER
%import common.ESCAPED_STRING
%import common.WS
%ignore WS
%ignore LINE_COMMENT
"""

# Every piece of syntax the front end supports, in one (config-file-like) grammar.
FEATURES = r"""
// comments with slashes
# and with a hash
start: _NL* section+

section: "[" SECTION_NAME "]" _NL+ (entry _NL+)*

?entry: key "=" value
      | key "+=" _list{value, ","}          -> append
      | "\x40include" STRING_LIT            -> include   // \x40 is @
      | "rating" ":" "*"~1..5
      | "pair" ":" _pair{NUMBER_LIT}

!key: NAME ("." NAME)*
value: STRING_LIT | number | boolean | array | DATE | CHAR | COLOR
array: "[" [_list{value, ","}] "]"
_list{item, sep}: item (sep item)*
_pair{x}: "(" _list{x, ","} ")"
number.2: NUMBER_LIT | HEX
boolean: "true"i | "false"i

NUMBER_LIT: SIGNED_NUMBER
DATE: DIGIT~4 "-" DIGIT~2 "-" DIGIT~2
COLOR: "<" (HEXDIGIT~3 | HEXDIGIT~6) ">"
CHAR: /'.'/s
HEX.3: /0x[0-9a-f]+/i
SECTION_NAME: ("a".."z" | "_")+
NAME: LCASE (LCASE | DIGIT | "_")*
LCASE: "a".."z"
STRING_LIT: "\"" (/[^"\\\n]/ | "\\" /./)* "\""
_NL: /\r?\n/

%import common (DIGIT, HEXDIGIT, SIGNED_NUMBER)
%import common.WS_INLINE -> _SPACES
%import common.SH_COMMENT
%ignore _SPACES
%ignore SH_COMMENT
%ignore /\\\r?\n/
%ignore "\f"
%declare _INDENT

%override boolean: "true"i
    | "false"i
    | "on"i | "off"i
%extend value: "null"
"""


@dataclass(frozen=True)
class Case:
    """A grammar, the Lark configuration that agrees with leapgram on it, hand-picked sentences,
    and bounds on the size of its IR."""

    text: str
    parser: str
    lexer: str
    valid: tuple[str, ...]
    invalid: tuple[str, ...]
    rules: tuple[int, int]
    lexemes: tuple[int, int]


CASES = {
    "json": Case(JSON, "earley", "basic",
                 ('{"a": [1, -2.5e3, true, null], "b\\"": {}}', "[]", ' "x" ', "-0", "1E+2"),
                 ('{"a" 1}', "[1,]", "tru", '"a', "[1 2]", "{,}", ""),
                 (15, 30), (10, 14)),
    "arithmetic": Case(ARITHMETIC, "earley", "basic",
                       ("1+2*3", "f(x, -2)^2 - (y/3)", "-a / b ^ -c", "max(1,2,3)+x_1", "f()", "2.5e3"),
                       ("1+", "(1", "f(,)", "1 2", "2e", "", "a b"),
                       (15, 30), (10, 14)),
    "sql": Case(SQL, "lalr", "contextual",
                ("select * from t", "SELECT a, b.c AS d FROM t WHERE a = 1 AND NOT (b <> 'x' OR c >= 2.5);",
                 "select from from t", "select a from t order by a desc", "Select x as y From z"),
                ("select from t", "select * from t where", "select * t", "select * from t order a",
                 "select * from t;;"),
                (20, 40), (15, 22)),
    "program": Case(PROGRAM, "earley", "dynamic",
                    ('let x = 1; while (x < 10) { x = x + 1; } // done', 'print("hi", f(1)(2));',
                     "if (a && !b) { return; } else { return -a * 2; }", "{ {} }", "letter = iffy;", ""),
                    ("let x = ;", "if (x) return;", "x = ;", "f(1,);", "{", "x == ;"),
                    (40, 80), (25, 35)),
    "features": Case(FEATURES, "earley", "dynamic",
                     ("[main]\nname = \"x\\\"y\"\nsize.max += 1, 0x1F, [true, ON]\n",
                      "\n[a_b]\n\x40include \"other\"\nrating: ***\n", "[s]\npair: (1, -2.5)\nd = 2024-01-02\n",
                      "[s]  # comment\nc = '\n'\nk = <abc> \\\n\n[t]\nn = null\n"),
                     ("[main]", "[s]\nrating: ******\n", "[s]\nc = <abcd>\n", "[s]\nb = maybe\n",
                      "[S]\na = 1\n", "[s]\nd = 2024-1-02\n"),
                     (35, 70), (30, 45)),
}

# ----- the two sides of the differential test ------------------------------------------------


@functools.cache
def byte_vocabulary() -> Vocabulary:
    return Vocabulary.byte_vocabulary()


def compiled_or_skip(text: str) -> leapgram.CompiledGrammar:
    """The grammar compiled for the byte vocabulary, or a skip while CFG matching is missing."""
    grammar = Grammar.from_lark(text)  # front-end errors must fail the test, not skip it
    try:
        return compile_for(grammar, byte_vocabulary())
    except UnsupportedError as err:
        pytest.skip(f"CFG matching not available yet: {err.message}")


def accepts(grammar_text: str, s: str) -> bool:
    """Whether leapgram accepts exactly ``s``, fed one byte token at a time."""
    matcher = Matcher(compiled_or_skip(grammar_text))
    return matcher.consume_tokens(s.encode("utf-8")) and matcher.is_accepting()


@functools.cache
def lark_parser(text: str, parser: str, lexer: str) -> lark.Lark:
    return lark.Lark(text, parser=parser, lexer=lexer)


def lark_accepts(text: str, s: str, parser: str = "earley", lexer: str = "basic") -> bool:
    """Whether Lark (``parser``, ``lexer``) parses all of ``s``."""
    try:
        lark_parser(text, parser, lexer).parse(s)
    except lark.exceptions.LarkError:
        return False
    return True


def check_agrees(case: Case, s: str) -> bool:
    """Assert leapgram and Lark agree on ``s``; return the verdict. One difference is by design
    (docs/design/lark.md): keywords are never reserved, so where the parser allows both a keyword
    and a name (SQL's ``... OR NOT <> a``, ``NOT`` read as a NAME) leapgram accepts what Lark's
    ``basic`` and ``contextual`` lexers reject; such a sentence must then be one Lark's Earley
    parser accepts with its ``dynamic`` lexer, which reserves nothing."""
    expected = lark_accepts(case.text, s, case.parser, case.lexer)
    got = accepts(case.text, s)
    if got and not expected and case.lexer != "dynamic" and spells_a_keyword(case, s):
        assert lark_accepts(case.text, s, "earley", "dynamic"), f"{s!r}: no Lark parser accepts it, leapgram does"
        return got
    assert got == expected, f"{s!r}: Lark {'accepts' if expected else 'rejects'}, leapgram does not agree"
    return got


def spells_a_keyword(case: Case, s: str) -> bool:
    """Whether ``s`` holds a string terminal of the grammar that one of its regex terminals also
    matches (a keyword Lark's non-dynamic lexers may reserve), case folded."""
    folded = s.casefold()
    return any(word.casefold() in folded for word in keywords(case.text, case.parser, case.lexer))


@functools.cache
def keywords(text: str, parser: str, lexer: str) -> tuple[str, ...]:
    terminals = lark_parser(text, parser, lexer).terminals
    regexes = [re.compile(t.pattern.to_regexp()) for t in terminals if t.pattern.type == "re"]
    return tuple(t.pattern.value for t in terminals
                 if t.pattern.type == "str" and any(r.fullmatch(t.pattern.value) for r in regexes))


# ----- sentences from Lark's view of a grammar -----------------------------------------------

Option = tuple[tuple[bool, str], ...]
MAX_DEPTH = 7


@dataclass
class LarkShape:
    """Lark's compiled grammar: BNF rules, a strategy per terminal, the ignored text, and each
    rule's smallest derivation height (to end expansions past ``MAX_DEPTH``)."""

    start: str
    rules: dict[str, list[Option]]
    terminals: dict[str, st.SearchStrategy[str]]
    separator: st.SearchStrategy[str] | None
    height: dict[str, int]
    alphabet: str


def string_strategy(value: str, ignore_case: bool) -> st.SearchStrategy[str]:
    if not ignore_case:
        return st.just(value)
    return st.tuples(*[st.sampled_from(sorted({c.lower(), c.upper()})) for c in value]).map("".join)


def terminal_strategy(pattern, reserved: frozenset[str]) -> st.SearchStrategy[str]:
    """Text for one terminal; regex terminals never produce a keyword of the grammar."""
    if isinstance(pattern, lark.lexer.PatternStr):
        return string_strategy(pattern.value, "i" in pattern.flags)
    regex = re.compile(pattern.to_regexp())
    return st.from_regex(regex, fullmatch=True).filter(lambda s: s.lower() not in reserved)


def separator_strategy(patterns: list) -> st.SearchStrategy[str] | None:
    if not patterns:
        return None
    regex = re.compile("|".join(f"(?:{p.to_regexp()})" for p in patterns))
    simple = st.sampled_from([s for s in (" ", "  ", " ", "\t") if regex.fullmatch(s)] + [""])
    anything = st.from_regex(regex, fullmatch=True)  # comments too, which may swallow tokens
    return st.integers(0, 9).flatmap(lambda k: anything if k == 0 else simple)


def option_height(option: Option, height: dict[str, int], terminals: dict) -> int | None:
    children = [height.get(name) if not is_term else (0 if name in terminals else None) for is_term, name in option]
    return None if None in children else 1 + max(children, default=0)


def min_heights(rules: dict[str, list[Option]], terminals: dict) -> dict[str, int]:
    height: dict[str, int] = {}
    changed = True
    while changed:
        changed = False
        for origin, options in rules.items():
            for option in options:
                h = option_height(option, height, terminals)
                if h is not None and h < height.get(origin, 1 << 30):
                    height[origin] = h
                    changed = True
    return height


@functools.cache
def lark_shape(text: str, parser: str, lexer: str) -> LarkShape:
    compiled = lark_parser(text, parser, lexer)
    rules: dict[str, list[Option]] = {}
    for rule in compiled.rules:
        rules.setdefault(rule.origin.name, []).append(tuple((s.is_term, s.name) for s in rule.expansion))
    strings = [t.pattern.value for t in compiled.terminals if isinstance(t.pattern, lark.lexer.PatternStr)]
    reserved = frozenset(s.lower() for s in strings if re.fullmatch(r"\w+", s))
    by_name = {t.name: t.pattern for t in compiled.terminals}
    ignored = [by_name[name] for name in compiled.ignore_tokens]
    terminals = {name: terminal_strategy(p, reserved) for name, p in by_name.items() if name not in compiled.ignore_tokens}
    alphabet = "".join(sorted(set("".join(strings)) | set(" 0a_Z\n\"'")))
    return LarkShape(compiled.options.start[0], rules, terminals, separator_strategy(ignored),
                     min_heights(rules, terminals), alphabet)


def expand(draw: Callable, shape: LarkShape, symbol: str, depth: int, out: list[str]) -> None:
    options = [o for o in shape.rules[symbol] if option_height(o, shape.height, shape.terminals) is not None]
    if depth >= MAX_DEPTH:
        lowest = min(option_height(o, shape.height, shape.terminals) for o in options)
        options = [o for o in options if option_height(o, shape.height, shape.terminals) == lowest]
    for is_term, name in draw(st.sampled_from(options)):
        if is_term:
            out.append(draw(shape.terminals[name]))
        else:
            expand(draw, shape, name, depth + 1, out)


@st.composite
def sentences(draw: Callable, shape: LarkShape) -> str:
    """A random derivation of ``shape``'s start rule, with ignored text between the tokens.

    Two word tokens are never glued together (``OR`` then ``D`` as ``ORD``): Lark's lexers back
    off from a longer keyword they were reading (``ORDER``) to the last complete match, where
    leapgram's lexer reads the longest prefix any allowed lexeme can continue and does not go back
    (docs/design/earley-walk.md, "Lexer"). Such sentences would test that known difference, not
    the grammar."""
    tokens: list[str] = []
    expand(draw, shape, shape.start, 0, tokens)
    if shape.separator is None:
        return "".join(tokens)
    parts = [draw(shape.separator)]
    for token, after in zip(tokens, [*tokens[1:], ""]):
        glued = token and after and _wordy(token[-1]) and _wordy(after[0])
        parts += [token, draw(shape.separator.filter(bool) if glued else shape.separator)]
    return "".join(parts)


def _wordy(char: str) -> bool:
    return char.isalnum() or char == "_"


@st.composite
def mutants(draw: Callable, shape: LarkShape) -> str:
    """A sentence with one to three characters deleted, inserted or replaced."""
    text = draw(sentences(shape))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["delete", "insert", "replace"]))
        char = draw(st.sampled_from(shape.alphabet))
        if op == "insert":
            text = text[:at] + char + text[at:]
        else:
            text = text[:at] + (char if op == "replace" else "") + text[at + 1:]
    return text


def run_differential(case: Case, strategy: st.SearchStrategy[str], examples: int) -> list[bool]:
    compiled_or_skip(case.text)
    verdicts: list[bool] = []

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    @given(strategy)
    def check(s: str) -> None:
        verdicts.append(check_agrees(case, s))

    check()
    return verdicts


# ----- tests: IR -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_ir_builds_with_sane_size(name):
    case = CASES[name]
    ir = lark_to_ir(case.text)
    low, high = case.rules
    assert low <= len(ir.rules) <= high, ir.describe()
    low, high = case.lexemes
    assert low <= len(ir.lexemes) <= high, ir.describe()
    assert ir.nonterminals[ir.start] == "start"
    assert Grammar.from_lark(case.text).ir.describe() == ir.describe()


def test_describe_is_readable():
    text = lark_to_ir(JSON).describe()
    for line in ['pair -> string ":" value', "string -> ESCAPED_STRING", "value -> SIGNED_NUMBER",
                 'value -> "null"', "%ignore WS"]:
        assert line in text.splitlines(), text


def test_terminals_become_one_named_lexeme():
    ir = lark_to_ir(PROGRAM)
    names = [lexeme.name for lexeme in ir.lexemes]
    for name in ["NAME", "COMPARE", "NUMBER", "STRING", "LINE_COMMENT", "WS", '"let"', '"||"']:
        assert name in names
    assert "ESCAPED_STRING" not in names  # inlined into STRING, never used in a rule itself
    assert [ir.lexemes[i].name for i in ir.ignore] == ["WS", "LINE_COMMENT"]


def test_unreachable_rules_and_unused_terminals_are_not_built():
    ir = lark_to_ir('start: "a"\nunused: "b" UNUSED\nUNUSED: "c"')
    assert ir.nonterminals == ("start",)
    assert [lexeme.name for lexeme in ir.lexemes] == ['"a"']


def test_start_option_picks_the_rule():
    ir = lark_to_ir('start: "a"\nother: "b"+', start="other")
    assert ir.nonterminals[ir.start] == "other"


# ----- tests: hand-picked and random sentences against Lark ----------------------------------


@pytest.mark.parametrize("name", sorted(CASES))
def test_hand_picked_sentences_agree_with_lark(name):
    case = CASES[name]
    for s in case.valid:
        assert lark_accepts(case.text, s, case.parser, case.lexer), f"bad test data: Lark rejects {s!r}"
        assert accepts(case.text, s), s
    for s in case.invalid:
        assert not lark_accepts(case.text, s, case.parser, case.lexer), f"bad test data: Lark accepts {s!r}"
        assert not accepts(case.text, s), s


@pytest.mark.parametrize("name", sorted(CASES))
def test_random_sentences_agree_with_lark(name):
    case = CASES[name]
    verdicts = run_differential(case, sentences(lark_shape(case.text, case.parser, case.lexer)), 100)
    assert sum(verdicts) >= len(verdicts) // 3, "the generator should mostly produce valid sentences"


@pytest.mark.parametrize("name", sorted(CASES))
def test_mutated_sentences_agree_with_lark(name):
    case = CASES[name]
    run_differential(case, mutants(lark_shape(case.text, case.parser, case.lexer)), 100)


@pytest.mark.parametrize("name", sorted(CASES))
def test_random_strings_agree_with_lark(name):
    case = CASES[name]
    alphabet = lark_shape(case.text, case.parser, case.lexer).alphabet
    run_differential(case, st.text(alphabet=alphabet, max_size=12), 100)


# ----- tests: the common library -------------------------------------------------------------

ZERO_WIDTH = {"_STRING_INNER", "_STRING_ESC_INNER"}


def common_pattern(name: str) -> str:
    """Lark's own regex for ``common.NAME``, between ``<`` and ``>`` (so that zero-width
    terminals compile too)."""
    grammar = f'%import common.{name}\nstart: Q\nQ: "<" {name} ">"\n'
    return lark.Lark(grammar, parser="earley", lexer="basic").get_terminal("Q").pattern.to_regexp()


def test_common_library_is_complete():
    text = (Path(lark.__file__).parent / "grammars" / "common.lark").read_text()
    names = set(re.findall(r"^(_?[A-Z][A-Z_]*)\s*:", text, flags=re.MULTILINE))
    assert names == set(COMMON_TERMINALS)


@pytest.mark.parametrize("name", sorted(set(COMMON_TERMINALS) - ZERO_WIDTH))
def test_common_terminal_agrees_with_lark(name):
    case = Case(f"start: {name}\n%import common.{name}\n", "earley", "basic", (), (), (1, 1), (1, 1))
    regex = re.compile(common_pattern(name))
    text = st.from_regex(regex, fullmatch=True).map(lambda s: s[1:-1])
    edited = st.tuples(text, st.text(alphabet="0123456789.eE+-\"\\ \n\r\t#/*abzAZ_", max_size=3)).map("".join)
    run_differential(case, st.one_of(text, edited, st.text(max_size=6)), 150)


@pytest.mark.parametrize("name", sorted(ZERO_WIDTH))
def test_zero_width_common_terminal_language(name):
    regex = re.compile(common_pattern(name))

    @settings(max_examples=200, deadline=None)
    @given(st.text(alphabet="ab\\\n\"é", max_size=8))
    def check(s: str) -> None:
        assert fullmatch(COMMON_TERMINALS[name], s.encode()) == bool(regex.fullmatch(f"<{s}>"))

    check()


# ----- tests: each piece of syntax -----------------------------------------------------------

SYNTAX = [
    # (grammar, accepted, rejected)
    ('start: "a" "b"?', ["a", "ab"], ["b", "abb"]),
    ('start: "a" ["b"] "c"', ["ac", "abc"], ["abbc"]),
    ('start: "a"* "b"+', ["b", "aabb"], ["", "a"]),
    ('start: "ab"~2', ["abab"], ["ab", "ababab"]),
    ('start: ("a" | "b")~2..3', ["ab", "bbb"], ["a", "abab"]),
    ('start: "x"~0', [""], ["x"]),
    ('start: A\nA: "a"~2..3 "b"~1', ["aab", "aaab"], ["ab", "aaaab"]),
    ('start: "a".."c"+', ["abcba"], ["d"]),
    ('start: W\nW: ("a".."z" | "\\u00e9")+', ["abé"], ["A"]),
    ('start: "α".."ω"', ["β"], ["a"]),
    ('start: "\\x41\\u00e9\\t\\"\\\\"', ['Aé\t"\\'], ["A"]),
    ('start: "\\q\\0"', ["\\q\\0"], ["q"]),
    ('start: "select"i', ["select", "SeLeCT"], ["selec"]),
    ('start: "straße"i', ["STRAßE", "Straße"], ["strasse"]),
    ('start: /a.b/', ["axb"], ["a\nb"]),
    ('start: /a.b/s', ["axb", "a\nb"], ["ab"]),
    ('start: /abc/i', ["ABC", "aBc"], ["abd"]),
    ('start: /abc/u', ["abc"], ["ABC"]),
    ('start: /a\\/b/ "/"', ["a/b/"], ["a\\/b/"]),
    ('start: /a"b/ "\\""', ['a"b"'], ["ab"]),
    ('start: A\nA: B "-" B\nB: C+\nC: "0".."9"', ["12-3"], ["-"]),
    ('start: "a" |', ["a", ""], ["b"]),
    ('start:', [""], ["a"]),
    ('start: "a"\n    | "b"\n\n    // comment\n    | "c"', ["a", "b", "c"], ["d"]),
    ('start: "a" \\\n  "b"', ["ab"], ["a"]),
    ('start: "a"\r\n    | "b"\r\n', ["a", "b"], ["\r"]),
    ('?start: _x\n!_x: "a"\n', ["a"], ["b"]),
    ('start: x "b"\n!?x: "a" -> alias | "c" -> other', ["ab", "cb"], ["b"]),
    ('start.2: A\nA.-1: "a"\n', ["a"], ["b"]),
    ('start: _sep{"a", ","}\n_sep{x, sep}: x (sep x)*', ["a", "a,a,a"], ["a,", ""]),
    ('start: _pair{_pair{"x"}}\n_pair{x}: "(" x x ")"', ["((xx)(xx))"], ["(xx)"]),
    ('start: t{NAME}\nt{item}: item ("," item)*\nNAME: /[a-z]+/', ["ab,c"], ["ab,"]),
    ('start: "a"\n%override start: "b"', ["b"], ["a"]),
    ('start: "a"\n%extend start: "b"', ["a", "b"], ["c"]),
    ('start: A\nA: "a"\n%override A: "b"', ["b"], ["a"]),
    ('start: A | "b"\n%declare A B', ["b"], ["", "A"]),
    ('start: NUMBER\n%import common.NUMBER', ["1.5e3", ".5", "7"], ["1e", "-1"]),
    ('start: N\n%import common.SIGNED_INT -> N', ["-12"], ["1.0"]),
    ('start: WORD (WS WORD)*\n%import common (WORD, WS)', ["ab  cd"], ["ab1"]),
    ('start: "a" "b"\n%ignore " "', [" a  b ", "ab"], ["a\tb"]),
    ('start: "a" "b"\n%ignore /[ \\t]+/', ["a \t b"], ["a\nb"]),
    ('start: "a" "b"\n%ignore C\nC: "(" /[^)]*/ ")"', ["a(x)b(y)"], ["a(b"]),
    ('start: "a" "b"\n%ignore " " | "."', ["a . b"], ["a,b"]),
    ('start: "é" "😀"', ["é😀"], ["e😀"]),
]


@pytest.mark.parametrize("text, accepted, rejected", SYNTAX)
def test_syntax(text, accepted, rejected):
    for s in accepted:
        assert accepts(text, s), (text, s)
    for s in rejected:
        assert not accepts(text, s), (text, s)


@pytest.mark.parametrize("text, accepted, rejected", SYNTAX)
def test_syntax_table_agrees_with_lark(text, accepted, rejected):
    """The table above is how Lark reads these grammars too (Earley; its dynamic lexer cannot
    scan a declared terminal, so those grammars use the basic one)."""
    lexer = "basic" if "%declare" in text else "dynamic"
    for s in accepted + rejected:
        assert lark_accepts(text, s, "earley", lexer) == (s in accepted), (text, s)


def test_empty_terminal_is_optional():
    """Lark refuses terminals that match the empty string; leapgram makes them optional."""
    text = 'start: "<" A ">"\nA: "a"*'
    assert accepts(text, "<>") and accepts(text, "<aa>")
    with pytest.raises(lark.exceptions.LarkError):
        lark.Lark(text, parser="earley", lexer="basic")


def test_keywords_are_contextual():
    """A keyword is reserved only where the parser could take it (unlike Lark's basic lexer)."""
    assert accepts(SQL, "select from from t")
    assert not lark_accepts(SQL, "select from from t", "earley", "basic")
    assert accepts(PROGRAM, "let = 1;") and not lark_accepts(PROGRAM, "let = 1;", "earley", "basic")
    assert accepts(PROGRAM, "if (x) {} else = 1;")
    assert not lark_accepts(PROGRAM, "if (x) {} else = 1;", "lalr", "contextual")


def test_lexer_is_greedy_across_allowed_lexemes():
    """Leapgram's lexer does not back off a longer lexeme (Lark's dynamic lexer does)."""
    text = 'start: ("ab" | "a") "bc"'
    assert not accepts(text, "abc")
    assert lark_accepts(text, "abc", "earley", "dynamic")


# ----- masks at random positions of random sentences ----------------------------------------


@functools.cache
def mixed_vocabulary() -> Vocabulary:
    """Every single byte (so any sentence can be walked to any position) plus 300 real Llama-3
    tokens; one EOS."""
    import numpy as np

    tokens = [bytes([b]) for b in range(256)]
    real = Vocabulary.from_tokenizer_json(tokenizer_path("llama3"))
    rng = np.random.default_rng(3)
    ordinary = [t for t in range(real.size) if not real.is_special(t)]
    tokens += [real.token_bytes(int(t)) for t in rng.choice(ordinary, size=300, replace=False)]
    tokens.append(b"<eos>")
    return Vocabulary(tokens, special_token_ids=[len(tokens) - 1], eos_token_ids=[len(tokens) - 1])


@pytest.mark.parametrize("name", sorted(CASES))
def test_masks_at_random_positions_equal_brute_force(name):
    """For random valid sentences, at random byte positions, the mask over a vocabulary of all
    bytes plus real multi-byte tokens equals consuming (and rolling back) every token."""
    from hypothesis import assume

    case = CASES[name]
    vocab = mixed_vocabulary()
    compiled = compile_for(Grammar.from_lark(case.text), vocab)
    shape = lark_shape(case.text, case.parser, case.lexer)

    @settings(max_examples=10, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    @given(sentences(shape), st.lists(st.floats(0, 1), min_size=2, max_size=2))
    def check(sentence: str, where: list[float]) -> None:
        assume(lark_accepts(case.text, sentence, case.parser, case.lexer))
        data = sentence.encode()
        matcher = Matcher(compiled)
        done = 0
        for position in sorted(int(f * len(data)) for f in where):
            assert matcher.consume_tokens(list(data[done:position])), (sentence, position, matcher.error())
            done = position
            allowed = set(leapgram.allowed_tokens(matcher.compute_mask(), vocab.size).tolist())
            expected = set()
            for token in range(vocab.size):
                if matcher.consume_token(token):
                    expected.add(token)
                    matcher.rollback(1)
                else:
                    matcher.rollback(0)  # leaves the error state
            assert allowed == expected, (sentence, position, sorted(allowed ^ expected)[:10])

    check()
