"""Vocabulary and its loaders on small hand-made inputs (no downloads, no ../shared)."""

from __future__ import annotations

import base64
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leapgram.vocab.byte_level import byte_level_bytes, gpt2_unicode_to_bytes
from leapgram.vocab.loaders import token_bytes_function
from leapgram.vocab.vocabulary import Vocabulary

REPO = Path(__file__).resolve().parents[2]
BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
SENTENCEPIECE = {
    "type": "Sequence",
    "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"},
        {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0},
    ],
}


def write_tokenizer_json(
    folder: Path,
    vocab: dict[str, int],
    *,
    decoder: dict | None = BYTE_LEVEL,
    added: list[dict] = (),
    eos_token: object = None,
) -> Path:
    """A minimal tokenizer.json (plus tokenizer_config.json when ``eos_token`` is given)."""
    folder.mkdir(parents=True, exist_ok=True)
    spec = {
        "version": "1.0",
        "added_tokens": [
            {"single_word": False, "lstrip": False, "rstrip": False, "normalized": False, **a} for a in added
        ],
        "normalizer": None,
        "pre_tokenizer": {
            "type": "ByteLevel",
            "add_prefix_space": False,
            "trim_offsets": True,
            "use_regex": True,
        },
        "post_processor": None,
        "decoder": decoder,
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "vocab": vocab,
            "merges": [],
        },
    }
    (folder / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    if eos_token is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps({"eos_token": eos_token}), encoding="utf-8")
    return folder / "tokenizer.json"


# --- the constructor and accessors ---------------------------------------------------------------


def test_byte_vocabulary() -> None:
    vocab = Vocabulary.byte_vocabulary()
    assert vocab.size == 257
    assert [vocab.token_bytes(i) for i in range(256)] == [bytes([i]) for i in range(256)]
    assert vocab.token_bytes(256) == b"<eos>"
    assert vocab.eos_token_ids == (256,)
    assert vocab.special_token_ids == {256}
    assert vocab.is_special(256) and not vocab.is_special(ord("<"))
    assert vocab.encode(b"hi\xff") == [104, 105, 255]
    assert vocab.decode([104, 105, 256]) == b"hi<eos>"
    assert repr(vocab) == "Vocabulary('bytes', size=257, special=1, eos=[256])"


def test_duplicate_bytes_keep_their_own_ids() -> None:
    vocab = Vocabulary([b"a", b"ab", b"a", b"<s>"], special_token_ids=[3])
    assert vocab.tokens() == [b"a", b"ab", b"a", b"<s>"]
    assert vocab.token_bytes(0) == vocab.token_bytes(2) == b"a"
    assert vocab.decode([2, 1, 0]) == b"aaba"
    assert vocab.eos_token_ids == () and vocab.special_token_ids == {3}


def test_eos_tokens_are_special_and_keep_their_order() -> None:
    vocab = Vocabulary([b"a", b"b", b"c", b"d"], special_token_ids=[0], eos_token_ids=[3, 1, 3])
    assert vocab.eos_token_ids == (3, 1)
    assert vocab.special_token_ids == {0, 1, 3}


def test_tokens_may_be_bytearrays() -> None:
    vocab = Vocabulary([bytearray(b"a"), memoryview(b"bc")])
    assert vocab.tokens() == [b"a", b"bc"] and all(type(t) is bytes for t in vocab.tokens())


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tokens": []}, "at least one token"),
        ({"tokens": b"abc"}, "sequence of bytes"),
        ({"tokens": [b"a", "b"]}, "token 1 must be bytes"),
        ({"tokens": [b"a"], "eos_token_ids": [1]}, "token id 1 out of range"),
        ({"tokens": [b"a"], "special_token_ids": [-1]}, "token id -1 out of range"),
        ({"tokens": [b"a"], "special_token_ids": ["0"]}, "must hold ints"),
        ({"tokens": [b"a"], "eos_token_ids": [True]}, "must hold ints"),
        ({"tokens": [b"a"], "encoder": "not callable"}, "encoder must be callable"),
    ],
)
def test_constructor_rejects_misuse(kwargs: dict, message: str) -> None:
    tokens = kwargs.pop("tokens")
    expected = TypeError if "callable" in message else ValueError  # a wrong type, or a wrong value
    with pytest.raises(expected, match=message):
        Vocabulary(tokens, **kwargs)


def test_ids_out_of_range_raise() -> None:
    vocab = Vocabulary.byte_vocabulary()
    for bad in (-1, 257, 10**6):
        with pytest.raises(ValueError, match=f"token id {bad} out of range for a vocabulary of size 257"):
            vocab.token_bytes(bad)
        with pytest.raises(ValueError, match="out of range"):
            vocab.is_special(bad)
        with pytest.raises(ValueError, match="out of range"):
            vocab.decode([1, bad])


