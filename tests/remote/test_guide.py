"""leapgram.remote against a scripted local server: streaming cuts, repairs, budgets, errors."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest

from leapgram import Grammar, Vocabulary
from leapgram.remote import Endpoint, RemoteHTTPError, RemoteProtocolError, RemoteTimeoutError, generate
from tests.remote.scripted_server import ScriptedServer, answer, echo, error, garbage, hang, stream

AGE = Grammar.from_json_schema({"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"],
                                "additionalProperties": False}, whitespace="compact")
YEAR = Grammar.from_regex(r"[0-9]{4}")
USER = [{"role": "user", "content": "How old?"}]


def run(server: ScriptedServer, grammar: Grammar, **options):
    endpoint_options = {k: options.pop(k) for k in ("chat_template", "vocab", "call_timeout", "top_logprobs")
                        if k in options}
    endpoint_options.setdefault("chat_template", "chatml")
    endpoint = Endpoint(server.base_url, model="m", **endpoint_options)
    if "prompt" not in options:
        options.setdefault("messages", USER)
    return endpoint.generate(grammar, **options)


def test_clean_output_one_call():
    with ScriptedServer([stream("19", "45")], owner="openai") as server:
        result = run(server, YEAR, prompt="Year? ")
    assert (result.text, result.valid, result.finish) == ("1945", True, "stop")
    assert result.mechanism == "completions-raw" and result.completed_by_grammar is None
    assert result.cost.calls == 1 and result.cost.completion_tokens == 2 and result.cost.prompt_tokens == 10
    assert server.requests[0]["prompt"] == "Year? " and server.requests[0]["stream"] is True


def test_stream_is_closed_where_the_grammar_ends():
    with ScriptedServer([stream("19", "45", " was", " the", " year", finish="length")]) as server:
        result = run(server, YEAR)
    assert result.text == "1945" and result.finish == "grammar_end" and result.cost.calls == 1
    assert result.cost.completion_tokens == 2 and result.cost.discarded_tokens == 0


def test_stream_is_closed_at_the_first_refused_byte():
    tokens = ["19", "45", " was", " the", " year"] + [" and"] * 50
    with ScriptedServer([stream(*tokens, delay=0.01)]) as server:
        result = run(server, Grammar.from_regex("[0-9]+"))
        time.sleep(0.2)
    assert result.text == "1945" and result.finish == "stop" and result.cost.calls == 1
    assert result.cost.discarded_tokens == 1 and result.cost.completion_tokens == 3
    assert server.closed_early == 1


def test_forced_bytes_cost_no_call_and_prefix_the_prompt():
    with ScriptedServer([stream("17", "}")]) as server:
        result = run(server, AGE)
    assert result.text == '{"age":17}' and result.valid and result.cost.calls == 1
    assert result.cost.forced_bytes == len('{"age":')
    assert server.requests[0]["prompt"] == '<|im_start|>user\nHow old?<|im_end|>\n<|im_start|>assistant\n{"age":'
    assert result.mechanism == "completions"


def test_repair_from_streamed_top_logprobs():
    script = [stream(('"', [('"', -0.2), ("1", -1.9), ("x", -2.5)]), "17", '"}'), stream("7", "}")]
    with ScriptedServer(script) as server:
        result = run(server, AGE)
    assert result.text == '{"age":17}' and result.valid
    assert result.cost.repairs == {"logprobs": 1} and result.cost.calls == 2
    assert result.cost.discarded_tokens == 2 and result.cost.resyncs == 0  # '17"}' does not fit after '1'
    assert server.requests[1]["prompt"].endswith('{"age":1')


def test_repair_with_a_call_restricted_to_allowed_tokens():
    vocab = Vocabulary.byte_vocabulary()
    script = [stream('"', "x"), answer("3"), stream("}")]
    with ScriptedServer(script) as server:
        result = run(server, AGE, vocab=vocab)
    assert result.text == '{"age":3}' and result.cost.repairs == {"restricted": 1} and result.cost.calls == 3
    allowed = server.requests[1]["allowed_token_ids"]
    assert set(allowed) == set(b"-0123456789") and server.requests[1]["max_tokens"] == 1


def test_logit_bias_on_servers_without_allowed_token_ids():
    vocab = Vocabulary.byte_vocabulary()
    with ScriptedServer([stream('"'), answer("5"), stream("}")], owner="openai") as server:
        result = run(server, AGE, vocab=vocab)
    assert result.text == '{"age":5}'
    assert {int(k) for k in server.requests[1]["logit_bias"]} == set(b"-0123456789")


def test_repair_by_the_models_own_scores():
    script = [stream('"'), echo(lambda c: -0.1 if c == "2" else -3.0), stream("}")]
    with ScriptedServer(script) as server:
        result = run(server, AGE)
    assert result.text == '{"age":2}' and result.cost.repairs == {"scored": 1}
    scored = server.requests[1]
    assert scored["echo"] is True and len(scored["prompt"]) == 11  # 0} 1 ... 9 -
    assert all(p.endswith('{"age":' + c) for p, c in zip(scored["prompt"], ["0}", *"123456789-"]))


def test_grammar_fallback_only_without_any_signal_from_the_model():
    with ScriptedServer([stream("hello")], owner="openai") as server:
        result = run(server, Grammar.from_regex(r"[a-z]+!"), prompt="Say hi")
    assert result.text == "hello!" and result.valid and result.cost.repairs == {"grammar": 1}
    assert result.finish == "grammar_end" and result.cost.calls == 1


def test_max_calls_finishes_with_the_grammar():
    with ScriptedServer([stream("1", finish="length")]) as server:
        result = run(server, AGE, max_calls=1)
    assert result.valid and result.text == '{"age":1}'
    assert result.completed_by_grammar.reason == "max_calls"
    assert result.completed_by_grammar.offset == len('{"age":1') and result.completed_by_grammar.text == "}"


def test_max_tokens_budget():
    with ScriptedServer([stream("1", "2", finish="length")]) as server:
        result = run(server, AGE, max_tokens=2)
    assert server.requests[0]["max_tokens"] == 2
    assert result.valid and result.completed_by_grammar.reason == "max_tokens" and result.text == '{"age":12}'


def test_deadline_finishes_in_time():
    with ScriptedServer([stream("4", *"200000000", delay=0.4)]) as server:  # 4 s of stream
        started = time.monotonic()
        result = run(server, AGE, deadline=0.6)
        elapsed = time.monotonic() - started
    assert elapsed < 3.0 and result.valid and result.text == '{"age":4}'
    assert result.completed_by_grammar.reason == "deadline"


def test_call_timeout_raises_with_the_partial_result():
    with ScriptedServer([hang(3)]) as server, pytest.raises(RemoteTimeoutError, match="call_timeout=0.3") as info:
        run(server, AGE, call_timeout=0.3)
    assert info.value.partial.valid and info.value.partial.text.startswith('{"age":')


def test_errors_can_complete_instead_of_raising():
    with ScriptedServer([hang(3)]) as server:
        result = run(server, AGE, call_timeout=0.3, on_error="complete")
    assert result.valid and "call_timeout" in result.error and result.completed_by_grammar.reason == "error"


def test_broken_stream_is_continued():
    with ScriptedServer([stream("1", "2", "3", break_after=1), stream("7", "}")]) as server:
        result = run(server, AGE)
    assert result.text == '{"age":17}' and result.cost.retries == 1 and result.cost.calls == 2


def test_streams_that_keep_breaking_raise():
    script = [stream("1", "2", break_after=0)] * 3
    with ScriptedServer(script) as server, pytest.raises(RemoteProtocolError, match="broke off 3 times"):
        run(server, AGE)


def test_http_error_names_status_and_message():
    with (ScriptedServer([error(400, "logprobs are not allowed")]) as server,
          pytest.raises(RemoteHTTPError, match="HTTP 400: logprobs are not allowed") as info):
        run(server, AGE)
    assert info.value.status == 400


def test_unreachable_server():
    endpoint = Endpoint("http://127.0.0.1:9/v1", model="m", chat_template="chatml", server="openai")
    with pytest.raises(RemoteHTTPError, match="cannot connect") as info:
        endpoint.generate(AGE, messages=USER)
    assert info.value.status is None


@pytest.mark.parametrize("entry, message", [(garbage(b"{not json"), "not JSON"),
                                            (garbage(b"hello there\r\n\r\n", sse=False), "not an HTTP response"),
                                            (garbage(b'{"id": 1}'), "no 'choices'")])
def test_garbage_is_a_protocol_error(entry, message):
    with ScriptedServer([entry]) as server, pytest.raises(RemoteProtocolError, match=message):
        run(server, AGE)


def test_chat_with_continue_final_message():
    script = [stream(('"', [('"', -0.1), ("4", -1.0)])), stream("2", "}")]
    with ScriptedServer(script) as server:
        result = run(server, AGE, chat_template=None)
    assert result.mechanism == "chat-continue" and result.text == '{"age":42}'
    assert server.paths == ["/v1/chat/completions"] * 2
    second = server.requests[1]
    assert second["continue_final_message"] is True and second["add_generation_prompt"] is False
    assert second["messages"][-1] == {"role": "assistant", "content": '{"age":4'}


def test_native_delegation_is_sent_and_checked():
    with ScriptedServer([stream("3", "1", "}")]) as server:
        result = run(server, AGE, native="structured_outputs")
    assert result.text == '{"age":31}' and result.mechanism == "native:structured_outputs+completions"
    assert server.requests[0]["structured_outputs"] == {"json": json.loads(AGE.source)}


def test_many_requests_concurrently():
    async def main(endpoint):
        return await asyncio.gather(*(endpoint.agenerate(YEAR, messages=USER) for _ in range(20)))

    with ScriptedServer([stream("2", "0", f"{i:02d}", delay=0.05) for i in range(20)]) as server:
        endpoint = Endpoint(server.base_url, model="m", chat_template="chatml")
        results = asyncio.run(main(endpoint))
    assert sorted(r.text for r in results) == sorted(f"20{i:02d}" for i in range(20))
    assert all(r.valid and r.cost.calls == 1 for r in results)
    assert server.max_in_flight >= 5  # each answer streams for 0.15 s: one after another would give 1


def test_client_object_and_module_function():
    class Client:
        base_url = None
        api_key = "sk-test"

    with ScriptedServer([stream("1999")], owner="openai") as server:
        Client.base_url = server.base_url + "/"
        result = generate(YEAR, client=Client(), model="m", prompt="Year:")
    assert result.text == "1999" and server.headers[0]["Authorization"] == "Bearer sk-test"


def test_import_leapgram_does_not_import_openai():
    code = "import sys, leapgram, leapgram.remote; print('openai' in sys.modules, 'httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_resync_keeps_the_models_text_after_forced_bytes_without_a_call():
    grammar = Grammar.from_json_schema({"type": "object", "properties": {"name": {"type": "string"},
                                                                          "blood status": {"type": "string"}},
                                        "required": ["name", "blood status"], "additionalProperties": False},
                                       whitespace="compact")
    with ScriptedServer([stream("Harry", '","', "blood", '":"', "Pure", '-blood"}')]) as server:
        result = run(server, grammar)
    assert result.text == '{"name":"Harry","blood status":"Pure-blood"}'
    assert result.cost.calls == 1 and result.cost.resyncs == 1 and result.cost.repairs == {"forced": 1}


def test_a_replaced_token_completed_by_forced_bytes_lets_the_stream_resync():
    grammar = Grammar.from_json_schema({"type": "object", "properties": {"house": {"enum": ["Gryffindor", "Slytherin"]},
                                                                          "age": {"type": "integer"}},
                                        "required": ["house", "age"], "additionalProperties": False},
                                       whitespace="compact")
    script = [stream(("Hog", [("Hog", -0.1), ("Sly", -2.0)]), 'warts",', '"age":', "11}")]
    with ScriptedServer(script) as server:
        result = run(server, grammar)
    assert result.text == '{"house":"Slytherin","age":11}'
    assert result.cost.calls == 1 and result.cost.resyncs == 1 and result.cost.repairs == {"logprobs": 1, "forced": 1}


def test_a_grammar_that_accepts_nothing_makes_no_call():
    empty = Grammar.from_json_schema({"type": "string", "allOf": [{"pattern": "^a+$"}, {"pattern": "^b+$"}],
                                      "minLength": 1})
    with ScriptedServer([]) as server:
        result = run(server, empty)
    assert not result.valid and result.finish == "empty_grammar" and result.cost.calls == 0
    assert "accepts no text" in result.error and server.requests == []


def test_a_refused_native_constraint_falls_back_to_local_guidance():
    script = [error(400, "Grammar error: Unknown format: jsonpath"), stream("5", "}")]
    with ScriptedServer(script) as server:
        result = run(server, AGE, native="structured_outputs")
    assert result.text == '{"age":5}' and result.valid and result.cost.calls == 2
    assert result.mechanism == "completions (native:structured_outputs refused)"
    assert "structured_outputs" not in server.requests[1] and server.requests[1]["prompt"].endswith('{"age":')
