"""Regex token masks on a real vocabulary: leapgram against llguidance, same run.

Three masks on the Llama-3 vocabulary (128,256 tokens), each at a *fresh* state:

- ``digits``: ``[0-9]+`` at the start state (a small mask, about 1.1k tokens);
- ``string``: ``"[^"\\]*"`` after consuming the opening quote (about all tokens);
- ``dotstar``: ``.*`` at the start state (``.`` excludes ``\\n`` in both engines);

plus leapgram's ns per trie node of a full ``.*`` walk with the slicer off, vocabulary load and trie build,
cold numba compile (fresh process, empty ``NUMBA_CACHE_DIR``) and warm import.

Fresh states matter: llguidance keeps the last mask of each matcher and reuses it
while the lexer state is unchanged, so a repeated fill only times a copy. Each
repetition therefore compiles the grammar again, from a regex text not used before
(the regex wrapped in ``rep`` non-capturing groups), creates a matcher, consumes the
prefix and times the first fill. Per case and engine it reports, as median (min):

- ``compile``: ``compile(regex)`` alone (for llguidance, an ``LLMatcher`` construction);
- ``first mask``: the first fill at the fresh state (the headline number);
- ``TTFM``: compile + new matcher + prefix + first fill;
- ``TTFM, grammar used before``: the same, for the plain regex text compiled and
  masked just before (leapgram's compile cache returns the same compiled grammar;
  llguidance has no such cache and compiles again);
- ``warm-grammar mask``: first fill of a second matcher of the same compiled grammar
  (lazily built automata are warm, the matcher's own mask cache is empty);
- ``repeat fill``: a second fill at the same state (what a cache makes of it).

``first mask`` and ``TTFM`` are the fair comparison; ``peers.py`` says what llguidance
caches.

Run from the repository root::

    .venv/bin/python benchmarks/bench_regex_masks.py                  # both engines
    .venv/bin/python benchmarks/bench_regex_masks.py --only llguidance
    .venv/bin/python benchmarks/bench_regex_masks.py --reps 50 --json out.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TOKENIZER = REPO_ROOT / ".." / "shared" / "tokenizers" / "llama3"
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import LlguidanceEngine

TARGET_NS_PER_NODE = 10.0
TARGET_DIGITS_US = 50.0
TARGET_FULL_MASK_US = 3000.0
TARGET_WARM_IMPORT_S = 1.0
STARTUP_RUNS = 5


# --------------------------------------------------------------------------- cases


def is_utf8_prefix(data: bytes) -> bool:
    """True if ``data`` is valid UTF-8, or valid UTF-8 cut inside its last character."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        return err.reason == "unexpected end of data" and err.end == len(data)
    return True


def is_utf8(data: bytes) -> bool:
    """True if ``data`` is complete, valid UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def digits_allows(token: bytes) -> bool:
    """Reference for ``[0-9]+`` at the start: a token of digits only."""
    return all(48 <= byte <= 57 for byte in token)


def string_body_allows(token: bytes) -> bool:
    """Reference for ``"[^"\\\\]*"`` after the opening quote.

    The token continues the body (no backslash), and may close the string only
    with its last byte.
    """
    quote = token.find(b'"')
    if quote < 0:
        return b"\\" not in token and is_utf8_prefix(token)
    body = token[:quote]
    return quote == len(token) - 1 and b"\\" not in body and is_utf8(body)


def dotstar_allows(token: bytes) -> bool:
    """Reference for ``.*`` at the start: UTF-8 (possibly cut) without ``\\n``."""
    return b"\n" not in token and is_utf8_prefix(token)


@dataclass(frozen=True)
class MaskCase:
    """One mask to time: a regex, the bytes consumed before the mask, a reference."""

    key: str
    regex: str
    prefix: bytes
    accepting: bool
    allows: Callable[[bytes], bool]
    target_us: float | None


CASES = (
    MaskCase("digits", r"[0-9]+", b"", False, digits_allows, TARGET_DIGITS_US),
    MaskCase("string", r'"[^"\\]*"', b'"', False, string_body_allows, TARGET_FULL_MASK_US),
    MaskCase("dotstar", r".*", b"", True, dotstar_allows, TARGET_FULL_MASK_US),
)


def nested(regex: str, depth: int) -> str:
    """``regex`` inside ``depth`` non-capturing groups: same language, new text."""
    return "(?:" * depth + regex + ")" * depth


# ----------------------------------------------------------------- tokenizer file


def byte_level_alphabet() -> dict[str, int]:
    """The GPT-2 byte-level map from vocabulary characters back to bytes."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    chars = list(printable)
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for c, b in zip(chars, printable)}


