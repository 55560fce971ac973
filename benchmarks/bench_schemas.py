"""JSONSchemaBench: the *pass* criterion, with compile and mask timings, by source of schemas.

``python benchmarks/bench_schemas.py [FOLDER] --vs llguidance,xgrammar`` (``leapgram bench`` in a
source checkout runs this script). The table by source groups the cases by the prefix of their
file names (``BFCL_*``, ``Glaiveai2K``, ``Github_easy``, ...): TBM mean and TTFM p50 of each engine
on the cases of that source that every engine compiled, and leapgram's ratio to each peer.

A case is one file of the benchmark folder: ``schema`` and ``tests`` (``{valid, data}``). It
*passes* when the schema compiles, every valid instance (``json.dumps(data,
ensure_ascii=False)``, tokenized with ``add_special_tokens=False``) is accepted token by token
with EOS allowed after it, and every invalid instance is rejected at some token or at EOS.

Measured per engine: TTFM (time to first mask: compile plus the first mask of a grammar not seen
before; leapgram clears its compiled grammars per case but keeps what a server keeps warm: the
vocabulary's trie and slices and the JSON Schema base pool; an untimed warm-up case first loads
every kernel) and TBM (time between masks: one ``fill_next_token_bitmask`` per step of each valid
instance, EOS step included). TBM is also taken as the calling thread's CPU time (``TBM cpu``): on
a shared machine a mask preempted by another process costs a scheduler slice (about 4 ms) of wall
time, which then sets the p99. TTFM is also taken as the worker process's CPU time (``TTFM cpu``,
every thread of the engine, so a peer that compiles on several threads pays for all of them): on a
loaded machine the wall-clock TTFM of a 1 ms compile is mostly waiting for a core. Each engine's summary covers the cases it compiled; the ratios
against a peer are taken on the cases both compiled (``leapgram / peer on the N cases both
compiled``), where the same instances are walked by both.

Valid instances rejected are split by cause: leapgram writes object members in the schema's
declared order (undeclared keys last), and some instances are written in another order. A rejected
instance counts as *out of declared order* when the same data with the keys of its objects
reordered is accepted (a search on the compiled grammar, byte by byte, so the claim is checked, not
guessed), and as *other* otherwise; peers are not split.

Robustness: each engine runs in a worker process that handles the cases one by one; a case that
takes longer than ``--timeout-s`` gets the worker killed and restarted, and so does a crash, so
one case never stops the run. Every engine gets the same cases and the same token ids (from
``tokenizers.Tokenizer``), in the same process pattern. A worker freezes the objects it inherits
from the parent and those of the engine's start-up (``gc.freeze``, see :func:`worker_main`): a
collection during a timed mask should scan what the engine allocated for the grammars, not the
loaded cases or the imported modules.

This module imports only the standard library at import time; ``tqdm``, ``tokenizers``, peers
(``peers.py`` beside it) and ``matplotlib`` (``--png``) are imported on use. The ``bench`` extra
installs them; xgrammar is installed by hand (``pip install xgrammar`` beside the CPU torch).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import math
import multiprocessing
import os
import re
import resource
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import (
    WARMUP_SCHEMA,
    LlguidanceSchemaEngine,
    XgrammarSchemaEngine,
)

PEERS = ("llguidance", "xgrammar")
DEFAULT_FOLDER = Path(__file__).resolve().parents[1].parent / "shared" / "jsonschemabench"
TOKENIZERS = Path(__file__).resolve().parents[1].parent / "shared" / "tokenizers"


# ----- cases --------------------------------------------------------------------------------


@dataclass
class Case:
    """One benchmark file: the schema text, its instances as ``(valid, token ids)`` and their data
    (to look for an accepted key order when a valid instance is rejected)."""

    name: str
    schema: str
    instances: list[tuple[bool, list[int]]]
    data: list = field(default_factory=list)


@dataclass
class CaseResult:
    """What one engine did with one case; ``error`` is ``None`` when the schema compiled."""

    name: str
    compiled: bool = False
    error: str | None = None
    detail: str = ""
    valid_rejected: int = 0
    valid_rejected_order: int | None = None  # of those, accepted with keys reordered (None: not checked)
    invalid_accepted: int = 0
    ttfm_ms: float | None = None
    ttfm_cpu_ms: float | None = None  # the worker process's CPU time (every thread of the engine)
    tbm_us: list[float] = field(default_factory=list)
    tbm_cpu_us: list[float] = field(default_factory=list)
    trace: dict | None = None  # --trace-slow-ms: the slow masks and the collections inside masks

    @property
    def passed(self) -> bool:
        return self.compiled and not self.valid_rejected and not self.invalid_accepted


def load_cases(folder: Path, tokenizer_json: Path, limit: int | None, sample: int | None = None) -> list[Case]:
    """The first ``limit`` cases of ``folder`` in sorted file order (or ``sample`` of them evenly
    spaced over the sorted files, so every source is represented), tokenized once."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_json))
    files = sorted(p for p in folder.glob("*.json"))[:limit]
    if sample and sample < len(files):
        files = [files[i * len(files) // sample] for i in range(sample)]
    cases = []
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            tests = data.get("tests", [])
            instances = [(bool(t["valid"]), _encode(tokenizer, t["data"])) for t in tests]
            cases.append(Case(path.stem, json.dumps(data["schema"]), instances, [t["data"] for t in tests]))
        except (ValueError, KeyError, TypeError) as exc:
            cases.append(Case(path.stem, f"<unreadable: {exc}>", []))
    return cases


def _encode(tokenizer, data) -> list[int]:
    return tokenizer.encode(json.dumps(data, ensure_ascii=False), add_special_tokens=False).ids


# ----- engines (run inside a worker) --------------------------------------------------------


class LeapgramEngine:
    """leapgram: ``Grammar.from_json_schema`` (``AttributeError`` means the front end is missing)."""

    name = "leapgram"
    checks_key_order = True
    any_order: bool | str = False  # properties in declared order, the front end's default
    precompute_ms = 0.0  # --precompute-ms: masks computed ahead at compile, inside the TTFM (set by the worker)

    def __init__(self, tokenizer_json: Path) -> None:
        import leapgram
        from leapgram.cli import load_vocabulary
        self.lg = leapgram
        self.vocab = load_vocabulary(str(tokenizer_json))
        self.compiler = leapgram.GrammarCompiler(self.vocab) if hasattr(leapgram, "GrammarCompiler") else None
        self.eos = list(self.vocab.eos_token_ids)
        self.bitmask = leapgram.allocate_token_bitmask(1, self.vocab.size)
        self.warm_up()

    def warm_up(self) -> None:
        """Load every kernel a case uses (regex and grammar masks, consuming tokens) and the
        process-wide caches (the trie, the slices, the JSON Schema base pool), so the first
        timed case pays no numba load; then forget the compiled grammars."""
        lg = self.lg
        try:
            from leapgram.warmup import warm_up

            warm_up(self.vocab)
        except (ImportError, AttributeError):  # an older leapgram, or no JSON Schema front end
            self.fill(self.matcher(self.bind(lg.Grammar.from_regex(r'\{"a": [0-9]+\}'))))
        try:
            tokens = self.vocab.encode(b'{"a": 12}')
        except ValueError:  # a vocabulary without its tokenizer: masks only
            tokens = []
        try:
            compiled = self.compile(json.dumps(WARMUP_SCHEMA))
        except FrontEndMissing:  # reported per case
            return
        walk_instance(self, self.matcher(compiled), tokens, None)
        self.prepare()

    def prepare(self) -> None:
        """Forget every compiled grammar, so the next compile starts cold (not timed)."""
        if self.compiler is not None:
            self.compiler.clear_cache()
        else:
            self.lg.clear_cache()

    def bind(self, grammar):
        """The compiled grammar (``GrammarCompiler`` where this version has it)."""
        return self.compiler.compile(grammar) if self.compiler is not None else self.lg.compile(grammar, self.vocab)

    def compile(self, schema: str):
        lg = self.lg
        try:
            make = lg.Grammar.from_json_schema
        except AttributeError:
            raise FrontEndMissing("leapgram.Grammar.from_json_schema is not in this version") from None
        document = json.loads(schema)
        compiled = self.bind(make(document, any_order=self.any_order) if self.any_order else make(document))
        if self.precompute_ms > 0:
            from leapgram.precompute import precompute_masks

            precompute_masks(compiled, max_ms=self.precompute_ms)
        return compiled

    def matcher(self, compiled):
        return self.lg.Matcher(compiled)

    def fill(self, matcher) -> None:
        matcher.fill_next_token_bitmask(self.bitmask, 0)

    def consume(self, matcher, token: int) -> bool:
        return bool(matcher.consume_token(token))

    def first_error(self, matcher) -> str | None:
        """Why the matcher is in its error state after the first mask (a budget ran out), if it is."""
        return matcher.error()

    def accepts_reordered(self, compiled, value, budget: list[int]) -> bool:
        """Whether ``value`` is accepted with the keys of its objects in some order."""
        engine = getattr(compiled, "_engine", None) or compiled._engine
        return accepts_reordered(engine, value, budget, self.lg.BudgetExceededError)

    def classify(self, exc: BaseException) -> str:
        lg = self.lg
        if isinstance(exc, lg.UnsupportedError):
            return f"UnsupportedError: {exc.feature}"
        if isinstance(exc, lg.GrammarError):
            return "GrammarError"
        if isinstance(exc, lg.BudgetExceededError):
            return "BudgetExceeded"
        return f"crash: {type(exc).__name__}"


class LeapgramAnyOrderEngine(LeapgramEngine):
    """leapgram with ``any_order=True``: an object's properties in any order (``--property-order any``)."""

    any_order = True


class LeapgramAutoOrderEngine(LeapgramEngine):
    """leapgram with ``any_order="auto"`` (``--property-order auto``): any order where it is
    tracked exactly, declared order for objects with more than 6 required properties."""

    any_order = "auto"


ENGINES = {"leapgram": LeapgramEngine, "leapgram-any-order": LeapgramAnyOrderEngine,
           "leapgram-auto-order": LeapgramAutoOrderEngine, "llguidance": LlguidanceSchemaEngine,
           "xgrammar": XgrammarSchemaEngine}


class FrontEndMissing(Exception):
    """The engine has no JSON Schema front end."""


def mask_allows(bitmask, token: int) -> bool:
    return bool(int(bitmask[0, token // 32]) >> (token % 32) & 1)


def run_case(engine, case: Case) -> CaseResult:
    """Compile, time the first mask, then walk every instance (see the module docstring)."""
    result = CaseResult(case.name)
    engine.prepare()
    start, start_cpu = time.perf_counter(), time.process_time()
    try:
        compiled = engine.compile(case.schema)
        first = engine.matcher(compiled)
        engine.fill(first)
    except FrontEndMissing as exc:
        result.error, result.detail = "front end missing", str(exc)
        return result
    except Exception as exc:  # noqa: BLE001 - every failure is a result, never a stop
        result.error, result.detail = engine.classify(exc), str(exc)[:300]
        return result
    result.ttfm_ms = (time.perf_counter() - start) * 1e3
    result.ttfm_cpu_ms = (time.process_time() - start_cpu) * 1e3
    failure = engine.first_error(first)
    if failure is not None:  # a budget ran out computing the first mask: not a usable grammar
        result.error, result.detail, result.ttfm_ms = "error state at the first mask", failure[:300], None
        result.ttfm_cpu_ms = None
        return result
    result.compiled = True
    rejected = []
    tracer = getattr(engine, "tracer", None)
    if tracer is not None:
        tracer.begin()
    for n, (valid, tokens) in enumerate(case.instances):
        times = (result.tbm_us, result.tbm_cpu_us) if valid else None
        if tracer is not None and valid:
            accepted = tracer.walk(engine, engine.matcher(compiled), tokens, times, (case.name, n))
        else:
            accepted = walk_instance(engine, engine.matcher(compiled), tokens, times)
        if valid and not accepted:
            result.valid_rejected += 1
            rejected.append(n)
        elif accepted and not valid:
            result.invalid_accepted += 1
    if engine.checks_key_order:  # after the timed walks, which it must not warm
        budget = [REORDER_BUDGET]
        result.valid_rejected_order = sum(engine.accepts_reordered(compiled, case.data[n], budget)
                                          for n in rejected if n < len(case.data))
    if tracer is not None:
        result.trace = tracer.take()
    return result


def walk_instance(engine, matcher, tokens: list[int], times: tuple[list[float], list[float]] | None) -> bool:
    """Whether ``tokens`` then EOS are accepted; with ``times`` (wall, thread CPU), every fill is
    timed (µs)."""
    for token in [*tokens, None]:
        cpu_start = time.thread_time_ns()
        start = time.perf_counter_ns()
        engine.fill(matcher)
        if times is not None:
            times[0].append((time.perf_counter_ns() - start) / 1e3)
            times[1].append((time.thread_time_ns() - cpu_start) / 1e3)
        if token is None:
            return any(mask_allows(engine.bitmask, eos) for eos in engine.eos)
        if not mask_allows(engine.bitmask, token) or not engine.consume(matcher, token):
            return False
    return False


def _stolen_ms() -> float:
    """The machine's stolen CPU time so far (``/proc/stat``, every core), 0 where unknown."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()
        return int(fields[8]) * 1e3 / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError, AttributeError):
        return 0.0


class MaskTracer:
    """``--trace-slow-ms N``: what happened inside the timed masks of a worker.

    For every mask over ``N`` ms of thread CPU: the case, instance and mask index, wall and thread
    CPU time, the thread's user and system time and page faults (``getrusage(RUSAGE_THREAD)``),
    and the events that fired inside it: cycle collections (``gc.callbacks``: generation, objects
    collected, duration) and numba compilations (``numba:compile``, when numba is loaded). For
    every mask: the collections by generation (count and time), so a run can say how many full
    collections land in masks per 1,000 masks. Off by default: the timed loop is then
    :func:`walk_instance`, unchanged."""

    def __init__(self, slow_ms: float) -> None:
        self.slow_ns = int(slow_ms * 1e6)
        self.events: list[tuple] = []  # inside the current mask
        self._gc_start = (0, 0)
        self._numba_start: dict[str, tuple[int, int]] = {}
        self._steal = 0.0
        self._unwrap: list[tuple[type, object]] = []
        self._listener = None
        self._reset()

    def _reset(self) -> None:
        self.slow: list[dict] = []
        self.masks = 0
        self.collections = [[0, 0.0, 0] for _ in range(3)]  # per generation: count, ms, collected
        self.growths = [0, 0.0]  # leapgram tables grown inside masks: count, ms

    def install(self) -> None:
        gc.callbacks.append(self._on_gc)
        if "numba" in sys.modules:
            from numba.core import event

            tracer = self

            class _Compiles(event.Listener):
                def on_start(self, ev):
                    tracer._numba_start[str(ev.data.get("dispatcher", ""))] = (time.perf_counter_ns(), time.thread_time_ns())

                def on_end(self, ev):
                    key = str(ev.data.get("dispatcher", ""))
                    wall, cpu = tracer._numba_start.pop(key, (time.perf_counter_ns(), time.thread_time_ns()))
                    name = getattr(ev.data.get("dispatcher"), "__name__", key)
                    tracer.events.append(("numba compile", name, (time.perf_counter_ns() - wall) / 1e6,
                                          (time.thread_time_ns() - cpu) / 1e6))

            self._listener = _Compiles()
            event.register("numba:compile", self._listener)
        self._wrap_growth()

    def _wrap_growth(self) -> None:
        """leapgram's lexer and regex tables growing (``_grow``: a copy of every row) inside a mask."""
        tracer = self
        for module, name in (("leapgram.parser.lexer", "Lexer"), ("leapgram.regex.dfa", "LazyDfa")):
            cls = getattr(sys.modules.get(module), name, None)
            grow = getattr(cls, "_grow", None)
            if grow is None:
                continue

            def traced(table, capacity, grow=grow, name=name):
                old = table.trans.shape[0]
                start = time.thread_time_ns()
                grow(table, capacity)
                tracer.events.append(("grow", name, old, capacity, (time.thread_time_ns() - start) / 1e6))

            self._unwrap.append((cls, grow))
            cls._grow = traced

    def uninstall(self) -> None:
        """Undo :meth:`install` (the worker never does; tests do)."""
        gc.callbacks.remove(self._on_gc)
        if self._listener is not None:
            from numba.core import event

            event.unregister("numba:compile", self._listener)
            self._listener = None
        for cls, grow in self._unwrap:
            cls._grow = grow
        self._unwrap.clear()

    def _on_gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._gc_start = (time.perf_counter_ns(), time.thread_time_ns())
            return
        wall, cpu = self._gc_start
        self.events.append(("gc", info["generation"], info["collected"], (time.perf_counter_ns() - wall) / 1e6,
                            (time.thread_time_ns() - cpu) / 1e6))

    def walk(self, engine, matcher, tokens: list[int], times, where: tuple[str, int]) -> bool:
        """:func:`walk_instance` with every mask traced."""
        for index, token in enumerate([*tokens, None]):
            self.events.clear()
            usage = resource.getrusage(resource.RUSAGE_THREAD)
            cpu_start = time.thread_time_ns()
            start = time.perf_counter_ns()
            engine.fill(matcher)
            wall = time.perf_counter_ns() - start
            cpu = time.thread_time_ns() - cpu_start
            times[0].append(wall / 1e3)
            times[1].append(cpu / 1e3)
            self._record(where, index, wall, cpu, usage)
            if token is None:
                return any(mask_allows(engine.bitmask, eos) for eos in engine.eos)
            if not mask_allows(engine.bitmask, token) or not engine.consume(matcher, token):
                return False
        return False

    def _record(self, where: tuple[str, int], index: int, wall: int, cpu: int, usage) -> None:
        self.masks += 1
        for event in self.events:
            if event[0] == "gc":
                tally = self.collections[event[1]]
                tally[0] += 1
                tally[1] += event[4]
                tally[2] += event[2]
            elif event[0] == "grow":
                self.growths[0] += 1
                self.growths[1] += event[4]
        if cpu < self.slow_ns:
            return
        after = resource.getrusage(resource.RUSAGE_THREAD)
        self.slow.append({"case": where[0], "instance": where[1], "mask": index, "wall_ms": wall / 1e6,
                          "cpu_ms": cpu / 1e6, "user_ms": (after.ru_utime - usage.ru_utime) * 1e3,
                          "sys_ms": (after.ru_stime - usage.ru_stime) * 1e3,
                          "minflt": after.ru_minflt - usage.ru_minflt, "majflt": after.ru_majflt - usage.ru_majflt,
                          "switches": (after.ru_nvcsw - usage.ru_nvcsw, after.ru_nivcsw - usage.ru_nivcsw),
                          "events": list(self.events)})

    def begin(self) -> None:
        """A case starts: note the machine's stolen CPU time (a virtual machine's hypervisor
        running something else; charged to whichever thread was on the CPU)."""
        self._steal = _stolen_ms()

    def take(self) -> dict:
        """This case's trace (and a fresh one for the next case)."""
        for slow in self.slow:  # the whole case's, on every core
            slow["case_steal_ms"] = _stolen_ms() - self._steal
        out = {"masks": self.masks, "slow": self.slow,
               "collections": [{"count": n, "ms": ms, "collected": c} for n, ms, c in self.collections],
               "growths": {"count": self.growths[0], "ms": self.growths[1]}}
        self._reset()
        return out


# ----- key order ----------------------------------------------------------------------------

REORDER_BUDGET = 50_000  # advances per case (20-80 µs each); an order JSONSchemaBench needs takes < 25,000
STARTUP_TIMEOUT_S = 600.0  # a worker's import, vocabulary and warm-up; numba compiles every kernel on a fresh clone (minutes under load)


class _Exhausted(Exception):
    """The reordering search ran out of budget."""


def accepts_reordered(engine, value, budget: list[int], budget_error: type[Exception] = _Exhausted) -> bool:
    """Whether a byte-level engine (``initial``, ``advance``, ``is_accepting``) accepts ``value``
    written as ``json.dumps`` writes it but with the members of each object in some order.

    A depth-first search (see :func:`_members`) that spends ``budget[0]`` (advances, shared by the
    instances of a case so that a case's search stays bounded). Running out of it, of the engine's
    own ``budget_error`` or of recursion (a frame or three per member and item) answers ``False``:
    the claim is only made for an order found accepted."""
    try:
        return any(engine.is_accepting(state) for state, _ in _write(engine, engine.initial, value, budget))
    except (_Exhausted, RecursionError, budget_error):
        return False


def _write(engine, state, value, budget: list[int]):
    """Each ``(state, text)`` after ``value`` in an order of its objects that is accepted."""
    if state is None:
        return
    if isinstance(value, dict):
        yield from _members(engine, _advance(engine, state, b"{", budget), b"{", value, list(value), {}, budget)
    elif isinstance(value, list):
        yield from _items(engine, _advance(engine, state, b"[", budget), b"[", value, 0, budget)
    else:
        yield from _then(engine, state, b"", json.dumps(value, ensure_ascii=False).encode("utf-8"), budget)


def _items(engine, state, text: bytes, items: list, i: int, budget: list[int]):
    if i == len(items):
        yield from _then(engine, state, text, b"]", budget)
        return
    separator = b", " if i else b""
    for after, item in _write(engine, _advance(engine, state, separator, budget), items[i], budget):
        yield from _items(engine, after, text + separator + item, items, i + 1, budget)


def _members(engine, state, text: bytes, obj: dict, remaining: list[str], known: dict[str, bytes],
             budget: list[int]):
    """Each ``(state, text)`` after the members ``remaining`` and ``}``.

    The first way to write each member that may come next is found (by the text found at an
    earlier position when that still fits), then the member that may directly follow none of the
    others is tried first: in a declared order that is the earliest, as the one just before any
    other may precede it (the keys between are absent). So an object costs its members squared,
    not factorial; other ways to write a member are only tried when that fails (a nested order can
    matter under ``anyOf``)."""
    if state is None or not remaining:
        yield from _then(engine, state, text, b"}", budget)
        return
    separator = b", " if len(remaining) < len(obj) else b""
    ways = {key: _member(engine, state, separator, key, obj[key], known.get(key), budget) for key in remaining}
    firsts = {key: first for key, first in ((key, next(way, None)) for key, way in ways.items()) if first}
    known = {**known, **{key: member for key, (_, member) in firsts.items()}}
    for key in _earliest_first(engine, firsts, budget):
        rest = [k for k in remaining if k != key]
        for after, member in itertools.chain([firsts[key]], ways[key]):
            yield from _members(engine, after, text + separator + member, obj, rest, known, budget)


def _member(engine, state, separator: bytes, key: str, value, known: bytes | None, budget: list[int]):
    """Each ``(state, member text)`` after ``separator``, the key and its value."""
    if known is not None:
        after = _advance(engine, state, separator + known, budget)
        if after is not None:
            yield after, known
    name = json.dumps(key, ensure_ascii=False).encode("utf-8") + b": "
    for after, text in _write(engine, _advance(engine, state, separator + name, budget), value, budget):
        yield after, name + text


def _earliest_first(engine, firsts: dict, budget: list[int]):
    """The keys of ``firsts`` (key: its first ``(state, member text)``): first those that may
    directly follow none of the others (checked lazily, in instance order), then the rest by how
    many they may follow."""
    def follows(key: str, other: str) -> bool:
        name = json.dumps(key, ensure_ascii=False).encode("utf-8") + b": "
        return other != key and _advance(engine, firsts[other][0], b", " + name, budget) is not None

    rest = []
    for key in firsts:
        if any(follows(key, other) for other in firsts):
            rest.append(key)
        else:
            yield key
    yield from sorted(rest, key=lambda key: sum(follows(key, other) for other in firsts))


def _advance(engine, state, data: bytes, budget: list[int]):
    """The state after ``data`` (``None`` when refused or when there is no state), for one unit of
    the budget."""
    budget[0] -= 1
    if budget[0] < 0:
        raise _Exhausted()
    return state if state is None or not data else engine.advance(state, data)


def _then(engine, state, text: bytes, data: bytes, budget: list[int]):
    """The one ``(state, text)`` after ``data``, if it is accepted."""
    after = _advance(engine, state, data, budget)
    if after is not None:
        yield after, text + data


def worker_main(conn, engine_name: str, tokenizer_json: str, trace_slow_ms: float | None = None,
                precompute_ms: float | None = None) -> None:
    """Worker process: build the engine, then answer one case per message until ``None``.

    The objects a forked worker inherits (the parent's loaded cases and results so far: tens of
    thousands of lists and dicts) are moved to the collector's permanent generation first, and so
    are, once the engine is built and warmed up, the objects of its start-up (the modules it
    imported, numba's and the tokenizer's among them: about 50,000), as a server does after
    start-up. A full collection during a timed mask then scans what the engine made for the
    grammars it is serving (0.2 ms for leapgram), not the whole process (7 to 24 ms), whose size
    depends on what else the process imported. With ``trace_slow_ms``, masks are traced
    (:class:`MaskTracer`). With ``precompute_ms``, leapgram computes masks ahead at each compile
    (``leapgram.precompute_masks``), inside the time to first mask."""
    gc.freeze()
    try:
        engine = ENGINES[engine_name](Path(tokenizer_json))
    except Exception as exc:  # noqa: BLE001
        conn.send(("unavailable", f"{type(exc).__name__}: {exc}"))
        return
    gc.freeze()
    if precompute_ms:
        engine.precompute_ms = precompute_ms
    if trace_slow_ms is not None:
        engine.tracer = MaskTracer(trace_slow_ms)
        engine.tracer.install()
    conn.send(("ready", ""))
    while True:
        case = conn.recv()
        if case is None:
            return
        try:
            conn.send(("done", run_case(engine, case)))
        except Exception:  # noqa: BLE001
            conn.send(("done", CaseResult(case.name, error="crash: worker", detail=traceback.format_exc()[-300:])))


# ----- the parent side ----------------------------------------------------------------------


class Worker:
    """One engine's worker process, restarted after a timeout or a crash."""

    def __init__(self, engine_name: str, tokenizer_json: Path, startup_timeout_s: float,
                 trace_slow_ms: float | None = None, precompute_ms: float | None = None) -> None:
        self.engine_name = engine_name
        self.trace_slow_ms = trace_slow_ms
        self.precompute_ms = precompute_ms
        self.tokenizer_json = tokenizer_json
        self.startup_timeout_s = startup_timeout_s
        self.context = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
        self.process = None
        self.conn = None
        self.unavailable: str | None = None

    def start(self) -> bool:
        parent, child = self.context.Pipe()
        self.process = self.context.Process(target=worker_main, args=(child, self.engine_name, str(self.tokenizer_json),
                                                                           self.trace_slow_ms, self.precompute_ms),
                                            daemon=True)
        self.process.start()
        child.close()
        self.conn = parent
        if not parent.poll(self.startup_timeout_s):
            self.stop()
            self.unavailable = f"did not start within {self.startup_timeout_s:.0f} s"
            return False
        kind, detail = self.receive()
        if kind != "ready":
            self.stop()
            self.unavailable = detail or "the worker exited while starting"
        return kind == "ready"

    def receive(self):
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            return ("crashed", "")

    def stop(self) -> None:
        if self.process is not None and self.process.is_alive():
            self.process.kill()
        if self.process is not None:
            self.process.join(5)
        self.process = None

    def run(self, case: Case, timeout_s: float) -> CaseResult:
        if self.process is None and not self.start():
            return CaseResult(case.name, error="unavailable", detail=self.unavailable or "")
        self.conn.send(case)
        if not self.conn.poll(timeout_s):
            self.stop()
            return CaseResult(case.name, error="timeout", detail=f"over {timeout_s:g} s")
        kind, payload = self.receive()
        if kind != "done":
            self.stop()
            return CaseResult(case.name, error="crash", detail="the worker process died")
        return payload

    def close(self) -> None:
        if self.process is not None and self.process.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.process.join(5)
        self.stop()


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]


def summarize(results: list[CaseResult]) -> dict:
    """Counts, errors by kind, TTFM (ms) and TBM (µs) statistics."""
    errors: dict[str, int] = {}
    for r in results:
        if r.error:
            errors[r.error] = errors.get(r.error, 0) + 1
    ttfm = [r.ttfm_ms for r in results if r.ttfm_ms is not None]
    ttfm_cpu = [r.ttfm_cpu_ms for r in results if r.ttfm_cpu_ms is not None]
    checked = [r for r in results if r.valid_rejected_order is not None]
    order = sum(r.valid_rejected_order for r in checked) if checked else None
    tbm = [t for r in results for t in r.tbm_us]
    cpu = [t for r in results for t in r.tbm_cpu_us]
    return {
        "cases": len(results),
        "compiled": sum(r.compiled for r in results),
        "passing": sum(r.passed for r in results),
        "valid_rejected": sum(r.valid_rejected for r in results),
        "valid_rejected_order": order,
        "valid_rejected_other": None if order is None else sum(r.valid_rejected for r in checked) - order,
        "invalid_accepted": sum(r.invalid_accepted for r in results),
        "errors": dict(sorted(errors.items(), key=lambda kv: -kv[1])),
        "ttfm_ms": {f"p{q}": percentile(ttfm, q) for q in (50, 90, 99)} | {"max": max(ttfm, default=None)},
        "ttfm_cpu_ms": {f"p{q}": percentile(ttfm_cpu, q) for q in (50, 90, 99)} | {"max": max(ttfm_cpu, default=None)},
        "tbm_us": {"mean": sum(tbm) / len(tbm) if tbm else None, "p50": percentile(tbm, 50),
                   "p99": percentile(tbm, 99), "max": max(tbm, default=None), "masks": len(tbm)},
        "tbm_cpu_us": {"mean": sum(cpu) / len(cpu) if cpu else None, "p50": percentile(cpu, 50),
                       "p99": percentile(cpu, 99), "max": max(cpu, default=None)},
    }


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def print_summary(name: str, summary: dict, unavailable: str | None) -> None:
    print(f"\n== {name}")
    if unavailable:
        print(f"   unavailable: {unavailable}")
        return
    s = summary
    print(f"   cases {s['cases']}  compiled {s['compiled']}  passing {s['passing']}  "
          f"valid rejected {s['valid_rejected']}  invalid accepted {s['invalid_accepted']}")
    if s["valid_rejected_order"] is not None:
        print(f"   valid rejected  out of declared order {s['valid_rejected_order']}  "
              f"other {s['valid_rejected_other']}")
    for kind, count in s["errors"].items():
        print(f"   error {count:>5}  {kind}")
    t = s["ttfm_ms"]
    print(f"   TTFM ms  p50 {_fmt(t['p50'], 2)}  p90 {_fmt(t['p90'], 2)}  p99 {_fmt(t['p99'], 2)}  max {_fmt(t['max'], 2)}")
    t = s["ttfm_cpu_ms"]
    print(f"   TTFM cpu p50 {_fmt(t['p50'], 2)}  p90 {_fmt(t['p90'], 2)}  p99 {_fmt(t['p99'], 2)}  max {_fmt(t['max'], 2)}")
    b = s["tbm_us"]
    print(f"   TBM µs   mean {_fmt(b['mean'])}  p50 {_fmt(b['p50'])}  p99 {_fmt(b['p99'])}  max {_fmt(b['max'])}"
          f"  ({b['masks']:,} masks)")
    c = s["tbm_cpu_us"]
    print(f"   TBM cpu  mean {_fmt(c['mean'])}  p50 {_fmt(c['p50'])}  p99 {_fmt(c['p99'])}  max {_fmt(c['max'])}")


def source_of(name: str) -> str:
    """The source of a case from its file name: ``Github_easy---o1234`` -> ``Github_easy``,
    ``JME_3`` -> ``JME``, ``BFCL_parallel_12`` -> ``BFCL`` (its subsets are one source)."""
    head = name.split("---")[0] if "---" in name else re.sub(r"_\d+$", "", name)
    return "BFCL" if head.startswith("BFCL") else head


SOURCE_METRICS = (("tbm_us", "TBM mean µs, wall"), ("tbm_cpu_us", "TBM mean µs, thread CPU"),
                  ("ttfm_ms", "TTFM p50 ms"), ("ttfm_cpu_ms", "TTFM p50 ms, process CPU"))


def by_source(results: dict[str, list[CaseResult]]) -> list[dict]:
    """One row per source, then ``all``: on the cases of the source that every engine compiled,
    each engine's TBM mean (µs; wall and thread CPU), TTFM p50 (ms) and leapgram's ratios to
    each peer."""
    engines = list(results)
    compiled = {n: {r.name: r for r in rows if r.compiled} for n, rows in results.items()}
    names: dict[str, list[str]] = {}
    for r in results.get("leapgram", next(iter(results.values()), [])):
        names.setdefault(source_of(r.name), []).append(r.name)
    groups = sorted(names.items(), key=lambda kv: -len(kv[1])) + [("all", [n for v in names.values() for n in v])]
    rows = []
    for source, members in groups:
        shared = [m for m in members if all(m in compiled[e] for e in engines)]
        row: dict = {"source": source, "cases": len(members), "shared": len(shared)}
        for key, _ in SOURCE_METRICS:
            row[key] = {e: _source_value(key, [compiled[e][m] for m in shared]) for e in engines}
        row["ratio"] = {key: {e: _ratio(row[key].get("leapgram"), row[key][e]) for e in engines if e != "leapgram"}
                        for key, _ in SOURCE_METRICS}
        rows.append(row)
    return rows


def _source_value(key: str, cases: list[CaseResult]) -> float | None:
    if key in ("ttfm_ms", "ttfm_cpu_ms"):
        values = [getattr(c, key) for c in cases]
        return percentile([v for v in values if v is not None], 50)
    times = [t for c in cases for t in getattr(c, key)]
    return sum(times) / len(times) if times else None


def _ratio(ours: float | None, theirs: float | None) -> float | None:
    return ours / theirs if ours is not None and theirs else None


def print_by_source(rows: list[dict]) -> None:
    if not rows:
        return
    engines = list(rows[0]["tbm_us"])
    peers = [e for e in engines if e != "leapgram"]
    print("\n== by source, on the cases every engine compiled (shared); ratio = leapgram / peer")
    for key, title in SOURCE_METRICS:
        digits = 2 if key.startswith("ttfm") else 1
        print(f"   {title:<25}{'cases':>6}{'shared':>7} |" + "".join(f"{e[:10]:>11}" for e in engines)
              + " |" + "".join(f"{'÷' + p[:8]:>10}" for p in peers))
        for row in rows:
            print(f"   {row['source'][:25]:<25}{row['cases']:>6}{row['shared']:>7} |"
                  + "".join(f"{_fmt(row[key][e], digits):>11}" for e in engines)
                  + " |" + "".join(f"{_fmt_ratio(row['ratio'][key][p]):>10}" for p in peers))
        print()


def _fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def write_png(path: Path, results: dict[str, list[CaseResult]]) -> None:
    """TTFM and TBM distributions (empirical CDFs, log scale), one line per engine, and the TBM
    mean by source (bars, on the cases every engine compiled)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("--png needs matplotlib: pip install 'leapgram[bench]'", file=sys.stderr)
        return
    fig = plt.figure(figsize=(13, 8))
    axes = [fig.add_subplot(2, 2, 1), fig.add_subplot(2, 2, 2)]
    for name, rows in results.items():
        for ax, values in zip(axes, ([r.ttfm_ms for r in rows if r.ttfm_ms is not None],
                                     [t for r in rows for t in r.tbm_us])):
            if values:
                ordered = sorted(values)
                ax.plot(ordered, [(i + 1) / len(ordered) for i in range(len(ordered))], label=name)
    for ax, title in zip(axes, ("TTFM (ms): compile + first mask", "TBM (µs): one mask per step")):
        ax.set_xscale("log")
        ax.set_title(title)
        ax.set_ylabel("fraction ≤ x")
        ax.grid(alpha=0.3)
        ax.legend()
    _plot_by_source(fig.add_subplot(2, 1, 2), by_source(results))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}")


def _plot_by_source(ax, rows: list[dict]) -> None:
    """Grouped bars: each source's TBM mean per engine in thread CPU time (a mask preempted by
    another process adds no CPU time; log scale), leapgram's ratios under the names."""
    rows = [r for r in rows if r["shared"]]
    if not rows:
        return
    engines = list(rows[0]["tbm_us"])
    width = 0.8 / len(engines)
    for k, engine in enumerate(engines):
        ax.bar([i + k * width for i in range(len(rows))], [r["tbm_cpu_us"][engine] or 0 for r in rows], width,
               label=engine)
    labels = [f"{r['source']} ({r['shared']})\n" + "\n".join(f"÷{p[:3]} {_fmt_ratio(v)}" for p, v in
                                                          r["ratio"]["tbm_cpu_us"].items()) for r in rows]
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(rows))])
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("TBM mean, thread CPU (µs)")
    ax.set_title("TBM mean by source, thread CPU (cases every engine compiled); leapgram ÷ each peer under the names")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)


