"""JSON Schema -> grammar IR: the dispatcher over schema kinds.

Each subschema becomes one nonterminal (memoized by :meth:`SchemaTranslator.schema_key`: object
identity for the document's subschemas, so ``$ref`` recursion becomes a recursive rule, and
structure for the schemas the translator composes). A schema applies its keywords by the JSON type of the value: the
value is any of the allowed types, each with the keywords that constrain that type (a schema
without ``type`` allows every type, as the specification says). Strings and numbers are single
lexemes (``strings.py``, ``numbers.py``); objects, arrays and combinations are rules
(``objects.py``, ``arrays.py``, ``combinators.py``).

Whitespace: ``flexible`` allows a run of at most ``max_ws`` JSON whitespace bytes around every
``{ } [ ] , :`` (what ``json.dumps`` with or without ``indent`` writes), none before or after the
whole value; ``compact`` allows none. A bounded run means a model can never loop on whitespace.
A pair of separators (``(", ", ": ")``, as ``json.dumps(separators=...)`` takes them; ``"dumps"``
is ``json.dumps``'s default pair) fixes one single-line layout: no whitespace anywhere else, so
every separator is forced and can be fast-forwarded.
"""

from __future__ import annotations

import json
from typing import Any

from ...errors import BudgetExceededError, GrammarError, UnsupportedError
from ...grammar.builder import GrammarBuilder
from ...grammar.ir import GrammarIR
from ...limits import Limits
from . import arrays, combinators, negation, objects, unevaluated
from .common import schema_pool, whitespace_expr
from .context import ANNOTATIONS, SchemaContext
from .dialects import for_draft
from .numbers import NUMBER_KEYWORDS, number_expr
from .refs import RefResolver
from .strings import STRING_KEYWORDS, literal_string, string_expr, string_universe
from .values import json_equal, json_type, scalar_spellings, unique_values

TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")

# Keywords with a validation meaning that this front end does not translate.
REFUSED = {
    "$dynamicRef": "exact only where one $dynamicAnchor has its name; use $ref", "$recursiveRef": "use $ref",
    "contentSchema": "pass lenient=True to skip it",
}

WHITESPACE = rb"[ \t\n\r]"
DEFAULT_MAX_WS = 20


Whitespace = str | int | tuple[str, str]


def _draft(dialect: Any) -> int | None:
    """The draft a ``$schema`` names (3, 4, 6, 7, 2019 or 2020); ``None`` when it names none."""
    if not isinstance(dialect, str):
        return None
    for draft in (3, 4, 6, 7):
        if f"draft-0{draft}" in dialect:
            return draft
    for draft in (2019, 2020):
        if f"/{draft}-" in dialect:
            return draft
    return None


def _separators(pair: tuple[str, str] | list[str]) -> dict[str, str]:
    """``{",": item separator, ":": key separator}`` from a ``json.dumps``-style pair."""
    if len(pair) != 2 or not all(isinstance(x, str) for x in pair):
        raise ValueError(f"separators must be two strings such as (', ', ': '), not {pair!r}")
    found = {}
    for text, punct in zip(pair, ",:"):
        if text.strip(" \t\n\r") != punct:
            raise ValueError(f"separator {text!r} must be {punct!r} with JSON whitespace around it")
        found[punct] = text
    return found


