"""``allOf``, ``anyOf``, ``oneOf`` and ``not`` (:class:`Combinators`).

``allOf`` merges its schemas into one; ``anyOf`` is the union of its branches, each merged with
the keywords beside it; ``oneOf`` the same union when the branches are provably disjoint, else
each branch with the others negated (``negation.py``); ``not`` of types or scalar values becomes
positive keywords, any other ``not`` goes through negation. A keyword that cannot be merged
exactly is refused. The merging rules: docs/design/json-schema.md ("Combinators").
"""

from __future__ import annotations

import math
from typing import Any

from ...errors import BudgetExceededError, GrammarError
from .context import ANNOTATIONS
from .negation import CONDITIONAL_KEYWORDS, OBJECT_ONLY
from .objects import key_text
from .values import json_equal, json_type

LOWER = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains")
UPPER = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains")
SCALAR_CONJUNCTS = ("pattern", "format", "multipleOf")
NOT_OBJECT = ("null", "boolean", "array", "string", "number")
UNEVALUATED = ("unevaluatedProperties", "unevaluatedItems")
MAX_BRANCHES = 64
_IMPOSSIBLE = object()
_ELEMENT_KEYWORDS = ("items", "additionalItems", "prefixItems")


class Combinators:
    """The ``allOf``, ``anyOf``, ``oneOf`` and ``not`` of :class:`SchemaTranslator` (a mixin: ``self`` is the
    translator)."""

    # ----- allOf -------------------------------------------------------------------------------

    def merge_all_of(self, schema: dict, pointer: str) -> dict | bool:
        parts = schema["allOf"]
        if not isinstance(parts, list) or not parts:
            raise GrammarError("allOf must be a non-empty array", pointer=f"{pointer}/allOf")
        own = {k: v for k, v in schema.items() if k != "allOf"}
        sequence = [(part, f"{pointer}/allOf/{i}") for i, part in enumerate(parts)]
        if keyword_first(schema, "allOf"):  # declared order follows the schema's key order
            sequence.append((own, pointer))
            merged: dict | bool = {}
        else:
            merged = own
        for part, at in sequence:
            combo = _combinator(merged)
            if combo is not None:
                resolved = self.resolved(part, at)
                if isinstance(resolved, dict) and ("properties" in resolved or "required" in resolved):
                    # Properties of a later part come after those of the earlier branches (declared
                    # order follows allOf's order): the part joins every branch instead.
                    merged = {**merged, combo: [{"allOf": [branch, resolved]} for branch in merged[combo]]}
                    continue
            merged = self.merge(merged, part, at)
            if merged is False:
                return False
        return merged

    def resolved(self, schema: Any, pointer: str) -> Any:
        """``schema`` with its ``$ref`` and combinators merged into one schema where exact."""
        if not isinstance(schema, dict):
            return schema
        try:
            return self.composed("resolved", (schema,), lambda: self._new_resolved(schema, pointer))
        except RecursionError:
            self.note_overflow(pointer)
            raise

    def _new_resolved(self, schema: Any, pointer: str) -> Any:
        if isinstance(schema, dict) and any(k in schema for k in UNEVALUATED):
            schema = self.rewrite_unevaluated(schema, pointer)  # before any merge: it sees its own parts only
        while isinstance(schema, dict) and "$ref" in schema:
            target, pointer = self.refs.resolve(schema["$ref"], self.refs.base(schema), f"{pointer}/$ref")
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            if not rest:
                schema = target
            elif target is True or target == {}:
                schema = rest
            else:
                schema = self.merge(rest, target, pointer)
        schema = self.expand_conditionals(schema, pointer)
        if isinstance(schema, dict) and "allOf" in schema:
            return self.merge_all_of(schema, pointer)
        return schema

    def expand_conditionals(self, schema: Any, pointer: str) -> Any:
        """``schema`` with ``if``/``then``/``else`` and the dependency keywords moved into ``allOf``
        as the ``anyOf`` schemas they stand for (:meth:`conditionals`), so that merging never
        meets two of them under one key."""
        if not isinstance(schema, dict) or not any(k in schema for k in CONDITIONAL_KEYWORDS):
            return schema
        parts = self.conditionals(schema, pointer)
        rest = {k: v for k, v in schema.items() if k not in CONDITIONAL_KEYWORDS}
        if parts:
            before = schema.get("allOf", [])
            rest["allOf"] = [*(before if isinstance(before, list) else [before]), *parts]
        return rest

    def merge(self, a: Any, b: Any, pointer: str) -> dict | bool:
        """One schema valid exactly where both ``a`` and ``b`` are (the same object for the same two
        schemas: unions of allOf branches merge the same pairs again)."""
        return self.composed("merge", (a, b), lambda: self._new_merge(a, b, pointer))

    def _new_merge(self, a: Any, b: Any, pointer: str) -> dict | bool:
        a, b = self.resolved(a, pointer), self.resolved(b, pointer)
        if a is False or b is False:
            return False
        if a is True:
            return b if isinstance(b, dict) else {}
        if b is True:
            return a
        if not isinstance(a, dict) or not isinstance(b, dict):
            raise GrammarError("a schema must be an object or a boolean", pointer=pointer)
        if any(k in x for x in (a, b) for k in UNEVALUATED):  # left only after a refusal under lenient
            a, b = ({k: v for k, v in x.items() if k not in UNEVALUATED} for x in (a, b))
        out = dict(a)
        elements_merged = _merge_elements(out, a, b)
        for key, value in b.items():
            if elements_merged and key in _ELEMENT_KEYWORDS:
                continue
            if key not in out:
                out[key] = value
                continue
            if json_equal(out[key], value):
                continue
            out[key] = self._merge_keyword(key, out, value, a, b, pointer)
            if out[key] is _IMPOSSIBLE:
                return False
        self._drop_undeclared(out, a, b, pointer)
        return out

    def _merge_keyword(self, key: str, out: dict, value: Any, a: dict, b: dict, pointer: str) -> Any:
        mine = out[key]
        if key == "type":
            return _merge_types(mine, value)
        if key in LOWER:
            return max(mine, value) if _numbers(mine, value) else self._refuse_merge(key, pointer, mine)
        if key in UPPER:
            return min(mine, value) if _numbers(mine, value) else self._refuse_merge(key, pointer, mine)
        if key == "required":
            return list(dict.fromkeys([*mine, *value]))
        if key in ("properties", "patternProperties") and isinstance(mine, dict) and isinstance(value, dict):
            return {k: ({"allOf": [mine[k], value[k]]} if k in mine and k in value else mine.get(k, value.get(k)))
                    for k in {**mine, **value}}
        if key == "contains":  # one item of each kind, not one item of both kinds
            return mine if json_equal(mine, value) else self._refuse_merge(key, pointer, mine)
        if key in ("items", "additionalProperties", "additionalItems", "propertyNames", "not"):
            if isinstance(mine, list) or isinstance(value, list):
                return self._refuse_merge(key, pointer, mine)
            return {"allOf": [mine, value]} if key != "not" else {"anyOf": [mine, value]}
        if key in ("enum", "const"):
            left = [mine] if key == "const" else mine
            both = [v for v in left if any(json_equal(v, w) for w in ([value] if key == "const" else value))]
            if not both:
                return _IMPOSSIBLE
            return both[0] if key == "const" else both
        if key in SCALAR_CONJUNCTS:
            out.setdefault("$leapgram:and", [])
            out["$leapgram:and"] = [*out["$leapgram:and"], {key: value}]
            return mine
        if key in ("anyOf", "oneOf"):
            if len(mine) * len(value) > MAX_BRANCHES:
                return self._refuse_merge(key, pointer, mine)
            return [{"allOf": [x, y]} for x in mine for y in value]
        if key in ("exclusiveMinimum", "exclusiveMaximum"):
            return self._refuse_merge(key, pointer, mine)
        if key == "uniqueItems":
            return bool(mine) or bool(value)
        if key == "$leapgram:and":
            return [*mine, *value]
        if key in ("$leapgram:exclude", "$leapgram:not"):
            return [*mine, *value]
        if key == "nullable":
            return bool(mine) and bool(value)
        return mine  # annotations and unknown keywords (validators ignore them too)

    def _refuse_merge(self, key: str, pointer: str, mine: Any) -> Any:
        """Raise :class:`UnsupportedError`; under ``lenient``, keep the first schema's value (a
        looser schema of the same shape: the other conjunct is dropped)."""
        self.ctx.unsupported(key, f"{pointer}/{key}", f"allOf with two different {key} values cannot be merged")
        return mine

    def _drop_undeclared(self, out: dict, a: dict, b: dict, pointer: str) -> None:
        """One schema's ``additionalProperties`` constrains every key it does not declare itself
        (neither in its ``properties`` nor by its ``patternProperties``), also the keys the other
        schema declares, by name or by pattern: those take it as one more conjunct (``false``
        forbids them)."""
        for own in (a, b):
            extra = own.get("additionalProperties", True)
            if extra is True or extra == {}:
                continue
            self._constrain_patterns(out, own, extra, pointer)
            if not isinstance(out.get("properties"), dict):
                continue
            declared = own.get("properties", {})
            patterns = own.get("patternProperties", {})
            props = dict(out["properties"])
            for name, sub in props.items():  # values replaced, keys unchanged: the iteration stays valid
                if name in declared or self._matches_pattern(patterns, name, pointer):
                    continue
                props[name] = False if extra is False or sub is False else {"allOf": [sub, extra]}
            out["properties"] = props

    def _constrain_patterns(self, out: dict, own: dict, extra: Any, pointer: str) -> None:
        """The merged patterns that ``own`` does not have take its ``additionalProperties``
        ``extra`` as one more conjunct: ``own`` declares none of their keys. Exact when ``own``
        has no patterns and none of its names matches one (else refused: the keys would split)."""
        patterns = out.get("patternProperties")
        mine = own.get("patternProperties", {})
        foreign = [p for p in patterns if p not in mine] if isinstance(patterns, dict) else []
        if not foreign:
            return
        if mine or any(self._matches_pattern({p: {}}, name, pointer) for p in foreign for name in own.get("properties", {})):
            self._refuse_merge("patternProperties", pointer, None)
            return
        out["patternProperties"] = {p: (sub if p not in foreign else False if extra is False or sub is False
                                        else {"allOf": [sub, extra]}) for p, sub in patterns.items()}

    def _matches_pattern(self, patterns: Any, name: str, pointer: str) -> bool:
        if not isinstance(patterns, dict):
            return False
        return any(self.pool.matches(self.scalar_expr({"pattern": p}, pointer, "string"), key_text(name))
                   for p in patterns)

    # ----- anyOf / oneOf -----------------------------------------------------------------------

    def union(self, schema: dict, pointer: str) -> list[int]:
        keyword = "anyOf" if "anyOf" in schema else "oneOf"
        branches = schema[keyword]
        if not isinstance(branches, list) or not branches:
            raise GrammarError(f"{keyword} must be a non-empty array", pointer=f"{pointer}/{keyword}")
        rest = {k: v for k, v in schema.items() if k != keyword}  # a oneOf beside anyOf stays in it
        merged = []
        for i, branch in enumerate(branches):
            at = f"{pointer}/{keyword}/{i}"
            if not _has_keywords(rest):
                combined = self.resolved(branch, at)
            elif keyword_first(schema, keyword):
                combined = self.merge(branch, rest, at)
            else:
                combined = self.merge(rest, branch, at)
            if combined is not False:
                merged.append((combined, at, i))
        if keyword == "oneOf" and len(merged) > 1 and not self._branches_disjoint([m for m, _, _ in merged], pointer):
            apart = self._objects_apart(merged, pointer)
            if apart is not None:
                return [symbol for combined, at in apart if (symbol := self.value(combined, at)) is not None]
            by_index: list[Any] = [False] * len(branches)
            for combined, _, i in merged:
                by_index[i] = combined
            exclusive = self.exclusive_branches(by_index, branches, pointer)
            if exclusive is None:
                self.ctx.unsupported("oneOf", f"{pointer}/oneOf", "its branches may overlap and have no exact negation, so "
                                     "'exactly one' cannot be expressed; make them disjoint (different types or const "
                                     "values) or use anyOf")
            else:
                merged = [(exclusive[i], at, i) for _, at, i in merged if exclusive[i] is not False]
        out = []
        for combined, at, _ in merged:
            symbol = self.value(combined, at)
            if symbol is not None:
                out.append(symbol)
        return out

    def _objects_apart(self, merged: list[tuple[Any, str, int]], pointer: str) -> list[tuple[Any, str]] | None:
        """``oneOf`` branches that object keywords tell apart among objects only (a required tag
        with different values, in branches without ``type: object``): the objects are the union
        of each branch's objects; the other values a ``oneOf`` of the branches without their
        object keywords (which constrain objects only), restricted to the other types."""
        if not all(isinstance(m, dict) for m, _, _ in merged) or \
                not any(k in m for m, _, _ in merged for k in OBJECT_ONLY):
            return None
        objects = [(self.merge(m, {"type": "object"}, at), at) for m, at, _ in merged]
        if not self._branches_disjoint([m for m, _ in objects], pointer):
            return None
        others = [{"allOf": [{k: v for k, v in m.items() if k not in OBJECT_ONLY}, {"type": list(NOT_OBJECT)}]}
                  for m, _, _ in merged]
        return [*((m, at) for m, at in objects if m is not False), ({"oneOf": others}, f"{pointer}/oneOf")]

    def _branches_disjoint(self, branches: list[Any], pointer: str) -> bool:
        for i in range(len(branches)):
            for j in range(i + 1, len(branches)):
                if not self._pair_disjoint(branches[i], branches[j], pointer):
                    return False
        return True

    def _pair_disjoint(self, a: Any, b: Any, pointer: str) -> bool:
        if a is False or b is False:
            return True
        if not isinstance(a, dict) or not isinstance(b, dict):
            return False
        ta, tb = self._value_types(a, pointer), self._value_types(b, pointer)
        if not ta & tb:
            return True
        va, vb = _finite(a), _finite(b)
        if va is not None and vb is not None and not any(json_equal(x, y) for x in va for y in vb):
            return True
        if ta & tb <= {"object"} and _tagged_apart(a, b):  # tags tell objects apart, not other values
            return True
        if ta | tb <= {"string"} or ta | tb <= {"number", "integer"}:
            kind = "string" if ta | tb <= {"string"} else "number"
            try:
                ea, eb = self.scalar_expr(a, pointer, kind), self.scalar_expr(b, pointer, kind)
                return self.pool.is_empty(self.pool.intersect([ea, eb]))
            except (GrammarError, BudgetExceededError):
                return False
        return False

    def _value_types(self, schema: dict, pointer: str) -> set[str]:
        values = _finite(schema)
        if values is not None:
            kinds = {json_type(v) for v in values}
            return kinds | ({"number"} if "integer" in kinds else set())
        types = self.types_of(schema, pointer)
        if "integer" in types:
            types.add("number")
        if "number" in types:
            types.add("integer")
        return types

    # ----- not ---------------------------------------------------------------------------------

    def apply_not(self, schema: dict, pointer: str) -> dict | bool:
        """``schema`` with its ``not`` rewritten into positive keywords, or ``False``."""
        at = f"{pointer}/not"
        negated = self.resolved(schema["not"], at)
        if not isinstance(negated, (bool, dict)):
            raise GrammarError(f"a schema must be an object or a boolean, not {type(negated).__name__}", pointer=at)
        out = {k: v for k, v in schema.items() if k != "not"}
        if negated is True or negated == {}:
            return False
        if negated is False:
            return out
        keys = {k for k in negated if k not in ("description", "title", "$comment")}
        if keys == {"type"}:
            banned = self.types_of(negated, at)
            kept = sorted(self.types_of(out, pointer) - banned - ({"integer"} if "number" in banned else set()))
            if "number" in kept and "integer" in banned:  # numbers with a fraction, as negation does
                fractional = {**out, "type": "number", "$leapgram:fractional": True}
                others = [kind for kind in kept if kind != "number"]
                return {"anyOf": [{**out, "type": others}, fractional]} if others else fractional
            return {**out, "type": kept} if kept else False
        if keys and keys <= {"enum", "const", "type"}:
            values = self.enumerated_values(negated, at)
            if "type" in keys:
                values = [v for v in values if json_type(v) in self.types_of(negated, at)
                          or (json_type(v) == "integer" and "number" in self.types_of(negated, at))]
            if not any(isinstance(v, (dict, list)) for v in values):
                return self.excluded(out, values, pointer)
        positive = self.negate(negated, at)
        if positive is None:
            self.ctx.unsupported("not", at, "this schema has no exact negation here (negated: types, scalar enum/const, "
                                 "string and number keywords, required, properties, item and member counts, items, "
                                 "contains, allOf, anyOf, not)")
            return out
        if positive is False:
            return False
        if positive is True:
            return out
        return {"allOf": [out, positive]} if _has_keywords(out) else positive

    def excluded(self, schema: dict, values: list[Any], pointer: str) -> dict | bool:
        """``schema`` minus the scalar ``values``: booleans and null drop out of the types, strings
        and numbers are cut out of their lexemes."""
        types = self.types_of(schema, pointer)
        if None in values:
            types.discard("null")
        bools = {v for v in values if isinstance(v, bool)}
        kept_bool = None
        if bools and "boolean" in types:
            types.discard("boolean")
            if len(bools) == 1:
                kept_bool = not next(iter(bools))
        scalars = [v for v in values if isinstance(v, (str, int, float)) and not isinstance(v, bool)
                   and (not isinstance(v, float) or math.isfinite(v))]
        out: dict | bool = False
        if types:
            out = {**schema, "type": sorted(types)}
            if scalars:
                out["$leapgram:exclude"] = [*schema.get("$leapgram:exclude", ()), *scalars]
        if kept_bool is None:
            return out
        kept = {"allOf": [schema, {"const": kept_bool}]}  # the other boolean, under the schema's keywords
        return {"anyOf": [out, kept]} if out is not False else kept