def resolve_tokenizer(name: str) -> Path:
    path = Path(name)
    if path.is_dir():
        path = path / "tokenizer.json"
    if not path.is_file():
        path = TOKENIZERS / name / "tokenizer.json"
    if not path.is_file():
        raise SystemExit(f"tokenizer {name!r} not found: expected {path} (or pass a tokenizer.json path)")
    return path


def run_bench(args) -> int:
    """Run the benchmark (arguments from :func:`add_arguments`)."""
    folder = Path(args.folder) if args.folder else DEFAULT_FOLDER
    if not folder.is_dir():
        raise SystemExit(f"benchmark folder {folder} not found: pass FOLDER, or put JSONSchemaBench's "
                         "maskbench/data files in ../shared/jsonschemabench beside the repository")
    peers = [p for p in (args.vs.split(",") if args.vs else []) if p]
    unknown = [p for p in peers if p not in PEERS]
    if unknown:
        raise SystemExit(f"unknown peer(s) {', '.join(unknown)}: choose from {', '.join(PEERS)}")
    from tqdm import tqdm

    tokenizer_json = resolve_tokenizer(args.tokenizer)
    cases = load_cases(folder, tokenizer_json, args.limit, getattr(args, "sample", None))
    print(f"{len(cases)} cases from {folder}, tokenizer {tokenizer_json.parent.name}, "
          f"timeout {args.timeout_s:g} s per case, leapgram properties in "
          f"{getattr(args, 'property_order', 'declared')} order")
    precompute = getattr(args, "precompute_ms", None)
    if precompute:
        print(f"leapgram computes masks ahead for up to {precompute:g} ms per schema, inside its TTFM")
    names = ["leapgram", *peers]
    order = getattr(args, "property_order", "declared")
    ours = "leapgram" if order == "declared" else f"leapgram-{order}-order"
    trace = getattr(args, "trace_slow_ms", None)
    workers = {n: Worker(ours if n == "leapgram" else n, tokenizer_json, max(STARTUP_TIMEOUT_S, args.timeout_s), trace,
                         precompute if n == "leapgram" else None)
               for n in names}
    results: dict[str, list[CaseResult]] = {n: [] for n in names}
    try:
        for case in tqdm(cases, unit="case", file=sys.stderr):
            for name, worker in workers.items():
                if worker.unavailable is None:
                    results[name].append(worker.run(case, args.timeout_s))
    finally:
        for worker in workers.values():
            worker.close()
    return report(args, folder, tokenizer_json, workers, results)


