"""Nullable and productive nonterminals (leapgram.grammar.analysis) against a plain fixpoint by
passes, on hand-made and random rule lists; the kernel (packed_productive_and_nullable) against its
Python twin (productive_and_nullable)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from leapgram.grammar.analysis import (
    nullable_nonterminals,
    pack_rules,
    packed_productive_and_nullable,
    productive_and_nullable,
    productive_nonterminals,
)


def _by_passes(rules, lexemes_derive: bool, found=()) -> set[int]:
    found = set(found)
    changed = True
    while changed:
        changed = False
        for lhs, rhs in rules:
            if lhs not in found and all((s < 0 and lexemes_derive) or s in found for s in rhs):
                found.add(lhs)
                changed = True
    return found


def _random_rules(rng: random.Random, nonterminals: int, count: int) -> list[tuple[int, tuple[int, ...]]]:
    rules = []
    for _ in range(count):
        size = rng.randrange(4)
        rhs = tuple(rng.randrange(nonterminals) if rng.random() < 0.6 else -1 - rng.randrange(3) for _ in range(size))
        rules.append((rng.randrange(nonterminals), rhs))
    return rules


def test_a_rule_with_a_lexeme_never_makes_its_side_nullable():
    rules = [(0, (1, -1)), (1, ()), (2, (1, 1)), (3, (-2,)), (4, (3,)), (5, (4, 2))]
    assert nullable_nonterminals(rules) == {1, 2}
    productive, nullable = productive_and_nullable(rules)
    assert nullable == {1, 2}
    assert productive == {0, 1, 2, 3, 4, 5}


def test_a_lexeme_after_the_missing_nonterminal_blocks_once_it_is_found():
    # 0 waits on 2 (found later, from a rule further down); its lexeme after 2 keeps it out of nullable
    rules = [(0, (2, -1)), (1, (2, 2)), (2, ())]
    assert nullable_nonterminals(rules) == {1, 2}
    assert productive_nonterminals(rules) == {0, 1, 2}


@pytest.mark.parametrize("seed", range(40))
def test_random_rule_lists_match_the_fixpoint_by_passes(seed):
    rng = random.Random(seed)
    rules = _random_rules(rng, rng.randrange(1, 12), rng.randrange(30))
    nullable = _by_passes(rules, lexemes_derive=False)
    assert nullable_nonterminals(rules) == nullable
    assert productive_and_nullable(rules) == (_by_passes(rules, lexemes_derive=True), nullable)


def _by_kernel(rules, nonterminals: int):
    found = packed_productive_and_nullable(pack_rules(rules), len(rules), nonterminals)
    if found is None:
        return None
    productive, nullable = found
    assert productive.dtype == nullable.dtype == np.int8 and productive.shape == nullable.shape == (nonterminals,)
    return set(np.flatnonzero(productive).tolist()), set(np.flatnonzero(nullable).tolist())


@pytest.mark.parametrize("seed", range(200))
def test_the_kernel_finds_what_its_python_twin_finds(seed):
    rng = random.Random(seed)
    nonterminals = rng.randrange(1, 16)
    rules = _random_rules(rng, nonterminals, rng.randrange(60))
    assert _by_kernel(rules, nonterminals) == productive_and_nullable(rules)


def test_the_kernel_on_hand_made_rules():
    rules = [(0, (2, -1)), (1, (2, 2)), (2, ())]
    assert _by_kernel(rules, 3) == ({0, 1, 2}, {1, 2})
    assert _by_kernel([], 2) == (set(), set())


def test_the_kernel_refuses_a_nonterminal_past_the_count():
    assert _by_kernel([(0, (5,))], 2) is None
    assert _by_kernel([(3, ())], 2) is None
    assert pack_rules([(0, (2**40,))]) is None  # no int32: the callers take the Python sets
