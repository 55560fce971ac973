"""leapgram behind a real SGLang server: ``--grammar-backend leapgram``.

One server for the module (127.0.0.1, the embedded SmolLM2-135M-Instruct, ``--device cpu
--attention-backend torch_native``), started with ``--grammar-backend leapgram``: the
``sglang.srt.plugins`` entry point registers the backend in the server's processes. Driven through
SGLang's native ``/generate`` and its OpenAI-compatible API. Runs only under an interpreter with
SGLang (``bash scripts/setup_sglang.sh``, then ``.venv-sglang/bin/python -m pytest ...``).
"""

from __future__ import annotations

import json
import re
import sys
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("sglang", reason="needs SGLang: bash scripts/setup_sglang.sh, then run with .venv-sglang/bin/python")
openai = pytest.importorskip("openai")
jsonschema = pytest.importorskip("jsonschema")

from tests.helpers.vllm_server import VllmServer

pytestmark = pytest.mark.slow

CITY = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 12}, "population": {"type": "integer", "minimum": 0}},
    "required": ["city", "population"],
    "additionalProperties": False,
}


class SglangServer(VllmServer):
    """``python -m sglang.launch_server`` with this interpreter (it has SGLang); the start-up,
    health wait, log file and process-group stop of :class:`VllmServer`."""

    def __init__(self, extra_args: list[str]) -> None:
        super().__init__(extra_args=extra_args, python=sys.executable, startup_timeout=900.0,
                         env={"SGLANG_TIMEOUT_KEEP_ALIVE": "600"})  # as VllmServer's keep-alive
        self.root = f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        return [self.python, "-m", "sglang.launch_server", "--model-path", self.model, "--device", "cpu",
                "--attention-backend", "torch_native", "--host", "127.0.0.1", "--port", str(self.port),
                "--dtype", "float32", "--context-length", str(self.max_model_len), "--random-seed", "0",
                *self.extra_args]


@pytest.fixture(scope="module")
def server():
    with SglangServer(["--grammar-backend", "leapgram", "--max-running-requests", "8"]) as running:
        yield running
        assert running.is_running(), running.log_tail()


@pytest.fixture(scope="module")
def client(server):
    return openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=2, timeout=600)


def generate(server, prompt: str, max_new_tokens: int = 80, **constraint) -> tuple[int, dict]:
    """POST /generate (greedy); the HTTP status and the decoded JSON body."""
    body = {"text": prompt, "sampling_params": {"max_new_tokens": max_new_tokens, "temperature": 0, **constraint}}
    request = urllib.request.Request(f"{server.root}/generate", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def finished_text(server, prompt: str, **constraint) -> str:
    status, body = generate(server, prompt, **constraint)
    assert status == 200, body
    assert body["meta_info"]["finish_reason"]["type"] == "stop", body
    return body["text"]


def test_the_leapgram_backend_serves(server) -> None:
    assert "leapgram grammar backend ready" in server.log_path.read_text(errors="replace")


def test_json_schema(server) -> None:
    text = finished_text(server, "A big city as JSON:", json_schema=json.dumps(CITY))
    jsonschema.validate(json.loads(text), CITY)


def test_regex(server) -> None:
    regex = r"(red|green|blue) [0-9]{1,3}"
    assert re.fullmatch(regex, finished_text(server, "A colour and a number:", regex=regex))


def test_ebnf(server) -> None:
    ebnf = 'root ::= "The answer is " answer "."\nanswer ::= "yes" | "no" | [0-9]+'
    text = finished_text(server, "Is the sky blue?", ebnf=ebnf)
    assert re.fullmatch(r"The answer is (yes|no|[0-9]+)\.", text)


def test_choice_like_regex(server) -> None:
    assert finished_text(server, "Pick one animal:", regex="(cat|dog|horse)") in ("cat", "dog", "horse")


def test_openai_response_format_json_schema(client, server) -> None:
    response_format = {"type": "json_schema", "json_schema": {"name": "city", "schema": CITY, "strict": True}}
    choice = client.chat.completions.create(model=server.model, messages=[{"role": "user", "content": "A city."}],
                                            max_tokens=80, temperature=0, response_format=response_format).choices[0]
    assert choice.finish_reason == "stop"
    jsonschema.validate(json.loads(choice.message.content), CITY)


def test_openai_response_format_structural_tag(client, server) -> None:
    """``response_format`` ``{"type": "structural_tag", ...}`` as SGLang's OpenAI route passes it on:
    one forced tool call, which validates."""
    weather = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12}}, "required": ["city"],
               "additionalProperties": False}
    tag = {"type": "structural_tag", "format": {"type": "tag", "begin": "<function=get_weather>",
                                                "content": {"type": "json_schema", "json_schema": weather},
                                                "end": "</function>"}}
    choice = client.chat.completions.create(model=server.model, messages=[{"role": "user", "content": "Weather in Oslo?"}],
                                            max_tokens=60, temperature=0, response_format=tag).choices[0]
    assert choice.finish_reason == "stop", choice.message.content
    call = re.fullmatch(r"<function=get_weather>(.*)</function>", choice.message.content, re.DOTALL)
    assert call, choice.message.content
    jsonschema.validate(json.loads(call.group(1)), weather)


def schema_number(i: int) -> dict:
    """Different small schemas: each its own key names, types and bounds."""
    kinds = [{"type": "integer", "minimum": i, "maximum": i + 50}, {"enum": [f"v{i}", f"w{i}"]},
             {"type": "boolean"}, {"type": "string", "maxLength": 3 + i}]
    properties = {f"k{i}_{j}": kinds[(i + j) % 4] for j in range(1 + i % 2)}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def test_concurrent_requests_with_different_schemas(server) -> None:
    def ask(i: int) -> tuple[int, int, dict]:
        return (i, *generate(server, f"Record {i} as JSON:", max_new_tokens=100, json_schema=json.dumps(schema_number(i))))

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(ask, range(4)))
    for i, status, body in results:
        assert status == 200 and body["meta_info"]["finish_reason"]["type"] == "stop", body
        jsonschema.validate(json.loads(body["text"]), schema_number(i))


def test_malformed_grammars_fail_the_request_with_leapgram_message_then_the_server_serves(client, server) -> None:
    bad_schema = {"type": "object", "properties": {"n": {"type": "integer", "maximum": "ten"}}}
    status, body = generate(server, "x", json_schema=json.dumps(bad_schema))
    assert status == 400 and "leapgram: " in body["error"]["message"] and "maximum" in body["error"]["message"]
    status, body = generate(server, "x", ebnf='root ::= "a" | undefined')
    assert status == 400 and "leapgram: " in body["error"]["message"] and "undefined" in body["error"]["message"]
    with pytest.raises(openai.BadRequestError, match="leapgram") as caught:
        client.chat.completions.create(model=server.model, messages=[{"role": "user", "content": "x"}], max_tokens=5,
                                       response_format={"type": "json_schema",
                                                        "json_schema": {"name": "bad", "schema": bad_schema}})
    assert caught.value.status_code == 400
    test_json_schema(server)