def compare_on_shared_cases(results: dict[str, list[CaseResult]]) -> dict[str, dict]:
    """leapgram against each peer on the cases both compiled: the TBM mean and p99 of each (wall
    and thread CPU) and their ratios. The per-engine summaries average over different case sets
    (a peer that refuses a hard schema leaves its masks out), so the ratios are taken here."""
    ours = {r.name: r for r in results.get("leapgram", []) if r.compiled}
    out = {}
    for peer, rows in results.items():
        if peer == "leapgram":
            continue
        shared = [(ours[r.name], r) for r in rows if r.compiled and r.name in ours]
        if not shared:
            continue
        entry: dict = {"cases": len(shared)}
        for key in ("tbm_us", "tbm_cpu_us"):
            a = [t for mine, _ in shared for t in getattr(mine, key)]
            b = [t for _, theirs in shared for t in getattr(theirs, key)]
            if not a or not b:
                continue
            stats = {"leapgram": {"mean": sum(a) / len(a), "p99": percentile(a, 99), "masks": len(a)},
                     peer: {"mean": sum(b) / len(b), "p99": percentile(b, 99), "masks": len(b)}}
            stats["ratio"] = {q: stats["leapgram"][q] / stats[peer][q] for q in ("mean", "p99")}
            entry[key] = stats
        for key in ("ttfm_ms", "ttfm_cpu_ms"):
            pairs = [(getattr(mine, key), getattr(theirs, key)) for mine, theirs in shared]
            a = [x for x, y in pairs if x is not None and y is not None]
            b = [y for x, y in pairs if x is not None and y is not None]
            if not a:
                continue
            stats = {e: {f"p{q}": percentile(v, q) for q in (50, 99)} | {"max": max(v)}
                     for e, v in (("leapgram", a), (peer, b))}
            stats["ratio"] = {q: _ratio(stats["leapgram"][q], stats[peer][q]) for q in ("p50", "p99", "max")}
            entry[key] = stats
        out[peer] = entry
    return out


