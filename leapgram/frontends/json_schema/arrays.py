"""JSON arrays: prefix items, the schema of the rest, length bounds, ``contains``, ``uniqueItems``.

Element ``j`` follows ``prefixItems[j]`` (``items`` as an array before draft 2020-12) and later
elements the rest schema (``items``, or ``additionalItems`` next to an array ``items``); the
length bounds become bounded repetitions. ``contains`` with ``minContains`` (no ``maxContains``,
no length bounds, no prefix) asks for that many elements that satisfy both the rest schema and
the contained one. ``uniqueItems`` is exact when the elements come from a finite set of at most
``MAX_UNIQUE`` scalar values (an enum, booleans): the rules track which values were used;
otherwise it is refused (skipped with a warning under ``lenient``).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ...errors import BudgetExceededError, GrammarError
from ...regex.expr import INF as UNBOUNDED_REPEAT
from .values import count_keyword, scalar_spellings

if TYPE_CHECKING:
    from .translate import SchemaTranslator

ARRAY_KEYWORDS = frozenset({"items", "prefixItems", "additionalItems", "minItems", "maxItems", "contains",
                            "minContains", "maxContains", "uniqueItems"})
INF = math.inf  # no maxItems
MAX_UNIQUE = 8
MAX_SPAN = 2_000  # maxItems - minItems spelled out as nested optional rules


def array_symbol(t: SchemaTranslator, schema: dict, pointer: str) -> int | None:
    """The nonterminal of the arrays ``schema`` allows, or ``None`` when there are none."""
    prefix, rest, rest_at = _element_schemas(schema, pointer)
    low = count_keyword(schema, "minItems", pointer, 0)
    high = count_keyword(schema, "maxItems", pointer, INF)
    elements = [t.value(s, f"{pointer}/{where}") for s, where in prefix]
    rest_symbol = t.value(rest, rest_at)
    for j, symbol in enumerate(elements):
        if symbol is None:  # nothing fits at j: the array ends before it
            elements = elements[:j]
            rest_symbol = None
            break
    if rest_symbol is None:
        high = min(high, len(elements))
    if low > high:
        return None
    if "contains" in schema:
        body = _contains(t, schema, pointer, elements, rest, rest_at, low, high)
    elif schema.get("uniqueItems") is True:
        body = _unique(t, schema, pointer, elements, rest, low, high)
    else:
        body = _sequence(t, elements, rest_symbol, low, high, pointer)
    if body is None:
        return None
    b = t.b
    return b.sequence([b.literal("["), *t.ows(), *body, *t.ows(), b.literal("]")], hint="array")


def _element_schemas(schema: dict, pointer: str) -> tuple[list[tuple[Any, str]], Any, str]:
    items = schema.get("items", True)
    if "prefixItems" in schema:
        prefix = schema["prefixItems"]
        if not isinstance(prefix, list):
            raise GrammarError("prefixItems must be an array", pointer=f"{pointer}/prefixItems")
        return [(s, f"prefixItems/{j}") for j, s in enumerate(prefix)], items, f"{pointer}/items"
    if isinstance(items, list):
        rest = schema.get("additionalItems", True)
        return [(s, f"items/{j}") for j, s in enumerate(items)], rest, f"{pointer}/additionalItems"
    return [], items, f"{pointer}/items"



def _sequence(t: SchemaTranslator, elements: list[int], rest: int | None, low: int, high: int,
              pointer: str) -> list[int] | None:
    """Symbols for ``e0 , e1 , ...`` with the prefix, then rest elements, ``low..high`` in all."""
    b = t.b
    comma = t.punct(",")
    tail: list[int] = []
    rest_low = max(low - len(elements), 0)
    rest_high = high - len(elements) if high != INF else INF
    if rest is not None and rest_high != 0:
        _check_bound(t, "minItems", rest_low, pointer)
        if rest_high != INF and rest_high - rest_low > MAX_SPAN:
            t.ctx.unsupported("maxItems", f"{pointer}/maxItems", f"more than {MAX_SPAN} optional elements")
            rest_high = INF
        if rest_high != INF:
            _check_bound(t, "maxItems", rest_high, pointer)
        lead = bool(elements)
        tail = _repeat(t, rest, rest_low, rest_high, lead)
    # the prefix, each element optional from position ``low`` on, nested right to left
    for j in range(len(elements) - 1, -1, -1):
        step = [*(comma if j else []), elements[j], *tail]
        tail = step if j < low else [b.optional(step, hint="items")]
    return tail


def _check_bound(t: SchemaTranslator, keyword: str, count: float, pointer: str) -> None:
    """A count of repeated elements above ``Limits.max_repeat`` is a :class:`BudgetExceededError`
    (the rules spell each required element out)."""
    if count > t.b.limits.max_repeat:
        raise BudgetExceededError("max_repeat", t.b.limits.max_repeat,
                                  f"{keyword} {int(count)} at {pointer}/{keyword} repeats too many elements")


def _repeat(t: SchemaTranslator, element: int, low: int, high: int, lead: bool) -> list[int]:
    """``element{low,high}`` separated by commas; ``lead``: a comma before the first too."""
    b = t.b
    comma = t.punct(",")
    def bound(n: float) -> int:
        return UNBOUNDED_REPEAT if n == INF else int(n)

    if lead:
        return [b.repeat([*comma, element], low, bound(high), hint="items")]
    if low == 0:
        more = [] if high == 1 else [b.repeat([*comma, element], 0, bound(high - 1), hint="items")]
        return [b.optional([element, *more], hint="items")]
    more = [] if high == 1 else [b.repeat([*comma, element], low - 1, bound(high - 1), hint="items")]
    return [element, *more]


def _contains(t: SchemaTranslator, schema: dict, pointer: str, elements: list[int], rest: Any, rest_at: str,
              low: int, high: int) -> list[int] | None:
    at = f"{pointer}/contains"
    need = count_keyword(schema, "minContains", pointer, 1)
    if "maxContains" in schema or elements or low > need or high != INF or schema.get("uniqueItems") is True:
        t.ctx.unsupported("contains", at, "contains is exact only alone with minContains (no maxContains, "
                          "prefix items, length bounds or uniqueItems)")
        return _sequence(t, elements, t.value(rest, rest_at), low, high, pointer)
    _check_bound(t, "minContains", need, pointer)
    plain = t.value(rest, rest_at)
    hit = t.value({"allOf": [rest, schema["contains"]]}, at)
    if need == 0:
        return _sequence(t, [], plain, 0, INF, pointer)
    if hit is None:
        return None
    b = t.b
    comma = t.punct(",")
    # (P ,)* H ((, P)* , H){need-1} (, P)*  -- every hit is also a plain element
    body = [b.star([plain, *comma], hint="items"), hit]
    for _ in range(need - 1):
        body += [b.star([*comma, plain], hint="items"), *comma, hit]
    body.append(b.star([*comma, plain], hint="items"))
    return body


def _unique(t: SchemaTranslator, schema: dict, pointer: str, elements: list[int], rest: Any,
            low: int, high: int) -> list[int] | None:
    at = f"{pointer}/uniqueItems"
    values = _finite_values(t, rest, pointer)
    if values is None or elements or len(values) > MAX_UNIQUE:
        t.ctx.unsupported("uniqueItems", at, f"uniqueItems is exact only for items from at most {MAX_UNIQUE} "
                          "scalar values (an enum, booleans)")
        return _sequence(t, elements, t.value(rest, pointer), low, high, pointer)
    b = t.b
    pool = t.pool
    symbols = [b.lexeme(spellings[0].decode("utf-8", "replace"), pool.alt([pool.literal(s) for s in spellings]))
               for spellings in values]
    made: dict[int, int] = {}

    def used(mask: int) -> int:
        found = made.get(mask)
        if found is None:
            found = made[mask] = b.fresh_nonterminal("unique")
            count = bin(mask).count("1")
            if low <= count <= high:
                b.rule(found, [])
            if count < high:
                for k, symbol in enumerate(symbols):
                    if not mask >> k & 1:
                        b.rule(found, [*(t.punct(",") if mask else []), symbol, used(mask | 1 << k)])
        return found

    return [used(0)]


def _finite_values(t: SchemaTranslator, rest: Any, pointer: str) -> list[list[bytes]] | None:
    """The spellings of each value ``rest`` allows when it is a finite set of scalars."""
    if not isinstance(rest, dict):
        return None
    if "$ref" in rest and len(rest) == 1:
        rest, _ = t.refs.resolve(rest["$ref"], t.refs.base(rest), pointer)
        if not isinstance(rest, dict):
            return None
    if "enum" in rest or "const" in rest:
        values = t.enumerated_values(rest, pointer)
        if any(isinstance(v, (dict, list)) for v in values) or set(rest) - {"enum", "const", "type", "description", "title"}:
            return None
        return [scalar_spellings(v) for v in values]
    if rest.get("type") == "boolean" and set(rest) <= {"type", "description", "title"}:
        return [[b"true"], [b"false"]]
    return None
