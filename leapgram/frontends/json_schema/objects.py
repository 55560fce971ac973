"""JSON objects: declared properties in order, other keys, counts (:class:`ObjectKeywords`).

Members follow the order of ``properties``, undeclared keys after them (``any_order=True``
allows every order); the rules walk the declared properties with the member count when
``minProperties``/``maxProperties`` ask for it. An undeclared key is a JSON string that is none
of the declared names, satisfies ``propertyNames`` and selects its value schema by the patterns
it matches (overlapping patterns split into disjoint key sets). Why this order and these states: docs/design/json-schema.md.
"""

from __future__ import annotations

import functools
from typing import Any

from ...errors import BudgetExceededError, GrammarError
from ...grammar.analysis import productive_nonterminals
from ...grammar.ir import Rule
from ...regex.expr import EMPTY
from .strings import STRING_KEYWORDS, literal_string, literal_text, string_universe
from .values import count_keyword, json_text, mapping_keyword

OBJECT_KEYWORDS = frozenset({"properties", "required", "additionalProperties", "patternProperties",
                             "propertyNames", "minProperties", "maxProperties"})
MAX_COUNT_STATES = 20_000  # declared properties times the count bound
MAX_TRACKED = 10  # any_order: properties whose use is tracked (2**10 states; 0.8 s to compile ten)
MAX_OVERLAPPING_PATTERNS = 4  # overlapping patternProperties split into up to 2**4 - 1 key sets
MAX_NAME_REFS = 32  # $ref hops inside one propertyNames schema (a cycle would not end)

State = tuple[int, int]  # (declared property or set of used ones, members written so far)


@functools.lru_cache(maxsize=4096)
def key_text(name: str) -> bytes:
    """A key as JSON text, quotes included (as ``json.dumps(name, ensure_ascii=False)``; schemas
    repeat the same names)."""
    return json_text(name).encode("utf-8")


@functools.lru_cache(maxsize=4096)
def key_spelling(name: str) -> tuple[bytes, bool]:
    """``key_text(name)``, and whether it is the name's one offered spelling: then
    :func:`literal_string` of the name is the literal of that text (most names)."""
    encoded = key_text(name)
    return encoded, encoded == literal_text(name)


