"""leapgram behind vLLM's OpenAI-compatible server, driven by the ``openai`` client.

One server for the module (127.0.0.1, the embedded SmolLM2-135M-Instruct) started with
``--structured-outputs-config '{"backend": "leapgram"}'``: the plugin entry point installs the
backend in the server's processes. Runs only under an interpreter with vLLM.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("vllm", reason="needs vLLM: bash scripts/setup_vllm.sh, then run with .venv-vllm/bin/python")
openai = pytest.importorskip("openai")
jsonschema = pytest.importorskip("jsonschema")

from tests.helpers import vllm_tools
from tests.helpers.vllm_server import VllmServer

pytestmark = pytest.mark.slow

CITY = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 16}, "population": {"type": "integer", "minimum": 0}},
    "required": ["city", "population"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def server():
    with VllmServer(extra_args=["--structured-outputs-config", '{"backend": "leapgram"}',
                                "--max-num-seqs", "16"]) as running:
        yield running
        assert running.is_running(), running.log_tail()


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=2, timeout=600)


def chat(client, server, content: str, **kwargs):
    # sampled, but seeded (repeatable); room for the whitespace runs a small model writes under flexible JSON
    options = {"max_tokens": 300, "temperature": 0.8, "seed": 7, **kwargs}
    return client.chat.completions.create(model=server.model, messages=[{"role": "user", "content": content}],
                                          **options)


def test_response_format_json_schema(client, server) -> None:
    response_format = {"type": "json_schema", "json_schema": {"name": "city", "schema": CITY, "strict": True}}
    choice = chat(client, server, "A big city as JSON.", response_format=response_format).choices[0]
    assert choice.finish_reason == "stop"
    jsonschema.validate(json.loads(choice.message.content), CITY)


def test_structured_outputs_extra_body(client, server) -> None:
    regex = r"(red|green|blue) [0-9]{1,3}"
    choice = chat(client, server, "A colour and a number.", extra_body={"structured_outputs": {"regex": regex}}).choices[0]
    import re

    assert re.fullmatch(regex, choice.message.content)
    completion = client.completions.create(model=server.model, prompt="Pick one:", max_tokens=20,
                                           extra_body={"structured_outputs": {"choice": ["alpha", "beta"]}})
    assert completion.choices[0].text in ("alpha", "beta")


def schema_number(i: int) -> dict:
    """16 different schemas: each asks for its own key names, types and bounds."""
    kinds = [{"type": "integer", "minimum": i, "maximum": i + 50}, {"type": "string", "maxLength": 4 + i % 5},
             {"type": "boolean"}, {"enum": [f"v{i}", f"w{i}", "z"]}]
    properties = {f"k{i}_{j}": kinds[(i + j) % 4] for j in range(1 + i % 3)}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def test_sixteen_concurrent_requests_with_different_schemas(client, server) -> None:
    def ask(i: int) -> tuple[int, str, str]:
        fmt = {"type": "json_schema", "json_schema": {"name": f"s{i}", "schema": schema_number(i)}}
        choice = chat(client, server, f"Fill in record {i} as JSON.", response_format=fmt, max_tokens=200).choices[0]
        return i, choice.finish_reason, choice.message.content

    with ThreadPoolExecutor(16) as pool:
        results = list(pool.map(ask, range(16)))
    # The small model sometimes spends its tokens on the whitespace the schema allows (runs of up to
    # 20 bytes, or 100 ending in a newline and indentation), so a request may stop at max_tokens;
    # every finished one must validate.
    finished = [(i, content) for i, finish_reason, content in results if finish_reason == "stop"]
    assert len(finished) >= 12, results
    for i, content in finished:
        jsonschema.validate(json.loads(content), schema_number(i))


def test_malformed_schema_is_a_400_with_leapgram_message_then_the_server_serves(client, server) -> None:
    bad = {"type": "json_schema", "json_schema": {"name": "bad", "schema": {"type": "object", "properties": {
        "n": {"type": "integer", "maximum": "ten"}}}}}
    with pytest.raises(openai.BadRequestError) as caught:
        chat(client, server, "x", response_format=bad)
    assert caught.value.status_code == 400 and "leapgram" in str(caught.value) and "maximum" in str(caught.value)
    with pytest.raises(openai.BadRequestError, match="leapgram"):
        chat(client, server, "x", extra_body={"structured_outputs": {"grammar": 'root ::= "a" | undefined'}})
    test_response_format_json_schema(client, server)


def test_structural_tag_tool_calls_through_the_server(client, server) -> None:
    """A chat with get_weather and get_time: ``response_format`` structural tags (calls only, and
    free text with calls) and vLLM's legacy form in the ``structured_outputs`` extra body."""
    legacy = json.dumps(vllm_tools.legacy_structural_tag())
    requests = [{"response_format": vllm_tools.structural_tag(required=True)},
                {"response_format": vllm_tools.structural_tag()},
                {"extra_body": {"structured_outputs": {"structural_tag": legacy}}}]

    def ask(job: tuple[int, dict]):
        index, options = job
        question = vllm_tools.QUESTIONS[index % len(vllm_tools.QUESTIONS)]
        return client.chat.completions.create(model=server.model, messages=vllm_tools.messages(question),
                                              max_tokens=100, temperature=0.7, seed=index, **options).choices[0]

    jobs = [(i, options) for i, options in enumerate(requests * 2)]
    with ThreadPoolExecutor(len(jobs)) as pool:
        choices = list(pool.map(ask, jobs))
    for (index, _), choice in zip(jobs, choices):
        made = vllm_tools.completed_calls(choice.message.content)
        if index % len(requests) == 0:  # calls only: complete after one call at least
            assert made, choice.message.content  # a call within max_tokens (it may go on with more)
