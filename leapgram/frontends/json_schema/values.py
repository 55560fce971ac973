"""``enum`` and ``const``: grammars for given JSON values, and JSON Schema's value equality."""

from __future__ import annotations

import json
import math

from .whitespace import Spacing


def json_type(value: object) -> str:
    """The JSON Schema type of a Python JSON value (``integer`` for integral numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value) and value.is_integer()):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise TypeError(f"not a JSON value: {value!r}")


def canonical(value: object) -> object:
    """A hashable key under which JSON-equal values (``1`` and ``1.0``; objects in any key order)
    are equal and ``true`` differs from ``1``."""
    kind = json_type(value)
    if kind == "integer":
        return ("n", int(value))
    if kind == "number":
        return ("n", value)
    if kind == "array":
        return ("a", tuple(canonical(v) for v in value))
    if kind == "object":
        return ("o", frozenset((k, canonical(v)) for k, v in value.items()))
    return (kind, value)


def number_spellings(value: float) -> list[str]:
    """How ``json.dumps`` may write a number equal to ``value`` (``1`` and ``1.0``)."""
    if json_type(value) == "integer":
        whole = int(value)
        return [str(whole), f"{whole}.0"]
    return [json.dumps(value)]


class ValueGrammar:
    """Symbols matching exactly one given JSON value, whitespace allowed as in any JSON value."""

    def __init__(self, spacing: Spacing) -> None:
        self.spacing = spacing
        self.builder = spacing.builder

    def symbol(self, value: object) -> int:
        kind = json_type(value)
        b = self.builder
        if kind in ("integer", "number"):
            return b.choice([[b.literal(text)] for text in number_spellings(value)], hint="const")
        if kind == "array":
            return self._array(value)
        if kind == "object":
            return self._object(value)
        return b.sequence([b.literal(json.dumps(value, ensure_ascii=False))], hint="const")

    def _array(self, items: list) -> int:
        s = self.spacing
        if not items:
            return self.builder.sequence(s.empty("["), hint="const")
        body: list[int] = [*s.open("[")]
        for i, item in enumerate(items):
            body += ([*s.comma()] if i else []) + [self.symbol(item)]
        return self.builder.sequence(body + s.close("]"), hint="const")

    def _object(self, members: dict) -> int:
        s = self.spacing
        if not members:
            return self.builder.sequence(s.empty("{"), hint="const")
        body: list[int] = [*s.open("{")]
        for i, (key, item) in enumerate(members.items()):
            key_symbol = self.builder.literal(json.dumps(key, ensure_ascii=False))
            body += ([*s.comma()] if i else []) + [key_symbol, *s.colon(), self.symbol(item)]
        return self.builder.sequence(body + s.close("}"), hint="const")


def string_spellings(pool, text: str) -> int:
    """The expression of every JSON spelling of the string ``text`` (quotes included): each
    character as itself where JSON allows, or escaped (``\\uXXXX`` in any hex case, surrogate
    pairs above U+FFFF, and the short escapes)."""
    quote = pool.literal(b'"')
    return pool.concat_all([quote, *(char_spellings(pool, ch) for ch in text), quote])


SHORT_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t"}


def char_spellings(pool, ch: str) -> int:
    options = []
    if ch not in '"\\' and ord(ch) >= 0x20:
        options.append(pool.literal(ch.encode("utf-8")))
    if ch in SHORT_ESCAPES:
        options.append(pool.literal(b"\\" + SHORT_ESCAPES[ch].encode()))
    code = ord(ch)
    if code > 0xFFFF:
        code -= 0x10000
        units = [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]
    else:
        units = [code]
    options.append(pool.concat_all([_unit_spellings(pool, u) for u in units]))
    return pool.alt(options)


def _unit_spellings(pool, unit: int) -> int:
    digits = []
    for digit in f"{unit:04x}":
        both = {ord(digit), ord(digit.upper())}
        digits.append(pool.byteset(sum(1 << b for b in both)))
    return pool.concat_all([pool.literal(b"\\u"), *digits])
