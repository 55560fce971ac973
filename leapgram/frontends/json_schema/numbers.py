"""JSON Schema numbers: the lexeme of one JSON number for a schema's numeric keywords.

Bounds are regexes built digit by digit, exact for numbers written without an exponent (exponent
forms are left out under a nonzero bound or ``multipleOf``: a subset, never a superset; so a
number with a ``const``/``enum`` value or such keywords cut out by ``not`` is written without
exponent, see scalars.py).
``multipleOf`` is exact for the steps listed in docs/design/json-schema-values.md and by the
remainders of the digits (:meth:`NumberBuilder.multiples_by_residue`), else refused;
``integer=True`` takes integers as ``json.dumps`` writes an ``int``.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, localcontext
from typing import Any

from ...errors import GrammarError
from ...regex.expr import EMPTY, EPSILON, INF
from ...regex.syntax import parse_regex
from .context import SchemaContext

JSON_INTEGER = r"-?(0|[1-9][0-9]*)"
JSON_NUMBER = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"
PLAIN_NUMBER = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?"  # without exponent: what a value or keyword is cut from

# A number that is not an integer, written without exponent (what 'not integer' leaves).
MAX_RESIDUE_STATES = 64  # multipleOf by remainders: modulus times (fraction places + 1)
JSON_FRACTIONAL = r"-?(0|[1-9][0-9]*)\.[0-9]*[1-9][0-9]*"
NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "$leapgram:fractional")
MAX_ENUMERATED = 2_000

Bound = tuple[Decimal, bool]  # (value, strict)


def number_expr(ctx: SchemaContext, schema: dict, pointer: str, *, integer: bool) -> int:
    """The pool expression of every JSON number valid under ``schema``'s numeric keywords (only
    integers written without fraction or exponent when ``integer``)."""
    lowers, uppers = bounds_of(schema, pointer)
    if not lowers and not uppers and "multipleOf" not in schema and not schema.get("$leapgram:fractional"):
        return parse_regex(JSON_INTEGER if integer else JSON_NUMBER, ctx.pool)
    if integer and schema.get("$leapgram:fractional"):
        return EMPTY  # no integer has a fraction
    if crossed(tightest(lowers, max), tightest(uppers, min), integer):
        return EMPTY  # no number between the bounds: no value of this type
    builder = NumberBuilder(ctx.pool, integer)
    parts = [parse_regex(JSON_FRACTIONAL, ctx.pool)] if schema.get("$leapgram:fractional") else []
    parts += [builder.at_least(value, strict) for value, strict in lowers]
    parts += [builder.at_most(value, strict) for value, strict in uppers]
    if "multipleOf" in schema:
        step = decimal_of(schema["multipleOf"], f"{pointer}/multipleOf")
        if step <= 0:
            raise GrammarError("multipleOf must be greater than 0", pointer=f"{pointer}/multipleOf")
        multiples = builder.multiples(step, tightest(lowers, max), tightest(uppers, min))
        if multiples is None:
            ctx.unsupported("multipleOf", f"{pointer}/multipleOf",
                            f"multiples of {step} are not expressible as a regex here; give "
                            f"minimum and maximum with at most {MAX_ENUMERATED} multiples between")
        else:
            parts.append(multiples)
    if not parts:
        return parse_regex(JSON_INTEGER if integer else JSON_NUMBER, ctx.pool)
    return ctx.pool.intersect(parts)


def decimal_of(value: object, pointer: str) -> Decimal:
    """A schema number as an exact decimal (a float as its shortest repr, as ``json`` reads it)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GrammarError(f"expected a number, got {value!r}", pointer=pointer)
    result = Decimal(value) if isinstance(value, int) else Decimal(repr(value))
    if not result.is_finite():
        raise GrammarError(f"expected a finite number, got {value!r}", pointer=pointer)
    return result


