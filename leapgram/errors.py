"""The exceptions leapgram raises; every one is a :class:`LeapgramError`.

:class:`GrammarError` (malformed input, with its location), :class:`UnsupportedError` (valid input
using a feature leapgram does not implement; a ``GrammarError``), :class:`BudgetExceededError` (a
named :class:`leapgram.limits.Limits` budget ran out) and :class:`TokenizerError` (also a
``ValueError``). A matcher enters an error state instead of raising; misuse of the API raises
``TypeError`` or ``ValueError``. The error model: docs/design/errors.md.
"""

from __future__ import annotations

import operator


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


def checked_count(value, what: str, low: int) -> int:
    """``value`` as an int >= ``low``; a ``TypeError`` or ``ValueError`` naming ``what`` if not."""
    if isinstance(value, bool):
        raise TypeError(f"{what} must be an int, not bool")
    try:
        count = operator.index(value)
    except TypeError:
        raise TypeError(f"{what} must be an int, not {type(value).__name__}") from None
    if count < low:
        raise ValueError(f"{what} must be >= {low}, got {count}")
    return count
