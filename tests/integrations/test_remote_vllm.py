"""leapgram.remote against a real vLLM OpenAI-compatible server on CPU (SmolLM2-135M-Instruct).

Runs only under an interpreter with vLLM (``.venv-vllm/bin/python -m pytest
tests/integrations/test_remote_vllm.py``; ``bash scripts/setup_vllm.sh`` makes that venv). One
server for the module, on 127.0.0.1, started and stopped by ``tests/helpers/vllm_server.py``.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow
pytest.importorskip("vllm", reason="needs vLLM: bash scripts/setup_vllm.sh, then run with .venv-vllm/bin/python")
jsonschema = pytest.importorskip("jsonschema")

from leapgram import Grammar, Vocabulary
from leapgram.integrations.smollm2 import CHATML_TEMPLATE
from leapgram.remote import Endpoint
from tests.helpers.vllm_server import VllmServer, model_folder

HOUSES = ["Gryffindor", "Slytherin", "Ravenclaw", "Hufflepuff"]
PERSON = {"type": "object", "additionalProperties": False, "required": ["name", "age", "house"],
          "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 20},
                         "age": {"type": "integer", "minimum": 0, "maximum": 120}, "house": {"enum": HOUSES}}}
ASK = [{"role": "user", "content": "Describe Harry Potter as JSON with his name, age and house."}]


@pytest.fixture(scope="module")
def server():
    with VllmServer() as running:
        yield running


@pytest.fixture(scope="module")
def endpoint(server):
    vocab = Vocabulary.from_tokenizer_json(model_folder())
    return Endpoint(server.base_url, model=server.model, chat_template=CHATML_TEMPLATE, vocab=vocab,
                    call_timeout=120)


def test_json_schema_through_completions_with_the_local_template(endpoint):
    result = endpoint.generate(Grammar.from_json_schema(PERSON), messages=ASK, max_tokens=120, deadline=240)
    assert result.valid and result.mechanism == "completions", result.log
    jsonschema.validate(json.loads(result.text), PERSON)
    cost = result.cost
    assert cost.calls >= 1 and cost.prompt_tokens > 20 and cost.completion_tokens >= 1 and not cost.estimated
    assert endpoint.server == "vllm"


def test_regex_through_chat_with_continue_final_message(server):
    endpoint = Endpoint(server.base_url, model=server.model, call_timeout=120)
    question = [{"role": "user", "content": "In which year did the Second World War end? Answer with the year."}]
    result = endpoint.generate(Grammar.from_regex(r"(19|20)[0-9]{2}"), messages=question, max_tokens=20, deadline=240)
    assert result.valid and re.fullmatch(r"(19|20)[0-9]{2}", result.text) and result.mechanism == "chat-continue"


@pytest.mark.parametrize("grammar", [
    Grammar.from_lark('start: "SELECT " NAME " FROM " NAME ";"\nNAME: /[a-z]{1,8}/'),
    Grammar.from_gbnf('root ::= "(" digit digit? " + " digit digit? ")"\ndigit ::= [0-9]'),
], ids=["lark", "gbnf"])
def test_context_free_grammars(endpoint, grammar):
    ask = [{"role": "user", "content": "Write one short example that fits the format."}]
    result = endpoint.generate(grammar, messages=ask, max_tokens=40, deadline=240)
    assert result.valid, result.log


def test_native_delegation_is_checked_locally(endpoint):
    result = endpoint.generate(Grammar.from_json_schema(PERSON), messages=ASK, max_tokens=120, deadline=240,
                               native="structured_outputs")
    assert result.valid and result.mechanism == "native:structured_outputs+completions", result.log
    jsonschema.validate(json.loads(result.text), PERSON)


def test_budget_exhaustion_is_finished_by_the_grammar(endpoint):
    result = endpoint.generate(Grammar.from_json_schema(PERSON), messages=ASK, max_calls=1, max_tokens=4,
                               deadline=240)
    assert result.valid and result.completed_by_grammar is not None
    assert result.completed_by_grammar.reason in ("max_calls", "max_tokens")
    jsonschema.validate(json.loads(result.text), PERSON)


def test_concurrent_requests(endpoint):
    names = ["Hermione Granger", "Ron Weasley", "Draco Malfoy"]

    async def main():
        grammar = Grammar.from_json_schema(PERSON)
        asks = [[{"role": "user", "content": f"Describe {n} as JSON with name, age and house."}] for n in names]
        return await asyncio.gather(*(endpoint.agenerate(grammar, messages=a, max_tokens=100, deadline=300)
                                      for a in asks))

    results = asyncio.run(main())
    assert all(r.valid for r in results)
    for result in results:
        jsonschema.validate(json.loads(result.text), PERSON)


def test_cli_prints_the_output_alone(server, tmp_path):
    schema = tmp_path / "person.json"
    schema.write_text(json.dumps(PERSON))
    done = subprocess.run([sys.executable, "-m", "leapgram", "remote", "--base-url", server.base_url, "--model",
                           server.model, "--schema", str(schema), "--chat-template", "chatml", "--stats",
                           "--deadline", "240", "Describe Ron Weasley as JSON."],
                          check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    jsonschema.validate(json.loads(done.stdout), PERSON)
    assert "calls" in done.stderr and "mechanism: completions" in done.stderr
