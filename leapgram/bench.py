"""``leapgram bench``: JSONSchemaBench's pass criterion, TTFM and TBM, leapgram next to its peers.

A case is one file of the benchmark folder (``schema`` and ``tests``, see
``../shared/jsonschemabench/SOURCE.md``). Each instance is serialized as MaskBench does,
``json.dumps(data, ensure_ascii=False)``, and tokenized once, in this process, with the model's
``tokenizers.Tokenizer`` (``add_special_tokens=False``); every engine gets the same token ids.

Per engine and case:

* **TTFM**: compile the schema (leapgram's compile cache cleared first, a fresh ``LLMatcher``, an
  uncached xgrammar ``GrammarCompiler``) and fill the first mask;
* each valid instance: a fresh matcher, one ``fill`` per token (timed: **TBM**), the token must be
  allowed by the matcher, and after the last token one more fill whose mask must allow EOS;
* each invalid instance must be refused at some token or have EOS disallowed at the end;
* a *pass*: it compiled, every valid instance accepted, every invalid one rejected.

Process pattern: each engine runs in its own worker process (spawned, the tokenizer and engine
loaded and warmed up once before any timing); the parent sends one case at a time and waits at
most ``timeout_s``. A worker that overruns is killed and replaced, so a hang in compile costs one
case, never the run; a worker that dies is a ``crash`` for that case. One case's failure never
stops the run.

Errors are counted by kind: ``GrammarError``, ``UnsupportedError: <feature>``,
``BudgetExceeded: <limit>`` (leapgram), ``compile error`` (a peer refused the schema),
``timeout``, ``crash`` and ``missing`` (leapgram's JSON Schema front end absent).

Nothing here is imported by ``import leapgram``; tqdm is imported when the command runs and
matplotlib only with ``--png``.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ENGINES = ("leapgram", "llguidance", "xgrammar")
STARTUP_TIMEOUT_S = 300.0
WARMUP_SCHEMA = {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}}
WARMUP_LARK = 'start: "[" (NUM ("," NUM)*)? "]"\nNUM: /[0-9]+/'
MISSING_FRONT_END = "missing"


def shared_folder() -> Path:
    """``../shared`` beside the source checkout."""
    return Path(__file__).resolve().parents[2] / "shared"


def tokenizer_json(name_or_path: str) -> Path:
    """A tokenizer name in ``../shared/tokenizers`` (``llama3``) or a path to a file or folder."""
    path = Path(name_or_path)
    if not path.exists():
        path = shared_folder() / "tokenizers" / name_or_path
    if path.is_dir():
        path = path / "tokenizer.json"
    if not path.is_file():
        raise SystemExit(f"no tokenizer {name_or_path!r}: expected ../shared/tokenizers/{name_or_path}/tokenizer.json "
                         "or a path to a tokenizer.json")
    return path


# ----- cases ----------------------------------------------------------------------------------


@dataclass
class Case:
    """One schema and its instances as token ids."""

    name: str
    schema: Any
    valid: list[list[int]]
    invalid: list[list[int]]


def evenly_spaced(items: list[Any], count: int | None) -> list[Any]:
    """``count`` items spread over ``items`` in order (all of them when ``count`` is None)."""
    if count is None or count >= len(items):
        return list(items)
    return [items[i * len(items) // count] for i in range(count)]


def case_files(folder: Path, limit: int | None) -> list[Path]:
    if not folder.is_dir():
        raise SystemExit(f"benchmark folder {folder} not found: put JSONSchemaBench cases in "
                         "../shared/jsonschemabench beside the repository or pass FOLDER")
    files = sorted(folder.glob("*.json"))
    if not files:
        raise SystemExit(f"no *.json cases in {folder}")
    return evenly_spaced(files, limit)


def load_case(path: Path, tokenizer: Any) -> Case:
    """Read one case file; an unreadable file becomes a case whose schema is ``None``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        tests = data.get("tests", [])
        schema = data["schema"]
    except (OSError, ValueError, KeyError, AttributeError):
        return Case(path.stem, None, [], [])
    valid = [instance_tokens(tokenizer, t["data"]) for t in tests if t.get("valid")]
    invalid = [instance_tokens(tokenizer, t["data"]) for t in tests if not t.get("valid")]
    return Case(path.stem, schema, valid, invalid)


