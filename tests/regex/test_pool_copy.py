"""``ExprPool.copy`` by a remembered plan of the pool's attributes (round 17, #26 criterion 2):
the same copy as the attribute-by-attribute loop it replaced, for templates and their copies."""

from __future__ import annotations

import threading

from leapgram.frontends.json_schema.common import base_pool, schema_pool
from leapgram.limits import DEFAULT_LIMITS
from leapgram.regex.expr import _LAZY_CACHES, ExprPool
from leapgram.regex.syntax import parse_regex


def _reference_copy(pool: ExprPool) -> ExprPool:
    """The loop before the plan (round 16)."""
    twin = ExprPool.__new__(ExprPool)
    twin.limits = pool.limits
    twin.lock = threading.RLock()
    own = pool.__dict__
    lazy = {name: value for name, value in own.get("_lazy", {}).items() if name not in own}
    if own.get("_template"):
        lazy.update((name, own[name]) for name in _LAZY_CACHES if name in own)
    for name, value in own.items():
        if name not in ("limits", "lock", "_lazy", "_template") and name not in lazy:
            setattr(twin, name, value.copy() if isinstance(value, (list, dict, set)) else value)
    twin._lazy = lazy
    twin._preds = {d: list(xs) for d, xs in pool._preds.items()}
    twin._shared_budget = None
    return twin


def _same_copies(pool: ExprPool) -> None:
    ours, reference = pool.copy(), _reference_copy(pool)
    mine, theirs = dict(ours.__dict__), dict(reference.__dict__)
    assert mine.pop("lock") is not theirs.pop("lock")
    assert mine.keys() == theirs.keys()
    for name, value in mine.items():
        assert value == theirs[name], name
        if isinstance(value, (list, dict, set)) and name != "_lazy":
            assert value is not pool.__dict__.get(name), f"{name} is shared with the original"
    for name, cache in mine["_lazy"].items():  # taken over on first use: shared until then
        assert cache is theirs["_lazy"][name]


def test_a_template_copies_as_before():
    _same_copies(base_pool(DEFAULT_LIMITS))
    _same_copies(base_pool(DEFAULT_LIMITS, formats=True))


def test_copies_of_copies_and_plain_pools_copy_as_before():
    first = schema_pool(DEFAULT_LIMITS)
    parse_regex(r"[a-z]+@[a-z]+\.com", first)
    first.byte_classes(len(first) - 1)  # one lazy cache taken over, the others still lazy
    _same_copies(first)
    second = first.copy()
    second.literal(b'"key"')
    _same_copies(second)
    plain = ExprPool()
    parse_regex(r"(ab|cd)*e", plain)
    _same_copies(plain)
    plain.warm_caches()  # a template made from a plain pool (as the Lark front end does)
    _same_copies(plain)


def test_copies_are_independent():
    base = base_pool(DEFAULT_LIMITS)
    size = len(base)
    one, two = base.copy(), base.copy()
    one.literal(b'"only in one"')
    assert len(two) == size == len(base) and len(one) > size
    assert one.byte_classes(0) == two.byte_classes(0)
    assert one._classes is not two._classes
