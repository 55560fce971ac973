"""``anyOf``, ``oneOf``, ``not``, ``if``/``then``/``else`` and dependencies rewritten away.

``anyOf`` distributes: the conjunction with ``anyOf: [A, B]`` is the choice of the conjunction
plus ``A`` and the conjunction plus ``B``. ``oneOf`` is the same choice when its branches are
provably disjoint (their types, their ``enum``/``const`` values, the ``const``/``enum`` of a
property both require, or a required property the other forbids); two branches not proved
disjoint each get the negation of the other (:mod:`.negation`), and when that cannot be written
``oneOf`` is refused, or approximated as ``anyOf`` under ``lenient``. ``not X`` becomes the
negation of ``X``; ``if C then T else E`` becomes ``anyOf: [C ∧ T, ¬C ∧ E]``; ``if`` alone has no
effect. ``dependentRequired``/``dependentSchemas``/``dependencies`` become ``anyOf: [key absent,
dependency]`` per key.
"""

from __future__ import annotations

from itertools import combinations

from ...errors import GrammarError
from .negation import negate
from .refs import resolve_pointer
from .values import canonical

MAX_SHALLOW = 64
"""Schemas looked at (through ``allOf`` and ``$ref``) to prove two ``oneOf`` branches disjoint."""


def split(tr, parts: list) -> list | None:
    """The branches of the first ``anyOf``/``oneOf`` in ``parts`` (each a list of parts), or ``None``."""
    from .translate import schema_part

    _check_product(tr, parts)
    for i, part in enumerate(parts):
        for keyword in ("anyOf", "oneOf"):
            if not part.has(keyword):
                continue
            subs = part.get(keyword)
            if not isinstance(subs, list) or not subs:
                raise GrammarError(f"{keyword} must be a non-empty array", pointer=part.at(keyword))
            rest = parts[:i] + [part.without(keyword)] + parts[i + 1:]
            branches = [rest + [schema_part(s, part.at(keyword, j))] for j, s in enumerate(subs)]
            if keyword == "oneOf":
                return exclusive_branches(tr, part, subs, rest, branches)
            return branches
    return None


MAX_BRANCH_PRODUCT = 256
"""Combinations of the ``anyOf``/``oneOf`` lists (``if``, ``not`` and dependencies included) that
apply at one position; beyond it the keyword is refused rather than expanded."""


def _check_product(tr, parts: list) -> None:
    lists = [(p, k) for p in parts for k in ("anyOf", "oneOf") if p.has(k) and isinstance(p.get(k), list)]
    product = 1
    for part, keyword in lists:
        product *= max(len(part.get(keyword)), 1)
        if product > MAX_BRANCH_PRODUCT:
            tr.ctx.unsupported(keyword, part.at(keyword), f"with the other anyOf/oneOf/if/not/dependencies "
                               f"here it makes more than {MAX_BRANCH_PRODUCT} combinations")
            parts[parts.index(part)] = part.without(keyword)
            return _check_product(tr, parts)
    return None


def exclusive_branches(tr, part, subs: list, rest: list, branches: list) -> list:
    """The ``oneOf`` branches, each also excluding the branches it may overlap (by negation)."""
    from .translate import schema_part

    facts = [branch_facts(tr, [s] + [p.schema for p in rest]) for s in subs]
    for i, j in combinations(range(len(subs)), 2):
        if disjoint(facts[i], facts[j]):
            continue
        for mine, other in ((i, j), (j, i)):
            negated = negate(tr, subs[other])
            if negated is None:
                tr.ctx.unsupported("oneOf", part.at("oneOf"), f"branches {i} and {j} are not provably "
                                   "disjoint and cannot be negated; use anyOf if at most one can match")
                return branches
            branches[mine] = branches[mine] + [schema_part(negated, part.at("oneOf", other))]
    return branches


def shallow_schemas(tr, schemas: list) -> list:
    """``schemas`` with ``allOf`` and ``$ref`` followed (a bounded number of them)."""
    out, queue = [], list(schemas)
    while queue and len(out) < MAX_SHALLOW:
        schema = queue.pop(0)
        if not isinstance(schema, dict):
            out.append(schema)
            continue
        out.append(schema)
        if isinstance(schema.get("allOf"), list):
            queue.extend(schema["allOf"])
        if isinstance(schema.get("$ref"), str):
            try:
                queue.append(resolve_pointer(tr.refs.document, tr.refs.target(schema["$ref"], ""), ""))
            except GrammarError:
                pass
    return out


