"""ECMA-262 regexes (JSON Schema ``pattern``) → expressions over the UTF-8 of the decoded value.

The parser of :mod:`leapgram.regex.syntax` is reused where the two dialects agree; this module
changes what differs (``\\s``, ``.``, ``[^]``, ``\\p{...}``, and the pattern is unanchored,
``^``/``$`` inside it resolved exactly). Lookaround, backreferences and ``\\b`` are refused. The
dialect differences: docs/design/json-schema-values.md ("Patterns").
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from ...errors import UnsupportedError
from ...regex.expr import EMPTY, K_AND, K_BYTES, K_CONCAT, K_NOT, K_OR, K_REPEAT, ExprPool
from ...regex.syntax import RegexParser
from ...regex.utf8 import MAX_CODE_POINT, Ranges, negate, normalize, ranges_to_expr

LINE_TERMINATORS: Ranges = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))
ECMA_SPACE: Ranges = normalize([(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680),
                                (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F),
                                (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)])
CATEGORY_NAMES = {
    "Letter": "L", "Cased_Letter": "LC", "Uppercase_Letter": "Lu", "Lowercase_Letter": "Ll",
    "Titlecase_Letter": "Lt", "Modifier_Letter": "Lm", "Other_Letter": "Lo", "Mark": "M",
    "Nonspacing_Mark": "Mn", "Spacing_Mark": "Mc", "Enclosing_Mark": "Me", "Number": "N",
    "Decimal_Number": "Nd", "digit": "Nd", "Letter_Number": "Nl", "Other_Number": "No",
    "Punctuation": "P", "punct": "P", "Connector_Punctuation": "Pc", "Dash_Punctuation": "Pd",
    "Open_Punctuation": "Ps", "Close_Punctuation": "Pe", "Initial_Punctuation": "Pi",
    "Final_Punctuation": "Pf", "Other_Punctuation": "Po", "Symbol": "S", "Math_Symbol": "Sm",
    "Currency_Symbol": "Sc", "Modifier_Symbol": "Sk", "Other_Symbol": "So", "Separator": "Z",
    "Space_Separator": "Zs", "Line_Separator": "Zl", "Paragraph_Separator": "Zp", "Other": "C",
    "Control": "Cc", "cntrl": "Cc", "Format": "Cf", "Surrogate": "Cs", "Private_Use": "Co",
    "Unassigned": "Cn",
}


def ecma_pattern_expr(pattern: str, pool: ExprPool) -> int:
    """The expression of every string (as UTF-8) in which ``pattern`` finds a match."""
    try:
        return _EcmaParser(pattern, pool).parse()
    except UnsupportedError as error:
        if not error.feature.startswith("anchor"):
            raise
    return _anchored_search(pool, _MarkedParser(pattern, pool).parse())


START, END = 0xFE, 0xFF  # never in UTF-8: zero-width ^ and $ become these marker bytes


def _anchored_search(pool: ExprPool, marked: int) -> int:
    """Strings ``s`` such that ``START^i s END^j`` is in ``any marked any`` for some ``i, j``: a
    ``^`` matches only before the first character (any number of times), a ``$`` only after the
    last. The markers are removed by derivatives at each end (the end ones on the reversed
    expression); what still holds a marker matches nothing."""
    anything = any_text(pool)
    framed = pool.concat_all([anything, marked, anything])
    inner = _reverse(pool, _quotient(pool, _reverse(pool, _quotient(pool, framed, START)), END))
    return _map_bytes(pool, inner, lambda mask: pool.byteset(mask & ~((1 << START) | (1 << END))))


def _quotient(pool: ExprPool, e: int, marker: int) -> int:
    """The union of the derivatives of ``e`` by ``marker^i`` for every ``i ≥ 0``."""
    seen = [e]
    for _ in range(64):
        e = pool.derivative(e, marker)
        if e == EMPTY or e in seen:
            return pool.alt(seen)
        seen.append(e)
    raise UnsupportedError("anchor", "unsupported regex feature: anchors repeated more than 64 "
                           "times at one end of the pattern")


def _reverse(pool: ExprPool, e: int) -> int:
    return _rebuild(pool, e, pool.byteset, reverse=True)


def _map_bytes(pool: ExprPool, e: int, on_bytes) -> int:
    return _rebuild(pool, e, on_bytes, reverse=False)


def _rebuild(pool: ExprPool, root: int, on_bytes, reverse: bool) -> int:
    """``root`` rebuilt bottom-up with each byte class replaced by ``on_bytes(mask)`` and, when
    ``reverse``, every concatenation reversed (bool-free expressions only)."""
    memo: dict[int, int] = {}

    def visit(node: int) -> int:
        found = memo.get(node)
        if found is not None:
            return found
        e = node
        kind, args = pool.kind[e], pool.args[e]
        if kind == K_BYTES:
            out = on_bytes(args[0])
        elif kind == K_CONCAT:
            items = []
            while pool.kind[e] == K_CONCAT:
                head, e = pool.args[e]
                items.append(head)
            items = [visit(x) for x in items + [e]]
            out = pool.concat_all(items[::-1] if reverse else items)
        elif kind == K_OR:
            out = pool.alt([visit(x) for x in args])
        elif kind == K_REPEAT:
            out = pool.repeat(visit(args[0]), args[1], args[2])
        elif kind in (K_AND, K_NOT):
            raise ValueError("anchors are resolved before any intersection")
        else:
            out = e
        memo[node] = out
        return out

    return visit(root)


def any_text(pool: ExprPool) -> int:
    """Any sequence of code points, as UTF-8."""
    return pool.repeat(ranges_to_expr(pool, normalize([(0, MAX_CODE_POINT)])), 0)


@lru_cache(maxsize=1)
def _categories() -> dict[str, Ranges]:
    found: dict[str, list[tuple[int, int]]] = {}
    for cp in range(MAX_CODE_POINT + 1):
        category = unicodedata.category(chr(cp))
        spans = found.setdefault(category, [])
        if spans and spans[-1][1] == cp - 1:
            spans[-1] = (spans[-1][0], cp)
        else:
            spans.append((cp, cp))
    return {name: normalize(spans) for name, spans in found.items()}


def category_ranges(name: str) -> Ranges | None:
    """The code points of a general category (``Lu``), a group (``L``) or ``LC``; None if unknown."""
    short = CATEGORY_NAMES.get(name, name)
    table = _categories()
    if short == "LC":
        members = ["Lu", "Ll", "Lt"]
    elif len(short) == 1:
        members = [c for c in table if c[0] == short]
    else:
        members = [short] if short in table else []
    if not members and short not in ("Cs",):
        return None
    return normalize([r for c in members for r in table.get(c, ())])


class _EcmaParser(RegexParser):
    def __init__(self, pattern: str, pool: ExprPool) -> None:
        super().__init__(pattern, pool, False, False)

    def parse(self) -> int:
        self.parse_leading_flags()
        groups: dict[tuple[bool, bool], list[int]] = {}  # the branches by (free start, free end)
        while True:
            free_start, expr, free_end = self.parse_branch()
            groups.setdefault((free_start, free_end), []).append(expr)
            if self.peek() != "|":
                break
            self.pos += 1
        if not self.at_end():
            raise self.error("unbalanced parenthesis ')'")
        # branches searched the same way share their free ends: any (X | Y) any, not any X any |
        # any Y any, whose derivatives step every branch's leading search (docs/design/json-schema-values.md)
        pool = self.pool
        anything = any_text(pool)
        return pool.alt([pool.concat_all(([anything] if free_start else []) + [pool.alt(exprs)]
                                         + ([anything] if free_end else []))
                         for (free_start, free_end), exprs in groups.items()])

    def parse_branch(self) -> tuple[bool, int, bool]:
        """``(free start, expr, free end)``: the branch is ``any expr any`` without the ends that
        an anchor holds (any text alone when a free end finds the empty match)."""
        start = self.pos
        carets_before = len(self.carets)
        expr, dollar_at = self.parse_sequence(at_start=True)
        carets = self.carets[carets_before:]
        for at in carets:
            if at != start:
                raise self.unsupported("anchor ^ inside a group", "put ^ at the start of the pattern", at)
        if dollar_at is not None and dollar_at != self.pos - 1:
            raise self.unsupported("anchor $ inside a group", "put $ at the end of the pattern", dollar_at)
        if (not carets or dollar_at is None) and self.pool.nullable[expr]:
            # a search at a free end finds the empty match in every string (``.*``, ``^a*``,
            # ``x?$``): the branch is any text, the node string_universe is built from, so the
            # keys of patternProperties ``.*`` are that universe, found not empty with no search
            return False, any_text(self.pool), False
        return not carets, expr, dollar_at is None

    def parse_atom(self, at_start: bool) -> tuple[int, int | None]:
        if self.peek() == "." and not self.dotall:
            self.pos += 1
            return ranges_to_expr(self.pool, negate(LINE_TERMINATORS)), None
        if self.startswith("[]"):
            self.pos += 2
            return EMPTY, None
        if self.startswith("[^]"):
            self.pos += 3
            return ranges_to_expr(self.pool, normalize([(0, MAX_CODE_POINT)])), None
        return super().parse_atom(at_start)

    def parse_escape_ranges(self, in_class: bool) -> Ranges:
        ch = self.peek(1)
        if ch in ("s", "S"):
            self.pos += 2
            return ECMA_SPACE if ch == "s" else negate(ECMA_SPACE)
        if ch in ("p", "P"):
            return self.property_ranges(ch == "P")
        return super().parse_escape_ranges(in_class)

    def property_ranges(self, negated: bool) -> Ranges:
        start = self.pos
        self.pos += 2
        if self.peek() != "{":
            raise self.error("expected { after \\p", start)
        close = self.src.find("}", self.pos)
        if close < 0:
            raise self.error("unterminated \\p{...}", start)
        name = self.src[self.pos + 1 : close]
        self.pos = close + 1
        key, _, value = name.partition("=")
        if value and key not in ("General_Category", "gc"):
            raise self.unsupported(f"Unicode property \\p{{{name}}}",
                                   "only general categories (\\p{L}, \\p{Nd}, ...) are supported", start)
        ranges = category_ranges(value or key)
        if ranges is None:
            raise self.unsupported(f"Unicode property \\p{{{name}}}",
                                   "only general categories (\\p{L}, \\p{Nd}, ...) are supported", start)
        return negate(ranges) if negated else ranges



class _MarkedParser(_EcmaParser):
    """Reads ``^`` and ``$`` anywhere as the marker bytes; the caller resolves them."""

    def parse(self) -> int:
        return RegexParser.parse(self)

    def parse_sequence(self, at_start: bool) -> tuple[int, int | None]:
        items: list[int] = []
        while not self.at_end() and self.peek() not in "|)":
            ch = self.peek()
            if ch in "^$":
                self.pos += 1
                self.reject_quantifier()
                items.append(self.pool.byteset(1 << (START if ch == "^" else END)))
                continue
            atom, _ = self.parse_atom(False)
            items.append(self.parse_quantifiers(atom, None))
        return self.pool.concat_all(items), None
