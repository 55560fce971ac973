"""benchmarks/walk_inside_probe.py: the walk kernel's nodes and boundaries, counted by a copy of it."""

from __future__ import annotations

import sys

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))


@pytest.mark.slow
@pytest.mark.tokenizers
def test_walk_inside_probe_counts_the_known_pass(two_bfcl_cases, capsys):
    import walk_inside_probe

    folder, tokenizer = two_bfcl_cases
    assert walk_inside_probe.main([str(folder), "--tokenizer", str(tokenizer), "--repeat", "1", "--top", "3"]) == 0
    printed = capsys.readouterr().out
    assert "masks walked (known pass); per mask:" in printed and "boundary from last key" in printed
    assert "the same calls again, warm" in printed and "tokens)" in printed
    visits = float(printed.split("visits ", 1)[1].split()[0])
    assert visits > 0
