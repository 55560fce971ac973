"""``$ref`` inside one document: JSON pointers, ``$id``/``id`` and ``$anchor`` targets."""

from __future__ import annotations

from urllib.parse import unquote

from ...errors import GrammarError, UnsupportedError

ID_KEYWORDS = ("$id", "id")
SUBSCHEMA_CONTAINERS = ("$defs", "definitions", "properties", "patternProperties", "dependentSchemas")


def escape_token(token: str) -> str:
    """One JSON pointer reference token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def child(pointer: str, *tokens: object) -> str:
    return pointer + "".join("/" + escape_token(str(t)) for t in tokens)


def resolve_pointer(document: object, pointer: str, at: str) -> object:
    """The value at ``pointer`` (``/a/b``) in ``document``; GrammarError (at ``at``) if absent."""
    node = document
    for raw in pointer.split("/")[1:] if pointer else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise GrammarError(f"$ref target #{pointer} does not exist", pointer=at)
    return node


class RefIndex:
    """Where each ``$id`` and ``$anchor`` of a document points (as JSON pointers)."""

    def __init__(self, document: object) -> None:
        self.document = document
        self.ids: dict[str, str] = {}
        self.anchors: dict[str, str] = {}
        self._scan(document, "")

    def _scan(self, node: object, pointer: str) -> None:
        if isinstance(node, list):
            for i, item in enumerate(node):
                self._scan(item, child(pointer, i))
            return
        if not isinstance(node, dict):
            return
        for key in ID_KEYWORDS:
            value = node.get(key)
            if isinstance(value, str) and value:
                base, _, fragment = value.partition("#")
                if base:
                    self.ids.setdefault(base, pointer)
                    self.ids.setdefault(base.rstrip("/").rsplit("/", 1)[-1], pointer)
                if fragment and not fragment.startswith("/"):
                    self.anchors.setdefault(fragment, pointer)
        if isinstance(node.get("$anchor"), str):
            self.anchors.setdefault(node["$anchor"], pointer)
        for key, value in node.items():
            if key not in ("enum", "const", "default", "examples", "example"):
                self._scan(value, child(pointer, key))

    def target(self, ref: object, at: str) -> str:
        """The JSON pointer that ``ref`` (the value of ``$ref`` at ``at``) designates."""
        if not isinstance(ref, str):
            raise GrammarError("$ref must be a string", pointer=at)
        base, _, fragment = ref.partition("#")
        root = ""
        if base:
            found = self.ids.get(base) or self.ids.get(base.rstrip("/").rsplit("/", 1)[-1])
            if found is None:
                raise UnsupportedError("$ref", f"$ref {ref!r} points outside the document; inline the "
                                       "referenced schema under $defs", pointer=at)
            root = found
        if fragment.startswith("/") or not fragment:
            pointer = root + unquote(fragment)
        elif fragment in self.anchors:
            pointer = self.anchors[fragment]
        else:
            raise GrammarError(f"$ref anchor #{fragment} does not exist", pointer=at)
        resolve_pointer(self.document, pointer, at)
        return pointer
