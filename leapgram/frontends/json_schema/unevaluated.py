"""``unevaluatedProperties`` and ``unevaluatedItems`` (:class:`Unevaluated`).

A property (item) is evaluated when a part of the schema that succeeded declares it. The parts
that always apply (the schema, its ``allOf`` parts, ``$ref`` and static ``$dynamicRef``
targets) must succeed; ``anyOf``, ``oneOf``, ``if`` and ``dependentSchemas`` are expanded into
alternatives, each a guard (what must hold for its parts to have succeeded) with the names,
patterns, prefix and ``contains`` schemas its parts evaluate. ``unevaluatedProperties: U``
becomes ``allOf [the schema without it, anyOf [guard_i with additionalProperties U beside
alternative i's names]]``; items likewise. Exact except beside ``anyOf``: an instance whose keys
are evaluated only by two succeeding branches together is rejected (one branch's annotations
count, a listed stricter choice). Details: docs/design/json-schema-reliability.md.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .combinators import element_parts

UNEVALUATED = ("unevaluatedProperties", "unevaluatedItems")
MAX_ALTERNATIVES = 64
MAX_DEPTH = 32
ANY_OF_WARNING = ("unevaluated* beside anyOf: an instance whose properties or items are evaluated only by two "
                  "succeeding anyOf branches together is rejected (one branch's annotations count)")


@dataclass(frozen=True)
class Alternative:
    """What one way of succeeding evaluates: ``guards`` hold, and then the parts evaluate
    ``names`` and keys matching ``patterns`` (every key with ``all_properties``), the first
    ``width`` items (every item with ``all_items``) and the items matching ``contains``."""

    guards: tuple = ()
    names: tuple = ()
    patterns: tuple = ()
    all_properties: bool = False
    width: int = 0
    all_items: bool = False
    contains: tuple = ()

    def joined(self, other: Alternative) -> Alternative:
        return Alternative(self.guards + other.guards, _unique(self.names + other.names),
                           _unique(self.patterns + other.patterns), self.all_properties or other.all_properties,
                           max(self.width, other.width), self.all_items or other.all_items,
                           self.contains + other.contains)


@dataclass
class _Walk:
    """Where the rewrite stands, whether an ``anyOf`` made it stricter, and why it gave up."""

    pointer: str
    uses_any_of: bool = False
    refused: str | None = None


class Unevaluated:
    """The ``unevaluated*`` keywords of :class:`SchemaTranslator` (a mixin: ``self`` is the translator)."""

    def rewrite_unevaluated(self, schema: dict, pointer: str) -> Any:
        """``schema`` with its ``unevaluated*`` keywords written as ``additionalProperties`` and
        ``items`` over each alternative (the same object for the same schema)."""
        return self.derived("unevaluated", schema, lambda: self._rewrite_unevaluated(schema, pointer))

    def _rewrite_unevaluated(self, schema: dict, pointer: str) -> Any:
        values = {k: schema[k] for k in UNEVALUATED if k in schema and schema[k] is not True and schema[k] != {}}
        rest = {k: v for k, v in schema.items() if k not in UNEVALUATED}
        self.refs.base_of.setdefault(id(rest), self.refs.base(schema))
        if not values:
            return rest
        walk = _Walk(pointer)
        alternatives = self._evaluation(walk, rest, self.refs.base(schema), 0, top=True)
        if alternatives is None:
            for keyword in values:
                self.ctx.unsupported(keyword, f"{pointer}/{keyword}", walk.refused or "too many alternatives")
            return rest
        if walk.uses_any_of:
            self.ctx.warnings.append(f"{pointer or '/'}: {ANY_OF_WARNING}")
        restrictions = [_restriction(a, values) for a in alternatives]
        if not any(restrictions):
            return rest  # every alternative evaluates everything (or none can succeed: nor can rest)
        if len(alternatives) == 1 and not alternatives[0].guards:
            return _simple(rest, restrictions[0])
        return {"allOf": [rest, {"anyOf": [{**({"allOf": list(a.guards)} if a.guards else {}), **r}
                                           for a, r in zip(alternatives, restrictions)]}]}

    def _evaluation(self, walk: _Walk, schema: Any, base: str, depth: int,
                    top: bool = False) -> list[Alternative] | None:
        """The alternatives of ``schema`` (standing at base URI ``base``), or ``None`` (refused)."""
        if not isinstance(schema, dict):
            return [Alternative()] if schema is not False else []
        if depth > MAX_DEPTH:
            walk.refused = "the parts that evaluate nest too deeply"
            return None
        parts = self._parts_applying(walk, schema, base)
        out: list[Alternative] | None = [_own(schema, top)] if parts is not None else None
        for part in parts or ():
            out = _product(walk, out, self._evaluation(walk, part, self._base_of(part, base), depth + 1))
        for choices in self._choices(walk, schema, base, depth + 1):
            out = _product(walk, out, choices)
        return out

    def _parts_applying(self, walk: _Walk, schema: dict, base: str) -> list[Any] | None:
        """The ``allOf`` parts and the ``$ref`` (or static ``$dynamicRef``/``$recursiveRef``)
        target: they all apply (``None``: one the dynamic scope decides, refused)."""
        parts = list(schema["allOf"]) if isinstance(schema.get("allOf"), list) else []
        if "$ref" in schema:
            parts.append(self.refs.resolve(schema["$ref"], base, f"{walk.pointer}/$ref")[0])
        for keyword, target in (("$dynamicRef", self.refs.dynamic_target), ("$recursiveRef", self.refs.recursive_target)):
            if keyword in schema and "$ref" not in schema:
                found = target(schema[keyword], base, f"{walk.pointer}/{keyword}")
                if found is None:
                    walk.refused = f"a {keyword} among the parts that evaluate lands where the dynamic scope says"
                    return None
                parts.append(found[0])
        return parts

    def _choices(self, walk: _Walk, schema: dict, base: str, depth: int):
        """Per applicator whose success depends on the instance, its guarded alternatives (``None``:
        refused): each ``anyOf``/``oneOf`` branch, ``if`` passed or failed, each dependency."""
        def of(sub: Any) -> list[Alternative] | None:
            return self._evaluation(walk, sub, self._base_of(sub, base), depth)

        for keyword in ("anyOf", "oneOf"):
            if isinstance(schema.get(keyword), list):
                found = [(branch, of(branch)) for branch in schema[keyword]]
                walk.uses_any_of |= keyword == "anyOf" and len(found) > 1
                yield None if any(f is None for _, f in found) else [
                    _guarded(a, branch) for branch, f in found for a in f]
        if "if" in schema and self.draft not in (3, 4, 6):
            condition = schema["if"]
            passed = _product(walk, of(condition), of(schema.get("then", True)))
            failed = of(schema.get("else", True))
            yield None if passed is None or failed is None else (
                [_guarded(a, condition) for a in passed] + [_guarded(a, {"not": condition}) for a in failed])
        for name, sub in self._dependent_schemas(schema).items():
            found = of(sub)
            yield None if found is None else [_guarded(a, {"required": [name]}) for a in found] + [Alternative()]

    def _dependent_schemas(self, schema: dict) -> dict:
        if self.draft is None or self.draft >= 2019:
            found = schema.get("dependentSchemas")
            if isinstance(found, dict):
                return found
        if (self.draft is None or self.draft <= 7) and isinstance(schema.get("dependencies"), dict):
            return {k: v for k, v in schema["dependencies"].items() if not isinstance(v, list)}
        return {}

    def _base_of(self, schema: Any, base: str) -> str:
        return self.refs.base_of.get(id(schema), base) if isinstance(schema, dict) else base


def _simple(rest: dict, restriction: dict) -> dict:
    """The restriction written into ``rest`` itself (its own names keep their schemas)."""
    out = dict(rest)
    if "additionalProperties" in restriction:
        props = dict(rest.get("properties", {}))
        for name in restriction.get("properties", {}):
            props.setdefault(name, {})
        patterns = dict(rest.get("patternProperties", {}))
        for pattern in restriction.get("patternProperties", {}):
            patterns.setdefault(pattern, {})
        out["properties"] = props
        if patterns:
            out["patternProperties"] = patterns
        out["additionalProperties"] = restriction["additionalProperties"]
    if "items" in restriction:
        prefix = list(element_parts(rest)[0])
        width = len(restriction["prefixItems"])
        out = {k: v for k, v in out.items() if k not in ("items", "additionalItems", "prefixItems")}
        out["prefixItems"] = prefix + [{}] * (width - len(prefix))
        out["items"] = restriction["items"]
    return out


def _restriction(alternative: Alternative, values: dict) -> dict:
    """The keywords that restrict what ``alternative`` leaves unevaluated (empty: nothing)."""
    out: dict = {}
    unevaluated = values.get("unevaluatedProperties")
    if unevaluated is not None and not alternative.all_properties:
        out["properties"] = {name: {} for name in alternative.names}
        if alternative.patterns:
            out["patternProperties"] = {p: {} for p in alternative.patterns}
        out["additionalProperties"] = unevaluated
    unevaluated = values.get("unevaluatedItems")
    if unevaluated is not None and not alternative.all_items:
        out["prefixItems"] = [{}] * alternative.width
        out["items"] = {"anyOf": [*alternative.contains, unevaluated]} if alternative.contains else unevaluated
    return out


def _guarded(alternative: Alternative, guard: Any) -> Alternative:
    """``alternative`` holding only where ``guard`` does. One that evaluates nothing needs no
    guard: its restriction is the strictest, and any instance it allows is valid anyway."""
    if replace(alternative, guards=()) == Alternative():
        return alternative
    return replace(alternative, guards=(guard, *alternative.guards))


def _own(schema: dict, top: bool) -> Alternative:
    """What ``schema``'s own keywords evaluate (a nested ``unevaluated*`` evaluates all)."""
    names = tuple(schema["properties"]) if isinstance(schema.get("properties"), dict) else ()
    patterns = tuple(schema["patternProperties"]) if isinstance(schema.get("patternProperties"), dict) else ()
    all_properties = "additionalProperties" in schema or (not top and "unevaluatedProperties" in schema)
    prefix, _ = element_parts(schema)
    items = schema.get("items")
    all_items = (items is not None and not isinstance(items, list)) or (isinstance(items, list) and "additionalItems" in schema)
    all_items = all_items or (not top and "unevaluatedItems" in schema)
    contains = (schema["contains"],) if "contains" in schema else ()
    return Alternative((), names, patterns, all_properties, len(prefix), all_items, contains)


def _product(walk: _Walk, left: list[Alternative] | None, right: list[Alternative] | None) -> list[Alternative] | None:
    if left is None or right is None:
        return None
    if len(left) * len(right) > MAX_ALTERNATIVES:
        walk.refused = f"more than {MAX_ALTERNATIVES} ways for the parts that evaluate to succeed"
        return None
    return [a.joined(b) for a in left for b in right]


def _unique(items: tuple) -> tuple:
    return tuple(dict.fromkeys(items))
