"""JSON Schema strings: the lexeme of one JSON string value (quotes included) for a schema.

The keywords constrain the decoded value and the lexeme matches JSON text: the value is an
expression over the UTF-8 of its code points (``pattern`` ∩ lengths ∩ ``format``), which
:func:`json_encoded` maps node by node to every JSON spelling ``json.dumps`` writes (with or
without ``ensure_ascii``). Why the map is exact: docs/design/json-schema-values.md.
"""

from __future__ import annotations

import functools
import re

from ...errors import GrammarError
from ...regex.expr import (
    ALL_BYTES,
    EMPTY,
    EPSILON,
    INF,
    K_AND,
    K_BYTES,
    K_CONCAT,
    K_NOT,
    K_OR,
    K_REPEAT,
    ExprPool,
)
from ...regex.syntax import parse_regex
from ...regex.utf8 import MAX_CODE_POINT, normalize, ranges_to_expr
from .context import SchemaContext
from .ecma import ecma_pattern_expr
from .formats import format_expr
from .lengths import within_length

# One JSON string, quotes included: unescaped characters other than controls, or an escape.
JSON_STRING = r'"([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'

STRING_KEYWORDS = ("minLength", "maxLength", "pattern", "format", "contentEncoding", "contentMediaType")
SHORT_ESCAPES = {0x22: b'\\"', 0x5C: b"\\\\", 0x2F: b"\\/", 0x08: b"\\b", 0x0C: b"\\f",
                 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t"}
RAW_BYTES = ALL_BYTES & ~((1 << 0x20) - 1) & ~(1 << 0x22) & ~(1 << 0x5C)
MAX_COUNTED_LENGTH = 256
ESCAPED_PRINTABLE = frozenset(b'"\\/')  # printable ASCII written (also) as an escape: \" \\ \/
_ONE_SPELLING = re.compile(rb'[\x20\x21\x23-\x2e\x30-\x5b\x5d-\x7e]*')  # 0x20-0x7E but ESCAPED_PRINTABLE
HEX_DIGIT_BITS = tuple((1 << ord(f"{v:x}")) | (1 << ord(f"{v:X}")) for v in range(16))


def string_expr(ctx: SchemaContext, schema: dict, pointer: str) -> int:
    """The pool expression of every JSON string (with its quotes) valid under ``schema``'s string
    keywords; other keywords of ``schema`` are ignored here."""
    pool = ctx.pool
    parts = []
    low = length_of(schema, "minLength", pointer, 0)
    high = length_of(schema, "maxLength", pointer, INF)
    if high != INF and high < low:
        return EMPTY
    if "pattern" in schema:
        parts.append(pattern_value(ctx, schema["pattern"], f"{pointer}/pattern"))
    if "format" in schema:
        found = format_expr(ctx, schema["format"], f"{pointer}/format")
        if found is not None:
            parts.append(found)
    for keyword in ("contentEncoding", "contentMediaType"):
        if keyword in schema:
            ctx.warnings.append(f"{pointer}/{keyword}: annotation only, not enforced")
    if not parts and low == 0 and high == INF:
        return parse_regex(JSON_STRING, pool)
    return encoded_string(pool, value_expr(ctx, parts, low, high, pointer))


def encoded_string(pool: ExprPool, value: int) -> int:
    """The JSON strings, quotes included, whose decoded value is in ``value``, in the spellings
    :func:`json_encoded` offers."""
    quote = pool.literal(b'"')
    return pool.concat_all([quote, json_encoded(pool, value), quote])


def string_universe(pool: ExprPool) -> int:
    """Every JSON string in the spellings the string lexemes offer: the universe for complements
    and differences of strings. ``JSON_STRING`` also accepts spellings they never offer (``"\\u0061"``
    for ``"a"``), which a difference from it would let through whatever the value."""
    return pool.remembered(("string_universe",), lambda: encoded_string(pool, any_value(pool)))  # in the base pool


def literal_string(pool: ExprPool, text: str) -> int:
    """Every offered spelling of the JSON string ``text`` (``json.dumps``'s among them)."""
    found = literal_text(text)
    if found is not None:  # the node the encoder would build, without building it
        return pool.literal(found)
    return encoded_string(pool, pool.literal(text.encode("utf-8", "surrogatepass")))


def literal_text(text: str) -> bytes | None:
    """The one offered spelling of the JSON string ``text``, quotes included, when it has one
    (most names: printable ASCII but ``ESCAPED_PRINTABLE``); else ``None``."""
    data = text.encode("utf-8", "surrogatepass")
    return b'"' + data + b'"' if _ONE_SPELLING.fullmatch(data) else None


def value_expr(ctx: SchemaContext, parts: list[int], low: int, high: int, pointer: str) -> int:
    """The intersection of ``parts`` and the length limits, with the limits moved into the
    expression when it allows (:func:`.lengths.within_length`)."""
    pool = ctx.pool
    if low == 0 and high == INF:
        return pool.intersect(parts)
    if not parts:
        return length_value(ctx, low, high, pointer)
    if len(parts) == 1:
        found = within_length(pool, parts[0], low, high)
        if found is not None:
            return found
    if max(low, high) > MAX_COUNTED_LENGTH:
        keyword = "maxLength" if high > MAX_COUNTED_LENGTH else "minLength"
        ctx.unsupported(keyword, f"{pointer}/{keyword}",
                        f"a length above {MAX_COUNTED_LENGTH} together with this pattern or format "
                        "would need a DFA state per counted character")
        return pool.intersect(parts)
    return pool.intersect(parts + [length_value(ctx, low, high, pointer)])


def length_of(schema: dict, keyword: str, pointer: str, default: int) -> int:
    if keyword not in schema:
        return default
    value = schema[keyword]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise GrammarError(f"{keyword} must be a non-negative integer, got {value!r}",
                           pointer=f"{pointer}/{keyword}")
    return value


def any_char(pool: ExprPool) -> int:
    return ranges_to_expr(pool, normalize([(0, MAX_CODE_POINT)]))


def any_value(pool: ExprPool) -> int:
    return pool.repeat(any_char(pool), 0, INF)


def length_value(ctx: SchemaContext, low: int, high: int, pointer: str) -> int:
    """Any ``low..high`` code points. Large bounds cost nothing until a long string is written:
    the DFA then has a few states per counted character, within ``Limits.max_dfa_states``."""
    return ctx.pool.repeat(any_char(ctx.pool), low, high)


def pattern_value(ctx: SchemaContext, pattern: object, pointer: str) -> int:
    if not isinstance(pattern, str):
        raise GrammarError(f"pattern must be a string, got {pattern!r}", pointer=pointer)
    try:
        return ecma_pattern_expr(pattern, ctx.pool)
    except GrammarError as error:
        error.pointer = pointer
        error.args = (error._render(),)
        if hasattr(error, "feature"):
            ctx.unsupported("pattern", pointer, str(error))
            return any_value(ctx.pool)
        raise


def json_encoded(pool: ExprPool, value: int) -> int:
    """The JSON string bodies (no quotes) whose decoded UTF-8 is in ``value``."""
    return _Encoder(pool).encode(value)


class _Encoder:
    def __init__(self, pool: ExprPool) -> None:
        self.pool = pool
        self.any_body: int | None = None

    def encode(self, e: int) -> int:
        """Remembered in ``pool.memo``, so the spellings of any character are built once per
        pool (and its copies: :mod:`.common`)."""
        return self.pool.remembered(("json_encoded", e), lambda: self._encode(e))

    def _encode(self, e: int) -> int:
        pool = self.pool
        kind, args = pool.kind[e], pool.args[e]
        if kind == K_BYTES:
            return self.encode_bytes(args[0])
        if kind == K_CONCAT:
            items = []
            while pool.kind[e] == K_CONCAT:
                head, e = pool.args[e]
                items.append(head)
            return pool.concat_all(self.encode_chain(items + [e]))
        if kind == K_OR:
            found = pool.alt([self.encode(x) for x in args])
            if pool.count_bound_known(e) == 0:  # a wide class (regex.utf8._seed_facts): no repeat in its spellings
                pool.set_count_bound(found, 0)
                pool.is_finite(found)  # its longest spelling, found here rather than in a mask (~3 ms for \p{L})
            return found
        if kind == K_AND:
            return pool.intersect([self.encode(x) for x in args])
        if kind == K_NOT:
            return pool.difference(self.everything(), self.encode(args[0]))
        if kind == K_REPEAT:
            inner, low, high = args
            return pool.repeat(self.encode(inner), low, high)
        return e

    def everything(self) -> int:
        if self.any_body is None:
            self.any_body = self.pool.repeat(self.encode(any_char(self.pool)), 0, INF)
        return self.any_body

    def encode_chain(self, items: list[int]) -> list[int]:
        """Encode a concatenation, taking each multi-byte character (a lead byte class followed
        by its continuation classes) as one unit, so it can also be written ``\\uXXXX``."""
        out = []
        i = 0
        while i < len(items):
            span = self.character_at(items, i)
            if span is None:
                out.append(self.encode(items[i]))
                i += 1
                continue
            width, low, high = span
            raw = self.pool.concat_all(items[i : i + width])
            out.append(self.pool.alt([raw, unicode_escapes(self.pool, low, high)]))
            i += width
        return out

    def character_at(self, items: list[int], i: int) -> tuple[int, int, int] | None:
        """(bytes, first, last code point) when ``items[i:]`` starts with byte classes that
        spell exactly the code points first..last; else None."""
        ranges = []
        for offset in range(4):
            if i + offset >= len(items) or self.pool.kind[items[i + offset]] != K_BYTES:
                return None
            found = contiguous(self.pool.args[items[i + offset]][0])
            if found is None:
                return None
            ranges.append(found)
            width = utf8_width(ranges[0][0])
            if width is None or utf8_width(ranges[0][1]) != width:
                return None
            if len(ranges) == width:
                break
        if width < 2 or any(not 0x80 <= a <= b <= 0xBF for a, b in ranges[1:]):
            return None
        try:
            low = ord(bytes(a for a, _ in ranges).decode("utf-8"))
            high = ord(bytes(b for _, b in ranges).decode("utf-8"))
        except UnicodeDecodeError:
            return None
        size = 1
        for a, b in ranges:
            size *= b - a + 1
        return (width, low, high) if size == high - low + 1 else None

    def encode_bytes(self, mask: int) -> int:
        return self.pool.remembered(("json_bytes", mask), lambda: self._encode_bytes(mask))

    def _encode_bytes(self, mask: int) -> int:
        """An ASCII byte as ``json.dumps`` writes it: raw where JSON allows, else its short
        escape, else ``\\u00XX`` (controls; DEL both ways); ``/`` also as ``\\/``, as PHP writes it."""
        pool = self.pool
        branches = [pool.byteset(mask & RAW_BYTES)]
        for byte, text in SHORT_ESCAPES.items():
            if (mask >> byte) & 1 and (byte == 0x2F or not (RAW_BYTES >> byte) & 1):
                branches.append(pool.literal(text))
        unicode = []
        # controls without a short escape, and DEL, which ensure_ascii writes as \u007f
        escaped = mask & (((1 << 0x20) - 1) | 1 << 0x7F) & ~sum(1 << b for b in SHORT_ESCAPES)
        for high_nibble in range(8):
            lows = (escaped >> (16 * high_nibble)) & 0xFFFF
            if lows:
                unicode.append(pool.concat(pool.literal(b"%x" % high_nibble), hex_digits(pool, lows)))
        if unicode:
            branches.append(pool.concat(pool.literal(b"\\u00"), pool.alt(unicode)))
        return pool.alt(branches)


def hex_digits(pool: ExprPool, nibbles: int) -> int:
    """One hex digit (either case) of a value in ``nibbles`` (a 16-bit set)."""
    return pool.byteset(hex_digit_mask(nibbles))


@functools.lru_cache(maxsize=1 << 16)
def hex_digit_mask(nibbles: int) -> int:
    mask = 0
    for value in range(16):
        if (nibbles >> value) & 1:
            mask |= HEX_DIGIT_BITS[value]
    return mask


def contiguous(mask: int) -> tuple[int, int] | None:
    """(first, last) byte of a byte class that is one interval; None otherwise."""
    low = (mask & -mask).bit_length() - 1
    high = mask.bit_length() - 1
    return (low, high) if mask >> low == (1 << (high - low + 1)) - 1 else None


def utf8_width(lead: int) -> int | None:
    for width, (low, high) in enumerate(((0x00, 0x7F), (0xC2, 0xDF), (0xE0, 0xEF), (0xF0, 0xF4)), 1):
        if low <= lead <= high:
            return width
    return None


def unicode_escapes(pool: ExprPool, low: int, high: int) -> int:
    """``\\uXXXX`` spellings (any hex case) of the code points low..high; astral ones as
    surrogate pairs."""
    branches = []
    if low <= 0xFFFF:
        branches.append(pool.concat(pool.literal(b"\\u"), hex_range(pool, low, min(high, 0xFFFF), 4)))
    if high > 0xFFFF:
        for tops, lows in surrogate_blocks(max(low, 0x10000) - 0x10000, high - 0x10000):
            branches.append(pool.concat_all([
                pool.literal(b"\\u"), hex_range(pool, 0xD800 + tops[0], 0xD800 + tops[1], 4),
                pool.literal(b"\\u"), hex_range(pool, 0xDC00 + lows[0], 0xDC00 + lows[1], 4)]))
    return pool.alt(branches)


def surrogate_blocks(first: int, last: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The offsets ``first..last`` (code point minus 0x10000) as at most three blocks of
    (high surrogate offsets, low surrogate offsets): a partial first and last high surrogate
    around the run of high surrogates whose low halves are all allowed (one branch, not 1,024)."""
    top_first, top_last = first >> 10, last >> 10
    if top_first == top_last:
        return [((top_first, top_first), (first & 0x3FF, last & 0x3FF))]
    blocks = []
    if first & 0x3FF:
        blocks.append(((top_first, top_first), (first & 0x3FF, 0x3FF)))
        top_first += 1
    tail = None
    if last & 0x3FF != 0x3FF:
        tail = ((top_last, top_last), (0, last & 0x3FF))
        top_last -= 1
    if top_first <= top_last:
        blocks.append(((top_first, top_last), (0, 0x3FF)))
    if tail is not None:
        blocks.append(tail)
    return blocks


def hex_range(pool: ExprPool, low: int, high: int, width: int) -> int:
    """Every ``width``-digit hex spelling (either case) of the numbers low..high."""
    if width == 0:
        return EPSILON
    shift = 4 * (width - 1)
    full = (1 << shift) - 1
    top_low, top_high = low >> shift, high >> shift
    if top_low == top_high:
        return pool.concat(hex_digits(pool, 1 << top_low), hex_range(pool, low & full, high & full, width - 1))
    branches = []
    if low & full:
        branches.append(pool.concat(hex_digits(pool, 1 << top_low), hex_range(pool, low & full, full, width - 1)))
        top_low += 1
    if high & full != full:
        branches.append(pool.concat(hex_digits(pool, 1 << top_high), hex_range(pool, 0, high & full, width - 1)))
        top_high -= 1
    if top_low <= top_high:
        middle = sum(1 << d for d in range(top_low, top_high + 1))
        branches.append(pool.concat(hex_digits(pool, middle), hex_range(pool, 0, full, width - 1)))
    return pool.alt(branches)
