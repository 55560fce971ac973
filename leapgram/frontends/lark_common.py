"""The terminals of Lark's ``common`` library, for ``%import common.NAME``.

Each terminal is one self-contained regex (leapgram syntax) with the language Lark's own
definition produces *as a token*. Where Lark relies on lazy matching (``ESCAPED_STRING``,
``C_COMMENT``) the regex spells out the shortest-match language instead: a string ends at its
first unescaped quote, a comment at its first ``*/``, which is what Lark's lexer produces and
what a longest-match lexer needs.
"""

from __future__ import annotations

_INT = r"[0-9]+"
_EXP = r"[eE][+-]?[0-9]+"
_DECIMAL = r"(?:[0-9]+\.[0-9]*|\.[0-9]+)"
_FLOAT = rf"(?:{_INT}{_EXP}|{_DECIMAL}(?:{_EXP})?)"
_NUMBER = rf"(?:{_FLOAT}|{_INT})"

COMMON_TERMINALS: dict[str, str] = {
    "DIGIT": r"[0-9]",
    "HEXDIGIT": r"[0-9a-fA-F]",
    "INT": _INT,
    "SIGNED_INT": rf"[+-]?{_INT}",
    "DECIMAL": _DECIMAL,
    "_EXP": _EXP,
    "FLOAT": _FLOAT,
    "SIGNED_FLOAT": rf"[+-]?{_FLOAT}",
    "NUMBER": _NUMBER,
    "SIGNED_NUMBER": rf"[+-]?{_NUMBER}",
    "_STRING_INNER": r".*",
    "_STRING_ESC_INNER": r"(?:[^\\\n]|\\.)*",
    "ESCAPED_STRING": r'"(?:[^"\\\n]|\\.)*"',
    "LCASE_LETTER": r"[a-z]",
    "UCASE_LETTER": r"[A-Z]",
    "LETTER": r"[A-Za-z]",
    "WORD": r"[A-Za-z]+",
    "CNAME": r"[_A-Za-z][_A-Za-z0-9]*",
    "WS_INLINE": r"[ \t]+",
    "WS": r"[ \t\f\r\n]+",
    "CR": r"\r",
    "LF": r"\n",
    "NEWLINE": r"(?:\r?\n)+",
    "SH_COMMENT": r"#[^\n]*",
    "CPP_COMMENT": r"//[^\n]*",
    "C_COMMENT": r"/\*(?:[^*]|\*+[^*/])*\*+/",
    "SQL_COMMENT": r"--[^\n]*",
}
"""Terminal name → regex, for every terminal of Lark's ``common.lark``."""
