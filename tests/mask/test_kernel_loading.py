"""Cached kernels loaded in a thread started at ``import leapgram``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from numba.core import config as numba_config

from leapgram._kernels import start_loading_cached_kernels

FORK_AFTER_IMPORT = """
import os, leapgram
pid = os.fork()
if pid == 0:
    vocab = leapgram.Vocabulary.byte_vocabulary()
    matcher = leapgram.Matcher(leapgram.GrammarCompiler(vocab).compile_regex("[a-c]+x"))
    bitmask = leapgram.allocate_token_bitmask(1, vocab.size)
    matcher.fill_next_token_bitmask(bitmask, 0)
    os._exit(0 if leapgram.allowed_tokens(bitmask[0], vocab.size).tolist() == [97, 98, 99] else 3)
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


def test_the_thread_ends_and_a_fork_right_after_import_computes_masks():
    run = subprocess.run([sys.executable, "-c", FORK_AFTER_IMPORT], check=False, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "0"


def test_off_by_environment(monkeypatch):
    monkeypatch.setenv("LEAPGRAM_PRELOAD_KERNELS", "0")
    assert start_loading_cached_kernels() is None


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="the kernels are plain functions")
def test_loading_again_is_harmless():
    thread = start_loading_cached_kernels()
    if thread is not None:
        thread.join(timeout=120)
        assert not thread.is_alive()


FIRST_COMPILE = """
import leapgram
from leapgram import _kernels
from leapgram._kernels import earley, cfg_walk, rows
vocab = leapgram.Vocabulary.byte_vocabulary()
compiled = leapgram.GrammarCompiler(vocab).compile_json_schema({"type": "object"})
loaded = all(kernel.overloads for kernel in (earley.root_kernel, cfg_walk.walk_cfg_kernel, rows.row_hash_kernel))
print(_kernels._LOADED.is_set(), loaded)
"""


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="the kernels are plain functions")
def test_the_first_compile_waits_for_the_kernels():
    run = subprocess.run([sys.executable, "-c", FIRST_COMPILE], check=False, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["True", "True"]


def test_waiting_returns_when_nothing_loads(monkeypatch):
    from leapgram import _kernels

    monkeypatch.setenv("LEAPGRAM_PRELOAD_KERNELS", "0")
    start_loading_cached_kernels()
    assert _kernels._LOADED.is_set()
    _kernels.wait_for_kernels(timeout=0.01)


FIRST_REQUEST_MODULES = """
import sys, threading
by_thread = []
class Recorder:
    def find_spec(self, name, path=None, target=None):
        if threading.current_thread() is not threading.main_thread():
            by_thread.append(name)
sys.meta_path.insert(0, Recorder())
import leapgram
leapgram._kernels.wait_for_kernels()
print(by_thread)
vocab = leapgram.Vocabulary.byte_vocabulary()
matcher = leapgram.Matcher(leapgram.GrammarCompiler(vocab).compile_json_schema(
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}))
bitmask = leapgram.allocate_token_bitmask(1, vocab.size)
for byte in b'{"a": 12}':
    matcher.fill_next_token_bitmask(bitmask, 0)
    assert matcher.consume_token(byte)
print(sorted(m for m in ("numpy.ma", "numba.np.arrayobj", "numba.cpython.unicode") if m in sys.modules))
"""


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="the kernels are plain functions")
def test_a_first_request_from_cached_kernels_imports_neither_numpy_ma_nor_numba_array_support():
    """Loading a cached kernel that calls ``ndarray.view`` imported numba.np.arrayobj (about 40 ms),
    and numba's typing of a tuple of arrays imported numpy.ma (10-20 ms). The loading thread
    imports no module at all: none that a concurrent import in the main thread could hold."""
    warm = subprocess.run([sys.executable, "-c", "import leapgram; leapgram.warm_up()"], check=False, capture_output=True,
                          text=True, timeout=600)  # the kernels in numba's cache, as after a first run
    assert warm.returncode == 0, warm.stderr[-2000:]
    run = subprocess.run([sys.executable, "-c", FIRST_REQUEST_MODULES], check=False, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["[]", "[]"]  # the loading thread imports nothing, nor the request these


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="numba types no argument")
def test_kernel_argument_types_equal_numbas():
    import numpy as np
    from numba.core.errors import NumbaTypeError
    from numba.core.typing.typeof import Purpose, typeof

    from leapgram import _kernels
    from leapgram._kernels import earley

    readonly = np.arange(6, dtype=np.int32)
    readonly.flags.writeable = False
    arrays = [np.zeros(3, dtype=np.int64), np.zeros((2, 3), dtype=np.int32), np.zeros((3, 2), dtype=np.int8).T,
              np.zeros(8, dtype=np.uint32)[::2], readonly, np.zeros(0, dtype=np.uint8), np.zeros((2, 2, 2)),
              np.asfortranarray(np.zeros((2, 3), dtype=np.int16)), np.array(True)]
    scalars = [0, -5, 2**63 + 1, True, 1.5, np.int64(3), np.int32(-1), np.uint8(7), np.bool_(False), np.float32(2)]
    values = arrays + scalars + [tuple(arrays), tuple(scalars), (arrays[0], 4, (arrays[1], np.int64(2))), ()]
    for value in values:
        assert _kernels._exact_type(value) == typeof(value, Purpose.argument), value
    # what the dispatcher gets for a tuple; anything else is numba's own answer
    masked = np.ma.masked_array([1, 2])
    assert _kernels._exact_type(masked) is None and _kernels._exact_type((masked,)) is None
    assert _kernels._exact_type(("a", 1)) is None and _kernels._exact_type([1]) is None
    assert earley.root_kernel.typeof_pyval(tuple(arrays)) == typeof(tuple(arrays), Purpose.argument)
    with pytest.raises(NumbaTypeError, match="MaskedArray"):  # numba's error, as before
        earley.root_kernel.typeof_pyval((masked, 1))


# called inside other kernels (compiled with them; numba's cache gives the callers whole)
ONLY_CALLED_FROM_KERNELS = {"earley.boundary_kernel", "earley.scan_kernel", "tables.table_put_kernel",
                            "trie_walk.copy_duplicate_bits_kernel", "rule_tables._least"}
UNREACHED_AFTER_WARM_UP = """
import importlib
from numba.core.registry import CPUDispatcher
import leapgram
from leapgram import _kernels
leapgram.warm_up()
for module in _kernels._MODULES:
    found = importlib.import_module(f"leapgram._kernels.{module}")
    for name, kernel in vars(found).items():
        if (isinstance(kernel, CPUDispatcher) and kernel.__module__ == found.__name__ and not kernel.signatures
                and kernel.targetoptions.get("inline") != "always"):
            print(f"{module}.{name}")
"""


@pytest.mark.skipif(numba_config.DISABLE_JIT, reason="numba disabled: nothing to load or compile")
def test_warm_up_reaches_every_kernel():
    """With the loading thread off, a kernel has a signature only when something called it: after
    ``warm_up`` every kernel called from Python must have one (else an installation's first
    call of it compiles inside a mask). Kernels numba inlines into their callers are left out;
    a kernel only ever called from other kernels has a signature when it was compiled, not when
    its callers came from the cache, so those are named here."""
    env = {**os.environ, "LEAPGRAM_PRELOAD_KERNELS": "0"}
    run = subprocess.run([sys.executable, "-c", UNREACHED_AFTER_WARM_UP], check=False, capture_output=True, text=True,
                         timeout=600, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert set(run.stdout.split()) <= ONLY_CALLED_FROM_KERNELS
