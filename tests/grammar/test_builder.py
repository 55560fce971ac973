"""GrammarBuilder.repeat writes what nested optional() calls would."""

from __future__ import annotations

import pytest

from leapgram.grammar.builder import GrammarBuilder
from leapgram.regex.expr import INF


def _repeat_by_optionals(builder: GrammarBuilder, items: list[int], low: int, high: int, hint: str) -> int:
    """The plain twin: one ``optional`` per element past ``low``, innermost first."""
    required = [sym for _ in range(low) for sym in items]
    tail: list[int] = []
    for _ in range(high - low):
        tail = [builder.optional([*items, *tail], hint=hint)]
    return builder.sequence([*required, *tail], hint=hint)


def _state(builder: GrammarBuilder) -> tuple:
    return list(builder._nonterminals), list(builder._rules), set(builder._defined), builder._fresh


@pytest.mark.parametrize(("low", "high"), [(0, 0), (0, 1), (0, 5), (2, 2), (2, 7), (3, 40)])
def test_repeat_writes_the_nested_optionals(low: int, high: int) -> None:
    made = []
    for repeat in (GrammarBuilder.repeat, _repeat_by_optionals):
        builder = GrammarBuilder()
        a, b = builder.literal("a"), builder.literal(",")
        before = builder.fresh_nonterminal("x")  # fresh names go on from here
        symbol = repeat(builder, [b, a], low, high, hint="items")
        made.append((symbol, before, _state(builder)))
    assert made[0] == made[1]


def test_unbounded_repeat_is_a_star() -> None:
    builder = GrammarBuilder()
    a = builder.literal("a")
    top = builder.repeat([a], 2, INF)
    ir = builder.build(top)
    assert len(ir.rules) == 3
