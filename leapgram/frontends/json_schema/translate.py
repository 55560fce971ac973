"""JSON Schema -> grammar IR: :class:`SchemaTranslator`, the dispatcher over schema kinds.

Each subschema becomes one nonterminal, memoized by :meth:`SchemaTranslator.schema_key`, so a
``$ref`` cycle becomes a recursive rule. A schema allows the JSON types of ``type`` (all when
absent), each with the keywords that constrain that type; the keywords' helpers are mixins, one
module per kind (objects, arrays, combinators, negation, unevaluated, enums, scalars).
Whitespace options and the design: docs/design/json-schema.md.
"""

from __future__ import annotations

from typing import Any

from ...errors import GrammarError, UnsupportedError
from ...grammar.builder import GrammarBuilder
from ...grammar.ir import GrammarIR
from ...limits import Limits
from .arrays import ArrayKeywords
from .combinators import Combinators, keyword_first
from .common import flexible_whitespace_expr, schema_pool, whitespace_expr
from .context import ANNOTATIONS, SchemaContext
from .dialects import for_draft
from .enums import EnumKeywords
from .negation import CONDITIONAL_KEYWORDS, Negation
from .numbers import number_expr
from .objects import ObjectKeywords
from .refs import RefResolver
from .scalars import NUMBER_SET, STRING_SET, ScalarKeywords
from .unevaluated import Unevaluated

TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")
_TYPE_SET = frozenset(TYPES)
# Keywords that _alternatives handles before it reaches 'not': a schema that 'not' rewrites into
# one holding any of them is translated from the start again.
_ROUTED = ("allOf", "anyOf", "oneOf", "not", "$ref", "$dynamicRef", "$recursiveRef", "unevaluatedProperties",
           "unevaluatedItems", *CONDITIONAL_KEYWORDS)
_ROUTED_SET = frozenset(_ROUTED)
# A schema of one scalar type with none of these is a leaf: SchemaTranslator._leaf translates it.
_LEAF_TYPES = frozenset({"string", "number", "integer", "boolean", "null"})
_NOT_LEAF = _ROUTED_SET | {"const", "enum", "nullable", "$leapgram:and", "$leapgram:exclude", "$leapgram:not"}

# Keywords with a validation meaning that this front end does not translate.
REFUSED = {
    "$dynamicRef": "exact where the root resource has the $dynamicAnchor it names, or one resource only; use $ref",
    "$recursiveRef": "exact where the root has $recursiveAnchor: true, or one resource only; use $ref",
}

WHITESPACE = rb"[ \t\n\r]"


Whitespace = str | int | tuple[str, str]
MIN_SHARED_DOCUMENT = 64  # objects in a document from which equal subschemas are translated once


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


