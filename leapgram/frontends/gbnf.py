"""GBNF grammar text (llama.cpp's grammar format) → grammar IR.

GBNF is scannerless; leapgram's lexer is greedy. Rules that cannot reach recursion are inlined
into regexes, and runs of regular items become lexemes, split from the front until no lexeme can
swallow the start of another that may follow it (the greedy-safety rule), so the language stays
exactly GBNF's. Syntax, the rule and its proof: docs/design/gbnf.md. Malformed grammars raise
:class:`GrammarError` with line, column and a caret excerpt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import BudgetExceededError, GrammarError, UnsupportedError
from ..grammar.analysis import share_a_string, swallows_prefix
from ..grammar.builder import GrammarBuilder
from ..grammar.ir import GrammarIR, Lexeme, is_lexeme, lexeme_index
from ..limits import DEFAULT_LIMITS, Limits
from ..regex.expr import EPSILON, INF, ExprPool, bits_of
from ..regex.utf8 import MAX_CODE_POINT, negate, normalize, ranges_to_expr
from .lark_common import cfg_pool, share_pool, shared_memo
from .syntax_tree import Alternatives, Escapes, Literal, Ref, Repeat, references, scan_string

# ----- syntax tree --------------------------------------------------------------------------


@dataclass(eq=False)
class CharClass:
    """``[...]``, ``[^...]`` or ``.``: one character from ``ranges`` (normalized code points)."""

    ranges: tuple[tuple[int, int], ...]
    text: str
    offset: int








Node = Literal | CharClass | Ref | Alternatives | Repeat


@dataclass
class RuleDef:
    name: str
    offset: int
    body: Alternatives




# ----- parser -------------------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z0-9-]+")
_SPACE = re.compile(r"(?:\s+|#[^\n]*)*")
_RULE_START = re.compile(r"[A-Za-z0-9-]+(?:[ \t]|#[^\n]*)*::=")
_NUMBER = re.compile(r"[0-9]+")
_ESCAPES = Escapes({"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "[": "[", "]": "]",
                    "-": "-", "^": "^", "/": "/", "'": "'"},
                   known="\\n \\t \\r \\\\ \\\" \\[ \\] \\- \\^ \\xHH \\uHHHH \\UHHHHHHHH")
ANY_CHAR = ((0, MAX_CODE_POINT),)


MAX_GROUP_DEPTH = 100
OVERLAP_MEMO = ("gbnf lexeme overlaps",)  # greedy_conflicts' memo, kept in the shared pool family (lark_common)


class _Parser:
    """GBNF text → rule definitions (``name → RuleDef``), in order."""

    def __init__(self, text: str, limits: Limits) -> None:
        self.src = text
        self.pos = 0
        self.limits = limits
        self.rule = ""
        self.depth = 0

    def fail(self, message: str, offset: int) -> GrammarError:
        where = f" in rule {self.rule}" if self.rule else ""
        return GrammarError(message + where, source=self.src, offset=offset)

    def skip(self) -> None:
        self.pos = _SPACE.match(self.src, self.pos).end()

    def at_end(self) -> bool:
        self.skip()
        return self.pos >= len(self.src)

    def parse(self) -> dict[str, RuleDef]:
        rules: dict[str, RuleDef] = {}
        while not self.at_end():
            definition = self.parse_rule()
            first = rules.get(definition.name)
            if first is not None:
                line = self.src.count("\n", 0, first.offset) + 1
                raise GrammarError(f"rule {definition.name} is defined twice (first on line {line})",
                                   source=self.src, offset=definition.offset)
            rules[definition.name] = definition
        return rules

    def parse_rule(self) -> RuleDef:
        self.rule = ""
        at = self.pos
        match = _NAME.match(self.src, at)
        if match is None:
            raise self.fail(f"expected a rule name, found {self.found()}", at)
        self.pos = match.end()
        self.rule = match.group()
        self.skip_inline()
        if not self.src.startswith("::=", self.pos):
            raise self.fail(f"expected '::=' after the rule name, found {self.found()}", self.pos)
        self.pos += 3
        body = self.parse_alternatives(None)
        return RuleDef(match.group(), at, body)

    def skip_inline(self) -> None:
        while self.pos < len(self.src) and self.src[self.pos] in " \t":
            self.pos += 1

    def found(self) -> str:
        if self.pos >= len(self.src):
            return "the end of the grammar"
        ch = self.src[self.pos]
        return "the end of the line" if ch == "\n" else repr(ch)

    def parse_alternatives(self, opener: int | None) -> Alternatives:
        options = [self.parse_sequence(opener)]
        while self.pos < len(self.src) and self.src[self.pos] == "|":
            self.pos += 1
            options.append(self.parse_sequence(opener))
        return Alternatives(tuple(options), self.pos if opener is None else opener)

    def parse_sequence(self, opener: int | None) -> tuple[Node, ...]:
        items: list[Node] = []
        while True:
            self.skip()
            if self.pos >= len(self.src) or self.src[self.pos] in "|)":
                break
            if opener is None and _RULE_START.match(self.src, self.pos):
                break
            items.append(self.parse_postfix(self.parse_atom()))
        if opener is None and self.src.startswith(")", self.pos):
            raise self.fail("unmatched ')'", self.pos)
        return tuple(items)

    def parse_atom(self) -> Node:
        at = self.pos
        ch = self.src[at]
        if ch == '"':
            return self.parse_string()
        if ch == "[":
            return self.parse_class()
        if ch == ".":
            self.pos += 1
            return CharClass(ANY_CHAR, ".", at)
        if ch == "(":
            self.pos += 1
            self.depth += 1
            if self.depth > MAX_GROUP_DEPTH:  # the parser and the lowering recurse per group
                raise UnsupportedError(f"nesting deeper than {MAX_GROUP_DEPTH} groups",
                                       f"groups nest deeper than {MAX_GROUP_DEPTH} levels; flatten the rule "
                                       "(name inner groups as rules)", source=self.src, offset=at)
            body = self.parse_alternatives(at)
            self.depth -= 1
            if not self.src.startswith(")", self.pos):
                raise self.fail("'(' is never closed", at)
            self.pos += 1
            return body
        match = _NAME.match(self.src, at)
        if match is None:
            raise self.fail(f"unexpected character {ch!r}", at)
        self.pos = match.end()
        return Ref(match.group(), at)

    def parse_postfix(self, atom: Node) -> Node:
        while self.pos < len(self.src) and self.src[self.pos] in "*+?{":
            at = self.pos
            ch = self.src[at]
            self.pos += 1
            if ch == "{":
                low, high = self.parse_bounds(at)
            else:
                low, high = {"*": (0, INF), "+": (1, INF), "?": (0, 1)}[ch]
            atom = Repeat(atom, low, high, at)
        return atom

    def parse_bounds(self, at: int) -> tuple[int, int]:
        end = self.src.find("}", at)
        if end < 0 or "\n" in self.src[at:end]:
            raise self.fail("'{' is never closed", at)
        body = self.src[at + 1:end].replace(" ", "")
        self.pos = end + 1
        match = re.fullmatch(r"([0-9]*)(,([0-9]*))?", body)
        if match is None or (not match.group(1) and not match.group(2)):
            raise self.fail(f"bad repetition {{{body}}}: expected {{m}}, {{m,}} or {{m,n}}", at)
        low = int(match.group(1) or 0)
        high = low if match.group(2) is None else (int(match.group(3)) if match.group(3) else INF)
        if high != INF and high < low:
            raise self.fail(f"bad repetition bounds {{{body}}}: {high} is below {low}", at)
        if max(low, high) > self.limits.max_repeat:
            raise UnsupportedError(f"repeat bound above {self.limits.max_repeat}",
                                   f"repetition bound {max(low, high)} is above Limits.max_repeat; "
                                   "raise it or use * / +", source=self.src, offset=at)
        return low, high

    def parse_string(self) -> Literal:
        at = self.pos
        text, end = scan_string(self.src, at, _ESCAPES, self.fail)
        self.pos = end + 1
        return Literal(text, at)

    def parse_char(self, i: int) -> tuple[str, int]:
        """The character at ``i`` (an escape or itself) and the offset after it."""
        if self.src[i] != "\\":
            return self.src[i], i + 1
        return _ESCAPES.read(self.src, i, self.fail)

    def parse_class(self) -> CharClass:
        at = self.pos
        i = at + 1
        negated = self.src.startswith("^", i)
        i += negated
        ranges: list[tuple[int, int]] = []
        while i >= len(self.src) or self.src[i] != "]":
            if i >= len(self.src) or self.src[i] == "\n":
                raise self.fail("unterminated character class", at)
            low, i = self.parse_char(i)
            high = low
            if self.src.startswith("-", i) and i + 1 < len(self.src) and self.src[i + 1] not in "]\n":
                high, i = self.parse_char(i + 1)
                if high < low:
                    raise self.fail(f"bad character range {low!r}-{high!r}: the end comes first", at)
            ranges.append((ord(low), ord(high)))
        self.pos = i + 1
        chars = negate(normalize(ranges)) if negated else normalize(ranges)
        return CharClass(chars, self.src[at:self.pos], at)


# ----- compiler -----------------------------------------------------------------------------

RunKey = tuple[int, int, int]
"""(id of the Alternatives, option index, index of the run's first item)."""


@dataclass
class _Build:
    """One translation at given run levels: the IR and, per lexeme expression, its runs."""

    ir: GrammarIR
    sources: dict[int, set[RunKey]] = field(default_factory=dict)


class _Compiler:
    """Rule definitions → :class:`GrammarIR`, following docs/design/gbnf.md."""

    def __init__(self, text: str, rules: dict[str, RuleDef], limits: Limits) -> None:
        self.src = text
        self.rules = rules
        self.limits = limits
        self.recursive = self.recursive_rules()
        self.regular = set(rules) - self.reaching_recursion()
        self.pool = cfg_pool(limits)
        self.exprs = _Exprs(self, self.pool)
        self.overlap_memo: dict[tuple, bool] = shared_memo(self.pool, OVERLAP_MEMO)
        self.regular_nodes: dict[int, bool] = {}
        self.run_lengths: dict[RunKey, int] = {}

    def fail(self, message: str, offset: int | None) -> GrammarError:
        return GrammarError(message, source=self.src, offset=offset)

    # ----- analysis ---------------------------------------------------------------------

    def check(self, start: str) -> None:
        for definition in self.rules.values():
            for ref in references(definition.body):
                if ref.name not in self.rules:
                    raise self.fail(f"undefined rule {ref.name} (used in rule {definition.name})", ref.offset)
        if start not in self.rules:
            raise self.fail(f"missing start rule: no rule named {start!r}; define "
                            f"'{start} ::= ...' or pass start=...", None)

    def callees(self, name: str) -> set[str]:
        return {ref.name for ref in references(self.rules[name].body) if ref.name in self.rules}

    def recursive_rules(self) -> set[str]:
        """Rules that can reach themselves: those in a cycle of the call graph (Tarjan's strongly
        connected components, with a stack of work instead of recursion, so linear in the rules
        even for a chain of thousands)."""
        self.calls = calls = {name: sorted(self.callees(name)) for name in self.rules}
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        path: list[str] = []
        on_path: set[str] = set()
        recursive: set[str] = set()
        for root in self.rules:
            work = [] if root in index else [(root, 0)]
            while work:
                name, i = work.pop()
                if i == 0:
                    index[name] = low[name] = len(index)
                    path.append(name)
                    on_path.add(name)
                if i < len(calls[name]):
                    work.append((name, i + 1))
                    callee = calls[name][i]
                    if callee not in index:
                        work.append((callee, 0))
                    elif callee in on_path:
                        low[name] = min(low[name], index[callee])
                    continue
                if low[name] == index[name]:
                    component = path[path.index(name):]
                    del path[path.index(name):]
                    on_path.difference_update(component)
                    if len(component) > 1 or name in calls[name]:
                        recursive.update(component)
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[name])
        return recursive

    def reaching_recursion(self) -> set[str]:
        """Rules that are recursive or call one, directly or not."""
        callers: dict[str, list[str]] = {name: [] for name in self.rules}
        for name, called in self.calls.items():
            for callee in called:
                callers[callee].append(name)
        found = set(self.recursive)
        pending = list(found)
        while pending:
            for caller in callers[pending.pop()]:
                if caller not in found:
                    found.add(caller)
                    pending.append(caller)
        return found

    def is_regular(self, node: Node) -> bool:
        found = self.regular_nodes.get(id(node))
        if found is None:
            found = all(ref.name in self.regular for ref in references(node))
            self.regular_nodes[id(node)] = found
        return found

    # ----- compiling at given levels ----------------------------------------------------

    def compile(self, start: str) -> GrammarIR:
        self.check(start)
        if start in self.regular:
            ir = GrammarIR(self.pool, (Lexeme(start, self.exprs.of(self.rules[start].body)),))
            share_pool(ir, self.limits, {OVERLAP_MEMO: self.overlap_memo})
            return ir
        levels: dict[RunKey, int] = {}
        while True:  # each round splits a run further; all runs fully split is conflict-free
            build = _Translation(self, levels).build(start)
            failing = greedy_conflicts(build.ir, self.overlap_memo)
            if not failing:
                share_pool(build.ir, self.limits, {OVERLAP_MEMO: self.overlap_memo})
                return build.ir
            if not self.raise_levels(levels, build, failing):
                break
        raise self.fail("could not find greedy-safe lexemes for this grammar (please report it)", None)

    def raise_levels(self, levels: dict[RunKey, int], build: _Build, conflicts: set[tuple[int, int]]) -> bool:
        """Split the extended lexeme ``C`` of each conflict one step, or ``A`` when ``C`` can't be
        split; each run at most once per round."""
        chosen: set[RunKey] = set()
        for a, c in sorted(conflicts):
            for j in (c, a):
                keys = {k for k in build.sources.get(build.ir.lexemes[j].expr, ())
                        if levels.get(k, 0) < self.run_lengths.get(k, 1)}
                if keys:
                    chosen |= keys
                    break
        for key in chosen:
            levels[key] = levels.get(key, 0) + 1
        return bool(chosen)


