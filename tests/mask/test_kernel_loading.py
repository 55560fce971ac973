"""Cached kernels loaded in a thread started at ``import leapgram``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

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
    run = subprocess.run([sys.executable, "-c", FORK_AFTER_IMPORT], capture_output=True, text=True, timeout=300)
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
    run = subprocess.run([sys.executable, "-c", FIRST_COMPILE], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["True", "True"]


def test_waiting_returns_when_nothing_loads(monkeypatch):
    from leapgram import _kernels

    monkeypatch.setenv("LEAPGRAM_PRELOAD_KERNELS", "0")
    start_loading_cached_kernels()
    assert _kernels._LOADED.is_set()
    _kernels.wait_for_kernels(timeout=0.01)