def instance_tokens(tokenizer: Any, data: Any) -> list[int]:
    """``data`` serialized as MaskBench does and tokenized without special tokens."""
    return tokenizer.encode(json.dumps(data, ensure_ascii=False), add_special_tokens=False).ids


# ----- engines (run inside a worker) ------------------------------------------------------------


class LeapgramEngine:
    """leapgram: ``Grammar.from_json_schema`` + ``compile`` + ``Matcher``."""

    def __init__(self, path: Path, eos_ids: list[int]) -> None:
        import leapgram

        from .cli import load_vocabulary

        self.lg = leapgram
        self.vocab = load_vocabulary(str(path))
        self.eos_ids = eos_ids
        if not hasattr(leapgram.Grammar, "from_json_schema"):
            return
        for grammar in (leapgram.Grammar.from_regex("[a-z]+"), leapgram.Grammar.from_lark(WARMUP_LARK)):
            matcher = leapgram.Matcher(leapgram.compile(grammar, self.vocab))
            matcher.consume_tokens(self.vocab.encode(b"[12,3"))
            matcher.compute_mask()

    def compile(self, schema: Any) -> Any:
        self.lg.clear_cache()
        if not hasattr(self.lg.Grammar, "from_json_schema"):
            raise FrontEndMissing()
        try:
            grammar = self.lg.Grammar.from_json_schema(schema)
        except ImportError as exc:
            raise FrontEndMissing() from exc
        return self.lg.compile(grammar, self.vocab)

    def start(self, compiled: Any) -> Any:
        return self.lg.Matcher(compiled)

    def allocate(self) -> np.ndarray:
        return self.lg.allocate_token_bitmask(1, self.vocab.size)

    def fill(self, matcher: Any, bitmask: Any) -> None:
        matcher.fill_next_token_bitmask(bitmask, 0)

    def consume(self, matcher: Any, token: int) -> bool:
        return matcher.consume_token(token)

    def error_kind(self, exc: BaseException) -> str:
        from .errors import BudgetExceededError, GrammarError, UnsupportedError

        if isinstance(exc, FrontEndMissing):
            return MISSING_FRONT_END
        if isinstance(exc, UnsupportedError):
            return f"UnsupportedError: {exc.feature}"
        if isinstance(exc, GrammarError):
            return "GrammarError"
        if isinstance(exc, BudgetExceededError):
            return f"BudgetExceeded: {exc.limit}"
        return "crash"


class LlguidanceEngine:
    """llguidance: ``LLMatcher`` on ``grammar_from_json_schema``; one matcher per case, a
    ``deep_copy`` of it per instance."""

    def __init__(self, path: Path, eos_ids: list[int]) -> None:
        import llguidance
        import llguidance.numpy

        self.llg = llguidance
        self.np = llguidance.numpy
        self.tokenizer = llguidance.LLTokenizer(str(path))
        self.eos_ids = eos_ids
        matcher = self.compile(WARMUP_SCHEMA)
        self.fill(matcher, self.allocate())

    def compile(self, schema: Any) -> Any:
        grammar = self.llg.LLMatcher.grammar_from_json_schema(json.dumps(schema))
        matcher = self.llg.LLMatcher(self.tokenizer, grammar, log_level=0)
        if matcher.is_error():
            raise PeerRefused(matcher.get_error())
        return matcher

    def start(self, compiled: Any) -> Any:
        return compiled.deep_copy()

    def allocate(self) -> np.ndarray:
        return self.np.allocate_token_bitmask(1, self.tokenizer.vocab_size)

    def fill(self, matcher: Any, bitmask: Any) -> None:
        self.np.fill_next_token_bitmask(matcher, bitmask, 0)

    def consume(self, matcher: Any, token: int) -> bool:
        return bool(matcher.consume_token(token))

    def error_kind(self, exc: BaseException) -> str:
        return "compile error" if isinstance(exc, (PeerRefused, ValueError, RuntimeError, TypeError)) else "crash"


