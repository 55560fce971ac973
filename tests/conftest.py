"""Shared fixtures: small hand-made vocabularies and, when ../shared is present, real tokenizers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from leapgram import Vocabulary

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
TOKENIZERS = SHARED / "tokenizers"


def tokenizer_path(name: str) -> Path:
    """The folder of a real tokenizer in ../shared, or skip the test saying how to enable it."""
    path = TOKENIZERS / name / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"real tokenizer {name} absent: put ../shared/tokenizers/{name}/tokenizer.json beside the repo")
    return path.parent


@pytest.fixture(scope="session")
def llama3_vocab() -> Vocabulary:
    return Vocabulary.from_tokenizer_json(tokenizer_path("llama3"))


@pytest.fixture(scope="session")
def byte_vocab() -> Vocabulary:
    return Vocabulary.byte_vocabulary()


SMALL_TOKENS = [
    b"a", b"b", b"c", b"ab", b"abc", b"bc", b"ca", b"1", b"2", b"12", b"123", b"0", b" ", b"  ",
    b" a", b" ab", b'"', b'",', b'":', b"{", b"}", b"{\"", b"\n", b"x", b"xyz", b"\xc3", b"\xa9",
    b"\xc3\xa9", b"\xe2\x98", b"\x83", b"\xe2\x98\x83", b"ab", b"-", b".", b"\\", b"\\n",
]


@pytest.fixture(scope="session")
def small_vocab() -> Vocabulary:
    """A hand-made vocabulary with duplicates, partial UTF-8 and an EOS plus another special."""
    tokens = list(SMALL_TOKENS) + [b"<eos>", b"<pad>"]
    n = len(SMALL_TOKENS)
    return Vocabulary(tokens, special_token_ids=[n, n + 1], eos_token_ids=[n], name="small")


def numba_disabled() -> bool:
    return os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")
