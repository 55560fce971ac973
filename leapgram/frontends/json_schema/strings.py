"""JSON Schema strings: the lexeme of one JSON string value (quotes included) for a schema.

``minLength``/``maxLength`` (code points), ``pattern`` (ECMA-262, unanchored) and ``format`` are
constraints on the *decoded* value. Each becomes a UTF-8 expression over the decoded value; their
intersection is then encoded (:func:`encode_json_body`) into the JSON text between the quotes.

The encoding substitutes every byte of the decoded language by the ways JSON can write it: raw for
an ordinary byte (all of a multi-byte UTF-8 sequence is ordinary), ``\\"`` ``\\\\`` ``\\n``... or
``\\u00XX`` for ``"``, ``\\`` and the controls, raw or ``\\/`` for ``/``. The encodings form a prefix
code with one decoding, so the substitution commutes with concatenation, union, repetition and
intersection, and lengths and patterns keep counting decoded characters. A constrained string
does not accept ``\\uXXXX`` for other characters (the character itself is written instead).
"""

from __future__ import annotations

from ...errors import GrammarError, UnsupportedError
from ...regex.expr import EMPTY, INF, K_AND, K_BYTES, K_CONCAT, K_NOT, K_OR, K_REPEAT, ExprPool
from ...regex.syntax import parse_regex
from .context import SchemaContext
from .ecma import any_char, pattern_expr
from .formats import format_expr
from .lengths import with_length

# One JSON string, quotes included: unescaped characters other than controls, or an escape.
JSON_STRING = r'"([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'

