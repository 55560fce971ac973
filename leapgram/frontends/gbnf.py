"""GBNF grammar text (llama.cpp's ``grammars/README.md``) → grammar IR.

Syntax:

* rules ``name ::= body``; names are letters, digits and dashes; a rule may span lines and ends
  where the next ``name ::=`` begins (a superset of llama.cpp, which allows line breaks only
  after ``::=``, ``|`` and inside parentheses); comments ``#`` to the end of the line;
* alternatives ``|`` (an alternative may be empty), sequences, grouping ``( )``;
* strings ``"..."`` and classes ``[a-z]``, ``[^...]`` with the escapes ``\\n \\t \\r \\\\ \\"
  \\[ \\]`` and ``\\xHH \\uHHHH \\UHHHHHHHH`` (any other escape is an error, as in llama.cpp);
  a string may not contain a raw line break;
* ``.`` (any one character), repetition ``* + ?``, ``{m}``, ``{m,}``, ``{m,n}`` (repeatable:
  ``x*?`` is ``(x*)?``).

Semantics: GBNF is scannerless, it matches characters (code points, as UTF-8), not tokens, while
leapgram's lexer is greedy over the lexemes the parser allows (``docs/design/earley-walk.md``): a
lexeme ends only when the next byte cannot extend any allowed lexeme. Splitting the grammar into
lexemes the obvious way would change the language (``[a-z] "bb" | "ab" "c"`` rejects ``abb`` when
``"ab"`` is one lexeme). The translation keeps the language exact (``docs/design/gbnf-lexemes.md``):

1. A rule that is *regular* (it is not recursive and references only regular rules) has one
   expression: its body with those rules inlined. If the start rule is regular, the whole
   grammar is that one expression: the regex fast path, no parser, no lexeme boundaries.
2. Otherwise the recursive rules become Earley rules over lexemes. A lexeme that matches
   exactly one code point (a character of a string, a class, ``.``) is always safe: UTF-8 is
   prefix-free, so a complete character never extends into another character.
3. Inside the recursive rules, each maximal run of regular items of a sequence (strings,
   classes, regular rules, groups and repetitions of them) starts as *one* lexeme. A run is kept
   only if it is prefix-safe against the union ``U`` of all lexemes of the grammar: no string of
   it has a proper prefix in ``U`` and none is a proper prefix of a string in ``U`` (decided on
   expressions: ``L ∩ U·Σ⁺ = ∅`` and ``U ∩ L·Σ⁺ = ∅``, ``Σ⁺`` the non-empty byte strings). When
   every lexeme is safe, ``U`` is a prefix code, so a text splits into lexemes in at most one way
   and the greedy lexer ends each lexeme exactly where the scannerless parse does. Unsafe runs
   are split until all are safe, first those with a proper prefix in ``U``: a run that is only
   a proper prefix of another run's string waits, since the other run is split instead
   (``"\"key\"" ws ":"`` is split, the string lexeme it starts with stays whole). Splitting
   peels a run's last item (``"\"" chars* "\"" ws`` keeps the string and drops the optional
   space, whose ``" "`` would otherwise extend it); a single unsafe item is translated
   structurally (a rule becomes a nonterminal whose sequences are runs again, a string becomes
   single characters, a group or repetition becomes rules).
   In llama.cpp's JSON grammar, strings and ``true``/``false``/``null`` become whole lexemes;
   numbers and whitespace stay single characters ("1" is a prefix of "12"). The check is
   global, so it is conservative: a run that conflicts only with lexemes that can never be
   allowed at the same point is still split.

Errors: malformed grammars raise :class:`GrammarError` with line, column and a caret excerpt
(missing ``::=``, unterminated strings and classes, bad escapes and repetition bounds, undefined
rules, a missing start rule); bounds above ``Limits.max_repeat`` raise :class:`UnsupportedError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import BudgetExceededError, GrammarError, UnsupportedError
from ..grammar.builder import GrammarBuilder
from ..grammar.ir import GrammarIR, Lexeme
from ..limits import DEFAULT_LIMITS, Limits
from ..regex.expr import ALL_BYTES, EPSILON, INF, ExprPool
from ..regex.utf8 import MAX_CODE_POINT, negate, normalize, ranges_to_expr
from .lark import Alternatives, Literal, Ref, Repeat, walk

# ----- syntax tree: Lark's nodes (strings never ignore case), plus character classes -------


@dataclass(frozen=True)
class CharClass:
    """``[...]``, ``[^...]`` or ``.`` (code point ranges, already negated and normalized)."""

    ranges: tuple[tuple[int, int], ...]
    offset: int


Node = Ref | Literal | CharClass | Repeat | Alternatives


@dataclass(frozen=True)
class Definition:
    """``name ::= body``."""

    name: str
    offset: int
    body: Alternatives


# ----- parser -------------------------------------------------------------------------------

_SPACE = re.compile(r"(?:\s+|#[^\n]*)*")
_NAME = re.compile(r"[A-Za-z0-9-]+")
_RULE_START = re.compile(r"[A-Za-z0-9-]+[ \t]*::=")
_DIGITS = re.compile(r"[0-9]+")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "[": "[", "]": "]"}
_HEX_WIDTH = {"x": 2, "u": 4, "U": 8}
_OPERATORS = {"*": (0, INF), "+": (1, INF), "?": (0, 1)}
ANY_CHARACTER = normalize([(0, MAX_CODE_POINT)])
"""``.``: every Unicode scalar value (surrogates have no UTF-8 form)."""


class _Parser:
    """GBNF text → rule definitions, character by character (GBNF has no separate tokens)."""

    def __init__(self, text: str, limits: Limits) -> None:
        self.src = text
        self.pos = 0
        self.limits = limits

    def fail(self, message: str, offset: int | None = None) -> GrammarError:
        return GrammarError(message, source=self.src, offset=self.pos if offset is None else offset)

    def peek(self) -> str:
        return self.src[self.pos] if self.pos < len(self.src) else ""

    def skip_space(self) -> None:
        self.pos = _SPACE.match(self.src, self.pos).end()

    def parse(self) -> list[Definition]:
        definitions = []
        self.skip_space()
        while self.pos < len(self.src):
            definitions.append(self.parse_rule())
        return definitions

    def parse_rule(self) -> Definition:
        at = self.pos
        match = _NAME.match(self.src, at)
        if match is None:
            raise self.fail(f"expected a rule name (letters, digits, '-'), found {self.peek()!r}")
        self.pos = match.end()
        self.skip_space()
        if not self.src.startswith("::=", self.pos):
            found = repr(self.peek()) if self.peek() else "the end of the grammar"
            raise self.fail(f"expected '::=' after rule name {match.group()}, found {found}")
        self.pos += 3
        body = self.parse_alternatives(None)
        return Definition(match.group(), at, body)

    def parse_alternatives(self, opener: int | None) -> Alternatives:
        offset = self.pos if opener is None else opener
        options = [self.parse_sequence()]
        while self.peek() == "|":
            self.pos += 1
            options.append(self.parse_sequence())
        if opener is None and self.peek() == ")":
            raise self.fail("unmatched ')'")
        if opener is not None:
            if self.peek() != ")":
                if not self.peek() or _RULE_START.match(self.src, self.pos):
                    raise self.fail("'(' is never closed", opener)
                raise self.fail(f"expected ')' to close '(', found {self.peek()!r}")
            self.pos += 1
        return Alternatives(tuple(options), offset)

    def parse_sequence(self) -> tuple[Node, ...]:
        items: list[Node] = []
        while True:
            self.skip_space()
            ch = self.peek()
            if not ch or ch in "|)" or _RULE_START.match(self.src, self.pos):
                return tuple(items)
            if ch in _OPERATORS or ch == "{":
                if not items:
                    raise self.fail(f"{ch!r} must follow something to repeat")
                items[-1] = self.parse_repeat(items[-1])
            else:
                items.append(self.parse_atom(ch))

    def parse_atom(self, ch: str) -> Node:
        at = self.pos
        if ch == '"':
            return self.parse_literal()
        if ch == "[":
            return self.parse_class()
        if ch == ".":
            self.pos += 1
            return CharClass(ANY_CHARACTER, at)
        if ch == "(":
            self.pos += 1
            return self.parse_alternatives(at)
        match = _NAME.match(self.src, at)
        if match is None:
            raise self.fail(f"unexpected character {ch!r}")
        self.pos = match.end()
        return Ref(match.group(), at)

    def parse_repeat(self, item: Node) -> Repeat:
        at = self.pos
        ch = self.src[at]
        self.pos += 1
        if ch in _OPERATORS:
            return Repeat(item, *_OPERATORS[ch], at)
        low = self.number("a repetition count after '{'")
        high = low
        self.skip_space()
        if self.peek() == ",":
            self.pos += 1
            self.skip_space()
            high = self.number("") if _DIGITS.match(self.src, self.pos) else INF
        self.skip_space()
        if self.peek() != "}":
            raise self.fail("expected '}' to close the repetition '{'", at if not self.peek() else None)
        self.pos += 1
        return self.checked_repeat(item, low, high, at)

    def checked_repeat(self, item: Node, low: int, high: int, at: int) -> Repeat:
        if high != INF and high < low:
            raise self.fail(f"bad repetition bounds {{{low},{high}}}: the maximum is below the minimum", at)
        if max(low, 0 if high == INF else high) > self.limits.max_repeat:
            raise UnsupportedError(f"repeat bound above {self.limits.max_repeat}",
                                   f"repetition bound above Limits.max_repeat={self.limits.max_repeat}; "
                                   "raise it or use * / +", source=self.src, offset=at)
        return Repeat(item, low, high, at)

    def number(self, what: str) -> int:
        self.skip_space()
        match = _DIGITS.match(self.src, self.pos)
        if match is None:
            raise self.fail(f"expected {what}")
        self.pos = match.end()
        return int(match.group())

    def parse_literal(self) -> Literal:
        at = self.pos
        self.pos += 1
        out = []
        while self.peek() != '"':
            if not self.peek() or self.peek() == "\n":
                raise self.fail("unterminated string literal", at)
            out.append(self.parse_char())
        self.pos += 1
        return Literal("".join(out), False, at)

    def parse_class(self) -> CharClass:
        at = self.pos
        self.pos += 1
        negated = self.peek() == "^"
        self.pos += negated
        ranges = []
        while self.peek() != "]":
            if not self.peek() or self.peek() == "\n":
                raise self.fail("unterminated character class", at)
            start_at = self.pos
            low = high = ord(self.parse_char())
            if self.peek() == "-" and self.src[self.pos + 1 : self.pos + 2] not in ("]", ""):
                self.pos += 1
                high = ord(self.parse_char())
                if high < low:
                    raise self.fail(f"empty range {chr(low)!r}-{chr(high)!r} in character class", start_at)
            ranges.append((low, high))
        self.pos += 1
        ranges = normalize(ranges)
        return CharClass(negate(ranges) if negated else ranges, at)

    def parse_char(self) -> str:
        """One character of a string or class, escapes decoded."""
        ch = self.src[self.pos]
        if ch != "\\":
            self.pos += 1
            return ch
        at = self.pos
        nxt = self.src[at + 1 : at + 2]
        if nxt in _ESCAPES:
            self.pos += 2
            return _ESCAPES[nxt]
        if nxt not in _HEX_WIDTH:
            raise self.fail(f"bad escape \\{nxt}: use \\n \\t \\r \\\\ \\\" \\[ \\] \\xHH \\uHHHH or \\UHHHHHHHH", at)
        width = _HEX_WIDTH[nxt]
        digits = self.src[at + 2 : at + 2 + width]
        if len(digits) < width or not all(c in "0123456789abcdefABCDEF" for c in digits):
            raise self.fail(f"bad escape \\{nxt}: expected {width} hex digits", at)
        code = int(digits, 16)
        if code > MAX_CODE_POINT or 0xD800 <= code <= 0xDFFF:
            raise self.fail(f"bad escape \\{nxt}{digits}: not a Unicode scalar value", at)
        self.pos = at + 2 + width
        return chr(code)


# ----- compiler -----------------------------------------------------------------------------


class _Compiler:
    """Definitions → IR: finds the regular rules, picks the lexemes, builds the Earley rules."""

    def __init__(self, text: str, definitions: list[Definition], limits: Limits) -> None:
        self.src = text
        self.limits = limits
        self.pool = ExprPool(limits)
        self.defs: dict[str, Definition] = {}
        for definition in definitions:
            self.define(definition)
        self.exprs: dict[object, int] = {}
        self.regular: dict[str, bool] = {}

    def fail(self, message: str, offset: int | None) -> GrammarError:
        return GrammarError(message, source=self.src, offset=offset)

    def define(self, definition: Definition) -> None:
        first = self.defs.get(definition.name)
        if first is not None:
            line = self.src.count("\n", 0, first.offset) + 1
            raise self.fail(f"rule {definition.name} is defined twice (first on line {line})", definition.offset)
        self.defs[definition.name] = definition

    def check_refs(self) -> None:
        for definition in self.defs.values():
            for node in walk(definition.body):
                if isinstance(node, Ref) and node.name not in self.defs:
                    raise self.fail(f"rule {node.name} is used but not defined", node.offset)

    # ----- regular rules ----------------------------------------------------------------

    def references(self, name: str) -> set[str]:
        return {n.name for n in walk(self.defs[name].body) if isinstance(n, Ref)}

    def find_regular(self) -> None:
        """``self.regular[name]``: the rule reaches no cycle (itself included)."""
        reach = {name: self.references(name) for name in self.defs}
        changed = True
        while changed:
            changed = False
            for name, seen in reach.items():
                grown = seen.union(*(reach[r] for r in seen))
                if grown != seen:
                    reach[name] = grown
                    changed = True
        cyclic = {name for name, seen in reach.items() if name in seen}
        for name, seen in reach.items():
            self.regular[name] = name not in cyclic and not (seen & cyclic)

    def expr(self, node: Node) -> int:
        """The expression of a regular node (rules inlined), cached."""
        key = ("rule", node.name) if isinstance(node, Ref) else node
        found = self.exprs.get(key)
        if found is None:
            found = self.build_expr(node)
            self.exprs[key] = found
        return found

    def build_expr(self, node: Node) -> int:
        pool = self.pool
        if isinstance(node, Ref):
            return self.expr(self.defs[node.name].body)
        if isinstance(node, Literal):
            return pool.literal(node.text.encode("utf-8"))
        if isinstance(node, CharClass):
            return ranges_to_expr(pool, node.ranges)
        if isinstance(node, Repeat):
            return pool.repeat(self.expr(node.item), node.low, node.high)
        return pool.alt([pool.concat_all([self.expr(item) for item in option]) for option in node.options])

    # ----- the whole grammar --------------------------------------------------------------

    def compile(self, start: str) -> GrammarIR:
        self.check_refs()
        if start not in self.defs:
            raise self.fail(f"start rule {start!r} is not defined; define it or pass start=...", None)
        self.find_regular()
        if self.regular[start]:
            return GrammarIR(self.pool, (Lexeme(start, self.expr(Ref(start, 0))),), (start,))
        return _RuleBuilder(self, _Segmentation(self).choose(start)).build(start)


Seq = tuple[Node, ...]
Run = tuple[int, int]


class _Segmentation:
    """Which runs of regular items become whole lexemes (see the module docstring, step 3).

    ``runs[seq]`` lists the ``(i, j)`` item ranges of ``seq`` that are one lexeme each; the other
    items of a registered sequence are translated structurally (strings as single characters).
    """

    def __init__(self, compiler: _Compiler) -> None:
        self.c = compiler
        self.pool = compiler.pool
        self.plus = self.pool.concat(self.pool.byteset(ALL_BYTES), self.pool.universal())
        self.solid = self.pool.complement(EPSILON)
        self.runs: dict[Seq, list[Run]] = {}
        self.structural_rules: set[str] = set()

    def choose(self, start: str) -> _Segmentation:
        self.expand(Ref(start, 0))
        while True:
            union = self.pool.alt([self.run_expr(seq, run) for seq, runs in self.runs.items() for run in runs]
                                  + sorted(self.singles()))
            union = self.pool.intersect([union, self.solid])   # lexemes never match the empty string
            multi = [(seq, run) for seq, runs in self.runs.items() for run in runs if self.is_multi(seq, run)]
            extending = [(seq, run) for seq, run in multi if self.has_proper_prefix_in(self.run_expr(seq, run), union)]
            # A run that is only a proper prefix of another run's string is left whole: that
            # other run has a proper prefix in U, so it is split instead (``string ":"``, not
            # ``string``).
            unsafe = extending or [(seq, run) for seq, run in multi
                                   if self.is_proper_prefix_in(self.run_expr(seq, run), union)]
            if not unsafe:
                return self
            for seq, run in unsafe:
                self.split(seq, run)

    # ----- registering sequences ----------------------------------------------------------

    def is_regular(self, node: Node) -> bool:
        return all(self.c.regular[n.name] for n in walk(node) if isinstance(n, Ref))

    def register(self, seq: Seq) -> None:
        """Start ``seq`` with its maximal runs of regular items as lexemes."""
        if seq in self.runs:
            return
        self.runs[seq] = []
        i = 0
        while i < len(seq):
            j = i
            while j < len(seq) and self.is_regular(seq[j]):
                j += 1
            if j > i:
                self.runs[seq].append((i, j))
                i = j
            else:
                self.expand(seq[i])
                i += 1

    def expand(self, node: Node) -> None:
        """Translate ``node`` structurally: register the sequences inside it."""
        if isinstance(node, Ref):
            if node.name not in self.structural_rules:
                self.structural_rules.add(node.name)
                for option in self.c.defs[node.name].body.options:
                    self.register(option)
        elif isinstance(node, Repeat):
            self.register((node.item,))
        elif isinstance(node, Alternatives):
            for option in node.options:
                self.register(option)

    def split(self, seq: Seq, run: Run) -> None:
        """Peel the last item off an unsafe run; an unsafe single item is expanded."""
        i, j = run
        self.runs[seq].remove(run)
        if j - i > 1:
            self.runs[seq] += [(i, j - 1), (j - 1, j)]
        else:
            self.expand(seq[i])

    # ----- checking -----------------------------------------------------------------------

    def singles(self) -> set[int]:
        """Single-character lexemes: the items of registered sequences outside every run."""
        out: set[int] = set()
        for seq, runs in self.runs.items():
            covered = {k for i, j in runs for k in range(i, j)}
            for k, item in enumerate(seq):
                if k in covered:
                    continue
                if isinstance(item, CharClass):
                    out.add(self.c.expr(item))
                elif isinstance(item, Literal):
                    out.update(self.pool.literal(ch.encode("utf-8")) for ch in item.text)
        return out

    def is_multi(self, seq: Seq, run: Run) -> bool:
        """Whether the run can match more than one character (single characters are always safe)."""
        i, j = run
        item = seq[i]
        return j - i > 1 or not (isinstance(item, CharClass) or (isinstance(item, Literal) and len(item.text) <= 1))

    def run_expr(self, seq: Seq, run: Run) -> int:
        return self.pool.concat_all([self.c.expr(item) for item in seq[run[0]:run[1]]])

    def has_proper_prefix_in(self, expr: int, union: int) -> bool:
        """Whether some string of ``expr`` has a proper prefix in ``union`` (``expr ∩ U·Σ⁺ ≠ ∅``)."""
        return not self.is_empty(self.pool.intersect([expr, self.pool.concat(union, self.plus)]))

    def is_proper_prefix_in(self, expr: int, union: int) -> bool:
        """Whether some string of ``expr`` is a proper prefix of one in ``union`` (``U ∩ expr·Σ⁺ ≠ ∅``)."""
        solid = self.pool.intersect([expr, self.solid])
        return not self.is_empty(self.pool.intersect([union, self.pool.concat(solid, self.plus)]))

    def is_empty(self, expr: int) -> bool:
        """Emptiness; an exhausted budget counts as "not empty" (the run is split: always exact)."""
        try:
            return self.pool.is_empty(expr)
        except BudgetExceededError:
            return False


class _RuleBuilder:
    """Rules of the structural part, over single-character lexemes and the kept runs."""

    def __init__(self, compiler: _Compiler, segmentation: _Segmentation) -> None:
        self.c = compiler
        self.seg = segmentation
        self.builder = GrammarBuilder(compiler.limits, compiler.pool)
        self.symbols_of: dict[str, int] = {}
        self.queue: list[str] = []

    def build(self, start: str) -> GrammarIR:
        start_symbol = self.rule_symbol(start)
        while self.queue:
            name = self.queue.pop()
            for option in self.c.defs[name].body.options:
                self.builder.rule(self.symbols_of[name], self.sequence(option))
        try:
            return self.builder.build(start_symbol)
        except GrammarError as err:
            raise self.c.fail(err.message, self.c.defs[start].offset) from None

    def rule_symbol(self, name: str) -> int:
        found = self.symbols_of.get(name)
        if found is None:
            found = self.builder.nonterminal(name)
            self.symbols_of[name] = found
            self.queue.append(name)
        return found

    def sequence(self, seq: Seq) -> list[int]:
        starts = dict(self.seg.runs[seq])
        out: list[int] = []
        k = 0
        while k < len(seq):
            if k in starts:
                out.append(self.run_symbol(seq[k:starts[k]]))
                k = starts[k]
            else:
                out += self.symbols(seq[k])
                k += 1
        return out

    def run_symbol(self, items: Seq) -> int:
        if len(items) == 1 and isinstance(items[0], Literal) and len(items[0].text) > 1:
            name = _quote(items[0].text)
        else:
            name = " ".join(_render(item) for item in items)
        return self.builder.lexeme(name, self.c.pool.concat_all([self.c.expr(item) for item in items]))

    def symbols(self, node: Node) -> list[int]:
        """Symbols of an item translated structurally."""
        b = self.builder
        if isinstance(node, Ref):
            return [self.rule_symbol(node.name)]
        if isinstance(node, Literal):
            return [b.lexeme(_quote(ch), self.c.pool.literal(ch.encode("utf-8"))) for ch in node.text]
        if isinstance(node, CharClass):
            return [b.lexeme(_render(node), self.c.expr(node))]
        if isinstance(node, Repeat):
            return [b.repeat(self.sequence((node.item,)), node.low, node.high)]
        if len(node.options) == 1:
            return self.sequence(node.options[0])
        return [b.choice([self.sequence(o) for o in node.options], hint="group")]


def _render(node: Node) -> str:
    """A short readable name for a lexeme made of ``node``."""
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, Literal):
        return _quote(node.text)
    if isinstance(node, CharClass):
        return _class_name(node)
    if isinstance(node, Repeat):
        bounds = {(0, 1): "?", (0, INF): "*", (1, INF): "+"}.get((node.low, node.high))
        return _render(node.item) + (bounds or f"{{{node.low},{'' if node.high == INF else node.high}}}")
    return "(...)"


def _quote(text: str) -> str:
    return '"' + text.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'


def _class_name(node: CharClass) -> str:
    if node.ranges == ANY_CHARACTER:
        return "."
    parts = [chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in node.ranges[:8]]
    return "[" + "".join(parts).encode("unicode_escape").decode("ascii") + ("...]" if len(node.ranges) > 8 else "]")


def gbnf_to_ir(text: str, *, start: str = "root", limits: Limits = DEFAULT_LIMITS) -> GrammarIR:
    """Compile a grammar in llama.cpp's GBNF syntax (see the module docstring) into a
    :class:`GrammarIR`.

    ``start`` names the start rule (``root`` in llama.cpp). Malformed grammars raise
    :class:`GrammarError` located in ``text``.
    """
    if not isinstance(text, str):
        raise TypeError(f"grammar text must be str, not {type(text).__name__}")
    definitions = _Parser(text, limits).parse()
    return _Compiler(text, definitions, limits).compile(start)
