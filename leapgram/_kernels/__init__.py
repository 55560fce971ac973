"""numba kernels over flat arrays, each with a plain-Python twin used by the tests.

Kernels are compiled with ``cache=True``. numba invalidates a cached kernel when its own source
file changes, not when a kernel it calls from another module does (the trie walk in
``cfg_walk.py`` calls the Earley kernels of ``earley.py``): after editing a kernel, delete
``leapgram/_kernels/__pycache__/*.nb*`` or the walk keeps running the old code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from numba import njit as _numba_njit
from numba.core.runtime import rtsys


def njit(**options) -> Callable[[Callable], Callable]:
    """numba's ``njit`` for leapgram's kernels: loading one from numba's on-disk cache starts
    only numba's runtime, not numba's refresh of its typing and lowering registries.

    That refresh imports numba's support for numpy functions, typed containers, random numbers
    and linear algebra, which only compiling needs: about 0.15 s of a fresh process's first
    request. A cache miss still compiles through numba's pipeline, which refreshes first.
    """
    decorate = _numba_njit(**options)

    def wrapper(func: Callable) -> Callable:
        kernel = decorate(func)
        cache = getattr(kernel, "_cache", None)
        if callable(getattr(cache, "_load_overload", None)):
            cache.load_overload = functools.partial(_load_overload, cache)
        return kernel

    return wrapper


def _load_overload(cache, sig, target_context):
    rtsys.initialize(target_context)
    with cache._guard_against_spurious_io_errors():
        return cache._load_overload(sig, target_context)
