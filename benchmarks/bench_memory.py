"""Memory per engine: RSS of the vocabulary, of a compiled grammar and of a matcher, beside the peers.

``python benchmarks/bench_memory.py [FOLDER] [--vs llguidance,xgrammar] [--copies 20] [--matchers 100] [--mixed 80]``
``.venv-vllm/bin/python benchmarks/bench_memory.py --serving 3 [--cache-size 128] [--cache-mb 64]``

Each engine runs in a fresh process (``bench_schemas.py``'s engine adapters). Measured as growth of
the resident set (``VmRSS``, after ``gc.collect()``) and of what glibc's malloc holds (``mallinfo2``;
RSS misses memory reused from earlier frees, malloc misses Python's object arenas):

* *vocabulary*: the engine's start-up after its import (leapgram: after ``warm_up()`` loaded
  the kernels, the vocabulary, its token trie and slices and the JSON Schema base pool, i.e.
  ``warm_up(vocab)``; peers: their tokenizer tables);
* *per compiled grammar*: compiled copies of one schema kept alive, each with the masks of one
  valid instance computed (leapgram caches them in the compiled grammar): the growth from a
  fifth of ``--copies`` to all of them, divided by their difference (memory freed earlier is
  reused first, so the first copies look cheaper than they are);
* *per matcher*: the same with ``--matchers`` matchers of one compiled grammar kept alive, each
  advanced through that instance.

* *per compiled grammar, mixed* (``--mixed N``): the same growth over ``N`` different tool-call
  schemas (BFCL and Glaiveai2K, evenly spaced), each compiled once with the masks of one valid
  instance: copies of one schema flatter an engine that shares masks by content (leapgram's
  ``RowStore``), different schemas share only the masks they really have in common.

* *serving* (``--serving ROUNDS``, in ``.venv-vllm``: it takes ``bench_vllm.py``'s requests): a
  long-lived vLLM backend's grammar cache outside vLLM, SmolLM2's vocabulary, ``GrammarCache``
  (``--cache-size``, ``--cache-mb``) and a ``Matcher`` per request as the backend uses them
  (``warm_first_masks``, then a mask per token of the schema's valid instance, at most
  ``--max-tokens``), ``bench_vllm --persistent``'s rounds of 64 new schemas and 4 characters:
  per round the RSS and GC-tracked objects grown since start-up, the cache's own estimate
  (``memory_of``) and the thread time of one full ``gc.collect()`` (with vLLM imported, as in
  an engine); per compiled grammar (median, max) its estimate (``memory_of``). ``docs/design/memory.md`` has the figures.

The schemas are the dev set's median and largest (by the size of the schema's JSON text) among
those that have a valid instance; a single number per schema is a rough figure (the allocator
keeps freed memory), so copies and matchers are averaged over many.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_schemas import DEFAULT_FOLDER, ENGINES, load_cases, resolve_tokenizer


def rss_mb() -> float:
    gc.collect()
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def malloc_mb() -> float:
    """Bytes glibc's malloc has handed out and not taken back (``mallinfo2``: heap in use plus
    mmapped chunks), in MB. Unlike RSS it grows when freed pages are reused (a C++ engine's
    compiled grammars can fit in memory its start-up freed), but it misses Python's own object
    arenas; the report gives both."""
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    info = libc.mallinfo2()
    return (info.uordblks + info.hblkhd) / 2**20


def usage() -> tuple[float, float]:
    return rss_mb(), malloc_mb()


def measure(engine_name: str, tokenizer_json: Path, case_path: Path, copies: int, matchers: int) -> dict:
    """Run in the child process: the three figures for one engine and one schema."""
    with tempfile.TemporaryDirectory() as folder:  # load_cases reads a folder: one link in it
        (Path(folder) / case_path.name).symlink_to(case_path.resolve())
        case = load_cases(Path(folder), tokenizer_json, None, None)[0]
    tokens = next(t for valid, t in case.instances if valid)
    _import_engine(engine_name)
    before = usage()
    engine = ENGINES[engine_name](tokenizer_json)
    after_vocab = usage()
    kept = []
    grammar_use = []
    for count in (copies // 5, copies):  # the slope between two counts: freed memory is reused first
        while len(kept) < count:
            engine.prepare()  # forget the compiler's cache: a new compiled grammar each time
            compiled = engine.compile(case.schema)
            walk(engine, engine.matcher(compiled), tokens)
            kept.append(compiled)
        grammar_use.append(usage())
    alive = []
    matcher_use = []
    for count in (matchers // 5, matchers):
        while len(alive) < count:
            matcher = engine.matcher(kept[0])
            walk(engine, matcher, tokens, fill=False)
            alive.append(matcher)
        matcher_use.append(usage())
    per_grammar = [(b - a) * 1024 / (copies - copies // 5) for a, b in zip(*grammar_use)]
    per_matcher = [(b - a) * 1024 / (matchers - matchers // 5) for a, b in zip(*matcher_use)]
    return {"engine": engine_name, "schema": case.name, "schema_bytes": len(case.schema), "tokens": len(tokens),
            "vocabulary_mb": {"rss": round(after_vocab[0] - before[0], 1), "malloc": round(after_vocab[1] - before[1], 1)},
            "per_grammar_kb": {"rss": round(per_grammar[0], 1), "malloc": round(per_grammar[1], 1)},
            "per_matcher_kb": {"rss": round(per_matcher[0], 2), "malloc": round(per_matcher[1], 2)}}


def measure_mixed(engine_name: str, tokenizer_json: Path, case_paths: list[Path]) -> dict:
    """Run in the child process: the growth per compiled grammar over different schemas."""
    with tempfile.TemporaryDirectory() as folder:
        for path in case_paths:
            (Path(folder) / path.name).symlink_to(path.resolve())
        cases = load_cases(Path(folder), tokenizer_json, None, None)
    _import_engine(engine_name)
    engine = ENGINES[engine_name](tokenizer_json)
    kept, use, failed = [], [], 0
    for part in (cases[: len(cases) // 5], cases[len(cases) // 5 :]):
        for case in part:
            tokens = next(t for valid, t in case.instances if valid)
            try:
                compiled = engine.compile(case.schema)
            except Exception:  # noqa: BLE001 -- a schema this engine refuses: counted, not kept
                failed += 1
                continue
            walk(engine, engine.matcher(compiled), tokens)
            kept.append(compiled)
        engine.prepare()  # the compiler's cache forgets them; ``kept`` holds them
        use.append((usage(), len(kept)))
    (low, count_low), (high, count_high) = use
    per_grammar = [(b - a) * 1024 / max(1, count_high - count_low) for a, b in zip(low, high)]
    return {"engine": engine_name, "schema": f"mixed tool calls ({len(cases)})", "compiled": len(kept),
            "failed": failed, "per_grammar_kb": {"rss": round(per_grammar[0], 1), "malloc": round(per_grammar[1], 1)}}


def measure_serving(rounds: int, cache_size: int, cache_mb: float, max_tokens: int) -> list[str]:
    """The ``--serving`` figures (see the module's docstring), as lines of text."""
    import statistics

    import numpy as np
    from bench_vllm import requests
    from transformers import PreTrainedTokenizerFast

    from leapgram import Matcher, Vocabulary
    from leapgram.compiler import memory_of
    from leapgram.integrations import vllm as backend

    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(resolve_tokenizer("smollm2")))
    vocab = Vocabulary.from_huggingface(tokenizer)
    batches = requests(argparse.Namespace(schemas=64, characters=4), rounds)
    cache = backend.GrammarCache(backend._compiler_for(vocab), cache_size,
                                 max_bytes=int(cache_mb * 2**20) if cache_mb > 0 else None)
    backend.warm_up(cache.compiler)
    scratch = np.zeros((vocab.size + 31) // 32, dtype=np.int32)
    start_rss, start_objects = rss_mb(), len(gc.get_objects())
    lines, kept = [(f"start: RSS {start_rss:.0f} MB, {start_objects} GC-tracked objects, "
                    f"full collection {full_collection_ms():.1f} ms")], {}
    for number, batch in enumerate(batches, 1):
        for request in batch:
            compiled = cache.get("JSON", json.dumps(request["schema"]))
            matcher = Matcher(compiled)
            backend.warm_first_masks(matcher)
            for token in tokenizer.encode(json.dumps(serving_instance(request)), add_special_tokens=False)[:max_tokens]:
                matcher.fill_next_token_bitmask(scratch, 0)
                if not matcher.consume_token(token):
                    break
            kept[id(compiled)] = memory_of([compiled]) / 1024
        lines.append(f"round {number}: {len(cache)} cached, estimate {cache.memory_bytes() / 2**20:.1f} MB; "
                     f"RSS +{rss_mb() - start_rss:.1f} MB, GC-tracked objects +{len(gc.get_objects()) - start_objects}, "
                     f"full collection {full_collection_ms():.1f} ms")
    sizes = list(kept.values())
    lines.append(f"per compiled grammar ({len(sizes)}, memory_of after its request): median "
                 f"{statistics.median(sizes):.0f} KB, max {max(sizes):.0f} KB")
    return lines


def serving_instance(request: dict) -> object:
    """The valid instance a ``--serving`` request walks: the schema's first, or a character."""
    if request["workload"] == "character":
        return {"name": request["name"], "house": "Gryffindor", "blood status": "Half-blood",
                "occupation": "student", "wand": {"wood": "holly", "core": "phoenix feather", "length": 11},
                "alive": "Alive", "patronus": "stag"}
    case = json.loads((DEFAULT_FOLDER / f"{request['name']}.json").read_text(encoding="utf-8"))
    return next(t["data"] for t in case["tests"] if t.get("valid"))


def full_collection_ms(repeats: int = 5) -> float:
    """Thread CPU time of one full ``gc.collect()``, the median of ``repeats``."""
    import time

    times = []
    for _ in range(repeats):
        start = time.thread_time()
        gc.collect()
        times.append(time.thread_time() - start)
    return sorted(times)[repeats // 2] * 1e3


def _import_engine(name: str) -> None:
    """Load the engine's modules (leapgram: also its kernels, over the byte vocabulary), so the
    vocabulary figure is what one more vocabulary costs."""
    if name.startswith("leapgram"):
        import leapgram

        leapgram.warm_up()
    elif name == "llguidance":
        import llguidance
        import llguidance.numpy  # noqa: F401
    else:
        import transformers  # noqa: F401
        import xgrammar  # noqa: F401


def walk(engine, matcher, tokens: list[int], fill: bool = True) -> None:
    for token in tokens:
        if fill:
            engine.fill(matcher)
        if not engine.consume(matcher, token):
            break


def pick_schemas(folder: Path) -> list[Path]:
    """The median and the largest schema (JSON text size) with a valid instance."""
    sized = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if any(t.get("valid") for t in data.get("tests", [])):
            sized.append((len(json.dumps(data["schema"])), path))
    sized.sort()
    return [sized[len(sized) // 2][1], sized[-1][1]]


def tool_call_schemas(folder: Path, count: int) -> list[Path]:
    """``count`` BFCL and Glaiveai2K cases with a valid instance, evenly spaced in file order."""
    found = []
    for path in sorted([*folder.glob("BFCL_*.json"), *folder.glob("Glaiveai2K*.json")]):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if any(t.get("valid") for t in data.get("tests", [])):
            found.append(path)
    return [found[i * len(found) // count] for i in range(min(count, len(found)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", help="benchmark folder (default: ../shared/jsonschemabench)")
    parser.add_argument("--tokenizer", default="llama3")
    parser.add_argument("--vs", default="llguidance,xgrammar")
    parser.add_argument("--copies", type=int, default=60)
    parser.add_argument("--matchers", type=int, default=300)
    parser.add_argument("--schema", action="append", help="a case file to measure (default: median and largest)")
    parser.add_argument("--mixed", type=int, default=0, metavar="N",
                        help="instead: per compiled grammar over N different tool-call schemas")
    parser.add_argument("--serving", type=int, default=0, metavar="ROUNDS",
                        help="instead: a long-lived vLLM backend's grammar cache over ROUNDS of bench_vllm's requests")
    parser.add_argument("--cache-size", type=int, default=128, help="--serving: GrammarCache's size")
    parser.add_argument("--cache-mb", type=float, default=0, help="--serving: GrammarCache's max MB (0: none)")
    parser.add_argument("--max-tokens", type=int, default=64, help="--serving: tokens walked per request")
    parser.add_argument("--child", nargs=2, metavar=("ENGINE", "CASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serving:
        print("\n".join(measure_serving(args.serving, args.cache_size, args.cache_mb, args.max_tokens)))
        return 0
    tokenizer = resolve_tokenizer(args.tokenizer)
    if args.child:
        engine, cases = args.child[0], [Path(c) for c in args.child[1].split(",")]
        print(json.dumps(measure_mixed(engine, tokenizer, cases) if len(cases) > 1 else
                         measure(engine, tokenizer, cases[0], args.copies, args.matchers)))
        return 0
    folder = Path(args.folder) if args.folder else DEFAULT_FOLDER
    if args.mixed:
        runs = [",".join(str(p) for p in tool_call_schemas(folder, args.mixed))]
    else:
        runs = [str(s) for s in args.schema] if args.schema else [str(p) for p in pick_schemas(folder)]
    engines = ["leapgram", *[p for p in args.vs.split(",") if p]]
    for cases in runs:
        for name in engines:
            command = [sys.executable, __file__, "--tokenizer", str(tokenizer), "--copies", str(args.copies),
                       "--matchers", str(args.matchers), "--child", name, cases]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            lines = done.stdout.strip().splitlines()
            print(lines[-1] if done.returncode == 0 and lines else
                  json.dumps({"engine": name, "schema": Path(cases.split(",")[0]).stem,
                              "error": done.stderr.strip()[-300:]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