def keyword_first(schema: dict, keyword: str) -> bool:
    """Whether ``keyword`` comes before ``properties`` in ``schema`` (key order decides which
    properties are declared first when both bring some, as JSONSchemaBench's instances have it)."""
    keys = list(schema)
    return "properties" in schema and keyword in schema and keys.index(keyword) < keys.index("properties")


def _combinator(schema: Any) -> str | None:
    if isinstance(schema, dict):
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return key
    return None


def _merge_types(a: Any, b: Any) -> Any:
    left = {a} if isinstance(a, str) else set(a)
    right = {b} if isinstance(b, str) else set(b)
    both = left & right
    if "integer" in left and "number" in right or "integer" in right and "number" in left:
        both.add("integer")
    return sorted(both) if both else _IMPOSSIBLE


def _numbers(a: Any, b: Any) -> bool:
    return all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))


def _merge_elements(out: dict, a: dict, b: dict) -> bool:
    """Element ``j`` of an array follows ``prefixItems[j]`` (``items`` as an array before draft
    2020-12) and later ones the rest schema (``items``, or ``additionalItems`` beside an array
    ``items``): when either side has a prefix, the merged prefix is the position-wise ``allOf``
    of both sides' element schemas and the merged rest the ``allOf`` of both rests (``False``:
    neither has a prefix, and ``items`` merges as any keyword)."""
    (prefix_a, rest_a), (prefix_b, rest_b) = element_parts(a), element_parts(b)
    if not prefix_a and not prefix_b:
        return False
    for key in ("items", "additionalItems", "prefixItems"):
        out.pop(key, None)
    width = max(len(prefix_a), len(prefix_b))

    def at(prefix: list, rest: Any, j: int) -> Any:
        return prefix[j] if j < len(prefix) else rest

    out["prefixItems"] = [_both(at(prefix_a, rest_a, j), at(prefix_b, rest_b, j)) for j in range(width)]
    out["items"] = _both(rest_a, rest_b)
    return True


