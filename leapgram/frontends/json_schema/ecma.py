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
* ``^``, ``$`` and lookaheads ``(?=A)``, ``(?!A)`` are assertions, compiled right to left with
  what follows as the continuation ``K``: ``(?=A)`` is ``A.* & K``, ``(?!A)`` is ``~(A.*) & K``,
  ``$`` is ``K``'s empty string if it has one, and ``^`` moves ``K`` to the anchored half of a
  (floating, anchored) pair; the search is then ``.* floating | anchored``. So ``a^b`` matches
  nothing, as in JavaScript, and ``(?:(?!.*--)[a-z-]*)?`` is exact wherever it stands.
  Assertions inside ``*``/``+``/``{m,n}`` are refused, but for the tempered token ``((?!A).)*``
  followed by ``$``, which is "no ``A`` anywhere".

Lookbehind, backreferences and ``\\b`` raise :class:`UnsupportedError` naming the construct.
"""

from __future__ import annotations

import unicodedata
from functools import cache

from ...regex.expr import EMPTY, EPSILON, INF, ExprPool
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

# Parsed patterns: plain stretches are pool expressions; only assertions keep a node of their own.
Node = tuple


def pattern_expr(pattern: str, pool: ExprPool) -> int:
    """The UTF-8 strings in which ``pattern`` finds a match (JSON Schema ``pattern`` semantics).

    Raises :class:`GrammarError` (with the offset) for a malformed pattern and
    :class:`UnsupportedError` for lookbehind, backreferences, word boundaries, and assertions
    inside repetitions.
    """
    parser = _EcmaParser(pattern, pool)
    node = parser.parse_node()
    anything = pool.star(any_char(pool))
    floating, anchored = parser.compile(node, (anything, EMPTY))
    return pool.alt([pool.concat(anything, floating), anchored])


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

    # ----- parsing: plain expressions, and nodes around the assertions ----------------------

    def parse_node(self) -> Node:
        node = self.node_alternation()
        if not self.at_end():
            raise self.error("unbalanced parenthesis ')'")
        return node

    def node_alternation(self) -> Node:
        branches = [self.node_sequence()]
        while self.peek() == "|":
            self.pos += 1
            branches.append(self.node_sequence())
        if all(b[0] == "x" for b in branches):
            return ("x", self.pool.alt([b[1] for b in branches]))
        return branches[0] if len(branches) == 1 else ("alt", tuple(branches))

    def node_sequence(self) -> Node:
        items: list[Node] = []
        while not self.at_end() and self.peek() not in "|)":
            start = self.pos
            atom = self.node_atom()
            if atom[0] == "x":
                atom = ("x", self.parse_quantifiers(atom[1], None))
            elif self.peek() and self.peek() in "*+?" or self.peek() == "{" and self.looks_like_quantifier():
                atom = self.quantify_node(atom, start)
            if items and atom[0] == "x" and items[-1][0] == "x":
                items[-1] = ("x", self.pool.concat(items[-1][1], atom[1]))
            else:
                items.append(atom)
        if len(items) == 1:
            return items[0]
        return ("seq", tuple(items)) if items else ("x", EPSILON)

    def node_atom(self) -> Node:
        ch = self.peek()
        if ch in ("^", "$"):
            self.pos += 1
            return (ch,)
        if ch == "(":
            return self.node_group()
        return ("x", self.parse_atom(False)[0])

    def node_group(self) -> Node:
        open_at = self.pos
        self.pos += 1
        saved_flags = (self.ignore_case, self.dotall)
        look = None
        if self.startswith(("?=", "?!")):
            look = self.peek(1) == "="
            self.pos += 2
        elif self.peek() == "?" and self.parse_group_prefix(open_at):
            return ("x", EPSILON)
        self.depth += 1
        if self.depth > 200:
            raise self.unsupported("nesting deeper than 200 groups", "flatten the pattern", open_at)
        node = self.node_alternation()
        self.depth -= 1
        if self.peek() != ")":
            raise self.error("missing ), unterminated subpattern", open_at)
        self.pos += 1
        self.ignore_case, self.dotall = saved_flags
        return node if look is None else ("look", look, node, open_at)

    def quantify_node(self, node: Node, start: int) -> Node:
        """``(^a)?`` is an alternative; ``((?!A).)*`` a tempered token; other repeated assertions
        are refused."""
        ch = self.take()
        low, high = (0, 1) if ch == "?" else (0, INF) if ch == "*" else (1, INF) if ch == "+" else (-1, -1)
        if ch == "{":
            self.pos -= 1
            low, high = self.quantifier_bounds(self.pos, consume=True)
        if self.peek() == "?":
            self.pos += 1
        if (low, high) == (0, 1):
            return ("opt", node)
        if high == INF and low <= 1 and self.is_tempered(node):
            return ("temper", node[1][:-1], node[1][-1][1], low, start)
        raise self.unsupported("assertion inside a repeated group",
                               "move ^, $ and lookaheads out of the repetition", start)

    def is_tempered(self, node: Node) -> bool:
        if node[0] != "seq" or node[1][-1][0] != "x" or node[1][-1][1] not in self.pool.char_ranges:
            return False
        return all(item[0] == "look" and not item[1] for item in node[1][:-1])

    # ----- compiling: right to left, with what follows as the continuation ---------------

    def compile(self, node: Node, after: tuple[int, int]) -> tuple[int, int]:
        """The strings matched by ``node`` then by its continuation ``after``, as a pair: those that
        need no ``^`` (floating) and those that passed a ``^`` (only at the string's start)."""
        pool = self.pool
        floating, anchored = after
        kind = node[0]
        if kind == "x":
            return pool.concat(node[1], floating), anchored if pool.nullable[node[1]] else EMPTY
        if kind == "^":
            return EMPTY, pool.alt([floating, anchored])
        if kind == "$":
            return (EPSILON if pool.nullable[floating] else EMPTY), (EPSILON if pool.nullable[anchored] else EMPTY)
        if kind == "seq":
            for item in reversed(node[1]):
                after = self.compile(item, after)
            return after
        if kind in ("alt", "opt"):
            pairs = [self.compile(b, after) for b in node[1]] if kind == "alt" else [self.compile(node[1], after), after]
            return pool.alt([f for f, _ in pairs]), pool.alt([a for _, a in pairs])
        if kind == "look":
            ahead = self.lookahead(node[2], node[3])
            if not node[1]:
                ahead = pool.complement(ahead)
            return pool.intersect([ahead, floating]), pool.intersect([ahead, anchored])
        return self.compile_tempered(node, after)

    def lookahead(self, node: Node, offset: int) -> int:
        floating, anchored = self.compile(node, (self.pool.star(any_char(self.pool)), EMPTY))
        if anchored != EMPTY:
            raise self.unsupported("anchor ^ inside a lookahead", "move ^ out of the lookahead", offset)
        return floating

    def compile_tempered(self, node: Node, after: tuple[int, int]) -> tuple[int, int]:
        """``((?!A)(?!B).)*$``: strings of ``.`` in which no ``A`` or ``B`` starts anywhere. Exact
        only when the end of the string follows, which is the form patterns use."""
        pool = self.pool
        _, looks, char, low, start = node
        if after != (EPSILON, EMPTY):
            raise self.unsupported("lookahead inside a repeated group",
                                   "only ((?!...).)* at the end of the pattern ($) is supported", start)
        banned = [self.lookahead(look[2], look[3]) for look in looks]
        if any(pool.nullable[b] for b in banned):
            return (EPSILON if low == 0 else EMPTY), EMPTY
        anything = pool.star(any_char(pool))
        clean = pool.complement(pool.concat(anything, pool.alt(banned)))
        return pool.intersect([pool.repeat(char, low, INF), clean]), EMPTY

    # ----- ECMA atoms and classes ---------------------------------------------------------

    def parse_atom(self, at_start: bool) -> tuple[int, int | None]:
        if self.peek() == ".":
            self.pos += 1
            return ranges_to_expr(self.pool, negate(LINE_TERMINATORS)), None
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

