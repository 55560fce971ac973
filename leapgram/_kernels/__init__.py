"""numba kernels over flat arrays, each with a plain-Python twin used by the tests.

Kernels are compiled with ``cache=True``. numba invalidates a cached kernel when its own source
file changes, not when a kernel it calls from another module does (the trie walk in
``cfg_walk.py`` calls the Earley kernels of ``earley.py``), so a cached walk would keep running an
edited Earley kernel's old code. Each kernel's cache is therefore stamped with the SHA-256 of every
kernel module's source together (:func:`_kernels_stamp`): editing one recompiles them all.

The cache files' names hold numba's version (``...py311-numba0.68.1.nbi``): numba names them by
function and Python version only, and discards an index written by another numba version, so
one checkout used from two environments (numba 0.65 beside vLLM, 0.68 elsewhere) recompiled
every kernel (over 40 s) each time the other environment had run.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import sys
import threading
from collections.abc import Callable

import numba
import numpy as np
from numba import njit as _numba_njit
from numba.core import config as numba_config
from numba.core import types
from numba.core.caching import CompileResultCacheImpl, FunctionCache
from numba.core.dispatcher import Dispatcher
from numba.core.runtime import rtsys
from numba.core.typing.typeof import Purpose, typeof
from numba.np import numpy_support

from .entry import same_machine_code

_MODULES = ("trie_walk", "tables", "earley", "cfg_walk", "rows", "views", "rule_tables")
# loaded first, in the order a JSON Schema's first request calls them (grammar, compile, Matcher, first
# mask, first token, later masks): with LEAPGRAM_PRELOAD_KERNELS=0 or a compile that does not wait, its
# first masks find them loaded sooner
_FIRST_USED = (("rule_tables", "productive_nullable_kernel"), ("rule_tables", "rule_tables_kernel"),
               ("views", "lexer_views_kernel"), ("views", "grammar_views_kernel"), ("views", "arena_views_kernel"),
               ("earley", "root_kernel"),
               ("cfg_walk", "walk_cfg_kernel"), ("rows", "row_hash_kernel"), ("cfg_walk", "advance_cfg_kernel"),
               ("tables", "table_get_kernel"), ("rows", "rows_equal_kernel"), ("trie_walk", "walk_trie_kernel"))
_FOLDER = os.path.dirname(os.path.abspath(__file__))  # the kernel modules' (their caches share one stamp)
_LOADED = threading.Event()  # set once the thread is done (or when it does not start)
_THREADS: list[threading.Thread] = []  # the threads started


def njit(**options) -> Callable[[Callable], Callable]:
    """numba's ``njit`` for leapgram's kernels: loading one from numba's on-disk cache starts
    only numba's runtime, not numba's refresh of its typing and lowering registries.

    That refresh imports numba's support for numpy functions, typed containers, random numbers
    and linear algebra, which only compiling needs: about 0.15 s of a fresh process's first
    request. A cache miss still compiles through numba's pipeline, which refreshes first.
    Kernels must therefore not hash strings or tuples: the hash secret's symbols are set by a
    module only the refresh imports (flat arrays and integer arithmetic need nothing more).

    A kernel also types a tuple argument (which numba's dispatcher types in Python, once per
    kind of tuple) without importing ``numpy.ma``: see :func:`_typeof_pyval`. With
    ``cache=True`` its cache files are named per numba version (:class:`PerVersionCache`).
    """
    cached = options.pop("cache", False)
    decorate = _numba_njit(**options)

    def wrapper(func: Callable) -> Callable:
        kernel = decorate(func)
        if cached and isinstance(kernel, Dispatcher):
            kernel._cache = PerVersionCache(kernel.py_func)  # what numba's enable_caching does
        cache = getattr(kernel, "_cache", None)
        if callable(getattr(cache, "_load_overload", None)):
            cache.load_overload = functools.partial(_load_overload, cache)
        if isinstance(kernel, Dispatcher) and callable(getattr(kernel, "typeof_pyval", None)):
            kernel.typeof_pyval = functools.partial(_typeof_pyval, kernel, kernel.typeof_pyval)
        return kernel

    return wrapper


class _PerVersionCacheImpl(CompileResultCacheImpl):
    def __init__(self, py_func) -> None:
        super().__init__(py_func)
        locator, source = self._locator, getattr(self._locator, "_py_file", None)
        if source and not getattr(sys, "frozen", False) and os.path.dirname(os.path.abspath(source)) == _FOLDER:
            locator.get_source_stamp = _kernels_stamp  # numba's own: this file's alone

    def get_filename_base(self, fullname: str, abiflags: str) -> str:
        return f"{super().get_filename_base(fullname, abiflags)}-numba{numba.__version__}"


@functools.cache
def _kernels_stamp() -> str:
    """The SHA-256 of the kernel modules' sources (this package's ``*.py``, by name), read once a
    process: a cached kernel is stale when any of them changed, as it may have inlined another
    module's kernel. About 0.1 ms for the ~100 KB."""
    digest = hashlib.sha256()
    for name in sorted(os.listdir(_FOLDER)):
        if name.endswith(".py"):
            with open(os.path.join(_FOLDER, name), "rb") as source:
                digest.update(name.encode() + b"\0" + source.read() + b"\0")
    return digest.hexdigest()


class PerVersionCache(FunctionCache):
    """numba's on-disk cache of a kernel (in the same folder: ``__pycache__`` beside the source,
    or ``NUMBA_CACHE_DIR``), with files named per numba version so that two versions keep two
    indexes instead of overwriting one."""

    _impl_class = _PerVersionCacheImpl


