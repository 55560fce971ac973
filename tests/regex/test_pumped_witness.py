"""``Emptiness._pumped_witness``: an intersection's string found by pumping one part's shortest
string with a byte (a pattern with a ``minLength`` past its shortest string). Every string found
matches every part, and ``is_empty`` answers as the search does without it."""

from __future__ import annotations

import pytest

from leapgram.regex import ExprPool, parse_regex
from leapgram.regex.emptiness import WITNESS_BYTES, Emptiness

CASES = [
    (r".*\d+-[A-Fa-f0-9]*-[A-Fa-f0-9]{4}.*", r"[ -~]{12,}"),  # o79409's trace_id, shorter
    (r".*[A-z]+.*", r"[^\x22\x5c]{3,64}"),  # o23174's region
    (r"a.*b", r".{5,}"),
    (r"(ab)*", r"[a-z]{7,9}"),  # odd lengths only: empty, no pump helps
    (r"(ab)*", r"[a-z]{8,9}"),
    (r"x[0-9]+", r"[a-z0-9]{3,}"),
    (r"[0-9]{2}", r"[0-9]{3,}"),  # no pump: empty
    (r"a+b", r"[ab]{4,}"),  # the pump byte ends the pattern: empty past... found by the search
    (r"[a-c]*z", r"[a-z]{0,3}"),
]


def _both(pool: ExprPool, left: str, right: str) -> int:
    return pool.intersect([parse_regex(left, pool), parse_regex(right, pool)])


@pytest.mark.parametrize(("left", "right"), CASES)
def test_pumped_witness_matches_every_part(left, right):
    pool = ExprPool()
    e = _both(pool, left, right)
    if pool.kind[e] != 5:  # (K_AND) a law of intersect decided it
        return
    found = pool._pumped_witness(pool.args[e], WITNESS_BYTES)
    if found is not None:
        assert all(pool.matches(part, found) for part in pool.args[e])
        assert pool.matches(e, found)


@pytest.mark.parametrize(("left", "right"), CASES)
def test_is_empty_as_the_search_says(left, right, monkeypatch):
    pool = ExprPool()
    pumped = pool.is_empty(_both(pool, left, right))
    monkeypatch.setattr(Emptiness, "_pumped_witness", lambda self, parts, room: None)
    pool = ExprPool()
    assert pool.is_empty(_both(pool, left, right)) == pumped


def test_a_long_minimum_is_pumped():
    pool = ExprPool()
    e = _both(pool, r".*\d+-[A-Fa-f0-9]*-[A-Fa-f0-9]{24}.*", r"[ -~]{35,}")
    found = pool._witness(e, WITNESS_BYTES)
    assert found is not None and len(found) == 35 and pool.matches(e, found)
