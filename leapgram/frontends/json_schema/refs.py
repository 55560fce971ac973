"""``$ref`` within one schema document: JSON pointers, ``$id`` and ``$anchor``."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urldefrag, urljoin

from ...errors import GrammarError, UnsupportedError
from .dialects import SUBSCHEMA_MAPS
from .formats import FORMATS

_NOT_SCHEMAS = frozenset({"enum", "const", "default", "examples", "example"})  # values, not subschemas
MAX_FAST_VISITS = 100_000  # containers RefResolver._index_fast visits before it walks again with cycle checks
_URL_DROPPED = frozenset("\t\r\n")  # what urllib's parsing removes from anywhere in a URL (RefResolver._split)
_INDEXED_KEYS = frozenset({"$id", "id", "$anchor", "$dynamicAnchor", "$recursiveAnchor"})  # what _index_one reads


class RefResolver:
    """Finds the subschema a ``$ref`` names, inside the document only.

    Every subschema with an ``$id`` (``id`` in draft 4) or an ``$anchor`` (or a
    ``$dynamicAnchor``, which a plain ``$ref`` reaches like an ``$anchor``) is indexed by its
    absolute URI, resolved against the base URI of its parent. A reference is resolved against
    the base URI where it stands; a reference to another document is an :class:`UnsupportedError`.
    A ``$dynamicRef`` (``$recursiveRef``) lands where :meth:`dynamic_target`
    (:meth:`recursive_target`) says, when the dynamic scope cannot change its target. In drafts 3 to 7 (a ``$schema`` naming ``draft-0N``) an ``$id`` beside a ``$ref`` is
    ignored, as every keyword beside ``$ref`` is there.
    """

    def __init__(self, root: Any, *, checked: bool = False) -> None:
        self.root = root
        dialect = root.get("$schema") if isinstance(root, dict) else None
        self._ref_hides_id = isinstance(dialect, str) and "draft-0" in dialect
        self.by_uri: dict[str, tuple[Any, str]] = {}
        self.base_of: dict[int, str] = {}
        self.dynamic_anchors: dict[str, int] = {}  # name -> how many $dynamicAnchor have it
        self.root_dynamic: dict[str, tuple[Any, str]] = {}  # name -> its $dynamicAnchor in the root resource
        self.recursive_anchors = 0  # schemas with "$recursiveAnchor": true (2019-09)
        self._splits: dict[tuple[str, str], tuple[str, str]] = {}
        self.formats = False  # whether some subschema has a format of FORMATS (common.schema_pool)
        base = _own_id(root) or ""
        self.root_uri = urldefrag(base)[0] if base else ""  # (urllib's parsing is slow, even of "")
        if checked:
            self._index(root, "", self.root_uri)
        elif not self._index_fast(root, self.root_uri):
            self.__init__(root, checked=True)  # the index again, from nothing, checking for cycles

    def _index_fast(self, root: Any, base: str) -> bool:
        """:meth:`_index` without tracking the containers on the path (a JSON document holds
        no cycle; the tracking was a third of the walk): the same visits in the same order,
        so the same index. False, with the index partly made, once ``MAX_FAST_VISITS``
        containers are visited: a Python object that holds itself, or a document of that
        size, whose index :meth:`_index` then makes again from the start."""
        if not isinstance(root, (dict, list)):
            return True
        pending: list[tuple[Any, Any, Any, bool]] = [(root, "", base, False)]
        base_of = self.base_of
        visits = 0
        while pending:
            schema, path, base, names = pending.pop()
            visits += 1
            if visits > MAX_FAST_VISITS:
                return False
            if isinstance(schema, list):  # only containers are pushed: scalars hold no subschema
                pending.extend(reversed([(item, (path, i), base, False) for i, item in enumerate(schema)
                                         if isinstance(item, (dict, list))]))
                continue
            if names:
                base_of[id(schema)] = base
                pending.extend(reversed([(value, (path, key), base, False) for key, value in schema.items()
                                         if isinstance(value, (dict, list))]))
                continue
            base = self._index_schema(schema, path, base)
            pending.extend(reversed([(value, (path, key), base, key in SUBSCHEMA_MAPS)
                                     for key, value in schema.items()
                                     if isinstance(value, (dict, list)) and key not in _NOT_SCHEMAS]))
        return True

    def _index(self, root: Any, pointer: str, base: str) -> None:
        # A stack, not recursion (schemas may nest thousands deep), in document order (the first
        # of two equal ids wins).
        if not isinstance(root, (dict, list)):
            return
        # A child's pointer is (parent's, key), spelled out only where an id or anchor needs it.
        # ``names``: a map of names to subschemas (``properties``, ``$defs``, ...), whose keys
        # are names, never keywords (a property called "default" holds a subschema).
        pending: list[tuple[Any, Any, Any, bool]] = [(root, pointer, base, False)]
        base_of = self.base_of
        inside: set[int] = set()  # the containers on the path to the one popped (a cycle is one of them again)
        while pending:
            schema, path, base, names = pending.pop()
            if schema is None:  # leaving container ``path`` (an id)
                inside.discard(path)
                continue
            if id(schema) in inside:
                raise GrammarError("the schema contains itself (a Python dict or list holding one of its "
                                   "ancestors); a JSON document cannot, and this one has no end",
                                   pointer=_spelled(path))
            inside.add(id(schema))
            pending.append((None, id(schema), None, False))
            if isinstance(schema, list):  # only containers are pushed: scalars hold no subschema
                children = [(item, (path, i), base, False) for i, item in enumerate(schema)
                            if isinstance(item, (dict, list))]
            elif names:
                base_of[id(schema)] = base
                children = [(value, (path, key), base, False) for key, value in schema.items()
                            if isinstance(value, (dict, list))]
            else:
                base = self._index_schema(schema, path, base)
                children = [(value, (path, key), base, key in SUBSCHEMA_MAPS) for key, value in schema.items()
                            if isinstance(value, (dict, list)) and key not in _NOT_SCHEMAS]
            pending.extend(reversed(children))

    def _index_schema(self, schema: dict, path: Any, base: str) -> str:
        """Index ``schema`` (a subschema, not a map of names) at ``path`` under ``base``; its
        subschemas' base URI."""
        if not self.formats and "format" in schema:
            name = schema["format"]
            self.formats = isinstance(name, str) and name in FORMATS
        if _INDEXED_KEYS.isdisjoint(schema):  # most: no id or anchor, the parent's base
            self.base_of[id(schema)] = base
            return base
        return self._index_one(schema, _spelled(path), base)

    def _index_one(self, schema: dict, pointer: str, base: str) -> str:
        """Index ``schema`` by its ``$id`` and anchors; its base URI (for its subschemas)."""
        own = None if self._ref_hides_id and "$ref" in schema else _own_id(schema)
        if own:
            base = _join(base, own)
            uri, fragment = urldefrag(base)
            self.by_uri.setdefault(uri, (schema, pointer))
            if fragment and not fragment.startswith("/"):
                self.by_uri.setdefault(f"{uri}#{fragment}", (schema, pointer))
            base = uri
        if schema.get("$recursiveAnchor") is True:
            self.recursive_anchors += 1
        for keyword in ("$anchor", "$dynamicAnchor"):
            anchor = schema.get(keyword)
            if isinstance(anchor, str):
                self.by_uri.setdefault(f"{base}#{anchor}", (schema, pointer))
                if keyword == "$dynamicAnchor":
                    self.dynamic_anchors[anchor] = self.dynamic_anchors.get(anchor, 0) + 1
                    if base == self.root_uri:
                        self.root_dynamic.setdefault(anchor, (schema, pointer))
        self.base_of[id(schema)] = base
        return base

    def dynamic_target(self, dynamic_ref: Any, base: str, pointer: str) -> tuple[Any, str] | None:
        """``(subschema, pointer)`` a ``$dynamicRef`` lands on whatever the dynamic scope, or
        ``None`` when that depends on the path. It starts where a ``$ref`` with its value lands;
        when that is a ``$dynamicAnchor`` of the same name (the bookend), the outermost
        resource of the dynamic scope with that anchor wins, and the outermost is always the
        root resource: its anchor when it has one, else the only one in the document."""
        found = self.resolve(dynamic_ref, base, pointer)
        fragment = urldefrag(dynamic_ref)[1]
        if not fragment or fragment.startswith("/") or not isinstance(found[0], dict) \
                or found[0].get("$dynamicAnchor") != fragment:
            return found
        if fragment in self.root_dynamic:
            return self.root_dynamic[fragment]
        return found if self.dynamic_anchors.get(fragment, 0) <= 1 else None

    def recursive_target(self, recursive_ref: Any, base: str, pointer: str) -> tuple[Any, str] | None:
        """:meth:`dynamic_target` for 2019-09's ``$recursiveRef``: where a ``$ref`` lands unless
        that resource has ``$recursiveAnchor: true``; then the root's when it has one too, else
        that one when no other resource has it, else ``None``."""
        found = self.resolve(recursive_ref, base, pointer)
        if not isinstance(found[0], dict) or found[0].get("$recursiveAnchor") is not True:
            return found
        if isinstance(self.root, dict) and self.root.get("$recursiveAnchor") is True:
            return self.root, ""
        return found if self.recursive_anchors <= 1 else None

    def base(self, schema: dict) -> str:
        return self.base_of.get(id(schema), self.root_uri)

    def resolve(self, ref: Any, base: str, pointer: str) -> tuple[Any, str]:
        """``(subschema, its JSON pointer)`` for ``ref`` standing at ``pointer`` (base ``base``)."""
        if not isinstance(ref, str):
            raise GrammarError(f"$ref must be a string, not {type(ref).__name__}", pointer=pointer)
        uri, fragment = self._split(base, ref)
        if uri and uri != self.root_uri and uri not in self.by_uri:
            raise UnsupportedError("$ref", f"$ref {ref!r} points outside this document; inline the "
                                   "referenced schema or put it under $defs", pointer=pointer)
        if not fragment.startswith("/") and fragment:
            found = self.by_uri.get(f"{uri}#{fragment}")
            if found is None:
                raise GrammarError(f"$ref {ref!r}: no $anchor {fragment!r} in this document", pointer=pointer)
            return found
        document, doc_pointer = (self.root, "") if not uri or uri == self.root_uri else self.by_uri[uri]
        try:
            return self._walk(document, doc_pointer, fragment, ref, pointer)
        except GrammarError:
            if document is self.root:
                raise
            # a pointer written from the document root under a subschema's own id (a common slip)
            return self._walk(self.root, "", fragment, ref, pointer)

    def _split(self, base: str, ref: str) -> tuple[str, str]:
        """The document URI and the fragment ``ref`` names from ``base`` (remembered: a
        document repeats its references, and urllib's parsing is slow)."""
        found = self._splits.get((base, ref))
        if found is None:
            if not base and ref[:1] == "#" and _URL_DROPPED.isdisjoint(ref):  # most: urllib's answer, without urllib
                found = self._splits[(base, ref)] = ("", ref[1:])
            else:
                found = self._splits[(base, ref)] = tuple(urldefrag(_join(base, ref) if base else ref))
        return found

    def _walk(self, node: Any, at: str, fragment: str, ref: str, pointer: str) -> tuple[Any, str]:
        for raw in fragment.split("/")[1:] if fragment else []:
            part = unquote(raw).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise GrammarError(f"$ref {ref!r} points to nothing (no {part!r})", pointer=pointer)
            at = f"{at}/{_escape(part)}"
        return node, at


def _join(base: str, ref: str) -> str:
    """``ref`` resolved against ``base``; a bare fragment also against a base whose scheme
    urllib does not resolve against (``urn:``, ``tag:``)."""
    if ref.startswith("#"):
        return urldefrag(base)[0] + ref
    return urljoin(base, ref)


def _own_id(schema: Any) -> str | None:
    """The schema's ``$id`` (or draft 4's ``id``) when it is a string."""
    if not isinstance(schema, dict):
        return None
    for key in ("$id", "id"):
        value = schema.get(key)
        if isinstance(value, str):
            return value
    return None


def _spelled(path: Any) -> str:
    """The JSON pointer of ``path``: a pointer, or ``(parent path, key or index)``."""
    parts = []
    while isinstance(path, tuple):
        path, key = path
        parts.append(_escape(key))
    return path + "".join("/" + part for part in reversed(parts))


def _escape(key: str) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")
