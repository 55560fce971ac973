"""JSON arrays: prefix items, the schema of the rest, length bounds, ``contains``, ``uniqueItems``
(:class:`ArrayKeywords`).

Element ``j`` follows ``prefixItems[j]`` (``items`` as an array before draft 2020-12) and later
elements the rest schema; length bounds become bounded repetitions. ``contains`` counts the
matching items between ``minContains`` and ``maxContains`` (with a prefix and length bounds);
``uniqueItems`` is exact over at most ``MAX_UNIQUE`` scalar values; otherwise each is refused
(skipped with a warning under ``lenient``).
"""

from __future__ import annotations

import math
from typing import Any

from ...errors import BudgetExceededError, GrammarError
from ...regex.expr import INF as UNBOUNDED_REPEAT
from .values import count_keyword, scalar_spellings

ARRAY_KEYWORDS = frozenset({"items", "prefixItems", "additionalItems", "minItems", "maxItems", "contains",
                            "minContains", "maxContains", "uniqueItems"})
INF = math.inf  # no maxItems
MAX_UNIQUE = 8
MAX_SPAN = 2_000  # maxItems - minItems spelled out as nested optional rules
MAX_CONTAINS_STATES = 4_096  # contains: (item count, match count) states


class ArrayKeywords:
    """The array keywords of :class:`SchemaTranslator` (a mixin: ``self`` is the translator)."""

    def array_symbol(self, schema: dict, pointer: str) -> int | None:
        """The nonterminal of the arrays ``schema`` allows, or ``None`` when there are none."""
        prefix, rest, rest_at = _element_schemas(schema, pointer)
        low = count_keyword(schema, "minItems", pointer, 0)
        high = count_keyword(schema, "maxItems", pointer, INF)
        elements = [self.value(s, f"{pointer}/{where}") for s, where in prefix]
        rest_symbol = self.value(rest, rest_at)
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
            prefix_schemas = [sub for sub, _ in prefix[:len(elements)]]
            body = self.contains_items(schema, pointer, prefix_schemas, rest if rest_symbol is not None else False,
                                       low, high)
        elif schema.get("uniqueItems") is True:
            body = self.unique_items(schema, pointer, elements, rest, low, high)
        else:
            body = self.item_sequence(elements, rest_symbol, low, high, pointer)
        if body is None:
            return None
        key = tuple(body)
        found = self._arrays.get(key)
        if found is None:  # arrays of the same items (and bounds): one nonterminal
            builder = self.builder
            found = self._arrays[key] = builder.sequence(
                [builder.literal("["), *self.ows(), *body, *self.ows(), builder.literal("]")], hint="array")
        return found

    def item_sequence(self, elements: list[int], rest: int | None, low: int, high: int,
                      pointer: str) -> list[int] | None:
        """Symbols for ``e0 , e1 , ...`` with the prefix, then rest elements, ``low..high`` in all."""
        builder = self.builder
        comma = self.punct(",")
        tail: list[int] = []
        rest_low = max(low - len(elements), 0)
        rest_high = high - len(elements) if high != INF else INF
        if rest is not None and rest_high != 0:
            self.check_item_count("minItems", rest_low, pointer)
            if rest_high != INF and rest_high - rest_low > MAX_SPAN:
                self.ctx.unsupported("maxItems", f"{pointer}/maxItems", f"more than {MAX_SPAN} optional elements")
                rest_high = INF
            if rest_high != INF:
                self.check_item_count("maxItems", rest_high, pointer)
            lead = bool(elements)
            tail = self.repeated_items(rest, rest_low, rest_high, lead)
        # the prefix, each element optional from position ``low`` on, nested right to left
        for j in range(len(elements) - 1, -1, -1):
            step = [*(comma if j else []), elements[j], *tail]
            tail = step if j < low else [builder.optional(step, hint="items")]
        return tail

    def check_item_count(self, keyword: str, count: float, pointer: str) -> None:
        """A count of repeated elements above ``Limits.max_repeat`` is a :class:`BudgetExceededError`
        (the rules spell each required element out)."""
        limit = self.builder.limits.max_repeat
        if count > limit:
            raise BudgetExceededError("max_repeat", limit,
                                      f"{keyword} {int(count)} at {pointer}/{keyword} repeats too many elements")

    def repeated_items(self, element: int, low: int, high: int, lead: bool) -> list[int]:
        """``element{low,high}`` separated by commas; ``lead``: a comma before the first too. Made
        once per translator for each ``(element, low, high, lead)``: the symbols derive the same
        strings wherever they stand (``maxItems: 1000`` is a thousand nested rules)."""
        key = (element, low, high, lead)
        found = self._repeated_items.get(key)
        if found is None:
            found = self._repeated_items[key] = self._new_repeated_items(element, low, high, lead)
        return list(found)

    def _new_repeated_items(self, element: int, low: int, high: int, lead: bool) -> list[int]:
        builder = self.builder
        comma = self.punct(",")

        def bound(n: float) -> int:
            return UNBOUNDED_REPEAT if n == INF else int(n)

        if lead:
            return [builder.repeat([*comma, element], low, bound(high), hint="items")]
        if low == 0:
            more = [] if high == 1 else [builder.repeat([*comma, element], 0, bound(high - 1), hint="items")]
            return [builder.optional([element, *more], hint="items")]
        more = [] if high == 1 else [builder.repeat([*comma, element], low - 1, bound(high - 1), hint="items")]
        return [element, *more]

    def contains_items(self, schema: dict, pointer: str, prefix: list[Any], rest: Any, low: int,
                       high: float) -> list[int] | None:
        """Arrays of ``low..high`` items, ``minContains..maxContains`` of them matching
        ``contains``: rules ``N(j, c)`` after ``j`` items of which ``c`` matched (``j`` told apart
        up to the prefix and the length bounds, ``c`` up to the contains bounds), kept where they
        can end. Without ``maxContains`` an item that need not match is any item (no negation);
        with it, an item that does not match is one valid under ``not contains``."""
        at = f"{pointer}/contains"
        need = count_keyword(schema, "minContains", pointer, 1)
        most = count_keyword(schema, "maxContains", pointer, INF)
        self.check_item_count("minContains", need, pointer)
        last = max(len(prefix), low, 1, 0 if high == INF else high)  # item counts told apart (0: no comma yet)
        top = need if most == INF else most  # match counts told apart
        if schema.get("uniqueItems") is True or (last + 1) * (top + 1) > MAX_CONTAINS_STATES:
            self.ctx.unsupported("contains", at, "contains is exact with its counts, a prefix and length bounds, "
                                 f"in at most {MAX_CONTAINS_STATES} (item count, match count) states, "
                                 "without uniqueItems")
            return self.item_sequence([self.value(sub, at) for sub in prefix], self.value(rest, at), low, high,
                                      pointer)
        if most < need:
            return None
        moves = self._contains_moves(schema["contains"], at, prefix, rest, high, (need, most), (last, top))
        live = {state for state in moves if state[0] >= low and state[1] >= need}
        grew = True
        while grew:
            grew = False
            for state, out in moves.items():
                if state not in live and any(after in live for _, after in out):
                    live.add(state)
                    grew = True
        if (0, 0) not in live:
            return None
        builder = self.builder
        names = {state: builder.fresh_nonterminal("contains") for state in live}
        for (j, c), out in moves.items():
            if (j, c) in live:
                if j >= low and c >= need:
                    builder.rule(names[(j, c)], [])
                for symbol, after in out:
                    if after in live:
                        builder.rule(names[(j, c)], [*(self.punct(",") if j else []), symbol, names[after]])
        return [names[(0, 0)]]

    def _contains_moves(self, contained: Any, at: str, prefix: list[Any], rest: Any, high: float,
                        matches: tuple[int, float], told: tuple[int, int]) -> dict[tuple[int, int], list]:
        """The states ``(j, c)`` reachable from ``(0, 0)`` and their moves ``(item symbol, next state)``."""
        (need, most), (last, top) = matches, told
        symbols: dict[tuple[int, bool], int | None] = {}

        def element(j: int, hit: bool) -> int | None:
            key = (min(j, len(prefix)), hit)
            if key not in symbols:
                base = prefix[j] if j < len(prefix) else rest
                if hit:
                    symbols[key] = self.value({"allOf": [base, contained]}, at)
                else:
                    symbols[key] = self.value(base if most == INF else {"allOf": [base, {"not": contained}]}, at)
            return symbols[key]

        moves: dict[tuple[int, int], list[tuple[int, tuple[int, int]]]] = {}
        pending = [(0, 0)]
        while pending:
            here = pending.pop()
            if here in moves:
                continue
            j, c = here
            moves[here] = []
            for hit in (True, False) if j < high else ():
                symbol = element(j, hit)
                after = (min(j + 1, last) if high == INF else j + 1, c + hit if most != INF else min(c + hit, need))
                if symbol is not None and after[1] <= top:
                    moves[here].append((symbol, after))
                    pending.append(after)
        return moves

    def unique_items(self, schema: dict, pointer: str, elements: list[int], rest: Any,
                     low: int, high: int) -> list[int] | None:
        at = f"{pointer}/uniqueItems"
        values = self.finite_item_values(rest, pointer)
        if values is None or elements or len(values) > MAX_UNIQUE:
            self.ctx.unsupported("uniqueItems", at, f"uniqueItems is exact only for items from at most {MAX_UNIQUE} "
                                 "scalar values (an enum, booleans)")
            return self.item_sequence(elements, self.value(rest, pointer), low, high, pointer)
        builder = self.builder
        pool = self.pool
        symbols = [builder.lexeme(spellings[0].decode("utf-8", "replace"),
                                  pool.alt([pool.literal(s) for s in spellings])) for spellings in values]
        made: dict[int, int] = {}

        def used(mask: int) -> int:
            found = made.get(mask)
            if found is None:
                found = made[mask] = builder.fresh_nonterminal("unique")
                count = mask.bit_count()
                if low <= count <= high:
                    builder.rule(found, [])
                if count < high:
                    for k, symbol in enumerate(symbols):
                        if not mask >> k & 1:
                            sep = self.punct(",") if mask else []
                            builder.rule(found, [*sep, symbol, used(mask | 1 << k)])
            return found

        return [used(0)]

    def finite_item_values(self, rest: Any, pointer: str) -> list[list[bytes]] | None:
        """The spellings of each value ``rest`` allows when it is a finite set of scalars."""
        if not isinstance(rest, dict):
            return None
        if "$ref" in rest and len(rest) == 1:
            rest, _ = self.refs.resolve(rest["$ref"], self.refs.base(rest), pointer)
            if not isinstance(rest, dict):
                return None
        if "enum" in rest or "const" in rest:
            values = self.enumerated_values(rest, pointer)
            if (any(isinstance(v, (dict, list)) for v in values)
                    or set(rest) - {"enum", "const", "type", "description", "title"}):
                return None
            return [scalar_spellings(v) for v in values]
        if rest.get("type") == "boolean" and set(rest) <= {"type", "description", "title"}:
            return [[b"true"], [b"false"]]
        return None


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
