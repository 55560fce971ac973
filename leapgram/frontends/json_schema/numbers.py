"""JSON Schema numbers: the lexeme of one JSON number for a schema's numeric keywords.

Only unconstrained numbers so far; bounds and ``multipleOf`` are refused (``ctx.unsupported``)
until they are implemented here.
"""

from __future__ import annotations

from ...regex.syntax import parse_regex
from .context import SchemaContext

JSON_INTEGER = r"-?(0|[1-9][0-9]*)"
JSON_NUMBER = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"

NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")


def number_expr(ctx: SchemaContext, schema: dict, pointer: str, *, integer: bool) -> int:
    """The pool expression of every JSON number valid under ``schema``'s numeric keywords (only
    integers written without fraction or exponent when ``integer``)."""
    for keyword in NUMBER_KEYWORDS:
        if keyword in schema:
            ctx.unsupported(keyword, f"{pointer}/{keyword}", "numeric bounds are not implemented yet")
    return parse_regex(JSON_INTEGER if integer else JSON_NUMBER, ctx.pool)
