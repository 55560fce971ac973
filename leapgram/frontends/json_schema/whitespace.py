"""Whitespace between JSON tokens: bounded runs, never an ``%ignore``.

An ``%ignore`` lexeme may repeat between two lexemes, so it cannot bound a run; instead the rules
hold an optional ``WS`` lexeme wherever JSON allows whitespace (after ``{ [ , :`` and before
``} ] , :``), never two in a row, so one run is at most ``max_run`` bytes of space, tab, CR or LF.
The top-level value has no whitespace before or after it.
"""

from __future__ import annotations

from ...errors import GrammarError
from ...grammar.builder import GrammarBuilder

FLEXIBLE_MAX_RUN = 20
"""Longest whitespace run under ``whitespace="flexible"``: room for ``json.dumps(indent=...)``
on a nested document, short enough that a model cannot loop on whitespace."""


def max_run_of(whitespace: str | int) -> int:
    """The longest whitespace run allowed by the ``whitespace`` option."""
    if whitespace == "flexible":
        return FLEXIBLE_MAX_RUN
    if whitespace == "compact":
        return 0
    if isinstance(whitespace, int) and not isinstance(whitespace, bool) and 0 <= whitespace <= 1000:
        return whitespace
    raise GrammarError(f"whitespace must be 'flexible', 'compact' or a run length 0..1000, not {whitespace!r}")


class Spacing:
    """The punctuation of JSON with the optional whitespace lexeme around it."""

    def __init__(self, builder: GrammarBuilder, max_run: int) -> None:
        self.builder = builder
        self.ws: list[int] = []
        if max_run > 0:
            pool = builder.pool
            blank = pool.byteset(sum(1 << b for b in b" \t\n\r"))
            self.ws = [builder.lexeme("WS", pool.repeat(blank, 0, max_run))]
        self._punct = {p: builder.literal(p) for p in "{}[],:"}

    def punct(self, text: str) -> int:
        return self._punct[text]

    def open(self, bracket: str) -> list[int]:
        """``{`` or ``[`` and the whitespace after it."""
        return [self._punct[bracket], *self.ws]

    def close(self, bracket: str) -> list[int]:
        """The whitespace before ``}`` or ``]`` and the bracket."""
        return [*self.ws, self._punct[bracket]]

    def comma(self) -> list[int]:
        return [*self.ws, self._punct[","], *self.ws]

    def colon(self) -> list[int]:
        return [*self.ws, self._punct[":"], *self.ws]

    def empty(self, bracket: str) -> list[int]:
        """``{}`` or ``[]`` with whitespace inside."""
        closer = "}" if bracket == "{" else "]"
        return [self._punct[bracket], *self.ws, self._punct[closer]]