def print_shared(comparison: dict[str, dict]) -> None:
    for peer, entry in comparison.items():
        print(f"\n== leapgram / {peer} on the {entry['cases']} cases both compiled")
        for key, title in (("tbm_us", "TBM µs "), ("tbm_cpu_us", "TBM cpu")):
            if key in entry:
                s = entry[key]
                print(f"   {title}  mean {_fmt(s['leapgram']['mean'])} / {_fmt(s[peer]['mean'])} = "
                      f"{s['ratio']['mean']:.2f}x   p99 {_fmt(s['leapgram']['p99'])} / {_fmt(s[peer]['p99'])} = "
                      f"{s['ratio']['p99']:.2f}x")
        for key, title in (("ttfm_ms", "TTFM ms"), ("ttfm_cpu_ms", "TTFM cpu")):
            if key in entry:
                s = entry[key]
                print(f"   {title}  " + "   ".join(
                    f"{q} {_fmt(s['leapgram'][q], 2)} / {_fmt(s[peer][q], 2)} = {_fmt_ratio(s['ratio'][q])}"
                    for q in ("p50", "p99", "max")))


def report(args, folder: Path, tokenizer_json: Path, workers: dict[str, Worker],
           results: dict[str, list[CaseResult]]) -> int:
    summaries = {n: summarize(rows) for n, rows in results.items()}
    for name, summary in summaries.items():
        print_summary(name, summary, workers[name].unavailable)
    shared = compare_on_shared_cases(results)
    print_shared(shared)
    sources = by_source({n: rows for n, rows in results.items() if not workers[n].unavailable})
    print_by_source(sources)
    if getattr(args, "trace_slow_ms", None) is not None:
        print_trace(results, args.trace_slow_ms)
    if args.json:
        data = {"folder": str(folder), "tokenizer": str(tokenizer_json), "limit": args.limit, "property_order": getattr(args, "property_order", "declared"),
                "precompute_ms": getattr(args, "precompute_ms", None),
                "timeout_s": args.timeout_s,
                "engines": {n: {"unavailable": workers[n].unavailable, "summary": summaries[n],
                                "cases": [_case_json(r) for r in results[n]]} for n in results},
                "shared_cases": shared, "by_source": sources}
        Path(args.json).write_text(json.dumps(data, indent=1), encoding="utf-8")
        print(f"report written to {args.json}")
    if args.png:
        write_png(Path(args.png), {n: rows for n, rows in results.items() if not workers[n].unavailable})
    return 0