class XgrammarEngine:
    """XGrammar: ``GrammarCompiler(cache_enabled=False).compile_json_schema`` (default options:
    any whitespace, so MaskBench's ``", "`` and ``": "`` separators match) and a fresh
    ``GrammarMatcher`` per instance."""

    def __init__(self, path: Path, eos_ids: list[int]) -> None:
        import xgrammar
        from transformers import PreTrainedTokenizerFast

        self.xgr = xgrammar
        hf = PreTrainedTokenizerFast(tokenizer_file=str(path))
        self.info = xgrammar.TokenizerInfo.from_huggingface(hf, stop_token_ids=eos_ids)
        self.eos_ids = eos_ids
        matcher = self.start(self.compile(WARMUP_SCHEMA))
        self.fill(matcher, self.allocate())

    def compile(self, schema: Any) -> Any:
        compiler = self.xgr.GrammarCompiler(self.info, cache_enabled=False)
        return compiler.compile_json_schema(json.dumps(schema))

    def start(self, compiled: Any) -> Any:
        return self.xgr.GrammarMatcher(compiled)

    def allocate(self) -> Any:
        return self.xgr.allocate_token_bitmask(1, self.info.vocab_size)

    def fill(self, matcher: Any, bitmask: Any) -> None:
        matcher.fill_next_token_bitmask(bitmask, 0)

    def consume(self, matcher: Any, token: int) -> bool:
        return bool(matcher.accept_token(token))

    def error_kind(self, exc: BaseException) -> str:
        return "compile error" if isinstance(exc, (RuntimeError, ValueError, TypeError)) else "crash"


ENGINE_CLASSES = {"leapgram": LeapgramEngine, "llguidance": LlguidanceEngine, "xgrammar": XgrammarEngine}


class FrontEndMissing(Exception):
    """leapgram has no ``Grammar.from_json_schema`` yet."""


class PeerRefused(Exception):
    """A peer engine reported an error compiling the schema."""