def bounds_of(schema: dict, pointer: str) -> tuple[list[Bound], list[Bound]]:
    """Lower and upper bounds from both the draft-4 (boolean exclusive) and draft-6+ forms."""
    lowers: list[Bound] = []
    uppers: list[Bound] = []
    for plain, exclusive, out in (("minimum", "exclusiveMinimum", lowers),
                                  ("maximum", "exclusiveMaximum", uppers)):
        flag = schema.get(exclusive)
        if isinstance(flag, bool):
            if plain in schema:
                out.append((decimal_of(schema[plain], f"{pointer}/{plain}"), flag))
            continue
        if plain in schema:
            out.append((decimal_of(schema[plain], f"{pointer}/{plain}"), False))
        if exclusive in schema:
            out.append((decimal_of(flag, f"{pointer}/{exclusive}"), True))
    return lowers, uppers


def tightest(bounds: list[Bound], pick) -> Bound | None:
    if not bounds:
        return None
    value = pick(v for v, _ in bounds)
    return value, any(strict for v, strict in bounds if v == value)


def crossed(low: Bound | None, high: Bound | None, integer: bool) -> bool:
    """Whether no number (no integer, when ``integer``) lies between the bounds."""
    if low is None or high is None:
        return False
    (lo, lo_strict), (hi, hi_strict) = low, high
    if integer:  # the smallest and the largest integer within the bounds
        lo = lo.to_integral_value(ROUND_FLOOR) + 1 if lo_strict else lo.to_integral_value(ROUND_CEILING)
        hi = hi.to_integral_value(ROUND_CEILING) - 1 if hi_strict else hi.to_integral_value(ROUND_FLOOR)
        return lo > hi
    return lo > hi or (lo == hi and (lo_strict or hi_strict))


def split_decimal(value: Decimal) -> tuple[str, str]:
    """Integer digits and fraction digits (no trailing zeros) of a non-negative decimal."""
    text = format(value, "f")
    whole, _, fraction = text.partition(".")
    return whole, fraction.rstrip("0")


