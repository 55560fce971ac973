"""``unevaluatedProperties`` and ``unevaluatedItems``, where exact (:class:`Unevaluated`).

When the parts that evaluate properties or items are known from the schema alone (its ``allOf``
parts and ``$ref`` targets, which all must succeed), the keyword becomes ``additionalProperties``
or ``items`` over the names and prefix those parts declare; where ``anyOf``, ``oneOf``, ``not``,
``if``, ``contains`` or the like decide, it is refused. Details: docs/design/json-schema-reliability.md.
"""

from __future__ import annotations

from typing import Any

from .combinators import element_parts

UNEVALUATED = ("unevaluatedProperties", "unevaluatedItems")
UNSURE = ("anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies", "$dynamicRef",
          "$recursiveRef", *UNEVALUATED)
MAX_PARTS = 64
ADVICE = ("exact only beside properties, patternProperties, additionalProperties, items, prefixItems, allOf "
          "and $ref (not anyOf, oneOf, not, if, dependentSchemas, contains or patternProperties in parts)")


class Unevaluated:
    """The ``unevaluated*`` keywords of :class:`SchemaTranslator` (a mixin: ``self`` is the translator)."""

    def rewrite_unevaluated(self, schema: dict, pointer: str) -> dict:
        """``schema`` with its ``unevaluated*`` keywords written as ``additionalProperties`` and
        ``items`` (the same object for the same schema)."""
        return self.derived("unevaluated", schema, lambda: self._rewrite_unevaluated(schema, pointer))

    def _rewrite_unevaluated(self, schema: dict, pointer: str) -> dict:
        for keyword, apply in (("unevaluatedProperties", _properties), ("unevaluatedItems", _items)):
            if keyword in schema:
                schema = self._rewrite_one_unevaluated(schema, pointer, keyword, apply)
        return schema

    def _rewrite_one_unevaluated(self, schema: dict, pointer: str, keyword: str, apply) -> dict:
        value = schema[keyword]
        rest = {k: v for k, v in schema.items() if k != keyword}
        if value is True or value == {}:
            return rest
        parts = self._evaluated_parts(rest, self.refs.base(schema), pointer)
        out = None if parts is None else apply(rest, parts, value)
        if out is None:
            self.ctx.unsupported(keyword, f"{pointer}/{keyword}", ADVICE)
            return rest
        return out

    def _evaluated_parts(self, schema: dict, base: str, pointer: str) -> list[dict] | None:
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
                where = base if node is schema else self.refs.base(node)
                found.append(self.refs.resolve(node["$ref"], where, f"{at}/$ref"))
            for part, where in found:
                if isinstance(part, bool):
                    continue
                if not isinstance(part, dict) or any(k in part for k in UNSURE) or len(parts) >= MAX_PARTS:
                    return None
                parts.append(part)
                pending.append((part, where))
        return parts


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