class _Exprs:
    """Regular nodes → expressions in one builder's pool (regular rules inlined, cached)."""

    def __init__(self, compiler: _Compiler, pool: ExprPool) -> None:
        self.compiler = compiler
        self.pool = pool
        self.rule_exprs: dict[str, int] = {}

    def of(self, node: Node) -> int:
        pool = self.pool
        if isinstance(node, Literal):
            return pool.literal(node.text.encode("utf-8"))
        if isinstance(node, CharClass):
            return ranges_to_expr(pool, node.ranges)
        if isinstance(node, Ref):
            if node.name not in self.rule_exprs:
                self._fill_rule(node.name)
            return self.rule_exprs[node.name]
        if isinstance(node, Repeat):
            return pool.repeat(self.of(node.item), node.low, node.high)
        return pool.alt([self.sequence(option) for option in node.options])

    def sequence(self, items: tuple[Node, ...]) -> int:
        return self.pool.concat_all([self.of(item) for item in items])

    def _fill_rule(self, name: str) -> None:
        """The expression of regular rule ``name`` after those of the rules it calls, innermost
        first with a stack (inlining a chain of thousands of rules by recursion overflowed)."""
        pending, opened = [name], set()
        while pending:
            top = pending[-1]
            if top in self.rule_exprs:
                pending.pop()
            elif top in opened:  # its callees are done
                self.rule_exprs[top] = self.of(self.compiler.rules[top].body)
                pending.pop()
            else:
                opened.add(top)
                pending += [ref.name for ref in references(self.compiler.rules[top].body) if ref.name not in self.rule_exprs]