class ObjectKeywords:
    """The object keywords of :class:`SchemaTranslator` (a mixin: ``self`` is the translator)."""

    def object_symbol(self, schema: dict, pointer: str) -> int | None:
        """The nonterminal of the objects ``schema`` allows, or ``None`` when there are none."""
        props = mapping_keyword(schema, "properties", pointer)
        required = _required(schema, pointer)
        low = count_keyword(schema, "minProperties", pointer, 0)
        high = count_keyword(schema, "maxProperties", pointer, None)
        names_expr = self.property_names_expr(schema, pointer)
        patterns = self.pattern_properties(schema, pointer) if "patternProperties" in schema else []
        members: list[tuple[tuple[int, ...], bool]] = []  # (member's symbols, required)
        declared = list(props)
        for name in required:
            if name not in props:
                declared.append(name)
        for name in declared:
            member = self.declared_member(schema, name, props, names_expr, patterns, pointer)
            if member is None:
                if name in required:
                    return None
                continue
            members.append((member, name in required))
        extra = self.extra_member(schema, declared, names_expr, patterns, pointer)
        if self.any_order:
            body = self.members_any_order(members, extra, low, high, pointer)
        else:
            body = self.members_in_order(members, extra, low, high, pointer)
        if body is None:
            return None
        builder = self.builder
        return builder.sequence([builder.literal("{"), *self.ows(), body, *self.ows(), builder.literal("}")],
                                hint="object")

    # ----- keys ---------------------------------------------------------------------------

    def property_names_expr(self, schema: dict, pointer: str) -> int | None:
        """The keys ``propertyNames`` allows, as a string expression (``None``: any key)."""
        names = schema.get("propertyNames")
        if names is None or names is True or names == {}:
            return None
        return self.string_set(names, f"{pointer}/propertyNames", 0)

    def string_set(self, schema: Any, pointer: str, hops: int) -> int:
        """The JSON strings (as text, quotes included) valid under ``schema``: the whole schema is
        read as a set of strings, since a key is one. ``type``, ``enum``/``const``, the string
        keywords, ``$ref``, ``allOf``, ``anyOf``, ``oneOf`` (exactly one branch), ``not`` and
        ``if``/``then``/``else`` are exact by intersection and complement within strings; keywords
        of other types (numbers, objects, arrays) and annotations say nothing about a string."""
        pool = self.pool
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
                self.ctx.unsupported("$ref", f"{pointer}/$ref", f"propertyNames follows at most {MAX_NAME_REFS} "
                                     "references (a cycle of references never reaches a string keyword)")
            else:
                target, at = self.refs.resolve(schema["$ref"], self.refs.base(schema), f"{pointer}/$ref")
                parts.append(self.string_set(target, at, hops + 1))
        if "string" not in self.types_of(schema, pointer):
            return self.string_set(False, pointer, hops)
        if "enum" in schema or "const" in schema:
            values = [v for v in self.enumerated_values(schema, pointer) if isinstance(v, str)]
            parts.append(pool.alt([literal_string(pool, v) for v in values]) if values
                         else self.string_set(False, pointer, hops))
        if any(k in schema for k in STRING_KEYWORDS):
            parts.append(self.scalar_expr(schema, pointer, "string"))
        branches = {key: _schema_list(schema, key, pointer) for key in ("allOf", "anyOf", "oneOf")}
        parts += [self.string_set(sub, f"{pointer}/allOf/{n}", hops) for n, sub in enumerate(branches["allOf"])]
        if branches["anyOf"]:
            parts.append(pool.alt([self.string_set(sub, f"{pointer}/anyOf/{n}", hops)
                                   for n, sub in enumerate(branches["anyOf"])]))
        if branches["oneOf"]:
            sets = [self.string_set(sub, f"{pointer}/oneOf/{n}", hops) for n, sub in enumerate(branches["oneOf"])]
            parts.append(pool.alt([pool.difference(x, pool.alt(sets[:n] + sets[n + 1:]))
                                   if len(sets) > 1 else x for n, x in enumerate(sets)]))
        if "not" in schema:
            parts.append(pool.difference(anything, self.string_set(schema["not"], f"{pointer}/not", hops)))
        if "if" in schema:
            condition = self.string_set(schema["if"], f"{pointer}/if", hops)
            then = self.string_set(schema.get("then", True), f"{pointer}/then", hops)
            otherwise = self.string_set(schema.get("else", True), f"{pointer}/else", hops)
            parts.append(pool.alt([pool.intersect([condition, then]),
                                   pool.intersect([anything, pool.complement(condition), otherwise])]))
        if not parts:
            return anything
        return parts[0] if len(parts) == 1 else pool.intersect(parts)

    def pattern_properties(self, schema: dict, pointer: str) -> list[tuple[str, int, Any]]:
        """``(pointer, key expression, value schema)`` of each ``patternProperties`` entry, the
        keys pairwise disjoint: patterns that may match one key are split (:meth:`_disjoint_patterns`)."""
        patterns = mapping_keyword(schema, "patternProperties", pointer)
        out = []
        for pattern, sub in patterns.items():
            at = f"{pointer}/patternProperties/{pattern.replace('~', '~0').replace('/', '~1')}"
            out.append((at, self.scalar_expr({"pattern": pattern}, at, "string"), sub))
        if all(self.provably_disjoint(out[i][1], out[j][1]) for i in range(len(out)) for j in range(i + 1, len(out))):
            return out
        if len(out) > MAX_OVERLAPPING_PATTERNS:
            self.ctx.unsupported("patternProperties", f"{pointer}/patternProperties",
                                 f"more than {MAX_OVERLAPPING_PATTERNS} patterns, two of which match the same key; "
                                 "merge them into fewer")
            return []
        return self._disjoint_patterns(out)

    def _disjoint_patterns(self, patterns: list[tuple[str, int, Any]]) -> list[tuple[str, int, Any]]:
        """Overlapping patterns as disjoint key sets: one per set of patterns that match together
        (the keys matching exactly those), with the ``allOf`` of their schemas."""
        pool = self.pool
        out = []
        for chosen in range(1, 1 << len(patterns)):
            inside = [p for i, p in enumerate(patterns) if chosen >> i & 1]
            outside = [p[1] for i, p in enumerate(patterns) if not chosen >> i & 1]
            expr = inside[0][1] if len(inside) == 1 else pool.intersect([p[1] for p in inside])
            if outside:
                expr = pool.difference(expr, pool.alt(outside))
            try:
                if pool.is_empty(expr):
                    continue
            except BudgetExceededError:
                pass
            schemas = [p[2] for p in inside]
            out.append((inside[0][0], expr, schemas[0] if len(schemas) == 1 else {"allOf": schemas}))
        return out

    def provably_disjoint(self, a: int, b: int) -> bool:
        try:
            return self.pool.is_empty(self.pool.intersect([a, b]))
        except BudgetExceededError:
            return False

    # ----- members ------------------------------------------------------------------------

    def declared_member(self, schema: dict, name: str, props: dict, names_expr: int | None,
                        patterns: list[tuple[str, int, Any]], pointer: str) -> tuple[int, ...] | None:
        """A declared property's member as the symbols the member states write in place: its
        key, the colon, its value (no nonterminal and rule of its own: one fewer per property,
        and one completion fewer per member in the parser); ``None`` when no value fits."""
        encoded, single = key_spelling(name)
        if names_expr is not None and not self.pool.matches(names_expr, encoded):
            return None
        key = self.pool.literal(encoded)
        if single:  # the name's string for extra_member, found without building it again
            self._name_strings[name] = key
        at = f"{pointer}/properties/{name.replace('~', '~0').replace('/', '~1')}"
        if patterns:
            parts = [props[name]] if name in props else []
            parts += [sub for _, expr, sub in patterns if self.pool.matches(expr, encoded)]
        else:
            parts = [props[name]] if name in props else None
        if not parts:  # required but undeclared: an additional property
            parts = [schema.get("additionalProperties", True)]
        value_schema = parts[0] if len(parts) == 1 else {"allOf": parts}
        value = self.value(value_schema, at)
        if value is None:
            return None
        return (self.builder.lexeme(f"key:{name}", key), *self.punct(":"), value)

    def extra_member(self, schema: dict, declared: list[str], names_expr: int | None,
                     patterns: list[tuple[str, int, Any]], pointer: str) -> int | None:
        """Members with keys the schema does not declare, or ``None`` when none are allowed."""
        additional = schema.get("additionalProperties", True)
        if additional is False and not patterns:  # (a quarter of objects: no key set to make)
            return None
        pool = self.pool
        keys = anything = string_universe(pool)  # a declared name is cut in every spelling (see string_universe)
        names = self._names_string(declared) if declared else EMPTY
        if declared:
            keys = pool.difference(keys, names)
        if names_expr is not None:
            keys = pool.intersect([keys, names_expr])
        alternatives = []
        for at, expr, sub in patterns:
            value = self.value(sub, at)
            among = keys  # a pattern that no name's spelling matches needs no cut (nor its states)
            if names != EMPTY and self.provably_disjoint(expr, names):
                among = anything if names_expr is None else pool.intersect([anything, names_expr])
            lexeme = self.string_lexeme(pool.intersect([among, expr]), f"key:{at}", check_empty=True)
            if value is not None and lexeme is not None:
                alternatives.append([lexeme, *self.punct(":"), value])
        value = self.value(additional, f"{pointer}/additionalProperties")
        if value is not None:
            rest = keys
            if patterns:
                pattern_keys = [expr for _, expr, _ in patterns]
                # a pattern that every key matches (``.*``, see ecma.py) leaves no key, with no search
                rest = EMPTY if anything in pattern_keys else pool.difference(keys, pool.alt(pattern_keys))
            # Every string but finitely many declared names is never empty: no search then.
            searched = bool(patterns) or names_expr is not None
            lexeme = self.string_lexeme(rest, f"key:{pointer}/additionalProperties", check_empty=searched)
            if lexeme is not None:
                alternatives.append([lexeme, *self.punct(":"), value])
        return self.builder.choice(alternatives, hint="extra") if alternatives else None

    def _names_string(self, names: list[str]) -> int:
        """The strings of ``names``, in every spelling."""
        strings = self._name_strings
        return self.pool.alt([strings[n] if n in strings else literal_string(self.pool, n) for n in names])

    def members_in_order(self, members: list[tuple[tuple[int, ...], bool]], extra: int | None, low: int,
                         high: int | None, pointer: str) -> int | None:
        """``N(0, 0)``: the members, declared ones in order, then extras, with counts."""
        required_count = sum(1 for _, is_required in members if is_required)
        if (high is not None and required_count > high) or (extra is None and low > len(members)):
            return None
        top = high if high is not None else max(low, 1)
        if (len(members) + 1) * (top + 1) > MAX_COUNT_STATES:
            self.ctx.unsupported("maxProperties" if high is not None else "minProperties", pointer,
                                 f"counting up to {top} members over {len(members)} properties is too large")
            low, high = 0, None
        if low == 0 and high is None:  # most objects: the count only says whether a separator comes
            return self.uncounted_member_rules(members, extra)
        return self.counted_members(_in_order_moves(members, extra, low), low, high)

    def members_any_order(self, members: list[tuple[tuple[int, ...], bool]], extra: int | None, low: int,
                          high: int | None, pointer: str) -> int | None:
        """Members in any order. With at most ``MAX_TRACKED`` declared properties the states are the
        sets of properties written so far (each at most once), with the count when bounds ask for
        it. With more, only the required ones are tracked and optional ones may repeat (Python's
        ``json`` keeps the last value of a repeated key, and every value is checked), which rules
        out count bounds."""
        tracked = [k for k, (_, req) in enumerate(members) if len(members) <= MAX_TRACKED or req]
        counted = (low or high is not None) and extra is not None  # the count is not the number of tracked ones
        if (len(tracked) > MAX_TRACKED or (len(tracked) < len(members) and (low or high is not None))
                or (counted and (1 << len(tracked)) * ((high or low) + 1) > MAX_COUNT_STATES)):
            if self.any_order == "auto":  # stricter than the schema, never looser: said in the warnings
                self.ctx.warnings.append(f"{pointer or '/'}: properties kept in declared order (any_order tracks at "
                                         f"most {MAX_TRACKED} required properties, and all of them under count bounds)")
            else:
                self.ctx.unsupported("properties", pointer, f"any_order tracks at most {MAX_TRACKED} required "
                                     "properties (and all of them when there are count bounds); use the declared "
                                     "order, or any_order='auto' to keep only such objects in declared order")
            return self.members_in_order(members, extra, low, high, pointer)
        free = [members[k][0] for k in range(len(members)) if k not in tracked]
        repeatable = [*free, *([(extra,)] if extra is not None else [])]
        if len(repeatable) > 1:  # one alternative: a chart where a member may follow holds one item for them all
            repeatable = [(self.builder.choice([list(items) for items in repeatable], hint="member"),)]
        needed = sum(1 << j for j, k in enumerate(tracked) if members[k][1])

        def moves(state: State, sep: list[int], after: int | None) -> list[list[Any]]:
            used, c = state
            alternatives = []
            if after is not None:
                for j, k in enumerate(tracked):
                    if not used >> j & 1:
                        alternatives.append([*sep, *members[k][0], (used | 1 << j, after)])
                alternatives += [[*sep, *items, (used, after)] for items in repeatable]
            if used & needed == needed and c >= low:
                alternatives.append([])
            return alternatives

        return self.counted_members(moves, low, high)

    def counted_members(self, moves, low: int, high: int | None) -> int | None:
        """The rules of the member states reachable from ``(0, 0)``: ``moves(state, sep, after)``
        lists a state's alternatives, given the separator before its next member and the count
        after it (``None`` past the maximum)."""
        bump = _counter(low, high)

        def step(state: State) -> list[list[Any]]:
            c = state[1]
            return moves(state, self.punct(",") if c else [], bump(c))

        return self.member_rules(_expand(step), (0, 0), every_state_ends=low == 0 and high is None)

    def member_rules(self, rules: dict[State, list[list[Any]]], root: State, *,
                     every_state_ends: bool) -> int | None:
        """Nonterminals for the states that can end, and the rules among them. Without a maximum or
        a minimum count (``every_state_ends``) every state can end: each one reaches the last by
        writing the members still required, and may end there. (Objects in declared order without
        count bounds take :meth:`uncounted_member_rules`, the same rules written directly.)"""
        builder = self.builder
        live = set(rules) if every_state_ends else live_states(rules)
        if root not in live:
            return None
        names = dict(zip(live, builder.fresh_nonterminals("members", len(live))))
        rule = builder.rule
        for key in live:
            loops, alternatives = [], []
            for alt in rules[key]:  # a state is only ever an alternative's last item
                if alt and type(alt[-1]) is tuple:
                    target = alt[-1]
                    if target == key:
                        loops.append(alt[:-1])
                    elif every_state_ends or target in live:  # (every state is live when every state ends)
                        alternatives.append([*alt[:-1], names[target]])
                else:
                    alternatives.append(alt)
            if loops:
                # S -> L S | A becomes S -> R A with R -> R L | ε: with left recursion the items of
                # every repetition wait at the chart where R began, so the charts after each member
                # have the same future and share their masks (right recursion nests one level deeper
                # per member, so no two of them would be equal).
                repeated = builder.fresh_nonterminal("repeated")
                rule(repeated, [])
                for alt in loops:
                    rule(repeated, [repeated, *alt])
                alternatives = [[repeated, *alt] for alt in alternatives]
            nt = names[key]
            for alt in alternatives:
                rule(nt, alt)
        return names[root]


    def uncounted_member_rules(self, members: list[tuple[tuple[int, ...], bool]], extra: int | None) -> int:
        """:meth:`member_rules` of ``_expand(_uncounted_step(members, extra, punct))`` (members in
        declared order, no count bounds: most objects), written without listing each state's
        alternatives first. The same nonterminals and rules in the same order: the states are
        numbered in the order of ``set`` over the states in ``_expand``'s order
        (:func:`_uncounted_states`), and each state's rules are the ones ``member_rules`` writes
        for the alternatives ``_uncounted_step`` lists, in that order.

        Why a second writer of those rules: it takes 0.5-0.8x the time of the general path
        (``counted_members``), 14 against 17 µs for 3 members and 40 against 74 µs for 20, on
        most objects of every schema's compile (round 22). ``test_member_states.py`` pins the
        three ways equal; a change to the rules ``member_rules`` writes goes to both."""
        builder = self.builder
        states = _uncounted_states(members, extra is not None)
        comma = self.punct(",") if states[-1][1] else ()  # asked for only where a state is after a member, as there
        live = set(dict.fromkeys(states))  # as set(rules) over _expand's dict
        names = dict(zip(live, builder.fresh_nonterminals("members", len(live))))
        last = len(members)
        rules: list[Rule] = []
        add = rules.append
        for key in live:
            i, c = key
            nt = names[key]
            before = comma if c else ()
            if i < last:
                member, is_required = members[i]
                add((nt, (*before, *member, names[i + 1, 1])))
                if not is_required:
                    add((nt, (names[i + 1, c],)))
            elif extra is None:
                add((nt, ()))
            elif c:  # (last, 1) loops on extras: S -> R with R -> R , M | ε (see member_rules)
                repeated = builder.fresh_nonterminal("repeated")
                add((repeated, ()))
                add((repeated, (repeated, *before, extra)))
                add((nt, (repeated,)))
            else:
                add((nt, (extra, names[i, 1])))
                add((nt, ()))
        builder.fresh_rules(rules)
        return names[0, 0]