def _typeof_pyval(kernel: Dispatcher, numba_typeof_pyval: Callable, value):
    """numba's type of the argument ``value``, which numba's dispatcher asks for when its C code
    cannot tell (a tuple, the first time it meets its kind), found without importing
    ``numpy.ma``: numba's own looks up ``np.ma.MaskedArray`` for every array, and numpy imports
    ``numpy.ma`` on that first lookup (10-20 ms of a fresh process's first request). An array of
    type exactly ``np.ndarray`` is no ``MaskedArray``, so its type is numba's without the test.
    Anything else (or a failure) is numba's own answer."""
    try:
        found = _exact_type(value)
        active = kernel._types_active_call  # numba keeps the types of the call alive there
    except Exception:  # noqa: BLE001 (numba internals changed, or a value numba types its way)
        found = None
    if found is None:
        return numba_typeof_pyval(value)
    active.add(found)
    return found


def _exact_type(value):
    """The type numba's ``typeof(value, Purpose.argument)`` gives a plain array (as numba's
    ``_typeof_ndarray``, less the ``MaskedArray`` test), a number (Python's or numpy's), a bool or
    a tuple of them; None for anything else."""
    kind = type(value)
    if kind is np.ndarray:
        return types.Array(numpy_support.from_dtype(value.dtype), value.ndim, numpy_support.map_layout(value),
                           readonly=not value.flags.writeable)
    if kind is tuple:
        members = [_exact_type(member) for member in value]
        return None if any(member is None for member in members) else types.BaseTuple.from_types(members, tuple)
    if kind is int or kind is bool or kind is float or isinstance(value, (np.number, np.bool_)):
        return typeof(value, Purpose.argument)  # numba's own (no array, no numpy.ma)
    return None


def _load_overload(cache, sig, target_context):
    rtsys.initialize(target_context)
    with cache._guard_against_spurious_io_errors():
        return cache._load_overload(sig, target_context)


def start_loading_cached_kernels() -> threading.Thread | None:
    """Load every kernel that numba's on-disk cache holds, in a thread started at the end of
    ``import leapgram``, rather than inside the first masks (2-15 ms a kernel, 0.05-0.1 s in all).

    Loading is half Python, half LLVM outside the GIL (parsing bitcode, linking, compiling
    numba's runtime), so it overlaps the caller's vocabulary loading; a kernel called meanwhile
    waits only for numba's compiler lock, and ``GrammarCompiler.compile`` waits for the thread
    (:func:`wait_for_kernels`). The kernel modules are imported here, in the caller's thread: the
    loading thread imports no module (a test checks it), so it never waits for an import lock.
    Started earlier (before the rest of leapgram's import), it made a fresh process's first
    request slower on a loaded 2-core machine (round 16): the two threads then contend for the
    GIL. The thread is not a daemon: a process ends after it (a daemon thread inside LLVM could
    crash the exit), and ``os.fork`` waits for it. Off while numba is disabled or with
    ``LEAPGRAM_PRELOAD_KERNELS=0``.
    """
    if numba_config.DISABLE_JIT or os.environ.get("LEAPGRAM_PRELOAD_KERNELS", "1") == "0":
        _LOADED.set()
        return None
    for module in _MODULES:
        importlib.import_module(f"{__name__}.{module}")
    thread = threading.Thread(target=_load_cached_kernels, name="leapgram-kernel-loading")
    _THREADS.append(thread)
    thread.start()
    # a child forked while the thread holds numba's compiler lock would never get the lock
    if hasattr(os, "register_at_fork"):  # POSIX
        os.register_at_fork(before=thread.join)
    return thread


def wait_for_kernels(timeout: float = 10.0) -> None:
    """Wait until the loading thread is done (at once when it is, or never started).
    ``GrammarCompiler.compile`` calls it, so a fresh process's first compile, not its first
    masks, waits for the kernels, and the masks do not share the GIL with the thread: a compile
    runs beside decoding (vLLM compiles in a thread pool), a mask is on its critical path. Never
    longer than ``timeout`` seconds."""
    if _THREADS and not _LOADED.is_set():  # (never while leapgram's import, before it starts)
        _LOADED.wait(timeout)


def _load_cached_kernels() -> None:
    seen: set[int] = set()
    try:
        first = [getattr(importlib.import_module(f"{__name__}.{module}"), name) for module, name in _FIRST_USED]
        rest = [kernel for module in _MODULES for kernel in vars(importlib.import_module(f"{__name__}.{module}")).values()]
        for kernel in first + rest:
            if isinstance(kernel, Dispatcher) and id(kernel) not in seen:
                seen.add(id(kernel))
                _load_cached_signature(kernel)
    except Exception:  # noqa: BLE001 (numba internals changed: the first calls load the kernels)
        return
    finally:
        _LOADED.set()


def _load_cached_signature(kernel: Dispatcher) -> None:
    """The kernel's cached signatures that fit this machine and source, when they differ at most
    in arrays' read-only flags (otherwise which one the caller needs is unknown, and
    :class:`DirectKernel` would call the kernel through its dispatcher)."""
    cache = kernel._cache
    codegen = kernel.targetctx.codegen()
    signatures = [key[0] for key in cache._cache_file._load_index() if key == cache._index_key(key[0], codegen)]
    if signatures and same_machine_code(signatures) and not kernel.overloads:
        for signature in signatures:
            kernel.compile(signature)