class TokenizerFile:
    """Engine-independent facts read straight from a ``tokenizer.json``."""

    def __init__(self, path: Path) -> None:
        """Parse ``path``; token bytes are decoded for byte-level vocabularies only."""
        self.path = path
        self.data = json.loads(path.read_text(encoding="utf-8"))
        self.vocab: dict[str, int] = self.data["model"]["vocab"]
        self.special_ids = {t["id"] for t in self.data.get("added_tokens", []) if t["special"]}
        self.token_bytes = self.decode_byte_level()
        self.eos_id = self.read_eos_id()

    @property
    def size(self) -> int:
        """One more than the largest token id in the file."""
        return 1 + max([*self.vocab.values(), *self.special_ids])

    def is_byte_level(self) -> bool:
        """True when the decoder maps characters to bytes the GPT-2 way."""
        decoder = self.data.get("decoder") or {}
        kinds = [decoder.get("type")] + [d.get("type") for d in decoder.get("decoders", [])]
        return "ByteLevel" in kinds

    def decode_byte_level(self) -> list[bytes | None] | None:
        """Bytes of each token id (None for special tokens), or None if not byte-level."""
        if not self.is_byte_level():
            return None
        alphabet = byte_level_alphabet()
        table: list[bytes | None] = [None] * self.size
        for text, token_id in self.vocab.items():
            if token_id not in self.special_ids:
                table[token_id] = bytes(alphabet[c] for c in text)
        return table

    def read_eos_id(self) -> int | None:
        """The EOS id named in the neighbouring ``tokenizer_config.json``, if any."""
        config = self.path.parent / "tokenizer_config.json"
        if not config.exists():
            return None
        eos = json.loads(config.read_text(encoding="utf-8")).get("eos_token")
        if isinstance(eos, dict):
            eos = eos.get("content")
        added = {t["content"]: t["id"] for t in self.data.get("added_tokens", [])}
        return added.get(eos, self.vocab.get(eos)) if isinstance(eos, str) else None

    def token_ids_for(self, data: bytes) -> list[int]:
        """Single-token ids spelling ``data`` (one token per byte string supported)."""
        if not data:
            return []
        if self.token_bytes is not None:
            return [self.token_bytes.index(data)]
        text = data.decode("utf-8")
        for key in (text, f"<0x{data[0]:02X}>"):
            if key in self.vocab:
                return [self.vocab[key]]
        raise ValueError(f"no single token spells {data!r} in {self.path}")

    def reference_mask(self, case: MaskCase, size: int) -> np.ndarray | None:
        """The expected mask of ``case`` as booleans, or None when it can't be derived."""
        if self.token_bytes is None or self.eos_id is None:
            return None
        mask = np.zeros(size, dtype=bool)
        for token_id, data in enumerate(self.token_bytes[:size]):
            mask[token_id] = bool(data) and case.allows(data)
        mask[self.eos_id] = case.accepting
        return mask


# ---------------------------------------------------------------------- engines


class Engine(Protocol):
    """What the benchmark needs from an engine (see ``peers.LlguidanceEngine``)."""

    name: str
    load_seconds: float

    @property
    def vocab_size(self) -> int: ...
    def compile(self, regex: str) -> Any: ...
    def new_matcher(self, compiled: Any) -> Any: ...
    def consume(self, matcher: Any, token: int) -> bool: ...
    def fill(self, matcher: Any, bitmask: np.ndarray) -> None: ...
    def allocate_bitmask(self) -> np.ndarray: ...
    def forget_compiled(self) -> None: ...


def find_cache_clear(module: Any) -> tuple[str, Callable[[], Any]] | None:
    """A hook that empties leapgram's compile cache, if it exposes one."""
    candidates = (
        ("leapgram.clear_compile_cache", getattr(module, "clear_compile_cache", None)),
        ("leapgram.compile.cache_clear", getattr(module.compile, "cache_clear", None)),
        ("leapgram.compiler.clear_cache", getattr(getattr(module, "compiler", None), "clear_cache", None)),
    )
    for name, hook in candidates:
        if callable(hook):
            return name, hook
    return None


