"""``benchmarks/differential.py``: ``record`` notes every step of two tiny schemas, and ``compare``
finds a planted difference."""

from __future__ import annotations

import json
import sys

import pytest
from conftest import REPO, tokenizer_path

sys.path.insert(0, str(REPO / "benchmarks"))

from differential import main, select_files

PAIR = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a", "b"]}
ENUM = {"enum": ["red", "green"]}


def write_cases(folder):
    tests = [{"description": "ok", "valid": True, "data": {"a": 1, "b": "x"}},
             {"description": "wrong type", "valid": False, "data": {"a": "1", "b": "x"}}]
    (folder / "pair.json").write_text(json.dumps({"schema": PAIR, "tests": tests}))
    colors = [{"description": "ok", "valid": True, "data": "green"}]
    (folder / "enum.json").write_text(json.dumps({"schema": ENUM, "tests": colors}))
    (folder / "broken.json").write_text(json.dumps({"schema": {"type": "object", "minProperties": "x"}, "tests": []}))


def read(path):
    lines = path.read_text().splitlines()
    return json.loads(lines[0]), {c["case"]: c for c in map(json.loads, lines[1:])}


@pytest.mark.tokenizers
def test_record_then_compare_finds_a_planted_difference(tmp_path, capsys):
    cases, out = tmp_path / "cases", tmp_path / "a.jsonl"
    cases.mkdir()
    write_cases(cases)
    tokenizer = str(tokenizer_path("llama3"))
    assert main(["record", str(cases), "--tokenizer", tokenizer, "--invalid", "--out", str(out)]) == 0
    head, records = read(out)
    assert (head["source"], head["invalid"], head["cases"]) == ("jsonschemabench", True, 3)
    assert records["broken"]["compile"][0] in ("GrammarError", "SchemaError", "UnsupportedError")
    valid, invalid = records["pair"]["instances"]
    assert valid["steps"][-1][3] and valid["terminated"] and valid["error"] is None  # EOS consumed
    assert not invalid["steps"][-1][3] and invalid["error"]  # stopped at the refused token
    assert len(invalid["steps"]) < invalid["tokens"]

    assert main(["compare", str(out), str(out)]) == 0
    lines = out.read_text().splitlines()
    planted = json.loads(lines[2])  # the second case in sorted order: enum
    planted["instances"][0]["steps"][1][5] = "3:00000000"
    lines[2] = json.dumps(planted)
    changed = tmp_path / "b.jsonl"
    changed.write_text("\n".join(lines[:3]) + "\n")  # pair left out: only in A
    capsys.readouterr()
    assert main(["compare", str(out), str(changed)]) == 1
    text = capsys.readouterr().out
    assert "DIFFERENT enum: test 0 (valid, 3 tokens): step 1: forced_bytes" in text
    assert "1 identical, 1 different, 1 only in A, 0 only in B" in text


def test_select_files_samples_shards_and_picks(tmp_path):
    for n in range(10):
        (tmp_path / f"c{n}.json").write_text("{}")
    def names(files):
        return [f.stem for f in files]

    assert names(select_files(tmp_path, None, 5, None, None)) == ["c0", "c2", "c4", "c6", "c8"]
    assert names(select_files(tmp_path, None, 5, None, "2/2")) == ["c2", "c6"]
    assert names(select_files(tmp_path, "c3,c7.json", None, None, None)) == ["c3", "c7"]
    drawn = select_files(tmp_path, None, 4, 7, None)
    assert drawn == select_files(tmp_path, None, 4, 7, None) and len(drawn) == 4 and drawn == sorted(drawn)