def _uncounted_states(members: list[tuple[tuple[int, ...], bool]], extras: bool) -> list[State]:
    """The states ``_expand(_uncounted_step(members, extra, punct))`` reaches, in its order
    (depth first, the last target pushed popped first): the states ``(i, 0)`` up to the first
    required member ``r``, then ``(i, 1)`` from ``r + 1`` up to the last, then ``(i, 1)`` from
    ``r`` down to 1; with no required member, ``(i, 1)`` from the last down to 1, or ``(0, 1)``
    alone for an object without properties that allows extras."""
    last = len(members)
    first = next((i for i, (_, is_required) in enumerate(members) if is_required), last)
    states = [(i, 0) for i in range(first + 1)]
    if first < last:
        states += [(i, 1) for i in range(first + 1, last + 1)]
        states += [(i, 1) for i in range(first, 0, -1)]
    elif last:
        states += [(i, 1) for i in range(last, 0, -1)]
    elif extras:
        states.append((0, 1))
    return states


def _required(schema: dict, pointer: str) -> list[str]:
    value = schema.get("required", [])
    if isinstance(value, bool):  # draft 3 style, inside a property: ignored by later drafts
        return []
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise GrammarError("required must be an array of strings", pointer=f"{pointer}/required")
    return list(dict.fromkeys(value))


