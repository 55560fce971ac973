"""GBNF grammars in llama.cpp's style, their independent references and sample sentences.

Each reference is written by hand, not derived from the GBNF front end: a Lark grammar parsed
scannerless (``lexer="dynamic_complete"``, every tokenization tried) for the recursive grammars,
a Python regex over code points for the regular ones.
"""

from __future__ import annotations

import re

JSON = r'''
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
    "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [0-9]{0,15})? ws

# Optional space: by convention, applied in this grammar after literal chars when allowed
ws ::= | " " | "\n" [ \t]{0,20}
'''

JSON_LARK = r'''
root: object
value: object | array | string | number | ("true" | "false" | "null") ws
object: "{" ws (string ":" ws value ("," ws string ":" ws value)*)? "}" ws
array: "[" ws (value ("," ws value)*)? "]" ws
string: "\"" (/[^"\\\x7F\x00-\x1F]/ | "\\" (/["\\\/bfnrt]/ | "u" HEX HEX HEX HEX))* "\"" ws
HEX: /[0-9a-fA-F]/
number: "-"? (DIGIT | /[1-9]/ DIGIT ~ 0..15) ("." DIGIT+)? (/[eE]/ /[-+]/? DIGIT DIGIT ~ 0..15)? ws
DIGIT: /[0-9]/
ws: (" " | "\n" /[ \t]/ ~ 0..20)?
'''

JSON_SENTENCES = [
    '{}',
    '{"a": 1}',
    '{"a": [1, 2.5e3, "x\\n"], "b": {"c": null}}',
    '{ "k" : true , "é☃": [ ] }',
    '{"n": -0.5E+10, "u": "\\u00e9"}',
    '{\n  "deep": [[[{"x": false}]]]\n}',
]
JSON_BAD = ['{"a" 1}', '[1]', '{"a": 01}', '{"a": tru}', '{"a": "\x01"}', '{"a": [1,]}', '{"a":1} x',
            '{"a": "\\q"}', '{"a": 1.}', '{"a":\n\n1}']

ARITHMETIC = r'''
root  ::= (expr "=" ws term "\n")+
expr  ::= term ([-+*/] term)*
term  ::= ident | num | "(" ws expr ")" ws
ident ::= [a-z] [a-z0-9_]* ws
num   ::= [0-9]+ ws
ws    ::= [ \t\n]*
'''

ARITHMETIC_LARK = r'''
root: (expr "=" ws term "\n")+
expr: term (/[-+*\/]/ term)*
term: ident | num | "(" ws expr ")" ws
ident: /[a-z]/ /[a-z0-9_]/* ws
num: /[0-9]/+ ws
ws: /[ \t\n]/*
'''

ARITHMETIC_SENTENCES = ["a=b\n", "x1 = 2\n", "(a+b)*3 = x \n", "a=b\n\nc=d\n", "a = b \n", "((x))=y\n",
                        "a\n=\nb\n"]
ARITHMETIC_BAD = ["a=\n", "a+ b=c\n", "a=b", "1a=b\n", "(a=b\n", "a=b\nc\n"]

CHESS = r'''
# Specifies chess moves as a list in algebraic notation, using PGN conventions

# Force first move to "1. ", then any 1-2 digit number after, relying on model to follow the pattern
root    ::= "1. " move " " move "\n" ([1-9] [0-9]? ". " move " " move "\n")+
move    ::= (pawn | nonpawn | castle) [+#]?

# piece type, optional file/rank, optional capture, dest file & rank
nonpawn ::= [NBKQR] [a-h]? [1-8]? "x"? [a-h] [1-8]

# optional file & capture, dest file & rank, optional promotion
pawn    ::= ([a-h] "x")? [a-h] [1-8] ("=" [NBKQR])?

castle  ::= "O-O" "-O"?
'''

_MOVE = r"(?:(?:[a-h]x)?[a-h][1-8](?:=[NBKQR])?|[NBKQR][a-h]?[1-8]?x?[a-h][1-8]|O-O(?:-O)?)[+#]?"
CHESS_RE = re.compile(rf"1\. {_MOVE} {_MOVE}\n(?:[1-9][0-9]?\. {_MOVE} {_MOVE}\n)+")

CHESS_SENTENCES = ["1. e4 e5\n2. Nf3 Nc6\n", "1. d4 d5\n2. c4 dxc4\n3. O-O-O Qxd8#\n10. e8=Q+ Kh1\n"]
CHESS_BAD = ["1. e4 e5\n", "1. e9 e5\n2. a1 a2\n", "2. e4 e5\n3. d4 d5\n", "1. e4  e5\n2. a1 a2\n"]

LIST = r'''
root ::= item+

# Excludes various line break characters
item ::= "- " [^\r\n\x0b\x0c\x85\u2028\u2029]+ "\n"
'''

LIST_RE = re.compile("(?:- [^\r\n\x0b\x0c\x85\u2028\u2029]+\n)+")

LIST_SENTENCES = ["- milk\n", "- eggs\n- café ☃\n-  - nested-looking\n"]
LIST_BAD = ["- \n", "milk\n", "- milk", "- a\u2028b\n", "- a\n\n"]

GRAMMARS = {
    "json": (JSON, JSON_SENTENCES, JSON_BAD),
    "arithmetic": (ARITHMETIC, ARITHMETIC_SENTENCES, ARITHMETIC_BAD),
    "chess": (CHESS, CHESS_SENTENCES, CHESS_BAD),
    "list": (LIST, LIST_SENTENCES, LIST_BAD),
}

ALPHABETS = {
    "json": '{}[]",: \n\t0123456789-+.eEtruefalsn\\u/é',
    "arithmetic": "ab1_09+-*/()= \t\n",
    "chess": "1234589. \nabehNKQRxO-=+#",
    "list": "- ab\n\r\u2028é",
}
