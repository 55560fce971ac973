"""End-to-end constrained generation with the embedded SmolLM2-135M-Instruct (CPU, greedy).

The two workloads of SGLang's jump-forward benchmark (LMSYS, "Fast JSON Decoding for Local LLMs
with Compressed Finite State Machine", 2024):

* character: a Harry Potter character as JSON (name, house enum, blood status enum, occupation
  enum, a nested wand object with wood, core and a numeric length, alive enum, patronus), one
  short prompt per character;
* city: a city's facts (name, country, latitude, longitude, population, top 3 landmarks)
  extracted as JSON from a passage of about 1,000 tokens (benchmarks/data/passages/).

Each prompt runs in five modes (``--modes`` picks some), interleaved prompt by prompt with the
order rotated from one prompt to the next: unconstrained; constrained without jump-forward;
constrained with jump-forward (the matcher's forced tokens appended as they come); constrained with
verified jump-forward (forced tokens fed as a draft and kept only while the model agrees, so the
output is exactly that of no jump-forward); drafts (``jump_forward="draft"``: forced tokens plus
layout, lookup and prompt-text drafts, verified the same way). Reported per mode: wall time, output
tokens per second, forward passes, outputs that parse and validate against the schema, drafted and
accepted tokens by draft kind; then the ratios and whether greedy outputs are identical with and
without jump-forward. The schemas are
benchmarks/data/{character,city}.json, compiled with ``Grammar.from_json_schema``. ``--whitespace``:
``dumps`` by default, the one-line layout ``json.dumps`` writes (``", "`` and ``": "``), as SGLang's
benchmark fixes one layout in its regex, so every key and separator is forced; ``flexible`` lets
the model choose its whitespace (then only keys and closing bytes are forced), ``compact`` has none.

    PYTHONPATH=. python benchmarks/bench_generate.py [--characters 20] [--cities 5] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

import leapgram
from leapgram.integrations.smollm2 import chat_prompt, load_default_model
from leapgram.integrations.transformers import GenerationStats, generate, vocabulary_of

DATA = Path(__file__).resolve().parent / "data"

CHARACTERS = [
    "Harry Potter", "Hermione Granger", "Ron Weasley", "Albus Dumbledore", "Severus Snape",
    "Rubeus Hagrid", "Draco Malfoy", "Ginny Weasley", "Fred Weasley", "George Weasley",
    "Neville Longbottom", "Luna Lovegood", "Minerva McGonagall", "Sirius Black", "Remus Lupin",
    "Bellatrix Lestrange", "Lord Voldemort", "Cedric Diggory", "Cho Chang", "Nymphadora Tonks",
    "Dolores Umbridge", "Kingsley Shacklebolt", "Lucius Malfoy", "Molly Weasley",
]
CHARACTER_PROMPT = ("{name} is a character in Harry Potter. Please fill in the following information about "
                    "this character as JSON: name, house, blood status, occupation, wand (wood, core, "
                    "length), alive and patronus.")
CITY_PROMPT = ("{passage}\n\nFrom the passage above, extract the city's name, country, latitude, longitude, "
               "population and top 3 landmarks as JSON.")
MODES = ("unconstrained", "constrained", "jump-forward", "verified", "drafts")
JUMP = {"unconstrained": False, "constrained": False, "jump-forward": True, "verified": "verify",
        "drafts": "draft"}
COMPARED = ("jump-forward", "verified", "drafts")


def load_grammar(name: str, whitespace: str) -> tuple[leapgram.Grammar, str]:
    schema_file = DATA / f"{name}.json"
    grammar = leapgram.Grammar.from_json_schema(schema_file.read_text(), whitespace=whitespace)
    return grammar, f"JSON Schema {schema_file.name}, whitespace {whitespace}"


def workload_prompts(name: str, tokenizer, count: int, first: int = 0) -> list[str]:
    if name == "character":
        return [chat_prompt(tokenizer, CHARACTER_PROMPT.format(name=n)) for n in CHARACTERS[first:first + count]]
    passages = sorted((DATA / "passages").glob("*.txt"))[first:first + count]
    return [chat_prompt(tokenizer, CITY_PROMPT.format(passage=p.read_text().strip())) for p in passages]


def schema_valid(text: str, schema: dict) -> bool:
    """Whether the first ``{`` ... last ``}`` of ``text`` is JSON that validates against ``schema``."""
    import jsonschema

    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return False
    try:
        jsonschema.validate(json.loads(text[start:end + 1]), schema)
    except (ValueError, jsonschema.ValidationError):
        return False
    return True


def run_workload(name: str, model, tokenizer, count: int, max_new_tokens: int,
                 args: argparse.Namespace) -> dict:
    batch_size, heal = args.batch_size, not args.no_heal
    grammar, grammar_source = load_grammar(name, args.whitespace)
    schema = json.loads((DATA / f"{name}.json").read_text())
    prompts = workload_prompts(name, tokenizer, count, args.first)
    began = time.perf_counter()
    compiled = leapgram.GrammarCompiler(vocabulary_of(tokenizer)).compile(grammar)
    leapgram.Matcher(compiled).compute_mask()
    ttfm = time.perf_counter() - began
    # warm-up, not timed: the masks along a whole output, and the draft policy's first pass costs
    generate(model, tokenizer, prompts[:1], compiled, max_new_tokens=max_new_tokens, jump_forward=False)
    generate(model, tokenizer, prompts[:1], compiled, max_new_tokens=24, jump_forward="draft")
    modes = args.modes
    totals = {mode: GenerationStats() for mode in modes}
    wall = dict.fromkeys(modes, 0.0)
    cpu = dict.fromkeys(modes, 0.0)
    valid = dict.fromkeys(modes, 0)
    identical = {mode: 0 for mode in COMPARED if mode in modes}
    lengths = []
    for first in range(0, len(prompts), batch_size):
        group = prompts[first:first + batch_size]
        outputs = {}
        turn = first // batch_size % len(modes)
        for mode in modes[turn:] + modes[:turn]:
            constraint = None if mode == "unconstrained" else compiled
            began, began_cpu = time.perf_counter(), time.process_time()
            outputs[mode] = generate(model, tokenizer, group, constraint, max_new_tokens=max_new_tokens,
                                     jump_forward=JUMP[mode], batch_size=batch_size, heal_prompt=heal)
            wall[mode] += time.perf_counter() - began
            cpu[mode] += time.process_time() - began_cpu
            for result in outputs[mode]:
                totals[mode] = totals[mode] + result.stats
                valid[mode] += schema_valid(result.text, schema)
        for position, plain in enumerate(outputs["constrained"]):
            for mode in identical:
                identical[mode] += plain.tokens == outputs[mode][position].tokens
            lengths.append(plain.stats.prompt_tokens)
            shown = outputs[modes[-1]][position]
            print(f"  [{name} {len(lengths)}/{len(prompts)}] {shown.text[:150]!r}", file=sys.stderr)
    return {"workload": name, "grammar": grammar_source, "prompts": len(prompts), "ttfm_s": ttfm,
            "mean_prompt_tokens": sum(lengths) / len(lengths), "max_new_tokens": max_new_tokens,
            "batch_size": batch_size, "heal_prompt": heal, "identical_greedy": identical, "valid": valid,
            "wall_s": wall, "cpu_s": cpu,
            "modes": list(modes), "stats": {mode: totals[mode].as_dict() for mode in modes}}


def report(result: dict) -> None:
    stats, n = result["stats"], result["prompts"]
    print(f"\n== {result['workload']}: {n} prompts, batch size {result['batch_size']} "
          f"(mean prompt {result['mean_prompt_tokens']:.0f} tokens), "
          f"{result['grammar']}, compile + first mask {result['ttfm_s'] * 1000:.0f} ms")
    print(f"{'mode':<14}{'wall s':>8}{'cpu s':>8}{'prefill':>8}{'out tok':>9}{'tok/s':>7}{'fwd':>6}{'sampled':>8}"
          f"{'ff':>6}{'mask ms':>9}{'model s':>9}{'valid':>8}")
    modes = result["modes"]
    cpu = result.get("cpu_s", {})  # absent from runs before it was measured
    for mode in modes:
        s = stats[mode]
        rate = s["output_tokens"] / result["wall_s"][mode]
        cells = (f"{result['wall_s'][mode]:>8.2f}{cpu.get(mode, float('nan')):>8.2f}{s['prefill_seconds']:>8.2f}",
                 f"{s['output_tokens']:>9}{rate:>7.1f}",
                 f"{s['forward_passes']:>6}{s['sampled_tokens']:>8}{s['fast_forwarded_tokens']:>6}",
                 f"{s['mask_seconds'] * 1000:>9.0f}{s['model_seconds']:>9.2f}{result['valid'][mode]:>5}/{n}")
        print(f"{mode:<14}" + "".join(cells))
    wall = result["wall_s"]

    def per_token(mode: str) -> float:
        return (wall[mode] - stats[mode]["prefill_seconds"]) / max(1, stats[mode]["output_tokens"])

    if "unconstrained" in modes:
        print("per-token time after prefill, constrained-no-JF / unconstrained: "
              f"{per_token('constrained') / per_token('unconstrained'):.2f}")
    for mode in modes:
        kinds = stats[mode].get("draft_kinds") or {}
        if kinds:
            cells = ", ".join(f"{kind} {kept}/{fed} ({kept / max(1, fed):.0%})" for kind, (fed, kept) in sorted(kinds.items()))
            print(f"{mode}: accepted/drafted tokens by kind: {cells}")
    for mode in (m for m in COMPARED if m in modes):
        passes = stats["constrained"]["forward_passes"] / max(1, stats[mode]["forward_passes"])
        print(f"{mode}: forward passes no-JF / JF {passes:.2f}, wall no-JF / JF "
              f"{wall['constrained'] / wall[mode]:.2f}, CPU time no-JF / JF "
              f"{cpu.get('constrained', float('nan')) / cpu.get(mode, 1.0):.2f}, greedy output identical to no-JF "
              f"{result['identical_greedy'][mode]}/{n}")


def merge(runs: list[list[dict]]) -> list[dict]:
    """The results of several runs summed workload by workload (counts, times, stats)."""
    merged: dict[str, dict] = {}
    for run in runs:
        for result in run:
            into = merged.get(result["workload"])
            if into is None:
                merged[result["workload"]] = json.loads(json.dumps(result))
                continue
            weight = into["prompts"]
            into["mean_prompt_tokens"] = ((into["mean_prompt_tokens"] * weight + result["mean_prompt_tokens"]
                                           * result["prompts"]) / (weight + result["prompts"]))
            into["prompts"] += result["prompts"]
            into["ttfm_s"] = max(into["ttfm_s"], result["ttfm_s"])
            for key in ("identical_greedy", "valid", "wall_s", "cpu_s"):
                for mode, value in result[key].items():
                    into[key][mode] += value
            for mode, stats in result["stats"].items():
                for name, value in stats.items():
                    if name == "draft_kinds":
                        for kind, counts in value.items():
                            old = into["stats"][mode]["draft_kinds"].setdefault(kind, [0, 0])
                            old[0], old[1] = old[0] + counts[0], old[1] + counts[1]
                    else:
                        into["stats"][mode][name] += value
    return list(merged.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--characters", type=int, default=20, help="character prompts (default 20)")
    parser.add_argument("--cities", type=int, default=5, help="city passages (default 5)")
    parser.add_argument("--first", type=int, default=0,
                        help="skip this many prompts of each workload (to split a run among processes)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=1, help="prompts decoded together (default 1)")
    parser.add_argument("--no-heal", action="store_true", help="no prompt healing (where leapgram has it)")
    parser.add_argument("--whitespace", default="dumps", help="dumps (default: ', ' and ': '), flexible or compact")
    parser.add_argument("--modes", default=",".join(MODES),
                        help=f"comma-separated modes, 'constrained' among them (default {','.join(MODES)})")
    parser.add_argument("--merge", nargs="+", metavar="JSON",
                        help="only report the sum of earlier runs' --out files (a run split with --first)")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "out" / "generate.json"))
    args = parser.parse_args(argv)
    args.modes = tuple(dict.fromkeys(m.strip() for m in args.modes.split(",") if m.strip()))
    unknown = set(args.modes) - set(MODES)
    if unknown or "constrained" not in args.modes:
        parser.error(f"--modes: known modes are {', '.join(MODES)}, and 'constrained' must be one")
    if args.merge:
        for result in merge([json.loads(Path(name).read_text()) for name in args.merge]):
            report(result)
        return 0
    torch.set_num_threads(args.threads)
    model, tokenizer = load_default_model()
    print(f"model: SmolLM2-135M-Instruct (float32, CPU, {args.threads} thread(s)), leapgram has "
          f"fast_forward_tokens: {hasattr(leapgram.Matcher, 'fast_forward_tokens')}, heal_prompt: "
          f"{hasattr(leapgram, 'heal_prompt')}")
    results = []
    for name, count, limit in (("character", args.characters, 200), ("city", args.cities, 160)):
        if count > 0:
            result = run_workload(name, model, tokenizer, count, limit, args)
            results.append(result)
            report(result)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2))
    print(f"\nwritten to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