class SchemaTranslator:
    """Translates one schema document; :meth:`build` returns the IR."""

    def __init__(self, root: Any, *, whitespace: Whitespace = "flexible", lenient: bool = False,
                 any_order: bool | str = False, limits: Limits, builder: GrammarBuilder | None = None) -> None:
        self.root = root
        self.ctx = SchemaContext(builder.pool if builder else schema_pool(limits), lenient)
        self.pool = self.ctx.pool
        self.b = builder or GrammarBuilder(limits, pool=self.pool)
        dialect = root.get("$schema", "") if isinstance(root, dict) else ""
        self.draft = _draft(dialect)
        self.root = root = for_draft(root, self.draft)
        self.refs = RefResolver(root)
        self.any_order = any_order
        self._memo: dict[Any, int | None] = {}  # by schema_key, which keeps composed schemas alive
        self._composed_keys: dict[int, tuple[Any, int]] = {}
        self._shapes: dict[tuple, int] = {}
        self._composed: dict[tuple, Any] = {}
        self._separators: dict[str, str] = {}
        self._ws = self._whitespace(whitespace)
        self._any: int | None = None
        self._any_string: int | None = None
        self._scalar_exprs: dict[tuple[str, str], int] = {}
        self._enum_symbols: dict[tuple[str, tuple[str, ...]], list[int]] = {}
        self._ref_overrides = self.draft is not None and self.draft <= 7
        self.negations: dict[int, tuple[Any, Any]] = {}
        self._overflow: str | None = None

    def build(self) -> GrammarIR:
        start = self.b.nonterminal("start")
        self.b.rule(start, [self.top_symbol()])
        return self.b.build(start)

    def top_symbol(self) -> int:
        """The symbol of the whole document's values, in the builder (shared or own). A schema
        nested deeper than Python's recursion allows (subschemas in subschemas, or a long chain
        of ``$ref``) is an :class:`UnsupportedError` at the pointer where the translation stopped."""
        try:
            top = self.value(self.root, "")
        except RecursionError:
            raise UnsupportedError("nesting", "the schema nests subschemas (in each other or through $ref "
                                   "chains) deeper than the translator's recursion allows; flatten it",
                                   pointer=self._overflow or "") from None
        if top is None:
            raise GrammarError("the schema matches no JSON value", pointer="")
        return top

    # ----- tokens -------------------------------------------------------------------------

    def _whitespace(self, whitespace: Whitespace) -> int | None:
        if whitespace == "dumps":
            whitespace = (", ", ": ")
        if isinstance(whitespace, (tuple, list)):
            self._separators = _separators(whitespace)
            return None
        if whitespace == "compact":
            return None
        if whitespace == "flexible":
            run = DEFAULT_MAX_WS
        elif isinstance(whitespace, int) and not isinstance(whitespace, bool) and whitespace >= 0:
            run = whitespace
        else:
            raise ValueError("whitespace must be 'flexible', 'compact', 'dumps', a maximum run length or a pair "
                             f"of separators such as (', ', ': '), not {whitespace!r}")
        if run == 0:
            return None
        ws = whitespace_expr(self.pool, run)
        return self.b.optional([self.b.lexeme("WS", ws)], hint="ws")

    def ows(self) -> list[int]:
        """Optional whitespace (nothing in compact mode)."""
        return [] if self._ws is None else [self._ws]

    def punct(self, text: str) -> list[int]:
        """``text`` with optional whitespace on both sides, or its fixed separator."""
        if self._separators:
            return [self.b.literal(self._separators[text])]
        return [*self.ows(), self.b.literal(text), *self.ows()]

    def string_lexeme(self, expr: int, name: str, *, check_empty: bool = False) -> int | None:
        """The lexeme of ``expr``; with ``check_empty``, ``None`` when it provably matches
        nothing (a search within ``Limits.max_emptiness_steps``; past it, kept). Value lexemes
        are not checked: a large ``pattern`` ∩ ``maxLength`` costs seconds to prove non-empty, and
        an empty lexeme only never matches."""
        if check_empty:
            try:
                if self.pool.is_empty(expr):
                    return None
            except BudgetExceededError:
                pass
        return self.b.lexeme(name, expr)

    def any_string_expr(self) -> int:
        if self._any_string is None:
            self._any_string = string_expr(self.ctx, {}, "")
        return self._any_string

    # ----- values -------------------------------------------------------------------------

    def value(self, schema: Any, pointer: str) -> int | None:
        """The nonterminal of the values valid under ``schema``; ``None`` when there are none."""
        if schema is True or schema == {}:
            return self.any_value()
        if schema is False:
            return None
        if not isinstance(schema, dict):
            raise GrammarError(f"a schema must be an object or a boolean, not {type(schema).__name__}",
                               pointer=pointer)
        key = self.schema_key(schema)
        if key in self._memo:
            return self._memo[key]
        nt = self._memo[key] = self.b.fresh_nonterminal(f"schema:{pointer or '/'}")  # fresh: unique in a shared builder
        try:
            alternatives = self._alternatives(schema, pointer)
        except RecursionError:
            self.note_overflow(pointer)
            raise
        if not alternatives:
            self._memo[key] = None
            return None
        for symbol in alternatives:
            self.b.rule(nt, [symbol])
        return nt

    def note_overflow(self, pointer: str) -> None:
        """Remember the innermost ``pointer`` a RecursionError passed through (see top_symbol)."""
        if self._overflow is None:
            self._overflow = pointer

    def schema_key(self, schema: Any) -> Any:
        """A hashable name for what ``schema`` means in this document: a subschema of the
        document by its identity, one the translator composed (allOf merging, negation, the
        parts of a conditional) by its structure over such identities, so composing the same
        parts again finds the first translation. Composed dicts and lists get small negative
        ints (kept with the object while the translator lives), so a key never nests."""
        if not isinstance(schema, (dict, list)):
            return (type(schema), schema)
        if id(schema) in self.refs.base_of:
            return id(schema)
        found = self._composed_keys.get(id(schema))
        if found is not None and found[0] is schema:
            return found[1]
        key_of = self.schema_key  # strings (most values: descriptions, names) stand for themselves
        if isinstance(schema, dict):
            shape = ("{", *((k, v if type(v) is str else key_of(v)) for k, v in schema.items()))
        else:
            shape = ("[", *(v if type(v) is str else key_of(v) for v in schema))
        key = self._shapes.setdefault(shape, -1 - len(self._shapes))
        self._composed_keys[id(schema)] = (schema, key)
        return key

    def composed(self, step: str, schemas: tuple, make) -> Any:
        """The schema that ``step`` (``"merge"``, ``"resolved"``) composes from ``schemas``,
        made by ``make()`` the first time for schemas with these keys (a warning, under
        ``lenient``, names the first place only). Never modified after, so it may be shared."""
        key = (step, *map(self.schema_key, schemas))
        if key not in self._composed:
            self._composed[key] = make()
        return self._composed[key]

    def derived(self, step: str, schema: dict, make) -> Any:
        """:meth:`composed` for a rewrite of one document subschema that keeps its base URI, so
        relative references in it resolve where they stand (the result lives with the translator)."""
        out = self.composed(step, (schema,), make)
        if isinstance(out, dict) and out is not schema:
            self.refs.base_of.setdefault(id(out), self.refs.base(schema))
        return out

    def _alternatives(self, schema: dict, pointer: str) -> list[int]:
        if "$dynamicRef" in schema and "$ref" not in schema and self.refs.is_static(schema["$dynamicRef"]):
            schema = self.derived("static", schema, lambda: {
                ("$ref" if k == "$dynamicRef" else k): v for k, v in schema.items()})
        if "unevaluatedProperties" in schema or "unevaluatedItems" in schema:
            schema = unevaluated.rewrite(self, schema, pointer)
        self._check_keywords(schema, pointer)
        if "$ref" in schema:
            return self._ref(schema, pointer)
        if any(k in schema for k in negation.CONDITIONAL_KEYWORDS):
            return self._alternatives_of(combinators.expand_conditionals(self, schema, pointer), pointer)
        if "allOf" in schema:
            merged = combinators.merge_all_of(self, schema, pointer)
            return [] if merged is False else self._alternatives_of(merged, pointer)
        if "anyOf" in schema or "oneOf" in schema:
            return combinators.union(self, schema, pointer)
        if "not" in schema:
            schema = combinators.apply_not(self, schema, pointer)
            if schema is False:
                return []
            if schema is True or any(k in schema for k in ("allOf", "anyOf", "oneOf", "not")):
                return self._alternatives_of(schema, pointer)
        return self._typed(schema, pointer)

    def _alternatives_of(self, schema: Any, pointer: str) -> list[int]:
        symbol = self.value(schema, pointer)
        return [] if symbol is None else [symbol]

    def _ref(self, schema: dict, pointer: str) -> list[int]:
        try:
            target, target_pointer = self.refs.resolve(schema["$ref"], self.refs.base(schema), f"{pointer}/$ref")
        except UnsupportedError as err:
            self.ctx.unsupported("$ref", f"{pointer}/$ref", err.message.split(": ", 1)[-1])
            target, target_pointer = True, f"{pointer}/$ref"
        siblings = {k: v for k, v in schema.items() if k != "$ref" and k not in ANNOTATIONS}
        if not siblings or self._ref_overrides:  # drafts 3 to 7: keywords beside $ref are ignored
            return self._alternatives_of(target, target_pointer)
        parts = [target, siblings] if combinators.keyword_first(schema, "$ref") else [siblings, target]
        return self._alternatives_of({"allOf": parts}, pointer)

    def _check_keywords(self, schema: dict, pointer: str) -> None:
        for keyword, advice in REFUSED.items():
            if keyword in schema:
                self.ctx.unsupported(keyword, f"{pointer}/{keyword}", advice)
                if keyword == "if":
                    for branch in ("then", "else"):
                        if branch in schema:
                            self.ctx.warnings.append(f"{pointer}/{branch}: ignored with 'if'")

    # ----- by type ------------------------------------------------------------------------

    def resolved(self, schema: Any, pointer: str) -> Any:
        """``schema`` with its ``$ref`` and combinators merged into one schema where exact."""
        return combinators._resolved(self, schema, pointer)

    def excluded(self, schema: dict, values: list[Any], pointer: str) -> dict | bool:
        """``schema`` minus the scalar ``values``."""
        return combinators._exclude(self, schema, values, pointer)

    def types_of(self, schema: dict, pointer: str) -> set[str]:
        """The JSON types ``schema`` allows (``integer`` only when ``number`` is absent)."""
        declared = schema.get("type")
        if declared is None:
            types = set(TYPES) - {"integer"}
        else:
            names = [declared] if isinstance(declared, str) else declared
            if not isinstance(names, list) or not all(isinstance(n, str) and n in TYPES for n in names):
                raise GrammarError(f"type must be one of {', '.join(TYPES)} or a list of them, not {declared!r}",
                                   pointer=f"{pointer}/type")
            types = set(names)
            if "number" in types:
                types.discard("integer")
        if schema.get("nullable") is True:
            types.add("null")
        return types

    def _typed(self, schema: dict, pointer: str) -> list[int]:
        types = self.types_of(schema, pointer)
        if "const" in schema or "enum" in schema:
            return self._enumerated(schema, pointer, types)
        out = []
        for kind in sorted(types):
            symbol = self._of_type(kind, schema, pointer)
            if symbol is not None:
                out.append(symbol)
        return out

    def _of_type(self, kind: str, schema: dict, pointer: str) -> int | None:
        b = self.b
        if kind == "null":
            return b.literal("null")
        if kind == "boolean":
            return b.choice([[b.literal("true")], [b.literal("false")]], hint="boolean")
        if kind == "string":
            return self.string_lexeme(self.scalar_expr(schema, pointer, "string"), f"string:{pointer or '/'}")
        if kind in ("number", "integer"):
            return self.string_lexeme(self.scalar_expr(schema, pointer, kind), f"{kind}:{pointer or '/'}")
        if kind == "object":
            return objects.object_symbol(self, schema, pointer)
        return arrays.array_symbol(self, schema, pointer)

    def scalar_expr(self, schema: dict, pointer: str, kind: str) -> int:
        """The lexeme expression of a string or number schema, with the extra conjuncts that
        ``allOf`` merging left (``$leapgram:and``) intersected in and ``not`` exclusions cut out."""
        exprs = [self._one_scalar_expr(schema, pointer, kind)]
        for extra in schema.get("$leapgram:and", ()):
            exprs.append(self._one_scalar_expr(extra, pointer, kind))
        expr = exprs[0] if len(exprs) == 1 else self.pool.intersect(exprs)
        excluded = schema.get("$leapgram:exclude", ())
        negations = schema.get("$leapgram:not", ())
        if kind == "string" and (excluded or negations) and expr == self.any_string_expr():
            expr = string_universe(self.pool)  # cut from every spelling (see string_universe)
        if excluded:
            expr = self.pool.difference(expr, self.pool.alt([self._spellings_expr(v) for v in excluded]))
        for negated in negations:  # values failing these keywords (negation.py)
            expr = self.pool.difference(expr, self.scalar_expr(negated, pointer, kind))
        return expr

    def _spellings_expr(self, value: Any) -> int:
        """Every text of a scalar: a string in every offered spelling (:func:`literal_string`)."""
        if isinstance(value, str):
            return literal_string(self.pool, value)
        return self.pool.alt([self.pool.literal(t) for t in scalar_spellings(value)])

    def _one_scalar_expr(self, schema: dict, pointer: str, kind: str) -> int:
        """``string_expr``/``number_expr``, memoized by the keywords they read (schemas repeat
        ``{"type": "string"}`` and the like many times, and building a Unicode class is slow)."""
        names = STRING_KEYWORDS if kind == "string" else NUMBER_KEYWORDS
        key = (kind, repr(sorted((k, schema[k]) for k in names if k in schema)))
        found = self._scalar_exprs.get(key)
        if found is None:
            warnings = len(self.ctx.warnings)
            if kind == "string":
                found = string_expr(self.ctx, schema, pointer)
            else:
                found = number_expr(self.ctx, schema, pointer, integer=kind == "integer")
            if len(self.ctx.warnings) == warnings:  # a warning names its pointer: recompute elsewhere
                self._scalar_exprs[key] = found
        return found

    # ----- enum and const -----------------------------------------------------------------

    def _enumerated(self, schema: dict, pointer: str, types: set[str]) -> list[int]:
        """The symbols of the enumerated values ``types`` allows, memoized by the keywords they
        depend on: large schemas repeat the same long enum in many places."""
        rest = {k: v for k, v in schema.items() if k not in ("enum", "const", "type", "nullable") and k not in ANNOTATIONS}
        listed = {k: schema[k] for k in ("enum", "const") if k in schema}
        key = (json.dumps([listed, rest], sort_keys=True, default=repr), tuple(sorted(types)))
        found = self._enum_symbols.get(key)
        if found is None:
            warnings = len(self.ctx.warnings)
            found = self._new_enumerated(schema, pointer, types, rest)
            if len(self.ctx.warnings) == warnings:  # a warning names its pointer: recompute elsewhere
                self._enum_symbols[key] = found
        return list(found)

    def _new_enumerated(self, schema: dict, pointer: str, types: set[str], rest: dict) -> list[int]:
        values = self.enumerated_values(schema, pointer)
        kept = [v for v in values if _type_allowed(json_type(v), types) and self._passes(v, rest, pointer)]
        scalars = [text for v in kept if not isinstance(v, (dict, list)) for text in scalar_spellings(v)]
        out = []
        if scalars:
            out.append(self.b.lexeme(f"enum:{pointer or '/'}", self.pool.alt([self.pool.literal(t) for t in scalars])))
        out.extend(self.literal_value(v) for v in kept if isinstance(v, (dict, list)))
        return out

    def enumerated_values(self, schema: dict, pointer: str) -> list[Any]:
        if "const" in schema:
            values = [schema["const"]]
            if "enum" in schema:
                values = [v for v in values if any(json_equal(v, e) for e in self._enum_list(schema, pointer))]
            return values
        return unique_values(self._enum_list(schema, pointer))

    def _enum_list(self, schema: dict, pointer: str) -> list[Any]:
        values = schema["enum"]
        if not isinstance(values, list):
            raise GrammarError("enum must be an array", pointer=f"{pointer}/enum")
        return values

    def _passes(self, value: Any, rest: dict, pointer: str) -> bool:
        """Whether an enumerated value satisfies the schema's other keywords (checked with the
        same lexemes the grammar would use; structured values only when nothing else applies)."""
        if not rest:
            return True
        kind = json_type(value)
        if kind in ("string", "number", "integer"):
            lexeme_kind = "string" if kind == "string" else "number"
            expr = self.scalar_expr(rest, pointer, lexeme_kind)
            return any(self.pool.matches(expr, text) for text in scalar_spellings(value))
        if kind in ("null", "boolean"):
            return True
        constraining = [k for k in rest if k in objects.OBJECT_KEYWORDS or k in arrays.ARRAY_KEYWORDS]
        if constraining:
            self.ctx.unsupported(constraining[0], f"{pointer}/{constraining[0]}",
                                 "an enum of objects or arrays together with object or array keywords")
        return True

    def literal_value(self, value: Any) -> int:
        """The nonterminal writing exactly ``value`` (objects and arrays with whitespace)."""
        b = self.b
        if isinstance(value, dict):
            members = []
            for i, (key, item) in enumerate(value.items()):
                members += [*(self.punct(",") if i else []), b.literal(json.dumps(key, ensure_ascii=False)),
                            *self.punct(":"), self.literal_value(item)]
            return b.sequence([b.literal("{"), *self.ows(), *members, *self.ows(), b.literal("}")], hint="const")
        if isinstance(value, list):
            items = []
            for i, item in enumerate(value):
                items += [*(self.punct(",") if i else []), self.literal_value(item)]
            return b.sequence([b.literal("["), *self.ows(), *items, *self.ows(), b.literal("]")], hint="const")
        texts = scalar_spellings(value)
        return b.lexeme(texts[0].decode("utf-8", "replace"), self.pool.alt([self.pool.literal(t) for t in texts]))

    # ----- any value ------------------------------------------------------------------------

    def any_value(self) -> int:
        """Every JSON value (the schema ``{}`` or ``true``)."""
        if self._any is not None:
            return self._any
        b = self.b
        value = self._any = b.fresh_nonterminal("any")  # fresh: a shared builder may hold other schemas
        string = b.lexeme("string", self.any_string_expr())
        number = b.lexeme("number", number_expr(self.ctx, {}, "", integer=False))
        for symbol in (string, number, b.literal("true"), b.literal("false"), b.literal("null")):
            b.rule(value, [symbol])
        member = [string, *self.punct(":"), value]
        members = b.sequence([*member, b.star([*self.punct(","), *member], hint="members")], hint="members")
        b.rule(value, [b.literal("{"), *self.ows(), b.optional([members]), *self.ows(), b.literal("}")])
        items = b.sequence([value, b.star([*self.punct(","), value], hint="items")], hint="items")
        b.rule(value, [b.literal("["), *self.ows(), b.optional([items]), *self.ows(), b.literal("]")])
        return value


def _type_allowed(kind: str, types: set[str]) -> bool:
    return kind in types or (kind == "integer" and "number" in types)
