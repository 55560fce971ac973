"""The nodes the text front ends (Lark, GBNF, structural tags) share: literals, references to
rules, alternatives and bounded repeats, each with the offset in the source where it starts; and
the scanner of their quoted strings, with each front end's escapes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import GrammarError
from ..regex.utf8 import MAX_CODE_POINT

HEX_WIDTH = {"x": 2, "u": 4, "U": 8}  # \xHH \uHHHH \UHHHHHHHH: a code point (\xHH too, not a byte)
Fail = Callable[[str, int], GrammarError]  # a front end's error at an offset of its text


@dataclass(frozen=True, eq=False)
class Escapes:
    """A front end's backslash escapes in quoted text: ``simple`` maps the character after the
    backslash to its text, and ``x``/``u``/``U`` take hex digits (:data:`HEX_WIDTH`). Any other
    escape stays as written (Lark) or, when ``known`` lists the escapes, is refused (GBNF)."""

    simple: dict[str, str]
    known: str | None = None

    def read(self, src: str, i: int, fail: Fail) -> tuple[str, int]:
        """The text of the escape whose backslash is at ``src[i]`` and the offset after it."""
        nxt = src[i + 1] if i + 1 < len(src) else ""
        if nxt in self.simple:
            return self.simple[nxt], i + 2
        width = HEX_WIDTH.get(nxt)
        if width is None:
            if self.known is not None:
                what = f"bad escape \\{nxt}" if nxt.strip() else "bad escape: a backslash before nothing"
                raise fail(f"{what} (known: {self.known})", i)
            if nxt in ("", "\n"):
                raise fail("unterminated string literal: backslash at the end of the line", i)
            return "\\" + nxt, i + 2
        digits = src[i + 2:i + 2 + width]
        if len(digits) < width or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise fail(f"bad escape \\{nxt}: expected {width} hex digits", i)
        code = int(digits, 16)
        if code > MAX_CODE_POINT or 0xD800 <= code <= 0xDFFF:
            raise fail(f"bad escape \\{nxt}{digits}: not a Unicode scalar value", i)
        return chr(code), i + 2 + width


def scan_string(src: str, at: int, escapes: Escapes, fail: Fail) -> tuple[str, int]:
    """The text of the string literal whose opening quote is at ``src[at]``, and the offset of its
    closing quote. A literal ends at the end of its line."""
    i = at + 1
    out: list[str] = []
    while i >= len(src) or src[i] != '"':
        if i >= len(src) or src[i] == "\n":
            raise fail("unterminated string literal", at)
        if src[i] == "\\":
            text, i = escapes.read(src, i, fail)
        else:
            text, i = src[i], i + 1
        out.append(text)
    return "".join(out), i


@dataclass(frozen=True)
class Literal:
    """``"text"`` (``"text"i`` in Lark: ``ignore_case``)."""

    text: str
    offset: int
    ignore_case: bool = False


@dataclass(frozen=True)
class Ref:
    """A reference to a rule (a terminal or a template parameter in Lark)."""

    name: str
    offset: int


@dataclass(frozen=True)
class Alternatives:
    """``seq | seq | ...``, each option a tuple of nodes."""

    options: tuple[tuple[Any, ...], ...]
    offset: int


@dataclass(frozen=True)
class Repeat:
    """``item`` between ``low`` and ``high`` times (``high == INF``: unbounded)."""

    item: Any
    low: int
    high: int
    offset: int = 0


def references(node: Any) -> Iterator[Ref]:
    """Every :class:`Ref` inside ``node`` (through alternatives and repeats)."""
    if isinstance(node, Ref):
        yield node
    elif isinstance(node, Repeat):
        yield from references(node.item)
    elif isinstance(node, Alternatives):
        for option in node.options:
            for item in option:
                yield from references(item)
