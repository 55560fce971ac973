"""JSON Schema numbers: the lexeme of one JSON number for a schema's numeric keywords.

Values are compared as exact decimals (the schema's floats through ``repr``, so ``0.1`` means 1/10).
The language is built from decimal digit strings, never from an automaton over values:

* a bound ``x >= B`` on a magnitude is "integer part greater than ``B``'s, any fraction" or "same
  integer part, fraction at least ``B``'s" (digit-prefix comparisons); negative numbers are ``-``
  and a magnitude in the mirrored range; the range is the intersection of both bounds;
* ``multipleOf`` is exact when the step is ``c / 10^t`` with ``c = 2^a 5^b``: then divisibility
  depends on the last few digits only, which are enumerated (at most ``MAX_MULTIPLE_TAILS``); an
  integer step may also have the factors 3, 9, 7, 11, checked by remainder automata written as
  expressions;
* exponent forms (``1e-05``) are allowed with no bound, or with bounds at zero only (the sign
  decides); with other bounds or ``multipleOf`` they are refused from the language (the same value
  written without an exponent is accepted).

``integer`` numbers are written without fraction or exponent (``1.0`` is refused, as
``json.dumps`` never writes an int that way).
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from ...errors import GrammarError
from ...regex.expr import EMPTY, EPSILON, ExprPool
from ...regex.syntax import parse_regex
from .context import SchemaContext

JSON_INTEGER = r"-?(0|[1-9][0-9]*)"
JSON_NUMBER = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"
EXPONENT = r"[eE][+-]?[0-9]+"

NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
MAX_MULTIPLE_TAILS = 1000

Bound = tuple[Decimal, bool]  # (value, strict)


def number_expr(ctx: SchemaContext, schema: dict, pointer: str, *, integer: bool) -> int:
    """The pool expression of every JSON number valid under ``schema``'s numeric keywords (only
    integers written without fraction or exponent when ``integer``)."""
    low, high = _bounds(schema, pointer)
    builder = _NumberBuilder(ctx, integer)
    parts = [builder.range_expr(low, high)]
    if "multipleOf" in schema:
        step = _decimal(schema["multipleOf"], f"{pointer}/multipleOf")
        if step <= 0:
            raise GrammarError("multipleOf must be greater than 0", pointer=f"{pointer}/multipleOf")
        multiple = builder.multiple_expr(step, f"{pointer}/multipleOf")
        if multiple is not None:
            parts.append(multiple)
    exponent_ok = not integer and len(parts) == 1 and _at_zero(low) and _at_zero(high)
    if exponent_ok:
        return builder.signed_exponent_expr(low, high)
    return ctx.pool.intersect(parts) if len(parts) > 1 else parts[0]


# ----- schema values --------------------------------------------------------------------------


def _decimal(value: object, pointer: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GrammarError(f"expected a number, got {value!r}", pointer=pointer)
    if isinstance(value, float) and not math.isfinite(value):
        raise GrammarError(f"expected a finite number, got {value!r}", pointer=pointer)
    try:
        return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except InvalidOperation as exc:  # pragma: no cover - repr of a finite float always parses
        raise GrammarError(f"expected a number, got {value!r}", pointer=pointer) from exc


def _bounds(schema: dict, pointer: str) -> tuple[Bound | None, Bound | None]:
    """The tightest lower and upper bound over the draft-4 (boolean) and draft-6 forms."""
    lows: list[Bound] = []
    highs: list[Bound] = []
    for keyword, exclusive, out in (("minimum", "exclusiveMinimum", lows), ("maximum", "exclusiveMaximum", highs)):
        flag = schema.get(exclusive)
        if isinstance(flag, bool):
            if keyword not in schema and flag:
                raise GrammarError(f"{exclusive}: true needs {keyword}", pointer=f"{pointer}/{exclusive}")
        elif exclusive in schema:
            out.append((_decimal(flag, f"{pointer}/{exclusive}"), True))
        if keyword in schema:
            out.append((_decimal(schema[keyword], f"{pointer}/{keyword}"), flag is True))
    low = max(lows, key=lambda b: (b[0], b[1])) if lows else None
    high = min(highs, key=lambda b: (b[0], not b[1])) if highs else None
    return low, high


def _at_zero(bound: Bound | None) -> bool:
    return bound is None or bound[0] == 0


def _digits(value: Decimal) -> tuple[str, str]:
    """Integer and fraction digits of a non-negative decimal (fraction without trailing zeros)."""
    text = f"{value:f}"
    whole, _, frac = text.partition(".")
    return whole.lstrip("0") or "0", frac.rstrip("0")


# ----- construction ---------------------------------------------------------------------------


class _NumberBuilder:
    def __init__(self, ctx: SchemaContext, integer: bool) -> None:
        self.ctx = ctx
        self.pool = ctx.pool
        self.integer = integer

    def rx(self, pattern: str) -> int:
        return parse_regex(pattern, self.pool)

    def lit(self, text: str) -> int:
        return self.pool.literal(text.encode())

    def digit_range(self, low: int, high: int) -> int:
        if low > high:
            return EMPTY
        return self.pool.byteset(sum(1 << (0x30 + d) for d in range(low, high + 1)))

    def any_fraction(self) -> int:
        """An optional fraction (or nothing for integers)."""
        return EPSILON if self.integer else self.rx(r"(\.[0-9]+)?")

    def zero_fraction(self) -> int:
        return EPSILON if self.integer else self.rx(r"(\.0+)?")

    def magnitude(self) -> int:
        return self.pool.concat(self.rx("0|[1-9][0-9]*"), self.any_fraction())

    # --- ranges ---

    def range_expr(self, low: Bound | None, high: Bound | None) -> int:
        """Numbers without exponent in the range (``None``: unbounded on that side)."""
        pool = self.pool
        zero = (Decimal(0), False)
        nonneg = [self.magnitude_at_least(zero if low is None or low[0] < 0 else low)]
        if high is not None:
            nonneg.append(self.magnitude_at_most(high) if high[0] >= 0 else EMPTY)
        negative = [self.magnitude_at_least(zero if high is None or high[0] > 0 else (-high[0], high[1]))]
        if low is not None:
            negative.append(self.magnitude_at_most((-low[0], low[1])) if low[0] <= 0 else EMPTY)
        return pool.alt([pool.intersect(nonneg), pool.concat(self.lit("-"), pool.intersect(negative))])

    def magnitude_at_least(self, bound: Bound) -> int:
        """Magnitudes ``>= value`` (``>`` when strict) of a non-negative bound."""
        value, strict = bound
        whole, frac = _digits(value)
        if value == 0 and not strict:
            return self.magnitude()
        pool = self.pool
        above = pool.concat(self.integer_above(whole), self.any_fraction())
        return pool.alt([above, pool.concat(self.lit(whole), self.fraction_at_least(frac, strict))])

    def magnitude_at_most(self, bound: Bound) -> int:
        value, strict = bound
        whole, frac = _digits(value)
        pool = self.pool
        below = pool.concat(self.integer_below(whole), self.any_fraction())
        return pool.alt([below, pool.concat(self.lit(whole), self.fraction_at_most(frac, strict))])

    def integer_above(self, whole: str) -> int:
        """Canonical integers (no leading zero) greater than ``whole``."""
        pool = self.pool
        n = len(whole)
        branches = [pool.concat(self.rx("[1-9]"), pool.repeat(self.digit_range(0, 9), n, -1))]
        for k in range(n):
            digit = int(whole[k])
            rest = pool.repeat(self.digit_range(0, 9), n - k - 1, n - k - 1)
            branches.append(pool.concat_all([self.lit(whole[:k]), self.digit_range(digit + 1, 9), rest]))
        return pool.alt(branches)

    def integer_below(self, whole: str) -> int:
        """Canonical integers less than ``whole``."""
        pool = self.pool
        n = len(whole)
        if n == 1:
            return self.digit_range(0, int(whole) - 1)
        branches = [self.rx("0"), pool.concat(self.rx("[1-9]"), pool.repeat(self.digit_range(0, 9), 0, n - 2))]
        for k in range(n):
            first = 1 if k == 0 else 0
            rest = pool.repeat(self.digit_range(0, 9), n - k - 1, n - k - 1)
            branches.append(pool.concat_all([self.lit(whole[:k]), self.digit_range(first, int(whole[k]) - 1), rest]))
        return pool.alt(branches)

    def fraction_at_least(self, frac: str, strict: bool) -> int:
        """Optional fractions ``.f`` with ``0.f >= 0.frac`` (``>`` when strict)."""
        pool = self.pool
        if self.integer:
            return EPSILON if not frac and not strict else EMPTY
        if not frac:
            return self.rx(r"\.[0-9]*[1-9][0-9]*") if strict else self.any_fraction()
        tail = self.rx("[0-9]*[1-9][0-9]*" if strict else "[0-9]*")
        branches = [pool.concat(self.lit(frac), tail)]
        for k in range(len(frac)):
            branches.append(pool.concat_all([self.lit(frac[:k]), self.digit_range(int(frac[k]) + 1, 9),
                                             self.rx("[0-9]*")]))
        return pool.concat(self.lit("."), pool.alt(branches))

    def fraction_at_most(self, frac: str, strict: bool) -> int:
        """Optional fractions ``.f`` with ``0.f <= 0.frac`` (``<`` when strict)."""
        pool = self.pool
        if not frac:
            return EMPTY if strict else self.zero_fraction()
        if self.integer:
            return EPSILON
        branches = [] if strict else [pool.concat(self.lit(frac), self.rx("0*"))]
        for k in range(len(frac)):
            if k:
                branches.append(self.lit(frac[:k]))
            branches.append(pool.concat_all([self.lit(frac[:k]), self.digit_range(0, int(frac[k]) - 1),
                                             self.rx("[0-9]*")]))
        return pool.alt([EPSILON, pool.concat(self.lit("."), pool.alt(branches))])

    # --- exponents ---

    def signed_exponent_expr(self, low: Bound | None, high: Bound | None) -> int:
        """Numbers with optional exponent whose bounds are all at zero: the sign decides."""
        pool = self.pool
        exponent = pool.alt([EPSILON, self.rx(EXPONENT)])
        zero = pool.concat(self.rx(r"0(\.0+)?"), exponent)
        nonzero = pool.concat(self.rx(r"[1-9][0-9]*(\.[0-9]+)?|0\.0*[1-9][0-9]*"), exponent)
        allow_zero = (low is None or not low[1]) and (high is None or not high[1])
        signs = [pool.alt([EPSILON, self.lit("-")])] if allow_zero else []
        branches = [pool.concat(signs[0], zero)] if signs else []
        if high is None:
            branches.append(nonzero)
        if low is None:
            branches.append(pool.concat(self.lit("-"), nonzero))
        return pool.alt(branches)

    # --- multipleOf ---

    def multiple_expr(self, step: Decimal, pointer: str) -> int | None:
        """Numbers without exponent that are integer multiples of ``step``; None when refused."""
        ratio = Fraction(step)
        if self.integer:
            ratio = Fraction(ratio.numerator)
        scale = 0
        while (ratio * 10**scale).denominator != 1:
            scale += 1
        factor = int(ratio * 10**scale)
        twos, fives, rest = _two_five(factor)
        decimal_part = factor // rest
        width = max(twos, fives, scale)
        coprime = _coprime_factors(rest)
        too_many_tails = decimal_part != 1 and 10**width // decimal_part > MAX_MULTIPLE_TAILS
        if coprime is None or (rest != 1 and scale) or too_many_tails:
            self.ctx.unsupported("multipleOf", pointer,
                                 "only steps c/10^t with c a divisor of a small power of ten (1, 2, 5, 25, "
                                 "0.5, 0.01, ...), and integer steps whose other prime powers are 3, 7, 9 "
                                 "or 11 (3, 6, 12, 21, 33, 77, ...) are enforced exactly")
            return None
        if decimal_part == 1:
            body = self.pool.concat(self.rx("0|[1-9][0-9]*"), self.short_fraction(scale))
        else:
            body = self.multiple_tails(decimal_part, width, scale)
        if coprime:
            whole = self.pool.intersect([self.rx("0|[1-9][0-9]*")] + [_divisible_digits(self.pool, c) for c in coprime])
            body = self.pool.intersect([body, self.pool.concat(whole, self.zero_fraction())])
        return self.pool.concat(self.rx("-?"), body)

    def short_fraction(self, scale: int) -> int:
        """Fractions whose digits after position ``scale`` are zeros."""
        if self.integer or scale == 0:
            return self.zero_fraction()
        return self.rx(rf"(\.[0-9]{{1,{scale}}}0*)?")

    def multiple_tails(self, factor: int, width: int, scale: int) -> int:
        """Magnitudes whose last ``width`` digits (integer digits, then ``scale`` fraction digits)
        form a multiple of ``factor``."""
        pool = self.pool
        by_whole: dict[str, list[int]] = {}
        for tail in range(0, 10**width, factor):
            text = str(tail).zfill(width)
            whole, frac = text[: width - scale], text[width - scale :]
            by_whole.setdefault(whole, []).append(self.fraction_exactly(frac))
        branches = []
        for whole, fracs in by_whole.items():
            branches.append(pool.concat(self.integer_ending(whole), pool.alt(fracs)))
        return pool.alt(branches)

    def fraction_exactly(self, frac: str) -> int:
        """Optional fractions equal to ``0.frac`` (trailing zeros free)."""
        digits = frac.rstrip("0")
        if not digits:
            return self.zero_fraction()
        if self.integer:
            return EMPTY
        return self.pool.concat(self.lit("." + digits), self.rx("0*"))

    def integer_ending(self, tail: str) -> int:
        """Canonical integers whose last ``len(tail)`` digits, zero-padded, are ``tail``."""
        pool = self.pool
        if not tail:
            return self.rx("0|[1-9][0-9]*")
        longer = pool.concat(self.rx("[1-9][0-9]*"), self.lit(tail))
        return pool.alt([longer, self.lit(str(int(tail)))])


def _coprime_factors(n: int) -> list[int] | None:
    """``n`` (prime to 10) as coprime factors among 9, 3, 7, 11; None when it has another."""
    out = []
    for modulus in (9, 3, 7, 11):
        if n % modulus == 0 and not any(m % modulus == 0 for m in out):
            out.append(modulus)
            n //= modulus
    return out if n == 1 else None


def _divisible_digits(pool: ExprPool, modulus: int) -> int:
    """Digit strings whose value is divisible by ``modulus``: the remainder automaton (state ``r``
    goes to ``10 r + d``) turned into an expression by state elimination (hash-consing keeps it
    polynomial; its lazy DFA has up to about ``2^modulus`` derivatives, hence the small moduli)."""
    table = [[EMPTY] * modulus for _ in range(modulus)]
    for state in range(modulus):
        for digit in range(10):
            target = (10 * state + digit) % modulus
            table[state][target] = pool.alt([table[state][target], pool.byteset(1 << (0x30 + digit))])
    for gone in range(modulus - 1, 0, -1):
        loop = pool.star(table[gone][gone])
        for i in range(gone):
            if table[i][gone] == EMPTY:
                continue
            head = pool.concat(table[i][gone], loop)
            for j in range(gone):
                if table[gone][j] != EMPTY:
                    table[i][j] = pool.alt([table[i][j], pool.concat(head, table[gone][j])])
    return pool.star(table[0][0])


def _two_five(n: int) -> tuple[int, int, int]:
    twos = fives = 0
    while n % 2 == 0:
        n //= 2
        twos += 1
    while n % 5 == 0:
        n //= 5
        fives += 1
    return twos, fives, n
