"""The one builder every front end targets."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import GrammarError
from ..limits import DEFAULT_LIMITS, Limits
from ..regex.expr import EPSILON, INF, ExprPool
from ..regex.syntax import parse_regex
from .analysis import pack_rules, packed_productive_and_nullable, productive_and_nullable
from .ir import GrammarIR, Lexeme, Rule, lexeme_symbol, new_lexeme


class GrammarBuilder:
    """Collects lexemes and rules, then checks and freezes them into a :class:`GrammarIR`.

    Lexemes with the same expression share one symbol. A lexeme that matches the empty string is
    split into its non-empty part, made optional (the lexer never produces empty lexemes).
    Repetition helpers (:meth:`star`, :meth:`plus`, :meth:`repeat`) use left recursion, which an
    Earley parser handles with rows of constant size.
    """

    def __init__(self, limits: Limits = DEFAULT_LIMITS, pool: ExprPool | None = None) -> None:
        self.pool = pool or ExprPool(limits)
        self.limits = limits
        self._lexemes: list[Lexeme] = []
        self._lexeme_of_expr: dict[int, int] = {}
        self._nonterminals: list[str] = []
        self._nonterminal_of_name: dict[str, int] = {}
        self._rules: list[Rule] = []
        self._rule_set: set[Rule] = set()
        self._ignore: list[int] = []
        self._fresh = 0
        self._defined: set[int] = set()
        self._literals: dict[tuple[bytes, bool], int] = {}

    # ----- symbols ------------------------------------------------------------------------

    def nonterminal(self, name: str) -> int:
        """The nonterminal called ``name`` (created on first use)."""
        found = self._nonterminal_of_name.get(name)
        if found is None:
            found = len(self._nonterminals)
            self._nonterminals.append(name)
            self._nonterminal_of_name[name] = found
        return found

    def fresh_nonterminal(self, hint: str) -> int:
        """A new nonterminal, named ``hint#n`` (a name :meth:`nonterminal` never finds: a
        grammar's own rule of that name is another nonterminal)."""
        self._fresh += 1
        found = len(self._nonterminals)
        self._nonterminals.append(f"{hint}#{self._fresh}")
        return found

    def fresh_nonterminals(self, hint: str, count: int) -> range:
        """``count`` new nonterminals, as many calls of :meth:`fresh_nonterminal` make."""
        first = len(self._nonterminals)
        fresh = self._fresh
        self._nonterminals.extend([f"{hint}#{n}" for n in range(fresh + 1, fresh + count + 1)])
        self._fresh = fresh + count
        return range(first, first + count)

    def lexeme(self, name: str, expr: int) -> int:
        """The symbol matching one ``expr`` lexeme (a nonterminal when ``expr`` is nullable)."""
        if self.pool.nullable[expr]:
            solid = self.pool.difference(expr, EPSILON)
            if self.pool.is_empty(solid):
                return self.sequence([], hint=name)
            return self.optional([self.lexeme(name, solid)], hint=name)
        found = self._lexeme_of_expr.get(expr)
        if found is None:
            found = len(self._lexemes)
            self._lexemes.append(new_lexeme(name, expr))
            self._lexeme_of_expr[expr] = found
        return lexeme_symbol(found)

    def literal(self, text: str | bytes, *, ignore_case: bool = False) -> int:
        """The symbol matching exactly ``text`` (UTF-8)."""
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        found = self._literals.get((data, ignore_case))
        if found is None:
            found = self._literals[(data, ignore_case)] = self._new_literal(data, ignore_case)
        return found

    def _new_literal(self, data: bytes, ignore_case: bool) -> int:
        if ignore_case:
            expr = parse_regex(_escape(data.decode("utf-8")), self.pool, ignore_case=True)
        else:
            expr = self.pool.literal(data)
        name = repr(data.decode("utf-8", "replace"))
        return self.lexeme(name, expr)

    def regex(self, pattern: str, *, name: str | None = None, ignore_case: bool = False,
              dotall: bool = False) -> int:
        """The symbol matching ``pattern``; regex errors propagate as :class:`GrammarError`."""
        expr = parse_regex(pattern, self.pool, ignore_case=ignore_case, dotall=dotall)
        return self.lexeme(name or f"/{pattern}/", expr)

    # ----- rules --------------------------------------------------------------------------

    def rule(self, lhs: int, rhs: Sequence[int]) -> None:
        """Add ``lhs -> rhs`` (duplicates are dropped)."""
        rule = (lhs, tuple(rhs))
        self._defined.add(lhs)
        rules = self._rule_set
        count = len(rules)
        rules.add(rule)
        if len(rules) != count:  # (one hash of the rule, where a test and an add take two)
            self._rules.append(rule)

    def fresh_rules(self, rules: list[Rule]) -> None:
        """Add ``rules`` as they are, in order: rules with tuple right-hand sides whose left-hand
        sides are new nonterminals (:meth:`fresh_nonterminal`) no other rule is written for, and
        no two of them equal, so the duplicate check of :meth:`rule` has nothing to drop."""
        self._defined.update([lhs for lhs, _ in rules])
        self._rules += rules

    def sequence(self, items: Sequence[int], *, hint: str = "seq") -> int:
        """A nonterminal for the sequence ``items``."""
        nt = self.fresh_nonterminal(hint)
        self.rule(nt, items)
        return nt

    def choice(self, alternatives: Sequence[Sequence[int]], *, hint: str = "alt") -> int:
        """A nonterminal for ``alt0 | alt1 | ...``."""
        nt = self.fresh_nonterminal(hint)
        for alt in alternatives:
            self.rule(nt, alt)
        return nt

    def optional(self, items: Sequence[int], *, hint: str = "opt") -> int:
        """``items?``"""
        return self.choice([items, []], hint=hint)

    def star(self, items: Sequence[int], *, hint: str = "star") -> int:
        """``items*`` as ``X -> X items | ε``."""
        nt = self.fresh_nonterminal(hint)
        self.rule(nt, [nt, *items])
        self.rule(nt, [])
        return nt

    def plus(self, items: Sequence[int], *, hint: str = "plus") -> int:
        """``items+`` as ``X -> X items | items``."""
        nt = self.fresh_nonterminal(hint)
        self.rule(nt, [nt, *items])
        self.rule(nt, items)
        return nt

    def quantified(self, items: Sequence[int], low: int, high: int) -> int:
        """``items`` under a grammar's quantifier: ``?``, ``*`` and ``+`` as their one rule each,
        other bounds as :meth:`repeat`."""
        bounds = (low, high)
        if bounds == (0, 1):
            return self.optional(items)
        if bounds == (0, INF):
            return self.star(items)
        if bounds == (1, INF):
            return self.plus(items)
        return self.repeat(items, low, high)

    def repeat(self, items: Sequence[int], low: int, high: int = INF, *, hint: str = "rep") -> int:
        """``items{low,high}`` (``high == INF``: unbounded)."""
        if low < 0 or (high != INF and high < low):
            raise ValueError(f"bad repeat bounds {low}..{high}")
        if max(low, 0 if high == INF else high) > self.limits.max_repeat:
            raise ValueError(f"repeat bound above Limits.max_repeat={self.limits.max_repeat}")
        required = [sym for _ in range(low) for sym in items]
        if high == INF:
            return self.sequence([*required, self.star(items, hint=hint)], hint=hint)
        span = high - low
        if not span:
            return self.sequence(required, hint=hint)
        # the nested optionals X_k -> items X_(k-1) | ε, each a fresh nonterminal with its own two
        # rules: written at once (the nonterminals and rules that one optional() per k would add)
        names = self.fresh_nonterminals(hint, span)
        items = tuple(items)
        rules: list[Rule] = [(names[0], items), (names[0], ())]
        for k in range(1, span):
            rules += [(names[k], (*items, names[k - 1])), (names[k], ())]
        self.fresh_rules(rules)
        return self.sequence([*required, names[-1]], hint=hint)

    def ignore(self, expr: int, name: str = "%ignore") -> None:
        """Allow ``expr`` between any two lexemes, invisible to the parser."""
        if self.pool.nullable[expr]:
            expr = self.pool.difference(expr, EPSILON)
        if self.pool.is_empty(expr):
            return
        index = len(self._lexemes)
        self._lexemes.append(new_lexeme(name, expr))
        self._ignore.append(index)

    # ----- freezing -----------------------------------------------------------------------

    def build(self, start: int) -> GrammarIR:
        """Check the grammar and freeze it; ``start`` is the start nonterminal.

        Raises :class:`GrammarError` for a nonterminal used but never defined, or a start symbol
        that derives no string.
        """
        count = len(self._nonterminals)  # when every nonterminal has a rule, no scan:
        if len(self._defined) != count or max(self._defined, default=-1) >= count or start not in self._defined:
            used = {s for _, rhs in self._rules for s in rhs if s >= 0} | {start}
            undefined = sorted(used - self._defined)
            if undefined:
                names = ", ".join(self._nonterminals[n] for n in undefined)
                raise GrammarError(f"rule used but never defined: {names}")
        packed = pack_rules(self._rules)
        found = None if packed is None else packed_productive_and_nullable(packed, len(self._rules), count)
        if found is None or not 0 <= start < count:  # a rule past the nonterminals: the sets' own errors
            productive, nullable = productive_and_nullable(self._rules)
            derives = start in productive
        else:
            derives = bool(found[0][start])
            nullable = found[1].nonzero()[0].tolist()  # (flatnonzero is a Python function around this)
        if not derives:
            raise GrammarError(f"start rule {self._nonterminals[start]} derives no string")
        ir = GrammarIR(self.pool, tuple(self._lexemes), tuple(self._nonterminals), tuple(self._rules),
                       start, tuple(self._ignore), frozenset(nullable))
        if packed is not None:
            ir.keep_packed_rules(packed)
        return ir


def _escape(text: str) -> str:
    return "".join("\\" + ch if ch in "\\^$.|?*+()[]{}/-" else ch for ch in text)
