"""Arrays: ``items`` (and its draft 4–2019 array form with ``additionalItems``), ``prefixItems``,
``minItems``/``maxItems``, ``contains`` with ``minContains``, ``uniqueItems``.

Element ``i`` must satisfy, in every part, that part's ``prefixItems[i]`` or else its ``items``
(the rest schema). The elements are a chain of nonterminals, one per position up to the longest
prefix or ``minItems``, then a bounded or unbounded repetition of the rest. ``contains`` (without
a prefix or item counts) is ``I* (C∧I) I*``, repeated ``minContains`` times: exact, because an
element that also satisfies ``C`` may stand in the ``I*`` parts. ``maxContains`` needs the
complement of a schema and is refused, like ``uniqueItems`` unless at most one element fits.
"""

from __future__ import annotations

from ...errors import GrammarError
from ...regex.expr import INF

KEYWORDS = frozenset({"items", "prefixItems", "additionalItems", "minItems", "maxItems", "contains",
                      "minContains", "maxContains", "uniqueItems"})


def array_symbol(tr, parts: list) -> int:
    """The symbol of the JSON arrays valid under every part."""
    from .objects import _count_bound

    low = _count_bound(parts, "minItems", max) or 0
    high = _count_bound(parts, "maxItems", min)
    prefixes, rests = _positions(tr, parts)
    _check_unique(tr, parts, high)
    contains = [p for p in parts if p.has("contains")]
    s, b = tr.spacing, tr.builder
    alternatives = []
    if low == 0 and not (contains and _min_contains(contains) > 0):
        alternatives.append(s.empty("["))
    if high is None or high > 0:
        if contains:
            body = _contains_body(tr, parts, contains, prefixes, rests, low, high)
        else:
            body = _elements(tr, prefixes, rests, low, high)
        if body is not None:
            alternatives.append([*s.open("["), body, *s.close("]")])
    return b.choice(alternatives, hint="array") if alternatives else tr.never()


def _positions(tr, parts: list):
    """Per part: its prefix schemas (a list of parts) and its rest schema (a part, or ``None``)."""
    from .translate import schema_part

    prefixes, rests = [], []
    for part in parts:
        prefix, rest = [], None
        items = part.get("items")
        if part.has("prefixItems"):
            listed = part.get("prefixItems")
            if not isinstance(listed, list):
                raise GrammarError("prefixItems must be an array", pointer=part.at("prefixItems"))
            prefix = [schema_part(s, part.at("prefixItems", i)) for i, s in enumerate(listed)]
            if part.has("items"):
                rest = schema_part(items, part.at("items"))
        elif isinstance(items, list):
            prefix = [schema_part(s, part.at("items", i)) for i, s in enumerate(items)]
            if part.has("additionalItems"):
                rest = schema_part(part.get("additionalItems"), part.at("additionalItems"))
        elif part.has("items"):
            rest = schema_part(items, part.at("items"))
        prefixes.append(prefix)
        rests.append(rest)
    return prefixes, rests


def _element_parts(prefixes: list, rests: list, i: int | None) -> list:
    """The parts element ``i`` must satisfy (``None``: an element past every prefix)."""
    out = []
    for prefix, rest in zip(prefixes, rests):
        if i is not None and i < len(prefix):
            out.append(prefix[i])
        elif rest is not None:
            out.append(rest)
    return out


def _elements(tr, prefixes: list, rests: list, low: int, high: int | None) -> int | None:
    """Elements (at least one) from position 0, as a chain of nonterminals."""
    b, comma = tr.builder, tr.spacing.comma()
    fixed = max([low] + [len(p) for p in prefixes])
    if high is not None:
        fixed = min(fixed, high)
    if fixed > tr.builder.limits.max_repeat:
        tr.ctx.unsupported("minItems", "", "more fixed positions than Limits.max_repeat")
        fixed = 1
    rest = tr.conjunction(_element_parts(prefixes, rests, None))
    tail_high = INF if high is None else high - max(fixed, 1)
    if tail_high > tr.builder.limits.max_repeat:
        tr.ctx.unsupported("maxItems", "", "above Limits.max_repeat")
        tail_high = INF
    if fixed == 0:
        if tail_high == 0:
            return b.sequence([rest], hint="items")
        tail = b.repeat([*comma, rest], 0, tail_high, hint="items")
        return b.sequence([rest, tail], hint="items")
    tail = b.sequence([], hint="items") if tail_high == 0 else b.repeat([*comma, rest], 0, tail_high, hint="items")
    following = tail
    for i in range(fixed - 1, -1, -1):
        element = tr.conjunction(_element_parts(prefixes, rests, i))
        here = [*(comma if i else []), element, following]
        following = b.choice([here] + ([[]] if i >= max(low, 1) else []), hint=f"item{i}")
    return following


def _min_contains(contains: list) -> int:
    values = [c.get("minContains", 1) for c in contains]
    return max(v for v in values if isinstance(v, int)) if values else 1


def _contains_body(tr, parts, contains, prefixes, rests, low, high) -> int | None:
    b, comma = tr.builder, tr.spacing.comma()
    for part in contains:
        if part.has("maxContains"):
            tr.ctx.unsupported("maxContains", part.at("maxContains"), "it needs the complement of a schema")
    if len(contains) > 1 or any(prefixes) or low > 1 or high is not None:
        tr.ctx.unsupported("contains", contains[0].at("contains"),
                           "contains is supported alone, without prefixItems, minItems > 1 or maxItems")
        return _elements(tr, prefixes, rests, low, high)
    from .translate import schema_part

    part = contains[0]
    need = _min_contains(contains)
    item_parts = _element_parts(prefixes, rests, None)
    item = tr.conjunction(item_parts)
    hit = tr.conjunction(item_parts + [schema_part(part.get("contains"), part.at("contains"))])
    if need == 0:
        return _elements(tr, prefixes, rests, 1, None)
    if need > tr.builder.limits.max_repeat:
        tr.ctx.unsupported("minContains", part.at("minContains"), "above Limits.max_repeat")
        need = 1
    any_before = b.star([item, *comma], hint="items")
    any_after = b.star([*comma, item], hint="items")
    seq = [any_before, hit]
    for _ in range(need - 1):
        seq += [b.star([*comma, item], hint="items"), *comma, hit]
    return b.sequence(seq + [any_after], hint="contains")


def _check_unique(tr, parts: list, high: int | None) -> None:
    for part in parts:
        if part.get("uniqueItems") is True and (high is None or high > 1):
            tr.ctx.unsupported("uniqueItems", part.at("uniqueItems"),
                               "unique elements are only enforced when maxItems <= 1")
