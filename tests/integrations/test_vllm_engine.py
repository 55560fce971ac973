"""leapgram as the structured-output backend of a real vLLM engine (offline ``LLM``, CPU).

Runs only under an interpreter with vLLM (``.venv-vllm/bin/python -m pytest tests/integrations/
test_vllm_engine.py``; ``bash scripts/setup_vllm.sh`` makes that venv). One engine for the whole
module, in-process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``) so that the tests can look at the
backend; the embedded SmolLM2-135M-Instruct model.
"""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("vllm", reason="needs vLLM: bash scripts/setup_vllm.sh, then run with .venv-vllm/bin/python")
jsonschema = pytest.importorskip("jsonschema")

from tests.helpers import vllm_tools
from tests.helpers.vllm_server import offline_engine

pytestmark = pytest.mark.slow

PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 12},
        "age": {"type": "integer", "minimum": 0, "maximum": 120},
        "pets": {"type": "array", "items": {"enum": ["cat", "dog", "fish"]}, "maxItems": 3},
    },
    "required": ["name", "age", "pets"],
    "additionalProperties": False,
}
REGEX = r"[0-9]{3}-[a-z]{2,8}"
LARK = 'start: "SELECT " NAME " FROM " NAME ";"\nNAME: /[a-z]{1,8}/'
LARK_AS_REGEX = r"SELECT [a-z]{1,8} FROM [a-z]{1,8};"
GBNF = 'root ::= "(" digit digit? " + " digit digit? ")"\ndigit ::= [0-9]'
GBNF_AS_REGEX = r"\([0-9]{1,2} \+ [0-9]{1,2}\)"
CHOICES = ["yes", "no", "not sure (maybe)"]


@pytest.fixture(scope="module")
def llm():
    with offline_engine() as engine:
        yield engine


def structured(**kwargs):
    from vllm.sampling_params import StructuredOutputsParams

    return StructuredOutputsParams(**kwargs)


def sampling(so, **kwargs):
    from vllm import SamplingParams

    options = {"max_tokens": 120, "temperature": 0.9, "seed": 1, **kwargs}
    return SamplingParams(structured_outputs=so, **options)


def check(kind: str, text: str) -> None:
    if kind == "json":
        jsonschema.validate(json.loads(text), PERSON)
    elif kind == "json_object":
        assert isinstance(json.loads(text), dict)
    elif kind == "regex":
        assert re.fullmatch(REGEX, text)
    elif kind == "lark":
        import lark

        lark.Lark(LARK).parse(text)
        assert re.fullmatch(LARK_AS_REGEX, text)
    elif kind == "gbnf":
        assert re.fullmatch(GBNF_AS_REGEX, text)
    elif kind == "choice":
        assert text in CHOICES


REQUESTS = {
    "json": ("A person as JSON, with pets.", {"json": PERSON}),
    "json_object": ("Any JSON object.", {"json_object": True}),
    "regex": ("A ticket code.", {"regex": REGEX}),
    "lark": ("An SQL query.", {"grammar": LARK}),
    "gbnf": ("An addition.", {"grammar": GBNF}),
    "choice": ("Is the sky green?", {"choice": CHOICES}),
}


def test_every_request_type_gives_valid_output(llm) -> None:
    kinds = list(REQUESTS)
    prompts = [REQUESTS[k][0] for k in kinds for _ in range(3)]
    params = [sampling(structured(**REQUESTS[k][1]), seed=seed) for k in kinds for seed in range(3)]
    outputs = llm.generate(prompts, params, use_tqdm=False)
    for index, output in enumerate(outputs):
        kind, completion = kinds[index // 3], output.outputs[0]
        if kind == "json_object" and completion.finish_reason == "length":
            continue  # an unbounded object may outrun max_tokens; the bounded kinds must finish
        assert completion.finish_reason == "stop", (kind, completion.text)
        check(kind, completion.text)


def test_chat_with_a_json_schema(llm) -> None:
    messages = [[{"role": "user", "content": f"Describe person number {i} as JSON."}] for i in range(4)]
    outputs = llm.chat(messages, sampling(structured(json=PERSON)), use_tqdm=False)
    for output in outputs:
        assert output.outputs[0].finish_reason == "stop"
        check("json", output.outputs[0].text)


def test_chat_with_two_tools_every_completed_call_validates(llm) -> None:
    """STRUCTURAL_TAG requests in a chat that offers get_weather and get_time: free text with
    exact calls (XGrammar's ``triggered_tags``, vLLM's legacy form) and calls only
    (``tags_with_separator``): every call made parses and validates."""
    required = json.dumps(vllm_tools.structural_tag(required=True))
    forms = [required, json.dumps(vllm_tools.structural_tag()), json.dumps(vllm_tools.legacy_structural_tag())]
    conversations, params = [], []
    for seed, question in enumerate(vllm_tools.QUESTIONS):
        for form in forms:
            conversations.append(vllm_tools.messages(question))
            params.append(sampling(structured(structural_tag=form), max_tokens=100, temperature=0.7, seed=seed))
    outputs = llm.chat(conversations, params, use_tqdm=False)
    calls = 0
    for output, param in zip(outputs, params):
        completion = output.outputs[0]
        made = vllm_tools.completed_calls(completion.text)
        if param.structured_outputs.structural_tag == required:
            assert made, completion.text  # a call within max_tokens (it may go on with more)
        calls += len(made)
    assert calls >= len(vllm_tools.QUESTIONS), [o.outputs[0].text for o in outputs]


def test_no_special_token_but_the_stop_tokens(llm) -> None:
    tokenizer = llm.get_tokenizer()
    stops = {tokenizer.eos_token_id}
    specials = set(tokenizer.all_special_ids) - stops
    outputs = llm.generate(["Write JSON."] * 4, sampling(structured(json_object=True), temperature=1.5, seed=7),
                           use_tqdm=False)
    for output in outputs:
        assert not specials & set(output.outputs[0].token_ids)


def test_malformed_request_is_refused_with_leapgram_message_and_the_engine_goes_on(llm) -> None:
    from vllm.exceptions import VLLMValidationError

    bad = [{"json": {"type": "object", "properties": {"a": {"type": "integer", "minimum": "x"}}}},
           {"regex": "(unclosed"}, {"grammar": "start: undefined_rule"}]
    for so in bad:
        with pytest.raises(VLLMValidationError, match="leapgram"):
            llm.generate(["x"], sampling(structured(**so)), use_tqdm=False)
    output = llm.generate(["Ticket?"], sampling(structured(regex=REGEX)), use_tqdm=False)[0]
    check("regex", output.outputs[0].text)


def test_backend_is_leapgram_with_a_bounded_cache(llm) -> None:
    manager = llm.llm_engine.engine_core.engine_core.structured_output_manager
    backend = manager.backend
    assert type(backend).__name__ == "LeapgramBackend"
    assert 1 <= len(backend.cache) <= backend.cache.size


def test_the_mask_prefetch_thread_ran(llm) -> None:
    backend = llm.llm_engine.engine_core.engine_core.structured_output_manager.backend
    assert backend.prefetcher is not None
    assert not backend.prefetcher.idle  # normal priority unless LEAPGRAM_VLLM_PREFETCH=idle
    before = backend.prefetcher.jobs
    outputs = llm.generate([f"Ticket {n}?" for n in range(4)], sampling(structured(regex=REGEX)), use_tqdm=False)
    for output in outputs:
        check("regex", output.outputs[0].text)
    assert backend.prefetcher.jobs > before
