"""Random regexes from leapgram's supported subset, for the property tests.

A regex is drawn as a small AST that knows three things: its pattern text (with the rendering
choices baked in: ``é`` may be written ``é``, ``\\xe9`` or ``\\u00e9``), how to sample a string it
matches, and the characters it mentions (so the "random" strings use the regex's own alphabet and
matches actually happen).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from hypothesis import strategies as st

MAX_CODE_POINT = 0x10FFFF
SURROGATES = (0xD800, 0xDFFF)
METACHARS = set(".^$*+?{}[]\\|()")
CLASS_SPECIALS = set("]\\^-[&|~")

# Characters the generator likes: ASCII, metacharacters, the ends of each UTF-8 length,
# the neighbours of the surrogate gap, and astral ones (emoji, U+10FFFF).
ASCII_CHARS = "abcxyzABXZ019_ -#,:\"'"
META_CHARS = ".^$*+?{}[]\\|()/"
NON_ASCII_CHARS = "éÉßñ\x80\xff\u07ff\u0800ΩЖ中€☃\ud7ff\ue000\ufffd\uffff\U00010000😀🙂\U0010ffff"
CONTROL_CHARS = "\n\t\r\x00\x0b"
ALL_CHARS = ASCII_CHARS + META_CHARS + NON_ASCII_CHARS + CONTROL_CHARS
EXTRA_STRING_CHARS = "aA0_ \n\té€😀\x7f\x80"

ESCAPE_RANGES = {
    "\\d": [(0x30, 0x39)],
    "\\w": [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)],
    "\\s": [(0x09, 0x0D), (0x20, 0x20)],
}


def complement(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out, start = [], 0
    for low, high in sorted(ranges):
        if low > start:
            out.append((start, low - 1))
        start = max(start, high + 1)
    if start <= MAX_CODE_POINT:
        out.append((start, MAX_CODE_POINT))
    return out


for _name in ("\\d", "\\w", "\\s"):
    ESCAPE_RANGES[_name.upper()] = complement(ESCAPE_RANGES[_name])


def is_surrogate(cp: int) -> bool:
    return SURROGATES[0] <= cp <= SURROGATES[1]


class Node:
    def render(self) -> str:
        raise NotImplementedError

    def sample(self, rng: random.Random) -> str | None:
        """A string this node matches, or None when it matches nothing."""
        raise NotImplementedError

    def chars(self) -> set[str]:
        raise NotImplementedError


@dataclass(frozen=True)
class Lit(Node):
    char: str
    text: str

    def render(self) -> str:
        return self.text

    def sample(self, rng: random.Random) -> str | None:
        return self.char

    def chars(self) -> set[str]:
        return {self.char}


@dataclass(frozen=True)
class CharSet(Node):
    """A class, an escape like ``\\d`` or ``.``: ``ranges`` are the code points it matches."""

    text: str
    ranges: tuple[tuple[int, int], ...]

    def render(self) -> str:
        return self.text

    def contains(self, ch: str) -> bool:
        cp = ord(ch)
        return any(low <= cp <= high for low, high in self.ranges)

    def sample(self, rng: random.Random) -> str | None:
        candidates = [c for c in ALL_CHARS if self.contains(c) and not is_surrogate(ord(c))]
        for low, high in self.ranges:
            for cp in (low, high, rng.randint(low, high)):
                if not is_surrogate(cp):
                    candidates.append(chr(cp))
        return rng.choice(candidates) if candidates else None

    def chars(self) -> set[str]:
        out = set()
        for low, high in self.ranges[:6]:
            for cp in (low - 1, low, high, high + 1):
                if 0 <= cp <= MAX_CODE_POINT and not is_surrogate(cp):
                    out.add(chr(cp))
        return out


@dataclass(frozen=True)
class Anchor(Node):
    """``^`` or ``$`` inside the pattern: leapgram either matches like ``re`` or raises
    UnsupportedError; the sampler cannot tell whether the anchor holds, so its strings are guesses."""

    text: str

    def render(self) -> str:
        return self.text

    def sample(self, rng: random.Random) -> str | None:
        return ""

    def chars(self) -> set[str]:
        return set()


@dataclass(frozen=True)
class Concat(Node):
    items: tuple[Node, ...]

    def render(self) -> str:
        return "".join(item.render() for item in self.items)

    def sample(self, rng: random.Random) -> str | None:
        parts = [item.sample(rng) for item in self.items]
        return None if None in parts else "".join(parts)

    def chars(self) -> set[str]:
        return set().union(*(item.chars() for item in self.items))


@dataclass(frozen=True)
class Alt(Node):
    branches: tuple[Node, ...]

    def render(self) -> str:
        return "|".join(branch.render() for branch in self.branches)

    def sample(self, rng: random.Random) -> str | None:
        order = list(self.branches)
        rng.shuffle(order)
        for branch in order:
            found = branch.sample(rng)
            if found is not None:
                return found
        return None

    def chars(self) -> set[str]:
        return set().union(*(branch.chars() for branch in self.branches))


@dataclass(frozen=True)
class Group(Node):
    opener: str  # "(", "(?:", "(?i:", "(?s:", "(?P<g>"
    inner: Node

    def render(self) -> str:
        return f"{self.opener}{self.inner.render()})"

    def sample(self, rng: random.Random) -> str | None:
        return self.inner.sample(rng)

    def chars(self) -> set[str]:
        return self.inner.chars()


@dataclass(frozen=True)
class Repeat(Node):
    inner: Node
    low: int
    high: int | None  # None: unbounded
    suffix: str

    def render(self) -> str:
        return self.inner.render() + self.suffix

    def sample(self, rng: random.Random) -> str | None:
        high = self.low + 2 if self.high is None else min(self.high, self.low + 2)
        parts = [self.inner.sample(rng) for _ in range(rng.randint(self.low, high))]
        if None in parts:
            return "" if self.low == 0 else None
        return "".join(parts)

    def chars(self) -> set[str]:
        return self.inner.chars()


@dataclass(frozen=True)
class Pattern:
    """A whole regex: optional leading inline flags and ``^``, a body, optional ``$``."""

    body: Node
    flags: str = ""
    caret: bool = False
    dollar: bool = False
    text: str = field(init=False, default="")

    def __post_init__(self) -> None:
        flags = f"(?{self.flags})" if self.flags else ""
        text = flags + ("^" if self.caret else "") + self.body.render() + ("$" if self.dollar else "")
        object.__setattr__(self, "text", text)

    def sample(self, rng: random.Random) -> str | None:
        return self.body.sample(rng)

    def chars(self) -> set[str]:
        return self.body.chars()

    def is_sampled_exactly(self) -> bool:
        """Whether every sample must match: no case folding, no anchors inside."""
        return "(?i" not in self.text and "Anchor(" not in repr(self.body)


# ----- strategies ---------------------------------------------------------------------------

chars = st.sampled_from(ALL_CHARS)


@st.composite
def char_text(draw, ch: str, in_class: bool = False) -> str:
    """``ch`` written as itself or as an escape that Python and leapgram both read the same way."""
    cp = ord(ch)
    specials = CLASS_SPECIALS if in_class else METACHARS
    forms = []
    if ch in specials:
        forms.append("\\" + ch)
    elif ch not in "\x00":
        forms.append(ch)
    if ch == "\n":
        forms.append("\\n")
    if ch == "\t":
        forms.append("\\t")
    if cp < 0x100:
        forms.append(f"\\x{cp:02x}")
    if cp < 0x10000:
        forms.append(f"\\u{cp:04X}")
    forms.append(f"\\U{cp:08x}")
    return draw(st.one_of(st.just(forms[0]), st.sampled_from(forms)))


@st.composite
def literals(draw) -> Lit:
    ch = draw(chars.filter(lambda c: not is_surrogate(ord(c))))
    return Lit(ch, draw(char_text(ch)))


@st.composite
def class_ranges(draw) -> tuple[str, list[tuple[int, int]]]:
    kind = draw(st.sampled_from(["char", "range", "range", "escape", "wide"]))
    if kind == "escape":
        name = draw(st.sampled_from(sorted(ESCAPE_RANGES)))
        return name, ESCAPE_RANGES[name]
    if kind == "char":
        ch = draw(chars.filter(lambda c: not is_surrogate(ord(c))))
        return draw(char_text(ch, in_class=True)), [(ord(ch), ord(ch))]
    if kind == "wide":
        low = draw(st.integers(0, MAX_CODE_POINT))
        high = draw(st.integers(low, min(MAX_CODE_POINT, low + draw(st.sampled_from([5, 300, 70_000])))))
    else:
        low, high = sorted(ord(draw(chars)) for _ in range(2))
    if is_surrogate(low) or is_surrogate(high):
        low, high = 0xD7F0, 0xE010
    text = draw(char_text(chr(low), in_class=True)) + "-" + draw(char_text(chr(high), in_class=True))
    return text, [(low, high)]


@st.composite
def char_classes(draw) -> CharSet:
    items = draw(st.lists(class_ranges(), min_size=1, max_size=3))
    negated = draw(st.booleans())
    ranges = [r for _, rs in items for r in rs]
    text = "[" + ("^" if negated else "") + "".join(t for t, _ in items) + "]"
    return CharSet(text, tuple(complement(ranges) if negated else sorted(ranges)))


@st.composite
def escapes(draw) -> CharSet:
    name = draw(st.sampled_from(sorted(ESCAPE_RANGES)))
    return CharSet(name, tuple(ESCAPE_RANGES[name]))


DOT = CharSet(".", ((0, 9), (11, MAX_CODE_POINT)))

QUANTIFIERS = [("*", 0, None), ("+", 1, None), ("?", 0, 1), ("{2}", 2, 2), ("{0}", 0, 0), ("{1,}", 1, None),
               ("{0,2}", 0, 2), ("{1,3}", 1, 3), ("{,2}", 0, 2), ("{2,}", 2, None), ("{,}", 0, None)]


def repeated(inner: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    @st.composite
    def build(draw) -> Node:
        atom = draw(inner)
        if isinstance(atom, (Concat, Alt, Repeat, Anchor)):
            atom = Group("(?:", atom)
        suffix, low, high = draw(st.sampled_from(QUANTIFIERS))
        lazy = draw(st.sampled_from(["", "", "?"]))
        return Repeat(atom, low, high, suffix + lazy)

    return build()


def grouped(inner: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    return st.builds(Group, st.sampled_from(["(", "(", "(?:", "(?i:", "(?s:"]), inner)


atoms = st.one_of(literals(), literals(), char_classes(), escapes(), st.just(DOT))
atoms_and_anchors = st.one_of(atoms, atoms, atoms, atoms, st.sampled_from([Anchor("^"), Anchor("$")]))


def _concat(items: list[Node]) -> Concat:
    return Concat(tuple(Group("(?:", x) if isinstance(x, Alt) else x for x in items))


def _extend(inner: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    return st.one_of(
        repeated(inner),
        grouped(inner),
        st.lists(inner, min_size=0, max_size=4).map(_concat),
        st.lists(inner, min_size=2, max_size=3).map(lambda xs: Alt(tuple(xs))),
    )


nodes = st.recursive(atoms, _extend, max_leaves=8)
nodes_with_anchors = st.recursive(atoms_and_anchors, _extend, max_leaves=8)


@st.composite
def patterns(draw, flags: bool = True, anchors: bool = False) -> Pattern:
    body = draw(nodes_with_anchors if anchors else nodes)
    flag_text = draw(st.sampled_from(["", "", "", "", "", "i", "s", "is"])) if flags else ""
    return Pattern(body, flag_text, draw(st.booleans()), draw(st.booleans()))


# Python's backtracking is exponential in the length for nested quantifiers such as
# ((b+?){2,}){1,3}: 20 characters take seconds, 24 take most of a minute.
MAX_LENGTH = 12


def mutations(text: str, rng: random.Random, alphabet: list[str]) -> list[str]:
    """Near misses of a matching string: one character deleted, inserted, replaced or re-cased."""
    out = []
    if text:
        i = rng.randrange(len(text))
        out.append(text[:i] + text[i + 1 :])
        out.append(text[:i] + rng.choice(alphabet) + text[i + 1 :])
        out.append(text[:i] + text[i].swapcase() + text[i + 1 :])
        out.append(text + text[i])
    i = rng.randint(0, len(text))
    out.append(text[:i] + rng.choice(alphabet) + text[i:])
    return out


@st.composite
def pattern_and_strings(draw, flags: bool = True, anchors: bool = False) -> tuple[Pattern, list[str], list[str]]:
    """A pattern, strings sampled to match it, and near misses plus strings over its alphabet."""
    pattern = draw(patterns(flags, anchors))
    rng = random.Random(draw(st.integers(0, 2**32)))
    alphabet = sorted(pattern.chars() | set(EXTRA_STRING_CHARS))
    positives = [s for s in (pattern.sample(rng) for _ in range(4)) if s is not None and len(s) <= MAX_LENGTH]
    others = [m for s in positives for m in mutations(s, rng, alphabet)]
    others += draw(st.lists(st.text(st.sampled_from(alphabet), max_size=8), max_size=6))
    return pattern, positives, others
