"""leapgram under vLLM's n-gram speculative decoding (CPU): the scheduler validates drafts with
``validate_tokens`` and the bitmask pass advances over them and rolls back; outputs stay valid
and drafts are accepted. One in-process engine for the module; runs only under vLLM.

Sampled requests only: on vLLM 0.32's CPU build, greedy requests under n-gram speculative
decoding end with token 0 (``<|endoftext|>``, what an all-masked row's argmax gives) and
``finish_reason='error'`` with the xgrammar backend as well as with leapgram's, so it is not the
backend's doing."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("vllm", reason="needs vLLM: bash scripts/setup_vllm.sh, then run with .venv-vllm/bin/python")
jsonschema = pytest.importorskip("jsonschema")

from leapgram import Grammar
from leapgram.remote.bytes import ByteMatcher
from tests.helpers.vllm_server import offline_engine

pytestmark = pytest.mark.slow

RECORD = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 10}, "age": {"type": "integer", "maximum": 150},
                   "tags": {"type": "array", "items": {"type": "string", "maxLength": 6}, "maxItems": 4}},
    "required": ["name", "age", "tags"],
    "additionalProperties": False,
}
PROMPT = ('Copy this JSON exactly: {"name": "Alice", "age": 31, "tags": ["x", "yz"]}\n'
          '{"name": "Alice", "age": 31, "tags": ["x", "yz"]}\n{"name": "Alice", "age": 31, "tags": ["x", "yz"]}\n')


@pytest.fixture(scope="module")
def llm():
    speculative = {"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4, "prompt_lookup_min": 1}
    with offline_engine(disable_log_stats=False, speculative_config=speculative) as engine:
        yield engine


def counter(llm, name: str) -> int:
    return sum(int(getattr(metric, "value", 0)) for metric in llm.get_metrics() if metric.name == name)


@pytest.fixture
def validated(monkeypatch) -> dict[str, int]:
    """Draft tokens the scheduler offered leapgram's ``validate_tokens`` and the ones it kept."""
    from leapgram.integrations.vllm import LeapgramGrammar

    seen = {"offered": 0, "kept": 0}
    original = LeapgramGrammar.validate_tokens

    def counting(self, tokens):
        kept = original(self, tokens)
        seen["offered"] += len(tokens)
        seen["kept"] += len(kept)
        return kept

    monkeypatch.setattr(LeapgramGrammar, "validate_tokens", counting)
    return seen


def test_ngram_drafts_are_validated_and_outputs_stay_valid(llm, validated) -> None:
    from vllm import SamplingParams
    from vllm.sampling_params import StructuredOutputsParams

    so = StructuredOutputsParams(json=RECORD)
    params = [SamplingParams(max_tokens=80, temperature=t, seed=s, structured_outputs=so)
              for t, s in [(0.1, 0), (0.1, 1), (0.3, 2), (0.3, 3), (0.7, 4), (0.7, 5), (1.0, 6), (1.0, 7)]]
    outputs = llm.generate([PROMPT] * len(params), params, use_tqdm=False)
    prefix = ByteMatcher.for_grammar(Grammar.from_json_schema(RECORD))
    for sampled, output in zip(params, outputs):
        completion = output.outputs[0]
        if completion.finish_reason == "length" and sampled.temperature > 0.5:
            # At temperature 0.7-1.0 the small model may spend its 80 tokens on the whitespace the
            # schema allows (up to 20 bytes around each separator): what it wrote must still be a
            # prefix the grammar accepts. The low-temperature rows copy the prompt and must finish.
            assert prefix.accepts(completion.text.encode()), completion.text
            continue
        assert completion.finish_reason == "stop", completion.text
        jsonschema.validate(json.loads(completion.text), RECORD)
    drafted = counter(llm, "vllm:spec_decode_num_draft_tokens")
    accepted = counter(llm, "vllm:spec_decode_num_accepted_tokens")
    report = f"drafted {drafted}, offered to the grammar {validated}, accepted by the model {accepted}"
    assert validated["offered"] > 0 and validated["kept"] > 0, report  # drafts reach the grammar, valid ones stay
    assert accepted > 0, report
