"""String and number values as lexemes (:class:`ScalarKeywords`): the expressions of
``strings.py`` and ``numbers.py`` for one schema, memoized, with the conjuncts ``allOf``
merging left and the values ``not`` cut out."""

from __future__ import annotations

from typing import Any

from ...errors import BudgetExceededError
from ...regex.expr import EMPTY
from ...regex.syntax import parse_regex
from .numbers import NUMBER_KEYWORDS, PLAIN_NUMBER, NumberBuilder, decimal_of, number_expr
from .strings import STRING_KEYWORDS, literal_string, string_expr, string_universe

STRING_SET = frozenset(STRING_KEYWORDS)
NUMBER_SET = frozenset(NUMBER_KEYWORDS)


class ScalarKeywords:
    """The string and number keywords of :class:`SchemaTranslator` (a mixin: ``self`` is the
    translator)."""

    def string_lexeme(self, expr: int, name: str, *, check_empty: bool = False) -> int | None:
        """The lexeme of ``expr``; with ``check_empty``, ``None`` when it provably matches
        nothing (a search within ``Limits.max_emptiness_steps``; past it, kept). Value lexemes
        are not checked: a large ``pattern`` ∩ ``maxLength`` costs seconds to prove non-empty, and
        an empty lexeme only never matches. ``EMPTY`` itself (``minLength`` above ``maxLength``,
        ``minimum`` above ``maximum``) is always ``None``: no value of this type."""
        if expr == EMPTY:
            return None
        if check_empty:
            try:
                if self.pool.is_empty(expr):
                    return None
            except BudgetExceededError:
                pass
        return self.builder.lexeme(name, expr)

    def any_string_expr(self) -> int:
        if self._any_string is None:
            self._any_string = string_expr(self.ctx, {}, "")
        return self._any_string

    def scalar_expr(self, schema: dict, pointer: str, kind: str) -> int:
        """The lexeme expression of a string or number schema, with the extra conjuncts that
        ``allOf`` merging left (``$leapgram:and``) intersected in and ``not`` exclusions cut out."""
        exprs = [self._one_scalar_expr(schema, pointer, kind)]
        for extra in schema.get("$leapgram:and", ()):
            exprs.append(self._one_scalar_expr(extra, pointer, kind))
        expr = exprs[0] if len(exprs) == 1 else self.pool.intersect(exprs)
        excluded = schema.get("$leapgram:exclude", ())
        negations = schema.get("$leapgram:not", ())
        if kind == "string" and (excluded or negations) and expr == self.any_string_expr():
            expr = string_universe(self.pool)  # cut from every spelling (see string_universe)
        if kind == "number" and (excluded or negations):
            # exponent forms are left out: a value's exponent spellings (1 = 10e-1 = 0.01e2 ...)
            # are no regular language, and number_expr leaves them out of what is cut (stricter)
            expr = self.pool.intersect([expr, parse_regex(PLAIN_NUMBER, self.pool)])
        if excluded:
            expr = self.pool.difference(expr, self.pool.alt([self._spellings_expr(v) for v in excluded]))
        for negated in negations:  # values failing these keywords (negation.py)
            if kind != "string":
                negated = _within_bounds_of(schema, negated)
            expr = self.pool.difference(expr, self.scalar_expr(negated, pointer, kind))
        return expr

    def _spellings_expr(self, value: Any) -> int:
        """Every text of a scalar: a string in every offered spelling (:func:`literal_string`), a
        number in every spelling without exponent (``1``, ``1.00``; ``-0`` for zero)."""
        if isinstance(value, str):
            return literal_string(self.pool, value)
        return NumberBuilder(self.pool, integer=False).written(decimal_of(value, ""))

    def _one_scalar_expr(self, schema: dict, pointer: str, kind: str) -> int:
        """``string_expr``/``number_expr``, memoized by the keywords they read (schemas repeat
        ``{"type": "string"}`` and the like many times, and building a Unicode class is slow)."""
        names = STRING_SET if kind == "string" else NUMBER_SET
        if names.isdisjoint(schema):  # (the key below, without building it)
            key = (kind, "[]")
        else:
            key = (kind, repr(sorted([(k, v) for k, v in schema.items() if k in names])))
        found = self._scalar_exprs.get(key)
        if found is None:
            warnings = len(self.ctx.warnings)
            if kind == "string":
                found = string_expr(self.ctx, schema, pointer)
            else:
                found = number_expr(self.ctx, schema, pointer, integer=kind == "integer")
            if len(self.ctx.warnings) == warnings:  # a warning names its pointer: recompute elsewhere
                self._scalar_exprs[key] = found
        return found


def _within_bounds_of(schema: dict, negated: dict) -> dict:
    """``negated`` with ``schema``'s bounds on each side where it has none, when it has a
    ``multipleOf``: the values cut from ``schema``'s are within those bounds anyway, so the cut is
    the same, and multiples between two bounds are a list of values (as in ``schema`` itself)
    instead of an automaton over remainders (``not: {multipleOf: 37}`` took seconds to a mask)."""
    if not isinstance(negated, dict) or "multipleOf" not in negated:
        return negated
    out = dict(negated)
    for side in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        if not any(key in negated for key in side):
            out.update((key, schema[key]) for key in side if key in schema)
    return out