class NumberBuilder:
    """Regexes over JSON numbers as written (no exponent), built digit by digit."""

    def __init__(self, pool, integer: bool) -> None:
        self.pool = pool
        self.integer = integer
        self.digits = self.digit_range(0, 9)
        self.any_digits = pool.repeat(self.digits, 0, INF)
        self.canonical = parse_regex(r"0|[1-9][0-9]*", pool)
        self.any_fraction = self.optional_dot(pool.repeat(self.digits, 1, INF))

    def digit_range(self, low: int, high: int) -> int:
        if low > high:
            return EMPTY
        return self.pool.byteset(sum(1 << (0x30 + d) for d in range(low, high + 1)))

    def lit(self, text: str) -> int:
        return self.pool.literal(text.encode())

    def dot(self, fraction_digits: int) -> int:
        """``.`` then the fraction digits; nothing in integer mode."""
        if self.integer:
            return EMPTY
        return self.pool.concat(self.lit("."), fraction_digits)

    def optional_dot(self, fraction_digits: int) -> int:
        return self.pool.alt([EPSILON, self.dot(fraction_digits)])

    # ----- signed bounds ------------------------------------------------------------------

    def at_least(self, bound: Decimal, strict: bool) -> int:
        """Numbers ``x`` with ``x ≥ bound`` (``>`` when strict)."""
        positive = self.magnitude_above(bound, strict) if bound >= 0 else self.any_magnitude()
        negative = self.magnitude_below(-bound, strict) if bound <= 0 else EMPTY
        if bound == 0:
            positive, negative = self.with_exponents(positive, negative, strict)
        return self.signed(positive, negative)

    def at_most(self, bound: Decimal, strict: bool) -> int:
        """Numbers ``x`` with ``x ≤ bound`` (``<`` when strict)."""
        positive = self.magnitude_below(bound, strict) if bound >= 0 else EMPTY
        negative = self.magnitude_above(-bound, strict) if bound <= 0 else self.any_magnitude()
        if bound == 0:
            negative, positive = self.with_exponents(negative, positive, strict)
        return self.signed(positive, negative)

    def with_exponents(self, same_side: int, other_side: int, strict: bool) -> tuple[int, int]:
        """A zero bound is decided by the sign alone, so exponent forms are exact there too
        (``minimum: 0`` accepts ``1e-06``): any mantissa on the bound's side, zero on the other
        when not strict."""
        if self.integer:
            return same_side, other_side
        exponent = parse_regex(r"[eE][+-]?[0-9]+", self.pool)
        zero = parse_regex(r"0(\.0+)?", self.pool)
        nonzero = parse_regex(r"0\.[0-9]*[1-9][0-9]*|[1-9][0-9]*(\.[0-9]+)?", self.pool)
        same = [same_side, self.pool.concat(nonzero, exponent)]
        other = [other_side]
        if not strict:
            same.append(self.pool.concat(zero, exponent))
            other.append(self.pool.concat(zero, exponent))
        return self.pool.alt(same), self.pool.alt(other)

    def signed(self, positive: int, negative: int) -> int:
        return self.pool.alt([positive, self.pool.concat(self.lit("-"), negative)])

    def any_magnitude(self) -> int:
        return self.pool.concat(self.canonical, self.any_fraction)

    # ----- magnitudes against a non-negative decimal ------------------------------------

    def magnitude_below(self, bound: Decimal, strict: bool) -> int:
        whole, fraction = split_decimal(bound)
        if strict:
            same = self.pool.alt([EPSILON if fraction else EMPTY,
                                  self.dot(self.fraction_cmp(fraction, below=True, tail=EMPTY, top_eps=False))])
        else:
            same = self.optional_dot(self.fraction_cmp(fraction, below=True, tail=self.zeros(0 if fraction else 1), top_eps=False))
        smaller = self.pool.concat(self.integers_below(whole), self.any_fraction)
        return self.pool.alt([smaller, self.pool.concat(self.lit(whole), same)])

    def magnitude_above(self, bound: Decimal, strict: bool) -> int:
        whole, fraction = split_decimal(bound)
        if strict:
            nonzero = self.pool.concat_all([self.any_digits, self.digit_range(1, 9), self.any_digits])
            same = self.dot(self.fraction_cmp(fraction, below=False, tail=nonzero, top_eps=False))
        elif fraction:
            same = self.dot(self.fraction_cmp(fraction, below=False, tail=self.any_digits, top_eps=False))
        else:
            same = self.any_fraction
        larger = self.pool.concat(self.integers_above(whole), self.any_fraction)
        return self.pool.alt([larger, self.pool.concat(self.lit(whole), same)])

    def zeros(self, low: int) -> int:
        return self.pool.repeat(self.lit("0"), low, INF)

    def fraction_cmp(self, fraction: str, *, below: bool, tail: int, top_eps: bool) -> int:
        """Digit strings ``s`` whose value ``0.s`` compares with ``0.fraction`` as asked.

        Built from the last digit back: at each digit, a smaller (larger) digit then anything, or
        the same digit then the comparison of the rest; ``tail`` is the set after all of
        ``fraction``. Below, stopping early (ε) is smaller, except at the top where a fraction
        needs at least one digit.
        """
        out = tail
        for index in range(len(fraction) - 1, -1, -1):
            c = int(fraction[index])
            other = self.digit_range(0, c - 1) if below else self.digit_range(c + 1, 9)
            branches = [self.pool.concat(other, self.any_digits), self.pool.concat(self.lit(fraction[index]), out)]
            if below and (index > 0 or top_eps):
                branches.append(EPSILON)
            out = self.pool.alt(branches)
        return out

    # ----- canonical integers -------------------------------------------------------------

    def integers_below(self, whole: str) -> int:
        """Integer literals (``0|[1-9][0-9]*``) with a value below ``whole``."""
        if whole == "0":
            return EMPTY
        k = len(whole)
        branches = [self.lit("0")]
        if k >= 2:
            branches.append(self.pool.concat(self.digit_range(1, 9), self.pool.repeat(self.digits, 0, k - 2)))
        for i in range(k):
            low = 1 if i == 0 else 0
            branches.append(self.same_prefix(whole, i, self.digit_range(low, int(whole[i]) - 1)))
        return self.pool.alt(branches)

    def integers_above(self, whole: str) -> int:
        """Integer literals with a value above ``whole``."""
        k = len(whole)
        longer = self.pool.concat(self.digit_range(1, 9), self.pool.repeat(self.digits, k, INF))
        branches = [longer]
        for i in range(k):
            branches.append(self.same_prefix(whole, i, self.digit_range(int(whole[i]) + 1, 9)))
        return self.pool.alt(branches)

    def same_prefix(self, whole: str, i: int, digit: int) -> int:
        rest = self.pool.repeat(self.digits, len(whole) - i - 1, len(whole) - i - 1)
        return self.pool.concat_all([self.lit(whole[:i]), digit, rest])

    # ----- multipleOf ---------------------------------------------------------------------

    def multiples(self, step: Decimal, lower: Bound | None, upper: Bound | None) -> int | None:
        """Numbers that are a multiple of ``step``; ``None`` when not expressible."""
        _, digits, exponent = step.normalize().as_tuple()
        unit = int("".join(map(str, digits)))
        if unit == 1:
            return self.multiples_of_power(exponent)
        if unit in (2, 5) and exponent >= 0:
            return self.multiples_of_small(unit, exponent)
        if lower is not None and upper is not None:
            found = self.enumerate_multiples(step, lower, upper)
            if found is not None:
                return found
        places = max(-exponent, 0)
        modulus = unit * 10 ** max(exponent, 0)
        if modulus * (places + 1) > MAX_RESIDUE_STATES:
            return None
        return self.multiples_by_residue(modulus, places)

    def multiples_by_residue(self, modulus: int, places: int) -> int:
        """Numbers whose value times ``10**places`` is an integer multiple of ``modulus``, by the
        remainder of the digits read so far (a finite automaton, written as an expression by
        state elimination): the whole part's digits, then at most ``places`` fraction digits
        that count, then only zeros."""
        pool = self.pool

        def digits_to(r: int, target: int) -> int:
            return pool.byteset(sum(1 << (48 + d) for d in range(10) if (10 * r + d) % modulus == target))

        fractions: dict[tuple[int, int], int] = {}

        def fraction(j: int, r: int) -> int:  # the digits after j fraction digits, remainder r
            if (j, r) not in fractions:
                if j == places:
                    fractions[(j, r)] = pool.repeat(self.lit("0"), 0, INF) if r == 0 else EMPTY
                else:
                    here = [EPSILON] if r * 10 ** (places - j) % modulus == 0 else []
                    fractions[(j, r)] = pool.alt(here + [pool.concat(digits_to(r, s), fraction(j + 1, s))
                                                         for s in range(modulus)])
            return fractions[(j, r)]

        def tail(r: int) -> int:  # after the whole part, remainder r
            ends = [EPSILON] if r * 10 ** places % modulus == 0 else []
            if self.integer:
                return ends[0] if ends else EMPTY
            if places == 0:
                more = [pool.concat(self.lit("."), pool.repeat(self.lit("0"), 1, INF))] if ends else []
            else:
                more = [pool.concat(self.lit("."), pool.alt([pool.concat(digits_to(r, s), fraction(1, s))
                                                             for s in range(modulus)]))]
            return pool.alt(ends + more)

        # state elimination over the remainders: edges[i][j], with "start" and "end" nodes
        edges: dict[Any, dict[Any, int]] = {i: {} for i in range(modulus)}
        edges["start"] = {s: pool.byteset(sum(1 << (48 + d) for d in range(1, 10) if d % modulus == s))
                          for s in range(modulus)}
        for i in range(modulus):
            for j in range(modulus):
                edges[i][j] = digits_to(i, j)
            edges[i]["end"] = tail(i)
        for k in range(modulus):
            loop = pool.star(edges[k].pop(k, EMPTY))
            for i, row in edges.items():
                through = row.pop(k, None)
                if through is None or i == k:
                    continue
                for j, out in edges[k].items():
                    row[j] = pool.alt([row.get(j, EMPTY), pool.concat_all([through, loop, out])])
            del edges[k]
        whole = pool.alt([pool.concat(self.lit("0"), tail(0)), edges["start"].get("end", EMPTY)])
        self.pin_remainders(whole, modulus)
        return pool.concat(pool.alt([EPSILON, self.lit("-")]), whole)

    def pin_remainders(self, whole: int, modulus: int) -> None:
        """Make the derivatives of ``whole`` by the digit strings without leading zero one
        expression per remainder (``pool.set_derivative``): state elimination writes the
        automaton as one expression whose derivatives differ by the digits read (149 for
        ``multipleOf: 12`` within three digits, each a new lexer state built in a mask), while
        the strings that may follow depend on the remainder only. One expression per remainder is
        found breadth first, by its shortest digits; the digits then lead from one to another."""
        pool = self.pool
        states: dict[int, int] = {}
        for d in range(1, 10):
            if d % modulus not in states:
                states[d % modulus] = pool.derivative(whole, 48 + d)
        queue = list(states)
        for r in queue:
            for d in range(10):
                s = (10 * r + d) % modulus
                if s not in states:
                    states[s] = pool.derivative(states[r], 48 + d)
                    queue.append(s)
        for r, e in states.items():
            for d in range(10):
                pool.set_derivative(e, 48 + d, states[(10 * r + d) % modulus])

    def multiples_of_power(self, exponent: int) -> int:
        if exponent >= 0:
            body = rf"0|[1-9][0-9]*0{{{exponent}}}"
            return self.with_zero_fraction(body)
        if self.integer:
            return parse_regex(JSON_INTEGER, self.pool)
        return parse_regex(rf"-?(0|[1-9][0-9]*)(\.[0-9]{{1,{-exponent}}}0*)?", self.pool)

    def multiples_of_small(self, unit: int, exponent: int) -> int:
        last = "02468" if unit == 2 else "05"
        body = rf"0|[1-9][0-9]*[{last}]0{{{exponent}}}|[{last[1:]}]0{{{exponent}}}"
        return self.with_zero_fraction(body)

    def with_zero_fraction(self, body: str) -> int:
        fraction = "" if self.integer else r"(\.0+)?"
        return parse_regex(rf"-?({body}){fraction}", self.pool)

    def enumerate_multiples(self, step: Decimal, lower: Bound, upper: Bound) -> int | None:
        with localcontext() as context:
            context.prec = 200
            first = (lower[0] / step).to_integral_value(rounding="ROUND_CEILING")
            last = (upper[0] / step).to_integral_value(rounding="ROUND_FLOOR")
            if last - first + 1 > MAX_ENUMERATED:
                return None
            values = [k * step for k in range(int(first), int(last) + 1)]
        values = [v for v in values if not (lower[1] and v == lower[0]) and not (upper[1] and v == upper[0])]
        if self.integer:
            values = [v for v in values if v == v.to_integral_value()]
        return self.pool.alt([self.written(v) for v in values])

    def written(self, value: Decimal) -> int:
        """Every way to write ``value`` without exponent (trailing fraction zeros allowed)."""
        whole, fraction = split_decimal(abs(value))
        if fraction:
            body = self.pool.concat_all([self.lit(whole), self.dot(self.lit(fraction)), self.pool.repeat(self.lit("0"), 0, INF)])
            if self.integer:
                body = EMPTY
        else:
            body = self.pool.concat(self.lit(whole), self.optional_dot(self.zeros(1)))
        if value == 0:
            return self.pool.alt([body, self.pool.concat(self.lit("-"), body)])
        return self.pool.concat(self.lit("-"), body) if value < 0 else body
