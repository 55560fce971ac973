#!/usr/bin/env bash
# The whole test suite, with numba compiled and then with NUMBA_DISABLE_JIT=1 (the plain-Python twins).
# The second run leaves out the slow tests, among them the few that run the real model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh dev,torch
.venv/bin/python -m pytest "$@"
NUMBA_DISABLE_JIT=1 .venv/bin/python -m pytest -m "not slow" "$@"
