"""JSON Schema front end: a schema (dict, JSON text or Pydantic model class) -> grammar IR.

Split by concern: ``translate`` (dispatch by type, enum/const, any value, whitespace), ``objects``,
``arrays``, ``combinators`` (allOf/anyOf/oneOf/not), ``refs`` ($ref, $id, $anchor), ``strings``
and ``numbers`` (the lexemes of string and number values), ``values`` (JSON literals).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

from ..._gc import paused_collections
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


_JSON_SCALARS = (str, int, float, bool, type(None))


def _bad_value_at(value: Any, pointer: str = "") -> tuple[str, str] | None:
    """The JSON pointer of the first key or value in ``value`` that no JSON text can hold (a
    string with a lone surrogate, a non-string key, a Python object that is not JSON data such
    as ``bytes``), and what it is; or None. Walked only once the translation has failed."""
    stack = [(value, pointer)]
    seen: set[int] = set()
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return where, (f"a lone surrogate in {item!r}: a schema's keys and strings must be valid Unicode "
                               "(UTF-8 output cannot contain one)")
        elif isinstance(item, (dict, list, tuple)):
            if id(item) in seen:
                continue
            seen.add(id(item))
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, member in reversed(list(pairs)):
                child = f"{where}/{str(key).replace('~', '~0').replace('/', '~1')}"
                if isinstance(item, dict) and not isinstance(key, str):
                    return where, f"the key {key!r} ({type(key).__name__}): JSON object keys are strings"
                if isinstance(key, str):
                    stack.append((key, child))
                stack.append((member, child))
        elif not isinstance(item, _JSON_SCALARS):
            return where, f"{item!r}, a Python {type(item).__name__}, which is not JSON data"
    return None


@contextlib.contextmanager
def _json_data_errors(document: Any) -> Iterator[None]:
    """Around a translation: a failure caused by something in ``document`` that is not JSON
    data is a :class:`GrammarError` at its pointer (any other failure propagates unchanged)."""
    try:
        yield
    except (UnicodeEncodeError, TypeError) as err:
        found = _bad_value_at(document)
        if found is None and isinstance(err, UnicodeEncodeError):
            found = "", f"a lone surrogate in {err.object!r}: UTF-8 output cannot contain one"
        if found is None:
            raise
        pointer, what = found
        raise GrammarError(f"the schema holds {what}", pointer=pointer) from None


def json_schema_to_ir(schema: Any, *, whitespace: str | int | tuple[str, str] = "flexible", lenient: bool = False,
                      any_order: bool | str = False, limits: Limits) -> tuple[GrammarIR, list[str]]:
    """The grammar of the JSON texts valid under ``schema``, and the warnings (keywords skipped
    under ``lenient``)."""
    document = schema_document(schema)
    with _json_data_errors(document), paused_collections():  # see paused_collections
        translator = SchemaTranslator(document, whitespace=whitespace, lenient=lenient,
                                      any_order=any_order, limits=limits)
        ir, warnings = translator.build(), translator.ctx.warnings
        del translator  # freed now, so that the collection the resumed collector makes next does not scan it
    return ir, warnings


def json_schema_symbol(schema: Any, builder: GrammarBuilder, *, whitespace: str | int | tuple[str, str] = "flexible",
                       lenient: bool = False, any_order: bool | str = False) -> tuple[int, list[str]]:
    """The symbol of the JSON texts valid under ``schema``, built into another front end's
    ``builder`` (a Lark rule or a structural tag that embeds a schema), and the warnings."""
    document = schema_document(schema)
    with _json_data_errors(document), paused_collections():
        translator = SchemaTranslator(document, whitespace=whitespace, lenient=lenient,
                                      any_order=any_order, limits=builder.limits, builder=builder)
        return translator.top_symbol(), translator.ctx.warnings


__all__ = ["json_schema_symbol", "json_schema_to_ir", "schema_document"]