class LeapgramEngine:
    """Regex masks from leapgram over a ``tokenizer.json``."""

    name = "leapgram"

    def __init__(self, tokenizer_json_path: Path) -> None:
        """Load the vocabulary and build a trie; the times go to ``load_seconds``."""
        import leapgram

        self.lg = leapgram
        self.path = str(tokenizer_json_path)
        self.vocab, self.vocab_seconds = self.load_vocab()
        self.trie, self.trie_seconds = self.build_trie()
        self.load_seconds = self.vocab_seconds + self.trie_seconds
        self.cache_clear = find_cache_clear(leapgram)

    def load_vocab(self) -> tuple[Any, float]:
        """A fresh ``Vocabulary`` and the seconds it took."""
        start = time.perf_counter()
        vocab = self.lg.Vocabulary.from_tokenizer_json(self.path)
        return vocab, time.perf_counter() - start

    def build_trie(self) -> tuple[Any, float]:
        """A fresh ``TokenTrie`` of the loaded vocabulary and the seconds it took."""
        start = time.perf_counter()
        trie = self.lg.TokenTrie(self.vocab)
        return trie, time.perf_counter() - start

    @property
    def version(self) -> str:
        """leapgram's version string, or "dev"."""
        return str(getattr(self.lg, "__version__", "dev"))

    @property
    def vocab_size(self) -> int:
        """Number of token ids, the width of a mask in bits."""
        return int(self.vocab.size)

    @property
    def num_trie_nodes(self) -> int | None:
        """Nodes of the token trie, for ns per node of a full walk."""
        nodes = getattr(self.trie, "num_nodes", None)
        return int(nodes) if nodes is not None else None

    def compile(self, regex: str) -> Any:
        """``GrammarCompiler(vocab).compile_regex(regex)``: a fresh compiler, so nothing is cached."""
        return self.lg.GrammarCompiler(self.vocab).compile_regex(regex)

    def new_matcher(self, compiled: Any) -> Any:
        """A matcher at the start state of ``compiled``."""
        return self.lg.Matcher(compiled)

    def consume(self, matcher: Any, token: int) -> bool:
        """Advance ``matcher`` by one token; False if the token is not allowed."""
        return bool(matcher.consume_token(token))

    def fill(self, matcher: Any, bitmask: np.ndarray) -> None:
        """Write the next-token mask of ``matcher`` into row 0 of ``bitmask``."""
        matcher.fill_next_token_bitmask(bitmask, 0)

    def allocate_bitmask(self) -> np.ndarray:
        """An int32 array of shape ``(1, ceil(vocab_size / 32))``."""
        return self.lg.allocate_token_bitmask(1, self.vocab_size)

    def forget_compiled(self) -> None:
        """Empty leapgram's compile cache (if it has a hook), so compiles are real."""
        if self.cache_clear is not None:
            self.cache_clear[1]()


def forget_compiled(engine: Engine) -> None:
    """Call the engine's cache-emptying hook, where it has one."""
    hook = getattr(engine, "forget_compiled", None)
    if hook is not None:
        hook()


# ---------------------------------------------------------------------- timing


def summarize(samples_ns: list[int]) -> dict[str, Any]:
    """Median and min in microseconds, plus the raw samples in ns."""
    return {
        "median_us": statistics.median(samples_ns) / 1e3,
        "min_us": min(samples_ns) / 1e3,
        "samples_ns": samples_ns,
    }


def mask_bits(bitmask: np.ndarray, size: int) -> np.ndarray:
    """Row 0 of an int32 bitmask as one boolean per token id."""
    row = np.ascontiguousarray(bitmask[0]).astype("<i4", copy=False).view(np.uint8)
    return np.unpackbits(row, bitorder="little")[:size].astype(bool)


def fresh_state(engine: Engine, compiled: Any, prefix_ids: list[int]) -> Any:
    """A new matcher of ``compiled`` that has consumed ``prefix_ids``."""
    matcher = engine.new_matcher(compiled)
    for token in prefix_ids:
        if not engine.consume(matcher, token):
            raise RuntimeError(f"{engine.name} refused prefix token {token}")
    return matcher


def time_fill(engine: Engine, matcher: Any, bitmask: np.ndarray) -> int:
    """Nanoseconds of one fill."""
    start = time.perf_counter_ns()
    engine.fill(matcher, bitmask)
    return time.perf_counter_ns() - start


