"""A local OpenAI-compatible server (standard library, 127.0.0.1) that replays scripted answers.

Each POST takes the next entry of the script: a streamed answer token by token (with optional
top log-probabilities), a whole JSON answer, an HTTP error, garbage, a stream that breaks off,
or a hang. ``GET /v1/models`` says who owns the model (``vllm`` turns on vLLM's extensions).
Every request body is recorded in ``requests``; ``closed_early`` counts streams whose client
went away before the end.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


@dataclass
class Entry:
    kind: str  # stream, answer, error, garbage, hang, echo
    tokens: list = field(default_factory=list)  # [(text, [(alt, logprob), ...]) | text]
    finish: str | None = "stop"
    body: object = None
    status: int = 200
    break_after: int | None = None  # stream: drop the connection after this many tokens
    delay: float = 0.0  # seconds before each token (stream) or before the answer
    usage: bool = True
    prompt_tokens: int = 10


def stream(*tokens, finish: str | None = "stop", break_after=None, delay=0.0, usage=True) -> Entry:
    return Entry("stream", list(tokens), finish=finish, break_after=break_after, delay=delay, usage=usage)


def answer(text: str, finish: str = "length") -> Entry:
    return Entry("answer", [text], finish=finish)


def error(status: int, message: str) -> Entry:
    return Entry("error", status=status, body={"error": {"message": message, "type": "BadRequestError"}})


def garbage(data: bytes, *, sse: bool = True) -> Entry:
    return Entry("garbage", body=data, finish="sse" if sse else "raw")


def hang(seconds: float) -> Entry:
    return Entry("hang", delay=seconds)


def echo(score) -> Entry:
    """Answer an echo scoring request: each prompt character is a token of log-probability
    ``score(character)``."""
    return Entry("echo", body=score)


class ScriptedServer:
    def __init__(self, script=(), *, owner: str = "vllm") -> None:
        self.script = list(script)
        self.owner = owner
        self.requests: list[dict] = []
        self.paths: list[str] = []
        self.headers: list[dict] = []
        self.closed_early = 0
        self.in_flight = 0
        self.max_in_flight = 0  # the most POST requests being answered at one time
        self._lock = threading.Lock()
        self.httpd = _Server(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def next_entry(self, body: dict, path: str, headers: dict) -> Entry:
        with self._lock:
            self.requests.append(body)
            self.paths.append(path)
            self.headers.append(headers)
            if not self.script:
                return error(500, "the script ran out")
            return self.script.pop(0)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # many concurrent clients connect at once


def _handler(server: ScriptedServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            self._json(200, {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": server.owner}]})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length))
            entry = server.next_entry(body, self.path, dict(self.headers))
            chat = self.path.endswith("/chat/completions")
            with server._lock:
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            try:
                getattr(self, f"_{entry.kind}")(entry, body, chat)
            except (BrokenPipeError, ConnectionResetError):
                with server._lock:
                    server.closed_early += 1
            finally:
                with server._lock:
                    server.in_flight -= 1

        def _json(self, status: int, obj) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, entry: Entry, body, chat) -> None:
            self._json(entry.status, entry.body)

        def _hang(self, entry: Entry, body, chat) -> None:
            time.sleep(entry.delay)
            self._json(500, {"error": {"message": "hung"}})

        def _garbage(self, entry: Entry, body, chat) -> None:
            if entry.finish == "raw":
                self.wfile.write(entry.body)
                self.wfile.flush()
                self.close_connection = True
                return
            self._start_stream()
            self._chunk(b"data: " + entry.body + b"\n\n")
            self._chunk(b"")

        def _answer(self, entry: Entry, body, chat) -> None:
            time.sleep(entry.delay)
            text = entry.tokens[0]
            choice = {"index": 0, "finish_reason": entry.finish}
            if chat:
                choice["message"] = {"role": "assistant", "content": text}
            else:
                choice["text"] = text
            self._json(200, {"choices": [choice], "usage": {"prompt_tokens": entry.prompt_tokens,
                                                             "completion_tokens": 1}})

        def _echo(self, entry: Entry, body, chat) -> None:
            choices = []
            for index, prompt in enumerate(body["prompt"]):
                choices.append({"index": index, "text": prompt + "x", "finish_reason": "length",
                                "logprobs": {"tokens": list(prompt), "text_offset": list(range(len(prompt))),
                                             "token_logprobs": [None] + [entry.body(c) for c in prompt[1:]]}})
            self._json(200, {"choices": choices, "usage": {"prompt_tokens": 50, "completion_tokens": len(choices)}})

        def _stream(self, entry: Entry, body, chat) -> None:
            self._start_stream()
            for count, token in enumerate(entry.tokens):
                if entry.break_after is not None and count >= entry.break_after:
                    self.close_connection = True
                    return  # no terminating chunk: the stream breaks off
                time.sleep(entry.delay)
                text, top = (token, None) if isinstance(token, str) else token
                last = count == len(entry.tokens) - 1
                chunk = _chunk_object(text, top, entry.finish if last else None, chat)
                if entry.usage:
                    chunk["usage"] = {"prompt_tokens": entry.prompt_tokens, "completion_tokens": count + 1,
                                      "total_tokens": entry.prompt_tokens + count + 1}
                self._chunk(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")

        def _start_stream(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    return Handler


def _chunk_object(text: str, top, finish, chat: bool) -> dict:
    choice: dict = {"index": 0, "finish_reason": finish}
    top = list(top) if top else [(text, -0.1)]
    if chat:
        choice["delta"] = {"content": text}
        choice["logprobs"] = {"content": [{"token": text, "logprob": top[0][1], "bytes": list(text.encode()),
                                           "top_logprobs": [{"token": t, "logprob": lp, "bytes": list(t.encode())}
                                                            for t, lp in top]}]}
    else:
        choice["text"] = text
        choice["logprobs"] = {"tokens": [text], "token_logprobs": [top[0][1]], "text_offset": [0],
                              "top_logprobs": [dict(top)]}
    return {"id": "x", "object": "text_completion", "choices": [choice]}
