"""``not``: the negation of a schema, written as another schema when it can be.

A schema is the conjunction of its keywords, so its negation is the ``anyOf`` of the negated
keywords; each negation must be exact. Negated here: boolean schemas, ``type``, ``required``,
``properties`` (the property is present and its value negated), ``allOf``/``anyOf`` (De Morgan),
``not``, ``enum``/``const`` of scalars (strings excluded in every JSON spelling, integers only where
no fraction or exponent can spell them), ``minItems``/``maxItems``/``minProperties``/
``maxProperties``, and ``$ref`` to a negatable schema. Anything else gives ``None``.
"""

from __future__ import annotations

from .refs import resolve_pointer
from .values import canonical, json_type

EXCLUDE = "x-leapgram-exclude"
"""Internal keyword: scalar values removed from what the rest of the schema allows."""
MAX_DEPTH = 16
ALL_TYPES = ("null", "boolean", "object", "array", "number", "integer", "string")


def negate(tr, schema: object, depth: int = 0):
    """A schema matching exactly the values ``schema`` rejects, or ``None``."""
    from .translate import VALIDATION_KEYWORDS

    if isinstance(schema, bool):
        return not schema
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return None
    if "$ref" in schema and (tr.ref_ignores_siblings or len(
            [k for k in schema if k in VALIDATION_KEYWORDS]) == 1):
        target = tr.refs.target(schema["$ref"], "")
        return negate(tr, resolve_pointer(tr.refs.document, target, target), depth + 1)
    branches = []
    for keyword, value in schema.items():
        if keyword not in VALIDATION_KEYWORDS or keyword in ("then", "else"):
            continue
        if keyword == "if" and not ("then" in schema or "else" in schema):
            continue
        found = _negate_keyword(tr, keyword, value, schema, depth)
        if found is None:
            return None
        if found is not False:
            branches.append(found)
    if not branches:
        return False
    return branches[0] if len(branches) == 1 else {"anyOf": branches}


def _negate_keyword(tr, keyword: str, value, schema: dict, depth: int):
    if keyword == "type":
        return _negate_type(value, schema.get("nullable") is True)
    if keyword == "nullable":
        return False
    if keyword == "required":
        if not isinstance(value, list) or not value:
            return False
        return {"type": "object", "anyOf": [{"properties": {k: False}} for k in value]}
    if keyword == "properties" and isinstance(value, dict):
        out = []
        for name, sub in value.items():
            negated = negate(tr, sub, depth + 1)
            if negated is None:
                return None
            if negated is not False:
                out.append({"type": "object", "required": [name], "properties": {name: negated}})
        return {"anyOf": out} if out else False
    if keyword in ("allOf", "anyOf") and isinstance(value, list):
        negated = [negate(tr, s, depth + 1) for s in value]
        if any(n is None for n in negated):
            return None
        return {"anyOf" if keyword == "allOf" else "allOf": negated}
    if keyword == "not":
        return value
    if keyword in ("enum", "const"):
        return _negate_values([value] if keyword == "const" else value)
    return _negate_count(keyword, value)


def _negate_type(value, nullable: bool):
    names = {value} if isinstance(value, str) else set(value) if isinstance(value, list) else None
    if names is None or ("integer" in names and "number" not in names):
        return None
    names |= ({"integer"} if "number" in names else set()) | ({"null"} if nullable else set())
    rest = [t for t in ALL_TYPES if t not in names]
    return {"type": rest} if rest else False


COUNTS = {"minItems": ("array", "maxItems", -1), "maxItems": ("array", "minItems", 1),
          "minProperties": ("object", "maxProperties", -1), "maxProperties": ("object", "minProperties", 1)}


def _negate_count(keyword: str, value):
    if keyword not in COUNTS or not isinstance(value, int):
        return None
    kind, other, step = COUNTS[keyword]
    if value + step < 0:
        return False
    return {"type": kind, other: value + step}


def _negate_values(values):
    if not isinstance(values, list):
        return None
    kinds = {json_type(v) for v in values}
    if kinds & {"object", "array", "number"}:  # number: a non-integral value has many spellings
        return None
    branches = [{"type": [t for t in ALL_TYPES if t not in kinds and not (t == "number" and "integer" in kinds)]}]
    for kind in kinds:
        excluded = [v for v in values if json_type(v) == kind]
        if kind == "boolean":
            rest = [b for b in (True, False) if canonical(b) not in {canonical(v) for v in excluded}]
            if rest:
                branches.append({"enum": rest})
        elif kind == "integer":
            branches.append({"type": "number", EXCLUDE: excluded})
        elif kind == "string":
            branches.append({"type": "string", EXCLUDE: excluded})
    return {"anyOf": branches}
