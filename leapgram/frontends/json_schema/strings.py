"""JSON Schema strings: the lexeme of one JSON string value (quotes included) for a schema.

The keywords constrain the *decoded* value, the lexeme matches the JSON *text*. So the value is
described first, as an expression over the UTF-8 of its code points: ``pattern`` (ECMA-262,
unanchored, :mod:`.ecma`) ∩ ``minLength``/``maxLength`` (counted in code points) ∩ ``format``
(:mod:`.formats`). Then :func:`json_encoded` maps that expression, node by node, to the JSON
text of the same values: each ASCII byte becomes the alternatives of its spellings (raw where
JSON allows it, ``\\"`` ``\\\\`` ``\\/`` ``\\b\\f\\n\\r\\t``, ``\\u00XX`` in any hex case),
bytes of multi-byte characters stay raw. The spellings form a prefix code, so the map commutes
with concatenation, union, repetition and intersection, and ``~A`` maps to ``~h(A) ∩ h(any)``:
lengths and patterns keep counting decoded characters.

Not generated: ``\\uXXXX`` for non-ASCII characters (and surrogate pairs); ``json.dumps(...,
ensure_ascii=False)`` writes those raw.
"""

from __future__ import annotations

from ...errors import GrammarError
from ...regex.expr import ALL_BYTES, EMPTY, INF, K_AND, K_BYTES, K_CONCAT, K_NOT, K_OR, K_REPEAT, ExprPool
from ...regex.syntax import parse_regex
from ...regex.utf8 import MAX_CODE_POINT, ranges_to_expr
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
    value = value_expr(ctx, parts, low, high, pointer)
    quote = pool.literal(b'"')
    return pool.concat_all([quote, json_encoded(pool, value), quote])



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
    return ranges_to_expr(pool, ((0, MAX_CODE_POINT),))


def any_value(pool: ExprPool) -> int:
    return pool.repeat(any_char(pool), 0, INF)


def length_value(ctx: SchemaContext, low: int, high: int, pointer: str) -> int:
    pool = ctx.pool
    limit = pool.limits.max_repeat
    if low > limit:
        ctx.unsupported("minLength", f"{pointer}/minLength", f"lengths above Limits.max_repeat={limit}")
        low = 0
    if high != INF and high > limit:
        ctx.unsupported("maxLength", f"{pointer}/maxLength", f"lengths above Limits.max_repeat={limit}")
        high = INF
    return pool.repeat(any_char(pool), low, high)


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
        self.memo: dict[int, int] = {}
        self.any_body: int | None = None

    def encode(self, e: int) -> int:
        found = self.memo.get(e)
        if found is None:
            found = self._encode(e)
            self.memo[e] = found
        return found

    def _encode(self, e: int) -> int:
        pool = self.pool
        kind, args = pool.kind[e], pool.args[e]
        if kind == K_BYTES:
            return self.encode_bytes(args[0])
        if kind == K_CONCAT:
            items = []
            while pool.kind[e] == K_CONCAT:
                head, e = pool.args[e]
                items.append(self.encode(head))
            return pool.concat_all(items + [self.encode(e)])
        if kind == K_OR:
            return pool.alt([self.encode(x) for x in args])
        if kind == K_AND:
            return pool.intersect([self.encode(x) for x in args])
        if kind == K_NOT:
            return pool.intersect([pool.complement(self.encode(args[0])), self.everything()])
        if kind == K_REPEAT:
            inner, low, high = args
            return pool.repeat(self.encode(inner), low, high)
        return e

    def everything(self) -> int:
        if self.any_body is None:
            self.any_body = self.pool.repeat(self.encode_bytes(ALL_BYTES), 0, INF)
        return self.any_body

    def encode_bytes(self, mask: int) -> int:
        pool = self.pool
        branches = [pool.byteset(mask & RAW_BYTES)]
        for byte, text in SHORT_ESCAPES.items():
            if (mask >> byte) & 1:
                branches.append(pool.literal(text))
        unicode = []
        for high_nibble in range(8):
            lows = (mask >> (16 * high_nibble)) & 0xFFFF
            if lows:
                unicode.append(pool.concat(pool.literal(b"%x" % high_nibble), hex_digits(pool, lows)))
        if unicode:
            branches.append(pool.concat(pool.literal(b"\\u00"), pool.alt(unicode)))
        return pool.alt(branches)


def hex_digits(pool: ExprPool, nibbles: int) -> int:
    mask = 0
    for value in range(16):
        if (nibbles >> value) & 1:
            for char in {f"{value:x}", f"{value:X}"}:
                mask |= 1 << ord(char)
    return pool.byteset(mask)

