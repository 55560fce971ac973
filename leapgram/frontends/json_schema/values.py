"""JSON values as text: the literal spellings of ``const``/``enum`` members, and equality.

A value is written the way ``json.dumps(value, ensure_ascii=False)`` writes it (the benchmark's
serialization): strings with its escapes, floats by ``repr``; an integral number also as ``1.0``
when written as an int and as ``1`` when written as a float (JSON Schema compares numbers by
value). Objects and arrays become grammar rules, so whitespace between their tokens follows the
grammar's whitespace setting; object members keep the order the schema lists them in.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ...errors import GrammarError

# json.dumps(value, ensure_ascii=False), the same text: dumps with any argument makes a new
# encoder per call, a tenth of the time of a schema with a long enum of strings
json_text = json.JSONEncoder(ensure_ascii=False).encode


def count_keyword(schema: dict, keyword: str, pointer: str, default: Any) -> Any:
    """A non-negative integer keyword (``minItems``, ``maxProperties``, ...; ``2.0`` counts as
    2), or ``default`` when absent; anything else is a :class:`GrammarError` at its pointer."""
    value = schema.get(keyword, default)
    if value is default:
        return value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise GrammarError(f"{keyword} must be a non-negative integer", pointer=f"{pointer}/{keyword}")
    return value


def mapping_keyword(schema: dict, keyword: str, pointer: str) -> dict:
    """An object-valued keyword (``properties``, ``dependentSchemas``, ...), ``{}`` when absent;
    anything else is a :class:`GrammarError` at its pointer."""
    value = schema.get(keyword, {})
    if not isinstance(value, dict):
        raise GrammarError(f"{keyword} must be an object", pointer=f"{pointer}/{keyword}")
    return value


def json_type(value: Any) -> str:
    """The JSON Schema type of a Python JSON value (``integer`` for integral numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise TypeError(f"not a JSON value: {value!r}")


def scalar_spellings(value: Any) -> list[bytes]:
    """The texts a scalar (not an object or array) may be written as."""
    if value is None:
        return [b"null"]
    if isinstance(value, bool):
        return [b"true" if value else b"false"]
    if isinstance(value, int):
        return [str(value).encode(), f"{value}.0".encode()]
    if isinstance(value, float):
        if not math.isfinite(value):
            return []
        text = repr(value).encode()
        return [str(int(value)).encode(), text] if value.is_integer() else [text]
    return [json_text(value).encode("utf-8")]


def json_equal(a: Any, b: Any) -> bool:
    """Equality as JSON Schema defines it: numbers by value, ``1 == 1.0`` but ``true != 1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def unique_values(values: list[Any]) -> list[Any]:
    """``values`` without repeats (JSON equality), in order; linear, by :func:`json_key`."""
    out: list[Any] = []
    seen: set = set()
    for value in values:
        key = json_key(value)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def json_key(value: Any) -> Any:
    """A hashable key with ``json_key(a) == json_key(b)`` exactly when :func:`json_equal`
    holds (numbers by value: ``1`` and ``1.0`` share a key, ``true`` and ``1`` do not). NaN,
    equal to nothing, gets a key of its own."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("#", value) if value == value else ("nan", object())  # noqa: PLR0124 (NaN: math.isnan fails on big ints)
    if isinstance(value, list):
        return ("a", tuple(json_key(v) for v in value))
    if isinstance(value, dict):
        return ("o", frozenset((k, json_key(v)) for k, v in value.items()))
    return (type(value).__name__, value)
