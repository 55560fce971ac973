"""The OpenAI-compatible wire format: request bodies for completions and chat, and the pieces of a
streamed answer (text, tokens with their log-probabilities, finish reason, usage)."""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass, field

from .errors import RemoteHTTPError, RemoteProtocolError


@dataclass
class Token:
    """One generated token: its bytes (``None`` when the server's spelling cannot be mapped to
    bytes), log-probability and the top alternatives ``[(bytes or None, logprob), ...]``."""

    data: bytes | None
    logprob: float | None
    top: list[tuple[bytes | None, float]] = field(default_factory=list)


@dataclass
class Piece:
    """One streamed chunk (or a whole non-streamed answer) of choice 0."""

    text: str
    tokens: list[Token]
    finish: str | None
    usage: dict | None


def token_bytes(spelling: str | None, raw: list[int] | None = None, vocab=None) -> bytes | None:
    """The bytes of a token as servers spell it: a ``bytes`` list (chat), ``token_id:N`` (vLLM's
    ``return_tokens_as_token_ids``; needs ``vocab``), ``bytes:\\xNN`` (vLLM, a partial UTF-8
    character), or plain text. A special token (EOS) has no bytes: it ends the text."""
    if raw is not None:
        return bytes(raw)
    if spelling is None:
        return None
    if spelling.startswith("token_id:"):
        if vocab is None:
            return None
        try:
            token = int(spelling[9:])
            return b"" if vocab.is_special(token) else vocab.token_bytes(token)  # EOS: the end of text
        except ValueError:
            return None
    if spelling.startswith("bytes:"):
        try:
            return codecs.escape_decode(spelling[6:].encode("latin-1"))[0]
        except (ValueError, UnicodeEncodeError):
            return None
    return spelling.encode("utf-8", "surrogatepass")


def parse_event(data: bytes, where: str, *, chat: bool, vocab=None) -> Piece | None:
    """A streamed event as a :class:`Piece` (``None`` for an event without choices, such as the
    final usage-only chunk, which then travels as a piece with empty text)."""
    try:
        obj = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise RemoteProtocolError(f"{where}: the stream sent something that is not JSON: {data[:80]!r}") from None
    return parse_answer(obj, where, chat=chat, vocab=vocab, streamed=True)


def parse_answer(obj, where: str, *, chat: bool, vocab=None, streamed: bool = False) -> Piece:
    """Choice 0 of an answer or of a streamed chunk."""
    if not isinstance(obj, dict):
        raise RemoteProtocolError(f"{where}: expected a JSON object, got {type(obj).__name__}")
    if "error" in obj and not obj.get("choices"):
        raise RemoteHTTPError(f"{where}: the server reported an error: {_error_text(obj['error'])}",
                              status=None, body=json.dumps(obj)[:500])
    choices = obj.get("choices")
    usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else None
    if not isinstance(choices, list):
        raise RemoteProtocolError(f"{where}: the answer has no 'choices' list: {json.dumps(obj)[:120]}")
    if not choices:
        return Piece("", [], None, usage)
    choice = choices[0]
    if not isinstance(choice, dict):
        raise RemoteProtocolError(f"{where}: a choice is not an object: {choice!r:.80}")
    if chat:
        holder = choice.get("delta") if streamed else choice.get("message")
        text = (holder or {}).get("content") or ""
        tokens = _chat_tokens(choice.get("logprobs"))
    else:
        text = choice.get("text") or ""
        tokens = _completion_tokens(choice.get("logprobs"), vocab)
    if not isinstance(text, str):
        raise RemoteProtocolError(f"{where}: the text of a choice is not a string: {text!r:.80}")
    return Piece(text, tokens, choice.get("finish_reason"), usage)


def _error_text(error) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


