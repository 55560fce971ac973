"""``unevaluatedProperties`` and ``unevaluatedItems``, where exact.

A property is evaluated when the schema or one of the parts that always apply to the same
instance (its ``allOf`` parts and ``$ref`` targets, at any depth) declares it in ``properties`` or
``patternProperties``, or has ``additionalProperties`` (which evaluates every property). All of
those parts must succeed for the instance to be valid, so the evaluated names are known from the
schema alone: ``unevaluatedProperties: U`` becomes ``additionalProperties: U`` beside
``properties`` listing every evaluated name (with ``{}`` for the names only the parts declare;
a sibling ``additionalProperties`` sees only its own schema's names, see ``combinators.py``).
Items likewise: ``unevaluatedItems: U`` becomes ``items: U`` after a ``prefixItems`` as long as
the longest prefix of the parts; a part with ``items`` (or ``additionalItems``) evaluates all.

Where the parts that succeed depend on the instance (``anyOf``, ``oneOf``, ``not``, ``if``,
``dependentSchemas``, ``$dynamicRef``, nested ``unevaluated*``), or ``contains`` or a part's
``patternProperties`` decide, the keyword is refused (skipped with a warning under ``lenient``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .combinators import element_parts

if TYPE_CHECKING:
    from .translate import SchemaTranslator

UNEVALUATED = ("unevaluatedProperties", "unevaluatedItems")
UNSURE = ("anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies", "$dynamicRef",
          "$recursiveRef", *UNEVALUATED)
MAX_PARTS = 64
ADVICE = ("exact only beside properties, patternProperties, additionalProperties, items, prefixItems, allOf "
          "and $ref (not anyOf, oneOf, not, if, dependentSchemas, contains or patternProperties in parts)")


def rewrite(t: SchemaTranslator, schema: dict, pointer: str) -> dict:
    """``schema`` with its ``unevaluated*`` keywords written as ``additionalProperties`` and
    ``items`` (the same object for the same schema)."""
    return t.derived("unevaluated", schema, lambda: _rewrite(t, schema, pointer))


def _rewrite(t: SchemaTranslator, schema: dict, pointer: str) -> dict:
    for keyword, apply in (("unevaluatedProperties", _properties), ("unevaluatedItems", _items)):
        if keyword in schema:
            schema = _rewrite_one(t, schema, pointer, keyword, apply)
    return schema


def _rewrite_one(t: SchemaTranslator, schema: dict, pointer: str, keyword: str, apply) -> dict:
    value = schema[keyword]
    rest = {k: v for k, v in schema.items() if k != keyword}
    if value is True or value == {}:
        return rest
    parts = _parts(t, rest, t.refs.base(schema), pointer)
    out = None if parts is None else apply(rest, parts, value)
    if out is None:
        t.ctx.unsupported(keyword, f"{pointer}/{keyword}", ADVICE)
        return rest
    return out


def _properties(rest: dict, parts: list[dict], unevaluated: Any) -> dict | None:
    own_patterns = rest.get("patternProperties", {})
    if any(p not in own_patterns for part in parts for p in part.get("patternProperties", {})):
        return None
    if any("additionalProperties" in part for part in parts):
        return rest  # every property is evaluated
    props = dict(rest.get("properties", {}))
    for part in parts[1:]:
        for name in part.get("properties", {}):
            props.setdefault(name, {})
    return {**rest, "properties": props, "additionalProperties": unevaluated}


def _items(rest: dict, parts: list[dict], unevaluated: Any) -> dict | None:
    if any("contains" in part for part in parts):
        return None
    width = 0
    for part in parts:
        items = part.get("items")
        if (items is not None and not isinstance(items, list)) or (isinstance(items, list) and "additionalItems" in part):
            return rest  # every item is evaluated
        width = max(width, len(element_parts(part)[0]))
    prefix = list(element_parts(rest)[0])
    out = {k: v for k, v in rest.items() if k not in ("items", "additionalItems", "prefixItems")}
    return {**out, "prefixItems": prefix + [{}] * (width - len(prefix)), "items": unevaluated}


def _parts(t: SchemaTranslator, schema: dict, base: str, pointer: str) -> list[dict] | None:
    """``schema`` (at base URI ``base``) and every ``allOf`` part and ``$ref`` target that
    applies with it, or ``None`` when one of them has a keyword whose evaluation depends on the
    instance."""
    if any(k in schema for k in UNSURE):
        return None
    parts, pending = [schema], [(schema, pointer)]
    while pending:
        node, at = pending.pop()
        found = [(part, f"{at}/allOf/{i}") for i, part in enumerate(node.get("allOf", []))]
        if "$ref" in node:
            found.append(t.refs.resolve(node["$ref"], base if node is schema else t.refs.base(node), f"{at}/$ref"))
        for part, where in found:
            if isinstance(part, bool):
                continue
            if not isinstance(part, dict) or any(k in part for k in UNSURE) or len(parts) >= MAX_PARTS:
                return None
            parts.append(part)
            pending.append((part, where))
    return parts
