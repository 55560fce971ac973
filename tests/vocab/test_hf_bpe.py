"""The built-in byte-level BPE equals the ``tokenizers`` package on real tokenizer.json files."""

from __future__ import annotations

import json
import sys

import pytest
from conftest import REPO, tokenizer_path

from leapgram import Vocabulary
from leapgram.vocab.hf_bpe import ByteLevelBPE

pytest.importorskip("regex", reason="the built-in BPE needs regex: pip install regex")

TEXTS = [
    "Hello world", "naïve café, résumé — Ångström", "日本語のテキストと中文，한국어도 조금。",
    "emoji 🎉🚀 family 👩‍👩‍👧 flag 🇫🇷", 'def f(x):\n    return {"a": [1, 2, 3]}\n\n\tpass  # tab\n',
    "  leading\t\ttabs   and    spaces  \n\n\n   \r\n end   ", "1234567890 3.14159 -42 1e10 0x1F",
    "rare: 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ꙮ 𓀀 \u0007 \u00ad", "", "e\u0301 A\u030a it's I'LL", '{"orderId": 1, "orderName": "x"}',
]


def corpus_texts(count: int) -> list[str]:
    files = sorted((REPO / "tests" / "data" / "jsonschemabench").glob("*.json"))[:count]
    texts = []
    for path in files:
        tests = json.loads(path.read_text(encoding="utf-8")).get("tests", [])
        texts += [json.dumps(t["data"], ensure_ascii=False) for t in tests[:1] if "data" in t]
    return texts


@pytest.mark.tokenizers
@pytest.mark.parametrize("name", ["llama3", "qwen3", "gpt2", "smollm2"])
def test_builtin_bpe_equals_tokenizers(name):
    tokenizers = pytest.importorskip("tokenizers")
    path = tokenizer_path(name) / "tokenizer.json"
    ours = ByteLevelBPE(json.loads(path.read_text(encoding="utf-8")), str(path))
    reference = tokenizers.Tokenizer.from_file(str(path))
    reference.encode_special_tokens = True
    for text in TEXTS + corpus_texts(40):
        assert ours(text.encode()) == reference.encode(text, add_special_tokens=False).ids, text


@pytest.mark.tokenizers
def test_vocabulary_encodes_without_tokenizers(monkeypatch):
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    vocab = Vocabulary.from_tokenizer_json(tokenizer_path("llama3"))
    assert vocab.encode(b"Hello world") == [9906, 1917]
    assert vocab.tokenize_partial(b"order") == ([], b"order")
    mistral = Vocabulary.from_tokenizer_json(tokenizer_path("mistral-v1"))
    with pytest.raises(ImportError, match="built-in byte-level BPE cannot read it"):
        mistral.encode(b"Hello")


def test_unsupported_specs_are_named():
    with pytest.raises(ValueError, match="normalizer 'NFKC'"):
        ByteLevelBPE({"normalizer": {"type": "NFKC"}, "model": {"type": "BPE", "vocab": {}}})
    with pytest.raises(ValueError, match="byte-level BPE models only"):
        ByteLevelBPE({"model": {"type": "Unigram", "vocab": []}})