SHORT_ESCAPES = {0x22: b'\\"', 0x5C: b"\\\\", 0x08: b"\\b", 0x0C: b"\\f", 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t"}
ESCAPED_BYTES = sum(1 << b for b in range(0x20)) | (1 << 0x22) | (1 << 0x5C)
SLASH = 0x2F
STRING_KEYWORDS = ("minLength", "maxLength", "pattern", "format")


def string_expr(ctx: SchemaContext, schema: dict, pointer: str) -> int:
    """The pool expression of every JSON string (with its quotes) valid under ``schema``'s string
    keywords; other keywords of ``schema`` are ignored here."""
    pool = ctx.pool
    length = _length_range(schema, pointer)
    parts = [part for part in (_pattern_part(ctx, schema, pointer), _format_part(ctx, schema, pointer))
             if part is not None]
    if not parts and length is None:
        return parse_regex(JSON_STRING, pool)
    if length is not None and length[1] != INF and length[1] < length[0]:
        decoded = EMPTY  # no string fits
    elif not parts:
        decoded = pool.repeat(any_char(pool), *length)
    else:
        decoded = pool.intersect(parts)
        if length is not None:
            decoded = with_length(pool, decoded, *length)
    quote = pool.literal(b'"')
    return pool.concat_all([quote, encode_json_body(pool, decoded), quote])


# ----- keywords -------------------------------------------------------------------------------


def _length_range(schema: dict, pointer: str) -> tuple[int, int] | None:
    low = _count(schema, "minLength", pointer)
    high = _count(schema, "maxLength", pointer)
    if low is None and high is None:
        return None
    return low or 0, INF if high is None else high


def _count(schema: dict, keyword: str, pointer: str) -> int | None:
    if keyword not in schema:
        return None
    value = schema[keyword]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < 0:
        raise GrammarError(f"{keyword} must be a non-negative integer, got {value!r}", pointer=f"{pointer}/{keyword}")
    return int(value)


def _pattern_part(ctx: SchemaContext, schema: dict, pointer: str) -> int | None:
    if "pattern" not in schema:
        return None
    pattern = schema["pattern"]
    where = f"{pointer}/pattern"
    if not isinstance(pattern, str):
        raise GrammarError(f"pattern must be a string, got {pattern!r}", pointer=where)
    try:
        expr = pattern_expr(pattern, ctx.pool)
    except UnsupportedError as exc:
        if ctx.lenient:
            ctx.unsupported("pattern", where, exc.message)
            return None
        raise UnsupportedError(exc.feature, f"unsupported JSON Schema keyword 'pattern': {exc.message}",
                               source=pattern, offset=_offset(pattern, exc), pointer=where) from exc
    except GrammarError as exc:
        raise GrammarError(exc.message, source=pattern, offset=_offset(pattern, exc), pointer=where) from exc
    if expr == EMPTY:
        ctx.warnings.append(f"{where}: pattern {pattern!r} can never match (an anchor where no string edge is)")
    return expr


def _offset(source: str, exc: GrammarError) -> int | None:
    if exc.line is None or exc.column is None:
        return None
    lines = source.split("\n")
    return sum(len(line) + 1 for line in lines[: exc.line - 1]) + exc.column - 1


def _format_part(ctx: SchemaContext, schema: dict, pointer: str) -> int | None:
    if "format" not in schema:
        return None
    name = schema["format"]
    if not isinstance(name, str):
        raise GrammarError(f"format must be a string, got {name!r}", pointer=f"{pointer}/format")
    return format_expr(ctx, name, f"{pointer}/format")


# ----- encoding -------------------------------------------------------------------------------


def encode_json_body(pool: ExprPool, decoded: int) -> int:
    """The JSON string bodies (between the quotes) whose decoded UTF-8 value is in ``decoded``."""
    return _Encoder(pool).encode(decoded)


class _Encoder:
    def __init__(self, pool: ExprPool) -> None:
        self.pool = pool
        self.done: dict[int, int] = {}
        self.byte_cache: dict[int, int] = {}

    def encode(self, root: int) -> int:
        pool = self.pool
        stack = [root]
        while stack:
            e = stack[-1]
            if e in self.done:
                stack.pop()
                continue
            kind = pool.kind[e]
            children = [c for c in self.children(e) if c not in self.done]
            if children:
                stack.extend(children)
                continue
            stack.pop()
            self.done[e] = self.rebuild(e, kind)
        return self.done[root]

    def children(self, e: int) -> tuple[int, ...]:
        kind = self.pool.kind[e]
        args = self.pool.args[e]
        if kind in (K_CONCAT, K_OR, K_AND):
            return args
        if kind in (K_NOT, K_REPEAT):
            return (args[0],)
        return ()

    def rebuild(self, e: int, kind: int) -> int:
        pool = self.pool
        args = pool.args[e]
        done = self.done
        if kind == K_BYTES:
            return self.encode_bytes(args[0])
        if kind == K_CONCAT:
            return pool.concat(done[args[0]], done[args[1]])
        if kind == K_OR:
            return pool.alt([done[x] for x in args])
        if kind == K_AND:
            return pool.intersect([done[x] for x in args])
        if kind == K_NOT:
            valid = pool.star(self.encode(any_char(pool)))
            return pool.intersect([valid, pool.complement(done[args[0]])])
        if kind == K_REPEAT:
            return pool.repeat(done[args[0]], args[1], args[2])
        return e  # ∅ and ε encode to themselves

    def encode_bytes(self, mask: int) -> int:
        found = self.byte_cache.get(mask)
        if found is None:
            pool = self.pool
            branches = [pool.byteset(mask & ~ESCAPED_BYTES)]
            for byte in range(0x60):
                if (mask >> byte) & 1 and ((ESCAPED_BYTES >> byte) & 1 or byte == SLASH):
                    branches.append(self.escapes(byte))
            found = pool.alt(branches)
            self.byte_cache[mask] = found
        return found

    def escapes(self, byte: int) -> int:
        pool = self.pool
        if byte == SLASH:
            return pool.literal(b"\\/")
        forms = [pool.literal(SHORT_ESCAPES[byte])] if byte in SHORT_ESCAPES else []
        high, low = f"{byte:02x}"
        forms.append(pool.concat_all([pool.literal(b"\\u00"), _hex_digit(pool, high), _hex_digit(pool, low)]))
        return pool.alt(forms)


def _hex_digit(pool: ExprPool, digit: str) -> int:
    return pool.byteset(sum(1 << ord(c) for c in {digit, digit.upper()}))