class _Translation:
    """The Earley rules and lexemes for one assignment of run levels (0: the run is one lexeme;
    1: each item of the run stands alone, a rule reference or group keeping its structure)."""

    def __init__(self, compiler: _Compiler, levels: dict[RunKey, int]) -> None:
        self.compiler = compiler
        self.levels = levels
        self.builder = GrammarBuilder(compiler.limits, pool=compiler.pool)
        self.exprs = compiler.exprs
        self.sources: dict[int, set[RunKey]] = {}
        self.rule_symbols: dict[str, int] = {}
        self.queue: list[str] = []

    def build(self, start: str) -> _Build:
        start_symbol = self.rule_symbol(start)
        while self.queue:
            name = self.queue.pop()
            symbol = self.rule_symbols[name]
            for option in self.alternatives(self.compiler.rules[name].body):
                self.builder.rule(symbol, option)
        try:
            ir = self.builder.build(start_symbol)
        except GrammarError as err:
            raise self.compiler.fail(f"{err.message} (rule {start})", self.compiler.rules[start].offset) from None
        return _Build(ir, self.sources)

    def rule_symbol(self, name: str) -> int:
        found = self.rule_symbols.get(name)
        if found is None:
            found = self.builder.nonterminal(name)
            self.rule_symbols[name] = found
            self.queue.append(name)
        return found

    def alternatives(self, alt: Alternatives) -> list[list[int]]:
        return [self.sequence(alt, i) for i in range(len(alt.options))]

    def sequence(self, alt: Alternatives, index: int) -> list[int]:
        """Symbols of option ``index`` of ``alt``: each maximal run of regular items is a run."""
        items = alt.options[index]
        out: list[int] = []
        i = 0
        while i < len(items):
            if not self.compiler.is_regular(items[i]):
                out.extend(self.item_symbols(items[i]))
                i += 1
                continue
            end = i
            while end < len(items) and self.compiler.is_regular(items[end]):
                end += 1
            out.extend(self.run_symbols((id(alt), index, i), items[i:end]))
            i = end
        return out

    def run_symbols(self, key: RunKey, run: tuple[Node, ...]) -> list[int]:
        """The first ``level`` items of ``run`` alone, the rest as one lexeme."""
        self.compiler.run_lengths[key] = len(run)
        level = self.levels.get(key, 0)
        out = [symbol for item in run[:level] for symbol in self.item_symbols(item)]
        if level < len(run):
            out.append(self.lexeme(key, run[level:], self.exprs.sequence(run[level:])))
        return out

    def lexeme(self, key: RunKey, run: tuple[Node, ...], expr: int) -> int:
        pool = self.builder.pool
        self.sources.setdefault(expr, set()).add(key)
        if pool.nullable[expr]:
            self.sources.setdefault(pool.difference(expr, EPSILON), set()).add(key)
        return self.builder.lexeme(" ".join(_render(item) for item in run), expr)

    def item_symbols(self, node: Node) -> list[int]:
        """``node`` standing alone: a string as a run of its characters, a rule as its
        nonterminal, a group as a choice of sequences, a repetition of its item's run."""
        if self.compiler.is_regular(node) and not self.levels.get((id(node), 0, 0), 0):
            return [self.lexeme((id(node), 0, 0), (node,), self.exprs.of(node))]
        if isinstance(node, Literal) and len(node.text) > 1:
            pool = self.builder.pool
            return [self.lexeme((id(node), 1, k), (Literal(ch, node.offset),), pool.literal(ch.encode("utf-8")))
                    for k, ch in enumerate(node.text)]
        if isinstance(node, (Literal, CharClass)):
            return [self.lexeme((id(node), 0, 0), (node,), self.exprs.of(node))]
        if isinstance(node, Ref):
            return [self.rule_symbol(node.name)]
        if isinstance(node, Repeat):
            if self.compiler.is_regular(node.item):
                return [self.repeat(self.run_symbols((id(node), -1, 0), (node.item,)), node)]
            return [self.repeat(self.item_symbols(node.item), node)]
        if len(node.options) == 1:
            return self.sequence(node, 0)
        return [self.builder.choice(self.alternatives(node), hint="group")]

    def repeat(self, items: list[int], node: Repeat) -> int:
        return self.builder.quantified(items, node.low, node.high)