class SchemaTranslator(ObjectKeywords, ArrayKeywords, Combinators, Negation, Unevaluated, EnumKeywords,
                       ScalarKeywords):
    """Translates one schema document; :meth:`build` returns the IR. The keywords' helpers live
    in the mixins, one module per kind of keyword; they share the attributes set here."""

    def __init__(self, root: Any, *, whitespace: Whitespace = "flexible", lenient: bool = False,
                 any_order: bool | str = False, limits: Limits, builder: GrammarBuilder | None = None) -> None:
        dialect = root.get("$schema", "") if isinstance(root, dict) else ""
        self.draft = _draft(dialect)
        self.root = root = for_draft(root, self.draft)
        self.refs = RefResolver(root)
        self.ctx = SchemaContext(builder.pool if builder else schema_pool(limits, self.refs.formats), lenient)
        self.pool = self.ctx.pool
        self.builder = builder or GrammarBuilder(limits, pool=self.pool)
        self.any_order = any_order
        self._memo: dict[Any, int | None] = {}  # by schema_key, which keeps composed schemas alive
        self._by_content: dict[tuple[str, int], int | None] = {}  # value's symbol by _same_content
        self._share_content = len(self.refs.base_of) >= MIN_SHARED_DOCUMENT  # see _same_content
        self._content_ids: dict[int, tuple[Any, int]] = {}  # _content_id: id -> (object, content)
        self._contents: dict[tuple, int] = {}
        self._composed_keys: dict[int, tuple[Any, int]] = {}
        self._shapes: dict[tuple, int] = {}
        self._composed: dict[tuple, Any] = {}
        self._separators: dict[str, str] = {}
        self._punct: dict[str, tuple[int, ...]] = {}
        self._ws = self._whitespace(whitespace)
        self._any: int | None = None
        self._any_string: int | None = None
        self._scalar_exprs: dict[tuple[str, str], int] = {}
        self._plain_leaves: dict[str, int | None] = {}  # _leaf: a type's symbol without its keywords
        self._name_strings: dict[str, int] = {}  # declared_member: a one-spelling name's string
        self._enum_symbols: dict[tuple[str, tuple[str, ...]], list[int]] = {}
        self._repeated_items: dict[tuple[int, int, float, bool], list[int]] = {}  # repeated_items by its arguments
        self._arrays: dict[tuple[int, ...], int] = {}  # array_symbol's nonterminal by its body
        self._ref_overrides = self.draft is not None and self.draft <= 7
        self.negations: dict[int, tuple[Any, Any]] = {}
        self._overflow: str | None = None

    def build(self) -> GrammarIR:
        start = self.builder.nonterminal("start")
        self.builder.rule(start, [self.top_symbol()])
        return self.builder.build(start)

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
            ws = flexible_whitespace_expr(self.pool)
        elif isinstance(whitespace, int) and not isinstance(whitespace, bool) and whitespace >= 0:
            if whitespace == 0:
                return None
            ws = whitespace_expr(self.pool, whitespace)
        else:
            raise ValueError("whitespace must be 'flexible', 'compact', 'dumps', a maximum run length or a pair "
                             f"of separators such as (', ', ': '), not {whitespace!r}")
        return self.builder.optional([self.builder.lexeme("WS", ws)], hint="ws")

    def ows(self) -> list[int]:
        """Optional whitespace (nothing in compact mode)."""
        return [] if self._ws is None else [self._ws]

    def punct(self, text: str) -> tuple[int, ...]:
        """``text`` with optional whitespace on both sides, or its fixed separator."""
        found = self._punct.get(text)
        if found is None:
            if self._separators:
                found = (self.builder.literal(self._separators[text]),)
            else:
                found = (*self.ows(), self.builder.literal(text), *self.ows())
            self._punct[text] = found
        return found

    # ----- values -------------------------------------------------------------------------

    def value(self, schema: Any, pointer: str) -> int | None:
        """The symbol of the values valid under ``schema`` (its one alternative's symbol, or a
        nonterminal with a rule per alternative); ``None`` when there are none."""
        if schema is True or schema == {}:
            return self.any_value()
        if schema is False:
            return None
        if not isinstance(schema, dict):
            raise GrammarError(f"a schema must be an object or a boolean, not {type(schema).__name__}",
                               pointer=pointer)
        key = self.schema_key(schema)
        memo = self._memo
        if key in memo:
            found = memo[key]
            if type(found) is list:  # met again inside its own translation: its nonterminal, made now
                found = memo[key] = self.builder.fresh_nonterminal(f"schema:{found[0] or '/'}")
            return found
        same = self._same_content(schema) if self._share_content else None
        if same is not None and same in self._by_content:
            found = memo[key] = self._by_content[same]
            return found
        warnings = len(self.ctx.warnings)
        kind = schema.get("type")
        if kind.__class__ is str and kind in _LEAF_TYPES and _NOT_LEAF.isdisjoint(schema):
            found = memo[key] = self._leaf(kind, schema, pointer)
        else:
            found = memo[key] = self._translated(schema, key, pointer)
        if same is not None and len(self.ctx.warnings) == warnings:  # a warning names its pointer: not shared
            self._by_content[same] = found
        return found

    def _translated(self, schema: dict, key: Any, pointer: str) -> int | None:
        """:meth:`value` of a schema met the first time. Its nonterminal is made only when a
        reference inside reaches the schema again, or for two alternatives or more (fresh:
        unique in a shared builder); one alternative is its own symbol, with no unit rule."""
        pending = self._memo[key] = [pointer]  # value() makes the nonterminal if it meets the key
        try:
            alternatives = self._alternatives(schema, pointer)
        except RecursionError:
            self.note_overflow(pointer)
            raise
        nt = self._memo[key]
        if not alternatives:
            return None
        if nt is pending:
            if len(alternatives) == 1:  # most schemas
                return alternatives[0]
            return self.builder.choice([[symbol] for symbol in alternatives], hint=f"schema:{pointer or '/'}")
        for symbol in alternatives:
            self.builder.rule(nt, [symbol])
        return nt

    def _leaf(self, kind: str, schema: dict, pointer: str) -> int | None:
        """:meth:`_translated` of a schema of one scalar type and no keyword that routes it
        elsewhere (no reference, combinator, ``const``/``enum`` or ``nullable``: most property
        values), straight to :meth:`_of_type`; nothing inside reaches another subschema. Without
        the keywords of its type (``{"type": "string"}`` with annotations) it is the same lexeme
        each time: :meth:`string_lexeme` finds the expression's lexeme made the first time."""
        if kind == "boolean" or kind == "null":
            return self._of_type(kind, schema, pointer)
        plain = (STRING_SET if kind == "string" else NUMBER_SET).isdisjoint(schema)
        if plain and kind in self._plain_leaves:
            return self._plain_leaves[kind]
        try:
            found = self._of_type(kind, schema, pointer)
        except RecursionError:
            self.note_overflow(pointer)
            raise
        if plain:
            self._plain_leaves[kind] = found
        return found

    def _same_content(self, schema: dict) -> tuple[str, int] | None:
        """A key that two subschemas of the document share when they are equal JSON under the
        same base URI, so they translate to the same symbol (:meth:`value` translates the first
        and reuses it for the others); ``None`` for a schema the translator composed (its
        :meth:`schema_key` is already structural) or one nested too deep to key. Only in documents
        of at least ``MIN_SHARED_DOCUMENT`` objects: keying every subschema costs a small one
        more than its repeats save (JSONSchemaBench's p25-p75 schemas have 4-34 objects)."""
        if id(schema) not in self.refs.base_of:
            return None
        try:
            return self.refs.base(schema), self._content_id(schema)
        except RecursionError:
            return None

    def _content_id(self, value: dict | list) -> int:
        """A small int per distinct JSON content (key order included) of the document's dicts
        and lists, each made once from its items' (a scalar by its type and ``repr``: ``1``,
        ``1.0`` and ``True`` differ, and so do ``0.0`` and ``-0.0``). Kept with the object, so
        an id is never taken for another object's."""
        ids = self._content_ids
        found = ids.get(id(value))
        if found is not None and found[0] is value:
            return found[1]
        is_dict = isinstance(value, dict)
        parts = []  # each item: a string itself, a dict or list its id, another scalar (type, repr)
        for v in (value.values() if is_dict else value):
            kind = type(v)
            if kind is str:
                parts.append(v)
            elif kind is dict or kind is list:
                parts.append(self._content_id(v))
            else:
                parts.append(self._content_item(v))
        shape = ("{", tuple(value), *parts) if is_dict else ("[", *parts)  # a dict: its keys, then its values
        contents = self._contents
        content = contents.setdefault(shape, len(contents))
        ids[id(value)] = (value, content)
        return content

    def _content_item(self, value: Any) -> Any:
        """A value in :meth:`_content_id`'s shapes: a string itself, a dict or list its id."""
        if type(value) is str:
            return value
        return self._content_id(value) if isinstance(value, (dict, list)) else (type(value), repr(value))

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
        kind = type(schema)
        if kind is not dict and kind is not list:
            if not isinstance(schema, (dict, list)):
                return (kind, schema)
        ident = id(schema)
        if ident in self.refs.base_of:
            return ident
        found = self._composed_keys.get(ident)
        if found is not None and found[0] is schema:
            return found[1]
        key_of = self.schema_key  # strings (most values: descriptions, names) stand for themselves
        if isinstance(schema, dict):  # flat: "{", then each key and its value's key
            shape = ["{"]
            for k, v in schema.items():
                shape.append(k)
                shape.append(v if type(v) is str else key_of(v))
        else:
            shape = ["["]
            for v in schema:
                shape.append(v if type(v) is str else key_of(v))
        shape = tuple(shape)
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
        if _ROUTED_SET.isdisjoint(schema):  # most schemas: none of the checks below applies
            return self._typed(schema, pointer)
        if "unevaluatedProperties" in schema or "unevaluatedItems" in schema:
            schema = self.rewrite_unevaluated(schema, pointer)  # first: it sees the $dynamicRef target
        for keyword, target in (("$dynamicRef", self.refs.dynamic_target), ("$recursiveRef", self.refs.recursive_target)):
            if keyword in schema and "$ref" not in schema:
                found = target(schema[keyword], self.refs.base(schema), f"{pointer}/{keyword}")
                if found is not None:
                    return self._dynamic_ref(schema, keyword, pointer, *found)
        self._check_keywords(schema, pointer)
        if "$ref" in schema:
            return self._ref(schema, pointer)
        if any(k in schema for k in CONDITIONAL_KEYWORDS):
            return self._alternatives_of(self.expand_conditionals(schema, pointer), pointer)
        if "allOf" in schema:
            merged = self.merge_all_of(schema, pointer)
            return [] if merged is False else self._alternatives_of(merged, pointer)
        if "anyOf" in schema or "oneOf" in schema:
            return self.union(schema, pointer)
        if "not" in schema:
            schema = self.apply_not(schema, pointer)
            if schema is False:
                return []
            if schema is True or any(k in schema for k in _ROUTED):  # e.g. not {not {if ...}}: the if is kept
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
        parts = [target, siblings] if keyword_first(schema, "$ref") else [siblings, target]
        return self._alternatives_of({"allOf": parts}, pointer)

    def _dynamic_ref(self, schema: dict, keyword: str, pointer: str, target: Any, target_pointer: str) -> list[int]:
        """A ``$dynamicRef`` or ``$recursiveRef`` whose target the dynamic scope cannot change:
        that target, with the keywords beside it."""
        siblings = self.derived("dynamic", schema, lambda: {
            k: v for k, v in schema.items() if k != keyword and k not in ANNOTATIONS})
        if not siblings:
            return self._alternatives_of(target, target_pointer)
        return self._alternatives_of({"allOf": [siblings, target]}, pointer)

    def _check_keywords(self, schema: dict, pointer: str) -> None:
        for keyword, advice in REFUSED.items():
            if keyword in schema:
                self.ctx.unsupported(keyword, f"{pointer}/{keyword}", advice)
                if keyword == "if":
                    for branch in ("then", "else"):
                        if branch in schema:
                            self.ctx.warnings.append(f"{pointer}/{branch}: ignored with 'if'")

    # ----- by type ------------------------------------------------------------------------

    def types_of(self, schema: dict, pointer: str) -> set[str]:
        """The JSON types ``schema`` allows (``integer`` only when ``number`` is absent)."""
        declared = schema.get("type")
        if declared.__class__ is str and declared in _TYPE_SET and "nullable" not in schema:  # most schemas
            return {declared}
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
        for kind in (types if len(types) == 1 else sorted(types)):
            symbol = self._of_type(kind, schema, pointer)
            if symbol is not None:
                out.append(symbol)
        return out

    def _of_type(self, kind: str, schema: dict, pointer: str) -> int | None:
        builder = self.builder
        if kind == "null":
            return builder.literal("null")
        if kind == "boolean":
            return builder.choice([[builder.literal("true")], [builder.literal("false")]], hint="boolean")
        if kind == "string":
            return self.string_lexeme(self.scalar_expr(schema, pointer, "string"), f"string:{pointer or '/'}")
        if kind in ("number", "integer"):
            return self.string_lexeme(self.scalar_expr(schema, pointer, kind), f"{kind}:{pointer or '/'}")
        if kind == "object":
            return self.object_symbol(schema, pointer)
        return self.array_symbol(schema, pointer)

    # ----- any value ------------------------------------------------------------------------

    def any_value(self) -> int:
        """Every JSON value (the schema ``{}`` or ``true``). Its nonterminals are all new and
        their rules distinct, so the rules go in with one :meth:`GrammarBuilder.fresh_rules`, in
        the order (and with the nonterminals) that ``rule``, ``star``, ``sequence`` and
        ``optional`` calls would give them (``test_ttfm_shortcuts.py`` pins it)."""
        if self._any is not None:
            return self._any
        builder = self.builder
        fresh = builder.fresh_nonterminal
        value = self._any = fresh("any")  # fresh: a shared builder may hold other schemas
        string = builder.lexeme("string", self.any_string_expr())
        number = builder.lexeme("number", number_expr(self.ctx, {}, "", integer=False))
        rules = [(value, (symbol,)) for symbol in (string, number, builder.literal("true"),
                                                   builder.literal("false"), builder.literal("null"))]
        colon = self.punct(":")  # before "," (lexemes are numbered as made)
        ows, comma = tuple(self.ows()), self.punct(",")
        for left, right, member, hint in (("{", "}", (string, *colon, value), "members"), ("[", "]", (value,), "items")):
            more, items, optional = fresh(hint), fresh(hint), fresh("opt")  # star, sequence, optional
            opening = builder.literal(left)
            rules += [(more, (more, *comma, *member)), (more, ()), (items, (*member, more)),
                      (optional, (items,)), (optional, ()),
                      (value, (opening, *ows, optional, *ows, builder.literal(right)))]
        builder.fresh_rules(rules)
        return value
