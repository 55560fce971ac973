"""``anyOf``, ``oneOf``, ``not`` and ``if``/``then``/``else`` rewritten away.

``anyOf`` distributes: the conjunction with ``anyOf: [A, B]`` is the choice of the conjunction
plus ``A`` and the conjunction plus ``B``. ``oneOf`` is the same choice when its branches are
provably disjoint (their types, their ``enum``/``const`` values, or the ``const``/``enum`` of a
property both require); otherwise it is refused, or approximated as ``anyOf`` under ``lenient``.
``not`` is rewritten when its schema is only about types or boolean; ``if`` without ``then`` and
``else`` has no effect. Everything else is refused.
"""

from __future__ import annotations

from itertools import combinations

from ...errors import GrammarError
from .refs import resolve_pointer
from .values import canonical

MAX_SHALLOW = 64
"""Schemas looked at (through ``allOf`` and ``$ref``) to prove two ``oneOf`` branches disjoint."""


def split(tr, parts: list) -> list | None:
    """The branches of the first ``anyOf``/``oneOf`` in ``parts`` (each a list of parts), or ``None``."""
    from .translate import schema_part

    for i, part in enumerate(parts):
        for keyword in ("anyOf", "oneOf"):
            if not part.has(keyword):
                continue
            subs = part.get(keyword)
            if not isinstance(subs, list) or not subs:
                raise GrammarError(f"{keyword} must be a non-empty array", pointer=part.at(keyword))
            rest = parts[:i] + [part.without(keyword)] + parts[i + 1:]
            branches = [rest + [schema_part(s, part.at(keyword, j))] for j, s in enumerate(subs)]
            if keyword == "oneOf" and not pairwise_disjoint(tr, subs, rest):
                tr.ctx.unsupported("oneOf", part.at("oneOf"), "its branches are not provably disjoint; "
                                   "use anyOf if at most one branch can match")
            return branches
    return None


def pairwise_disjoint(tr, subs: list, rest: list) -> bool:
    facts = [branch_facts(tr, [s] + [p.schema for p in rest]) for s in subs]
    return all(disjoint(a, b) for a, b in combinations(facts, 2))


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
    """``parts`` with ``not`` and ``if``/``then``/``else`` rewritten, or ``False`` (no value)."""
    from .translate import TYPES, Part

    out = []
    for part in parts:
        if part.has("if") and not (part.has("then") or part.has("else")):
            part = part.without("if")
        elif part.has("if"):
            tr.ctx.unsupported("if", part.at("if"), "if/then/else is only supported when it reduces to "
                               "a finite rewrite; express the cases with oneOf")
            part = part.without("if", "then", "else")
        elif part.has("then") or part.has("else"):
            part = part.without("then", "else")
        if part.has("not"):
            sub = part.get("not")
            if sub is True or sub == {}:
                return False
            types = excluded_types(sub)
            if sub is not False and types is None:
                tr.ctx.unsupported("not", part.at("not"), "only 'not' of a type (or of a boolean "
                                   "schema) is supported")
            elif types:
                out.append(Part({"type": [t for t in TYPES if t not in types]}, part.at("not")))
            part = part.without("not")
        out.append(part)
    return out


def excluded_types(sub: object):
    """The types that ``not: sub`` excludes when ``sub`` is only a ``type``; else ``None``."""
    if not isinstance(sub, dict):
        return None
    from .translate import VALIDATION_KEYWORDS

    if [k for k in sub if k in VALIDATION_KEYWORDS] != ["type"]:
        return None
    own = sub["type"]
    own = {own} if isinstance(own, str) else set(own) if isinstance(own, list) else None
    if own is None or ("integer" in own and "number" not in own):
        return None
    return own | ({"integer"} if "number" in own else set())
