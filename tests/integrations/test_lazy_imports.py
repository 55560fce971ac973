"""``import leapgram`` stays free of frameworks (the integrations import them on use)."""

from __future__ import annotations

import subprocess
import sys


def test_import_leapgram_imports_no_framework() -> None:
    code = "import sys, leapgram; print(sorted(m for m in ('torch', 'transformers', 'vllm', 'sglang') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
