"""Keywords by draft: a schema whose ``$schema`` names draft 4, 6, 7 or 2019-09 is read with that
draft's keywords only. A keyword a later draft introduced (``const`` in a draft-4 schema,
``if`` in draft 6, ``prefixItems`` in 2019-09) is ignored, as that draft's validators ignore it:
``not: {const: 1}`` under draft 4 is ``not: {}`` and allows nothing.
"""

from __future__ import annotations

from typing import Any

# keyword: the first draft that defines it (drafts numbered 4, 6, 7, 2019, 2020)
INTRODUCED = {
    "const": 6, "contains": 6, "propertyNames": 6, "if": 7, "then": 7, "else": 7,
    "dependentRequired": 2019, "dependentSchemas": 2019, "minContains": 2019, "maxContains": 2019,
    "unevaluatedProperties": 2019, "unevaluatedItems": 2019, "$recursiveRef": 2019,
    "prefixItems": 2020, "$dynamicRef": 2020,
}
SUBSCHEMA = frozenset({"not", "items", "additionalItems", "additionalProperties", "contains", "propertyNames",
                       "if", "then", "else", "unevaluatedProperties", "unevaluatedItems"})
SUBSCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "items", "prefixItems"})
SUBSCHEMA_MAPS = frozenset({"properties", "patternProperties", "definitions", "$defs", "dependencies",
                            "dependentSchemas"})


def for_draft(root: Any, draft: int | None) -> Any:
    """``root`` without the keywords ``draft`` does not define, in its subschemas at every depth
    (a copy, made with a stack: schemas may nest thousands deep); ``root`` itself when the
    draft is unknown or 2020-12, or when nothing is removed."""
    if draft is None or draft >= 2020 or not _has_later_keyword(root, draft):
        return root
    holder: list[Any] = [None]
    removed = False
    pending: list[tuple[Any, Any, Any]] = [(root, holder, 0)]
    while pending:
        node, parent, key = pending.pop()
        if not isinstance(node, dict):
            parent[key] = node
            continue
        copy: dict = {}
        parent[key] = copy
        for name, value in node.items():
            if INTRODUCED.get(name, 0) > draft:
                removed = True
                continue
            copy[name] = value
            if name in SUBSCHEMA and isinstance(value, dict):
                pending.append((value, copy, name))
            elif name in SUBSCHEMA_LISTS and isinstance(value, list):
                copy[name] = list(value)
                pending += [(item, copy[name], i) for i, item in enumerate(value)]
            elif name in SUBSCHEMA_MAPS and isinstance(value, dict):
                copy[name] = dict(value)
                pending += [(item, copy[name], sub) for sub, item in value.items()]
    return holder[0] if removed else root


def _has_later_keyword(root: Any, draft: int) -> bool:
    """Whether a subschema that :func:`for_draft` visits has a keyword ``draft`` does not define
    (a walk without the copy: most schemas have none)."""
    later = frozenset(name for name, first in INTRODUCED.items() if first > draft)
    pending = [root]
    while pending:
        node = pending.pop()
        if not isinstance(node, dict):
            continue
        if not later.isdisjoint(node):
            return True
        for name, value in node.items():
            if name in SUBSCHEMA and isinstance(value, dict):  # the walk of for_draft: items is in both
                pending.append(value)
            elif name in SUBSCHEMA_LISTS and isinstance(value, list):
                pending += value
            elif name in SUBSCHEMA_MAPS and isinstance(value, dict):
                pending += value.values()
    return False
