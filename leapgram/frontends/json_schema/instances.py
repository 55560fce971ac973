"""Whether one given JSON value satisfies a schema: for ``enum``/``const`` values checked against
their sibling keywords (object and array values included).

Strings and numbers are checked with the lexeme expressions of :mod:`.strings` and
:mod:`.numbers`, so a value is judged exactly as the grammar would judge it. A keyword this
checker does not know gives ``None`` (undecided), which the caller reports.
"""

from __future__ import annotations

import json

from .negation import EXCLUDE
from .numbers import number_expr
from .refs import child, resolve_pointer
from .strings import string_expr
from .values import canonical, json_type

MAX_DEPTH = 32
STRING_KEYWORDS = ("minLength", "maxLength", "pattern", "format", "contentEncoding", "contentMediaType")
NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


def satisfies(tr, value: object, schema: object, pointer: str, depth: int = 0):
    """``True``/``False`` when decided, ``None`` when a keyword is beyond this checker."""
    from .translate import ANNOTATIONS, VALIDATION_KEYWORDS

    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return None
    verdict = True
    for keyword in schema:
        if keyword in ANNOTATIONS or (keyword not in VALIDATION_KEYWORDS and keyword != EXCLUDE):
            continue
        found = _keyword(tr, keyword, value, schema, pointer, depth)
        if found is False:
            return False
        if found is None:
            verdict = None
    return verdict


def _all(results):
    results = list(results)
    if False in results:
        return False
    return None if None in results else True


def _keyword(tr, keyword: str, value, schema: dict, pointer: str, depth: int):
    kind = json_type(value)
    here = child(pointer, keyword)
    sub = schema[keyword]
    if keyword == "type":
        names = [sub] if isinstance(sub, str) else sub
        if schema.get("nullable") is True:
            names = [*names, "null"]
        return kind in names or (kind == "integer" and "number" in names)
    if keyword in ("enum", "const", EXCLUDE):
        values = [sub] if keyword == "const" else sub
        inside = canonical(value) in {canonical(v) for v in values}
        return not inside if keyword == EXCLUDE else inside
    if keyword == "nullable":
        return True
    if keyword in STRING_KEYWORDS:
        if kind != "string":
            return True
        expr = string_expr(tr.ctx, schema, pointer)
        return tr.ctx.pool.matches(expr, json.dumps(value, ensure_ascii=False).encode())
    if keyword in NUMBER_KEYWORDS:
        if kind not in ("integer", "number"):
            return True
        text = str(int(value)) if kind == "integer" else json.dumps(value)
        expr = number_expr(tr.ctx, schema, pointer, integer=False)
        return tr.ctx.pool.matches(expr, text.encode())
    if keyword == "$ref":
        target = tr.refs.target(sub, here)
        return satisfies(tr, value, resolve_pointer(tr.refs.document, target, here), target, depth + 1)
    if keyword in ("allOf", "anyOf", "oneOf"):
        results = [satisfies(tr, value, s, child(here, i), depth + 1) for i, s in enumerate(sub)]
        if keyword == "allOf":
            return _all(results)
        if None in results:
            return None
        return any(results) if keyword == "anyOf" else results.count(True) == 1
    if keyword == "not":
        found = satisfies(tr, value, sub, here, depth + 1)
        return None if found is None else not found
    if kind == "object":
        return _object_keyword(tr, keyword, value, schema, pointer, depth)
    if kind == "array":
        return _array_keyword(tr, keyword, value, schema, pointer, depth)
    return True if keyword in OBJECT_KEYWORDS | ARRAY_KEYWORDS else None


OBJECT_KEYWORDS = frozenset({"properties", "required", "additionalProperties", "minProperties",
                             "maxProperties", "propertyNames"})
ARRAY_KEYWORDS = frozenset({"items", "prefixItems", "minItems", "maxItems", "uniqueItems"})


def _object_keyword(tr, keyword, value: dict, schema: dict, pointer: str, depth: int):
    sub = schema[keyword]
    if keyword in ARRAY_KEYWORDS:
        return True
    if keyword == "properties":
        return _all(satisfies(tr, value[k], s, child(pointer, keyword, k), depth + 1)
                    for k, s in sub.items() if k in value)
    if keyword == "required":
        return all(k in value for k in sub)
    if keyword == "additionalProperties":
        if "patternProperties" in schema:
            return None
        extra = [k for k in value if k not in schema.get("properties", {})]
        return _all(satisfies(tr, value[k], sub, child(pointer, keyword), depth + 1) for k in extra)
    if keyword == "minProperties":
        return len(value) >= sub
    if keyword == "maxProperties":
        return len(value) <= sub
    if keyword == "propertyNames":
        return _all(satisfies(tr, k, sub, child(pointer, keyword), depth + 1) for k in value)
    return None


def _array_keyword(tr, keyword, value: list, schema: dict, pointer: str, depth: int):
    sub = schema[keyword]
    if keyword in OBJECT_KEYWORDS:
        return True
    if keyword == "items" and isinstance(sub, list):
        return _all(satisfies(tr, v, s, child(pointer, keyword, i), depth + 1) for i, (v, s) in
                    enumerate(zip(value, sub))) if "additionalItems" not in schema else None
    if keyword == "items":
        start = len(schema.get("prefixItems", []))
        return _all(satisfies(tr, v, sub, child(pointer, keyword), depth + 1) for v in value[start:])
    if keyword == "prefixItems":
        return _all(satisfies(tr, v, s, child(pointer, keyword, i), depth + 1) for i, (v, s) in
                    enumerate(zip(value, sub)))
    if keyword == "minItems":
        return len(value) >= sub
    if keyword == "maxItems":
        return len(value) <= sub
    if keyword == "uniqueItems":
        return not sub or len({canonical(v) for v in value}) == len(value)
    return None