def _chat_tokens(logprobs) -> list[Token]:
    if not isinstance(logprobs, dict) or not isinstance(logprobs.get("content"), list):
        return []
    tokens = []
    for entry in logprobs["content"]:
        top = [(token_bytes(alt.get("token"), alt.get("bytes")), float(alt.get("logprob", -1e9)))
               for alt in entry.get("top_logprobs") or []]
        tokens.append(Token(token_bytes(entry.get("token"), entry.get("bytes")), entry.get("logprob"), top))
    return tokens


def _completion_tokens(logprobs, vocab) -> list[Token]:
    if not isinstance(logprobs, dict) or not isinstance(logprobs.get("tokens"), list):
        return []
    values = logprobs.get("token_logprobs") or [None] * len(logprobs["tokens"])
    tops = logprobs.get("top_logprobs") or [None] * len(logprobs["tokens"])
    tokens = []
    for spelling, value, top in zip(logprobs["tokens"], values, tops):
        alternatives = [(token_bytes(s, vocab=vocab), float(lp)) for s, lp in (top or {}).items()]
        tokens.append(Token(token_bytes(spelling, vocab=vocab), value, alternatives))
    return tokens


def completion_body(model: str, prompt, *, max_tokens: int, temperature: float, top_logprobs: int,
                    stream: bool, vllm: bool, seed: int | None, extra: dict | None) -> dict:
    body = {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": temperature,
            "stream": stream}
    if top_logprobs:
        body["logprobs"] = top_logprobs
    _common(body, stream=stream, vllm=vllm, seed=seed, extra=extra)
    return body


def chat_body(model: str, messages: list[dict], *, max_tokens: int, temperature: float, top_logprobs: int,
              stream: bool, vllm: bool, seed: int | None, extra: dict | None, prefill: str | None) -> dict:
    if prefill:
        messages = [*messages, {"role": "assistant", "content": prefill}]
    body = {"model": model, "messages": messages, "max_tokens": max_tokens, "temperature": temperature,
            "stream": stream}
    if top_logprobs:
        body["logprobs"] = True
        body["top_logprobs"] = top_logprobs
    if prefill:
        body["continue_final_message"] = True
        body["add_generation_prompt"] = False
    _common(body, stream=stream, vllm=vllm, seed=seed, extra=extra)
    return body


def _common(body: dict, *, stream: bool, vllm: bool, seed: int | None, extra: dict | None) -> None:
    if stream:
        body["stream_options"] = {"include_usage": True}
        if vllm:
            body["stream_options"]["continuous_usage_stats"] = True
    if seed is not None:
        body["seed"] = seed
    if extra:
        body.update(extra)


def native_constraint(grammar, option: str) -> dict:
    """The body fields that hand ``grammar`` to the server itself.

    ``structured_outputs`` (vLLM >= 0.10), ``guided`` (older vLLM: ``guided_json`` and friends),
    ``response_format`` (OpenAI: JSON Schema only), ``llama.cpp`` (``json_schema`` or GBNF
    ``grammar``). Raises :class:`ValueError` when the option cannot carry this kind of grammar.
    """
    kind, source = grammar.kind, grammar.source
    schema = json.loads(source) if kind == "json_schema" else None
    if option == "structured_outputs":
        key = {"json_schema": "json", "regex": "regex", "lark": "grammar", "gbnf": "grammar"}.get(kind)
        if key:
            return {"structured_outputs": {key: schema if schema is not None else source}}
    elif option == "guided":
        key = {"json_schema": "guided_json", "regex": "guided_regex", "lark": "guided_grammar",
               "gbnf": "guided_grammar"}.get(kind)
        if key:
            return {key: schema if schema is not None else source}
    elif option == "response_format":
        if schema is not None:
            return {"response_format": {"type": "json_schema",
                                        "json_schema": {"name": "output", "schema": schema, "strict": True}}}
    elif option == "llama.cpp":
        if schema is not None:
            return {"json_schema": schema}
        if kind == "gbnf":
            return {"grammar": source}
    else:
        raise ValueError(f"native must be one of structured_outputs, guided, response_format, llama.cpp; "
                         f"not {option!r}")
    raise ValueError(f"native={option!r} cannot carry a {kind} grammar")
