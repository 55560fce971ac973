"""The exceptions leapgram raises.

Every exception is a :class:`LeapgramError`.

* :class:`GrammarError`: a malformed regex, grammar or schema. It carries the location
  (``line``/``column`` for text, ``pointer`` for JSON) and its ``str()`` ends with a caret excerpt.
* :class:`UnsupportedError`: the input is valid but uses a feature leapgram does not implement; it
  is a :class:`GrammarError` (so one ``except`` catches every bad input) and names the
  ``feature`` and what to do instead.
* :class:`BudgetExceededError`: a named limit of :class:`leapgram.limits.Limits` ran out.
* :class:`TokenizerError`: a tokenizer (file, rank table or object) that cannot be read into a
  vocabulary; it is also a :class:`ValueError`.

A :class:`leapgram.Matcher` never raises these for what happens while matching: a bad token or an
exhausted budget puts it in an error state instead (see ``Matcher.error()``). Misuse of the API
raises :class:`TypeError` for an argument of the wrong type (a bitmask that is not int32, a token
id that is not an int) and :class:`ValueError` for a wrong value (a bitmask of the wrong shape, a
token id out of range).
"""

from __future__ import annotations


class LeapgramError(Exception):
    """Base class of everything leapgram raises on purpose."""


def caret_excerpt(source: str, line: int, column: int) -> str:
    """The source line at ``line`` (1-based) and a caret under ``column`` (1-based)."""
    lines = source.split("\n")
    if not 1 <= line <= len(lines):
        return ""
    text = lines[line - 1]
    prefix = "".join("\t" if ch == "\t" else " " for ch in text[: column - 1])
    return f"  {text}\n  {prefix}^"


def location_of(source: str, offset: int) -> tuple[int, int]:
    """(line, column), both 1-based, of the character at ``offset`` in ``source``."""
    line = source.count("\n", 0, offset) + 1
    column = offset - (source.rfind("\n", 0, offset) + 1) + 1
    return line, column


class GrammarError(LeapgramError):
    """Malformed input: regex, grammar or schema, with where it went wrong.

    Attributes: ``message`` (what is wrong), ``line`` and ``column`` (1-based, ``None`` when the
    input is not text), ``pointer`` (JSON pointer for schemas, else ``None``), ``source`` (the text).
    """

    def __init__(self, message: str, *, source: str | None = None, offset: int | None = None,
                 pointer: str | None = None) -> None:
        self.message = message
        self.source = source
        self.pointer = pointer
        self.line: int | None = None
        self.column: int | None = None
        if source is not None and offset is not None:
            self.line, self.column = location_of(source, offset)
        super().__init__(self._render())

    def _render(self) -> str:
        text = self.message
        if self.pointer is not None:
            text += f" at {self.pointer or '/'}"
        if self.line is not None and self.source is not None:
            text += f" at line {self.line}, column {self.column}"
            excerpt = caret_excerpt(self.source, self.line, self.column or 1)
            if excerpt:
                text += "\n" + excerpt
        return text


class UnsupportedError(GrammarError):
    """Valid input that uses a feature leapgram does not support.

    ``feature`` names it (a regex construct, a JSON Schema keyword); the message says what to do.
    """

    def __init__(self, feature: str, message: str, *, source: str | None = None, offset: int | None = None,
                 pointer: str | None = None) -> None:
        self.feature = feature
        super().__init__(message, source=source, offset=offset, pointer=pointer)


class BudgetExceededError(LeapgramError):
    """A named budget of :class:`leapgram.limits.Limits` ran out.

    ``limit`` is the field name, ``value`` its setting; raise the limit or simplify the input.
    """

    def __init__(self, limit: str, value: int, what: str) -> None:
        self.limit = limit
        self.value = value
        super().__init__(f"{what}: budget {limit}={value} exhausted; raise it in Limits or simplify the input")


class TokenizerError(LeapgramError, ValueError):
    """A tokenizer (file, rank table or object) that cannot be read into a vocabulary; says why."""
