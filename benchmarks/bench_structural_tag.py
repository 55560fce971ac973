"""Mask time in free text and inside tool-call tags: leapgram vs XGrammar vs llguidance.

The same constraint in each engine: free text, two tools (``<function=NAME>`` + JSON arguments +
``</function>``, trigger ``<function=``). leapgram and XGrammar take the structural tag; llguidance
takes the equivalent Lark grammar (free text as lexemes that never start the trigger, ``%json``
for the arguments). A fixed reply is tokenized by the Llama-3 tokenizer; every engine fills one
mask per token (TBM) into a bitmask allocated once (its own kind: numpy for leapgram and llguidance,
torch for XGrammar) and consumes it, all in one process, the engines taking turns pass by pass, after
one warm-up pass. Each step is timed alone with ``time.perf_counter`` around the fill, and the whole
step (fill, then consume) is reported too. Steps are split
into *free* (outside a tag) and *tag* (from the trigger to the end tag). Ratios are leapgram's
median over the peer's: the target is <= 1.0 against the better peer in both places.

    .venv/bin/python benchmarks/bench_structural_tag.py [--tokenizer tokenizer.json] [--repeat 5] [--blocks] [--warm-only]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["celsius", "fahrenheit"]},
                                            "days": {"type": "integer", "minimum": 1, "maximum": 14}},
           "required": ["city", "unit"], "additionalProperties": False}
TIME = {"type": "object", "properties": {"timezone": {"type": "string"}}, "required": ["timezone"],
        "additionalProperties": False}
TOOLS = {"get_weather": WEATHER, "get_time": TIME}
STRUCTURAL_TAG = {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<function="], "tags": [
    {"type": "tag", "begin": f"<function={name}>", "content": {"type": "json_schema", "json_schema": schema},
     "end": "</function>"} for name, schema in TOOLS.items()]}}
LARK = "\n".join([
    "start: text (call text)*",
    "text: CHUNK? PIECE*",
    "CHUNK: /[^<]+/",
    "PIECE: /<[^<]*/ & ~/<function=(?s:.*)/",
    "call: " + " | ".join(f'"<function={name}>" %json {json.dumps(schema)} "</function>"'
                          for name, schema in TOOLS.items()),
])
REPLY = ("Sure! I can look that up for you. First, the weather in Paris for the next few days, then the local "
         "time in Tokyo, so that you can plan the call <with both teams>. "
         '<function=get_weather>{"city": "Paris", "unit": "celsius", "days": 3}</function>\n'
         "While that runs: the forecast comes from the national service and is updated hourly. "
         '<function=get_time>{"timezone": "Asia/Tokyo"}</function>\n'
         "I will summarize both results as soon as they arrive; tell me if you also want the humidity, the wind "
         "or the UV index, or a different unit.")


def default_tokenizer() -> Path:
    from leapgram.cli import default_tokenizer_path

    return default_tokenizer_path()


def steps_in_tags(vocab, tokens: list[int]) -> list[bool]:
    """For each step (before token i), whether the output is inside a tag there."""
    inside, text, out = False, b"", []
    for token in tokens:
        out.append(inside)
        text += vocab.token_bytes(token)
        start, end = text.rfind(b"<function="), text.rfind(b"</function>")
        inside = start > end or (start >= 0 and end < 0)
    return out


class Leapgram:
    name = "leapgram"

    def __init__(self, path: Path) -> None:
        import leapgram

        self.lg = leapgram
        self.vocab = leapgram.Vocabulary.from_tokenizer_json(path)
        self.bitmask = leapgram.allocate_token_bitmask(1, self.vocab.size)
        self.compile()

    def compile(self) -> None:
        """A new compiler each time: no mask, lexer row or chart from an earlier pass."""
        grammar = self.lg.Grammar.from_structural_tag(STRUCTURAL_TAG)
        self.compiled = self.lg.GrammarCompiler(self.vocab, cache_size=0).compile(grammar)

    def run(self, tokens: list[int]) -> list[float]:
        matcher = self.lg.Matcher(self.compiled)
        return _timed(tokens, lambda: matcher.fill_next_token_bitmask(self.bitmask, 0), matcher.consume_token)


class Xgrammar:
    name = "xgrammar"

    def __init__(self, path: Path) -> None:
        import xgrammar
        from transformers import PreTrainedTokenizerFast

        self.xgr = xgrammar
        self.info = xgrammar.TokenizerInfo.from_huggingface(PreTrainedTokenizerFast(tokenizer_file=str(path)))
        self.bitmask = xgrammar.allocate_token_bitmask(1, self.info.vocab_size)
        self.compile()

    def compile(self) -> None:
        compiler = self.xgr.GrammarCompiler(self.info, max_threads=1, cache_enabled=False)
        self.compiled = compiler.compile_structural_tag(json.dumps(STRUCTURAL_TAG))

    def run(self, tokens: list[int]) -> list[float]:
        matcher = self.xgr.GrammarMatcher(self.compiled)
        return _timed(tokens, lambda: matcher.fill_next_token_bitmask(self.bitmask, 0), matcher.accept_token)


class Llguidance:
    name = "llguidance"

    def __init__(self, path: Path) -> None:
        import llguidance
        import llguidance.numpy

        self.llg = llguidance
        self.fill = llguidance.numpy.fill_next_token_bitmask
        self.tokenizer = llguidance.LLTokenizer(str(path))
        self.grammar = llguidance.LLMatcher.grammar_from_lark(LARK)
        self.bitmask = llguidance.numpy.allocate_token_bitmask(1, self.tokenizer.vocab_size)
        self.compile()

    def compile(self) -> None:
        self.compiled = self.llg.LLMatcher(self.tokenizer, self.grammar, log_level=0)

    def run(self, tokens: list[int]) -> list[float]:
        matcher = self.compiled.deep_copy()
        return _timed(tokens, lambda: self.fill(matcher, self.bitmask, 0), matcher.consume_token)


def _timed(tokens: list[int], fill, consume) -> list[tuple[float, float]]:
    """Per step: (the fill's time, the whole step's: fill then consume)."""
    clock = time.perf_counter
    times = []
    for token in tokens:
        start = clock()
        fill()
        filled = clock()
        accepted = consume(token)
        end = clock()
        times.append((filled - start, end - start))
        if not accepted:
            raise RuntimeError(f"token {token} rejected at step {len(times)}")
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokenizer", type=Path, default=None, help="tokenizer.json (default: Llama-3's)")
    parser.add_argument("--repeat", type=int, default=5, help="timed passes after the warm-up (default 5)")
    parser.add_argument("--blocks", action="store_true",
                        help="run each engine's passes together (default: the engines take turns pass by pass)")
    parser.add_argument("--warm-only", action="store_true", help="skip the cold passes")
    args = parser.parse_args()
    path = args.tokenizer or default_tokenizer()
    engines = []
    for kind in (Leapgram, Xgrammar, Llguidance):
        try:
            engines.append(kind(path))
        except ImportError as exc:
            print(f"{kind.name}: skipped ({exc})")
    vocab = engines[0].vocab
    tokens = vocab.encode(REPLY.encode())
    inside = np.array(steps_in_tags(vocab, tokens))
    print(f"tokenizer {path}, {len(tokens)} tokens ({int(inside.sum())} in tags), {args.repeat} passes")
    for mode in ("warm",) if args.warm_only else ("cold", "warm"):
        report(mode, engines, tokens, inside, args.repeat, args.blocks)


def report(mode: str, engines: list, tokens: list[int], inside: np.ndarray, repeat: int, blocks: bool = False) -> None:
    """``cold``: each pass right after a fresh compile (the first request of a grammar);
    ``warm``: passes over one compiled grammar after a warm-up pass (a server's steady state).
    The engines take turns pass by pass, so a change of load on the machine reaches all three, each
    pass starting with the next engine, so none always runs right after the same one (whose memory
    traffic leaves the CPU caches cold for the next); ``blocks``: each engine's passes together instead."""
    print(f"-- {mode}: " + report.__doc__.split(";")[0 if mode == "cold" else 1].split(":", 1)[1].split(".")[0].strip())
    runs: dict[str, list[list[float]]] = {engine.name: [] for engine in engines}
    if mode == "warm":
        for engine in engines:
            engine.run(tokens)
    if blocks:  # each engine's passes together: its data stays in the CPU caches from pass to pass
        turns = [[engine] * repeat for engine in engines]
    else:
        turns = [engines[turn % len(engines):] + engines[:turn % len(engines)] for turn in range(repeat)]
    for engine in (engine for turn in turns for engine in turn):
        if mode == "cold":
            engine.compile()
        runs[engine.name].append(engine.run(tokens))
    for what, column in (("fill", 0), ("step (fill + consume)", 1)):
        print(f"  {what}:")
        medians = {}
        for engine in engines:
            per_step = np.median(np.array(runs[engine.name])[:, :, column], axis=0) * 1e6
            medians[engine.name] = (float(np.median(per_step[~inside])), float(np.median(per_step[inside])),
                                    float(np.mean(per_step[~inside])), float(np.mean(per_step[inside])))
            free, tag, free_mean, tag_mean = medians[engine.name]
            print(f"{engine.name:>12}: free text median {free:7.1f} us (mean {free_mean:7.1f}), "
                  f"in tags median {tag:7.1f} us (mean {tag_mean:7.1f})")
        ours = medians["leapgram"]
        peers = [v for k, v in medians.items() if k != "leapgram"]
        if peers:
            best = [min(p[i] for p in peers) for i in range(4)]
            print("  leapgram vs the better peer: free {:.2f}x, tags {:.2f}x (medians); free {:.2f}x, tags {:.2f}x "
                  "(means)".format(*(a / b for a, b in zip(ours, best))))

if __name__ == "__main__":
    main()
