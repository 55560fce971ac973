"""``Endpoint``: an OpenAI-compatible server (or client object) and what it can do."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Sequence

from ..compiler import GrammarCompiler
from ..grammars import Grammar
from .bytes import byte_compiler
from .errors import RemoteError, RemoteHTTPError, RemoteProtocolError
from .http import BaseURL, post
from .result import RemoteResult

SERVERS = ("auto", "vllm", "openai", "generic")
MODES = ("auto", "completions", "chat")
NATIVE = (None, False, "structured_outputs", "guided", "response_format", "llama.cpp")


class Endpoint:
    """An OpenAI-compatible API and a model behind it; reuse one for many requests (it caches
    compiled grammars; it holds no connection).

    ``base_url`` (``http://host:port/v1``) or ``client``: an ``openai.OpenAI``/``AsyncOpenAI``
    object (or anything with ``base_url`` and ``api_key``), whose address and key are used; the
    ``openai`` package itself is never imported. ``chat_template``: how to render chat messages
    into one prompt for the completions endpoint: a callable ``messages -> str``, a Jinja
    template string (needs ``jinja2``), ``"chatml"``, or a tokenizer with ``apply_chat_template``;
    without it, chat messages go to the chat endpoint with ``continue_final_message``.
    ``vocab``: the model's :class:`leapgram.Vocabulary`, when known: it enables repair calls
    restricted to the tokens the grammar allows and exact token counts. ``server``: ``vllm``
    (enables ``continuous_usage_stats``, ``allowed_token_ids``, ``echo`` scoring and
    ``continue_final_message``), ``openai`` or ``generic`` (``logit_bias`` for at most 300
    tokens), or ``auto`` (asks ``GET /models`` once: vLLM says ``owned_by: vllm``).
    ``call_timeout``: seconds one call may take (:class:`RemoteTimeoutError` after it).
    """

    def __init__(self, base_url: str | None = None, *, model: str, client=None, api_key: str | None = None,
                 headers: dict[str, str] | None = None, chat_template=None, vocab=None, server: str = "auto",
                 top_logprobs: int = 10, call_timeout: float = 60.0) -> None:
        if client is not None:
            base_url = base_url or str(getattr(client, "base_url", "") or "")
            api_key = api_key or getattr(client, "api_key", None)
        if not base_url:
            raise ValueError("Endpoint needs base_url='http://host:port/v1' or an OpenAI-compatible client=")
        if server not in SERVERS:
            raise ValueError(f"server must be one of {', '.join(SERVERS)}, not {server!r}")
        if isinstance(top_logprobs, bool) or not isinstance(top_logprobs, int) or not 0 <= top_logprobs <= 20:
            raise ValueError(f"top_logprobs must be an int from 0 to 20, not {top_logprobs!r}")
        self.url = BaseURL.parse(base_url)
        self.model = str(model)
        self.headers = dict(headers or {})
        if api_key and api_key != "EMPTY":
            self.headers.setdefault("Authorization", f"Bearer {api_key}")
        self.render = template_renderer(chat_template)
        self.vocab = vocab
        self.server = server
        self.top_logprobs = top_logprobs
        self.call_timeout = float(call_timeout)
        self._bytes = byte_compiler()
        self._tokens = GrammarCompiler(vocab) if vocab is not None else None

    # ----- what the server is ----------------------------------------------------------

    async def server_kind(self) -> str:
        """``vllm``, ``openai`` or ``generic``; ``auto`` asks ``GET /models`` once."""
        if self.server == "auto":
            self.server = await self._probe()
        return self.server

    async def _probe(self) -> str:
        try:
            async with asyncio.timeout(min(self.call_timeout, 10.0)):
                response = await post(self.url, "/models", None, self.headers, method="GET")
                try:
                    body = await response.read()
                finally:
                    response.close()
        except (RemoteError, TimeoutError):
            return "generic"
        if response.status != 200:
            return "generic"
        try:
            owners = {m.get("owned_by") for m in json.loads(body).get("data", [])}
        except (ValueError, AttributeError, TypeError):
            return "generic"
        return "vllm" if "vllm" in owners else "openai" if "openai" in owners or "system" in owners else "generic"

    def compiled_bytes(self, grammar: Grammar):
        return self._bytes.compile(grammar)

    def compiled_tokens(self, grammar: Grammar):
        return None if self._tokens is None else self._tokens.compile(grammar)

    # ----- requests ----------------------------------------------------------------------

    async def open(self, path: str, body: dict):
        """POST ``body``; an open response with status 200, else :class:`RemoteHTTPError`."""
        response = await post(self.url, path, body, self.headers)
        if response.status != 200:
            try:
                text = (await response.read())[:2000].decode("utf-8", "replace")
            except RemoteError:
                text = ""
            finally:
                response.close()
            raise RemoteHTTPError(f"{self.url}{path} answered HTTP {response.status}: {_message(text)}",
                                  status=response.status, body=text)
        return response

    async def ask(self, path: str, body: dict) -> dict:
        """POST ``body`` and return the JSON answer."""
        response = await self.open(path, body)
        try:
            data = await response.read()
        finally:
            response.close()
        try:
            return json.loads(data)
        except ValueError:
            raise RemoteProtocolError(f"{self.url}{path}: the answer is not JSON: {data[:80]!r}") from None

    # ----- generation ----------------------------------------------------------------------

    async def agenerate(self, grammar: Grammar, *, messages: Sequence[dict] | None = None, prompt: str | None = None,
                        **options) -> RemoteResult:
        """Text the grammar accepts, from the model, with its cost. See :func:`leapgram.remote.generate`
        for the options."""
        from .guide import Options, Run

        return await Run(self, grammar, messages, prompt, Options(**options)).run()

    def generate(self, grammar: Grammar, *, messages: Sequence[dict] | None = None, prompt: str | None = None,
                 **options) -> RemoteResult:
        """:meth:`agenerate` from synchronous code (in a thread of its own if an event loop runs here)."""
        return run_sync(self.agenerate(grammar, messages=messages, prompt=prompt, **options))


def run_sync(coroutine):
    """Run ``coroutine`` to the end from synchronous code."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coroutine)
        except BaseException as exc:  # noqa: BLE001 (handed to the caller's thread, raised there)
            box["error"] = exc

    thread = threading.Thread(target=target, name="leapgram-remote")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _message(text: str) -> str:
    try:
        obj = json.loads(text)
    except ValueError:
        return text[:300] or "(empty body)"
    if isinstance(obj, dict):
        error = obj.get("error", obj.get("message", obj))
        if isinstance(error, dict):
            error = error.get("message", error)
        return str(error)[:300]
    return text[:300]


def template_renderer(chat_template) -> Callable[[list[dict]], str] | None:
    """A function that renders chat messages into the prompt the assistant's answer follows."""
    if chat_template is None:
        return None
    if callable(chat_template) and not hasattr(chat_template, "apply_chat_template"):
        return chat_template
    if hasattr(chat_template, "apply_chat_template"):
        return lambda messages: chat_template.apply_chat_template(list(messages), tokenize=False,
                                                                  add_generation_prompt=True)
    if chat_template == "chatml":
        return _chatml
    if isinstance(chat_template, str):
        try:
            import jinja2
        except ImportError:
            raise ValueError("a Jinja chat template needs the jinja2 package; pass a callable instead") from None
        template = jinja2.Environment().from_string(chat_template)
        return lambda messages: template.render(messages=list(messages), add_generation_prompt=True,
                                                bos_token="", eos_token="")
    raise ValueError(f"chat_template must be a callable, a Jinja string, 'chatml' or a tokenizer, "
                     f"not {type(chat_template).__name__}")


def _chatml(messages: list[dict]) -> str:
    turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return turns + "<|im_start|>assistant\n"