def test_encode_without_encoder_or_with_text_raises() -> None:
    vocab = Vocabulary([b"a"], name="tiny")
    with pytest.raises(ValueError, match="has no encoder"):
        vocab.encode(b"a")
    with pytest.raises(TypeError, match=r"encode takes bytes, not str; use text.encode\(\)"):
        Vocabulary.byte_vocabulary().encode("a")  # type: ignore[arg-type]


def test_custom_encoder() -> None:
    vocab = Vocabulary([b"a", b"b"], encoder=lambda data: [data.count(b"a")])
    assert vocab.encode(bytearray(b"aab")) == [2]


def test_import_loads_no_optional_dependency(tmp_path: Path) -> None:
    write_tokenizer_json(tmp_path, {"a": 0})
    code = (
        "import sys; from leapgram.vocab.vocabulary import Vocabulary; "
        f"Vocabulary.from_tokenizer_json({str(tmp_path)!r}); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('tokenizers', 'regex', 'tiktoken', 'transformers', 'torch')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


# --- tokenizer.json ------------------------------------------------------------------------------


def test_gpt2_byte_table() -> None:
    table = gpt2_unicode_to_bytes()
    assert sorted(table.values()) == list(range(256))
    assert (table["Ġ"], table["Ċ"], table["ĉ"], table["!"], table["Ń"], table["ÿ"]) == (
        32,
        10,
        9,
        33,
        0xAD,
        0xFF,
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ġhello", b" hello"),
        ("ĊĊ", b"\n\n"),
        ("Ã©", "é".encode()),
        ("åĲ", b"\xe5\x90"),
        ("a b", b"a b"),
        ("é€", "é€".encode()),
        ("\u00a0x", "\u00a0x".encode()),
    ],
)
def test_byte_level_bytes(text: str, expected: bytes) -> None:
    assert byte_level_bytes(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\u2581Hello", b" Hello"),
        ("<0x0A>", b"\n"),
        ("<0xe9>", b"\xe9"),
        ("<0xZZ>", b"<0xZZ>"),
        ("<0x0A", b"<0x0A"),
        ("a\u2581\u2581b", b"a  b"),
        ("<0x 1>", b"<0x 1>"),
    ],
)
def test_sentencepiece_bytes(text: str, expected: bytes) -> None:
    assert token_bytes_function(SENTENCEPIECE)(text) == expected


def test_metaspace_decoder() -> None:
    decoder = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True}
    assert token_bytes_function(decoder)("\u2581a<0x0A>") == b" a<0x0A>"


