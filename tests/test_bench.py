"""``leapgram bench`` (``benchmarks/bench_schemas.py``): survives failing cases, reports by source,
and keeps ``import leapgram`` light."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from conftest import REPO, tokenizer_path

import leapgram
from leapgram import Grammar
from leapgram.cli import main
from tests.helpers.compiling import compile_for

sys.path.insert(0, str(REPO / "benchmarks"))

from bench_schemas import (
    REORDER_BUDGET,
    Case,
    CaseResult,
    LeapgramEngine,
    MaskTracer,
    accepts_reordered,
    by_source,
    compare_on_shared_cases,
    percentile,
    run_case,
    source_of,
    summarize,
)


def fake_from_json_schema(schema):
    """Stands in for the JSON Schema front end: the title says how the case should fail."""
    title = schema.get("title")
    if title == "hang":
        time.sleep(3600)
    if title == "crash":
        os._exit(3)
    if title == "bad":
        raise leapgram.GrammarError("bad schema")
    return Grammar.from_regex(r'\{"a": [0-9]+\}')


def write_case(folder, name, title, tests):
    schema = {"title": title, "type": "object"}
    (folder / f"{name}.json").write_text(json.dumps({"schema": schema, "tests": tests, "meta": {}}))


@pytest.mark.tokenizers
def test_bench_survives_failing_cases(tmp_path, monkeypatch, capsys):
    tokenizer = str(tokenizer_path("llama3"))  # from tests/data, never ../shared
    if sys.platform != "linux":
        pytest.skip("the fake front end reaches the workers by fork")
    monkeypatch.setattr(Grammar, "from_json_schema", staticmethod(fake_from_json_schema), raising=False)
    good = [{"description": "ok", "valid": True, "data": {"a": 12}},
            {"description": "no", "valid": False, "data": {"a": "x"}}]
    write_case(tmp_path, "a_good", "fine", good)
    write_case(tmp_path, "b_hang", "hang", good)
    write_case(tmp_path, "c_crash", "crash", good)
    write_case(tmp_path, "d_bad", "bad", good)
    out = tmp_path / "report.json"
    assert main(["bench", str(tmp_path), "--tokenizer", tokenizer, "--limit", "4", "--json", str(out), "--timeout-s", "5"]) == 0
    report = json.loads(out.read_text())["engines"]["leapgram"]
    by_name = {row["name"]: row for row in report["cases"]}
    assert by_name["a_good"]["passed"]
    assert by_name["b_hang"]["error"] == "timeout"
    assert by_name["c_crash"]["error"] == "crash"
    assert by_name["d_bad"]["error"] == "GrammarError"
    summary = report["summary"]
    assert (summary["cases"], summary["compiled"], summary["passing"]) == (4, 1, 1)
    text = capsys.readouterr().out
    assert "passing 1" in text and "TTFM ms" in text and "timeout" in text


@pytest.mark.tokenizers
def test_bench_without_the_front_end_says_so(tmp_path, monkeypatch, capsys):
    tokenizer = str(tokenizer_path("llama3"))  # from tests/data, never ../shared
    monkeypatch.delattr(Grammar, "from_json_schema", raising=False)
    write_case(tmp_path, "a", "fine", [{"description": "ok", "valid": True, "data": {"a": 1}}])
    assert main(["bench", str(tmp_path), "--tokenizer", tokenizer, "--timeout-s", "30"]) == 0
    assert "front end missing" in capsys.readouterr().out


PAIR = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}


@pytest.mark.tokenizers
def test_bench_splits_valid_rejected_by_key_order(tmp_path, capsys):
    tokenizer = str(tokenizer_path("llama3"))  # from tests/data, never ../shared
    tests = [{"description": "declared order", "valid": True, "data": {"a": 1, "b": 2}},
             {"description": "another order", "valid": True, "data": {"b": 2, "a": 1}},
             {"description": "mislabeled", "valid": True, "data": {"a": "x", "b": 2}}]
    (tmp_path / "pair.json").write_text(json.dumps({"schema": PAIR, "tests": tests, "meta": {}}))
    out = tmp_path / "report.json"
    assert main(["bench", str(tmp_path), "--tokenizer", tokenizer, "--json", str(out), "--timeout-s", "30"]) == 0
    report = json.loads(out.read_text())["engines"]["leapgram"]
    summary, row = report["summary"], report["cases"][0]
    assert (summary["valid_rejected"], summary["valid_rejected_order"], summary["valid_rejected_other"]) == (2, 1, 1)
    assert (row["valid_rejected"], row["valid_rejected_order"], row["valid_rejected_other"]) == (2, 1, 1)
    assert "valid rejected  out of declared order 1  other 1" in capsys.readouterr().out

    for order in ("any", "auto"):
        assert main(["bench", str(tmp_path), "--tokenizer", tokenizer, "--json", str(out), "--timeout-s", "30", "--property-order", order]) == 0
        report = json.loads(out.read_text())
        assert report["property_order"] == order
        summary = report["engines"]["leapgram"]["summary"]
        assert (summary["valid_rejected"], summary["valid_rejected_order"], summary["valid_rejected_other"]) == (1, 0, 1)
        assert f"properties in {order} order" in capsys.readouterr().out


@pytest.mark.tokenizers
def test_bench_with_masks_computed_ahead(tmp_path, capsys):
    tokenizer = str(tokenizer_path("llama3"))
    tests = [{"description": "valid", "valid": True, "data": {"a": 1, "b": 2}},
             {"description": "invalid", "valid": False, "data": {"a": "x", "b": 2}}]
    (tmp_path / "pair.json").write_text(json.dumps({"schema": PAIR, "tests": tests, "meta": {}}))
    out = tmp_path / "report.json"
    assert main(["bench", str(tmp_path), "--tokenizer", tokenizer, "--json", str(out), "--timeout-s", "30",
                 "--precompute-ms", "200"]) == 0
    report = json.loads(out.read_text())
    assert report["precompute_ms"] == 200
    assert report["engines"]["leapgram"]["summary"]["passing"] == 1
    assert "computes masks ahead for up to 200 ms per schema" in capsys.readouterr().out


def test_an_engine_built_without_leapgram_engines_init_compiles(byte_vocab):
    """tree_ab's and worst_ab's BaseEngine set their own attributes: the defaults are class-level."""
    import leapgram

    engine = LeapgramEngine.__new__(LeapgramEngine)
    engine.lg, engine.compiler = leapgram, leapgram.GrammarCompiler(byte_vocab)
    assert engine.compile(json.dumps(PAIR)) is not None


class _SpinningEngine:
    """A fake engine for the tracer: mask 1 runs a full collection and spins for 30 ms."""

    eos = (0,)

    def __init__(self):
        import numpy as np

        self.bitmask = np.full((1, 1), -1, dtype=np.int32)  # every token allowed
        self.masks = 0

    def fill(self, matcher):
        if self.masks == 1:
            import gc

            gc.collect()
            end = time.thread_time() + 0.03
            while time.thread_time() < end:
                pass
        self.masks += 1

    def consume(self, matcher, token):
        return True


def test_mask_tracer_names_the_collections_inside_a_slow_mask():
    tracer = MaskTracer(20.0)
    tracer.install()
    try:
        tracer.begin()
        times = ([], [])
        assert tracer.walk(_SpinningEngine(), None, [1, 2], times, ("case", 0))
        trace = tracer.take()
    finally:
        tracer.uninstall()
    assert len(times[0]) == len(times[1]) == trace["masks"] == 3
    (slow,) = trace["slow"]
    assert (slow["case"], slow["instance"], slow["mask"]) == ("case", 0, 1) and slow["cpu_ms"] >= 20
    assert [event[:2] for event in slow["events"]] == [("gc", 2)]
    assert trace["collections"][2]["count"] == 1
    assert tracer.take()["masks"] == 0  # the next case starts afresh


def test_accepts_reordered_finds_an_accepted_key_order(byte_vocab):
    nested = {"type": "object", "properties": {"p": PAIR, "q": {"type": "string"}}, "required": ["p", "q"]}
    engine = compile_for(Grammar.from_json_schema(nested), byte_vocab)._engine

    def reordered(value, budget=REORDER_BUDGET):
        return accepts_reordered(engine, value, [budget])

    assert reordered({"p": {"a": 1, "b": 2}, "q": "x"})
    assert reordered({"q": "x", "p": {"b": 2, "a": 1}})
    assert not reordered({"q": "x", "p": {"b": 2, "a": "1"}})  # a value, not the order
    assert not reordered({"q": "x", "p": {"b": 2}})
    assert not reordered({"q": "x", "p": {"b": 2, "a": 1}}, budget=3)  # out of budget: no claim


def test_missing_folder_is_a_clear_message(tmp_path):
    with pytest.raises(SystemExit, match="benchmark folder .* not found"):
        main(["bench", str(tmp_path / "nope")])


def test_unknown_peer_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="unknown peer"):
        main(["bench", str(tmp_path), "--vs", "outlines"])


def test_summary_counts_and_percentiles():
    rows = [CaseResult("a", compiled=True, valid_rejected_order=0, ttfm_ms=2.0, tbm_us=[1.0, 3.0],
                       tbm_cpu_us=[1.0, 2.0]),
            CaseResult("b", compiled=True, valid_rejected=3, valid_rejected_order=2, ttfm_ms=4.0, tbm_us=[5.0],
                       tbm_cpu_us=[3.0]),
            CaseResult("c", error="timeout")]
    summary = summarize(rows)
    assert (summary["cases"], summary["compiled"], summary["passing"], summary["valid_rejected"]) == (3, 2, 1, 3)
    assert (summary["valid_rejected_order"], summary["valid_rejected_other"]) == (2, 1)
    assert summarize([CaseResult("p", compiled=True, valid_rejected=1)])["valid_rejected_order"] is None  # a peer
    assert summary["errors"] == {"timeout": 1}
    assert summary["tbm_us"]["mean"] == 3.0 and summary["tbm_us"]["max"] == 5.0
    assert summary["tbm_cpu_us"]["mean"] == 2.0 and summary["tbm_cpu_us"]["p99"] == 3.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.0 and percentile([], 50) is None


def test_peer_ratios_are_taken_on_the_cases_both_compiled():
    ours = [CaseResult("a", compiled=True, tbm_us=[2.0, 4.0], tbm_cpu_us=[2.0, 2.0]),
            CaseResult("b", compiled=True, tbm_us=[100.0], tbm_cpu_us=[100.0]),  # the peer refused it
            CaseResult("c", error="timeout")]
    theirs = [CaseResult("a", compiled=True, tbm_us=[1.0, 2.0], tbm_cpu_us=[4.0, 4.0]),
              CaseResult("b", error="GrammarError"),
              CaseResult("c", compiled=True, tbm_us=[9.0], tbm_cpu_us=[9.0])]
    shared = compare_on_shared_cases({"leapgram": ours, "peer": theirs})["peer"]
    assert shared["cases"] == 1
    assert shared["tbm_us"]["leapgram"]["mean"] == 3.0 and shared["tbm_us"]["peer"]["mean"] == 1.5
    assert shared["tbm_us"]["ratio"]["mean"] == 2.0 and shared["tbm_us"]["ratio"]["p99"] == 2.0
    assert shared["tbm_cpu_us"]["ratio"]["mean"] == 0.5
    assert compare_on_shared_cases({"leapgram": ours}) == {}


def test_import_leapgram_does_not_load_the_bench_dependencies():
    code = "import sys, leapgram; print(any(m in sys.modules for m in ('bench_schemas', 'tqdm', 'matplotlib')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_an_error_state_at_the_first_mask_is_an_error_not_a_compiled_case():
    """A budget that runs out while computing the first mask leaves the matcher in its error
    state (it never raises): the case is reported as an error, without a TTFM."""
    class ExhaustedEngine:
        def prepare(self):
            pass

        def compile(self, schema):
            return schema

        def matcher(self, compiled):
            return compiled

        def fill(self, matcher):
            pass

        def first_error(self, matcher):
            return "budget max_emptiness_steps (20000) exceeded"

    result = run_case(ExhaustedEngine(), Case("exhausted", "{}", [(True, [1, 2])]))
    assert result.error == "error state at the first mask" and "max_emptiness_steps" in result.detail
    assert not result.compiled and result.ttfm_ms is None and not result.passed


def test_cases_are_grouped_by_source_and_compared_on_the_cases_every_engine_compiled():
    assert [source_of(n) for n in ("BFCL_parallel_multiple_12", "JME_3", "Github_easy---o1234", "Glaiveai2K---x_9")] \
        == ["BFCL", "JME", "Github_easy", "Glaiveai2K"]
    ours = [CaseResult("BFCL_simple_1", compiled=True, ttfm_ms=1.0, tbm_us=[2.0, 4.0]),
            CaseResult("BFCL_java_2", compiled=True, ttfm_ms=3.0, tbm_us=[100.0]),
            CaseResult("JME_1", compiled=True, ttfm_ms=2.0, tbm_us=[8.0])]
    theirs = [CaseResult("BFCL_simple_1", compiled=True, ttfm_ms=2.0, tbm_us=[6.0]),
              CaseResult("BFCL_java_2", error="GrammarError"),
              CaseResult("JME_1", compiled=True, ttfm_ms=1.0, tbm_us=[4.0])]
    rows = {row["source"]: row for row in by_source({"leapgram": ours, "peer": theirs})}
    assert list(rows) == ["BFCL", "JME", "all"]
    assert (rows["BFCL"]["cases"], rows["BFCL"]["shared"]) == (2, 1)
    assert rows["BFCL"]["tbm_us"] == {"leapgram": 3.0, "peer": 6.0} and rows["BFCL"]["ratio"]["tbm_us"]["peer"] == 0.5
    assert rows["BFCL"]["tbm_cpu_us"] == {"leapgram": None, "peer": None}
    assert rows["JME"]["ratio"]["ttfm_ms"]["peer"] == 2.0
    assert rows["all"]["shared"] == 2 and rows["all"]["tbm_us"]["leapgram"] == 14.0 / 3
    assert rows["JME"]["ttfm_cpu_ms"] == {"leapgram": None, "peer": None}


def test_ttfm_is_compared_on_the_cases_both_compiled_in_wall_and_process_cpu_time():
    from bench_schemas import compare_on_shared_cases

    ours = [CaseResult("a", compiled=True, ttfm_ms=2.0, ttfm_cpu_ms=1.0, tbm_us=[1.0]),
            CaseResult("b", compiled=True, ttfm_ms=90.0, ttfm_cpu_ms=80.0, tbm_us=[1.0])]
    theirs = [CaseResult("a", compiled=True, ttfm_ms=4.0, ttfm_cpu_ms=4.0, tbm_us=[1.0]),
              CaseResult("b", error="GrammarError")]  # its slow case is left out of both sides
    entry = compare_on_shared_cases({"leapgram": ours, "peer": theirs})["peer"]
    assert entry["cases"] == 1
    assert entry["ttfm_ms"]["ratio"] == {"p50": 0.5, "p99": 0.5, "max": 0.5}
    assert entry["ttfm_cpu_ms"]["leapgram"]["max"] == 1.0 and entry["ttfm_cpu_ms"]["ratio"]["p50"] == 0.25


def test_bench_outside_a_checkout_says_what_to_do(monkeypatch):
    import leapgram.cli

    monkeypatch.setattr(leapgram.cli, "BENCH_SCRIPT", REPO / "nowhere" / "bench_schemas.py")
    with pytest.raises(SystemExit, match="source checkout.*Clone the leapgram repository"):
        main(["bench", "--limit", "1"])


@pytest.mark.slow
@pytest.mark.tokenizers
def test_profile_masks_times_masks_and_splits_them_by_kind_of_state(two_bfcl_cases, capsys):
    import profile_masks
    from bench_schemas import LeapgramEngine, load_cases

    folder, tokenizer = two_bfcl_cases
    cases = load_cases(folder, tokenizer, None)
    engine = LeapgramEngine(tokenizer)
    ttfm, tbm = profile_masks.run(cases, engine)
    assert len(ttfm) == 2 and tbm and all(t > 0 for t in tbm)
    total, count, parts = profile_masks.breakdown(cases, engine)
    assert 0 < sum(count.values()) <= len(tbm) + len(ttfm)  # the masks computed (hits are served before)
    assert set(count) <= {"cached", "fresh state", "several lexemes", "lexeme complete", "schema literal (key, enum)",
                          "one byte left (closing quote)", "string/number/whitespace body", "regex"}
    profile_masks.print_breakdown(total, count, parts)
    assert "kind of lexer state" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.tokenizers
def test_profile_masks_shareable_finds_every_walk_of_a_schema_seen_before(tmp_path, capsys):
    import profile_masks
    from bench_schemas import LeapgramEngine, load_cases

    for name in ("a", "b"):  # the same schema twice: the second grammar's walks are the first one's
        (tmp_path / f"BFCL_{name}.json").symlink_to(REPO / "tests" / "data" / "jsonschemabench" / "BFCL_java_0.json")
    tokenizer = tokenizer_path("llama3") / "tokenizer.json"
    engine = LeapgramEngine(tokenizer)
    count, spent, sizes = profile_masks.shareable(load_cases(tmp_path, tokenizer, None), engine)
    masks = sum(c["masks"] for c in count.values())
    seen = sum(c["walk seen earlier"] for c in count.values())
    assert masks == 2 * seen and sum(sizes.values()) == masks and sum(c["conflicts"] for c in count.values()) == 0
    assert all(c["content seen earlier"] >= c["walk seen earlier"] for c in count.values())
    profile_masks.print_shareable(count, spent, sizes)
    assert "walk seen earlier" in capsys.readouterr().out


def test_bench_vllm_balanced_order_puts_every_backend_in_every_place_equally():
    from bench_vllm import balanced

    backends = ["leapgram", "guidance", "xgrammar"]
    orders = [balanced(backends, number) for number in range(6)]
    assert orders[:2] == [["leapgram", "guidance", "xgrammar"], ["xgrammar", "guidance", "leapgram"]]
    for backend in backends:
        places = sorted(order.index(backend) for order in orders)
        assert places == [0, 0, 1, 1, 2, 2]


def test_walk_cache_probe_flushes_its_cache_when_the_kernels_it_inlines_change(tmp_path, monkeypatch):
    import walk_cache_probe

    kernels = walk_cache_probe.probe_kernels()
    stamp = tmp_path / "stamp"
    if not kernels:  # numba disabled: nothing cached
        assert not walk_cache_probe.flush_if_kernels_changed(stamp)
        return
    flushed = []
    for kernel in kernels:
        monkeypatch.setattr(kernel._cache, "flush", lambda kernel=kernel: flushed.append(kernel))
    assert walk_cache_probe.flush_if_kernels_changed(stamp) and len(flushed) == len(kernels) >= 5  # no stamp yet
    assert not walk_cache_probe.flush_if_kernels_changed(stamp) and len(flushed) == len(kernels)
    stamp.write_text("the digest of other kernel sources")
    assert walk_cache_probe.flush_if_kernels_changed(stamp) and len(flushed) == 2 * len(kernels)


def test_walk_cache_probe_kernel_is_the_engine_kernel_plus_its_record():
    from walk_cache_probe import kernel_drift  # the probe's copy of walk_cfg_kernel: changes go to both

    assert kernel_drift() is None
