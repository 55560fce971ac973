"""ECMA-262 regexes as JSON Schema ``pattern`` reads them: unanchored search over the decoded
string, as the UTF-8 byte expression of every string the pattern matches somewhere.

The syntax is :mod:`leapgram.regex.syntax`'s (the same atoms, classes, groups and quantifiers) with
ECMA meanings where they differ from Python's:

* ``.`` matches any code point but the line terminators ``\\n \\r \\u2028 \\u2029``;
* ``\\s`` is ECMA white space and line terminators (``\\u00a0``, ``\\ufeff``, the Unicode spaces),
  ``\\d`` and ``\\w`` are ASCII;
* ``[]`` matches nothing and ``[^]`` any code point;
* ``\\p{...}``/``\\P{...}`` for general categories (``L``, ``Lu``, ``Letter``, ``gc=Nd``...) from
  Python's ``unicodedata``; scripts and binary properties are refused;
* ``^`` and ``$`` assert the edges of the whole string. Each top-level alternative is a search:
  ``a`` means "contains a", ``^a`` "starts with a", ``a$`` "ends with a". An anchor that is not at
  an edge of the pattern (``a^b``, ``(a$)+``) is refused.

Lookaround, backreferences and ``\\b`` raise :class:`UnsupportedError` naming the construct.
"""

from __future__ import annotations

import unicodedata
from functools import cache

from ...regex.expr import EMPTY, EPSILON, ExprPool
from ...regex.syntax import _Parser
from ...regex.utf8 import MAX_CODE_POINT, Ranges, negate, normalize, ranges_to_expr

ECMA_SPACE: Ranges = normalize([(0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A),
                                (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
                                (0xFEFF, 0xFEFF)])
LINE_TERMINATORS: Ranges = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))
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
    "Control": "Cc", "Format": "Cf", "Surrogate": "Cs", "Private_Use": "Co", "Unassigned": "Cn",
}

# (start anchored, end anchored) -> expression of the strings matched between the anchors
Variants = dict[tuple[bool, bool], int]
PLAIN = (False, False)


def pattern_expr(pattern: str, pool: ExprPool) -> int:
    """The UTF-8 strings in which ``pattern`` finds a match (JSON Schema ``pattern`` semantics).

    Raises :class:`GrammarError` (with the offset) for a malformed pattern and
    :class:`UnsupportedError` for lookaround, backreferences, word boundaries and inner anchors.
    """
    variants = _EcmaParser(pattern, pool).parse_variants()
    anything = pool.star(any_char(pool))
    branches = []
    for (start, end), expr in variants.items():
        branches.append(pool.concat_all([EPSILON if start else anything, expr, EPSILON if end else anything]))
    return pool.alt(branches)


def any_char(pool: ExprPool) -> int:
    """One code point in UTF-8."""
    return ranges_to_expr(pool, ((0, MAX_CODE_POINT),))


@cache
def category_ranges(category: str) -> Ranges:
    """Code points whose general category is ``category`` or starts with it (``L`` covers ``Lu``)."""
    ranges: list[tuple[int, int]] = []
    wanted = ("Lu", "Ll", "Lt") if category == "LC" else None
    for cp in range(MAX_CODE_POINT + 1):
        cat = unicodedata.category(chr(cp))
        if (cat in wanted) if wanted else cat.startswith(category):
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1] = (ranges[-1][0], cp)
            else:
                ranges.append((cp, cp))
    return normalize(ranges)


