"""Grammar-valid output from models behind an OpenAI-compatible API (vLLM, OpenAI, llama.cpp...).

The model writes freely while a matcher follows its stream; at the first refused byte the break
is repaired cheapest first and the model continues, and when a budget runs out the grammar
finishes the text, so every result parses. Standard library only. Design: docs/design/remote.md.

    from leapgram import Grammar
    from leapgram.remote import Endpoint

    endpoint = Endpoint("http://127.0.0.1:8000/v1", model="smollm2", chat_template="chatml")
    result = endpoint.generate(Grammar.from_regex(r"[0-9]{4}"), messages=[{"role": "user", "content": "Year?"}])
    result.text, result.valid, result.completed_by_grammar, result.cost
"""

from __future__ import annotations

from .endpoint import Endpoint, run_sync
from .errors import RemoteError, RemoteHTTPError, RemoteProtocolError, RemoteTimeoutError
from .result import Cost, GrammarCompletion, RemoteResult

__all__ = ["Cost", "Endpoint", "GrammarCompletion", "RemoteError", "RemoteHTTPError", "RemoteProtocolError",
           "RemoteResult", "RemoteTimeoutError", "agenerate", "generate"]


async def agenerate(grammar, *, base_url: str | None = None, model: str, client=None, messages=None,
                    prompt: str | None = None, chat_template=None, vocab=None, server: str = "auto",
                    api_key: str | None = None, **options) -> RemoteResult:
    """Text that ``grammar`` accepts, from ``model`` at ``base_url`` (or an OpenAI-compatible
    ``client``), with its cost. Give chat ``messages`` or a raw completions ``prompt``.

    Options (all keywords): ``max_calls`` (8), ``max_tokens`` (1024 completion tokens in all),
    ``deadline`` (60 s): when one runs out, the grammar finishes the text with its shortest
    completion and ``result.completed_by_grammar`` says where and why. ``max_tokens_per_call``,
    ``temperature`` (0), ``seed``; ``native``: hand the grammar to the server too
    (``structured_outputs``, ``guided``, ``response_format`` or ``llama.cpp``), the output is still
    checked and repaired here; ``mode``: ``auto``, ``completions`` or ``chat``; ``on_error``:
    ``raise`` (a :class:`RemoteError` whose ``partial`` holds the result so far) or ``complete``
    (a result with ``error`` set, finished by the grammar); ``max_retries`` (2) for broken streams;
    ``extra_body`` merged into every request. For many requests, make one :class:`Endpoint`.
    """
    endpoint = Endpoint(base_url, model=model, client=client, chat_template=chat_template, vocab=vocab,
                        server=server, api_key=api_key)
    return await endpoint.agenerate(grammar, messages=messages, prompt=prompt, **options)


def generate(grammar, **kwargs) -> RemoteResult:
    """:func:`agenerate` from synchronous code."""
    return run_sync(agenerate(grammar, **kwargs))