def one_rep(engine: Engine, regex: str, prefix_ids: list[int], bitmask: np.ndarray) -> dict[str, int]:
    """One repetition on a never-seen regex text; all times in ns."""
    forget_compiled(engine)
    start = time.perf_counter_ns()
    compiled = engine.compile(regex)
    compiled_at = time.perf_counter_ns()
    matcher = fresh_state(engine, compiled, prefix_ids)
    first_start = time.perf_counter_ns()
    engine.fill(matcher, bitmask)
    end = time.perf_counter_ns()
    repeat = time_fill(engine, matcher, bitmask)
    warm = time_fill(engine, fresh_state(engine, compiled, prefix_ids), bitmask)
    return {
        "compile": compiled_at - start,
        "first_mask": end - first_start,
        "ttfm": end - start,
        "warm_grammar_mask": warm,
        "repeat_fill": repeat,
    }


def seen_rep(engine: Engine, regex: str, prefix_ids: list[int], bitmask: np.ndarray) -> dict[str, int]:
    """TTFM of a regex text compiled and masked just before (what a compile cache saves)."""
    engine.fill(fresh_state(engine, engine.compile(regex), prefix_ids), bitmask)
    start = time.perf_counter_ns()
    engine.fill(fresh_state(engine, engine.compile(regex), prefix_ids), bitmask)
    return {"seen_ttfm": time.perf_counter_ns() - start}


def measure_case(engine: Engine, case: MaskCase, prefix_ids: list[int], reps: int,
                 warmup: int) -> dict[str, Any]:
    """Time ``case`` on ``engine`` over fresh compiles; returns stats and the mask."""
    bitmask = engine.allocate_bitmask()
    for depth in range(reps + 1, reps + 1 + warmup):
        one_rep(engine, nested(case.regex, depth), prefix_ids, bitmask)
    samples: dict[str, list[int]] = {}
    popcounts: set[int] = set()
    gc.collect()
    gc.disable()
    try:
        for depth in range(1, reps + 1):
            for key, value in one_rep(engine, nested(case.regex, depth), prefix_ids, bitmask).items():
                samples.setdefault(key, []).append(value)
            popcounts.add(int(mask_bits(bitmask, engine.vocab_size).sum()))
            for key, value in seen_rep(engine, case.regex, prefix_ids, bitmask).items():
                samples.setdefault(key, []).append(value)
    finally:
        gc.enable()
    matcher = fresh_state(engine, engine.compile(case.regex), prefix_ids)
    engine.fill(matcher, bitmask)
    result: dict[str, Any] = {key: summarize(values) for key, values in samples.items()}
    result["mask"] = mask_bits(bitmask, engine.vocab_size)
    result["popcounts_seen"] = sorted(popcounts)
    return result


def median_seconds(action: Callable[[], Any], runs: int) -> float:
    """Median wall seconds of ``action`` over ``runs`` calls."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure_loads(engine: Engine, runs: int) -> dict[str, float]:
    """Vocabulary load (+ trie build) seconds, median over ``runs`` fresh loads."""
    if isinstance(engine, LeapgramEngine):
        vocab = statistics.median(engine.load_vocab()[1] for _ in range(runs))
        trie = statistics.median(engine.build_trie()[1] for _ in range(runs))
        return {"vocab_s": vocab, "trie_s": trie, "load_s": vocab + trie}
    if isinstance(engine, LlguidanceEngine):
        return {"load_s": median_seconds(engine.load_tokenizer, runs)}
    return {"load_s": engine.load_seconds}


# --------------------------------------------------------------------- startup

STARTUP_SNIPPET = """
import json, sys, time
t0 = time.perf_counter()
import leapgram
t1 = time.perf_counter()
vocab = leapgram.Vocabulary.from_tokenizer_json(sys.argv[1])
t2 = time.perf_counter()
compiled = leapgram.compile(leapgram.Grammar.from_regex(r"[0-9]+"), vocab)
matcher = leapgram.Matcher(compiled)
bitmask = leapgram.allocate_token_bitmask(1, vocab.size)
matcher.fill_next_token_bitmask(bitmask, 0)
t3 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "vocab_s": t2 - t1, "compile_first_mask_s": t3 - t2}))
"""


def child_env(numba_cache_dir: str | None) -> dict[str, str]:
    """Environment for a child Python that imports from this checkout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    if numba_cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = numba_cache_dir
    return env


