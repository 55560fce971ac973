"""The loop: stream, cut at the first refused byte, repair cheapest first, continue, and finish
with the grammar when a budget runs out. Design: ``docs/design/remote.md``."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from ..bitmask import allowed_tokens
from ..matcher import Matcher
from .bytes import ByteMatcher
from .errors import RemoteError, RemoteHTTPError, RemoteProtocolError, RemoteTimeoutError
from .protocol import Piece, Token, chat_body, completion_body, native_constraint, parse_answer, parse_event
from .result import Cost, GrammarCompletion, RemoteResult

RESYNC_BYTES = 6  # the model's text must fit this many bytes after a repair to be kept
MAX_RESYNC_SKIP = 16  # bytes of the model's text a resync may skip (the rest of a wrong token or key)
MAX_STREAM_REPAIRS = 16  # repairs inside one stream before it is closed anyway


@dataclass
class Options:
    """Budgets and sampling for one request (see :func:`leapgram.remote.generate`)."""

    max_calls: int = 8
    max_tokens: int = 1024
    deadline: float = 60.0
    max_tokens_per_call: int | None = None
    temperature: float = 0.0
    seed: int | None = None
    native: str | None = None
    mode: str = "auto"
    on_error: str = "raise"
    max_retries: int = 2
    score_candidates: int = 16
    extra_body: dict | None = None

    def __post_init__(self) -> None:
        for name in ("max_calls", "max_tokens", "max_retries", "score_candidates"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an int >= 0, not {value!r}")
        if not self.deadline > 0:
            raise ValueError(f"deadline must be a number of seconds > 0, not {self.deadline!r}")
        if self.mode not in ("auto", "completions", "chat"):
            raise ValueError(f"mode must be 'auto', 'completions' or 'chat', not {self.mode!r}")
        if self.on_error not in ("raise", "complete"):
            raise ValueError(f"on_error must be 'raise' or 'complete', not {self.on_error!r}")
        if self.native is False:
            self.native = None


@dataclass
class Stream:
    """What one streamed call brought: its text (as bytes), tokens, finish and usage."""

    received: bytearray = field(default_factory=bytearray)
    tokens: list[Token] = field(default_factory=list)
    chunks: int = 0
    usage: dict | None = None
    finish: str | None = None
    done: bool = False
    fed: int = 0  # bytes of ``received`` consumed (or skipped over by a resync)
    cut: int | None = None  # where reading stopped, in ``received``: tokens past it are discarded
    waiting: bool = False  # after an in-stream repair: looking for where the model's text fits again
    max_skip: int = 0  # how much of the model's text that resync may skip
    repairs: int = 0
    outcome: str | None = None  # break (refused, not accepting), end (refused, accepting), grammar_end,
    # repaired (mended in the stream, but the model's text did not fit again)


class Run:
    """One guided request; :meth:`run` returns its :class:`RemoteResult`."""

    def __init__(self, endpoint, grammar, messages, prompt, options: Options) -> None:
        if (messages is None) == (prompt is None):
            raise ValueError("give either messages=[{'role': ..., 'content': ...}, ...] or prompt='...'")
        self.ep = endpoint
        self.grammar = grammar
        self.opt = options
        self.messages = [dict(m) for m in messages] if messages is not None else None
        self.prompt = prompt
        self.bytes = ByteMatcher(endpoint.compiled_bytes(grammar))
        self.cost = Cost()
        self.log: list[str] = []
        self.finish: str | None = None
        self.completion: GrammarCompletion | None = None
        self.error: str | None = None
        self.mechanism = self.continuation = ""
        self.kind = "generic"
        self.retries_in_row = 0

    # ----- the loop ------------------------------------------------------------------------

    async def run(self) -> RemoteResult:
        started = time.monotonic()
        loop = asyncio.get_running_loop()
        try:
            try:
                async with asyncio.timeout_at(loop.time() + self.opt.deadline):
                    await self._loop()
            except TimeoutError:
                self._note(f"deadline of {self.opt.deadline:g} s reached")
                self._finish_by_grammar("deadline")
        except RemoteError as exc:
            self.error = str(exc)
            self._note(f"error: {exc}")
            self._finish_by_grammar("error")
            self.cost.seconds = time.monotonic() - started
            if self.opt.on_error == "raise":
                exc.partial = self._result()
                raise
        self.cost.seconds = time.monotonic() - started
        return self._result()

    async def _loop(self) -> None:
        if not self.bytes.is_accepting() and not self.bytes.can_continue():
            self.error = "the grammar accepts no text at all (an empty language): no call was made"
            self.finish = "empty_grammar"
            return
        self.kind = await self.ep.server_kind()
        self._choose_mechanism()
        native = native_constraint(self.grammar, self.opt.native) if self.opt.native else None
        self.continuation = self.mechanism
        if native:
            self.mechanism = f"native:{self.opt.native}+{self.mechanism}"
        while self.finish is None:
            if not native:  # the server's constraint starts where the completion starts
                self._append_forced()
            if self.bytes.is_accepting() and not self.bytes.can_continue():
                self.finish = "grammar_end"
                return
            reason = self._exhausted()
            if reason:
                self._finish_by_grammar(reason)
                return
            try:
                stream = await self._stream(native)
            except RemoteHTTPError as exc:
                if native is None:
                    raise
                self._note(f"the server refused the native constraint, going on without it: {exc}")
                self.mechanism = f"{self.continuation} (native:{self.opt.native} refused)"
                native = None
                continue
            native = None
            await self._after(stream)

    def _choose_mechanism(self) -> None:
        mode, ep = self.opt.mode, self.ep
        if self.prompt is not None and mode != "chat":
            self.mechanism, self.base = "completions-raw", self.prompt
            return
        if self.messages is None:
            self.messages = [{"role": "user", "content": self.prompt}]
        if mode != "chat" and ep.render is not None:
            self.mechanism, self.base = "completions", ep.render(self.messages)
        elif mode == "completions":
            raise ValueError("mode='completions' with chat messages needs the Endpoint's chat_template")
        elif mode == "chat" or self.kind == "vllm":
            self.mechanism, self.base = "chat-continue", None
        else:
            raise ValueError("this server cannot be asked to continue a prefix: give the Endpoint a chat_template "
                             "(the completions endpoint is then used), or server='vllm' / mode='chat' if its chat "
                             "endpoint accepts continue_final_message")

    def _exhausted(self) -> str | None:
        if self.cost.calls >= self.opt.max_calls:
            return "max_calls"
        if self.cost.completion_tokens >= self.opt.max_tokens:
            return "max_tokens"
        return None

    def _append_forced(self) -> None:
        forced = _utf8_whole(bytes(self.bytes.text), self.bytes.forced())
        if forced:
            self.bytes.feed(forced)
            self.cost.forced_bytes += len(forced)

    async def _after(self, stream: Stream) -> None:
        if stream.outcome in ("end", "grammar_end"):
            self.finish = "stop" if stream.outcome == "end" else "grammar_end"
            return
        if stream.outcome == "repaired":
            return
        if stream.outcome is None and stream.finish is None and not stream.done:
            self.retries_in_row += 1
            self.cost.retries += 1
            self._note(f"stream broke off after {len(stream.received)} bytes")
            if self.retries_in_row > self.opt.max_retries:
                raise RemoteProtocolError(f"{self.ep.url}: the stream broke off {self.retries_in_row} times in a row")
            return
        self.retries_in_row = 0
        if stream.outcome is None:
            if stream.finish == "length" or (stream.finish is None and stream.done):
                return
            if self.bytes.is_accepting():
                self.finish = "stop"
                return
            stream.cut = stream.fed  # the model ended (EOS) where the grammar cannot
        await self._repair(stream)

    # ----- one streamed call ------------------------------------------------------------

    def _body(self, *, stream: bool, max_tokens: int, top_logprobs: int, extra: dict | None = None) -> tuple:
        text = self.bytes.text.decode()
        fields = dict(self.opt.extra_body or {})
        fields.update(extra or {})
        vllm = self.kind == "vllm"
        common = {"max_tokens": max_tokens, "temperature": self.opt.temperature, "top_logprobs": top_logprobs,
                  "stream": stream, "vllm": vllm, "seed": self.opt.seed, "extra": fields}
        if self.continuation.startswith("completions"):
            if vllm and self.ep.vocab is not None and top_logprobs:
                fields["return_tokens_as_token_ids"] = True
            return "/completions", completion_body(self.ep.model, self.base + text, **common), False
        return "/chat/completions", chat_body(self.ep.model, self.messages, prefill=text, **common), True

    async def _stream(self, native: dict | None) -> Stream:
        budget = self.opt.max_tokens - self.cost.completion_tokens
        if self.opt.max_tokens_per_call:
            budget = min(budget, self.opt.max_tokens_per_call)
        path, body, chat = self._body(stream=True, max_tokens=budget, top_logprobs=self.ep.top_logprobs,
                                      extra=native)
        stream = Stream()
        self.cost.calls += 1
        response = None
        try:
            async with asyncio.timeout(self.ep.call_timeout):
                response = await self.ep.open(path, body)
                async for data in response.events():
                    if data.strip() == b"[DONE]":
                        stream.done = True
                        break
                    piece = parse_event(data, f"{self.ep.url}{path}", chat=chat, vocab=self.ep.vocab)
                    if self._take(piece, stream):
                        break
        except TimeoutError:
            raise RemoteTimeoutError(f"{self.ep.url}{path}: no complete answer within call_timeout="
                                     f"{self.ep.call_timeout:g} s") from None
        finally:
            if response is not None:
                response.close()
            self._bill(stream, self._prompt_text(body))
        return stream

    def _take(self, piece: Piece, stream: Stream) -> bool:
        """Feed a piece; ``True`` to stop reading."""
        stream.chunks += 1
        stream.tokens += piece.tokens
        if piece.usage:
            stream.usage = piece.usage
        stream.received += piece.text.encode("utf-8", "surrogatepass")
        if piece.finish:
            stream.finish = piece.finish
        return self._advance(stream, final=piece.finish is not None)

    def _advance(self, stream: Stream, *, final: bool) -> bool:
        """Feed what the stream brought; at a refused byte, mend it without a call where that is
        free (forced bytes, streamed logprobs) and go on with the model's text where it fits the
        grammar again (a resync); else stop reading. ``True`` to stop."""
        while True:
            if stream.waiting:
                tail = bytes(stream.received[stream.fed:])
                if len(tail) < stream.max_skip + RESYNC_BYTES and not final:
                    return False
                stream.waiting = False
                skip = self._resync(tail, stream.max_skip)
                if skip is None:
                    return self._stop(stream, "repaired")
                stream.fed += skip
                self.cost.resyncs += 1
                self._note(f"resync: the model's text goes on after skipping {tail[:skip]!r}")
            data = bytes(stream.received[stream.fed:])
            taken = self.bytes.feed(data)
            stream.fed += taken
            if taken == len(data):
                if data and not final and self.bytes.is_accepting() and not self.bytes.can_continue():
                    return self._stop(stream, "grammar_end")
                return False
            if self.bytes.is_accepting():
                return self._stop(stream, "end")
            self._note(f"cut at byte {len(self.bytes.text)} after {bytes(self.bytes.text[-30:])!r}")
            stream.repairs += 1
            resume = self._free_repair(stream) if stream.repairs <= MAX_STREAM_REPAIRS else None
            if self.finish is not None:
                return self._stop(stream, "end")
            if resume is None:
                return self._stop(stream, "break")
            stream.fed, stream.waiting = resume, True

    def _stop(self, stream: Stream, outcome: str) -> bool:
        stream.outcome, stream.cut = outcome, stream.fed
        return True

    def _resync(self, tail: bytes, max_skip: int) -> int | None:
        """The fewest leading bytes (at most ``max_skip``) of the model's ``tail`` to skip so that
        what follows fits the grammar for ``RESYNC_BYTES`` bytes (or to its end)."""
        for skip in range(min(max_skip, len(tail) - 1) + 1):
            probe = tail[skip: skip + RESYNC_BYTES]
            if self.bytes.accepts(probe):
                return skip
        return None

    def _bill(self, stream: Stream, prompt_text: str) -> None:
        usage = stream.usage or {}
        completion = usage.get("completion_tokens")
        if completion is None:
            completion = len(stream.tokens) or stream.chunks
            self.cost.estimated |= not stream.tokens
        prompt = usage.get("prompt_tokens")
        if prompt is None:
            prompt = self._count_tokens(prompt_text)
        self.cost.completion_tokens += int(completion)
        self.cost.prompt_tokens += int(prompt)
        if stream.cut is not None:
            self.cost.discarded_tokens += self._discarded(stream, int(completion))

    def _discarded(self, stream: Stream, completion: int) -> int:
        spans = _spans(stream)
        if spans is not None:
            return sum(1 for start, end, _ in spans if end > stream.cut)
        return max(1, round(completion * (len(stream.received) - stream.cut) / max(len(stream.received), 1)))

    def _count_tokens(self, text: str) -> int:
        vocab = self.ep.vocab
        if vocab is not None and vocab.has_encoder:
            return len(vocab.encode(text.encode()))
        self.cost.estimated = True
        return -(-len(text.encode()) // 4)

    def _prompt_text(self, body: dict) -> str:
        if "prompt" in body:
            prompts = body["prompt"]
            return "".join(prompts) if isinstance(prompts, list) else prompts
        return "".join(str(m.get("content", "")) for m in body["messages"])

    # ----- repairs, cheapest first ------------------------------------------------------

    async def _repair(self, stream: Stream) -> None:
        """Mend the break at the end of the text after the stream has closed, cheapest first."""
        self.bytes.truncate(_utf8_boundary(self.bytes.text))
        if self._free_repair(stream) is not None:
            return
        if await self._repair_restricted():
            return
        if await self._repair_scored():
            return
        self._repair_by_grammar()

    def _free_repair(self, stream: Stream) -> int | None:
        """Forced bytes, else the best streamed alternative the grammar allows for the token at the
        break; returns where the model's own text resumes in ``stream.received``, or ``None``."""
        self.bytes.truncate(_utf8_boundary(self.bytes.text))
        forced = _utf8_whole(bytes(self.bytes.text), self.bytes.forced())
        if forced:
            self.bytes.feed(forced)
            self.cost.forced_bytes += len(forced)
            self._repaired("forced", repr(forced[:40]))
            stream.max_skip = MAX_RESYNC_SKIP  # the forced text stands for what the model misspelled
            return stream.fed
        return self._repair_from_logprobs(stream)

    def _repair_from_logprobs(self, stream: Stream) -> int | None:
        spans = _spans(stream)
        if not spans:
            return None
        cut = stream.fed
        found = next(((a, b, t) for a, b, t in spans if a <= cut < b or (a == cut and t.data == b"")), None)
        if found is None or not found[2].top:
            return None
        start, end, token = found
        done = cut - start  # the token's bytes already in the text
        if done > len(self.bytes.text) or bytes(self.bytes.text[len(self.bytes.text) - done:]) != \
                bytes(stream.received[start:cut]):
            return None
        base = len(self.bytes.text) - done
        saved = bytes(self.bytes.text[base:])
        self.bytes.truncate(base)
        # whitespace alone mends nothing the model will not repeat next: other alternatives first
        for data, logprob in sorted(token.top, key=lambda alt: (bool(alt[0]) and alt[0].isspace(), -alt[1])):
            if data is None or data == token.data:
                continue
            if data == b"":
                if self.bytes.is_accepting():
                    self._repaired("logprobs", f"end of text (logprob {logprob:.2f})")
                    self.finish = "stop"
                    return end
                continue
            if _utf8_whole(bytes(self.bytes.text), data) == data and self.bytes.accepts(data):
                self.bytes.feed(data)
                self._repaired("logprobs", f"{data!r} instead of {token.data!r} (logprob {logprob:.2f})")
                stream.max_skip = 0  # what the model wrote after its own token must fit as it is
                forced = _utf8_whole(bytes(self.bytes.text), self.bytes.forced())
                if forced:  # the forced rest stands for the rest of the model's word: skip it
                    self.bytes.feed(forced)
                    self.cost.forced_bytes += len(forced)
                    self._repaired("forced", repr(forced[:40]))
                    stream.max_skip = MAX_RESYNC_SKIP
                return end
        self.bytes.feed(saved)
        return None

    async def _repair_restricted(self) -> bool:
        """One token from the model among the tokens the grammar allows (``allowed_token_ids`` on
        vLLM, ``logit_bias`` elsewhere for at most 300 tokens)."""
        compiled = self.ep.compiled_tokens(self.grammar)
        if compiled is None or self._exhausted():
            return False
        vocab = self.ep.vocab
        matcher = Matcher(compiled)
        if not matcher.consume_tokens(vocab.encode(bytes(self.bytes.text))):
            return False
        allowed = [int(t) for t in allowed_tokens(matcher.compute_mask(), vocab.size)]
        if self.kind == "vllm":
            extra = {"allowed_token_ids": allowed}
        elif len(allowed) <= 300:
            extra = {"logit_bias": {str(t): 100 for t in allowed}}
        else:
            return False
        piece = await self._one_call(extra)
        return self._take_repair(piece, "restricted")

    async def _repair_scored(self) -> bool:
        """The model's own log-probability of each allowed next piece (one ``echo`` call on the
        completions endpoint of vLLM), the best one taken."""
        if self.kind != "vllm" or not self.continuation.startswith("completions") or self._exhausted():
            return False
        candidates = self._candidates(self.opt.score_candidates)
        if len(candidates) <= 1:
            if candidates:
                self.bytes.feed(candidates[0])
                self._repaired("forced", f"{candidates[0]!r} (the only piece)")
            return bool(candidates)
        prefix = self.base + self.bytes.text.decode()
        body = {"model": self.ep.model, "prompt": [prefix + c.decode() for c in candidates], "max_tokens": 1,
                "echo": True, "logprobs": 1, "temperature": 0.0}
        answer = await self._ask("/completions", body)
        scores = _echo_scores(answer, len(prefix), candidates)
        if not scores:
            return False
        best = max(range(len(candidates)), key=lambda i: scores.get(i, float("-inf")))
        self.bytes.feed(candidates[best])
        self._repaired("scored", f"{candidates[best]!r} among {len(candidates)}")
        return True

    def _repair_by_grammar(self) -> None:
        completion = self.bytes.shortest_completion() or b""
        piece = _first_char(completion)
        if piece:
            self.bytes.feed(piece)
        self._repaired("grammar", f"{piece!r} (first piece of the shortest completion)")

    def _candidates(self, limit: int) -> list[bytes]:
        """Allowed next pieces: each allowed byte and the bytes it forces, whole characters only."""
        base = len(self.bytes.text)
        pieces = []
        for byte in self.bytes.allowed_bytes():
            self.bytes.feed(bytes([byte]))
            piece = bytes([byte]) + self.bytes.forced()
            self.bytes.truncate(base)
            piece = _utf8_whole(bytes(self.bytes.text), piece)
            if piece and piece not in pieces:
                pieces.append(piece)
        pieces.sort(key=lambda p: (not p[:1].isalnum(), p))
        return pieces[:limit]

    async def _one_call(self, extra: dict) -> Piece:
        path, body, chat = self._body(stream=False, max_tokens=1, top_logprobs=0, extra=extra)
        answer = await self._ask(path, body)
        return parse_answer(answer, f"{self.ep.url}{path}", chat=chat, vocab=self.ep.vocab)

    async def _ask(self, path: str, body: dict) -> dict:
        self.cost.calls += 1
        try:
            async with asyncio.timeout(self.ep.call_timeout):
                answer = await self.ep.ask(path, body)
        except TimeoutError:
            raise RemoteTimeoutError(f"{self.ep.url}{path}: no answer within call_timeout="
                                     f"{self.ep.call_timeout:g} s") from None
        usage = answer.get("usage") if isinstance(answer, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        self.cost.prompt_tokens += int(usage.get("prompt_tokens") or self._count_tokens(self._prompt_text(body)))
        self.cost.completion_tokens += int(usage.get("completion_tokens") or 1)
        return answer

    def _take_repair(self, piece: Piece, kind: str) -> bool:
        data = piece.text.encode()
        if not data:
            if piece.finish == "stop" and self.bytes.is_accepting():
                self._repaired(kind, "end of text")
                self.finish = "stop"
                return True
            return False
        taken = self.bytes.feed(data)
        if taken == len(data) and _utf8_boundary(self.bytes.text) == len(self.bytes.text):
            self._repaired(kind, repr(data))
            return True
        self.bytes.truncate(len(self.bytes.text) - taken)
        return False

    def _repaired(self, kind: str, what: str) -> None:
        self.cost.repairs[kind] += 1
        self._note(f"repair ({kind}): {what}")

    # ----- finishing ----------------------------------------------------------------------

    def _finish_by_grammar(self, reason: str) -> None:
        self.bytes.truncate(_utf8_boundary(self.bytes.text))
        at = len(self.bytes.text)
        completion = b"" if self.bytes.is_accepting() else self.bytes.shortest_completion()
        self.finish = "completed_by_grammar"
        if completion is None:
            self.error = self.error or f"no completion found within the search budget ({reason})"
            return
        self.bytes.feed(completion)
        offset = len(self.bytes.text[:at].decode())
        self.completion = GrammarCompletion(offset, at, completion.decode(), reason)
        self._note(f"completed by the grammar at byte {at} ({reason}): {completion[:60]!r}")

    def _result(self) -> RemoteResult:
        return RemoteResult(text=self.bytes.text.decode("utf-8", "replace"), valid=self.bytes.is_accepting(),
                            completed_by_grammar=self.completion, cost=self.cost, mechanism=self.mechanism,
                            finish=self.finish or "completed_by_grammar", error=self.error, log=self.log)

    def _note(self, line: str) -> None:
        self.log.append(line)


def _spans(stream: Stream) -> list[tuple[int, int, Token]] | None:
    """Byte spans of the stream's tokens in ``stream.received``, or ``None`` when their bytes are
    unknown or do not spell the streamed text."""
    spans, position = [], 0
    joined = bytearray()
    for token in stream.tokens:
        if token.data is None:
            return None
        spans.append((position, position + len(token.data), token))
        position += len(token.data)
        joined += token.data
    common = min(len(joined), len(stream.received))
    if joined[:common] != stream.received[:common]:
        return None
    return spans


def _utf8_boundary(data: bytearray | bytes) -> int:
    """The length of ``data`` without a trailing incomplete UTF-8 character."""
    end = len(data)
    for back in range(1, min(4, end) + 1):
        byte = data[end - back]
        if byte < 0x80:
            return end
        if byte >= 0xC0:
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return end if back >= need else end - back
    return end


def _utf8_whole(before: bytes, piece: bytes) -> bytes:
    """The longest prefix of ``piece`` after which ``before + piece`` ends on a whole character."""
    data = before + piece
    return piece[: _utf8_boundary(data) - len(before)] if _utf8_boundary(data) > len(before) else b""


def _first_char(data: bytes) -> bytes:
    if not data:
        return b""
    lead = data[0]
    size = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    return data[:size]


def _echo_scores(answer: dict, prefix_chars: int, candidates: list[bytes]) -> dict[int, float]:
    """Sum of the prompt log-probabilities of the tokens that overlap each candidate."""
    scores = {}
    for choice in answer.get("choices") or []:
        index = choice.get("index", 0)
        logprobs = choice.get("logprobs") or {}
        offsets, values, tokens = (logprobs.get("text_offset") or [], logprobs.get("token_logprobs") or [],
                                   logprobs.get("tokens") or [])
        if not isinstance(index, int) or not 0 <= index < len(candidates) or not offsets:
            continue
        end = prefix_chars + len(candidates[index].decode())
        total = 0.0
        for offset, value, token in zip(offsets, values, tokens):
            if value is not None and offset < end and offset + max(len(token), 1) > prefix_chars:
                total += value
        scores[index] = total
    return scores
