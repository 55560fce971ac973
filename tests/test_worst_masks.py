"""benchmarks/worst_masks.py: every warm mask of a folder timed, the slow ones listed with their kind."""

from __future__ import annotations

import json
import sys

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))


@pytest.mark.slow
@pytest.mark.tokenizers
def test_worst_masks_lists_every_mask_over_the_threshold(two_bfcl_cases, tmp_path, capsys):
    import worst_masks

    folder, tokenizer = two_bfcl_cases
    tokenizer = str(tokenizer)
    out = tmp_path / "rows.json"
    assert worst_masks.main([str(folder), "--tokenizer", tokenizer, "--threshold-ms", "0", "--json", str(out)]) == 0
    found = json.loads(out.read_text())
    counts, rows = found["counts"], found["rows"]
    assert counts["cases"] == 2 and counts["masks"] == len(rows) > 0 and not found["timed_out"]
    assert [r["cpu_ms"] for r in rows] == sorted((r["cpu_ms"] for r in rows), reverse=True)
    assert {r["mask"] for r in rows if r["case"] == "BFCL_java_0"} >= {0, 1}  # the first mask counts
    assert all(r["kind"] and r["gc_ms"] >= 0 for r in rows)
    printed = capsys.readouterr().out
    assert "| schema | instance | mask | cpu ms |" in printed and "BFCL_java_5" in printed
    worst_masks.main([str(folder), "--tokenizer", tokenizer, "--only", "BFCL_java_5", "--warm", "1"])
    assert "1 cases" in capsys.readouterr().out
