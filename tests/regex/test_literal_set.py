"""``ExprPool.literal_set``: many strings (an enum's spellings) as their trie, the language of the
alternation of the literals; fewer as that alternation."""

from __future__ import annotations

import itertools
import random

from leapgram.regex import ExprPool
from leapgram.regex.construction import TRIE_MIN
from leapgram.regex.expr import K_OR


def test_few_strings_are_the_alternation():
    pool = ExprPool()
    texts = [b'"a"', b'"b"', b'"cd"']
    assert pool.literal_set(texts) == pool.alt([pool.literal(t) for t in texts])


def test_the_trie_matches_exactly_the_strings():
    rng = random.Random(7)
    pool = ExprPool()
    texts = sorted({bytes(rng.choice(b"ab\"") for _ in range(rng.randrange(0, 5))) for _ in range(40)})
    assert len(texts) >= TRIE_MIN
    e = pool.literal_set(texts)
    for size in range(6):
        for chars in itertools.product(b"ab\"", repeat=size):
            text = bytes(chars)
            assert pool.matches(e, text) == (text in texts), text


def test_a_derivative_is_one_branch():
    pool = ExprPool()
    zones = [f'"{region}/{city}"'.encode() for region in ("Africa", "America", "Asia", "Europe")
             for city in ("Abidjan", "Accra", "Bamako", "Cairo", "Dakar", "Lagos")]
    e = pool.literal_set(zones + [b'"UTC"'])
    after = pool.derivative_bytes(e, b'"Am')
    assert pool.kind[pool.derivative_bytes(e, b'"')] == K_OR
    assert pool.matches(after, b'erica/Cairo"') and not pool.matches(after, b'erica/Paris"')
    assert pool.derivative_bytes(e, b'"America/') == pool.derivative_bytes(e, b'"Europe/')  # shared tails


def test_a_string_that_is_a_prefix_of_others():
    pool = ExprPool()
    texts = [b"x" * n for n in range(1, TRIE_MIN + 80)]  # nested deeper than MAX_TRIE_DEPTH
    e = pool.literal_set(texts)
    assert all(pool.matches(e, t) for t in texts)
    assert not pool.matches(e, b"") and not pool.matches(e, b"x" * (TRIE_MIN + 80))