def _render(node: Node) -> str:
    if isinstance(node, Literal):
        return '"' + node.text.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'
    if isinstance(node, CharClass):
        return node.text
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, Repeat):
        suffix = {(0, 1): "?", (0, INF): "*", (1, INF): "+"}.get((node.low, node.high))
        return f"({_render(node.item)})" + (suffix or f"{{{node.low},{'' if node.high == INF else node.high}}}")
    return "(...)"


# ----- the greedy-safety rule ---------------------------------------------------------------


def greedy_conflicts(ir: GrammarIR, memo: dict[tuple[int, int], bool] | None = None) -> set[tuple[int, int]]:
    """Pairs of lexemes ``(A, C)`` such that a string of ``A`` and a byte that may follow ``A``
    are a prefix of a string of ``C`` (docs/design/gbnf.md). ``memo`` caches intersection
    tests across calls on grammars that share one pool."""
    memo = {} if memo is None else memo
    sets = _LexemeSets(ir, memo)
    pool = ir.pool
    failing: set[tuple[int, int]] = set()
    for a, lexeme in enumerate(ir.lexemes):
        follow = sets.follow_bytes(a)
        if not follow:
            continue
        starts = pool.first_bytes(lexeme.expr)
        for c in bits_of(sets.allowed_with(a)):
            other = ir.lexemes[c].expr
            if pool.first_bytes(other) & starts and _swallows(pool, lexeme.expr, follow, other, memo):
                failing.add((a, c))
    return failing