class _EcmaParser(_Parser):
    """:mod:`leapgram.regex.syntax`'s parser with ECMA classes and anchors kept as variants."""

    def __init__(self, pattern: str, pool: ExprPool) -> None:
        super().__init__(pattern, pool, False, False)

    def parse_variants(self) -> Variants:
        variants = self.variants_alternation()
        if not self.at_end():
            raise self.error("unbalanced parenthesis ')'")
        return variants

    def variants_alternation(self) -> Variants:
        out: Variants = {}
        while True:
            for key, expr in self.variants_sequence().items():
                out[key] = self.pool.alt([out.get(key, EMPTY), expr])
            if self.peek() != "|":
                return out
            self.pos += 1

    def variants_sequence(self) -> Variants:
        items: list[tuple[Variants, int]] = []
        while not self.at_end() and self.peek() not in "|)":
            start = self.pos
            atom = self.variants_atom()
            if self.peek() and self.peek() in "*+?{" and not self.is_plain(atom):
                if self.peek() != "{" or self.looks_like_quantifier():
                    atom = self.quantify_anchored(atom, start)
            elif self.is_plain(atom):
                atom = {PLAIN: self.parse_quantifiers(atom[PLAIN], None)}
            items.append((atom, start))
        return self.join(items)

    @staticmethod
    def is_plain(atom: Variants) -> bool:
        return list(atom) == [PLAIN]

    def variants_atom(self) -> Variants:
        ch = self.peek()
        if ch == "^":
            self.pos += 1
            return {(True, False): EPSILON}
        if ch == "$":
            self.pos += 1
            return {(False, True): EPSILON}
        if ch == "(":
            return self.variants_group()
        return {PLAIN: self.parse_atom(False)[0]}

    def variants_group(self) -> Variants:
        open_at = self.pos
        self.pos += 1
        saved_flags = (self.ignore_case, self.dotall)
        if self.peek() == "?" and self.parse_group_prefix(open_at):
            return {PLAIN: EPSILON}
        self.depth += 1
        if self.depth > 200:
            raise self.unsupported("nesting deeper than 200 groups", "flatten the pattern", open_at)
        variants = self.variants_alternation()
        self.depth -= 1
        self.ignore_case, self.dotall = saved_flags
        if self.peek() != ")":
            raise self.error("missing ), unterminated subpattern", open_at)
        self.pos += 1
        return variants

    def quantify_anchored(self, atom: Variants, start: int) -> Variants:
        """``(^a)?``: an anchored group may be optional, never repeated."""
        at = self.pos
        ch = self.peek()
        if ch == "?":
            self.pos += 1
            if self.peek() == "?":
                self.pos += 1
            out = dict(atom)
            out[PLAIN] = self.pool.alt([out.get(PLAIN, EMPTY), EPSILON])
            return out
        if ch in "*+" or ch == "{":
            raise self.unsupported("anchor inside a repeated group", "move ^ and $ out of the repetition", start)
        raise self.error("nothing to repeat", at)

    def join(self, items: list[tuple[Variants, int]]) -> Variants:
        """Concatenate a sequence: anchors only on its first (``^``) and last (``$``) items."""
        pool = self.pool
        if not items:
            return {PLAIN: EPSILON}
        for i, (atom, start) in enumerate(items):
            if i > 0 and any(s for s, _ in atom):
                raise self.unsupported("anchor ^ inside the pattern", "^ is only supported at the start", start)
            if i < len(items) - 1 and any(e for _, e in atom):
                raise self.unsupported("anchor $ inside the pattern", "$ is only supported at the end", start)
        middle = pool.concat_all([atom[PLAIN] for atom, _ in items[1:-1]])
        if len(items) == 1:
            return dict(items[0][0])
        out: Variants = {}
        for (s, _), head in items[0][0].items():
            for (_, e), last in items[-1][0].items():
                expr = pool.concat_all([head, middle, last])
                out[(s, e)] = pool.alt([out.get((s, e), EMPTY), expr])
        return out

    # ----- ECMA atoms and classes ---------------------------------------------------------

    def parse_atom(self, at_start: bool) -> tuple[int, int | None]:
        if self.peek() == ".":
            self.pos += 1
            return ranges_to_expr(self.pool, negate(LINE_TERMINATORS)), None
        if self.peek() in ("^", "$"):
            raise self.unsupported(f"anchor {self.peek()} inside the pattern", "anchors only at the edges", self.pos)
        return super().parse_atom(at_start)

    def parse_class(self) -> int:
        if self.startswith("[]"):
            self.pos += 2
            return EMPTY
        if self.startswith("[^]"):
            self.pos += 3
            return any_char(self.pool)
        return super().parse_class()

    def parse_escape_ranges(self, in_class: bool) -> Ranges:
        start = self.pos
        ch = self.peek(1)
        if ch in ("s", "S"):
            self.pos += 2
            return ECMA_SPACE if ch == "s" else negate(ECMA_SPACE)
        if ch in ("p", "P") and self.peek(2) == "{":
            ranges = self.property_ranges(start)
            return ranges if ch == "p" else negate(ranges)
        if ch == "b" and not in_class:
            raise self.unsupported("word boundary \\b", "rewrite the pattern without word boundaries", start)
        if ch in ("a", "A", "Z", "z", "U") and not in_class:
            raise self.error(f"bad escape \\{ch}", start)
        return super().parse_escape_ranges(in_class)

    def property_ranges(self, start: int) -> Ranges:
        close = self.src.find("}", start)
        if close < 0:
            raise self.error("bad escape \\p{...}: missing }", start)
        name = self.src[start + 3 : close]
        self.pos = close + 1
        key, _, value = name.partition("=")
        if value and key not in ("General_Category", "gc"):
            raise self.unsupported(f"Unicode property \\p{{{name}}}",
                                   "only general categories are supported; spell the class out", start)
        category = CATEGORY_NAMES.get(value or key, value or key)
        if category not in set(CATEGORY_NAMES.values()):
            if not (value or key).replace("_", "").isalpha():
                raise self.error(f"bad Unicode property name {name!r}", start)
            raise self.unsupported(f"Unicode property \\p{{{name}}}",
                                   "only general categories are supported; spell the class out", start)
        return category_ranges(category)

