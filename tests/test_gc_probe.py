"""benchmarks/gc_probe.py: every collection of a worst_masks walk, and what the grammar holds."""

from __future__ import annotations

import sys

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))


@pytest.mark.slow
@pytest.mark.tokenizers
def test_gc_probe_logs_the_collections_and_the_holders(two_bfcl_cases, capsys):
    import gc_probe

    folder, tokenizer = two_bfcl_cases
    assert gc_probe.main([str(folder), "--tokenizer", str(tokenizer), "--owners", "--promotions"]) == 0
    printed = capsys.readouterr().out
    assert "BFCL_java_0: " in printed and "tracked objects" in printed and "lexer._ids" in printed
    assert "| generation | where | collections |" in printed and "2 cases in" in printed
    log = gc_probe.CollectionLog()
    log("start", {"generation": 2})
    log("stop", {"generation": 2, "collected": 3})
    assert log.rows[0][0] == 2 and log.rows[0][2] == 3 and log.rows[0][5] > 0
    assert gc_probe.shape((False, ((1, 2),))) == "(bool,tuple)" and gc_probe.shape([]) == "list"
