"""``leapgram remote`` against the scripted server: the output alone on stdout, the cost on stderr."""

from __future__ import annotations

import json

from leapgram.cli import main
from tests.remote.scripted_server import ScriptedServer, error, stream


def test_remote_prints_only_the_output_and_stats_on_stderr(capsys, tmp_path):
    schema = tmp_path / "age.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"],
                                  "additionalProperties": False}))
    with ScriptedServer([stream("4", "2", "}")]) as server:
        code = main(["remote", "--base-url", server.base_url, "--model", "m", "--schema", str(schema),
                     "--whitespace", "compact", "--chat-template", "chatml", "--stats", "How old?"])
    out, err = capsys.readouterr()
    assert code == 0 and out == '{"age":42}\n'
    assert "calls 1" in err and "mechanism: completions" in err
    assert server.requests[0]["prompt"].endswith('<|im_start|>assistant\n{"age":')


def test_remote_without_stats_and_a_chat_server(capsys):
    with ScriptedServer([stream("20", "24")]) as server:
        code = main(["remote", "--base-url", server.base_url, "--model", "m", "--regex", "[0-9]{4}", "Year?"])
    out, err = capsys.readouterr()
    assert (code, out, err) == (0, "2024\n", "")
    assert server.paths == ["/v1/chat/completions"]


def test_remote_error_exit_status(capsys):
    with ScriptedServer([error(404, "model m not found")]) as server:
        code = main(["remote", "--base-url", server.base_url, "--model", "m", "--regex", "[0-9]{4}", "Year?"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "HTTP 404: model m not found" in err
