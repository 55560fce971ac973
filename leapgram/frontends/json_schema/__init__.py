"""JSON Schema front end: a schema (dict, JSON text or Pydantic model class) -> grammar IR.

Split by concern: ``translate`` (dispatch by type, enum/const, any value, whitespace), ``objects``,
``arrays``, ``combinators`` (allOf/anyOf/oneOf/not), ``refs`` ($ref, $id, $anchor), ``strings``
and ``numbers`` (the lexemes of string and number values), ``values`` (JSON literals).
"""

from __future__ import annotations

import json
from typing import Any

from ...errors import GrammarError, UnsupportedError
from ...grammar.builder import GrammarBuilder
from ...grammar.ir import GrammarIR
from ...limits import Limits
from .translate import SchemaTranslator
from .values import json_type


def schema_document(schema: Any) -> Any:
    """The schema as JSON data: a dict or bool as is, JSON text parsed (a :class:`GrammarError`
    with line and column when it is not JSON), a Pydantic model class by ``model_json_schema()``."""
    if isinstance(schema, (dict, bool)):
        return schema
    if isinstance(schema, (str, bytes)):
        text = schema.decode("utf-8") if isinstance(schema, bytes) else schema
        try:
            document = json.loads(text)
        except json.JSONDecodeError as err:
            raise GrammarError(f"schema is not valid JSON: {err.msg}", source=text, offset=err.pos) from None
        except RecursionError:
            raise UnsupportedError("nesting", "the schema text nests deeper than Python's JSON parser allows; "
                                   "flatten it", pointer="") from None
        if not isinstance(document, (dict, bool)):
            raise GrammarError(f"a schema must be an object or a boolean, not {json_type(document)}", pointer="")
        return document
    if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
        return schema.model_json_schema()
    raise GrammarError(f"a schema must be a dict, a bool, JSON text or a Pydantic model class, not "
                       f"{type(schema).__name__}", pointer="")


def _surrogate_at(value: Any, pointer: str = "") -> tuple[str, str] | None:
    """The JSON pointer and text of the first key or string in ``value`` holding a lone
    surrogate (no UTF-8 text can hold one), or None. Walked only once encoding has failed."""
    stack = [(value, pointer)]
    seen: set[int] = set()
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return where, item
        elif isinstance(item, (dict, list)) and id(item) not in seen:
            seen.add(id(item))
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, member in reversed(list(pairs)):
                child = f"{where}/{str(key).replace('~', '~0').replace('/', '~1')}"
                if isinstance(key, str):
                    stack.append((key, child))
                stack.append((member, child))
    return None


def _surrogate_error(document: Any, err: UnicodeEncodeError) -> GrammarError:
    found = _surrogate_at(document)
    pointer, text = found if found is not None else ("", err.object)
    return GrammarError(f"the schema holds a lone surrogate in {text!r}: a schema's keys and strings must be "
                        "valid Unicode (UTF-8 output cannot contain one)", pointer=pointer)


def json_schema_to_ir(schema: Any, *, whitespace: str | int | tuple[str, str] = "flexible", lenient: bool = False,
                      any_order: bool | str = False, limits: Limits) -> tuple[GrammarIR, list[str]]:
    """The grammar of the JSON texts valid under ``schema``, and the warnings (keywords skipped
    under ``lenient``)."""
    document = schema_document(schema)
    try:
        translator = SchemaTranslator(document, whitespace=whitespace, lenient=lenient,
                                      any_order=any_order, limits=limits)
        return translator.build(), translator.ctx.warnings
    except UnicodeEncodeError as err:
        raise _surrogate_error(document, err) from None


def json_schema_symbol(schema: Any, builder: GrammarBuilder, *, whitespace: str | int | tuple[str, str] = "flexible",
                       lenient: bool = False, any_order: bool | str = False) -> tuple[int, list[str]]:
    """The symbol of the JSON texts valid under ``schema``, built into another front end's
    ``builder`` (a Lark rule or a structural tag that embeds a schema), and the warnings."""
    document = schema_document(schema)
    try:
        translator = SchemaTranslator(document, whitespace=whitespace, lenient=lenient,
                                      any_order=any_order, limits=builder.limits, builder=builder)
        return translator.top_symbol(), translator.ctx.warnings
    except UnicodeEncodeError as err:
        raise _surrogate_error(document, err) from None


__all__ = ["json_schema_symbol", "json_schema_to_ir", "schema_document"]