def run_python(args: list[str], env: dict[str, str], timeout: float = 600.0) -> tuple[float, str]:
    """Run ``python ARGS`` in the repo root; wall seconds and stdout. Raises on failure."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout,
        check=False,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise RuntimeError(f"child python exited {done.returncode}: {tail[0]}")
    return seconds, done.stdout


def import_seconds(module: str, env: dict[str, str], runs: int) -> float:
    """Median ``python -c "import MODULE"`` minus median ``python -c pass``."""
    baseline, imported = [], []
    for _ in range(runs):
        baseline.append(run_python(["-c", "pass"], env)[0])
        imported.append(run_python(["-c", f"import {module}"], env)[0])
    return statistics.median(imported) - statistics.median(baseline)


def start_run(tokenizer_json: Path, env: dict[str, str]) -> dict[str, float]:
    """One child process: import, load, compile and first mask, with its phases."""
    wall, out = run_python(["-c", STARTUP_SNIPPET, str(tokenizer_json)], env)
    phases = json.loads(out.strip().splitlines()[-1])
    phases["wall_s"] = wall
    phases["import_compile_first_mask_s"] = phases["import_s"] + phases["compile_first_mask_s"]
    return phases


def measure_leapgram_startup(tokenizer_json: Path) -> dict[str, Any]:
    """Cold start (empty numba cache), warm start and warm import of leapgram."""
    with tempfile.TemporaryDirectory(prefix="leapgram-numba-") as cache_dir:
        env = child_env(cache_dir)
        cold = start_run(tokenizer_json, env)
        warm = start_run(tokenizer_json, env)
        warm_import = import_seconds("leapgram", env, STARTUP_RUNS)
    return {"cold": cold, "warm": warm, "warm_import_s": warm_import}


def measure_llguidance_startup() -> dict[str, Any]:
    """Warm ``import llguidance`` for comparison."""
    return {"warm_import_s": import_seconds("llguidance", child_env(None), STARTUP_RUNS)}


# --------------------------------------------------------------------- report


def fmt_us(stats: dict[str, Any] | None) -> str:
    """``median (min)`` in µs, or a dash."""
    if not stats:
        return "—"
    return f"{stats['median_us']:.1f} ({stats['min_us']:.1f})"


def fmt_s(value: float | None) -> str:
    """Seconds with three decimals, or a dash."""
    return "—" if value is None else f"{value:.3f}"


def ratio(ours: float | None, peer: float | None) -> str:
    """``ours / peer`` as ``0.42x``, or a dash."""
    if ours is None or peer is None or peer <= 0:
        return "—"
    return f"{ours / peer:.2f}x"


def verdict(value: float | None, limit: float | None) -> str:
    """``ok`` / ``MISS`` against a target, or empty."""
    if value is None or limit is None:
        return ""
    return "ok" if value <= limit else "MISS"


def stat_of(results: dict[str, Any], engine: str, case: str, metric: str) -> dict[str, Any] | None:
    """The stats dict of one measurement, or None if it did not run."""
    entry = results.get("cases", {}).get(case, {}).get(engine)
    if not isinstance(entry, dict) or "error" in entry:
        return None
    return entry.get(metric)


def median_of(stats: dict[str, Any] | None) -> float | None:
    """Median in µs of a stats dict."""
    return None if stats is None else stats["median_us"]


CASE_METRICS = (
    ("first_mask", "first mask (µs)"),
    ("ttfm", "TTFM (µs)"),
    ("compile", "compile (µs)"),
    ("seen_ttfm", "TTFM, grammar used before (µs)"),
    ("warm_grammar_mask", "warm-grammar mask (µs)"),
    ("repeat_fill", "repeat fill (µs)"),
)


def case_rows(results: dict[str, Any], case: MaskCase, peer: str) -> list[list[str]]:
    """Table rows for one case."""
    rows = []
    for metric, label in CASE_METRICS:
        ours = stat_of(results, "leapgram", case.key, metric)
        theirs = stat_of(results, peer, case.key, metric)
        target = case.target_us if metric == "first_mask" else None
        target_text = f"≤ {target:g} µs" if target else ""
        rows.append([f"{case.key} {case.regex}: {label}", fmt_us(ours), fmt_us(theirs),
                     ratio(median_of(ours), median_of(theirs)), target_text,
                     verdict(median_of(ours), target)])
    return rows


def ns_per_node_row(results: dict[str, Any]) -> list[str]:
    """Row for leapgram's full-walk cost per trie node."""
    value = results.get("ns_per_node", {}).get("first_mask")
    walk = results.get("ns_per_node", {}).get("full_walk_us")
    text = "—" if value is None else f"{value:.2f} ({walk:.0f} µs)"
    return ["full walk .*, slicer off: ns per trie node", text, "n/a", "", f"≤ {TARGET_NS_PER_NODE:g} ns",
            verdict(value, TARGET_NS_PER_NODE)]