def _overlaps(pool: ExprPool, a: int, b: int, memo: dict) -> bool:
    key = (min(a, b), max(a, b))
    found = memo.get(key)
    if found is None:
        found = memo[key] = _undecided_is_true(share_a_string, pool, a, b)
    return found


def _swallows(pool: ExprPool, a: int, follow: int, c: int, memo: dict) -> bool:
    """Whether a string of ``c`` starts with a string of ``a`` and a byte of ``follow``."""
    key = (a, follow, c)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _undecided_is_true(swallows_prefix, pool, a, follow, c)
    return found


def _undecided_is_true(test, *args) -> bool:
    try:
        return test(*args)
    except BudgetExceededError:
        return True  # undecided: split, which is always safe


class _LexemeSets:
    """FIRST and FOLLOW over lexemes (sets as bit masks of lexeme indexes) and, per lexeme, the
    lexemes the parser may allow at the same time (:meth:`allowed_with`)."""

    def __init__(self, ir: GrammarIR, memo: dict[tuple[int, int], bool]) -> None:
        self.ir = ir
        self.memo = memo
        self.nullable: set[int] = set()
        self.first = [0] * len(ir.nonterminals)
        self.follow = [0] * len(ir.nonterminals)
        self.lexeme_follow = [0] * len(ir.lexemes)
        self.fixpoint(self.first_step)
        self.fixpoint(self.follow_step)
        self.overlapping = [self.overlaps_with(j) for j in range(len(ir.lexemes))]
        self.preceding = [0] * len(ir.lexemes)
        for j, follow in enumerate(self.lexeme_follow):
            for a in bits_of(follow):
                self.preceding[a] |= 1 << j

    def overlaps_with(self, j: int) -> int:
        """The lexemes that share a string with lexeme ``j`` (``j`` included)."""
        pool, lexemes = self.ir.pool, self.ir.lexemes
        starts = pool.first_bytes(lexemes[j].expr)
        mask = 1 << j
        for k, other in enumerate(lexemes):
            if k != j and pool.first_bytes(other.expr) & starts and _overlaps(pool, lexemes[j].expr, other.expr, self.memo):
                mask |= 1 << k
        return mask

    def allowed_with(self, a: int) -> int:
        """Lexemes the parser may allow together with ``a`` (over-approximated).

        The lexemes an Earley row allows follow the lexemes scanned just before, which all
        matched one same string; so ``C`` can be allowed with ``A`` only if ``A`` follows some
        ``L1`` and ``C`` follows some ``L2`` where ``L1`` and ``L2`` share a string, or if both
        start the grammar.
        """
        start = self.first[self.ir.start]
        out = start if start >> a & 1 else 0
        before = 0
        for l1 in bits_of(self.preceding[a]):
            before |= self.overlapping[l1]
        for l2 in bits_of(before):
            out |= self.lexeme_follow[l2]
        return out

    @staticmethod
    def fixpoint(step) -> None:
        while step():
            pass

    def first_of(self, symbols) -> tuple[int, bool]:
        mask = 0
        for s in symbols:
            if is_lexeme(s):
                return mask | 1 << lexeme_index(s), False
            mask |= self.first[s]
            if s not in self.nullable:
                return mask, False
        return mask, True

    def rest(self, lhs: int, rhs: tuple[int, ...], i: int) -> int:
        mask, through = self.first_of(rhs[i:])
        return mask | self.follow[lhs] if through else mask

    def first_step(self) -> bool:
        changed = False
        for lhs, rhs in self.ir.rules:
            mask, through = self.first_of(rhs)
            if mask & ~self.first[lhs]:
                self.first[lhs] |= mask
                changed = True
            if through and lhs not in self.nullable:
                self.nullable.add(lhs)
                changed = True
        return changed

    def follow_step(self) -> bool:
        changed = False
        for lhs, rhs in self.ir.rules:
            for i, s in enumerate(rhs):
                mask = self.rest(lhs, rhs, i + 1)
                if is_lexeme(s):
                    self.lexeme_follow[lexeme_index(s)] |= mask
                elif mask & ~self.follow[s]:
                    self.follow[s] |= mask
                    changed = True
        return changed

    def follow_bytes(self, a: int) -> int:
        """The bytes that can come right after lexeme ``a`` (EOS excluded)."""
        out = 0
        for b in bits_of(self.lexeme_follow[a]):
            out |= self.ir.pool.first_bytes(self.ir.lexemes[b].expr)
        return out


def gbnf_to_ir(text: str, *, start: str = "root", limits: Limits = DEFAULT_LIMITS) -> GrammarIR:
    """Compile a grammar in llama.cpp's GBNF syntax (docs/design/gbnf.md) into a
    :class:`GrammarIR` with the same language.

    ``start`` names the start rule. Malformed grammars raise :class:`GrammarError` located in
    ``text``; repetition bounds above ``limits.max_repeat`` raise :class:`UnsupportedError`.
    """
    if not isinstance(text, str):
        raise TypeError(f"grammar text must be str, not {type(text).__name__}")
    rules = _Parser(text, limits).parse()
    return _Compiler(text, rules, limits).compile(start)
