"""JSON objects: declared properties in order, other keys, counts.

Members follow the order of ``properties``; keys the schema does not declare (allowed by
``additionalProperties``, default true, or by ``patternProperties``) come after them. That is the
order JSONSchemaBench's instances are written in and the order a model is asked for: with the
declared keys first, a required key right after ``{`` or ``,`` is forced, so it is fast-forwarded
instead of sampled. ``any_order=True`` allows every order. The rules walk the declared properties left to right, with the count of members
written so far when ``minProperties``/``maxProperties`` ask for it (``N(i, c)`` below), so the
grammar grows with properties times the count bound, never with their permutations.

An undeclared key is a JSON string that is none of the declared names (by complement in the
expression pool), satisfies ``propertyNames``, and selects its value schema by the pattern it
matches: patterns must be pairwise disjoint (else ``patternProperties`` is refused), and a key
matching none takes ``additionalProperties``. A declared key that matches a pattern must satisfy
both schemas.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING, Any

from ...errors import BudgetExceededError, GrammarError
from ...grammar.analysis import productive_nonterminals
from .strings import STRING_KEYWORDS, literal_string, string_universe
from .values import count_keyword

if TYPE_CHECKING:
    from .translate import SchemaTranslator

OBJECT_KEYWORDS = frozenset({"properties", "required", "additionalProperties", "patternProperties",
                             "propertyNames", "minProperties", "maxProperties"})
MAX_COUNT_STATES = 20_000  # declared properties times the count bound
MAX_TRACKED = 6  # any_order: properties whose use is tracked (2**6 states)


def object_symbol(t: SchemaTranslator, schema: dict, pointer: str) -> int | None:
    """The nonterminal of the objects ``schema`` allows, or ``None`` when there are none."""
    props = _mapping(schema, "properties", pointer)
    required = _required(schema, pointer)
    low = count_keyword(schema, "minProperties", pointer, 0)
    high = count_keyword(schema, "maxProperties", pointer, None)
    names_expr = _names_expr(t, schema, pointer)
    patterns = _pattern_exprs(t, schema, pointer)
    members: list[tuple[int, bool]] = []  # (member symbol, required)
    declared = list(props)
    for name in required:
        if name not in props:
            declared.append(name)
    for name in declared:
        member = _declared_member(t, schema, name, props, names_expr, patterns, pointer)
        if member is None:
            if name in required:
                return None
            continue
        members.append((member, name in required))
    extra = _extra_member(t, schema, declared, names_expr, patterns, pointer)
    if t.any_order:
        body = _members_any_order(t, members, extra, low, high, pointer)
    else:
        body = _members(t, members, extra, low, high, pointer)
    if body is None:
        return None
    b = t.b
    return b.sequence([b.literal("{"), *t.ows(), body, *t.ows(), b.literal("}")], hint="object")


def _mapping(schema: dict, keyword: str, pointer: str) -> dict:
    value = schema.get(keyword, {})
    if not isinstance(value, dict):
        raise GrammarError(f"{keyword} must be an object", pointer=f"{pointer}/{keyword}")
    return value


def _required(schema: dict, pointer: str) -> list[str]:
    value = schema.get("required", [])
    if isinstance(value, bool):  # draft 3 style, inside a property: ignored by later drafts
        return []
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise GrammarError("required must be an array of strings", pointer=f"{pointer}/required")
    return list(dict.fromkeys(value))



@functools.lru_cache(maxsize=4096)
def key_text(name: str) -> bytes:
    """A key as JSON text, quotes included (as ``json.dumps(name, ensure_ascii=False)``; schemas
    repeat the same names)."""
    return json.dumps(name, ensure_ascii=False).encode("utf-8")


def _names_expr(t: SchemaTranslator, schema: dict, pointer: str) -> int | None:
    """The keys ``propertyNames`` allows, as a string expression (``None``: any key)."""
    names = schema.get("propertyNames")
    if names is None or names is True or names == {}:
        return None
    return _string_set(t, names, f"{pointer}/propertyNames", 0)


MAX_NAME_REFS = 32  # $ref hops inside one propertyNames schema (a cycle would not end)


def _string_set(t: SchemaTranslator, schema: Any, pointer: str, hops: int) -> int:
    """The JSON strings (as text, quotes included) valid under ``schema``: the whole schema is
    read as a set of strings, since a key is one. ``type``, ``enum``/``const``, the string
    keywords, ``$ref``, ``allOf``, ``anyOf``, ``oneOf`` (exactly one branch), ``not`` and
    ``if``/``then``/``else`` are exact by intersection and complement within strings; keywords
    of other types (numbers, objects, arrays) and annotations say nothing about a string."""
    pool = t.pool
    anything = string_universe(pool)  # complements below are exact on values (see string_universe)
    if schema is True:
        return anything
    if schema is False:
        return pool.difference(anything, anything)
    if not isinstance(schema, dict):
        raise GrammarError("a schema must be an object or a boolean", pointer=pointer)
    parts: list[int] = []
    if "$ref" in schema:
        if hops >= MAX_NAME_REFS:
            t.ctx.unsupported("$ref", f"{pointer}/$ref", f"propertyNames follows at most {MAX_NAME_REFS} references "
                              "(a cycle of references never reaches a string keyword)")
        else:
            target, at = t.refs.resolve(schema["$ref"], t.refs.base(schema), f"{pointer}/$ref")
            parts.append(_string_set(t, target, at, hops + 1))
    if "string" not in t.types_of(schema, pointer):
        return _string_set(t, False, pointer, hops)
    if "enum" in schema or "const" in schema:
        values = [v for v in t.enumerated_values(schema, pointer) if isinstance(v, str)]
        parts.append(pool.alt([literal_string(pool, v) for v in values]) if values else _string_set(t, False, pointer, hops))
    if any(k in schema for k in STRING_KEYWORDS):
        parts.append(t.scalar_expr(schema, pointer, "string"))
    branches = {key: _schema_list(schema, key, pointer) for key in ("allOf", "anyOf", "oneOf")}
    parts += [_string_set(t, sub, f"{pointer}/allOf/{n}", hops) for n, sub in enumerate(branches["allOf"])]
    if branches["anyOf"]:
        parts.append(pool.alt([_string_set(t, sub, f"{pointer}/anyOf/{n}", hops)
                               for n, sub in enumerate(branches["anyOf"])]))
    if branches["oneOf"]:
        sets = [_string_set(t, sub, f"{pointer}/oneOf/{n}", hops) for n, sub in enumerate(branches["oneOf"])]
        parts.append(pool.alt([pool.difference(x, pool.alt(sets[:n] + sets[n + 1:]))
                               if len(sets) > 1 else x for n, x in enumerate(sets)]))
    if "not" in schema:
        parts.append(pool.difference(anything, _string_set(t, schema["not"], f"{pointer}/not", hops)))
    if "if" in schema:
        condition = _string_set(t, schema["if"], f"{pointer}/if", hops)
        then = _string_set(t, schema.get("then", True), f"{pointer}/then", hops)
        otherwise = _string_set(t, schema.get("else", True), f"{pointer}/else", hops)
        parts.append(pool.alt([pool.intersect([condition, then]),
                               pool.intersect([anything, pool.complement(condition), otherwise])]))
    if not parts:
        return anything
    return parts[0] if len(parts) == 1 else pool.intersect(parts)


def _schema_list(schema: dict, keyword: str, pointer: str) -> list[Any]:
    value = schema.get(keyword, [])
    if not isinstance(value, list) or (keyword in schema and not value):
        raise GrammarError(f"{keyword} must be a non-empty array of schemas", pointer=f"{pointer}/{keyword}")
    return value


def _pattern_exprs(t: SchemaTranslator, schema: dict, pointer: str) -> list[tuple[str, int, Any]]:
    patterns = _mapping(schema, "patternProperties", pointer)
    out = []
    for pattern, sub in patterns.items():
        at = f"{pointer}/patternProperties/{pattern.replace('~', '~0').replace('/', '~1')}"
        out.append((at, t.scalar_expr({"pattern": pattern}, at, "string"), sub))
    for i in range(len(out)):
        for j in range(i + 1, len(out)):
            if not _provably_disjoint(t, out[i][1], out[j][1]):
                t.ctx.unsupported("patternProperties", f"{pointer}/patternProperties",
                                  "two patterns match the same key; merge them into one")
                return []
    return out


def _provably_disjoint(t: SchemaTranslator, a: int, b: int) -> bool:
    try:
        return t.pool.is_empty(t.pool.intersect([a, b]))
    except BudgetExceededError:
        return False


def _declared_member(t: SchemaTranslator, schema: dict, name: str, props: dict, names_expr: int | None,
                     patterns: list[tuple[str, int, Any]], pointer: str) -> int | None:
    encoded = key_text(name)
    if names_expr is not None and not t.pool.matches(names_expr, encoded):
        return None
    key = t.pool.literal(encoded)
    at = f"{pointer}/properties/{name.replace('~', '~0').replace('/', '~1')}"
    parts = [props[name]] if name in props else []
    matched = [sub for _, expr, sub in patterns if t.pool.matches(expr, encoded)]
    parts += matched
    if not parts:  # required but undeclared: an additional property
        additional = schema.get("additionalProperties", True)
        parts = [additional]
    value_schema = parts[0] if len(parts) == 1 else {"allOf": parts}
    value = t.value(value_schema, at)
    if value is None:
        return None
    return t.b.sequence([t.b.lexeme(f"key:{name}", key), *t.punct(":"), value], hint="member")


def _extra_member(t: SchemaTranslator, schema: dict, declared: list[str], names_expr: int | None,
                  patterns: list[tuple[str, int, Any]], pointer: str) -> int | None:
    """Members with keys the schema does not declare, or ``None`` when none are allowed."""
    pool = t.pool
    keys = string_universe(pool)  # a declared name is cut in every spelling (see string_universe)
    if declared:
        keys = pool.difference(keys, pool.alt([literal_string(pool, n) for n in declared]))
    if names_expr is not None:
        keys = pool.intersect([keys, names_expr])
    alternatives = []
    for at, expr, sub in patterns:
        value = t.value(sub, at)
        lexeme = t.string_lexeme(pool.intersect([keys, expr]), f"key:{at}", check_empty=True)
        if value is not None and lexeme is not None:
            alternatives.append([lexeme, *t.punct(":"), value])
    additional = schema.get("additionalProperties", True)
    value = t.value(additional, f"{pointer}/additionalProperties")
    if value is not None:
        rest = keys
        if patterns:
            rest = pool.difference(keys, pool.alt([expr for _, expr, _ in patterns]))
        # Every string but finitely many declared names is never empty: no search then.
        searched = bool(patterns) or names_expr is not None
        lexeme = t.string_lexeme(rest, f"key:{pointer}/additionalProperties", check_empty=searched)
        if lexeme is not None:
            alternatives.append([lexeme, *t.punct(":"), value])
    return t.b.choice(alternatives, hint="extra") if alternatives else None


def _members(t: SchemaTranslator, members: list[tuple[int, bool]], extra: int | None, low: int,
             high: int | None, pointer: str) -> int | None:
    """``N(0, 0)``: the members, declared ones in order, then extras, with counts."""
    required_count = sum(1 for _, is_required in members if is_required)
    if (high is not None and required_count > high) or (extra is None and low > len(members)):
        return None
    top = high if high is not None else max(low, 1)
    if (len(members) + 1) * (top + 1) > MAX_COUNT_STATES:
        t.ctx.unsupported("maxProperties" if high is not None else "minProperties", pointer,
                          f"counting up to {top} members over {len(members)} properties is too large")
        top, low, high = 1, 0, None
    bump = _counter(low, high)

    def step(state: tuple[int, int]) -> list[list[Any]]:
        i, c = state
        sep = t.punct(",") if c else []
        after = bump(c)
        alternatives = []
        if i == len(members):
            if extra is not None and after is not None:
                alternatives.append([*sep, extra, (i, after)])
            if c >= low:
                alternatives.append([])
        else:
            member, is_required = members[i]
            if after is not None:
                alternatives.append([*sep, member, (i + 1, after)])
            if not is_required:
                alternatives.append([(i + 1, c)])
        return alternatives

    return _emit(t, _expand(step), (0, 0), every_state_ends=low == 0 and high is None)


def _counter(low: int, high: int | None):
    """The member count after one more member: saturating when only a minimum matters,
    ``None`` past the maximum."""
    top = high if high is not None else max(low, 1)

    def bump(c: int) -> int | None:
        if c < top:
            return c + 1
        return None if high is not None else c

    return bump


def _expand(step) -> dict[tuple[int, int], list[list[Any]]]:
    """Every state reachable from ``(0, 0)`` with its alternatives (states inside them are tuples)."""
    rules: dict[tuple[int, int], list[list[Any]]] = {}
    pending = [(0, 0)]
    while pending:
        key = pending.pop()
        if key not in rules:
            rules[key] = step(key)
            pending += [x for alt in rules[key] for x in alt if isinstance(x, tuple)]
    return rules


def _emit(t: SchemaTranslator, rules: dict[tuple[int, int], list[list[Any]]], root: tuple[int, int], *,
          every_state_ends: bool) -> int | None:
    """Nonterminals for the states that can end, and the rules among them. Without a maximum or
    a minimum count (``every_state_ends``) every state can end: each one reaches the last by
    writing the members still required, and may end there."""
    live = set(rules) if every_state_ends else _live_states(rules)
    if root not in live:
        return None
    names = {key: t.b.fresh_nonterminal("members") for key in live}

    def symbols(alt: list[Any]) -> list[int]:
        return [names[x] if isinstance(x, tuple) else x for x in alt]

    for key in live:
        loops, alternatives = [], []
        for alt in rules[key]:
            if all(not isinstance(x, tuple) or x in live for x in alt):
                (loops if alt and alt[-1] == key else alternatives).append(alt)
        if loops:
            # S -> L S | A becomes S -> R A with R -> R L | ε: with left recursion the items of
            # every repetition wait at the chart where R began, so the charts after each member
            # have the same future and share their masks (right recursion nests one level deeper
            # per member, so no two of them would be equal).
            repeated = t.b.fresh_nonterminal("repeated")
            t.b.rule(repeated, [])
            for alt in loops:
                t.b.rule(repeated, [repeated, *symbols(alt[:-1])])
            alternatives = [[repeated, *alt] for alt in alternatives]
        for alt in alternatives:
            t.b.rule(names[key], symbols(alt))
    return names[root]


def _members_any_order(t: SchemaTranslator, members: list[tuple[int, bool]], extra: int | None, low: int,
                       high: int | None, pointer: str) -> int | None:
    """Members in any order. With at most ``MAX_TRACKED`` declared properties the states are the
    sets of properties written so far (each at most once), with the count when bounds ask for
    it. With more, only the required ones are tracked and optional ones may repeat (Python's
    ``json`` keeps the last value of a repeated key, and every value is checked), which rules
    out count bounds."""
    tracked = [k for k, (_, req) in enumerate(members) if len(members) <= MAX_TRACKED or req]
    if len(tracked) > MAX_TRACKED or (len(tracked) < len(members) and (low or high is not None)):
        if t.any_order == "auto":  # stricter than the schema, never looser: said in the warnings
            t.ctx.warnings.append(f"{pointer or '/'}: properties kept in declared order (any_order tracks at most "
                                  f"{MAX_TRACKED} required properties, and all of them under count bounds)")
        else:
            t.ctx.unsupported("properties", pointer, f"any_order tracks at most {MAX_TRACKED} required properties "
                              "(and all of them when there are count bounds); use the declared order, or "
                              "any_order='auto' to keep only such objects in declared order")
        return _members(t, members, extra, low, high, pointer)
    free = [members[k][0] for k in range(len(members)) if k not in tracked]
    repeatable = [*free, *([extra] if extra is not None else [])]
    if len(repeatable) > 1:  # one alternative: a chart where a member may follow holds one item for them all
        repeatable = [t.b.choice([[symbol] for symbol in repeatable], hint="member")]
    needed = sum(1 << j for j, k in enumerate(tracked) if members[k][1])
    bump = _counter(low, high)

    def step(state: tuple[int, int]) -> list[list[Any]]:
        used, c = state
        sep = t.punct(",") if c else []
        after = bump(c)
        alternatives = []
        if after is not None:
            for j, k in enumerate(tracked):
                if not used >> j & 1:
                    alternatives.append([*sep, members[k][0], (used | 1 << j, after)])
            alternatives += [[*sep, symbol, (used, after)] for symbol in repeatable]
        if used & needed == needed and c >= low:
            alternatives.append([])
        return alternatives

    return _emit(t, _expand(step), (0, 0), every_state_ends=low == 0 and high is None)


def _live_states(rules: dict[tuple[int, int], list[list[Any]]]) -> set[tuple[int, int]]:
    """The states that can end (derive a finite member list): the productive nonterminals of
    the rules among states (linear; a fixpoint by passes was quadratic in the properties)."""
    keys = list(rules)
    index = {key: n for n, key in enumerate(keys)}
    among = [(index[key], tuple(index[x] for x in alt if isinstance(x, tuple)))
             for key, alternatives in rules.items() for alt in alternatives]
    return {keys[n] for n in productive_nonterminals(among)}
