"""leapgram.remote against grammar-guide on one OpenAI-compatible server (vLLM with SmolLM2-135M).

Workloads: the character and city workloads of bench_generate.py (same schemas and prompts) and
JSONSchemaBench schemas (``--schemas`` of at most ``--max-schema-bytes`` from ``--schema-dir``,
spread evenly over the sorted file names and so over its sources; the prompt asks for a JSON
object that follows the schema). Methods, on the same server, prompts and chat template:

* ``unconstrained``: one call, nothing checked (the baseline);
* ``leapgram``: ``leapgram.remote`` with the completions endpoint and the chat rendered locally;
* ``leapgram+native``: the same with vLLM's ``structured_outputs`` sent as well (checked locally);
* ``grammar-guide``: ``grammar_guide.guide`` (PyPI 0.0.11) driven through its own API, in its own
  virtual environment (``--gg-python``; it pins numpy 1.26 and needs guidance 0.1.16, torch and
  transformers to import). Its draft model is the same completions endpoint; its target model
  (which picks among candidate terminals) is the same server with the candidates' regex sent as
  ``structured_outputs`` (guidance's local-model path cannot reach an API), so every call it makes
  is counted. It takes Lark grammars only: each schema is translated to Lark here (properties in
  declared order, all present; enums, consts, types, arrays, anyOf/oneOf, local $refs), and its
  outputs are judged by the schema like everyone's.

Budgets: ``--max-tokens`` (160) completion tokens per output for every method (the unconstrained
call's ``max_tokens``); leapgram's ``max_calls`` and grammar-guide's ``max_grammar_corrections``
are both ``--max-calls`` (8); grammar-guide's ``token_lookahead`` is ``--gg-lookahead`` (64; its
default is 20). leapgram gets no tokenizer here (no restricted calls): the black-box case.

For each method and workload: share of outputs the schema accepts (jsonschema), API calls per
output, prompt + completion tokens billed per output (the server's ``usage``), wall time, and how
many outputs the grammar finished. ``--parallel`` runs the methods at the same time, each going
through the tasks in order, so that all of them see the same load on a shared machine. Usage:

    .venv-vllm/bin/python -m vllm.entrypoints.openai.api_server --model DIR --served-model-name smollm2 ...
    PYTHONPATH=. .venv/bin/python benchmarks/bench_remote.py --base-url http://127.0.0.1:8000/v1 \\
        --gg-python /work/bench-venvs/gg/bin/python [--characters 5] [--cities 3] [--schemas 50] [--parallel]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
CHATML = ("<|im_start|>{role}\n{content}<|im_end|>\n")
SCHEMA_PROMPT = "Generate a JSON object that follows this JSON Schema. Answer with the JSON only.\n\n{schema}"
METHODS = ("unconstrained", "leapgram", "leapgram+native", "grammar-guide")


# ----- workloads ----------------------------------------------------------------------------

def render(user: str) -> str:
    return CHATML.format(role="user", content=user) + "<|im_start|>assistant\n"


def workloads(args) -> list[dict]:
    sys.path.insert(0, str(HERE))
    from bench_generate import CHARACTER_PROMPT, CHARACTERS, CITY_PROMPT

    tasks = []
    character = json.loads((DATA / "character.json").read_text())
    for name in CHARACTERS[: args.characters]:
        tasks.append({"workload": "character", "schema": character, "user": CHARACTER_PROMPT.format(name=name)})
    city = json.loads((DATA / "city.json").read_text())
    for passage in sorted((DATA / "passages").glob("*"))[: args.cities]:
        tasks.append({"workload": "city", "schema": city,
                      "user": CITY_PROMPT.format(passage=passage.read_text().strip())})
    tasks += schema_tasks(args)[: args.schema_limit]
    for task in tasks:
        task["prompt"] = render(task["user"])
        task["lark"] = schema_to_lark(task["schema"])
    return tasks


def schema_tasks(args) -> list[dict]:
    """``--schemas`` schemas of at most ``--max-schema-bytes``, spread evenly over the sorted file
    names (so over the benchmark's sources), each the first one from its place on that leapgram
    compiles and that translates to Lark."""
    import leapgram

    folder = Path(args.schema_dir)
    if not folder.is_dir() or not args.schemas:
        return []
    paths = [p for p in sorted(folder.glob("*.json")) if p.stat().st_size <= args.max_schema_bytes]
    tasks, used = [], set()
    for slot in range(args.schemas):
        for path in paths[slot * len(paths) // args.schemas:]:
            if path in used:
                continue
            used.add(path)
            schema = _usable_schema(path, leapgram)
            if schema is not None:
                tasks.append({"workload": "jsonschemabench", "schema": schema, "name": path.stem,
                              "user": SCHEMA_PROMPT.format(schema=json.dumps(schema))})
                break
    return tasks


def _usable_schema(path: Path, leapgram) -> dict | None:
    try:
        document = json.loads(path.read_text())
        schema = document.get("schema", document) if isinstance(document, dict) else document
        if not isinstance(schema, dict):
            return None
        leapgram.Grammar.from_json_schema(schema)
        schema_to_lark(schema)
        return schema
    except Exception:  # noqa: BLE001 - a schema either side cannot take is skipped, for both
        return None


# ----- JSON Schema -> Lark, for grammar-guide -----------------------------------------------------

LARK_TERMINALS = r"""
STR: /"([^"\\\x00-\x1f]|\\(["\\\/bfnrt]|u[0-9a-fA-F]{4}))*"/
INT: /-?(0|[1-9][0-9]*)/
NUM: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/
any: obj | arr | STR | NUM | "true" | "false" | "null"
obj: "{" [pair ("," pair)*] "}"
pair: STR ":" any
arr: "[" [any ("," any)*] "]"
%import common.WS
%ignore WS
"""


class _Lark:
    def __init__(self, root: dict) -> None:
        self.root = root
        self.rules: list[str] = []

    def rule(self, body: str) -> str:
        name = f"r{len(self.rules)}"
        self.rules.append(f"{name}: {body}")
        return name

    def value(self, schema, depth: int = 0) -> str:
        if schema is True or not isinstance(schema, dict) or depth > 12:
            return "any"
        if "$ref" in schema:
            target = self.resolve(schema["$ref"])
            return self.value(target, depth + 4) if target is not None else "any"
        if "const" in schema:
            return _literal(schema["const"])
        if "enum" in schema:
            return "(" + " | ".join(_literal(v) for v in schema["enum"]) + ")"
        for key in ("anyOf", "oneOf"):
            if key in schema:
                return "(" + " | ".join(self.value(s, depth + 1) for s in schema[key]) + ")"
        kind = schema.get("type")
        if isinstance(kind, list):
            return "(" + " | ".join(self.value({**schema, "type": k}, depth + 1) for k in kind) + ")"
        if kind == "object" or (kind is None and "properties" in schema):
            props = schema.get("properties") or {}
            if not props:
                return "obj"
            members = ' "," '.join(f'{_literal(k)} ":" {self.value(v, depth + 1)}' for k, v in props.items())
            return self.rule(f'"{{" {members} "}}"')
        if kind == "array":
            item = self.value(schema.get("items", True), depth + 1)
            return self.rule(f'"[" [{item} ("," {item})*] "]"')
        return {"string": "STR", "integer": "INT", "number": "NUM", "boolean": '("true" | "false")',
                "null": '"null"'}.get(kind, "any")

    def resolve(self, ref: str):
        if not ref.startswith("#"):
            return None
        node = self.root
        for part in ref[1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node


def _literal(value) -> str:
    return json.dumps(json.dumps(value))


def schema_to_lark(schema: dict) -> str:
    builder = _Lark(schema)
    top = builder.value(schema)
    return "\n".join([f"start: {top}", *builder.rules, LARK_TERMINALS])


def schema_valid(text: str, schema: dict) -> bool:
    import jsonschema

    try:
        value = json.loads(text)
        jsonschema.validate(value, schema, cls=jsonschema.validators.validator_for(schema))
        return True
    except Exception:  # noqa: BLE001 - anything that is not valid JSON under the schema
        return False


# ----- methods --------------------------------------------------------------------------------

async def run_unconstrained(endpoint, task, args) -> dict:
    body = {"model": endpoint.model, "prompt": task["prompt"], "max_tokens": args.max_tokens, "temperature": 0.0}
    answer = await endpoint.ask("/completions", body)
    usage = answer.get("usage") or {}
    return {"text": answer["choices"][0]["text"], "calls": 1,
            "billed": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)}


async def run_leapgram(endpoint, task, args, native: bool) -> dict:
    import leapgram

    grammar = leapgram.Grammar.from_json_schema(task["schema"])
    result = await endpoint.agenerate(grammar, messages=[{"role": "user", "content": task["user"]}],
                                      max_tokens=args.max_tokens, max_calls=args.max_calls, deadline=args.deadline,
                                      native="structured_outputs" if native else None, on_error="complete")
    cost = result.cost
    return {"text": result.text, "calls": cost.calls, "billed": cost.billed_tokens,
            "grammar_valid": result.valid, "completed_by_grammar": result.completed_by_grammar is not None,
            "repairs": dict(cost.repairs), "discarded": cost.discarded_tokens, "error": result.error}


def run_grammar_guide(tasks: list[dict], args) -> list[dict]:
    """All tasks through grammar-guide in its own environment (this file, ``--gg-worker``)."""
    payload = {"base_url": args.base_url, "model": args.model, "max_tokens": args.max_tokens,
               "lookahead": args.gg_lookahead,
               "max_calls": args.max_calls, "tasks": [{"prompt": t["prompt"], "lark": t["lark"]} for t in tasks]}
    process = subprocess.run([args.gg_python, __file__, "--gg-worker"], check=False, input=json.dumps(payload), text=True,
                             stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": ""})
    if process.returncode != 0:
        raise SystemExit(f"grammar-guide worker failed with status {process.returncode}")
    return json.loads(process.stdout.strip().splitlines()[-1])


async def run_method(method: str, tasks: list[dict], args) -> list[dict]:
    from leapgram.integrations.smollm2 import CHATML_TEMPLATE
    from leapgram.remote import Endpoint

    endpoint = Endpoint(args.base_url, model=args.model, chat_template=CHATML_TEMPLATE, server="vllm",
                        call_timeout=args.deadline)
    rows = []
    for task in tasks:
        started = time.perf_counter()
        if method == "unconstrained":
            row = await run_unconstrained(endpoint, task, args)
        else:
            row = await run_leapgram(endpoint, task, args, native=method.endswith("native"))
        row["seconds"] = time.perf_counter() - started
        rows.append(row)
        print(f"  [{method} {task['workload']} {len(rows)}/{len(tasks)}] {row['text'][:100]!r}", file=sys.stderr)
    return rows


def run_parallel(methods: list[str], tasks: list[dict], args) -> dict:
    """Every method at once, each going through the tasks in order: all see the same load."""
    import concurrent.futures

    async def ours():
        names = [m for m in methods if m != "grammar-guide"]
        return dict(zip(names, await asyncio.gather(*(run_method(m, tasks, args) for m in names))))

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        gg = pool.submit(run_grammar_guide, tasks, args) if "grammar-guide" in methods else None
        raw = asyncio.run(ours())
        if gg is not None:
            raw["grammar-guide"] = gg.result()
    return raw


def task_key(task: dict) -> str:
    return f"{task['workload']}:{task.get('name') or task['user'][:80]}"


def summarize(method: str, tasks: list[dict], rows: list[dict]) -> list[dict]:
    out = []
    for task, row in zip(tasks, rows):
        if "valid" not in row:
            row["key"] = task_key(task)
            row["valid"] = schema_valid(row["text"], task["schema"])
    for workload in dict.fromkeys(t["workload"] for t in tasks):
        pairs = [(t, r) for t, r in zip(tasks, rows) if t["workload"] == workload]
        n = len(pairs)
        out.append({"method": method, "workload": workload, "outputs": n,
                    "valid": sum(r["valid"] for _, r in pairs) / n,
                    "calls": sum(r["calls"] for _, r in pairs) / n,
                    "billed": sum(r["billed"] for _, r in pairs) / n,
                    "seconds": sum(r["seconds"] for _, r in pairs),
                    "completed_by_grammar": sum(bool(r.get("completed_by_grammar")) for _, r in pairs)})
    return out


def merge(files: list[str]) -> int:
    """The summary of several ``--out`` files over the tasks all their methods ran."""
    raw: dict[str, list] = {}
    for name in files:
        for method, rows in json.loads(Path(name).read_text())["rows"].items():
            raw.setdefault(method, []).extend(rows)
    common = set.intersection(*({r["key"] for r in rows} for rows in raw.values()))
    order = list(dict.fromkeys(r["key"] for r in next(iter(raw.values())) if r["key"] in common))
    tasks = [{"workload": key.split(":", 1)[0]} for key in order]
    lines = []
    for method, rows in raw.items():
        by_key = {r["key"]: r for r in rows}
        lines += summarize(method, tasks, [by_key[k] for k in order])
    report(lines)
    return 0


def report(lines: list[dict]) -> None:
    print(f"\n{'workload':<16} {'method':<16} {'n':>3} {'valid':>6} {'calls/out':>9} {'billed/out':>10} "
          f"{'wall s':>8} {'by grammar':>10}")
    for line in sorted(lines, key=lambda x: (x["workload"], METHODS.index(x["method"]))):
        print(f"{line['workload']:<16} {line['method']:<16} {line['outputs']:>3} {line['valid']:>6.0%} "
              f"{line['calls']:>9.2f} {line['billed']:>10.1f} {line['seconds']:>8.1f} "
              f"{line['completed_by_grammar']:>10}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:8000/v1")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--gg-python", default="/work/bench-venvs/gg/bin/python",
                        help="python of grammar-guide's own environment")
    parser.add_argument("--characters", type=int, default=5)
    parser.add_argument("--cities", type=int, default=3)
    parser.add_argument("--schemas", type=int, default=50)
    parser.add_argument("--schema-dir", default=str(HERE.parent.parent / "shared" / "jsonschemabench"))
    parser.add_argument("--max-schema-bytes", type=int, default=1200)
    parser.add_argument("--schema-limit", type=int, help="only the first N of the sampled schemas")
    parser.add_argument("--merge", nargs="+", metavar="FILE", help="summarize --out files over their common tasks")
    parser.add_argument("--shard", help="I/N: only every N-th task from the I-th (to run shards side by side)")
    parser.add_argument("--skip-done", nargs="+", metavar="FILE", help="leave out the tasks these --out files ran")
    parser.add_argument("--max-tokens", type=int, default=160, help="completion tokens per output, all calls")
    parser.add_argument("--max-calls", type=int, default=8, help="leapgram's max_calls, grammar-guide's corrections")
    parser.add_argument("--deadline", type=float, default=120.0)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--gg-lookahead", type=int, default=64, help="grammar-guide's token_lookahead per call")
    parser.add_argument("--parallel", action="store_true",
                        help="run the methods at the same time (each in task order): same load for all")
    parser.add_argument("--out", help="write the rows and the summary as JSON")
    args = parser.parse_args(argv)
    if args.merge:
        return merge(args.merge)
    tasks = workloads(args)
    if args.skip_done:
        done = {r["key"] for name in args.skip_done for rows in json.loads(Path(name).read_text())["rows"].values()
                for r in rows}
        tasks = [t for t in tasks if task_key(t) not in done]
    if args.shard:
        index, count = (int(x) for x in args.shard.split("/"))
        tasks = tasks[index::count]
    print(f"{len(tasks)} tasks: " + ", ".join(f"{w} {sum(t['workload'] == w for t in tasks)}"
                                             for w in dict.fromkeys(t["workload"] for t in tasks)), file=sys.stderr)
    methods = args.methods.split(",")
    raw = run_parallel(methods, tasks, args) if args.parallel else {}
    lines = []
    for method in methods:
        started = time.perf_counter()
        if method not in raw:
            raw[method] = run_grammar_guide(tasks, args) if method == "grammar-guide" else \
                asyncio.run(run_method(method, tasks, args))
            print(f"{method}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
        lines += summarize(method, tasks, raw[method])
    report(lines)
    if args.out:
        Path(args.out).write_text(json.dumps({"summary": lines, "rows": raw}, indent=1))
    return 0


# ----- grammar-guide's side (runs under --gg-python; imports no leapgram) -----------------------------

def gg_worker() -> int:
    import urllib.error
    import urllib.request

    import grammar_guide as gg
    import guidance
    from guidance.library._regex import UnsupportedRegexError

    payload = json.loads(sys.stdin.read())
    counter = {"calls": 0, "billed": 0}

    def post(body: dict) -> dict:
        request = urllib.request.Request(payload["base_url"] + "/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=300) as response:
            answer = json.loads(response.read())
        usage = answer.get("usage") or {}
        counter["calls"] += 1
        counter["billed"] += usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        return answer

    class Regex:  # what guidance.regex / capture / with_temperature build, reduced to the pattern
        def __init__(self, pattern: str) -> None:
            self.pattern = pattern

    class ApiTarget:  # grammar-guide's target model: the same server, constrained by the candidates' regex
        def __init__(self, prompt: str, text: str = "") -> None:
            self.prompt, self.text = prompt, text

        def __add__(self, other):
            if isinstance(other, str):
                return ApiTarget(self.prompt, self.text + other)
            body = {"model": payload["model"], "prompt": self.prompt + self.text, "max_tokens": 32,
                    "temperature": 0.0, "structured_outputs": {"regex": other.pattern}}
            try:
                return {"res": post(body)["choices"][0]["text"]}
            except urllib.error.HTTPError as exc:  # the server refuses the regex: gg retries with literals
                raise UnsupportedRegexError(str(exc)) from exc

    guidance.regex = lambda pattern: Regex(pattern)
    guidance.capture = lambda grammar, name: grammar
    guidance.with_temperature = lambda grammar, temperature: grammar
    rows = []
    for task in payload["tasks"]:
        def draft(prefix: str, prompt: str, max_new_tokens: int) -> str:
            body = {"model": payload["model"], "prompt": prompt + prefix, "temperature": 0.0,
                    "max_tokens": max(1, max_new_tokens)}
            return post(body)["choices"][0]["text"]

        counter.update(calls=0, billed=0)
        started = time.perf_counter()
        try:
            parser = gg.load_parser(task["lark"])
            out = gg.guide(draft_model=draft, parser=parser, prompt=task["prompt"],
                           target_model=ApiTarget(task["prompt"]), max_grammar_corrections=payload["max_calls"],
                           token_lookahead=payload["lookahead"], save_html=False, verbose=False)
            text, error = out.response, None
        except Exception as exc:  # noqa: BLE001 - its failures are outputs too
            text, error = "", f"{type(exc).__name__}: {exc}"[:300]
        rows.append({"text": text, "calls": counter["calls"], "billed": counter["billed"],
                     "seconds": time.perf_counter() - started, "error": error})
        print(f"  [grammar-guide {len(rows)}/{len(payload['tasks'])}] {text[:100]!r} {error or ''}", file=sys.stderr)
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(gg_worker() if sys.argv[1:] == ["--gg-worker"] else main())
