"""``not``, ``if``/``then``/``else``, ``dependencies`` and overlapping ``oneOf``, by negation
(:class:`Negation`).

A schema is its types and, per type, the keywords that constrain it, so its negation is a union
(``anyOf``) of schemas: the other types, then per keyword the values that fail it. Negated
subschemas stay ``{"not": S}`` until the walk reaches them, so a recursive schema terminates.
What has no negation here is refused by the caller. The construction, keyword by keyword, is in
docs/design/json-schema.md ("Negation").
"""

from __future__ import annotations

from typing import Any

from ...errors import GrammarError
from .context import ANNOTATIONS
from .numbers import NUMBER_KEYWORDS
from .strings import STRING_KEYWORDS
from .values import mapping_keyword

ALL_TYPES = ("null", "boolean", "object", "array", "string", "number")
CONDITIONAL_KEYWORDS = ("if", "then", "else", "dependencies", "dependentRequired", "dependentSchemas")
MAX_ONE_OF = 6  # branches of an overlapping oneOf rewritten with negations (n * (n - 1) negations)
_COUNTS = {"minItems": ("array", "maxItems", -1), "maxItems": ("array", "minItems", 1),
           "minProperties": ("object", "maxProperties", -1), "maxProperties": ("object", "minProperties", 1)}
_IGNORED = frozenset({"then", "else", "$leapgram:exclude", "$leapgram:and", "$leapgram:not"})
_STRING = frozenset(STRING_KEYWORDS)
_NUMBER = frozenset(NUMBER_KEYWORDS)

OBJECT_ONLY = frozenset({"required", "properties", "additionalProperties", "patternProperties", "propertyNames",
                         "minProperties", "maxProperties"})
ARRAY_ONLY = frozenset({"items", "prefixItems", "additionalItems", "contains", "minItems", "maxItems",
                        "uniqueItems", "minContains", "maxContains"})