def startup_rows(results: dict[str, Any], peer: str) -> list[list[str]]:
    """Rows for loading, cold compile and warm import."""
    loads = results.get("loads", {})
    ours = results.get("startup", {}).get("leapgram", {})
    theirs = results.get("startup", {}).get(peer, {})
    ours_load = loads.get("leapgram", {}).get("load_s")
    peer_load = loads.get(peer, {}).get("load_s")
    cold = ours.get("cold", {}).get("import_compile_first_mask_s")
    warm = ours.get("warm", {}).get("import_compile_first_mask_s")
    ours_import, peer_import = ours.get("warm_import_s"), theirs.get("warm_import_s")
    return [
        ["vocab load + trie build (s)", fmt_s(ours_load), fmt_s(peer_load),
         ratio(ours_load, peer_load), "", ""],
        ["cold: import+compile+first mask (s)", fmt_s(cold), "n/a", "", "", ""],
        ["warm: import+compile+first mask (s)", fmt_s(warm), "n/a", "", "", ""],
        ["warm import (s)", fmt_s(ours_import), fmt_s(peer_import), ratio(ours_import, peer_import),
         f"≤ {TARGET_WARM_IMPORT_S:g} s", verdict(ours_import, TARGET_WARM_IMPORT_S)],
    ]


def format_table(rows: list[list[str]], header: list[str]) -> str:
    """Plain left-aligned columns."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render(results: dict[str, Any]) -> str:
    """The whole report: header, one table, agreement lines and notes."""
    peer = results["peer"]
    label = results.get("peer_label", peer)
    rows = [row for case in CASES for row in case_rows(results, case, peer)]
    rows += [ns_per_node_row(results), *startup_rows(results, peer)]
    meta = results["meta"]
    head = (f"regex masks on {meta['tokenizer']} ({meta['vocab_size']} tokens); "
            f"reps={meta['reps']}, median (min); "
            f"ratio = leapgram / {label}, below 1 means leapgram is faster")
    table = format_table(rows, ["metric", "leapgram", label, "ratio", "target", ""])
    lines = results.get("agreement", []) + startup_notes(results) + results.get("notes", []) + [READING_NOTE]
    return "\n".join([head, table, "", *(f"- {line}" for line in lines)])


READING_NOTE = ("first mask and TTFM are the fair comparison (fresh compile, fresh state); "
                "warm-grammar mask and repeat fill show what each engine reuses "
                "(cached masks, or automata built by earlier masks)")


def startup_notes(results: dict[str, Any]) -> list[str]:
    """The phases of leapgram's cold and warm child processes."""
    lines = []
    startup = results.get("startup", {}).get("leapgram", {})
    for kind in ("cold", "warm"):
        phases = startup.get(kind)
        if phases:
            lines.append(f"leapgram {kind} start: import {phases['import_s']:.3f} s, "
                         f"vocab load {phases['vocab_s']:.3f} s, compile+first mask "
                         f"{phases['compile_first_mask_s']:.3f} s (includes the trie build), "
                         f"process wall {phases['wall_s']:.3f} s")
    if "cold" in startup and "warm" in startup:
        saved = startup["cold"]["wall_s"] - startup["warm"]["wall_s"]
        lines.append(f"leapgram numba cache saves {saved:.3f} s of process wall time (cold - warm)")
    return lines


# --------------------------------------------------------------------- agreement


def describe_ids(ids: np.ndarray, tokenizer: TokenizerFile, limit: int = 5) -> str:
    """A few token ids with their bytes, for a disagreement line."""
    shown = []
    for token_id in ids[:limit].tolist():
        data = tokenizer.token_bytes[token_id] if tokenizer.token_bytes else None
        shown.append(f"{token_id}={data!r}" if data is not None else str(token_id))
    return ", ".join(shown) + (", ..." if len(ids) > limit else "")


def compare(name_a: str, a: np.ndarray, name_b: str, b: np.ndarray, tokenizer: TokenizerFile) -> str | None:
    """None if two masks agree, else a line saying where they differ."""
    size = min(len(a), len(b))
    only_a = np.flatnonzero(a[:size] & ~b[:size])
    only_b = np.flatnonzero(b[:size] & ~a[:size])
    if len(a) != len(b):
        return f"{name_a} has {len(a)} tokens, {name_b} has {len(b)}"
    if not len(only_a) and not len(only_b):
        return None
    return (f"{len(only_a)} only in {name_a} ({describe_ids(only_a, tokenizer)}); "
            f"{len(only_b)} only in {name_b} ({describe_ids(only_b, tokenizer)})")


