"""JSON Schema strings: the lexeme of one JSON string value (quotes included) for a schema.

Only the unconstrained string so far; ``minLength``, ``maxLength``, ``pattern`` and ``format`` are
refused (``ctx.unsupported``) until they are implemented here.
"""

from __future__ import annotations

from ...regex.syntax import parse_regex
from .context import SchemaContext

# One JSON string, quotes included: unescaped characters other than controls, or an escape.
JSON_STRING = r'"([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'

STRING_KEYWORDS = ("minLength", "maxLength", "pattern", "format", "contentEncoding", "contentMediaType")


def string_expr(ctx: SchemaContext, schema: dict, pointer: str) -> int:
    """The pool expression of every JSON string (with its quotes) valid under ``schema``'s string
    keywords; other keywords of ``schema`` are ignored here."""
    for keyword in STRING_KEYWORDS:
        if keyword in schema:
            ctx.unsupported(keyword, f"{pointer}/{keyword}", "string constraints are not implemented yet")
    return parse_regex(JSON_STRING, ctx.pool)
