"""The escapes of quoted strings in GBNF and Lark: one scanner, two escape sets, pinned here.

GBNF (llama.cpp) refuses an escape it does not know; Lark keeps it as the two characters written.
"""

from __future__ import annotations

import pytest

from leapgram import Grammar, GrammarError, Matcher
from tests.helpers.compiling import compile_for

# (the string's body as written between the quotes, the text it stands for)
GBNF_ESCAPES = [
    (r"\n\t\r", "\n\t\r"),
    (r"\\", "\\"),
    (r"\"", '"'),
    (r"\[\]\-\^", "[]-^"),
    (r"\/\'", "/'"),
    (r"\x41\xe9", "Aé"),  # \xHH is the code point U+00HH, not a byte
    (r"\u00e9\u4e2d", "é中"),
    (r"\U0001F600", "😀"),
    (r"a#b", "a#b"),
]
LARK_ESCAPES = [
    (r"\n\t\r\f", "\n\t\r\f"),
    (r"\\", "\\"),
    (r"\"", '"'),
    (r"\x41\xe9", "Aé"),
    (r"\u00e9\u4e2d", "é中"),
    (r"\U0001F600", "😀"),
    (r"\[\q\-\/\'", r"\[\q\-\/\'"),  # any other escape stays the two characters, as in Lark
    (r"a\ b", r"a\ b"),
]
# (grammar text, start of the message, column of the error)
GBNF_REFUSED = [
    ('root ::= "\\f"', "bad escape \\f (known: \\n \\t \\r \\\\ \\\" \\[ \\] \\- \\^ \\xHH \\uHHHH \\UHHHHHHHH)", 11),
    ('root ::= "a\\q"', "bad escape \\q (known:", 12),
    ('root ::= "\\ "', "bad escape: a backslash before nothing (known:", 11),
    ('root ::= "\\', "bad escape: a backslash before nothing (known:", 11),
    ('root ::= "\\x4g"', "bad escape \\x: expected 2 hex digits", 11),
    ('root ::= "\\ud800"', "bad escape \\ud800: not a Unicode scalar value", 11),
    ('root ::= "ab\n"', "unterminated string literal", 10),
    ('root ::= [\\q]', "bad escape \\q (known:", 11),
]
LARK_REFUSED = [
    ('start: "a\\\n"', "unterminated string literal: backslash at the end of the line", 10),
    ('start: "a\\', "unterminated string literal: backslash at the end of the line", 10),
    ('start: "\\x4g"', "bad escape \\x: expected 2 hex digits", 9),
    ('start: "\\U00110000"', "bad escape \\U00110000: not a Unicode scalar value", 9),
    ('start: "ab\n"', "unterminated string literal", 8),
]


FRONT_ENDS = {"gbnf": (Grammar.from_gbnf, "root ::= {}"), "lark": (Grammar.from_lark, "start: {}")}
ESCAPES = [("gbnf", *case) for case in GBNF_ESCAPES] + [("lark", *case) for case in LARK_ESCAPES]
REFUSED = [("gbnf", *case) for case in GBNF_REFUSED] + [("lark", *case) for case in LARK_REFUSED]


def accepts(grammar: Grammar, byte_vocab, text: str) -> bool:
    matcher = Matcher(compile_for(grammar, byte_vocab))
    return matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()


@pytest.mark.parametrize(("front_end", "body", "text"), ESCAPES)
def test_escapes(byte_vocab, front_end, body, text):
    make, rule = FRONT_ENDS[front_end]
    assert accepts(make(rule.format(f'"{body}"')), byte_vocab, text)
    assert accepts(make(rule.format(f'"<" "{body}" ">"')), byte_vocab, f"<{text}>")


@pytest.mark.parametrize(("front_end", "text", "message", "column"), REFUSED)
def test_refused_escapes(front_end, text, message, column):
    with pytest.raises(GrammarError) as caught:
        FRONT_ENDS[front_end][0](text)
    assert caught.value.message.startswith(message)
    assert (caught.value.line, caught.value.column) == (1, column)
