"""Regex text → expression in an :class:`ExprPool`.

The subset of Python ``re`` syntax that JSON Schema ``pattern``\\ s and Lark grammars use; the
whole text must match. Lookaround, backreferences, word boundaries, possessive and atomic forms
and Unicode properties raise :class:`UnsupportedError` with the position; malformed patterns raise
:class:`GrammarError`. The supported syntax: docs/design/regex-derivatives.md.
"""

from __future__ import annotations

from ..errors import GrammarError, UnsupportedError
from .expr import EPSILON, INF, ExprPool
from .utf8 import MAX_CODE_POINT, Ranges, negate, normalize, ranges_to_expr

DIGIT: Ranges = ((0x30, 0x39),)
WORD: Ranges = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
SPACE: Ranges = ((0x09, 0x0D), (0x20, 0x20))
CLASS_ESCAPES = {"d": DIGIT, "w": WORD, "s": SPACE}
CHAR_ESCAPES = {"n": 0x0A, "t": 0x09, "r": 0x0D, "f": 0x0C, "v": 0x0B, "a": 0x07, "0": 0x00}
_UNSUPPORTED_GROUPS = [  # (escape letters, what they are, what to do instead)
    ("bB", "word boundary", "rewrite the pattern without word boundaries"),
    ("AZzG", "anchor", "anchors are implicit: the whole output must match"),
    ("pP", "Unicode property", "spell the property out as a character class"),
    ("k", "backreference", "backreferences are not regular; enumerate the alternatives"),
    ("X", "grapheme cluster", "use . or an explicit class"),
    ("R", "line break", "use (\\r\\n|\\n|\\r)"),
]
UNSUPPORTED_ESCAPES = {letter: (f"{what} \\{letter}", hint) for letters, what, hint in _UNSUPPORTED_GROUPS
                       for letter in letters}
UNSUPPORTED_ESCAPES["N"] = ("named character \\N{...}", "write the character itself or \\uXXXX")
META = set("\\^$.|?*+()[]{}/-")
QUANTIFIER_CHARS = "*+?{"
ASCII_DIGITS = frozenset("0123456789")


def parse_regex(
    pattern: str,
    pool: ExprPool,
    *,
    ignore_case: bool = False,
    dotall: bool = False,
) -> int:
    """Parse ``pattern`` into ``pool`` and return the expression id.

    The whole matched text must match (as ``re.fullmatch``); ``^``/``$`` at the ends are
    accepted and change nothing. Remembered in ``pool.memo``: the same pattern parsed again into
    the same pool (or a copy of it) costs one lookup.
    """
    return pool.remembered(("regex", pattern, ignore_case, dotall),
                           lambda: RegexParser(pattern, pool, ignore_case, dotall).parse())