def _schema_list(schema: dict, keyword: str, pointer: str) -> list[Any]:
    value = schema.get(keyword, [])
    if not isinstance(value, list) or (keyword in schema and not value):
        raise GrammarError(f"{keyword} must be a non-empty array of schemas", pointer=f"{pointer}/{keyword}")
    return value


def _counter(low: int, high: int | None):
    """The member count after one more member: saturating when only a minimum matters,
    ``None`` past the maximum."""
    top = high if high is not None else max(low, 1)

    def bump(c: int) -> int | None:
        if c < top:
            return c + 1
        return None if high is not None else c

    return bump


def _in_order_moves(members: list[tuple[tuple[int, ...], bool]], extra: int | None, low: int):
    """The ``moves`` of :meth:`ObjectKeywords.counted_members` for members in declared order."""

    def moves(state: State, sep: list[int], after: int | None) -> list[list[Any]]:
        i, c = state
        alternatives = []
        if i == len(members):
            if extra is not None and after is not None:
                alternatives.append([*sep, extra, (i, after)])
            if c >= low:
                alternatives.append([])
        else:
            member, is_required = members[i]
            if after is not None:
                alternatives.append([*sep, *member, (i + 1, after)])
            if not is_required:
                alternatives.append([(i + 1, c)])
        return alternatives

    return moves


