"""Where a front end's base pool may be kept between processes: a seam, filled from above.

The JSON Schema front end builds its base pools (:func:`leapgram.frontends.json_schema.common.base_pool`)
once per process; :mod:`leapgram.pool_cache`, imported by ``import leapgram``, registers here
the on-disk store that keeps them between processes (front ends may not import the vocabulary
cache it uses, docs/design/warm-up.md, "Round 25"). With nothing registered every pool is built.
"""

from __future__ import annotations

from collections.abc import Callable

from ..limits import Limits
from .expr import ExprPool

_STORE: list[tuple[Callable, Callable]] = []  # (read, write): see register


def register(read: Callable[[Limits, bool, tuple], ExprPool | None],
             write: Callable[[ExprPool, Limits, bool, tuple], bool]) -> None:
    """Use ``read(limits, formats, settings)`` and ``write(pool, limits, formats, settings)``."""
    _STORE[:] = [(read, write)]


def read_pool(limits: Limits, formats: bool, settings: tuple) -> ExprPool | None:
    """The pool kept for these arguments, or None (none kept, or no store registered)."""
    return _STORE[0][0](limits, formats, settings) if _STORE else None


def write_pool(pool: ExprPool, limits: Limits, formats: bool, settings: tuple) -> bool:
    """Keep ``pool`` for :func:`read_pool`; False when nothing was kept."""
    return bool(_STORE) and _STORE[0][1](pool, limits, formats, settings)
