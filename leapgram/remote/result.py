"""What a guided remote generation returns: the text, whether the grammar accepts it, how it was
finished, and what it cost."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Cost:
    """What one output cost.

    ``calls``: HTTP requests sent (streams, repair calls, retries). ``prompt_tokens`` and
    ``completion_tokens``: billed, from the server's ``usage`` where it sent one, else counted
    from the logprobs it streamed, else estimated (``estimated`` is then true).
    ``discarded_tokens``: completion tokens received after a cut (the text after the first byte
    the grammar refused); tokens the server generated after the connection was closed are not
    seen and not counted. ``repairs``: how each break was mended, by kind (``forced``,
    ``logprobs``, ``restricted``, ``scored``, ``grammar``). ``retries``: streams that broke
    off and were continued. ``resyncs``: repairs after which the model's own streamed text fit
    the grammar again and was kept (no new call). ``forced_bytes``: bytes the grammar forced, appended without a
    call. ``seconds``: wall time.
    """

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    discarded_tokens: int = 0
    repairs: Counter = field(default_factory=Counter)
    retries: int = 0
    resyncs: int = 0
    forced_bytes: int = 0
    seconds: float = 0.0
    estimated: bool = False

    @property
    def billed_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict:
        return {"calls": self.calls, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "discarded_tokens": self.discarded_tokens,
                "repairs": dict(self.repairs), "retries": self.retries, "resyncs": self.resyncs, "forced_bytes": self.forced_bytes, "seconds": round(self.seconds, 4),
                "estimated": self.estimated}

    def __str__(self) -> str:
        repairs = ", ".join(f"{kind} {n}" for kind, n in sorted(self.repairs.items())) or "none"
        approx = " (estimated)" if self.estimated else ""
        return (f"calls {self.calls}, tokens billed {self.billed_tokens}{approx} (prompt {self.prompt_tokens}, "
                f"completion {self.completion_tokens}, discarded {self.discarded_tokens}), repairs: {repairs}, "
                f"resyncs {self.resyncs}, retries {self.retries}, {self.seconds:.2f} s")


@dataclass(frozen=True)
class GrammarCompletion:
    """The end of an output that the grammar wrote instead of the model: ``text`` appended at
    character ``offset`` (``byte_offset`` in UTF-8) because ``reason`` (``max_calls``,
    ``max_tokens``, ``deadline``, ``error``, ``no_repair``) ran out."""

    offset: int
    byte_offset: int
    text: str
    reason: str


@dataclass
class RemoteResult:
    """A grammar-checked output of a remote model.

    ``text``: the output. ``valid``: whether the grammar accepts it (true unless no completion
    could be found, which ``error`` then explains). ``completed_by_grammar``: where and why the
    grammar finished the text, or ``None`` when the model wrote all of it (repairs aside).
    ``mechanism``: how the model was asked to continue a prefix (``completions`` with a locally
    rendered chat template, ``completions-raw`` for a plain prompt, ``chat-continue`` for chat with
    ``continue_final_message``), prefixed by ``native:<option>`` when the server's own constraint
    was sent. ``finish``: ``stop`` (the model ended inside the grammar), ``grammar_end`` (the
    grammar allows nothing more), ``completed_by_grammar``, or ``empty_grammar`` (no text can
    satisfy the grammar: ``valid`` is false and no call is made). ``log``: one line per event.
    """

    text: str
    valid: bool
    completed_by_grammar: GrammarCompletion | None
    cost: Cost
    mechanism: str
    finish: str
    error: str | None = None
    log: list[str] = field(default_factory=list)
