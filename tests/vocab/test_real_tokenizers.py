"""Vocabularies of the six real tokenizers (``tests/data/tokenizers``), checked against ``tokenizers``.

The oracle for token bytes is the tokenizer's own decoder, not our byte tables: each token is
decoded after a marker token and inside a minimal valid UTF-8 context built from single-byte
tokens, so that partial UTF-8 and byte-fallback tokens decode exactly instead of to U+FFFD.
"""

from __future__ import annotations

import base64
import functools
import json
import random
from pathlib import Path

import pytest
from conftest import tokenizer_path

from leapgram.vocab.vocabulary import Vocabulary

tokenizers = pytest.importorskip(
    "tokenizers", reason="needs the tokenizers package: pip install leapgram[hf]"
)

EXPECTED = {  # size, "Hello world" ids, EOS ids: from tests/data/tokenizers/README.md
    "llama3": (128256, [9906, 1917], (128001,)),
    "qwen3": (151669, [9707, 1879], (151645,)),
    "gpt2": (50257, [15496, 995], (50256,)),
    "mistral-v1": (32000, [22557, 1526], (2,)),
    "smollm2": (49152, [19556, 905], (2,)),
    "gemma3": (262144, [9259, 1902], (1,)),
}
PREPENDS_SPACE = {"mistral-v1"}
NEVER_IN_UTF8 = frozenset([0xC0, 0xC1, *range(0xF5, 0x100)])

TEXTS = [
    "Hello world",
    "The quick brown fox jumps over the lazy dog.",
    "naïve café, résumé — Ångström, Ærøskøbing",
    "日本語のテキストと中文，한국어도 조금。",
    "emoji 🎉🚀 family 👩‍👩‍👧 flag 🇫🇷 done",
    'def f(x):\n    return {"a": [1, 2, 3], "b": None}\n\n\tpass  # tab\n',
    "  leading\t\ttabs   and    spaces  \n\n\n   \r\n end   ",
    "1234567890 3.14159 -42 1e10 0x1F 2024-01-01",
    "rare: 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ꙮ 𓀀 \u0007 \u00ad",
    "",
]


@functools.cache
def _load_once(name: str) -> tuple[str, Vocabulary, object]:
    folder = tokenizer_path(name)
    vocab = Vocabulary.from_tokenizer_json(folder)
    tok = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    return name, vocab, tok


def load(name: str) -> tuple[str, Vocabulary, object]:
    """``(name, vocabulary, tokenizers.Tokenizer)``, loaded once per session."""
    return _load_once(name)


@pytest.fixture(params=sorted(EXPECTED))
def loaded(request: pytest.FixtureRequest) -> tuple[str, Vocabulary, object]:
    return load(request.param)


def utf8_completion(data: bytes) -> tuple[bytes, bytes] | None:
    """Bytes before and after ``data`` that make it valid UTF-8, or None when none can."""
    leading = len(data) - len(data.lstrip(bytes(range(0x80, 0xC0))))
    if leading > 3:
        return None
    before = (b"", b"\xc2", b"\xe1", b"\xf1")[leading]
    for after in (b"", b"\x80", b"\x80\x80", b"\x80\x80\x80", b"\xa0\x80", b"\x90\x80\x80", b"\xa0", b"\x90"):
        try:
            (before + data + after).decode("utf-8")
        except UnicodeDecodeError:
            continue
        return before, after
    return None


def single_byte_ids(vocab: Vocabulary, tok: object) -> dict[int, int]:
    """Byte → an ordinary token of that one byte, preferring ``<0xNN>`` (the decoder fuses those)."""
    ids: dict[int, int] = {}
    for i, data in enumerate(vocab.tokens()):
        usable = len(data) == 1 and not vocab.is_special(i)
        if usable and (data[0] not in ids or tok.id_to_token(i).startswith("<0x")):
            ids[data[0]] = i
    return ids


