"""The nodes the text front ends (Lark, GBNF, structural tags) share: literals, references to
rules, alternatives and bounded repeats, each with the offset in the source where it starts."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


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
