"""``leapgram remote``: grammar-valid output from a model behind an OpenAI-compatible API.

The output alone goes to stdout; ``--stats`` writes the cost and how the text was made to stderr.
Exit status: 0 when the grammar accepts the output, 1 when it does not, 2 on a remote error.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def add_remote_parser(sub) -> None:
    remote = sub.add_parser("remote", help="grammar-valid output from a model behind an OpenAI-compatible API")
    remote.add_argument("prompt", help="the user message (or, with --raw, the whole completions prompt)")
    remote.add_argument("--base-url", required=True, help="the API, e.g. http://127.0.0.1:8000/v1")
    remote.add_argument("--model", required=True, help="the model name the server knows")
    kind = remote.add_mutually_exclusive_group(required=True)
    kind.add_argument("--schema", help="JSON Schema file")
    kind.add_argument("--regex", help="regular expression the whole output must match")
    kind.add_argument("--lark", help="Lark grammar file")
    kind.add_argument("--gbnf", help="GBNF grammar file")
    remote.add_argument("--whitespace", default="flexible", help="JSON Schema whitespace (as for generate)")
    remote.add_argument("--system", help="system message")
    remote.add_argument("--raw", action="store_true", help="send the prompt to /completions as it is")
    remote.add_argument("--chat-template", help="'chatml' or a Jinja template file: render the chat locally and "
                        "continue through /completions (default: chat endpoint with continue_final_message)")
    remote.add_argument("--tokenizer", help="the model's tokenizer.json (file or folder): exact token counts and "
                        "repair calls restricted to the allowed tokens")
    remote.add_argument("--server", default="auto", choices=["auto", "vllm", "openai", "generic"])
    remote.add_argument("--native", choices=["structured_outputs", "guided", "response_format", "llama.cpp"],
                        help="also hand the grammar to the server (the output is still checked here)")
    remote.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY"), help="default: $OPENAI_API_KEY")
    remote.add_argument("--max-calls", type=int, default=8)
    remote.add_argument("--max-tokens", type=int, default=1024, help="completion tokens for all calls together")
    remote.add_argument("--deadline", type=float, default=60.0, help="seconds for the whole request")
    remote.add_argument("--temperature", type=float, default=0.0)
    remote.add_argument("--stats", action="store_true", help="print the cost and the mechanism on stderr")


def run_remote(args: argparse.Namespace) -> int:
    from .. import Grammar, Vocabulary
    from . import Endpoint, RemoteError

    grammar = _grammar(args, Grammar)
    template = args.chat_template
    if template and template != "chatml":
        template = Path(template).read_text(encoding="utf-8")
    vocab = Vocabulary.from_tokenizer_json(args.tokenizer) if args.tokenizer else None
    endpoint = Endpoint(args.base_url, model=args.model, api_key=args.api_key, chat_template=template, vocab=vocab,
                        server=args.server)
    options = {"max_calls": args.max_calls, "max_tokens": args.max_tokens, "deadline": args.deadline,
               "temperature": args.temperature, "native": args.native}
    if args.raw:
        options["prompt"] = args.prompt
    else:
        system = [{"role": "system", "content": args.system}] if args.system else []
        options["messages"] = [*system, {"role": "user", "content": args.prompt}]
    try:
        result = endpoint.generate(grammar, **options)
    except RemoteError as exc:
        print(f"leapgram remote: {exc}", file=sys.stderr)
        return 2
    print(result.text, flush=True)
    if args.stats:
        print(f"{result.cost}\nmechanism: {result.mechanism}, finish: {result.finish}, valid: {result.valid}",
              file=sys.stderr)
        if result.completed_by_grammar:
            done = result.completed_by_grammar
            print(f"completed by the grammar at character {done.offset} ({done.reason}): {done.text!r}",
                  file=sys.stderr)
    return 0 if result.valid else 1


def _grammar(args: argparse.Namespace, Grammar):
    if args.regex is not None:
        return Grammar.from_regex(args.regex)
    if args.lark is not None:
        return Grammar.from_lark(Path(args.lark).read_text(encoding="utf-8"))
    if args.gbnf is not None:
        return Grammar.from_gbnf(Path(args.gbnf).read_text(encoding="utf-8"))
    whitespace = int(args.whitespace) if args.whitespace.isdigit() else args.whitespace
    return Grammar.from_json_schema(Path(args.schema).read_text(encoding="utf-8"), whitespace=whitespace)
