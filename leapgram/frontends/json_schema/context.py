"""State shared by the parts of the JSON Schema front end while one schema is translated."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import UnsupportedError
from ...regex.expr import ExprPool

# Keywords without effect on which instances are valid (annotations, vocabularies, OpenAPI extras).
ANNOTATIONS = frozenset({
    "title", "description", "default", "examples", "example", "$comment", "deprecated", "readOnly",
    "writeOnly", "$schema", "$id", "id", "$anchor", "$defs", "definitions", "$vocabulary",
    "contentEncoding", "contentMediaType", "contentSchema", "discriminator", "externalDocs", "xml", "markdownDescription",
})


@dataclass
class SchemaContext:
    """The expression pool the lexemes go into, the ``lenient`` switch and the warnings.

    ``unsupported`` is the one way a part of the front end gives up on a keyword: it raises
    :class:`UnsupportedError` (naming the keyword and its JSON pointer), or, under ``lenient``,
    records a warning and returns so the caller can skip the keyword.
    """

    pool: ExprPool
    lenient: bool = False
    warnings: list[str] = field(default_factory=list)

    def unsupported(self, keyword: str, pointer: str, advice: str) -> None:
        if not self.lenient:
            raise UnsupportedError(keyword, f"unsupported JSON Schema keyword {keyword!r}: {advice}",
                                   pointer=pointer)
        self.warnings.append(f"{pointer or '/'}: {keyword} ignored ({advice})")