def allows_any(bitmask: Any, tokens: list[int]) -> bool:
    row = np.asarray(bitmask)[0].view(np.uint32)
    return any(bool((int(row[t // 32]) >> (t % 32)) & 1) for t in tokens)


@dataclass
class CaseResult:
    """What one engine did on one case (times in ms for TTFM, µs for TBM)."""

    name: str
    error: str | None = None
    detail: str = ""
    ttfm_ms: float | None = None
    valid: int = 0
    valid_accepted: int = 0
    invalid: int = 0
    invalid_rejected: int = 0
    tbm_us: list[float] = field(default_factory=list)

    @property
    def compiled(self) -> bool:
        return self.error is None

    @property
    def passed(self) -> bool:
        return self.compiled and self.valid_accepted == self.valid and self.invalid_rejected == self.invalid


def run_case(engine: Any, case: Case) -> CaseResult:
    """Compile, first mask, then every instance (see the module docstring)."""
    result = CaseResult(case.name, valid=len(case.valid), invalid=len(case.invalid))
    bitmask = engine.allocate()
    try:
        if case.schema is None:
            raise ValueError("the case file is not a JSON object with a schema")
        began = time.perf_counter()
        compiled = engine.compile(case.schema)
        engine.fill(engine.start(compiled), bitmask)
        result.ttfm_ms = (time.perf_counter() - began) * 1e3
    except Exception as exc:  # noqa: BLE001 - every failure is counted by kind
        result.error, result.detail = engine.error_kind(exc), f"{type(exc).__name__}: {exc}"[:300]
        return result
    try:
        for tokens in case.valid:
            result.valid_accepted += walk_instance(engine, compiled, tokens, bitmask, result.tbm_us)
        for tokens in case.invalid:
            result.invalid_rejected += not walk_instance(engine, compiled, tokens, bitmask, None)
    except Exception as exc:  # noqa: BLE001
        result.error, result.detail = "crash", f"while matching: {type(exc).__name__}: {exc}"[:300]
    return result


def walk_instance(engine: Any, compiled: Any, tokens: list[int], bitmask: Any, tbm_us: list[float] | None) -> bool:
    """Whether the engine takes every token and then allows EOS; fills are timed into ``tbm_us``."""
    matcher = engine.start(compiled)
    for token in tokens:
        timed_fill(engine, matcher, bitmask, tbm_us)
        if not engine.consume(matcher, token):
            return False
    timed_fill(engine, matcher, bitmask, tbm_us)
    return allows_any(bitmask, engine.eos_ids)


def timed_fill(engine: Any, matcher: Any, bitmask: Any, tbm_us: list[float] | None) -> None:
    began = time.perf_counter()
    engine.fill(matcher, bitmask)
    if tbm_us is not None:
        tbm_us.append((time.perf_counter() - began) * 1e6)


def engine_class(name: str) -> Any:
    """A built-in engine, or ``module:Class`` for an adapter of your own (the same methods as
    :class:`LlguidanceEngine`)."""
    if ":" not in name:
        return ENGINE_CLASSES[name]
    import importlib

    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


def worker_main(name: str, path: str, eos_ids: list[int], log: str | None, conn: Any) -> None:
    """The worker loop: load the engine, say ``ready`` (or why not), then answer cases.

    The engine's own messages (XGrammar prints a warning per approximated keyword) go to the
    file ``log`` instead of the terminal.
    """
    if log:
        with open(log, "a", encoding="utf-8") as sink:
            os.dup2(sink.fileno(), 2)
    try:
        engine = engine_class(name)(Path(path), eos_ids)
    except Exception as exc:  # noqa: BLE001 - reported to the parent as "unavailable"
        conn.send(("unavailable", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", ""))
    while True:
        case = conn.recv()
        if case is None:
            return
        conn.send(asdict(run_case(engine, case)))


# ----- the parent side ----------------------------------------------------------------------------


class Worker:
    """One engine in a child process; killed and replaced when a case overruns its budget."""

    def __init__(self, name: str, path: Path, eos_ids: list[int], log: Path | None = None) -> None:
        self.name = name
        self.args = (name, str(path), eos_ids, str(log) if log else None)
        self.context = multiprocessing.get_context("spawn")
        self.process: Any = None
        self.conn: Any = None

    def start(self) -> None:
        """Start the child and wait until it is ready; raises ``RuntimeError`` if it can't be."""
        self.conn, child = self.context.Pipe()
        self.process = self.context.Process(target=worker_main, args=(*self.args, child), daemon=True)
        self.process.start()
        child.close()
        if not self.conn.poll(STARTUP_TIMEOUT_S):
            self.stop()
            raise RuntimeError(f"{self.name} did not start within {STARTUP_TIMEOUT_S:.0f} s")
        try:
            status, message = self.conn.recv()
        except EOFError:
            status, message = "unavailable", "the worker died while loading"
        if status != "ready":
            self.stop()
            raise RuntimeError(message)

    def run(self, case: Case, timeout_s: float) -> CaseResult:
        if self.process is None:
            self.start()
        self.conn.send(case)
        if not self.conn.poll(timeout_s):
            self.stop()
            return CaseResult(case.name, "timeout", f"no answer within {timeout_s:g} s",
                              valid=len(case.valid), invalid=len(case.invalid))
        try:
            return CaseResult(**self.conn.recv())
        except EOFError:
            self.stop()
            return CaseResult(case.name, "crash", "the worker process died",
                              valid=len(case.valid), invalid=len(case.invalid))

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.join()
        self.process = None


def run_engine(name: str, path: Path, eos_ids: list[int], cases: list[Case], timeout_s: float,
               progress: bool = True, log: Path | None = None) -> list[CaseResult] | str:
    """Results of ``name`` on every case, or why the engine is unavailable."""
    from tqdm import tqdm

    worker = Worker(name, path, eos_ids, log)
    try:
        worker.start()
    except RuntimeError as exc:
        return str(exc)
    results = []
    try:
        for case in tqdm(cases, desc=name, unit="case", disable=not progress):
            try:
                results.append(worker.run(case, timeout_s))
            except RuntimeError as exc:
                results.append(CaseResult(case.name, "crash", f"worker restart failed: {exc}"))
    finally:
        if worker.process is not None:
            worker.conn.send(None)
            worker.process.join(5)
            worker.stop()
    return results


# ----- the report ---------------------------------------------------------------------------------


def percentiles(values: list[float], points: tuple[int, ...]) -> dict[str, float | None]:
    if not values:
        return {f"p{p}": None for p in points} | {"max": None, "mean": None}
    array = np.asarray(values)
    out = {f"p{p}": float(np.percentile(array, p)) for p in points}
    return out | {"max": float(array.max()), "mean": float(array.mean())}


def summarize(results: list[CaseResult]) -> dict[str, Any]:
    errors: dict[str, int] = {}
    for r in results:
        if r.error:
            errors[r.error] = errors.get(r.error, 0) + 1
    return {
        "cases": len(results),
        "compiled": sum(r.compiled for r in results),
        "passing": sum(r.passed for r in results),
        "valid_rejected": sum(r.valid - r.valid_accepted for r in results if r.compiled),
        "invalid_accepted": sum(r.invalid - r.invalid_rejected for r in results if r.compiled),
        "errors": dict(sorted(errors.items())),
        "ttfm_ms": percentiles([r.ttfm_ms for r in results if r.ttfm_ms is not None], (50, 90, 99)),
        "tbm_us": percentiles([t for r in results for t in r.tbm_us], (50, 99)),
        "masks": sum(len(r.tbm_us) for r in results),
    }


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def format_report(summaries: dict[str, dict[str, Any] | str]) -> str:
    """The summaries as one table, an engine per column (an unavailable engine says why)."""
    names = list(summaries)
    ok = {n: s for n, s in summaries.items() if isinstance(s, dict)}
    kinds = sorted({k for s in ok.values() for k in s["errors"]})
    rows: list[tuple[str, list[str]]] = []
    for label, key in (("cases", "cases"), ("compiled", "compiled"), ("passing", "passing"),
                       ("valid rejected", "valid_rejected"), ("invalid accepted", "invalid_accepted"),
                       ("masks timed", "masks")):
        rows.append((label, [str(ok[n][key]) if n in ok else "-" for n in names]))
    for kind in kinds:
        rows.append((f"errors: {kind}", [str(ok[n]["errors"].get(kind, 0)) if n in ok else "-" for n in names]))
    for stat in ("p50", "p90", "p99", "max"):
        rows.append((f"TTFM {stat} (ms)", [_number(ok[n]["ttfm_ms"][stat]) if n in ok else "-" for n in names]))
    for stat in ("mean", "p50", "p99", "max"):
        rows.append((f"TBM {stat} (µs)", [_number(ok[n]["tbm_us"][stat]) if n in ok else "-" for n in names]))
    width = max(14, *(len(n) for n in names)) + 2
    label_width = max(len(label) for label, _ in rows) + 2
    lines = [" " * label_width + "".join(n.rjust(width) for n in names)]
    lines += [label.ljust(label_width) + "".join(v.rjust(width) for v in values) for label, values in rows]
    lines += [f"{n}: unavailable: {s}" for n, s in summaries.items() if isinstance(s, str)]
    return "\n".join(lines)


def write_png(path: Path, results: dict[str, list[CaseResult]], summaries: dict[str, Any]) -> None:
    """Pass counts and the distributions of TTFM and TBM, one colour per engine."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (bars, ttfm, tbm) = plt.subplots(1, 3, figsize=(15, 4.5))
    names = list(results)
    bars.bar(names, [summaries[n]["compiled"] for n in names], color="#cccccc", label="compiled")
    bars.bar(names, [summaries[n]["passing"] for n in names], color="#3b7dd8", label="passing")
    bars.set_title(f"cases ({max((summaries[n]['cases'] for n in names), default=0)})")
    bars.legend()
    for axis, values, title in ((ttfm, lambda n: [r.ttfm_ms for r in results[n] if r.ttfm_ms is not None],
                                 "TTFM (ms), compile + first mask"),
                                (tbm, lambda n: [t for r in results[n] for t in r.tbm_us], "TBM (µs), one mask")):
        for name in names:
            data = np.sort(np.asarray(values(name)))
            if len(data):
                axis.plot(data, np.arange(1, len(data) + 1) / len(data), label=name)
        axis.set_xscale("log")
        axis.set_ylabel("fraction ≤ x")
        axis.set_title(title)
        axis.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def load_cases(folder: Path, limit: int | None, path: Path) -> list[Case]:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    return [load_case(file, tokenizer) for file in case_files(folder, limit)]


def run_bench(args: Any) -> int:
    """The ``leapgram bench`` command (arguments from :func:`add_arguments`)."""
    from .cli import load_vocabulary

    folder = Path(args.folder) if args.folder else shared_folder() / "jsonschemabench"
    path = tokenizer_json(args.tokenizer)
    cases = load_cases(folder, args.limit, path)
    eos_ids = [int(t) for t in load_vocabulary(str(path)).eos_token_ids]
    engines = ["leapgram", *[n for n in (args.vs or "").split(",") if n]]
    unknown = [n for n in engines if n not in ENGINE_CLASSES and ":" not in n]
    if unknown:
        raise SystemExit(f"unknown engine(s) {', '.join(unknown)}: choose from {', '.join(ENGINES)}")
    print(f"{len(cases)} cases from {folder}, tokenizer {path.parent.name}, {args.timeout_s:g} s per case")
    results: dict[str, list[CaseResult]] = {}
    summaries: dict[str, dict[str, Any] | str] = {}
    for name in engines:
        outcome = run_engine(name, path, eos_ids, cases, args.timeout_s, progress=not args.no_progress,
                             log=engine_log(args))
        if isinstance(outcome, str):
            summaries[name] = outcome
            print(f"{name}: unavailable: {outcome}")
            continue
        results[name] = outcome
        summaries[name] = summarize(outcome)
    if "leapgram" in results and all(r.error == MISSING_FRONT_END for r in results["leapgram"]):
        print("leapgram: JSON Schema front end missing (no Grammar.from_json_schema in this version)")
    print(format_report(summaries))
    if args.json:
        write_json(Path(args.json), folder, path, args, summaries, results)
    if args.png:
        write_png(Path(args.png), results, {n: s for n, s in summaries.items() if isinstance(s, dict)})
    return 0


def engine_log(args: Any) -> Path | None:
    """Where the workers' stderr goes (``None``: the terminal)."""
    if args.log == "-":
        return None
    if args.log:
        return Path(args.log)
    return Path(args.json + ".log") if args.json else Path(os.devnull)


def write_json(out: Path, folder: Path, path: Path, args: Any, summaries: dict[str, Any],
               results: dict[str, list[CaseResult]]) -> None:
    def case_row(r: CaseResult) -> dict[str, Any]:
        row = asdict(r)
        row.pop("tbm_us")
        tbm = percentiles(r.tbm_us, (50,))
        return row | {"passed": r.passed, "masks": len(r.tbm_us), "tbm_mean_us": tbm["mean"], "tbm_max_us": tbm["max"]}

    report = {
        "folder": str(folder), "tokenizer": str(path), "limit": args.limit, "timeout_s": args.timeout_s,
        "summaries": summaries,
        "cases": {name: [case_row(r) for r in rs] for name, rs in results.items()},
    }
    out.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")


def add_arguments(parser: Any) -> None:
    """The options of ``leapgram bench``."""
    parser.add_argument("folder", nargs="?", help="folder of JSONSchemaBench case files "
                        "(default: ../shared/jsonschemabench beside the repository)")
    parser.add_argument("--tokenizer", default="llama3", help="a name in ../shared/tokenizers or a tokenizer.json path")
    parser.add_argument("--limit", type=int, help="run N cases, evenly spaced over the sorted files (default: all)")
    parser.add_argument("--vs", default="", help="peer engines, comma-separated: llguidance,xgrammar "
                        "(or module:Class for an adapter of your own)")
    parser.add_argument("--json", help="write the report (summaries and per-case results) here")
    parser.add_argument("--png", help="write a plot comparing the engines here (needs matplotlib)")
    parser.add_argument("--timeout-s", type=float, default=10.0, help="time budget of one case (default 10)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--log", help="file for the engines' own messages (default: beside --json as "
                        "OUT.json.log, else discarded; '-' for the terminal)")