def test_size_eos_and_hello_world(loaded: tuple[str, Vocabulary, object]) -> None:
    name, vocab, tok = loaded
    size, hello, eos = EXPECTED[name]
    assert vocab.size == size == tok.get_vocab_size(with_added_tokens=True)
    assert vocab.eos_token_ids == eos
    assert all(vocab.is_special(i) for i in eos)
    assert vocab.encode(b"Hello world") == hello
    assert vocab.name == name


def test_every_token_decodes_as_the_tokenizer_decodes_it(loaded: tuple[str, Vocabulary, object]) -> None:
    _, vocab, tok = loaded
    marker = tok.token_to_id("x")
    marker_text = tok.decode([marker])
    by_byte = single_byte_ids(vocab, tok)
    checked, sequences, expected, unreachable = [], [], [], []
    for i, data in enumerate(vocab.tokens()):
        completion = utf8_completion(data)
        if completion is None:
            unreachable.append(i)
            continue
        before, after = completion
        checked.append(i)
        sequences.append([marker, *(by_byte[b] for b in before), i, *(by_byte[b] for b in after)])
        expected.append(marker_text + (before + data + after).decode("utf-8"))
    decoded = tok.decode_batch(sequences, skip_special_tokens=False)
    wrong = [(i, e, d) for i, e, d in zip(checked, expected, decoded) if e != d]
    assert not wrong, wrong[:5]
    for i in unreachable:
        data = vocab.token_bytes(i)
        assert len(data) == 1 and data[0] in NEVER_IN_UTF8, (i, data)
        assert tok.id_to_token(i) in (chr(data[0]), f"<0x{data[0]:02X}>")
        assert tok.decode([marker, i, marker]) == marker_text + "\ufffd" + marker_text