def print_trace(results: dict[str, list[CaseResult]], slow_ms: float) -> None:
    """``--trace-slow-ms``: per engine, the collections inside masks per 1,000 masks, then each
    mask over the threshold with what fired inside it."""
    for name, rows in results.items():
        traces = [r.trace for r in rows if r.trace]
        masks = sum(t["masks"] for t in traces)
        print(f"\n== {name}: trace of {masks:,} masks, collections inside masks per 1,000 masks")
        for gen in range(3):
            count = sum(t["collections"][gen]["count"] for t in traces)
            ms = sum(t["collections"][gen]["ms"] for t in traces)
            per = 1000 / masks if masks else 0.0
            print(f"   gen {gen}: {count:>6} ({count * per:.2f} per 1,000), {ms:,.1f} ms ({ms * per:.3f} ms per 1,000)")
        count = sum(t["growths"]["count"] for t in traces)
        ms = sum(t["growths"]["ms"] for t in traces)
        if count:
            per = 1000 / masks
            print(f"   tables grown: {count:>6} ({count * per:.2f} per 1,000), {ms:,.1f} ms ({ms * per:.3f} ms per 1,000)")
        slow = [s for t in traces for s in t["slow"]]
        print(f"   masks over {slow_ms:g} ms (thread CPU): {len(slow)}")
        for s in sorted(slow, key=lambda s: -s["cpu_ms"]):
            events = "; ".join(_fmt_event(e) for e in s["events"]) or "no gc or numba event"
            print(f"   {s['cpu_ms']:8.1f} ms cpu ({s['wall_ms']:.1f} wall, user {s['user_ms']:.0f} sys {s['sys_ms']:.0f}, "
                  f"faults {s['minflt']}/{s['majflt']}, switches {s['switches'][0]}/{s['switches'][1]}, "
                  f"case steal {s['case_steal_ms']:.0f})  {s['case']} #{s['instance']} mask {s['mask']}: {events}")


