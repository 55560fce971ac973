"""``Vocabulary.tokenize_partial`` and ``heal_prompt``: exact bytes, canonical tokens."""

from __future__ import annotations

import pytest
from conftest import SMALL_TOKENS, tokenizer_path
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leapgram import Vocabulary, heal_prompt
from leapgram.vocab.partial import encode_in_context, kept_tokens

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
small_bytes = st.lists(st.sampled_from(SMALL_TOKENS), max_size=8).map(b"".join)

TEXTS = [
    '{"name_of_the_person": "John Smith", "age": 42, "tags": ["a", "b"]}',
    '{"orderId": 12345, "orderName": "naïve café", "x": null}',
    'def f(x):\n    return {"a": [1, 2, 3]}\n\n\tpass  # tab\n',
    "The quick brown fox jumps over the lazy dog. 1234567890 3.14159",
    "日本語のテキストと中文，한국어도 조금。 emoji 🎉🚀",
]


@SETTINGS
@given(data=small_bytes, recent=st.lists(st.integers(0, len(SMALL_TOKENS) - 1), max_size=4),
       depth=st.integers(0, 4))
def test_tokens_plus_leftover_are_the_bytes(small_vocab, data, recent, depth):
    tokens, leftover = small_vocab.tokenize_partial(data, recent, max_backoff=depth)
    assert small_vocab.decode(tokens) + leftover == data


@SETTINGS
@given(data=st.binary(max_size=12))
def test_byte_vocabulary_backs_off_nothing(byte_vocab, data):
    assert byte_vocab.tokenize_partial(data) == (list(data), b"")


def test_backoff_drops_tokens_ending_after_the_first_extendable_position():
    assert kept_tokens([2, 3, 1], 2, lambda p: p == 3) == 1
    assert kept_tokens([2, 3, 1], 1, lambda p: p == 3) == 3  # position 3 is outside the last token
    assert kept_tokens([2, 3, 1], 0, lambda p: True) == 3
    assert kept_tokens([], 4, lambda p: True) == 0


def test_misuse_raises(small_vocab):
    with pytest.raises(TypeError, match="bytes"):
        small_vocab.tokenize_partial("abc")
    with pytest.raises(ValueError, match="max_backoff"):
        small_vocab.tokenize_partial(b"abc", max_backoff=-1)
    with pytest.raises(ValueError, match="out of range"):
        small_vocab.tokenize_partial(b"abc", recent_tokens=[10_000])


@pytest.mark.tokenizers
def test_llama3_paper_examples(llama3_vocab):
    assert llama3_vocab.tokenize_partial(b"order") == ([], b"order")
    tokens, leftover = llama3_vocab.tokenize_partial(b'name_of_the_person"', recent_tokens=llama3_vocab.encode(b'{"'))
    assert [llama3_vocab.token_bytes(t) for t in tokens] == [b"name", b"_of", b"_the", b"_person"]
    assert leftover == b'"'


@pytest.mark.tokenizers
@pytest.mark.parametrize("name", ["llama3", "qwen3", "mistral-v1"])
def test_partial_tokens_are_the_tokenizers_own(name):
    """At every token boundary of a text, every piece that follows tokenizes to a prefix of the
    tokenizer's own tokens there (the oracle is ``tokenizers.Tokenizer.from_file``)."""
    tokenizers = pytest.importorskip("tokenizers")
    folder = tokenizer_path(name)
    vocab = Vocabulary.from_tokenizer_json(folder)
    reference = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    for text in TEXTS:
        ids = reference.encode(text, add_special_tokens=False).ids
        data = vocab.decode(ids)
        ends = [0]
        for token in ids:
            ends.append(ends[-1] + len(vocab.token_bytes(token)))
        for k in range(1, len(ids)):
            assert encode_in_context(vocab, data[ends[k]:], ids[:k]) == ids[k:]
            for stop in range(ends[k] + 1, min(len(data), ends[k] + 24) + 1):
                got, leftover = vocab.tokenize_partial(data[ends[k]:stop], ids[:k])
                assert got == ids[k:k + len(got)], (text, k, data[ends[k]:stop])
                assert vocab.decode(got) + leftover == data[ends[k]:stop]


@SETTINGS
@given(prompt=st.lists(st.integers(0, len(SMALL_TOKENS) + 1), max_size=8), depth=st.integers(0, 3))
def test_healing_keeps_the_bytes(small_vocab, prompt, depth):
    kept, prefix = heal_prompt(small_vocab, prompt, max_backoff=depth)
    assert prompt[:len(kept)] == kept
    assert small_vocab.decode(kept) + prefix == small_vocab.decode(prompt)
    assert len(prompt) - len(kept) <= depth
    assert not any(small_vocab.is_special(t) for t in prompt[len(kept):])


@pytest.mark.tokenizers
def test_llama3_heals_a_url(llama3_vocab):
    kept, prefix = heal_prompt(llama3_vocab, llama3_vocab.encode(b"The url is http"))
    assert llama3_vocab.decode(kept) == b"The url is"
    assert prefix == b" http"
    eot = 128009
    kept, prefix = heal_prompt(llama3_vocab, [*llama3_vocab.encode(b"x"), eot])
    assert prefix == b"" and kept[-1] == eot
