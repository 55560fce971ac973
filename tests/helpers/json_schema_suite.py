"""Where the vendored JSON-Schema-Test-Suite lives, the dialect URI of each of its drafts, and
:func:`suite_schema`, the schema of a group as every engine is given it."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

SUITE = Path(__file__).resolve().parents[1] / "data" / "json_schema_test_suite"
DIALECTS = {
    "draft4": "http://json-schema.org/draft-04/schema#",
    "draft6": "http://json-schema.org/draft-06/schema#",
    "draft7": "http://json-schema.org/draft-07/schema#",
    "draft2019-09": "https://json-schema.org/draft/2019-09/schema",
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
}
REMOTE_BASE = "http://localhost:1234/"


@cache
def remotes(draft: str) -> dict[str, Any]:
    """The suite's remote documents a ``draft`` test may load, by the URL the suite serves them
    at (``remotes/`` of its own draft and the drafts' shared top level)."""
    root = SUITE / "remotes"
    found = {}
    for path in sorted(root.rglob("*.json")):
        relative = path.relative_to(root).as_posix()
        top = relative.split("/", 1)[0]
        if top.startswith("draft") and top != draft:
            continue
        found[REMOTE_BASE + relative] = json.loads(path.read_text(encoding="utf-8"))
    return found


def suite_schema(schema: Any, draft: str) -> Any:
    """``schema`` with its draft as ``$schema`` when it names none, and the remote documents it
    may reference bundled in: each one whose file name the schema mentions goes under
    ``$defs`` (``definitions`` before 2019-09) with its URL as ``$id``, the compound document of
    2020-12 §9.3, so the engines resolve the suite's remote references without a network (the
    suite expects them served at ``http://localhost:1234/``). A document whose own ``$id``
    differs from its URL (or, before 2019-09, one with a ``$ref``, which hides a sibling
    ``$id``) sits under an ``allOf`` of an entry with the URL as ``$id``."""
    if not isinstance(schema, dict):
        return schema
    out = {"$schema": DIALECTS[draft], **schema} if "$schema" not in schema else dict(schema)
    text = json.dumps(schema)
    id_key = "id" if draft == "draft4" else "$id"
    bundled = {}
    for url, document in remotes(draft).items():
        if url.rsplit("/", 1)[1] not in text or not isinstance(document, dict):
            continue
        own = document.get(id_key)
        if own is None and ("$ref" not in document or draft.startswith("draft20")):
            bundled[url] = {id_key: url, **document}
        else:
            bundled[url] = document if own == url else {id_key: url, "allOf": [document]}
    if bundled:
        defs = "$defs" if draft.startswith("draft20") else "definitions"
        out[defs] = {**out.get(defs, {}), **{f"remote:{url[len(REMOTE_BASE):]}": doc for url, doc in bundled.items()}}
    return out