def _fmt_event(event: tuple) -> str:
    if event[0] == "gc":
        return f"gc gen {event[1]} collected {event[2]} in {event[4]:.1f} ms"
    if event[0] == "grow":
        return f"{event[1]} table {event[2]} -> {event[3]} rows in {event[4]:.1f} ms"
    return f"numba compile {event[1]} {event[3]:.1f} ms"


def _case_json(result: CaseResult) -> dict:
    row = asdict(result)
    if row["trace"] is None:  # untraced: the report as before
        del row["trace"]
    row["passed"] = result.passed
    order = result.valid_rejected_order
    row["valid_rejected_other"] = None if order is None else result.valid_rejected - order
    times = row.pop("tbm_us")
    cpu = row.pop("tbm_cpu_us")
    row["tbm_us_mean"] = sum(times) / len(times) if times else None
    row["tbm_us_max"] = max(times, default=None)
    row["tbm_cpu_us_mean"] = sum(cpu) / len(cpu) if cpu else None
    row["masks"] = len(times)
    return row


def add_arguments(parser) -> None:
    parser.add_argument("folder", nargs="?", help="benchmark folder (default: ../shared/jsonschemabench)")
    parser.add_argument("--tokenizer", default="llama3", help="name under ../shared/tokenizers or a tokenizer.json")
    parser.add_argument("--limit", type=int, help="first N cases in sorted order (default: all)")
    parser.add_argument("--sample", type=int, help="N cases evenly spaced over the (limited) sorted files")
    parser.add_argument("--vs", default="", help="peers to run on the same cases: llguidance,xgrammar")
    parser.add_argument("--json", help="write the full report here")
    parser.add_argument("--png", help="write TTFM/TBM plots here (needs matplotlib)")
    parser.add_argument("--property-order", choices=["declared", "any", "auto"], default="declared",
                        help="leapgram's object properties: in the declared order (default), any order "
                             "(any_order=True), or any order where tracked exactly (any_order='auto')")
    parser.add_argument("--precompute-ms", type=float, default=None, metavar="N",
                        help="leapgram computes masks ahead at compile for up to N ms per schema "
                             "(leapgram.precompute_masks, for servers that reuse a grammar), counted in its TTFM")
    parser.add_argument("--timeout-s", type=float, default=10.0, help="time budget per case and engine")
    parser.add_argument("--trace-slow-ms", type=float, default=None, metavar="N",
                        help="trace every mask: collections inside masks per 1,000 masks, and each mask over N ms of "
                             "thread CPU with the collections and numba compilations inside it")


def main(argv: list[str] | None = None, prog: str = "bench_schemas.py") -> int:
    """The command line (``leapgram bench`` passes its arguments here)."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run_bench(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