class Negation:
    """Negation and what is built on it, for :class:`SchemaTranslator` (a mixin: ``self`` is the translator)."""

    def negate(self, schema: Any, pointer: str) -> Any:
        """A schema valid exactly where ``schema`` is not (``True``/``False`` included), or ``None``."""

        resolved = self.resolved(schema, pointer)
        if isinstance(resolved, bool):
            return not resolved
        if not isinstance(resolved, dict) or "unevaluatedProperties" in resolved or "unevaluatedItems" in resolved:
            return None
        found = self.negations.get(id(resolved))
        if found is not None:
            return found[1]
        self.negations[id(resolved)] = (resolved, None)  # a cycle through itself is not negated
        negated = self._negate_dict(resolved, pointer)
        self.negations[id(resolved)] = (resolved, negated)
        return negated

    def _negate_dict(self, schema: dict, pointer: str) -> Any:

        types = self.types_of(schema, pointer)
        integer = "integer" in types  # then not "number" (types_of): the other numbers have a fraction
        branches: list[Any] = []
        others = [kind for kind in ALL_TYPES if kind not in types and not (integer and kind == "number")]
        if others:
            branches.append({"type": others})
        if integer:
            branches.append({"type": "number", "$leapgram:fractional": True})
        handled = {"type", "nullable", *ANNOTATIONS, *_IGNORED}
        string_keys = {k: v for k, v in schema.items() if k in _STRING}
        number_keys = {k: v for k, v in schema.items() if k in _NUMBER}
        for key in ("$leapgram:and", "$leapgram:not"):
            if key in schema:  # conjuncts merged from allOf: they belong to the one scalar type allowed
                if "string" in types and ("number" in types or integer):
                    return None
                (string_keys if "string" in types else number_keys)[key] = schema[key]
        if string_keys and "string" in types:
            branches.append({"type": "string", "$leapgram:not": [string_keys]})
        if number_keys and ("number" in types or integer):
            branches.append({"type": "integer" if integer else "number", "$leapgram:not": [number_keys]})
        handled |= set(string_keys) | set(number_keys)
        for key, value in schema.items():
            if key in handled:
                continue
            part = self._negate_keyword(key, value, schema, types, f"{pointer}/{key}")
            if part is None:
                return None
            branches.extend(part)
        if "$leapgram:exclude" in schema:  # not (S minus V) = not S, or V
            branches.append({"enum": list(schema["$leapgram:exclude"])})
        if not branches:
            return False
        return branches[0] if len(branches) == 1 else {"anyOf": branches}

    def _negate_keyword(self, key: str, value: Any, schema: dict, types: set[str],
                        pointer: str) -> list[Any] | None:
        """The schemas whose union is the negation of one keyword (within the schema's types)."""

        if key in ("enum", "const"):
            values = [value] if key == "const" else value
            if not isinstance(values, list) or any(isinstance(v, (dict, list)) for v in values):
                return None
            rest = self.excluded({"type": sorted(types)}, values, pointer)
            return [] if rest is False else [rest]
        if key == "not":
            return [value]
        if key == "allOf" and isinstance(value, list):
            return [{"not": part} for part in value]
        if key == "anyOf" and isinstance(value, list):  # eager: merging two ``not`` makes ``not anyOf`` again
            parts = [self.negate(part, f"{pointer}/{i}") for i, part in enumerate(value)]
            if any(part is None for part in parts):
                return None
            if any(part is False for part in parts):
                return []
            kept = [part for part in parts if part is not True]
            return [True] if not kept else [kept[0] if len(kept) == 1 else {"allOf": kept}]
        if key in _COUNTS:
            kind, opposite, step = _COUNTS[key]
            if kind not in types or not isinstance(value, int) or isinstance(value, bool):
                return [] if kind not in types else None
            bound = value + step
            return [] if bound < 0 else [{"type": kind, opposite: bound}]
        if "object" not in types and key in OBJECT_ONLY or "array" not in types and key in ARRAY_ONLY:
            return []
        if key == "required" and isinstance(value, list):
            return [{"type": "object", "properties": {name: False}} for name in value]
        if key == "properties" and isinstance(value, dict):
            return [{"type": "object", "required": [name], "properties": {name: {"not": sub}}}
                    for name, sub in value.items() if sub is not True and sub != {}]
        if key == "items" and isinstance(value, (dict, bool)) and "prefixItems" not in schema:
            return [] if value is True or value == {} else [{"type": "array", "contains": {"not": value}}]
        if (key == "prefixItems" or key == "items" and "additionalItems" not in schema) and isinstance(value, list):
            # an item j present and outside prefix schema j (either spelling of the prefix)
            return [{"type": "array", "minItems": j + 1, "prefixItems": [True] * j + [{"not": sub}]}
                    for j, sub in enumerate(value) if sub is not True and sub != {}]
        if key == "contains" and "minContains" not in schema and "maxContains" not in schema:
            return [{"type": "array", "items": {"not": value}}]
        if key in ("propertyNames", "additionalProperties", "additionalItems") and (value is True or value == {}):
            return []
        if key == "uniqueItems" and value is False:
            return []
        return None

    # ----- conditionals ------------------------------------------------------------------------

    def conditionals(self, schema: dict, pointer: str) -> list[Any]:
        """The schemas ``if``/``then``/``else`` and the dependency keywords of ``schema`` stand for,
        each to be met as an ``allOf`` part (keywords its draft does not define are ignored)."""
        draft = self.draft
        parts: list[Any] = []
        if "if" in schema and draft not in (3, 4, 6) and ("then" in schema or "else" in schema):
            condition = schema["if"]
            then, otherwise = schema.get("then", True), schema.get("else", True)
            failed = self.negate(condition, f"{pointer}/if")
            if failed is None:
                self.ctx.unsupported("if", f"{pointer}/if", "its condition has no exact negation here (see 'not'); "
                                     "rewrite it as anyOf, or pass lenient=True")
            else:
                parts.append({"anyOf": [{"allOf": [condition, then]}, {"allOf": [failed, otherwise]}]})
        dependencies: list[tuple[str, Any, str]] = []
        if draft is None or draft <= 7:
            for name, value in mapping_keyword(schema, "dependencies", pointer).items():
                dependencies.append((name, value, f"{pointer}/dependencies"))
        if draft is None or draft >= 2019:
            for keyword in ("dependentRequired", "dependentSchemas"):
                for name, value in mapping_keyword(schema, keyword, pointer).items():
                    dependencies.append((name, value, f"{pointer}/{keyword}"))
        for name, value, at in dependencies:
            if isinstance(value, list):
                if not all(isinstance(x, str) for x in value):
                    raise GrammarError("a dependency must list property names", pointer=f"{at}/{name}")
                if value:
                    parts.append({"anyOf": [{"properties": {name: False}}, {"required": [name, *value]}]})
            elif value is not True and value != {}:
                parts.append({"anyOf": [{"properties": {name: False}}, {"allOf": [{"required": [name]}, value]}]})
        return parts

    def exclusive_branches(self, merged: list[Any], branches: list[Any], pointer: str) -> list[Any] | None:
        """``oneOf`` as a union: branch ``i`` (``merged[i]``, with the keywords beside the
        ``oneOf``) and not branch ``j`` (``branches[j]``, alone) for every other ``j``; ``None``
        when a branch has no negation or there are too many. Dropped branches are ``False``."""
        if len(branches) > MAX_ONE_OF:
            return None
        negated = [self.negate(branch, f"{pointer}/oneOf/{j}") for j, branch in enumerate(branches)]
        if any(n is None for n in negated):
            return None
        out: list[Any] = []
        for i, mine in enumerate(merged):
            others = [n for j, n in enumerate(negated) if j != i]
            if mine is False or any(n is False for n in others):
                out.append(False)
                continue
            rest = [n for n in others if n is not True]
            out.append({"allOf": [mine, *rest]} if rest else mine)
        return out
