"""The numpy trie build against the plain loop it replaced (kept here as its twin)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from leapgram import Vocabulary
from leapgram.vocab.trie import TokenTrie

FIELDS = ("node_byte", "node_depth", "node_token", "node_end", "dup_primary", "dup_other", "node_info")


def naive_trie(vocab: Vocabulary, token_ids=None) -> dict[str, list[int]]:
    """Depth-first nodes built one token at a time along the path of the previous token."""
    tokens = vocab.tokens()
    ids = range(vocab.size) if token_ids is None else token_ids
    order = sorted((t for t in ids if tokens[t] and not vocab.is_special(t)), key=tokens.__getitem__)
    nodes = {"node_byte": [0], "node_depth": [0], "node_token": [-1], "node_end": [0], "dup_primary": [],
             "dup_other": []}
    path, prev = [0], b""
    for tid in order:
        data = tokens[tid]
        if data == prev:
            nodes["dup_primary"].append(nodes["node_token"][path[len(data)]])
            nodes["dup_other"].append(tid)
            continue
        shorter = min(len(prev), len(data))
        common = next((i for i in range(shorter) if prev[i] != data[i]), shorter)
        for node in path[common + 1:]:
            nodes["node_end"][node] = len(nodes["node_byte"])
        del path[common + 1:]
        for depth in range(common, len(data)):
            path.append(len(nodes["node_byte"]))
            for key, value in (("node_byte", data[depth]), ("node_depth", depth + 1), ("node_token", -1),
                               ("node_end", 0)):
                nodes[key].append(value)
        nodes["node_token"][path[-1]] = tid
        prev = data
    for node in path:
        nodes["node_end"][node] = len(nodes["node_byte"])
    nodes["node_info"] = [b | d << 8 | t << 24 for b, d, t in zip(nodes["node_byte"], nodes["node_depth"],
                                                                  nodes["node_token"])]
    return nodes


def random_vocab(seed: int) -> Vocabulary:
    rng = random.Random(seed)
    alphabet = [0, 1, 97, 98, 255]
    tokens = [bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 6))) for _ in range(300)]
    return Vocabulary(tokens, special_token_ids=rng.sample(range(300), 10))


def long_vocab(seed: int) -> Vocabulary:
    """Tokens around 16 bytes that share their first 16 (the numpy sort's key) with zero bytes."""
    rng = random.Random(seed)
    heads = [b"\x00" * 16, b"a" * 15 + b"\x00", b"a" * 16, b"a" * 14]
    tokens = [rng.choice(heads)[:rng.randrange(10, 17)] + bytes(rng.choice([0, 97, 255]) for _ in range(rng.randrange(0, 8)))
              for _ in range(300)]
    return Vocabulary(tokens)


VOCABS = {
    "bytes": Vocabulary.byte_vocabulary,
    "duplicates": lambda: Vocabulary(
        [b"a", b"ab", b"a", b"", b"b\x00", b"b", b"ab", b"b\x00\x01", b"\x00", b"\x00"], special_token_ids=[5]),
    "one": lambda: Vocabulary([b"xyz"]),
    "only special": lambda: Vocabulary([b"<s>", b""], special_token_ids=[0]),
    **{f"random {seed}": (lambda seed=seed: random_vocab(seed)) for seed in range(8)},
    **{f"long {seed}": (lambda seed=seed: long_vocab(seed)) for seed in range(4)},
}


@pytest.mark.parametrize("name", VOCABS)
@pytest.mark.parametrize("subset", ["all", "every third", "reversed sample", "none"])
def test_numpy_build_matches_the_loop(name, subset):
    vocab = VOCABS[name]()
    sample = sorted(random.Random(3).sample(range(vocab.size), vocab.size // 2), reverse=True)
    token_ids = {"all": None, "every third": list(range(0, vocab.size, 3)), "none": [], "reversed sample": sample}[subset]
    trie, expected = TokenTrie(vocab, token_ids), naive_trie(vocab, token_ids)
    for field in FIELDS:
        assert getattr(trie, field).tolist() == expected[field], field
    assert trie.max_depth == max(expected["node_depth"])
    assert trie.node_info.dtype == np.int64 and trie.node_end.dtype == np.int32


def test_token_ids_out_of_range_raise():
    with pytest.raises(ValueError):
        TokenTrie(Vocabulary.byte_vocabulary(), [3, 400])
