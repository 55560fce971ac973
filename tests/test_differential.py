"""``benchmarks/differential.py``: ``record`` notes every step of two tiny schemas, and ``compare``
finds a planted difference: in a record, in the masks of draft rows, rollbacks, forks and batch
fills, in fast-forward tokens and ``validate_tokens`` off the data, and a case that hangs or kills
its worker."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest
from conftest import REPO, tokenizer_path

import leapgram as lg

sys.path.insert(0, str(REPO / "benchmarks"))

import differential
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
    assert valid["steps"][7][7] and not valid["steps"][6][7]  # the checks' note at position 7 only
    assert "self_check" not in valid and any(step[6] for step in valid["steps"])  # fast-forward tokens noted
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


def record_pair(tmp_path, name, *extra):
    """Record the cases (test 0 of ``pair``: 12 tokens and EOS, a check at position 7) to ``name``."""
    cases, out = tmp_path / "cases", tmp_path / name
    cases.mkdir(exist_ok=True)
    write_cases(cases)
    assert main(["record", str(cases), "--tokenizer", str(tokenizer_path("llama3")), "--quiet",
                 "--out", str(out), *extra]) == 0
    return out


def compare_text(capsys, a, b):
    capsys.readouterr()
    status = main(["compare", str(a), str(b)])
    return status, capsys.readouterr().out


def flip_row_one(original):
    def draft_masks(self, token_ids):
        rows = original(self, token_ids)
        rows[1, 0] ^= 1
        return rows
    return draft_masks


def short_rollback(original):
    def rollback(self, num_tokens):
        original(self, max(num_tokens - 1, 0))
    return rollback


def fresh_fork(original):
    def fork(self, *, share_charts=True):
        return lg.Matcher(self.compiled)
    return fork


def one_more_token(original):
    def fast_forward_tokens(self, backoff=None):
        tokens = original(self, backoff)
        return tokens + tokens[-1:]
    return fast_forward_tokens


def one_past_the_refused(original):
    def validate_tokens(self, token_ids):
        token_ids = list(token_ids)
        count = original(self, token_ids)
        return count + 1 if count < len(token_ids) else count  # (fast-forward tokens are all accepted)
    return validate_tokens


def flip_the_first_row(original):
    def fill_next_token_bitmasks(matchers, bitmask, indices=None, **options):
        original(matchers, bitmask, indices, **options)
        bitmask[0, 0] ^= 1  # the last matcher's row (the differential fills them in reverse)
    return fill_next_token_bitmasks


PLANTS = [("draft_masks", flip_row_one, "step 7: checks", "the draft row's"),
          ("rollback", short_rollback, "step 7: consume_token", "after rollback(3), position 4 differs"),
          ("fork", fresh_fork, "step 7: checks", "the fork's mask or forced bytes differ"),
          ("fast_forward_tokens", one_more_token, "step 1: fast_forward_tokens", "not all valid"),
          ("validate_tokens", one_past_the_refused, "step 7: checks", "counts 3, consume_token 2"),
          ("fill_next_token_bitmasks", flip_the_first_row, "self_check", "step 12: the mask differs from the batch row's")]


@pytest.mark.tokenizers
@pytest.mark.parametrize(("method", "plant", "difference", "failure"), PLANTS, ids=[p[0] for p in PLANTS])
def test_planted_changes_in_drafts_rollback_forks_fast_forward_validation_and_batches_are_caught(
        tmp_path, capsys, monkeypatch, method, plant, difference, failure):
    clean = record_pair(tmp_path, "clean.jsonl", "--only", "pair")
    owner = lg if method == "fill_next_token_bitmasks" else lg.Matcher  # (leapgram.batch's, by the package)
    monkeypatch.setattr(owner, method, plant(getattr(owner, method)))
    planted = record_pair(tmp_path, "planted.jsonl", "--only", "pair")  # the worker forks with the plant
    status, text = compare_text(capsys, clean, planted)
    assert status == 1 and f"DIFFERENT pair: test 0 (valid, 12 tokens): {difference}" in text, text
    assert "self-check failures in B: 1 instances" in text and failure in text, text
    assert "self-check failures in A" not in text


@pytest.mark.tokenizers
@pytest.mark.parametrize("how", ["hang", "die"])
def test_a_case_that_hangs_or_kills_its_worker_is_a_difference(tmp_path, capsys, monkeypatch, how):
    clean = record_pair(tmp_path, "clean.jsonl")
    original = differential.Recorder.walk

    def walk(self, compiled, test, valid, tokens):
        if len(tokens) <= 3:  # the enum case's one instance ("green")
            if how == "hang":
                time.sleep(600)  # killed at the time limit
            os._exit(7)
        return original(self, compiled, test, valid, tokens)

    monkeypatch.setattr(differential.Recorder, "walk", walk)
    stuck = record_pair(tmp_path, "stuck.jsonl", "--timeout-s", "5")
    records = {json.loads(line)["case"]: json.loads(line) for line in stuck.read_text().splitlines()[1:]}
    assert records["enum"] == {"case": "enum", "compile": None, "instances": [],
                               **({"timeout": 5.0} if how == "hang" else {"died": 7})}
    assert records["pair"]["instances"] and records["broken"]["compile"]  # the next cases, in a new worker
    status, text = compare_text(capsys, clean, stuck)
    expected = "timeout: None vs 5.0" if how == "hang" else "died: None vs 7"
    assert status == 1 and f"DIFFERENT enum: {expected}" in text, text
    assert "1 different" in text
