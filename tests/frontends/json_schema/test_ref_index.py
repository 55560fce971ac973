"""``RefResolver``'s index walk: the fast walk (no cycle tracking) and the checked one give the
same index, and past ``MAX_FAST_VISITS`` the checked one takes over."""

from __future__ import annotations

import pytest

from leapgram import GrammarError
from leapgram.frontends.json_schema import refs
from leapgram.frontends.json_schema.refs import RefResolver

DOCUMENTS = [
    {"type": "string"},
    {"$id": "https://example.com/root.json", "$defs": {
        "a": {"$id": "a.json", "properties": {"x": {"$anchor": "x", "type": "integer"}}},
        "b": {"$dynamicAnchor": "node", "items": [{"format": "date"}, {"$ref": "#/$defs/a"}]},
    }, "properties": {"default": {"$recursiveAnchor": True}, "enum": {"enum": [{"$id": "not-a-schema"}]}}},
    {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"c": {"$id": "#c", "$ref": "#"}},
     "anyOf": [{"$ref": "#c"}, {"id": "urn:x", "format": "email"}]},
]


def index(resolver: RefResolver) -> tuple:
    return (resolver.root_uri, resolver.by_uri, resolver.base_of, resolver.dynamic_anchors,
            resolver.root_dynamic, resolver.recursive_anchors, resolver.formats)


@pytest.mark.parametrize("document", DOCUMENTS)
def test_the_fast_walk_indexes_as_the_checked_one(document):
    assert index(RefResolver(document)) == index(RefResolver(document, checked=True))


@pytest.mark.parametrize("document", DOCUMENTS)
def test_past_the_visits_budget_the_checked_walk_makes_the_index_again(document, monkeypatch):
    expected = index(RefResolver(document, checked=True))
    monkeypatch.setattr(refs, "MAX_FAST_VISITS", 2)
    assert index(RefResolver(document)) == expected


def test_a_document_that_holds_itself_is_refused_at_its_pointer():
    document = {"properties": {}}
    document["properties"]["a"] = {"items": [document]}
    with pytest.raises(GrammarError) as err:
        RefResolver(document)
    assert err.value.pointer == "/properties/a/items/0"


@pytest.mark.parametrize("ref", ["#", "#/definitions/a", "#/a#b", "#a b", "#/%7Efoo", "#/x?y=1", "#//x", "#anchor",
                                 "#/a\tb", "#/a\nb", "#\r", "#/é", "other.json#/a", "/abs#x", "#/a;b?c"])
def test_a_fragment_under_no_base_splits_as_urllib_does(ref):
    from urllib.parse import urldefrag

    assert RefResolver({})._split("", ref) == tuple(urldefrag(ref))