def branch_facts(tr, schemas: list) -> dict:
    """What a branch certainly requires: its possible types, its values (if an enum), and per
    required property the values it may take."""
    from .translate import TYPES

    types = set(TYPES)
    values = None
    required: set = set()
    prop_values: dict = {}
    closed = None
    for schema in shallow_schemas(tr, schemas):
        if schema is False:
            types = set()
            continue
        if not isinstance(schema, dict):
            continue
        own = schema.get("type")
        if isinstance(own, str):
            own = [own]
        if isinstance(own, list):
            own = set(own) | ({"integer"} if "number" in own else set()) | (
                {"null"} if schema.get("nullable") is True else set())
            types &= own
        found = const_values(schema)
        if found is not None:
            values = found if values is None else values & found
        if isinstance(schema.get("required"), list):
            required |= {r for r in schema["required"] if isinstance(r, str)}
        for name, sub in (schema.get("properties") or {}).items() if isinstance(schema.get("properties"), dict) else ():
            found = const_values(sub) if isinstance(sub, dict) else None
            if found is not None:
                prop_values[name] = found if name not in prop_values else prop_values[name] & found
        if schema.get("additionalProperties") is False and not schema.get("patternProperties"):
            names = set(schema.get("properties") or {})
            closed = names if closed is None else closed & names
    if values is not None:
        types &= {t for v in values for t in kinds_of(v)}
    return {"types": types, "values": values, "required": required, "props": prop_values, "closed": closed}


def kinds_of(key: tuple) -> tuple:
    return {"n": ("integer", "number"), "a": ("array",), "o": ("object",)}.get(key[0], (key[0],))


def const_values(schema: dict):
    if "const" in schema:
        return {canonical(schema["const"])}
    if isinstance(schema.get("enum"), list):
        return {canonical(v) for v in schema["enum"]}
    return None


def disjoint(a: dict, b: dict) -> bool:
    common = a["types"] & b["types"]
    if not common:
        return True
    if a["values"] is not None and b["values"] is not None and not a["values"] & b["values"]:
        return True
    if common - {"object"}:
        return False
    for name in a["required"] & b["required"]:
        if name in a["props"] and name in b["props"] and not a["props"][name] & b["props"][name]:
            return True
    return bool((b["closed"] is not None and a["required"] - b["closed"]) or
                (a["closed"] is not None and b["required"] - a["closed"]))


def apply_not_if(tr, parts: list):
    """``parts`` with ``not`` and ``if``/``then``/``else`` rewritten into parts (possibly with
    ``anyOf``), or ``False`` when no value can match."""
    from .translate import schema_part

    out, extra = [], []
    for part in parts:
        for keyword in DEPENDENCY_KEYWORDS:
            if part.has(keyword):
                extra += _dependencies(tr, part, keyword)
                part = part.without(keyword)
        if part.has("if") and (part.has("then") or part.has("else")):
            extra.append(_if_then_else(tr, part))
        part = part.without("if", "then", "else")
        if part.has("not"):
            negated = negate(tr, part.get("not"))
            if negated is None:
                tr.ctx.unsupported("not", part.at("not"), "only 'not' of type, required, properties, "
                                   "enum/const of strings, integers, booleans or null, counts, "
                                   "allOf/anyOf of those is supported")
            elif negated is False:
                return False
            else:
                extra.append(schema_part(negated, part.at("not")))
            part = part.without("not")
        out.append(part)
    out += extra  # after the schemas themselves, so their properties keep their declared order
    return [p for p in out if p is not True]


DEPENDENCY_KEYWORDS = ("dependencies", "dependentRequired", "dependentSchemas")
MAX_DEPENDENCIES = 4
"""Dependencies of one object: each one doubles the object's alternatives."""


def _dependencies(tr, part, keyword: str) -> list:
    """``dependentRequired``/``dependentSchemas`` (and draft 4–7 ``dependencies``) as parts:
    for each ``key``, ``anyOf: [key absent, the dependency]``."""
    from .translate import schema_part

    table = part.get(keyword)
    if not isinstance(table, dict):
        raise GrammarError(f"{keyword} must be an object", pointer=part.at(keyword))
    if len(table) > MAX_DEPENDENCIES:
        tr.ctx.unsupported(keyword, part.at(keyword), f"more than {MAX_DEPENDENCIES} dependencies in one "
                           "object")
        return []
    out = []
    for key, dependency in table.items():
        if isinstance(dependency, list):
            dependency = {"required": [key, *dependency]}
        elif isinstance(dependency, (dict, bool)):
            dependency = {"allOf": [{"required": [key]}, dependency]}
        else:
            raise GrammarError(f"{keyword} values must be arrays or schemas", pointer=part.at(keyword, key))
        out.append(schema_part({"anyOf": [{"properties": {key: False}}, dependency]}, part.at(keyword, key)))
    return out


def _if_then_else(tr, part):
    from .translate import schema_part

    condition = part.get("if")
    negated = negate(tr, condition)
    if negated is None:
        tr.ctx.unsupported("if", part.at("if"), "the negation of this 'if' schema cannot be written; "
                           "express the cases with oneOf")
        return True
    then = part.get("then", True)
    otherwise = part.get("else", True)
    return schema_part({"anyOf": [{"allOf": [condition, then]}, {"allOf": [negated, otherwise]}]},
                       part.at("if"))
