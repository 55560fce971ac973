"""Fast-forward tokens on real JSON: how many tokens they cover, and whether they are canonical.

For each valid instance of ``../shared/jsonschemabench`` (``json.dumps(data, ensure_ascii=False)``,
tokenized by the real tokenizer) a matcher walks the instance token by token. Before each token,
``Matcher.fast_forward_tokens(backoff=d)`` is taken for every back-off depth ``d``. A non-empty
run is *canonical* when the instance's own tokenization has the same tokens at that place; a
canonical run is counted as fast-forwarded (the next steps it covers are not asked again, as a
generation would append the run and go on after it); a non-canonical run is counted and the walk
goes on with the instance's token. One walk serves every depth: canonical runs are the
instance's own tokens, so the states a generation would reach are the states of the walk.

Reported per tokenizer and depth: tokens, fast-forwarded tokens and their share (target >= 10%
with a JSON Schema grammar), forced runs, non-canonical runs and tokens (target 0), and runs
the matcher could not consume (must be 0), plus the time of one ``fast_forward_tokens`` call.

Grammars (``--grammar``):

- ``schema`` (default): ``Grammar.from_json_schema(case["schema"])`` per case; a case whose schema
  does not compile is skipped and counted. ``--whitespace fixed`` compiles the schema with the
  instances' own separators as its only layout (every separator is then forced).
- ``lark-json``: one generic Lark JSON grammar (``JSON_LARK`` of ``bench_cfg_masks.py``) for every
  instance. JSON whitespace is free there, so few bytes are forced: this mode checks
  canonicality, not the share.
- ``skeleton``: a PROXY until ``from_json_schema`` lands: per instance, a grammar with the
  instance's own structure (every key required and in order, arrays of the instance's length,
  ``json.dumps`` separators) and generic strings, numbers and booleans. It forces more than a
  schema would (array lengths, every key), so its share is an upper bound; its canonicality
  counts exercise the back-off on the same keys and punctuation a schema forces.

An instance the grammar rejects (a schema front end that disagrees with the instance, such as
properties in another order, or with the separators: ``--separators compact`` for a grammar
without JSON whitespace) is counted and not walked: forced bytes that disagree with it say nothing
about canonicality. Tokenizers whose normalizer adds a space in front of a text (SentencePiece, Mistral) tokenize an
instance after a newline, which is then cut off again; an instance with no token boundary there
is skipped. Run from the repository root::

    .venv/bin/python benchmarks/bench_fast_forward.py --grammar lark-json --limit 50
    .venv/bin/python benchmarks/bench_fast_forward.py --tokenizers llama3,qwen3,mistral-v1 --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT / ".." / "shared" / "jsonschemabench"
TOKENIZERS = REPO_ROOT / ".." / "shared" / "tokenizers"
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(REPO_ROOT / "tests" / "mask"))

import leapgram as lg
from leapgram.vocab.partial import encode_in_context

TARGET_SHARE = 0.10
EXAMPLES_KEPT = 5


@dataclass
class DepthTotals:
    """Counts for one back-off depth."""

    forwarded: int = 0
    runs: int = 0
    noncanonical_runs: int = 0
    noncanonical_tokens: int = 0
    unconsumable_runs: int = 0
    calls: int = 0
    call_ns: int = 0
    examples: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Totals:
    """Counts for one tokenizer."""

    cases: int = 0
    instances: int = 0
    tokens: int = 0
    skipped_schema: int = 0
    skipped_tokenization: int = 0
    rejected: int = 0
    depths: dict[int, DepthTotals] = field(default_factory=dict)
    compile_errors: dict[str, int] = field(default_factory=dict)


SEPARATORS = {"default": (", ", ": "), "compact": (",", ":")}


def serialize(data: Any, separators: tuple[str, str]) -> bytes | None:
    """``json.dumps(data, ensure_ascii=False)`` as UTF-8; None for NaN or lone surrogates."""
    try:
        return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=separators).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return None


def instance_tokens(vocab: lg.Vocabulary, data: bytes) -> list[int] | None:
    """The tokenizer's tokens for ``data`` as text on its own; after a newline (cut off again)
    when the tokenizer adds bytes in front of a text."""
    ids = vocab.encode(data)
    if vocab.decode(ids) == data:
        return ids
    return encode_in_context(vocab, data, vocab.encode(b"\n"))


def grammar_maker(mode: str, separators: tuple[str, str], whitespace: str = "flexible"):
    """A function from a case and one of its instances to a leapgram Grammar (or an exception)."""
    if mode == "lark-json":
        from bench_cfg_masks import JSON_LARK

        grammar = lg.Grammar.from_lark(JSON_LARK)
        return lambda case, instance: grammar
    if mode == "skeleton":
        return lambda case, instance: skeleton_grammar(instance, separators)
    if not hasattr(lg.Grammar, "from_json_schema"):
        raise SystemExit("this leapgram has no Grammar.from_json_schema yet; run with --grammar lark-json "
                         "or --grammar skeleton")
    last: dict[str, Any] = {}

    def schema_grammar(case: dict[str, Any], instance: Any) -> lg.Grammar:
        if last.get("case") is not case:  # one grammar per case, made when its first instance comes
            last.clear()
            layout = separators if whitespace == "fixed" else whitespace
            last["grammar"] = lg.Grammar.from_json_schema(case["schema"], whitespace=layout)
            last["case"] = case
        return last["grammar"]

    return schema_grammar


def skeleton_grammar(instance: Any, separators: tuple[str, str]) -> lg.Grammar:
    """The ``skeleton`` proxy grammar of one instance (see the module docstring)."""
    from leapgram.grammar import GrammarBuilder
    from tests.helpers.cfg_grammars import NUMBER, STRING

    b = GrammarBuilder()
    string, number = b.regex(STRING, name="STRING"), b.regex(NUMBER, name="NUMBER")

    def symbols(value: Any) -> list[int]:
        if isinstance(value, dict):
            parts = [[b.literal(json.dumps(k, ensure_ascii=False)), b.literal(separators[1]), *symbols(v)]
                     for k, v in value.items()]
            return enclosed("{", parts, "}")
        if isinstance(value, list):
            return enclosed("[", [symbols(v) for v in value], "]")
        if isinstance(value, bool):
            return [b.choice([[b.literal("true")], [b.literal("false")]])]
        if value is None:
            return [b.literal("null")]
        return [string] if isinstance(value, str) else [number]

    def enclosed(opening: str, parts: list[list[int]], closing: str) -> list[int]:
        out = [b.literal(opening)]
        for index, part in enumerate(parts):
            out += ([b.literal(separators[0])] if index else []) + part
        return out + [b.literal(closing)]

    start = b.nonterminal("start")
    b.rule(start, symbols(instance))
    text = json.dumps(instance, ensure_ascii=False)
    return lg.Grammar(b.build(start), kind="builder", source=f"skeleton {separators} {text}")


def walk(vocab: lg.Vocabulary, compiled: lg.CompiledGrammar, tokens: list[int], depths: list[int],
         totals: Totals, name: str) -> None:
    """One instance: fast-forward tokens at every step for every depth, then the next token."""
    matcher = lg.Matcher(compiled)
    covered = dict.fromkeys(depths, 0)
    for index, token in enumerate(tokens):
        for depth in depths:
            if index >= covered[depth]:
                covered[depth] = index + score(matcher, depth, tokens, index, totals.depths[depth], vocab, name)
        if not matcher.consume_token(token):
            totals.rejected += 1
            return


def accepts(compiled: lg.CompiledGrammar, data: bytes) -> bool:
    """Whether the grammar accepts the whole instance (bytes, then EOS)."""
    engine = compiled._engine
    state = engine.advance(engine.initial, data)
    return state is not None and engine.is_accepting(state)


def score(matcher: lg.Matcher, depth: int, tokens: list[int], index: int, counts: DepthTotals,
          vocab: lg.Vocabulary, name: str) -> int:
    """Count the run at ``index``; returns the tokens it fast-forwards (at least 1)."""
    start = time.perf_counter_ns()
    run = matcher.fast_forward_tokens(backoff=depth)
    counts.call_ns += time.perf_counter_ns() - start
    counts.calls += 1
    if not run:
        return 1
    counts.runs += 1
    if matcher.validate_tokens(run) != len(run):
        counts.unconsumable_runs += 1
    if run == tokens[index:index + len(run)]:
        counts.forwarded += len(run)
        return len(run)
    counts.noncanonical_runs += 1
    counts.noncanonical_tokens += len(run)
    if len(counts.examples) < EXAMPLES_KEPT:
        counts.examples.append({"case": name, "at": index, "forced": repr(matcher.forced_bytes()),
                                "run": [repr(vocab.token_bytes(t)) for t in run],
                                "instance": [repr(vocab.token_bytes(t)) for t in tokens[index:index + len(run) + 1]]})
    return 1


def run_tokenizer(name: str, args: argparse.Namespace, make_grammar) -> Totals:
    """Every case of the corpus (up to ``--limit``) on one tokenizer."""
    vocab = lg.Vocabulary.from_tokenizer_json(TOKENIZERS / name)
    totals = Totals(depths={d: DepthTotals() for d in args.depths})
    files = sorted(args.corpus.glob("*.json"))[:args.limit or None]
    if args.sample and args.sample < len(files):
        files = [files[i * len(files) // args.sample] for i in range(args.sample)]
    for number, path in enumerate(files, 1):
        case = json.loads(path.read_text(encoding="utf-8"))
        instances = [(t["data"], serialize(t["data"], SEPARATORS[args.separators]))
                     for t in case.get("tests", []) if t.get("valid") and "data" in t]
        instances = [(value, data) for value, data in instances if data is not None and len(data) <= args.max_bytes]
        if not instances:
            continue
        totals.cases += 1
        for value, data in instances:
            try:
                compiled = lg.GrammarCompiler(vocab).compile(make_grammar(case, value))
            except Exception as err:  # noqa: BLE001 - a front end in progress may fail in any way
                totals.skipped_schema += 1
                kind = type(err).__name__
                totals.compile_errors[kind] = totals.compile_errors.get(kind, 0) + 1
                continue
            if not accepts(compiled, data):  # the grammar has another opinion: nothing to compare
                totals.rejected += 1
                continue
            tokens = instance_tokens(vocab, data)
            if tokens is None:
                totals.skipped_tokenization += 1
                continue
            totals.instances += 1
            totals.tokens += len(tokens)
            walk(vocab, compiled, tokens, args.depths, totals, path.name)
        if number % 100 == 0:
            print(f"  {name}: {number}/{len(files)} files", file=sys.stderr, flush=True)
    return totals


def render(name: str, totals: Totals, seconds: float) -> str:
    """The report of one tokenizer."""
    lines = [(f"{name}: {totals.cases} cases, {totals.instances} instances, {totals.tokens:,} tokens "
              f"({totals.skipped_schema} grammars not compiled, {totals.skipped_tokenization} instances "
              f"not tokenizable alone, {totals.rejected} instances rejected by the grammar); {seconds:.0f} s"),
             (f"{'depth':>5} {'forwarded':>10} {'share':>7} {'runs':>7} {'non-canon runs':>15} "
              f"{'non-canon tokens':>17} {'unconsumable':>13} {'us/call':>8}")]
    for depth, c in totals.depths.items():
        share = c.forwarded / totals.tokens if totals.tokens else 0.0
        lines.append(f"{depth:>5} {c.forwarded:>10,} {share:>7.1%} {c.runs:>7,} {c.noncanonical_runs:>15,} "
                     f"{c.noncanonical_tokens:>17,} {c.unconsumable_runs:>13} {c.call_ns / max(c.calls, 1) / 1e3:>8.1f}")
    for depth, c in totals.depths.items():
        for example in c.examples[:2]:
            lines.append(f"  depth {depth} non-canonical: {example}")
    if totals.compile_errors:
        lines.append(f"  grammars not compiled, by exception: {totals.compile_errors}")
    lines.append(f"  targets: share >= {TARGET_SHARE:.0%} (with JSON Schema grammars), 0 non-canonical runs")
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--grammar", choices=["schema", "lark-json", "skeleton"], default="schema")
    parser.add_argument("--tokenizers", default="llama3", help="comma-separated folders of ../shared/tokenizers")
    parser.add_argument("--depths", default="0,1,2", help="back-off depths (default 0,1,2)")
    parser.add_argument("--limit", type=int, default=0, help="first N case files only (default: all)")
    parser.add_argument("--sample", type=int, default=0, help="N case files evenly spaced over the sorted ones")
    parser.add_argument("--max-bytes", type=int, default=4096, help="skip longer instances (default 4096)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--whitespace", choices=["flexible", "compact", "fixed"], default="flexible",
                        help="schema grammars: flexible JSON whitespace (default), none, or fixed to the "
                             "--separators the instances are written with")
    parser.add_argument("--separators", choices=sorted(SEPARATORS), default="default",
                        help="json.dumps separators: default ', ' ': ' (as the issue says) or compact ',' ':'")
    parser.add_argument("--json", type=Path, help="also write the counts here")
    args = parser.parse_args(argv)
    args.depths = [int(d) for d in args.depths.split(",")]
    return args


def main(argv: list[str] | None = None) -> int:
    """Run every tokenizer and print the report."""
    args = parse_args(argv)
    make_grammar = grammar_maker(args.grammar, SEPARATORS[args.separators], args.whitespace)
    print(f"grammar: {args.grammar}; whitespace {args.whitespace}; separators {args.separators}; corpus {args.corpus}; "
          f"limit {args.limit or 'none'}; sample {args.sample or 'none'}; max bytes {args.max_bytes}")
    results = {}
    for name in args.tokenizers.split(","):
        if not (TOKENIZERS / name / "tokenizer.json").is_file():
            print(f"{name}: no tokenizer.json in {TOKENIZERS / name}; skipped")
            continue
        start = time.perf_counter()
        totals = run_tokenizer(name, args, make_grammar)
        print(render(name, totals, time.perf_counter() - start), flush=True)
        results[name] = asdict(totals)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
