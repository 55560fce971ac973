"""``enum`` and ``const`` (:class:`EnumKeywords`): the listed values the schema's other keywords
allow, scalars as one lexeme of their spellings, objects and arrays as literal rules."""

from __future__ import annotations

import json
from typing import Any

from ...errors import GrammarError
from .arrays import ARRAY_KEYWORDS
from .context import ANNOTATIONS
from .numbers import decimal_of
from .objects import OBJECT_KEYWORDS
from .values import json_equal, json_text, json_type, scalar_spellings, unique_values

_MEMO_TEXT = json.JSONEncoder(sort_keys=True, default=repr).encode  # json.dumps(..., sort_keys=True, default=repr)


class EnumKeywords:
    """The ``enum`` and ``const`` of :class:`SchemaTranslator` (a mixin: ``self`` is the translator)."""

    def _enumerated(self, schema: dict, pointer: str, types: set[str]) -> list[int]:
        """The symbols of the enumerated values ``types`` allows, memoized by the keywords they
        depend on: large schemas repeat the same long enum in many places."""
        rest = {k: v for k, v in schema.items()
                if k not in ("enum", "const", "type", "nullable") and k not in ANNOTATIONS}
        listed = {k: schema[k] for k in ("enum", "const") if k in schema}
        try:
            key = (_MEMO_TEXT([listed, rest]), tuple(sorted(types)))
        except (ValueError, RecursionError) as exc:  # a value that holds itself: not JSON
            raise GrammarError(f"enum/const is not a JSON value: {exc}", pointer=pointer) from None
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
        whole = "integer" in types and "number" not in types  # an integer is written without fraction
        scalars = [text for v in kept if not isinstance(v, (dict, list)) for text in scalar_spellings(v)
                   if not (whole and json_type(v) == "integer" and b"." in text)]
        out = []
        if scalars:
            spellings = self.pool.literal_set(scalars)  # many: a trie (derived a member at a time)
            out.append(self.builder.lexeme(f"enum:{pointer or '/'}", spellings))
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
            texts = scalar_spellings(value)
            if lexeme_kind == "number" and texts:  # also without exponent (1e-07), all a cut-out number keeps (scalars.py)
                texts.append(format(decimal_of(value, pointer), "f").encode())
            return any(self.pool.matches(expr, text) for text in texts)
        if kind in ("null", "boolean"):
            return True
        constraining = [k for k in rest if k in OBJECT_KEYWORDS or k in ARRAY_KEYWORDS]
        if constraining:
            self.ctx.unsupported(constraining[0], f"{pointer}/{constraining[0]}",
                                 "an enum of objects or arrays together with object or array keywords")
        return True

    def literal_value(self, value: Any) -> int:
        """The nonterminal writing exactly ``value`` (objects and arrays with whitespace)."""
        builder = self.builder
        if isinstance(value, dict):
            members = []
            for i, (key, item) in enumerate(value.items()):
                members += [*(self.punct(",") if i else []), builder.literal(json_text(key)),
                            *self.punct(":"), self.literal_value(item)]
            return builder.sequence([builder.literal("{"), *self.ows(), *members, *self.ows(), builder.literal("}")],
                                    hint="const")
        if isinstance(value, list):
            items = []
            for i, item in enumerate(value):
                items += [*(self.punct(",") if i else []), self.literal_value(item)]
            return builder.sequence([builder.literal("["), *self.ows(), *items, *self.ows(), builder.literal("]")],
                                    hint="const")
        texts = scalar_spellings(value)
        spellings = self.pool.alt([self.pool.literal(t) for t in texts])
        return builder.lexeme(texts[0].decode("utf-8", "replace"), spellings)


def _type_allowed(kind: str, types: set[str]) -> bool:
    return kind in types or (kind == "integer" and "number" in types)