def _uncounted_step(members: list[tuple[tuple[int, ...], bool]], extra: int | None, punct):
    """The ``step`` of :meth:`ObjectKeywords.counted_members` for members in declared order
    without count bounds (``c`` is 1 once a member is written), in one call per state; the
    separator is asked for where it is written (``punct``), as there."""
    last = len(members)

    def step(state: State) -> list[list[Any]]:
        i, c = state
        before = punct(",") if c else ()
        if i == last:
            return [[*before, extra, (i, 1)], []] if extra is not None else [[]]
        member, is_required = members[i]
        if is_required:
            return [[*before, *member, (i + 1, 1)]]
        return [[*before, *member, (i + 1, 1)], [(i + 1, c)]]

    return step


def _expand(step) -> dict[State, list[list[Any]]]:
    """Every state reachable from ``(0, 0)`` with its alternatives (a state is a tuple, and only
    ever the last item of an alternative: ``moves`` writes them so)."""
    rules: dict[State, list[list[Any]]] = {}
    pending = [(0, 0)]
    while pending:
        key = pending.pop()
        if key not in rules:
            alternatives = rules[key] = step(key)
            pending += [alt[-1] for alt in alternatives if alt and type(alt[-1]) is tuple]
    return rules


def live_states(rules: dict[State, list[list[Any]]]) -> set[State]:
    """The states that can end (derive a finite member list): the productive nonterminals of
    the rules among states (linear; a fixpoint by passes was quadratic in the properties)."""
    keys = list(rules)
    index = {key: n for n, key in enumerate(keys)}
    among = [(index[key], tuple(index[x] for x in alt if isinstance(x, tuple)))
             for key, alternatives in rules.items() for alt in alternatives]
    return {keys[n] for n in productive_nonterminals(among)}
