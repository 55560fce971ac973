"""A sample of JSONSchemaBench cases through ``benchmarks/schema_check.py``: among the schemas that
compile, no valid instance is rejected and no invalid one accepted. Skips when the cases in
``../shared/jsonschemabench`` are absent."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import leapgram

REPO = Path(__file__).resolve().parents[3]
DATA = REPO.parent / "shared" / "jsonschemabench"


def schema_check():
    if not DATA.is_dir():
        pytest.skip(f"JSONSchemaBench cases absent: put them in {DATA} (../shared/jsonschemabench)")
    spec = importlib.util.spec_from_file_location("schema_check", REPO / "benchmarks" / "schema_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def wrong_verdicts(n: int, **options) -> dict:
    check = schema_check()
    vocab = leapgram.Vocabulary.byte_vocabulary()
    wrong = {"valid_rejected": [], "invalid_accepted": [], "compiled": 0}
    for path in check.pick_cases(n, DATA):
        result = check.check_case(path, vocab, **options)
        wrong["compiled"] += result["status"] == "compiled"
        for key in ("valid_rejected", "invalid_accepted"):
            wrong[key] += [(path.stem, text) for text in result[key]]
    return wrong


def test_small_sample_any_order():
    wrong = wrong_verdicts(12, any_order=True)
    assert wrong["valid_rejected"] == [] and wrong["invalid_accepted"] == []


@pytest.mark.slow
def test_sample_of_100_any_order():
    wrong = wrong_verdicts(100, any_order=True)
    assert wrong["compiled"] >= 50
    assert wrong["valid_rejected"] == [] and wrong["invalid_accepted"] == []


@pytest.mark.slow
def test_sample_of_100_declared_order_accepts_nothing_invalid():
    wrong = wrong_verdicts(100)
    assert wrong["invalid_accepted"] == []