class RegexParser:
    def __init__(self, pattern: str, pool: ExprPool, ignore_case: bool, dotall: bool) -> None:
        self.src = pattern
        self.pool = pool
        self.pos = 0
        self.ignore_case = ignore_case
        self.dotall = dotall
        self.depth = 0
        self.groups_open: list[int] = []
        self.carets: list[int] = []

    # ----- errors -------------------------------------------------------------------------

    def error(self, message: str, offset: int | None = None) -> GrammarError:
        return GrammarError(f"invalid regex: {message}", source=self.src,
                            offset=self.pos if offset is None else offset)

    def unsupported(self, feature: str, advice: str, offset: int) -> UnsupportedError:
        return UnsupportedError(feature, f"unsupported regex feature: {feature}; {advice}",
                                source=self.src, offset=offset)

    # ----- helpers ------------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> str:
        i = self.pos + ahead
        return self.src[i] if i < len(self.src) else ""

    def at_end(self) -> bool:
        return self.pos >= len(self.src)

    def take(self) -> str:
        ch = self.src[self.pos]
        self.pos += 1
        return ch

    def startswith(self, text: str) -> bool:
        return self.src.startswith(text, self.pos)

    # ----- grammar ------------------------------------------------------------------------

    def parse(self) -> int:
        self.parse_leading_flags()
        expr, _ = self.parse_alternation(at_start=True)
        if not self.at_end():
            raise self.error("unbalanced parenthesis ')'")
        return expr

    def parse_leading_flags(self) -> None:
        while self.startswith("(?") and self.pos + 2 < len(self.src):
            end = self.pos + 2
            while end < len(self.src) and self.src[end] in "aiLmsux":
                end += 1
            if end == self.pos + 2 or end >= len(self.src) or self.src[end] != ")":
                return
            self.apply_flags(self.src[self.pos + 2 : end], self.pos + 2)
            self.pos = end + 1

    def apply_flags(self, flags: str, offset: int) -> None:
        for i, flag in enumerate(flags):
            if flag == "i":
                self.ignore_case = True
            elif flag == "s":
                self.dotall = True
            elif flag not in "au":
                raise self.unsupported(f"inline flag '{flag}'",
                                       "only the i and s flags are supported", offset + i)

    def parse_alternation(self, at_start: bool) -> tuple[int, int | None]:
        """Returns the expression and the offset of a ``$`` that some branch ends with (else None).

        One such branch is enough: ``(a$|b)c`` must not quietly match ``ac``.
        """
        branches = []
        dollar_at: int | None = None
        while True:
            expr, branch_dollar_at = self.parse_sequence(at_start)
            branches.append(expr)
            dollar_at = branch_dollar_at if dollar_at is None else dollar_at
            if self.peek() != "|":
                break
            self.pos += 1
        return self.pool.alt(branches), dollar_at

    def parse_sequence(self, at_start: bool) -> tuple[int, int | None]:
        items: list[int] = []
        end_anchor_at: int | None = None
        while not self.at_end() and self.peek() not in "|)":
            start = self.pos
            ch = self.peek()
            if ch == "^":
                self.pos += 1
                if not (at_start and not items):
                    raise self.unsupported("anchor ^ inside the pattern",
                                           "^ is only supported at the start", start)
                self.carets.append(start)
                self.reject_quantifier()
                continue
            if ch == "$":
                self.pos += 1
                end_anchor_at = start if end_anchor_at is None else end_anchor_at
                self.reject_quantifier()
                continue
            if end_anchor_at is not None:
                raise self.unsupported("anchor $ inside the pattern",
                                       "$ is only supported at the end", end_anchor_at)
            carets_before = len(self.carets)
            atom, dollar_at = self.parse_atom(at_start and not items)
            caret_at = self.carets[-1] if len(self.carets) > carets_before else None
            atom = self.parse_quantifiers(atom, dollar_at if dollar_at is not None else caret_at)
            items.append(atom)
            if dollar_at is not None:
                end_anchor_at = dollar_at
        return self.pool.concat_all(items), end_anchor_at

    def reject_quantifier(self) -> None:
        if self.peek() and self.peek() in "*+?":
            raise self.error("nothing to repeat")

    def parse_atom(self, at_start: bool) -> tuple[int, int | None]:
        ch = self.peek()
        if ch == "(":
            return self.parse_group(at_start)
        if ch == "[":
            return self.parse_class(), None
        if ch == ".":
            self.pos += 1
            ranges = ((0, MAX_CODE_POINT),) if self.dotall else negate(((0x0A, 0x0A),))
            return ranges_to_expr(self.pool, normalize(list(ranges))), None
        if ch == "\\":
            return self.parse_escape(), None
        if ch in "*+?":
            raise self.error("nothing to repeat")
        if ch == "{" and self.looks_like_quantifier():
            raise self.error("nothing to repeat")
        self.pos += 1
        return self.char_expr(ord(ch)), None

    def char_expr(self, cp: int) -> int:
        return ranges_to_expr(self.pool, normalize(self.fold([(cp, cp)])))

    def fold(self, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
        if not self.ignore_case:
            return ranges
        out = list(ranges)
        for low, high in ranges:
            for a, b, delta in ((0x41, 0x5A, 32), (0x61, 0x7A, -32)):
                lo, hi = max(low, a), min(high, b)
                if lo <= hi:
                    out.append((lo + delta, hi + delta))
        return out

    # ----- groups -------------------------------------------------------------------------

    def parse_group(self, at_start: bool) -> tuple[int, int | None]:
        open_at = self.pos
        self.pos += 1
        saved_flags = (self.ignore_case, self.dotall)
        if self.peek() == "?":
            if self.parse_group_prefix(open_at):
                return EPSILON, None
        self.depth += 1
        if self.depth > 200:
            raise self.unsupported("nesting deeper than 200 groups", "flatten the pattern", open_at)
        expr, dollar_at = self.parse_alternation(at_start)
        self.depth -= 1
        if self.peek() != ")":
            raise self.error("missing ), unterminated subpattern", open_at)
        self.pos += 1
        self.ignore_case, self.dotall = saved_flags
        return expr, dollar_at

    def parse_group_prefix(self, open_at: int) -> bool:
        """Consume ``?...`` after ``(``; True when the group was a comment (already closed)."""
        self.pos += 1
        ch = self.peek()
        if ch == ":":
            self.pos += 1
            return False
        if ch == "#":
            close = self.src.find(")", self.pos)
            if close < 0:
                raise self.error("missing ), unterminated comment", open_at)
            self.pos = close + 1
            return True
        if self.startswith("P<") or (ch == "<" and self.peek(1) not in ("=", "!")):
            self.parse_group_name(open_at)
            return False
        if self.startswith("P="):
            raise self.unsupported("backreference (?P=...)", "backreferences are not regular", open_at)
        lookaround = {"=": "lookahead (?=...)", "!": "negative lookahead (?!...)",
                      "<=": "lookbehind (?<=...)", "<!": "negative lookbehind (?<!...)",
                      ">": "atomic group (?>...)", "(": "conditional group (?(...)...)"}
        for prefix, feature in sorted(lookaround.items(), key=lambda kv: -len(kv[0])):
            if self.startswith(prefix):
                raise self.unsupported(feature, "rewrite the pattern without it", open_at)
        return self.parse_scoped_flags(open_at)

    def parse_group_name(self, open_at: int) -> None:
        self.pos += 2 if self.peek() == "P" else 1
        close = self.src.find(">", self.pos)
        if close < 0:
            raise self.error("missing >, unterminated name", self.pos)
        name = self.src[self.pos : close]
        if not name:
            raise self.error("missing group name", self.pos)
        if not name.isidentifier():
            raise self.error(f"bad character in group name '{name}'", self.pos)
        self.pos = close + 1

    def parse_scoped_flags(self, open_at: int) -> bool:
        start = self.pos
        while self.peek() and self.peek() in "aiLmsux-":
            self.pos += 1
        flags = self.src[start : self.pos]
        if self.at_end():
            raise self.error("unexpected end of pattern, expected a flag, : or )")
        if self.peek() not in ":)" or not flags:
            raise self.error("unknown extension ?" + self.peek(), start)
        if "-" in flags:
            raise self.unsupported("turning flags off (?-...)", "split the pattern instead", start)
        self.apply_flags(flags, start)
        if self.peek() == ")":
            raise self.error("global flags not at the start of the expression", open_at)
        self.pos += 1
        return False

    # ----- quantifiers --------------------------------------------------------------------

    def looks_like_quantifier(self) -> bool:
        return self.quantifier_bounds(self.pos, consume=False) is not None

    def quantifier_bounds(self, at: int, consume: bool) -> tuple[int, int] | None:
        close = self.src.find("}", at)
        if close < 0:
            return None
        body = self.src[at + 1 : close]
        low_text, comma, high_text = body.partition(",")
        if not (set(low_text) <= ASCII_DIGITS and set(high_text) <= ASCII_DIGITS and (comma or low_text)):
            return None
        low = int(low_text) if low_text else 0
        high = INF if comma and not high_text else int(high_text) if comma else low
        if consume:
            self.pos = close + 1
        return low, high

    def parse_quantifiers(self, atom: int, anchor_at: int | None) -> int:
        """``anchor_at``: where the atom holds a ``^`` or ``$``, which only one repetition can match."""
        quantified = False
        while not self.at_end() and self.peek() in QUANTIFIER_CHARS:
            at = self.pos
            ch = self.peek()
            if ch == "{":
                bounds = self.quantifier_bounds(at, consume=True)
                if bounds is None:
                    break
                low, high = bounds
                self.check_bounds(low, high, at)
            else:
                self.pos += 1
                low, high = {"*": (0, INF), "+": (1, INF), "?": (0, 1)}[ch]
            if quantified:
                raise self.error("multiple repeat", at)
            quantified = True
            if anchor_at is not None and (high == INF or high > 1):
                raise self.unsupported("anchor inside a repeated group",
                                       "move ^ and $ out of the repetition", anchor_at)
            if self.peek() == "?":
                self.pos += 1
            elif self.peek() == "+":
                raise self.unsupported("possessive quantifier", "use the greedy form", self.pos)
            atom = self.pool.repeat(atom, low, high)
        return atom

    def check_bounds(self, low: int, high: int, at: int) -> None:
        if high != INF and high < low:
            raise self.error("min repeat greater than max repeat", at)
        limit = self.pool.limits.max_repeat
        if max(low, high) > limit:
            raise self.unsupported(f"repeat bound above {limit}",
                                   "raise Limits.max_repeat or use * / +", at)

    # ----- escapes ------------------------------------------------------------------------

    def parse_escape(self) -> int:
        ranges = self.parse_escape_ranges(in_class=False)
        return ranges_to_expr(self.pool, normalize(self.fold(list(ranges))))

    def parse_escape_ranges(self, in_class: bool) -> Ranges:
        start = self.pos
        self.pos += 1
        if self.at_end():
            raise self.error("bad escape (end of pattern)", start)
        ch = self.take()
        if ch in CLASS_ESCAPES:
            return CLASS_ESCAPES[ch]
        if ch.lower() in CLASS_ESCAPES and ch.isupper():
            return negate(CLASS_ESCAPES[ch.lower()])
        if ch == "b" and in_class:
            return ((0x08, 0x08),)
        if ch in CHAR_ESCAPES:
            if ch == "0" and self.peek() and self.peek() in "01234567":
                raise self.unsupported("octal escape", "use \\xHH instead", start)
            cp = CHAR_ESCAPES[ch]
            return ((cp, cp),)
        if ch == "x":
            return self.hex_escape(2, start)
        if ch == "u":
            if self.peek() == "{":
                return self.braced_hex_escape(start)
            return self.hex_escape(4, start)
        if ch == "U":
            return self.hex_escape(8, start)
        if ch == "c" and self.peek().isalpha():
            cp = ord(self.take()) % 32
            return ((cp, cp),)
        if ch in "123456789":
            raise self.unsupported(f"backreference \\{ch}", "backreferences are not regular", start)
        if ch in UNSUPPORTED_ESCAPES:
            feature, advice = UNSUPPORTED_ESCAPES[ch]
            raise self.unsupported(feature, advice, start)
        if ch.isascii() and ch.isalnum():
            raise self.error(f"bad escape \\{ch}", start)
        return ((ord(ch), ord(ch)),)

    def hex_escape(self, width: int, start: int) -> Ranges:
        digits = self.src[self.pos : self.pos + width]
        if len(digits) != width or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise self.error(f"bad escape {self.src[start:self.pos + width]}", start)
        self.pos += width
        return self.code_point_range(int(digits, 16), start)

    def braced_hex_escape(self, start: int) -> Ranges:
        close = self.src.find("}", self.pos)
        digits = self.src[self.pos + 1 : close] if close > 0 else ""
        if not digits or len(digits) > 6 or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise self.error("bad escape \\u{...}", start)
        self.pos = close + 1
        return self.code_point_range(int(digits, 16), start)

    def code_point_range(self, cp: int, start: int) -> Ranges:
        if cp > MAX_CODE_POINT:
            raise self.error(f"code point U+{cp:X} beyond U+10FFFF", start)
        if 0xD800 <= cp <= 0xDFFF:
            raise self.unsupported(f"surrogate code point U+{cp:04X}",
                                   "write the character itself, not its UTF-16 halves", start)
        return ((cp, cp),)

    # ----- classes ------------------------------------------------------------------------

    def parse_class(self) -> int:
        open_at = self.pos
        self.pos += 1
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        ranges: list[tuple[int, int]] = []
        first = True
        while True:
            if self.at_end():
                raise self.error("unterminated character set", open_at)
            ch = self.peek()
            if ch == "]" and not first:
                self.pos += 1
                break
            first = False
            low_at = self.pos
            low = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                high = self.class_atom()
                single = len(low) == 1 and len(high) == 1 and low[0][0] == low[0][1] and high[0][0] == high[0][1]
                if not single or high[0][0] < low[0][0]:
                    raise self.error(f"bad character range {self.src[low_at : self.pos]}", low_at)
                ranges.append((low[0][0], high[0][0]))
            else:
                ranges.extend(low)
        folded = normalize(self.fold(ranges))
        if negated:
            folded = negate(folded)
        return ranges_to_expr(self.pool, folded)

    def class_atom(self) -> Ranges:
        if self.peek() == "\\":
            return self.parse_escape_ranges(in_class=True)
        if self.startswith("[:") and self.src.find(":]", self.pos) > 0:
            raise self.unsupported("POSIX class [:...:]", "spell the class out", self.pos)
        cp = ord(self.take())
        return ((cp, cp),)