def element_parts(schema: dict) -> tuple[list, Any]:
    """``(prefix schemas, rest schema)`` of an array schema in either spelling."""
    items = schema.get("items", True)
    if isinstance(schema.get("prefixItems"), list):
        return schema["prefixItems"], items
    if isinstance(items, list):
        return items, schema.get("additionalItems", True)
    return [], items


def _both(x: Any, y: Any) -> Any:
    if x is True or x == {}:
        return y
    if y is True or y == {} or json_equal(x, y):
        return x
    return {"allOf": [x, y]}


def _has_keywords(schema: dict) -> bool:

    return any(k not in ANNOTATIONS for k in schema)


def _finite(schema: dict) -> list[Any] | None:
    if "const" in schema:
        return [schema["const"]]
    if isinstance(schema.get("enum"), list):
        return schema["enum"]
    return None


def _tagged_apart(a: dict, b: dict) -> bool:
    """Both objects require a property whose allowed values (const/enum) do not meet."""
    pa, pb = a.get("properties", {}), b.get("properties", {})
    if not isinstance(pa, dict) or not isinstance(pb, dict):
        return False
    required = set(a.get("required", []) or []) & set(b.get("required", []) or [])
    for name in required:
        sa, sb = pa.get(name), pb.get(name)
        if isinstance(sa, dict) and isinstance(sb, dict):
            va, vb = _finite(sa), _finite(sb)
            if va is not None and vb is not None and not any(json_equal(x, y) for x in va for y in vb):
                return True
    return False