def gpt2_byte_decoder() -> dict[str, int]:
    """GPT-2's ``bytes_to_unicode`` (encoder.py), inverted; written out here as the reference."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(2**8):
        if b not in bs:
            bs.append(b)
            cs.append(2**8 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


def test_sampled_ids_against_id_to_token(loaded: tuple[str, Vocabulary, object]) -> None:
    """A second view: the token string the tokenizer stores, mapped by the published rules."""
    name, vocab, tok = loaded
    byte_decoder = gpt2_byte_decoder()
    added = tok.get_added_tokens_decoder()
    sentencepiece = name in ("mistral-v1", "gemma3")
    for i in random.Random(1234).sample(range(vocab.size), 3000):
        data, text = vocab.token_bytes(i), tok.id_to_token(i)
        if i in added:
            assert data == text.encode("utf-8")
        elif sentencepiece and text.startswith("<0x") and len(text) == 6:
            assert data == bytes([int(text[3:5], 16)])
        elif sentencepiece:
            assert data == text.replace("\u2581", " ").encode("utf-8")
        else:
            assert data == bytes(byte_decoder[c] for c in text)


def test_special_tokens_are_the_added_special_tokens(loaded: tuple[str, Vocabulary, object]) -> None:
    _, vocab, tok = loaded
    added = tok.get_added_tokens_decoder()
    assert vocab.special_token_ids == {i for i, token in added.items() if token.special}
    for i in vocab.special_token_ids:
        assert vocab.token_bytes(i) == added[i].content.encode("utf-8")
    for i, token in added.items():
        if not token.special:
            assert vocab.token_bytes(i) == token.content.encode("utf-8")
            assert not vocab.is_special(i)


@pytest.mark.parametrize("name", ["mistral-v1", "gemma3"])
def test_byte_fallback_tokens(name: str) -> None:
    _, vocab, tok = load(name)
    for byte in range(256):
        i = tok.token_to_id(f"<0x{byte:02X}>")
        assert i is not None and vocab.token_bytes(i) == bytes([byte]) and not vocab.is_special(i)


@pytest.mark.parametrize("text", TEXTS)
def test_encode_matches_tokenizers_and_round_trips(loaded: tuple[str, Vocabulary, object], text: str) -> None:
    name, vocab, tok = loaded
    ids = vocab.encode(text.encode("utf-8"))
    assert ids == tok.encode(text, add_special_tokens=False).ids
    prefix = b" " if name in PREPENDS_SPACE and text else b""
    assert vocab.decode(ids) == prefix + text.encode("utf-8")


def test_encode_gives_no_special_ids(loaded: tuple[str, Vocabulary, object]) -> None:
    _, vocab, _ = loaded
    text = "".join(vocab.token_bytes(i).decode() for i in sorted(vocab.special_token_ids)[:20]).encode()
    ids = vocab.encode(text)
    assert not any(vocab.is_special(i) for i in ids)


def test_smollm2_drops_bytes_it_has_no_token_for() -> None:
    """SmolLM2 lacks single-byte tokens for 0x04 and 0xF1 (among others); its encoder drops them."""
    _, vocab, _ = load("smollm2")
    singles = {data for data in vocab.tokens() if len(data) == 1}
    assert {b"\x04", b"\x06", b"\x13", b"\x14", b"\x16", b"\x1d", b"\xf1", b"\xf2"}.isdisjoint(singles)
    assert vocab.decode(vocab.encode("a\x04b\U00050000c".encode())) == b"ab\x90\x80\x80c"


def test_qwen3_normalizes_to_nfc() -> None:
    _, vocab, _ = load("qwen3")
    assert vocab.decode(vocab.encode("cafe\u0301".encode())) == "café".encode()


@pytest.mark.parametrize("name", ["gpt2", "mistral-v1"])
def test_from_huggingface_equals_from_tokenizer_json(name: str) -> None:
    _, vocab, tok = load(name)
    from_object = Vocabulary.from_huggingface(tok)
    assert from_object.tokens() == vocab.tokens()
    assert from_object.special_token_ids == vocab.special_token_ids
    assert from_object.eos_token_ids == ()
    assert from_object.encode(b"Hello world") == EXPECTED[name][1]


class FakeFastTokenizer:
    """What from_huggingface reads from a transformers PreTrainedTokenizerFast."""

    def __init__(self, backend: object, eos_token_id: int) -> None:
        self.backend_tokenizer = backend
        self.eos_token_id = eos_token_id
        self.name_or_path = "fake/model"


def test_from_huggingface_reads_a_transformers_tokenizer() -> None:
    _, _, tok = load("gpt2")
    fast = FakeFastTokenizer(tok, 50256)
    assert Vocabulary.from_huggingface(fast).eos_token_ids == (50256,)
    assert Vocabulary.from_huggingface(fast, eos_token_ids=[0, 1]).eos_token_ids == (0, 1)
    assert Vocabulary.from_huggingface(fast).name == "fake/model"


def test_from_tiktoken_rebuilds_llama3(tmp_path: Path) -> None:
    """Llama-3 is a tiktoken encoding: its ranks and pattern give the same encodings."""
    pytest.importorskip("regex", reason="tiktoken encoding needs regex: pip install regex")
    _, vocab, _ = load("llama3")
    with open(tokenizer_path("llama3") / "tokenizer.json", encoding="utf-8") as f:
        llama3_spec = json.load(f)
    ranks = tmp_path / "llama3.tiktoken"
    lines = (f"{base64.b64encode(data).decode()} {i}" for i, data in enumerate(vocab.tokens()) if i < 128000)
    ranks.write_text("\n".join(lines) + "\n")
    pattern = llama3_spec["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"]
    special = {a["content"]: a["id"] for a in llama3_spec["added_tokens"]}
    rebuilt = Vocabulary.from_tiktoken(ranks, pattern=pattern, special_tokens=special, eos_token_ids=[128001])
    assert rebuilt.tokens() == vocab.tokens()
    assert rebuilt.special_token_ids == vocab.special_token_ids
    for text in TEXTS:
        assert rebuilt.encode(text.encode()) == vocab.encode(text.encode()), text
