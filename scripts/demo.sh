#!/usr/bin/env bash
# The main job on the embedded default: constrain a regex over the real Llama-3 vocabulary and show
# the allowed tokens step by step.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh hf
exec .venv/bin/python -m leapgram demo "$@"