def agreement_lines(results: dict[str, Any], masks: dict[str, dict[str, np.ndarray]],
                    tokenizer: TokenizerFile) -> list[str]:
    """One line per case: popcounts and whether the masks agree."""
    lines = []
    size = results["meta"]["vocab_size"]
    for case in CASES:
        found = masks.get(case.key, {})
        reference = tokenizer.reference_mask(case, size) if size else None
        if reference is not None:
            found = {**found, "reference": reference}
        counts = ", ".join(f"{name} {int(mask.sum())}" for name, mask in found.items())
        names = list(found)
        problems = [f"{a} vs {b}: {msg}" for i, a in enumerate(names) for b in names[i + 1:]
                    if (msg := compare(a, found[a], b, found[b], tokenizer))]
        status = "DISAGREE: " + "; ".join(problems) if problems else "agree"
        lines.append(f"{case.key} popcount: {counts} — {status}" if counts else f"{case.key}: no masks")
    return lines


# ------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokenizer", type=Path, default=DEFAULT_TOKENIZER,
                        help="tokenizer.json, or a folder holding one (default: Llama-3)")
    parser.add_argument("--reps", type=int, default=30, help="fresh compiles per case (default 30)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed compiles per case first (default 3)")
    parser.add_argument("--load-reps", type=int, default=3, help="vocabulary loads to time (default 3)")
    parser.add_argument("--only", choices=["leapgram", "llguidance"], help="run one engine only")
    parser.add_argument("--json", type=Path, help="also write all results and samples here")
    parser.add_argument("--skip-startup", action="store_true",
                        help="skip the subprocess import/compile timings")
    parser.add_argument("--llguidance-no-slicer", action="store_true",
                        help="run llguidance with slices=[] (plain trie walk) instead of its default slicer")
    return parser.parse_args(argv)


def tokenizer_json_path(given: Path) -> Path:
    """``given`` itself, or ``given/tokenizer.json`` for a folder."""
    path = given / "tokenizer.json" if given.is_dir() else given
    if not path.exists():
        raise SystemExit(f"no tokenizer.json at {path}; pass --tokenizer PATH")
    return path.resolve()


def make_engines(args: argparse.Namespace, path: Path, notes: list[str]) -> dict[str, Engine]:
    """The engines asked for; one that fails to load becomes a note, not a crash."""
    makers: dict[str, Callable[[], Engine]] = {
        "llguidance": lambda: LlguidanceEngine(path, use_slicer=not args.llguidance_no_slicer),
        "leapgram": lambda: LeapgramEngine(path),
    }
    engines: dict[str, Engine] = {}
    for name, make in makers.items():
        if args.only in (None, name):
            try:
                engines[name] = make()
            except Exception as err:  # noqa: BLE001 - the engine may not exist yet, or lack an API
                notes.append(f"{name} unavailable: {type(err).__name__}: {err}")
    return engines


def engine_notes(engines: dict[str, Engine], args: argparse.Namespace) -> list[str]:
    """Versions and how each engine was configured."""
    notes = []
    for engine in engines.values():
        notes.append(f"{engine.name} {getattr(engine, 'version', '?')}: vocab_size {engine.vocab_size}")
    leapgram = engines.get("leapgram")
    if isinstance(leapgram, LeapgramEngine):
        hook = leapgram.cache_clear[0] if leapgram.cache_clear else "none found (regex texts differ per rep)"
        notes.append(f"leapgram trie nodes: {leapgram.num_trie_nodes}; compile-cache hook: {hook}")
    if args.llguidance_no_slicer and "llguidance" in engines:
        notes.append("llguidance ran with slices=[] (slicer off)")
    return notes


def run_cases(engines: dict[str, Engine], tokenizer: TokenizerFile, args: argparse.Namespace,
              results: dict[str, Any]) -> dict[str, dict[str, np.ndarray]]:
    """Measure every case on every engine; returns the masks for the agreement check."""
    masks: dict[str, dict[str, np.ndarray]] = {}
    for case in CASES:
        prefix_ids = tokenizer.token_ids_for(case.prefix)
        for name, engine in engines.items():
            print(f"  {case.key} on {name} ...", file=sys.stderr, flush=True)
            try:
                measured = measure_case(engine, case, prefix_ids, args.reps, args.warmup)
            except Exception as err:  # noqa: BLE001 - a peer's failure on one case is reported, not fatal
                results["cases"].setdefault(case.key, {})[name] = {"error": f"{type(err).__name__}: {err}"}
                results["notes"].append(f"{case.key} on {name} failed: {type(err).__name__}: {err}")
                continue
            masks.setdefault(case.key, {})[name] = measured.pop("mask")
            if len(measured["popcounts_seen"]) > 1:
                results["notes"].append(f"{case.key} on {name}: popcount varied across regex texts "
                                        f"{measured['popcounts_seen']}")
            results["cases"].setdefault(case.key, {})[name] = measured
    return masks


