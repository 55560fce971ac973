"""``read_spec_without_merges``: the cut parse equals the whole parse, merges aside."""

from __future__ import annotations

import json

import pytest

from leapgram.vocab.loaders import read_spec_without_merges

SPEC = {
    "version": "1.0",
    "added_tokens": [{"id": 3, "content": "<s>", "special": True}],
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "merges": 4},
              "merges": ["a b", ["\"", ":"], ["\n  \"x\": 1", "c"]]},
}


def test_the_tokenizers_layout_is_cut_before_the_merges():
    spec = read_spec_without_merges(json.dumps(SPEC, indent=2))
    assert spec == {**SPEC, "model": {**SPEC["model"], "merges": []}}


@pytest.mark.parametrize("layout", [
    pytest.param(lambda spec: json.dumps(spec), id="compact"),
    pytest.param(lambda spec: json.dumps({**spec, "post": {"x": 1}}, indent=2), id="key after the model"),
    pytest.param(lambda spec: json.dumps({**spec, "model": {**spec["model"], "later": 1}}, indent=2),
                 id="key after the merges"),
    pytest.param(lambda spec: json.dumps({**spec, "model": {**spec["model"], "merges": [["merg", "es"], ["merges", "s"]]}},
                                         indent=2), id="a merge of 'merges'"),
    pytest.param(lambda spec: json.dumps({**spec, "model": {"type": "Unigram", "vocab": [["merges", -1.0]]}},
                                         indent=2), id="no merges key"),
])
def test_other_layouts_are_parsed_whole(layout):
    text = layout(SPEC)
    assert read_spec_without_merges(text) == json.loads(text)
