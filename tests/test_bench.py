"""``leapgram bench`` on a fake three-case folder: it runs, reports, and survives a case that
hangs and one that kills its worker."""

from __future__ import annotations

import json
import textwrap

import pytest
from conftest import tokenizer_path

from leapgram.bench import CaseResult, evenly_spaced, format_report, summarize
from leapgram.cli import main

FAKE_ENGINE = textwrap.dedent('''
    import os
    import time

    import numpy as np


    class FakeEngine:
        """Accepts every token; a schema with "hang" sleeps, one with "die" kills the worker."""

        def __init__(self, path, eos_ids):
            self.eos_ids = eos_ids

        def compile(self, schema):
            if schema.get("hang"):
                time.sleep(3600)
            if schema.get("die"):
                os._exit(3)
            if schema.get("refuse"):
                raise ValueError("refused")
            return schema

        def start(self, compiled):
            return []

        def allocate(self):
            return np.full((1, 4009), -1, dtype=np.int32)

        def fill(self, matcher, bitmask):
            pass

        def consume(self, matcher, token):
            return True

        def error_kind(self, exc):
            return "compile error"
''')


def write_cases(folder):
    cases = {
        "a_ok": {"schema": {"type": "integer"}, "tests": [{"data": 1, "valid": True}, {"data": "x", "valid": False}]},
        "b_hang": {"schema": {"hang": True}, "tests": [{"data": 1, "valid": True}]},
        "c_die": {"schema": {"die": True}, "tests": []},
        "d_refuse": {"schema": {"refuse": True}, "tests": []},
    }
    folder.mkdir()
    for name, case in cases.items():
        (folder / f"{name}.json").write_text(json.dumps(case))
    (folder / "e_broken.json").write_text("{not json")


def test_bench_survives_hangs_and_crashes(tmp_path, monkeypatch, capsys):
    tokenizer = tokenizer_path("llama3")
    (tmp_path / "fake_engine.py").write_text(FAKE_ENGINE)
    monkeypatch.syspath_prepend(str(tmp_path))
    write_cases(tmp_path / "cases")
    out = tmp_path / "report.json"
    code = main(["bench", str(tmp_path / "cases"), "--tokenizer", str(tokenizer), "--vs", "fake_engine:FakeEngine",
                 "--timeout-s", "3", "--json", str(out), "--no-progress"])
    assert code == 0
    text = capsys.readouterr().out
    assert "5 cases from" in text and "errors: timeout" in text
    report = json.loads(out.read_text())
    fake = report["summaries"]["fake_engine:FakeEngine"]
    assert fake["cases"] == 5 and fake["compiled"] == 1
    assert fake["errors"] == {"compile error": 2, "crash": 1, "timeout": 1}
    assert fake["invalid_accepted"] == 1 and fake["valid_rejected"] == 0
    assert report["summaries"]["leapgram"]["cases"] == 5


def test_unknown_engine_is_refused(tmp_path):
    tokenizer = tokenizer_path("llama3")
    write_cases(tmp_path / "cases")
    with pytest.raises(SystemExit, match="unknown engine"):
        main(["bench", str(tmp_path / "cases"), "--tokenizer", str(tokenizer), "--vs", "nope"])


def test_absent_folder_says_so(tmp_path):
    with pytest.raises(SystemExit, match="benchmark folder .* not found"):
        main(["bench", str(tmp_path / "absent"), "--tokenizer", str(tokenizer_path("llama3"))])


def test_report_table_and_percentiles():
    results = [CaseResult("a", ttfm_ms=2.0, valid=1, valid_accepted=1, tbm_us=[1.0, 3.0]),
               CaseResult("b", error="timeout", valid=2)]
    summary = summarize(results)
    assert (summary["compiled"], summary["passing"], summary["errors"]) == (1, 1, {"timeout": 1})
    assert summary["tbm_us"]["mean"] == 2.0
    table = format_report({"x": summary, "y": "not installed"})
    assert "errors: timeout" in table and "y: unavailable: not installed" in table
    assert evenly_spaced(list(range(10)), 3) == [0, 3, 6]