@pytest.mark.parametrize(
    ("decoder", "message"),
    [
        (None, "has no decoder"),
        ({"type": "WordPiece", "prefix": "##", "cleanup": True}, "unsupported decoder 'WordPiece'"),
        (
            {"type": "Sequence", "decoders": [{"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
            "Strip decoder before Fuse",
        ),
        (
            {"type": "Sequence", "decoders": [BYTE_LEVEL, SENTENCEPIECE["decoders"][0]]},
            "ByteLevel mixes only",
        ),
        ({"type": "Replace", "pattern": {"Regex": "x+"}, "content": " "}, "only String"),
    ],
)
def test_unsupported_decoders_raise(decoder: dict | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        token_bytes_function(decoder)


def test_from_tokenizer_json_byte_level(tmp_path: Path) -> None:
    added = [{"id": 3, "content": "<|end|>", "special": True}, {"id": 4, "content": "ĠĠ", "special": False}]
    file = write_tokenizer_json(
        tmp_path / "tiny", {"a": 0, "Ġb": 1, "Ċ": 2}, added=added, eos_token="<|end|>"
    )
    for path in (file, file.parent, str(file.parent)):
        vocab = Vocabulary.from_tokenizer_json(path)
        assert vocab.tokens() == [b"a", b" b", b"\n", b"<|end|>", "ĠĠ".encode()]
        assert vocab.special_token_ids == {3} and vocab.eos_token_ids == (3,)
        assert vocab.name == "tiny"


def test_from_tokenizer_json_fills_gaps_with_special_placeholders(tmp_path: Path) -> None:
    added = [{"id": 9, "content": "</s>", "special": True}]
    write_tokenizer_json(tmp_path, {"\u2581a": 0, "<0x0A>": 2, "b": 5}, decoder=SENTENCEPIECE, added=added)
    vocab = Vocabulary.from_tokenizer_json(tmp_path)
    assert vocab.size == 10
    assert vocab.tokens() == [b" a", b"", b"\n", b"", b"", b"b", b"", b"", b"", b"</s>"]
    assert vocab.special_token_ids == {1, 3, 4, 6, 7, 8, 9}
    assert vocab.eos_token_ids == ()


@pytest.mark.parametrize(
    ("eos_token", "expected"), [("b", (1,)), ({"content": "<e>", "special": True}, (2,))]
)
def test_eos_from_tokenizer_config(tmp_path: Path, eos_token: object, expected: tuple[int, ...]) -> None:
    added = [{"id": 2, "content": "<e>", "special": True}]
    write_tokenizer_json(tmp_path, {"a": 0, "b": 1}, added=added, eos_token=eos_token)
    assert Vocabulary.from_tokenizer_json(tmp_path).eos_token_ids == expected
    assert Vocabulary.from_tokenizer_json(tmp_path, eos_token_ids=[0]).eos_token_ids == (0,)


def test_eos_from_special_tokens_map(tmp_path: Path) -> None:
    write_tokenizer_json(tmp_path, {"a": 0, "b": 1})
    (tmp_path / "special_tokens_map.json").write_text(json.dumps({"eos_token": {"content": "b"}}))
    assert Vocabulary.from_tokenizer_json(tmp_path).eos_token_ids == (1,)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"eos_token": "a"}))
    assert Vocabulary.from_tokenizer_json(tmp_path).eos_token_ids == (0,)


def test_from_tokenizer_json_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no tokenizer.json at"):
        Vocabulary.from_tokenizer_json(tmp_path)
    write_tokenizer_json(tmp_path, {"a": 0}, eos_token="</s>")
    with pytest.raises(ValueError, match="eos_token '</s>' is not in the vocabulary; pass eos_token_ids="):
        Vocabulary.from_tokenizer_json(tmp_path)
    with pytest.raises(ValueError, match="out of range"):
        Vocabulary.from_tokenizer_json(tmp_path, eos_token_ids=[5])
    write_tokenizer_json(tmp_path, {"a": 0}, decoder={"type": "CTC"})
    with pytest.raises(ValueError, match="unsupported decoder 'CTC'"):
        Vocabulary.from_tokenizer_json(tmp_path)


def test_encode_with_a_tokenizers_bpe(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers", reason="needs tokenizers: pip install leapgram[hf]")
    table = gpt2_unicode_to_bytes()
    chars = {byte: char for char, byte in table.items()}
    vocab = {chars[b]: b for b in range(256)} | {"ab": 256, "Ġa": 257, "Ġab": 258}
    model = tokenizers.models.BPE(vocab, [("Ġ", "a"), ("a", "b"), ("Ġa", "b")])
    tok = tokenizers.Tokenizer(model)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = tokenizers.decoders.ByteLevel()
    tok.add_special_tokens(["<|end|>"])
    tok.save(str(tmp_path / "tokenizer.json"))
    loaded = Vocabulary.from_tokenizer_json(tmp_path, eos_token_ids=[259])
    assert loaded.encode(b"ab ab a\xc3\xa9") == [256, 258, 257, 0xC3, 0xA9]
    assert loaded.encode(b"ab<|end|>") == [256, *b"<|end|>"]
    assert loaded.decode(loaded.encode("x é 中".encode())) == "x é 中".encode()
    with pytest.raises(ValueError, match="byte 0xff at offset 2 is not valid UTF-8"):
        loaded.encode(b"ab\xff")
    assert pickle.loads(pickle.dumps(loaded)).encode(b"ab ab") == [256, 258]
    hf = Vocabulary.from_huggingface(tok)
    assert hf.tokens() == loaded.tokens() and hf.encode(b"ab ab") == [256, 258]


def test_from_huggingface_rejects_other_objects() -> None:
    with pytest.raises(ValueError, match="takes a tokenizers.Tokenizer or a transformers fast tokenizer"):
        Vocabulary.from_huggingface(object())


# --- tiktoken rank files -------------------------------------------------------------------------

SIMPLE_PATTERN = r"""'s|'t| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
MERGES = [b"ab", b"abc", b" a", b" ab", b"aa", b"aaa", b"  ", b"\xc3\xa9", b"12", b"bb"]


def write_ranks(path: Path, tokens: list[tuple[bytes, int]]) -> Path:
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in tokens))
    return path


@pytest.fixture(scope="module")
def rank_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tokens = [(bytes([b]), b) for b in range(256)] + [(m, 256 + i) for i, m in enumerate(MERGES)]
    return write_ranks(tmp_path_factory.mktemp("ranks") / "small.tiktoken", tokens)


def small_tiktoken(rank_file: Path) -> Vocabulary:
    specials = {"<|endoftext|>": 300, "<|fim|>": 302}
    return Vocabulary.from_tiktoken(
        rank_file, pattern=SIMPLE_PATTERN, special_tokens=specials, eos_token_ids=[300]
    )


def test_from_tiktoken_layout(rank_file: Path) -> None:
    vocab = small_tiktoken(rank_file)
    assert vocab.size == 303
    assert vocab.token_bytes(65) == b"A" and vocab.token_bytes(257) == b"abc"
    assert vocab.token_bytes(300) == b"<|endoftext|>" and vocab.token_bytes(302) == b"<|fim|>"
    unused = set(range(256 + len(MERGES), 300)) | {301}
    assert vocab.special_token_ids == unused | {300, 302}
    assert all(vocab.token_bytes(i) == b"" for i in unused)
    assert vocab.eos_token_ids == (300,) and vocab.name == "small"


def test_tiktoken_encode(rank_file: Path) -> None:
    pytest.importorskip("regex", reason="tiktoken encoding needs regex: pip install regex")
    vocab = small_tiktoken(rank_file)
    assert vocab.encode(b"abc ab aaaa") == [257, 259, 258, 261]
    assert vocab.encode(b"abcd") == [257, ord("d")]
    assert vocab.encode(b"bbb") == [265, ord("b")]
    assert vocab.encode("caf\u00e9 12".encode()) == [ord("c"), ord("a"), ord("f"), 263, ord(" "), 264]
    assert vocab.encode(b"<|endoftext|>") == list(b"<|") + [
        ord("e"),
        ord("n"),
        ord("d"),
        ord("o"),
        ord("f"),
        ord("t"),
        ord("e"),
        ord("x"),
        ord("t"),
    ] + list(b"|>")
    assert pickle.loads(pickle.dumps(vocab)).encode(b"abc") == [257]


@pytest.fixture(scope="module")
def tiktoken_encoding() -> object:
    """The same small encoding in the real tiktoken, or None when it is not installed."""
    try:
        import tiktoken
    except ImportError:
        return None
    ranks = {bytes([b]): b for b in range(256)} | {m: 256 + i for i, m in enumerate(MERGES)}
    return tiktoken.Encoding("small", pat_str=SIMPLE_PATTERN, mergeable_ranks=ranks, special_tokens={})


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="abc 1é\n'sA", max_size=30) | st.text(max_size=12))
def test_tiktoken_round_trip_and_agreement(rank_file: Path, tiktoken_encoding: object, text: str) -> None:
    pytest.importorskip("regex")
    vocab = small_tiktoken(rank_file)
    ids = vocab.encode(text.encode())
    assert vocab.decode(ids) == text.encode()
    if tiktoken_encoding is not None:
        assert ids == tiktoken_encoding.encode_ordinary(text)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ("YQ== 0\nYg==\n", "small.tiktoken:2: expected 'base64-token rank'"),
        ("YQ== 0\n!!!! 1\n", "small.tiktoken:2: expected 'base64-token rank'"),
        ("YQ== 0\nYQ== 1\n", "small.tiktoken:2: token b'a' or rank 1 appears twice"),
        ("YQ== 0\nYg== 0\n", "appears twice"),
        ("YQ== -1\n", "rank must be >= 0"),
        ("\n\n", "holds no ranks"),
    ],
)
def test_bad_rank_files(tmp_path: Path, lines: str, message: str) -> None:
    path = tmp_path / "small.tiktoken"
    path.write_text(lines)
    with pytest.raises(ValueError, match=message):
        Vocabulary.from_tiktoken(path, pattern=SIMPLE_PATTERN)


def test_from_tiktoken_misuse(rank_file: Path) -> None:
    with pytest.raises(ValueError, match="needs pattern="):
        Vocabulary.from_tiktoken(rank_file, pattern="")
    with pytest.raises(ValueError, match="has id 65, which the rank file already uses"):
        Vocabulary.from_tiktoken(rank_file, pattern=SIMPLE_PATTERN, special_tokens={"<s>": 65})
    with pytest.raises(ValueError, match="gives two tokens the same id"):
        Vocabulary.from_tiktoken(rank_file, pattern=SIMPLE_PATTERN, special_tokens={"<s>": 400, "</s>": 400})
    with pytest.raises(ValueError, match="needs a non-negative int id"):
        Vocabulary.from_tiktoken(rank_file, pattern=SIMPLE_PATTERN, special_tokens={"<s>": -3})


def test_tiktoken_without_a_byte_cannot_encode_it(tmp_path: Path) -> None:
    pytest.importorskip("regex")
    vocab = Vocabulary.from_tiktoken(
        write_ranks(tmp_path / "r", [(b"a", 0), (b"b", 1)]), pattern=SIMPLE_PATTERN
    )
    assert vocab.encode(b"ab") == [0, 1]
    with pytest.raises(ValueError, match=r"no token for b'c'"):
        vocab.encode(b"abc")
