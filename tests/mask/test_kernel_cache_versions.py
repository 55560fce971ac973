"""numba's cache files of leapgram's kernels are named per numba version."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap

import numba
import pytest
from numba.core.dispatcher import Dispatcher

from leapgram import _kernels

pytestmark = pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="the kernels are plain functions")


def test_every_kernel_names_its_cache_files_by_numba_version():
    kernels = [kernel for module in _kernels._MODULES
               for kernel in vars(importlib.import_module(f"leapgram._kernels.{module}")).values()
               if isinstance(kernel, Dispatcher)]
    assert len(kernels) >= 10
    for kernel in kernels:
        assert isinstance(kernel._cache, _kernels.PerVersionCache), kernel
        index = os.path.basename(kernel._cache._cache_file._index_path)
        assert index.endswith(f".py{sys.version_info[0]}{sys.version_info[1]}-numba{numba.__version__}.nbi"), index


KERNEL = """
import sys
import numba
numba.__version__ = sys.argv[1]  # as another numba would name its files
from leapgram._kernels import njit

@njit(cache=True)
def double_kernel(x):
    return 2 * x

assert double_kernel(21) == 42
print(sum(double_kernel.stats.cache_hits.values()), sum(double_kernel.stats.cache_misses.values()))
"""


def test_two_numba_versions_keep_each_others_cache(tmp_path):
    (tmp_path / "versioned.py").write_text(textwrap.dedent(KERNEL), encoding="utf-8")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "LEAPGRAM_PRELOAD_KERNELS": "0"}

    def run(version: str) -> list[str]:
        done = subprocess.run([sys.executable, str(tmp_path / "versioned.py"), version], check=False, capture_output=True,
                              text=True, timeout=300, env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.split()

    assert run("0.68.1") == ["0", "1"]  # compiled and cached
    assert run("0.65.0") == ["0", "1"]  # another version: its own files
    assert run("0.68.1") == ["1", "0"]  # the first version's cache is still there
    names = sorted(path.name for path in (tmp_path / "cache").rglob("*.nbi"))
    assert [name.rsplit("-numba", 1)[1] for name in names] == ["0.65.0.nbi", "0.68.1.nbi"]


def test_every_kernel_is_stamped_with_all_kernel_sources():
    """A cached kernel may have inlined another module's kernel: editing any kernel module must make
    every cache stale, not only the edited file's."""
    kernels = [kernel for module in _kernels._MODULES
               for kernel in vars(importlib.import_module(f"leapgram._kernels.{module}")).values()
               if isinstance(kernel, Dispatcher)]
    stamp = _kernels._kernels_stamp()
    assert len(stamp) == 64
    for kernel in kernels:
        assert kernel._cache._cache_file._source_stamp == stamp, kernel


def test_a_kernel_outside_the_package_keeps_its_own_files_stamp(tmp_path):
    (tmp_path / "outside.py").write_text("from leapgram._kernels import njit\n\n@njit(cache=True)\ndef f(x):\n"
                                         "    return x\n", encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        outside = importlib.import_module("outside")
    finally:
        sys.path.remove(str(tmp_path))
    assert outside.f._cache._cache_file._source_stamp != _kernels._kernels_stamp()
