"""JSON Schema → grammar IR: the dispatcher.

A schema position is translated as a *conjunction* of parts (a part is a schema object, its JSON
pointer and the keywords already taken care of), because ``allOf``, ``$ref`` with siblings and the
branches of ``anyOf``/``oneOf`` all intersect schemas. Each conjunction becomes one nonterminal,
memoized by its parts, so a recursive ``$ref`` is a recursive nonterminal. Per JSON type the
conjunction is translated by the module that owns it: :mod:`.strings` and :mod:`.numbers` give one
lexeme (their expressions intersected in the pool), :mod:`.objects` and :mod:`.arrays` give rules,
:mod:`.combinators` removes ``anyOf``/``oneOf``/``not``/``if`` and :mod:`.values` writes
``enum``/``const``.

Every keyword is enforced exactly or reported through :meth:`SchemaContext.unsupported`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ...errors import GrammarError, UnsupportedError
from ...grammar.builder import GrammarBuilder
from ...grammar.ir import GrammarIR
from ...limits import DEFAULT_LIMITS, Limits
from ...regex.expr import EMPTY, ExprPool
from . import arrays, combinators, objects
from .context import SchemaContext
from .instances import satisfies
from .negation import EXCLUDE
from .numbers import number_expr
from .refs import RefIndex, child
from .strings import string_expr
from .values import ValueGrammar, canonical, json_type, string_spellings
from .whitespace import Spacing, max_run_of

TYPES = ("null", "boolean", "object", "array", "number", "integer", "string")
ANNOTATIONS = frozenset({
    "title", "description", "default", "examples", "example", "$comment", "deprecated", "readOnly",
    "writeOnly", "$schema", "$id", "id", "$anchor", "$defs", "definitions", "$vocabulary",
    "$dynamicAnchor", "$recursiveAnchor", "contentSchema", "discriminator", "xml", "externalDocs",
})
VALIDATION_KEYWORDS = frozenset({
    "type", "enum", "const", "nullable", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "contentEncoding",
    "contentMediaType", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
    "contains", "items", "prefixItems", "additionalItems", "unevaluatedItems", "maxProperties",
    "minProperties", "required", "properties", "patternProperties", "additionalProperties",
    "propertyNames", "dependentRequired", "dependentSchemas", "dependencies",
    "unevaluatedProperties", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "$ref",
    "$dynamicRef", "$recursiveRef",
})
HANDLED_HERE = frozenset({"type", "enum", "const", "nullable", "allOf", "$ref", "anyOf", "oneOf",
                          "not", "if", "then", "else", "dependencies", "dependentRequired",
                          "dependentSchemas"})
LATER_KEYWORDS = ("prefixItems", "dependentRequired", "dependentSchemas", "unevaluatedItems",
                  "unevaluatedProperties", "minContains", "maxContains", "$dynamicRef", "$recursiveRef")
DRAFT_UNKNOWN = {
    3: ("if", "then", "else", "const", "contains", "propertyNames", *LATER_KEYWORDS),
    4: ("if", "then", "else", "const", "contains", "propertyNames", *LATER_KEYWORDS),
    6: ("if", "then", "else", *LATER_KEYWORDS),
    7: LATER_KEYWORDS,
}
"""Keywords a draft does not define: its validators ignore them, so the grammar does too."""
REWRITTEN = ("not", "if", "then", "else", *combinators.DEPENDENCY_KEYWORDS)
MAX_EXPANSIONS = 20_000
"""Conjunctions translated for one schema; a bound on ``anyOf`` × ``allOf`` blowups."""
MAX_INLINE_DEPTH = 24
"""``$ref`` with sibling keywords (or in ``allOf``) inlined inside one another."""


@dataclass(frozen=True)
class Part:
    """One schema that applies at a position: the object, its pointer, keywords already handled."""

    schema: dict
    pointer: str
    dropped: frozenset = frozenset()

    def has(self, keyword: str) -> bool:
        return keyword in self.schema and keyword not in self.dropped

    def get(self, keyword: str, default=None):
        return self.schema[keyword] if self.has(keyword) else default

    def at(self, *tokens: object) -> str:
        return child(self.pointer, *tokens)

    def without(self, *keywords: str) -> Part:
        return Part(self.schema, self.pointer, self.dropped | frozenset(keywords))

    @property
    def key(self) -> tuple:
        return (self.pointer, tuple(sorted(self.dropped)), id(self.schema))

    def keywords(self) -> list[str]:
        return [k for k in self.schema if k not in self.dropped]


@dataclass
class Translator:
    """Translates one schema document through one :class:`GrammarBuilder`.

    Under drafts 3 to 7 (by the root ``$schema``) keywords beside ``$ref`` are ignored, as those
    drafts say, and so are keywords that draft does not define yet (``if`` under draft 4, ...);
    otherwise (2019-09, 2020-12, no ``$schema``) they apply together with it.
    """

    document: object
    ctx: SchemaContext
    builder: GrammarBuilder
    spacing: Spacing
    any_order: bool = False
    refs: RefIndex = field(init=False)
    _memo: dict = field(default_factory=dict)
    _any: int | None = None
    _never: int | None = None
    _expansions: int = 0

    def __post_init__(self) -> None:
        self.refs = RefIndex(self.document)
        dialect = self.document.get("$schema", "") if isinstance(self.document, dict) else ""
        draft = next((n for n in (3, 4, 6, 7) if isinstance(dialect, str) and f"draft-0{n}" in dialect), None)
        self.ref_ignores_siblings = draft is not None
        self.unknown_keywords = frozenset(DRAFT_UNKNOWN.get(draft, ()))
        self.values = ValueGrammar(self.spacing)

    # ----- entry points -------------------------------------------------------------------

    def schema(self, schema: object, pointer: str) -> int:
        """The symbol of one (sub)schema at ``pointer``."""
        return self.conjunction([schema_part(schema, pointer)] if schema is not True else [])

    def conjunction(self, parts: list) -> int:
        """The symbol of the values valid under every part (``False`` parts: none)."""
        if any(p is False for p in parts):
            return self.never()
        parts = [p for p in parts if p is not True]
        key = tuple(sorted(p.key for p in parts))
        found = self._memo.get(key)
        if found is not None:
            return found
        self._expansions += 1
        if self._expansions > MAX_EXPANSIONS:
            raise UnsupportedError("anyOf", f"the schema expands into more than {MAX_EXPANSIONS} "
                                   "sub-schemas (anyOf/oneOf/allOf combinations)",
                                   pointer=parts[0].pointer if parts else "")
        nt = self.builder.fresh_nonterminal(parts[-1].pointer or "root" if parts else "any")
        self._memo[key] = nt
        self.builder.rule(nt, [self._translate(parts)])
        return nt

    def any_value(self) -> int:
        """Any JSON value (the empty schema)."""
        if self._any is None:
            self._any = self.conjunction([Part({}, "")])
        return self._any

    def never(self) -> int:
        """A symbol that matches nothing (the ``false`` schema)."""
        if self._never is None:
            self._never = self.builder.lexeme("never", EMPTY)
        return self._never

    # ----- translation --------------------------------------------------------------------

    def _translate(self, parts: list) -> int:
        parts = self._expand(parts)
        if parts is False:
            return self.never()
        if isinstance(parts, int):
            return parts
        branches = combinators.split(self, parts)
        if branches is not None:
            symbols = [self.conjunction(branch) for branch in branches]
            return self.builder.choice([[s] for s in symbols], hint="anyOf") if symbols else self.never()
        if any(p.has(k) for p in parts for k in REWRITTEN):
            rewritten = combinators.apply_not_if(self, parts)
            return self.never() if rewritten is False else self.conjunction(rewritten)
        self._check_keywords(parts)
        types = allowed_types(parts)
        if any(p.has("enum") or p.has("const") for p in parts):
            return self._enum(parts, types)
        return self._by_type(parts, types)

    def _expand(self, parts: list):
        """Flatten ``allOf`` and ``$ref`` into the conjunction: a list of parts, ``False``, or the
        symbol of the referenced schema when the conjunction is one pure ``$ref``."""
        out: list[Part] = []
        queue = list(parts)
        pending: list[Part] = []
        inlined: set[str] = set()
        while queue or pending:
            if not queue:
                if len(pending) == 1 and not any(has_validation(p) for p in out):
                    target = self.refs.target(pending[0].get("$ref"), pending[0].at("$ref"))
                    return self.schema(resolve(self.refs.document, target), target)
                queue = [self._inline(ref, inlined) for ref in pending]
                pending = []
                continue
            part = queue.pop(0)
            if part is True:
                continue
            if part is False:
                return False
            if self.unknown_keywords.intersection(part.schema):
                part = part.without(*self.unknown_keywords)
            if part.has("allOf"):
                subs = part.get("allOf")
                if not isinstance(subs, list) or not subs:
                    raise GrammarError("allOf must be a non-empty array", pointer=part.at("allOf"))
                queue.extend(schema_part(s, part.at("allOf", i)) for i, s in enumerate(subs))
                queue.append(part.without("allOf"))
            elif part.has("$ref"):
                pending.append(part)
                if not self.ref_ignores_siblings:
                    queue.append(part.without("$ref"))
            else:
                out.append(part)
        return out

    def _inline(self, part: Part, inlined: set):
        target = self.refs.target(part.get("$ref"), part.at("$ref"))
        if target in inlined or len(inlined) > MAX_INLINE_DEPTH:
            raise UnsupportedError("$ref", "a recursive $ref with sibling keywords or under allOf "
                                   "cannot be inlined; move the siblings into the referenced schema",
                                   pointer=part.at("$ref"))
        inlined.add(target)
        return schema_part(resolve(self.refs.document, target), target)

    def _check_keywords(self, parts: list) -> None:
        for part in parts:
            for keyword in part.keywords():
                if keyword in VALIDATION_KEYWORDS and keyword not in KNOWN_HANDLED:
                    self.ctx.unsupported(keyword, part.at(keyword), "this keyword is not implemented")

    def _by_type(self, parts: list, types: set) -> int:
        b = self.builder
        alternatives: list[list[int]] = []
        if "null" in types and None not in [v for p in parts for v in p.get(EXCLUDE, [])]:
            alternatives.append([b.literal("null")])
        if "boolean" in types:
            alternatives += [[b.literal("true")], [b.literal("false")]]
        excluded = [v for p in parts for v in p.get(EXCLUDE, [])]
        if "string" in types:
            alternatives.append([self.string_symbol(parts, excluded)])
        if "number" in types or "integer" in types:
            alternatives.append([self.number_symbol(parts, excluded, integer="number" not in types)])
        if "object" in types:
            alternatives.append([objects.object_symbol(self, parts)])
        if "array" in types:
            alternatives.append([arrays.array_symbol(self, parts)])
        return b.choice(alternatives, hint="type") if alternatives else self.never()

    def string_symbol(self, parts: list, excluded: list) -> int:
        pool = self.ctx.pool
        spelled = [string_spellings(pool, v) for v in excluded if isinstance(v, str)]
        expr = pool.intersect([self.string_expr_of(parts), pool.complement(pool.alt(spelled))])
        return self.builder.lexeme("string", expr)

    def string_expr_of(self, parts: list) -> int:
        return self.ctx.pool.intersect([string_expr(self.ctx, p.schema, p.pointer) for p in parts] or
                                       [string_expr(self.ctx, {}, "")])

    def number_symbol(self, parts: list, excluded: list, *, integer: bool) -> int:
        pool = self.ctx.pool
        exprs = [number_expr(self.ctx, p.schema, p.pointer, integer=integer) for p in parts] or [
            number_expr(self.ctx, {}, "", integer=integer)]
        numbers = [v for v in excluded if json_type(v) == "integer"]
        if numbers and not integer:
            self.ctx.unsupported("not", parts[0].pointer, "excluding a value from non-integer numbers")
        spelled = [pool.literal(s.encode()) for v in numbers for s in (str(int(v)), "-0")[: 2 if v == 0 else 1]]
        exprs.append(pool.complement(pool.alt(spelled)))
        expr = pool.intersect(exprs)
        return self.builder.lexeme("integer" if integer else "number", expr)

    def _enum(self, parts: list, types: set) -> int:
        candidates = None
        for part in parts:
            for keyword in ("enum", "const"):
                if not part.has(keyword):
                    continue
                values = part.get(keyword)
                if keyword == "const":
                    values = [values]
                elif not isinstance(values, list):
                    raise GrammarError("enum must be an array", pointer=part.at("enum"))
                keys = {canonical(v): v for v in values}
                candidates = keys if candidates is None else {k: v for k, v in candidates.items() if k in keys}
        chosen = [v for v in candidates.values() if self._value_allowed(v, parts, types)]
        if not chosen:
            return self.never()
        return self.builder.choice([[self.values.symbol(v)] for v in chosen], hint="enum")

    def _value_allowed(self, value: object, parts: list, types: set) -> bool:
        kind = json_type(value)
        if canonical(value) in {canonical(v) for p in parts for v in p.get(EXCLUDE, [])}:
            return False
        if kind not in types and not (kind == "integer" and "number" in types):
            return False
        text = json.dumps(value, ensure_ascii=False).encode()
        if kind == "string":
            return self.ctx.pool.matches(self.string_expr_of(parts), text)
        if kind in ("integer", "number"):
            exprs = [number_expr(self.ctx, p.schema, p.pointer, integer=kind == "integer" and "number" not in types)
                     for p in parts]
            return self.ctx.pool.matches(self.ctx.pool.intersect(exprs), text) if exprs else True
        if kind in ("object", "array"):
            return self._compound_allowed(value, parts)
        return True

    def _compound_allowed(self, value: object, parts: list) -> bool:
        for part in parts:
            schema = {k: part.schema[k] for k in part.keywords() if k not in ("enum", "const")}
            verdict = satisfies(self, value, schema, part.pointer)
            if verdict is None:
                self.ctx.unsupported("enum", part.pointer, "an object or array enum value together with "
                                     "keywords that cannot be checked against it")
            elif not verdict:
                return False
        return True


KNOWN_HANDLED = HANDLED_HERE | objects.KEYWORDS | arrays.KEYWORDS | frozenset({
    "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength",
    "minLength", "pattern", "format", "contentEncoding", "contentMediaType"})


def schema_part(schema: object, pointer: str):
    """A :class:`Part` for a dict schema; ``True``/``False`` for boolean schemas."""
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, dict):
        raise GrammarError(f"a schema must be an object or a boolean, not {type(schema).__name__}",
                           pointer=pointer)
    return Part(schema, pointer)


def resolve(document: object, pointer: str) -> object:
    from .refs import resolve_pointer

    return resolve_pointer(document, pointer, pointer)


def has_validation(part: Part) -> bool:
    return any(k in VALIDATION_KEYWORDS for k in part.keywords())


def allowed_types(parts: list) -> set:
    """The JSON types every part allows (``integer`` stays separate from ``number``)."""
    types = set(TYPES)
    for part in parts:
        if not part.has("type"):
            continue
        declared = part.get("type")
        names = [declared] if isinstance(declared, str) else declared
        if not isinstance(names, list) or any(n not in TYPES for n in names):
            raise GrammarError(f"type must be one of {', '.join(TYPES)} or a list of them", pointer=part.at("type"))
        own = set(names) | ({"null"} if part.get("nullable") is True else set())
        if "number" in own:
            own.add("integer")
        types &= own
    if "number" in types and "integer" not in types:
        types.discard("number")
    return types


def parse_schema_source(schema: object) -> object:
    """A schema given as a dict, a boolean, JSON text or a Pydantic model class."""
    if isinstance(schema, (dict, bool)):
        return schema
    if isinstance(schema, (str, bytes)):
        text = schema.decode() if isinstance(schema, bytes) else schema
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise GrammarError(f"schema is not valid JSON: {exc.msg}", source=text, offset=exc.pos) from None
    if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
        return schema.model_json_schema()
    raise GrammarError(f"a JSON Schema must be a dict, JSON text or a Pydantic model class, not "
                       f"{type(schema).__name__}")


def schema_to_ir(schema: object, *, whitespace: str | int = "flexible", lenient: bool = False,
                 any_order: bool = False, limits: Limits = DEFAULT_LIMITS) -> tuple[GrammarIR, list[str]]:
    """The grammar of the JSON documents valid under ``schema``, and the lenient-mode warnings."""
    document = parse_schema_source(schema)
    max_run = max_run_of(whitespace)
    ctx = SchemaContext(ExprPool(limits), lenient=lenient)
    builder = GrammarBuilder(limits, pool=ctx.pool)
    translator = Translator(document, ctx, builder, Spacing(builder, max_run), any_order=any_order)
    start = builder.nonterminal("start")
    builder.rule(start, [translator.schema(document, "")])
    return builder.build(start), ctx.warnings