def run_loads_and_startup(engines: dict[str, Engine], path: Path, args: argparse.Namespace,
                          results: dict[str, Any]) -> None:
    """Vocabulary load timings, then the subprocess start timings."""
    for name, engine in engines.items():
        print(f"  loading vocabulary with {name} ...", file=sys.stderr, flush=True)
        results["loads"][name] = measure_loads(engine, args.load_reps)
    if args.skip_startup:
        return
    measurers = {"leapgram": lambda: measure_leapgram_startup(path), "llguidance": measure_llguidance_startup}
    for name in engines:
        print(f"  starting fresh {name} processes ...", file=sys.stderr, flush=True)
        try:
            results["startup"][name] = measurers[name]()
        except Exception as err:  # noqa: BLE001 - reported in the notes
            results["notes"].append(f"{name} startup timing failed: {type(err).__name__}: {err}")


def ns_per_node(engines: dict[str, Engine], results: dict[str, Any], reps: int) -> dict[str, float]:
    """leapgram's full trie walk for ``.*`` (slicer off, DFA already built) per trie node."""
    engine = engines.get("leapgram")
    if not isinstance(engine, LeapgramEngine) or not engine.num_trie_nodes:
        return {}
    from leapgram.mask.walk import fill_dfa_mask

    lg = engine.lg
    compiled = lg.GrammarCompiler(engine.vocab, use_slicer=False).compile_regex(r".*")
    lg.Matcher(compiled).compute_mask()
    trie, dfa = compiled._trie, compiled._engine.dfa
    stack = np.zeros(trie.max_depth + 1, dtype=np.int32)
    samples = []
    for _ in range(max(reps, 5)):
        mask = np.zeros(compiled._words, dtype=np.uint32)
        start = time.perf_counter_ns()
        fill_dfa_mask(trie, dfa, dfa.initial, mask, stack)
        samples.append(time.perf_counter_ns() - start)
    return {"first_mask": float(np.median(samples)) / trie.num_nodes,
            "full_walk_us": float(np.median(samples)) / 1e3}


def machine_meta(tokenizer: TokenizerFile, engines: dict[str, Engine],
                 args: argparse.Namespace) -> dict[str, Any]:
    """Where and how this run happened."""
    sizes = [engine.vocab_size for engine in engines.values()]
    return {
        "tokenizer": str(tokenizer.path),
        "vocab_size": max(sizes) if sizes else tokenizer.size,
        "reps": args.reps,
        "warmup": args.warmup,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "versions": {name: getattr(engine, "version", "?") for name, engine in engines.items()},
    }


def write_json(out: Path, results: dict[str, Any]) -> None:
    """Write the results, samples included."""
    out.write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table; exit status 1 if no engine ran."""
    args = parse_args(argv)
    path = tokenizer_json_path(args.tokenizer)
    tokenizer = TokenizerFile(path)
    notes: list[str] = []
    engines = make_engines(args, path, notes)
    peer = "llguidance"
    label = "llguidance (no slicer)" if args.llguidance_no_slicer else peer
    results: dict[str, Any] = {"peer": peer, "peer_label": label, "cases": {}, "loads": {}, "startup": {},
                               "notes": notes}
    results["meta"] = machine_meta(tokenizer, engines, args)
    notes.extend(engine_notes(engines, args))
    if tokenizer.token_bytes is None or tokenizer.eos_id is None:
        notes.append("no reference masks: the tokenizer is not byte-level or its EOS is unknown")
    masks = run_cases(engines, tokenizer, args, results)
    run_loads_and_startup(engines, path, args, results)
    results["ns_per_node"] = ns_per_node(engines, results, args.reps)
    results["agreement"] = agreement_lines(results, masks, tokenizer)
    print(render(results))
    if args.json:
        write_json(args.json, results)
    return 0 if engines else 1


if __name__ == "__main__":
    raise SystemExit(main())
