"""Context-free-grammar token masks on real JSON: leapgram against llguidance, same run.

A JSON grammar in Lark walks real JSON documents from ``../shared/jsonschemabench`` token
by token on the Llama-3 vocabulary. At every token boundary (and once after the last
token, where EOS must be allowed) each engine fills the next-token mask; the fill alone is
timed with ``perf_counter_ns`` (``--clock cpu``: the thread's CPU time, which a loaded machine's
preemptions do not inflate; each reading then costs about 0.5-2 µs, inside every mask of every
engine). Engines, all on the same grammar, documents and token ids:

- ``leapgram``: slicer on (the default);
- ``leapgram no slicer``: ``compile(..., use_slicer=False)``, every mask a full trie walk;
- ``llguidance``: ``LLMatcher`` on the same Lark text (its own slicer on, the default);
- ``warm``: leapgram with one compiled grammar reused by all documents, and llguidance with
  one ``LLMatcher`` ``deep_copy()``-ed per document -- how a server runs one grammar for many
  requests.

Two settings, both reported against the target. *Fresh*: each document gets a fresh compile
in both engines (``leapgram.clear_cache()``, a new ``Grammar``, ``compile``; a new
``LLMatcher``), so every lexer row and parser row is built again and only masks reused
*within* a document count as cache hits. *Warm*: the compiled grammar (leapgram: lexer DFA and
the mask cache keyed by chart fingerprint and lexer state, shared by all matchers; llguidance:
the lexer shared by deep copies) persists across documents. Vocabulary-level tables (tries,
slices) are built before timing in both.

Documents: one per file, the first valid test whose ``json.dumps(data,
ensure_ascii=False)`` fits ``--max-bytes``, in sorted file order; ``--docs`` of them evenly
spaced over the eligible ones. A mask is *in a string* when the bytes consumed before it end
inside a JSON string literal (keys included).

Reported: per-mask mean, p50, p90, p99 and max (µs), in strings and outside, over the masks
after each document's first (TBM, as ``leapgram bench`` and MaskBench count it: the first mask
is part of TTFM, and engines differ in how much of it they do while compiling); the slicer
speedup in strings; leapgram / llguidance ratios of the means (and, for information, of the
means with the first masks included); TTFM (compile + first mask) per document; agreement of the masks between engines; the slowest leapgram masks with the
lexer and parser situation before them, each replayed three times (fresh compile, same
prefix) to tell a slow mask from machine noise.

Masks are compared bit for bit. A difference is *explained* when one engine only adds tokens
that put JSON whitespace before the document or after a complete one: Lark's ``%ignore``
allows that (so does ``lark`` itself), llguidance's Lark dialect does not. Any other
difference is printed as UNEXPLAINED with the tokens involved: a bug report, not a crash.
The leapgram grammar falls back to ``json_grammar()`` of tests/mask/cfg_grammars.py (and
says so) when ``Grammar.from_lark`` is missing or rejects the text.

``--grammar gbnf`` walks the same documents under llama.cpp's ``json.gbnf`` (character-level
rules, ``ws ::= | " " | "\\n" [ \\t]{0,20}``): leapgram through ``Grammar.from_gbnf``, llguidance
through its own ``gbnf_to_lark`` converter; the two languages are the same, so every mask must agree.
``--grammar gbnf-optional-ws`` writes its whitespace ``ws ::= (" " | "\\n" [ \\t]{0,20})?`` (as issue 26
does), and ``--grammar gbnf-schema-style`` is JSON as llama.cpp's json-schema-to-grammar writes it
(``char``, ``space ::= | " " | "\\n"{1,2} [ \\t]{0,20}``, digit runs of at most 16: a document with a
longer run is refused by every engine at the same token).

Run from the repository root::

    .venv/bin/python benchmarks/bench_cfg_masks.py
    .venv/bin/python benchmarks/bench_cfg_masks.py --docs 400 --max-bytes 8192 --json out.json
    .venv/bin/python benchmarks/bench_cfg_masks.py --grammar gbnf --docs 100
    .venv/bin/python benchmarks/bench_cfg_masks.py --grammar gbnf-schema-style --docs 100 --clock cpu
"""

from __future__ import annotations

import argparse
import gc
import heapq
import importlib.util
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO_ROOT / ".." / "shared" / "jsonschemabench"
BUILDER_GRAMMARS = REPO_ROOT / "tests" / "helpers" / "cfg_grammars.py"
sys.path.insert(0, str(REPO_ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_regex_masks import DEFAULT_TOKENIZER, format_table, ratio, tokenizer_json_path, verdict
from peers import LlguidanceLarkEngine

from tests.helpers.gbnf_grammars import JSON as GBNF_JSON_OBJECT  # llama.cpp's json.gbnf

TARGET_SLICER_SPEEDUP = 5.0
TARGET_MEAN_RATIO = 1.0
PROGRESS_EVERY = 50
CLOCK = [time.perf_counter_ns]  # --clock cpu: [time.thread_time_ns]

# JSON-exact terminals, the same regexes as ``json_grammar()`` in tests/mask/cfg_grammars.py,
# so the builder fallback defines the same language. ``common.WS`` would also allow \f, and
# ``common.SIGNED_NUMBER`` accepts "+1" and "1.", so both are spelled out here.
JSON_LARK = r"""
start: value
?value: object | array | STRING | NUMBER | "true" | "false" | "null"
object: "{" (member ("," member)*)? "}"
member: STRING ":" value
array: "[" (value ("," value)*)? "]"
STRING: /"([^"\\\x00-\x1f]|\\["\\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/
NUMBER: /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/
WS: /[ \t\n\r]+/
%ignore WS
"""

# The JSON grammar written the llama.cpp way (its grammars/json.gbnf, with ``root ::= value`` so
# that documents of every top-level type are walked): character-level rules and an optional
# whitespace of at most one newline and 20 spaces or tabs. ``--grammar gbnf`` runs it: leapgram
# through ``Grammar.from_gbnf``, llguidance through its own converter (``llguidance.gbnf_to_lark``).
JSON_GBNF = GBNF_JSON_OBJECT.replace("root   ::= object", "root   ::= value", 1)

# The same grammar with the optional whitespace written as issue 26 writes it, ``ws ::= (" " |
# "\n" [ \t]{0,20})?`` (the same language: an optional group instead of an empty alternative).
JSON_GBNF_OPTIONAL_WS = JSON_GBNF.replace(r'ws ::= | " " | "\n" [ \t]{0,20}', r'ws ::= (" " | "\n" [ \t]{0,20})?', 1)

# Any JSON value the way llama.cpp's json-schema-to-grammar writes its rules (``{}`` there gives
# ``object``): rules named by role, a ``char`` rule, ``space`` with one or two newlines, digit runs
# capped at 16 as llama.cpp caps them, and ``root ::= value`` as above.
JSON_GBNF_SCHEMA_STYLE = r"""
root ::= value
value ::= object | array | string | number | boolean | null
object ::= "{" space ( string ":" space value ("," space string ":" space value)* )? "}" space
array ::= "[" space ( value ("," space value)* )? "]" space
string ::= "\"" char* "\"" space
char ::= [^"\\\x7F\x00-\x1F] | [\\] (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
number ::= ("-"? integral-part) ("." decimal-part)? ([eE] [-+]? [0-9] [0-9]{0,15})? space
integral-part ::= [0] | [1-9] [0-9]{0,15}
decimal-part ::= [0-9]{1,16}
boolean ::= ("true" | "false") space
null ::= "null" space
space ::= | " " | "\n"{1,2} [ \t]{0,20}
"""

GBNF_GRAMMARS = {  # --grammar name -> (text, description)
    "gbnf": (JSON_GBNF, "llama.cpp's json.gbnf"),
    "gbnf-optional-ws": (JSON_GBNF_OPTIONAL_WS, 'json.gbnf with ws ::= (" " | "\n" [ \t]{0,20})?'),
    "gbnf-schema-style": (JSON_GBNF_SCHEMA_STYLE, "JSON in llama.cpp's json-schema-to-grammar style"),
}

WARMUP_DOCUMENT = {"a": [1, -2.5e3, {"b": None}], "c": "x\n\u00e9 \\ \"q\" long enough text", "d": True,
                   "e": False, "f": [], "g": {}}


# --------------------------------------------------------------------- documents


@dataclass(frozen=True)
class Document:
    """One JSON document: its source file, UTF-8 bytes and Llama-3 token ids."""

    name: str
    data: bytes
    tokens: tuple[int, ...] = ()

    def offsets(self, token_bytes: Callable[[int], bytes]) -> np.ndarray:
        """Byte offset of each mask: before token ``i``, and after the last token."""
        lengths = [len(token_bytes(t)) for t in self.tokens]
        return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])


def serialize(data: Any) -> bytes | None:
    """``json.dumps(data, ensure_ascii=False)`` as UTF-8; None if it has NaN or lone surrogates."""
    try:
        return json.dumps(data, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, UnicodeEncodeError):
        return None


def first_valid_document(path: Path, max_bytes: int) -> bytes | None:
    """The first valid test of a jsonschemabench file that serializes within ``max_bytes``."""
    case = json.loads(path.read_text(encoding="utf-8"))
    for test in case.get("tests", []):
        if test.get("valid") and "data" in test:
            data = serialize(test["data"])
            if data is not None and len(data) <= max_bytes:
                return data
    return None


def evenly_spaced(items: list[Any], count: int) -> list[Any]:
    """``count`` items spread evenly over ``items`` (all of them if there are fewer)."""
    if count >= len(items):
        return list(items)
    return [items[i * len(items) // count] for i in range(count)]


def load_documents(corpus: Path, count: int, max_bytes: int) -> tuple[list[Document], int]:
    """The sampled documents and how many files had an eligible one."""
    files = sorted(corpus.glob("*.json"))
    if not files:
        raise SystemExit(f"no *.json files in {corpus}; pass --corpus DIR")
    eligible = []
    for path in files:
        data = first_valid_document(path, max_bytes)
        if data is not None:
            eligible.append(Document(path.name, data))
    return evenly_spaced(eligible, count), len(eligible)


def string_flags(data: bytes) -> np.ndarray:
    """``flags[i]``: whether the first ``i`` bytes of ``data`` end inside a JSON string."""
    flags = np.zeros(len(data) + 1, dtype=bool)
    inside = escaped = False
    for i, byte in enumerate(data):
        if escaped:
            escaped = False
        elif inside and byte == 0x5C:
            escaped = True
        elif byte == 0x22:
            inside = not inside
        flags[i + 1] = inside
    return flags


# ----------------------------------------------------------------------- engines


class MaskRunner(Protocol):
    """What :func:`walk_document` needs from one engine configuration."""

    key: str
    label: str
    eos_ids: tuple[int, ...]

    def start(self) -> Any: ...
    def fill(self, matcher: Any, bitmask: np.ndarray, index: int) -> None: ...
    def consume(self, matcher: Any, token: int) -> bool: ...


def load_builder_json_grammar() -> Callable[[], Any]:
    """``json_grammar`` from tests/helpers/cfg_grammars.py, imported by path."""
    spec = importlib.util.spec_from_file_location("leapgram_bench_cfg_grammars", BUILDER_GRAMMARS)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {BUILDER_GRAMMARS}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.json_grammar


def leapgram_grammar_factory(lg: Any, force_builder: bool, notes: list[str], syntax: str = "lark") -> Callable[[], Any]:
    """A function making a fresh leapgram ``Grammar`` per call: ``Grammar.from_lark(JSON_LARK)``,
    or the builder's ``json_grammar()`` when the Lark front end is missing or fails;
    ``Grammar.from_gbnf`` of the text of ``GBNF_GRAMMARS[syntax]`` for the GBNF grammars."""
    if syntax in GBNF_GRAMMARS:
        text, description = GBNF_GRAMMARS[syntax]
        lg.Grammar.from_gbnf(text)
        notes.append(f"leapgram grammar: Grammar.from_gbnf, {description}")
        return lambda: lg.Grammar.from_gbnf(text)
    if not force_builder:
        try:
            lg.Grammar.from_lark(JSON_LARK)
            notes.append("leapgram grammar: Grammar.from_lark(JSON_LARK), the same text as llguidance")
            return lambda: lg.Grammar.from_lark(JSON_LARK)
        except Exception as err:  # noqa: BLE001 - the Lark front end may be missing or reject the text
            reason = f"Grammar.from_lark failed ({type(err).__name__}: {err})"
    else:
        reason = "--builder-grammar given"
    notes.append(f"leapgram grammar: FALLBACK to json_grammar() from tests/mask/cfg_grammars.py "
                 f"(builder, same regexes as JSON_LARK): {reason}")
    return load_builder_json_grammar()


class LeapgramRunner:
    """leapgram on the JSON grammar: a fresh compile per document, or one warm compiled grammar."""

    def __init__(self, lg: Any, vocab: Any, make_grammar: Callable[[], Any], *, use_slicer: bool,
                 fresh: bool, key: str, label: str) -> None:
        """``fresh=False`` compiles once here and reuses the compiled grammar for every document."""
        self.lg, self.vocab, self.make_grammar = lg, vocab, make_grammar
        self.use_slicer, self.fresh, self.key, self.label = use_slicer, fresh, key, label
        self.eos_ids = tuple(int(t) for t in vocab.eos_token_ids)
        self.compiled = None if fresh else self.compile()

    def compile(self) -> Any:
        """A compiled grammar built from scratch (a new compiler: nothing cached)."""
        if hasattr(self.lg, "GrammarCompiler"):
            return self.lg.GrammarCompiler(self.vocab, use_slicer=self.use_slicer).compile(self.make_grammar())
        self.lg.clear_cache()
        return self.lg.compile(self.make_grammar(), self.vocab, use_slicer=self.use_slicer)

    def start(self) -> Any:
        """A matcher at the start of a document (after a fresh compile when ``fresh``)."""
        return self.lg.Matcher(self.compile() if self.fresh else self.compiled)

    def fill(self, matcher: Any, bitmask: np.ndarray, index: int) -> None:
        """``Matcher.fill_next_token_bitmask``."""
        matcher.fill_next_token_bitmask(bitmask, index)

    def consume(self, matcher: Any, token: int) -> bool:
        """``Matcher.consume_token``."""
        return bool(matcher.consume_token(token))


class LlguidanceRunner:
    """llguidance on the JSON grammar: a fresh ``LLMatcher`` per document, or deep copies of one."""

    def __init__(self, engine: LlguidanceLarkEngine, text: str, *, fresh: bool, key: str, label: str) -> None:
        """``fresh=False`` builds one matcher here; each document gets its ``deep_copy()``."""
        self.engine, self.text, self.fresh, self.key, self.label = engine, text, fresh, key, label
        self.eos_ids = tuple(engine.eos_token_ids)
        self.template = None if fresh else engine.compile(text)

    def start(self) -> Any:
        """A matcher at the start of a document."""
        return self.engine.compile(self.text) if self.fresh else self.template.deep_copy()

    def fill(self, matcher: Any, bitmask: np.ndarray, index: int) -> None:
        """``llguidance.numpy.fill_next_token_bitmask``."""
        self.engine.fill_row(matcher, bitmask, index)

    def consume(self, matcher: Any, token: int) -> bool:
        """``LLMatcher.consume_token``."""
        return self.engine.consume(matcher, token)


# -------------------------------------------------------------- leapgram insight


def leapgram_probe(matcher: Any) -> tuple[bool, int, int] | None:
    """Before a fill: (mask cached?, lexer states, boundary-table entries), or None.

    Reads leapgram internals (``Matcher._states``, the compiled grammar's mask cache) to tell
    cache hits from computed masks; returns None when they are not there.
    """
    try:
        compiled, state = matcher.compiled, matcher._states[-1]
        engine = compiled._engine
        hit = engine.mask_key(state) in compiled._masks
        return hit, engine.lexer.num_states, state[0].num_boundaries
    except (AttributeError, IndexError, KeyError, TypeError):
        return None


def leapgram_situation(matcher: Any) -> dict[str, Any]:
    """The lexer and parser state a leapgram matcher is in, for the slowest-mask report."""
    try:
        engine = matcher.compiled._engine
        arena, chart, lex = matcher._states[-1]
        lexer, ir = engine.lexer, engine.lexer.ir
        items = lexer.plain_items(lex) if lex > 0 else ()
        situation = {
            "lexer_state": int(lex), "lexer_fresh": bool(lex > 0 and lexer.is_fresh(lex)),
            "lexer_items": [ir.lexemes[i].name for i, _ in items],
            "chart_index": arena.depth(chart), "chart_id": chart, "earley_row_size": len(arena.row(chart)),
            "allowed_lexemes": sorted(ir.lexemes[i].name for i in arena.allowed_lexemes(chart)),
        }
        if engine.slicer is not None and lex > 0:
            situation["slices_contained"] = list(engine.slicer.contained(lex))
        return situation
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as err:
        return {"error": f"{type(err).__name__}: {err}"}


@dataclass(order=True)
class SlowMask:
    """One slow leapgram mask and where it happened."""

    ns: int
    where: dict[str, Any] = field(compare=False)


class SlowestMasks:
    """The ``limit`` slowest masks seen, described when they enter the list."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.heap: list[SlowMask] = []

    def is_candidate(self, ns: int) -> bool:
        """Whether a mask of ``ns`` would enter the list."""
        return self.limit > 0 and (len(self.heap) < self.limit or ns > self.heap[0].ns)

    def add(self, ns: int, where: dict[str, Any]) -> None:
        """Keep the mask if it is among the slowest."""
        item = SlowMask(ns, where)
        if len(self.heap) < self.limit:
            heapq.heappush(self.heap, item)
        else:
            heapq.heappushpop(self.heap, item)

    def slowest_first(self) -> list[SlowMask]:
        """The kept masks, slowest first."""
        return sorted(self.heap, reverse=True)


# ------------------------------------------------------------------------ walking


@dataclass
class DocumentRun:
    """One engine over one document: masks, times and what went wrong."""

    masks: np.ndarray
    times_ns: np.ndarray
    start_ns: int
    count: int = 0
    rejected_at: int | None = None
    not_in_mask: list[int] = field(default_factory=list)
    eos_allowed: bool = False
    cache_hits: np.ndarray | None = None


def bit_is_set(row: np.ndarray, token: int) -> bool:
    """Whether ``token`` is allowed in one int32 mask row."""
    return bool((int(row[token >> 5]) >> (token & 31)) & 1)


def popcounts(masks: np.ndarray) -> np.ndarray:
    """Allowed tokens per mask row."""
    return np.bitwise_count(masks.view(np.uint32)).sum(axis=1, dtype=np.int64)


def walk_document(runner: MaskRunner, doc: Document, words: int, slow: SlowestMasks | None,
                  where: Callable[[int], dict[str, Any]]) -> DocumentRun:
    """Fill a mask before each token of ``doc`` and after the last, consuming the tokens.

    For leapgram runners, whether each mask was a cache hit is recorded (untimed), and with
    ``slow`` the slowest masks are kept with their situation."""
    count = len(doc.tokens) + 1
    clock = CLOCK[0]
    begin = clock()
    matcher = runner.start()
    probing = isinstance(runner, LeapgramRunner)
    hits = np.zeros(count, dtype=bool) if probing else None
    run = DocumentRun(np.full((count, words), 0, dtype=np.int32), np.zeros(count, dtype=np.int64),
                      clock() - begin, cache_hits=hits)
    for index in range(count):
        probe = leapgram_probe(matcher) if probing else None
        start = clock()
        runner.fill(matcher, run.masks, index)
        run.times_ns[index] = clock() - start
        run.count = index + 1
        if probe is None:
            run.cache_hits = None
        elif run.cache_hits is not None:
            run.cache_hits[index] = probe[0]
            note_slow(slow, run.times_ns[index], matcher, probe, where(index))
        if index == len(doc.tokens):
            run.eos_allowed = any(bit_is_set(run.masks[index], t) for t in runner.eos_ids)
        elif not step(runner, matcher, run, doc.tokens[index], index):
            break
    return run


def step(runner: MaskRunner, matcher: Any, run: DocumentRun, token: int, index: int) -> bool:
    """Check ``token`` is in the mask just filled, then consume it; False if it is refused."""
    if not bit_is_set(run.masks[index], token):
        run.not_in_mask.append(index)
    if runner.consume(matcher, token):
        return True
    run.rejected_at = index
    return False


def note_slow(slow: SlowestMasks | None, ns: int, matcher: Any, probe: tuple[bool, int, int],
              where: dict[str, Any]) -> None:
    """Record a leapgram mask among the slowest, with the lexer/parser situation before it.

    First masks of documents are left out: they build the lexer DFA and show in TTFM."""
    if slow is None or where["mask_index"] == 0 or not slow.is_candidate(int(ns)):
        return
    after = leapgram_probe(matcher)
    where = {**where, "cache_hit": probe[0], "lexer_states": [probe[1], after[1] if after else None],
             "boundary_entries": [probe[2], after[2] if after else None], **leapgram_situation(matcher)}
    slow.add(int(ns), where)


def replay_us(runner: MaskRunner, doc: Document, index: int, words: int, repeats: int = 3) -> list[float]:
    """Time mask ``index`` of ``doc`` again, ``repeats`` times, each after a fresh compile and the
    same masks and tokens before it: tells a slow mask from machine noise."""
    prefix = Document(doc.name, doc.data, doc.tokens[:index])
    times = []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            run = walk_document(runner, prefix, words, None, lambda i: {})
        finally:
            gc.enable()
        times.append(run.times_ns[index] / 1e3 if run.count > index else float("nan"))
    return times


def replay_slowest(runner: MaskRunner, docs: list[Document], slowest: list[dict[str, Any]],
                   words: int) -> None:
    """Add ``replay_us`` to each of the slowest masks."""
    for item in slowest:
        where = item["where"]
        item["replay_us"] = replay_us(runner, docs[where["doc_index"]], where["mask_index"], words)


def location(doc: Document, doc_index: int, offsets: np.ndarray, inside: np.ndarray,
             token_bytes: Callable[[int], bytes]) -> Callable[[int], dict[str, Any]]:
    """Where mask ``i`` of ``doc`` is: for slow-mask and disagreement reports."""

    def where(index: int) -> dict[str, Any]:
        offset = int(offsets[index])
        token = doc.tokens[index] if index < len(doc.tokens) else None
        return {"doc": doc.name, "doc_index": doc_index, "mask_index": index,
                "in_string": bool(inside[index]), "before": doc.data[max(0, offset - 60):offset], "offset": offset,
                "next_token": None if token is None else [token, token_bytes(token)]}

    return where


# --------------------------------------------------------------------- agreement


JSON_WHITESPACE = b" \t\n\r"


def is_edge_whitespace(prefix: bytes, token: bytes) -> bool:
    """Whether ``prefix + token`` only adds JSON whitespace before the document or after a
    complete one (Lark's ``%ignore`` allows both; llguidance refuses ignored lexemes there)."""
    text = prefix + token
    if not prefix.strip(JSON_WHITESPACE) and text[:1] in (b" ", b"\t", b"\n", b"\r"):
        return True
    if text[-1:] not in (b" ", b"\t", b"\n", b"\r"):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


class DisagreementLog:
    """Masks where two engines differ, grouped by the exact set of differing tokens.

    A differing mask is *explained* when the second engine allows nothing extra and every token
    only the first allows just adds whitespace at the document's edges (:func:`is_edge_whitespace`).
    """

    def __init__(self, name_a: str, name_b: str, token_bytes: Callable[[int], bytes]) -> None:
        self.name_a, self.name_b, self.token_bytes = name_a, name_b, token_bytes
        self.count = self.in_string = self.compared = self.explained = 0
        self.kinds: dict[bytes, dict[str, Any]] = {}

    def compare(self, a: DocumentRun, b: DocumentRun, data: bytes,
                where: Callable[[int], dict[str, Any]]) -> None:
        """Compare the masks both runs filled on the document ``data``."""
        count = min(a.count, b.count)
        self.compared += count
        differ = np.flatnonzero((a.masks[:count] != b.masks[:count]).any(axis=1))
        for index in differ.tolist():
            self.record(a.masks[index], b.masks[index], data, where(index))

    def record(self, row_a: np.ndarray, row_b: np.ndarray, data: bytes, where: dict[str, Any]) -> None:
        """Count one differing mask under its kind."""
        self.count += 1
        self.in_string += where["in_string"]
        only_a, only_b = ids_of(row_a & ~row_b), ids_of(row_b & ~row_a)
        prefix = data[:where["offset"]]
        explained = not only_b.size and all(is_edge_whitespace(prefix, self.token_bytes(t))
                                            for t in only_a.tolist())
        self.explained += explained
        key = only_a.tobytes() + b"|" + only_b.tobytes()
        kind = self.kinds.get(key)
        if kind is None:
            kind = self.kinds[key] = {"masks": 0, "explained": 0, "only_a": only_a.tolist(),
                                      "only_b": only_b.tolist(), "first": where}
        kind["masks"] += 1
        kind["explained"] += explained


def ids_of(row: np.ndarray) -> np.ndarray:
    """Token ids whose bits are set in an int32 mask row."""
    return np.flatnonzero(np.unpackbits(row.view(np.uint8), bitorder="little"))


# --------------------------------------------------------------------- collecting


@dataclass
class EngineTotals:
    """Everything one engine produced over all documents."""

    times: list[np.ndarray] = field(default_factory=list)
    inside: list[np.ndarray] = field(default_factory=list)
    hits: list[np.ndarray] = field(default_factory=list)
    starts_ns: list[int] = field(default_factory=list)
    first_ns: list[int] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    not_in_mask: int = 0
    eos_missing: list[str] = field(default_factory=list)

    def add(self, run: DocumentRun, inside: np.ndarray, doc: Document) -> None:
        """Take one document's run."""
        self.times.append(run.times_ns[:run.count])
        self.inside.append(inside[:run.count])
        if run.cache_hits is not None:
            self.hits.append(run.cache_hits[:run.count])
        self.starts_ns.append(run.start_ns)
        self.first_ns.append(int(run.times_ns[0]))
        self.not_in_mask += len(run.not_in_mask)
        if run.rejected_at is not None:
            self.rejected.append(f"{doc.name} at token {run.rejected_at}")
        elif not run.eos_allowed:
            self.eos_missing.append(doc.name)


def summarize_us(ns: np.ndarray) -> dict[str, float] | None:
    """count, mean, p50, p90, p99 and max in µs; None when empty."""
    if ns.size == 0:
        return None
    us = ns.astype(np.float64) / 1e3
    p50, p90, p99 = np.percentile(us, [50, 90, 99])
    return {"count": int(us.size), "mean": float(us.mean()), "p50": float(p50), "p90": float(p90),
            "p99": float(p99), "max": float(us.max())}


def engine_stats(totals: EngineTotals) -> dict[str, Any]:
    """Per-mask stats (all, in strings, outside) over the masks after each document's first, which
    is part of TTFM (the convention of ``leapgram bench`` and MaskBench: TTFM = compile + first
    mask, TBM = the masks after it); the same over every mask, first ones included
    (``all_with_first``); and per-document start and TTFM stats."""
    times = np.concatenate([t[1:] for t in totals.times])
    inside = np.concatenate([i[1:] for i in totals.inside])
    starts, first = np.array(totals.starts_ns, dtype=np.int64), np.array(totals.first_ns, dtype=np.int64)
    stats = {"all": summarize_us(times), "string": summarize_us(times[inside]),
             "other": summarize_us(times[~inside]), "all_with_first": summarize_us(np.concatenate(totals.times)),
             "start": summarize_us(starts), "first_mask": summarize_us(first), "ttfm": summarize_us(starts + first),
             "rejected": totals.rejected, "not_in_mask": totals.not_in_mask,
             "eos_missing": totals.eos_missing}
    if totals.hits and len(totals.hits) == len(totals.times):
        stats["cache"] = cache_stats(np.concatenate([h[1:] for h in totals.hits]), inside)
    return stats


def cache_stats(hits: np.ndarray, inside: np.ndarray) -> dict[str, float]:
    """Share of masks served from leapgram's compiled-grammar mask cache."""
    return {"hit_share": float(hits.mean()) if hits.size else 0.0,
            "hit_share_string": float(hits[inside].mean()) if inside.any() else 0.0,
            "hit_share_other": float(hits[~inside].mean()) if (~inside).any() else 0.0}


def computed_string_speedup(with_slicer: EngineTotals, without: EngineTotals) -> dict[str, Any] | None:
    """Slicer speedup over in-string masks that the slicer run computed (cache misses)."""
    if len(with_slicer.hits) != len(with_slicer.times) or len(with_slicer.times) != len(without.times):
        return None
    pairs = [(a, b, i & ~h) for a, b, i, h in zip(with_slicer.times, without.times, with_slicer.inside,
                                                  with_slicer.hits) if a.size == b.size]
    ours = np.concatenate([a[sel] for a, _, sel in pairs])
    plain = np.concatenate([b[sel] for _, b, sel in pairs])
    if not ours.size:
        return None
    return {"masks": int(ours.size), "slicer": summarize_us(ours), "no_slicer": summarize_us(plain),
            "speedup": float(plain.mean() / ours.mean())}


# ------------------------------------------------------------------------- report


def fmt(value: float | None, digits: int = 1) -> str:
    """A number with thousands separators, or a dash."""
    return "—" if value is None else f"{value:,.{digits}f}"


def mask_rows(label: str, stats: dict[str, Any]) -> list[list[str]]:
    """Three table rows (all, in strings, outside) for one engine."""
    rows = []
    for kind, title in (("all", "all"), ("string", "in strings"), ("other", "outside")):
        s = stats.get(kind)
        rows.append([label if kind == "all" else "", title, f"{s['count']:,}" if s else "0",
                     *(fmt(s[k]) if s else "—" for k in ("mean", "p50", "p90", "p99", "max"))])
    return rows


WARM_TITLE = ("warm: one compiled grammar (leapgram) / one deep_copy-ed LLMatcher (llguidance) "
              "reused across all documents")
SLOWEST_TITLE = "slowest leapgram masks (slicer, fresh compile; first masks of documents left out, see TTFM):"
MASK_HEADER = ["engine", "masks", "count", "mean", "p50", "p90", "p99", "max"]


def mean_of(results: dict[str, Any], key: str, kind: str) -> float | None:
    """Mean µs of one engine and kind of mask, or None."""
    stats = results["engines"].get(key, {}).get(kind)
    return stats["mean"] if stats else None


def target_rows(results: dict[str, Any]) -> list[list[str]]:
    """The acceptance targets and the ratios around them."""
    no_slicer = mean_of(results, "leapgram_no_slicer", "string")
    slicer = mean_of(results, "leapgram", "string")
    speedup = no_slicer / slicer if no_slicer and slicer else None
    rows = [["slicer speedup in strings (mean no slicer / mean slicer)", fmt(speedup, 2) + "x",
             f"≥ {TARGET_SLICER_SPEEDUP:g}x", "" if speedup is None else
             ("ok" if speedup >= TARGET_SLICER_SPEEDUP else "MISS")]]
    computed = results.get("computed_string_speedup")
    if computed:
        rows.append([f"  same, masks leapgram computed (cache misses, {computed['masks']:,})",
                     fmt(computed["speedup"], 2) + "x", "", ""])
    for key, title in (("leapgram", "leapgram"), ("leapgram_no_slicer", "leapgram no slicer")):
        for kind, what in (("all", "all masks"), ("string", "in strings"), ("other", "outside")):
            ours, theirs = mean_of(results, key, kind), mean_of(results, "llguidance", kind)
            target = TARGET_MEAN_RATIO if (key, kind) == ("leapgram", "all") else None
            value = ours / theirs if ours and theirs else None
            rows.append([f"{title} / llguidance, mean {what}", ratio(ours, theirs),
                         f"≤ {target:g}x" if target else "", verdict(value, target)])
    ours, theirs = mean_of(results, "leapgram", "all_with_first"), mean_of(results, "llguidance", "all_with_first")
    if ours and theirs:
        rows.append(["  same, each document's first mask included (it is in TTFM)", ratio(ours, theirs), "", ""])
    ours, theirs = mean_of(results, "leapgram_warm", "all"), mean_of(results, "llguidance_warm", "all")
    if ours and theirs:
        rows.append(["warm: leapgram / llguidance, mean all masks", ratio(ours, theirs),
                     f"≤ {TARGET_MEAN_RATIO:g}x", verdict(ours / theirs, TARGET_MEAN_RATIO)])
    return rows


def ttfm_rows(results: dict[str, Any]) -> list[list[str]]:
    """Per-document compile (or matcher creation) and TTFM rows."""
    rows = []
    for key, stats in results["engines"].items():
        start, ttfm, first = stats.get("start"), stats.get("ttfm"), stats.get("first_mask")
        rows.append([results["labels"][key], *(fmt(s[k]) if s else "—" for s, k in
                     ((start, "p50"), (first, "p50"), (ttfm, "p50"), (ttfm, "p99"), (ttfm, "mean")))])
    return rows


TTFM_HEADER = ["engine", "compile p50", "first mask p50", "TTFM p50", "TTFM p99", "TTFM mean"]


def render_masks(results: dict[str, Any]) -> list[str]:
    """The per-mask tables, fresh then warm."""
    labels, engines = results["labels"], results["engines"]
    fresh = [row for key in ("leapgram", "leapgram_no_slicer", "llguidance") if key in engines
             for row in mask_rows(labels[key], engines[key])]
    warm = [row for key in ("leapgram_warm", "llguidance_warm") if key in engines
            for row in mask_rows(labels[key], engines[key])]
    clock = "thread CPU time" if results["meta"].get("clock") == "cpu" else "wall clock"
    lines = [(f"per-mask fill time, µs ({clock}) — fresh compile per document; each document's first mask is "
              "left out (it is in TTFM, below)"),
             format_table(fresh, MASK_HEADER)]
    if warm:
        lines += ["", WARM_TITLE, format_table(warm, MASK_HEADER)]
    return lines


def render_cache(results: dict[str, Any]) -> list[str]:
    """leapgram's mask-cache share and the computed-mask slicer speedup."""
    lines = []
    for key in ("leapgram", "leapgram_warm"):
        cache = results["engines"].get(key, {}).get("cache")
        if cache:
            lines.append(f"{results['labels'][key]}: {cache['hit_share']:.0%} of masks served from the "
                         f"compiled grammar's mask cache ({cache['hit_share_string']:.0%} in strings, "
                         f"{cache['hit_share_other']:.0%} outside)")
    computed = results.get("computed_string_speedup")
    if computed:
        lines.append(f"in-string masks leapgram computed (cache misses, {computed['masks']:,}): mean "
                     f"{fmt(computed['slicer']['mean'])} µs with the slicer, "
                     f"{fmt(computed['no_slicer']['mean'])} µs without (p99 "
                     f"{fmt(computed['slicer']['p99'])} / {fmt(computed['no_slicer']['p99'])})")
    return lines


def render_agreement(results: dict[str, Any]) -> list[str]:
    """Tokenization, consumption, EOS and mask-agreement lines."""
    lines = [results["tokenization"]]
    for key, stats in results["engines"].items():
        label = results["labels"][key]
        lines.append(f"{label}: consumed token missing from its mask {stats['not_in_mask']} times; "
                     f"refused a token in {len(stats['rejected'])} docs{brief(stats['rejected'])}; "
                     f"EOS not allowed at the end of {len(stats['eos_missing'])} docs"
                     f"{brief(stats['eos_missing'])}")
    for log in results["disagreements"]:
        lines.append(f"masks differing, {log['a']} vs {log['b']}: {log['count']:,} of {log['compared']:,} "
                     f"({log['in_string']:,} in strings) in {len(log['kinds'])} kinds; UNEXPLAINED "
                     f"{log['count'] - log['explained']:,}, explained by whitespace at the document's edges "
                     f"{log['explained']:,}" + (EDGE_NOTE if log["explained"] else ""))
    return lines


EDGE_NOTE = (" (only the first engine allows JSON whitespace before the document or after a complete one: "
             "Lark's %ignore allows it, llguidance's Lark refuses ignored lexemes at the edges)")


def brief(names: list[str], limit: int = 3) -> str:
    """`` (a, b, c, ...)`` or nothing."""
    if not names:
        return ""
    return " (" + ", ".join(names[:limit]) + (", ..." if len(names) > limit else "") + ")"


def describe_tokens(ids: list[int], token_bytes: Callable[[int], bytes], limit: int = 6) -> str:
    """A few token ids with their bytes."""
    shown = ", ".join(f"{t}={token_bytes(t)!r}" for t in ids[:limit])
    return f"{len(ids)} [{shown}{', ...' if len(ids) > limit else ''}]"


def render_kinds(results: dict[str, Any], token_bytes: Callable[[int], bytes], limit: int) -> list[str]:
    """The first kinds of disagreement per pair of engines, with the differing tokens."""
    lines = []
    for log in results["disagreements"]:
        for number, kind in enumerate(log["kinds"][:limit], 1):
            first = kind["first"]
            tag = "edge whitespace" if kind["explained"] == kind["masks"] else "UNEXPLAINED"
            lines.append(f"{log['a']} vs {log['b']} kind {number} ({tag}): {kind['masks']:,} masks; first at "
                         f"{first['doc']} mask {first['mask_index']} "
                         f"({'in string' if first['in_string'] else 'outside'}), after "
                         f"...{first['before'][-40:]!r}, next token {first['next_token']}")
            lines.append(f"    only {log['a']}: {describe_tokens(kind['only_a'], token_bytes)}")
            lines.append(f"    only {log['b']}: {describe_tokens(kind['only_b'], token_bytes)}")
    return lines


def render_slowest(results: dict[str, Any]) -> list[str]:
    """The slowest leapgram (slicer, fresh) masks with their situation."""
    lines = []
    for number, item in enumerate(results["slowest"], 1):
        w = item["where"]
        lines.append(f"{number}. {item['us']:,.0f} µs: {w['doc']} mask {w['mask_index']}, "
                     f"{'in string' if w['in_string'] else 'outside strings'}, "
                     f"{'cache hit' if w['cache_hit'] else 'computed'}")
        replay = ", ".join(f"{t:,.0f}" for t in item.get("replay_us", []))
        lines.append(f"   replayed (fresh compile, same prefix): {replay or '—'} µs")
        lines.append(f"   after ...{w['before'][-50:]!r}; next token {w['next_token']}")
        lines.append(f"   lexer: state {w.get('lexer_state')} (fresh={w.get('lexer_fresh')}), items "
                     f"{w.get('lexer_items')}; states {w['lexer_states'][0]}->{w['lexer_states'][1]}, "
                     f"boundary entries {w['boundary_entries'][0]}->{w['boundary_entries'][1]}")
        lines.append(f"   parser: chart at lexeme {w.get('chart_index')}, Earley row size "
                     f"{w.get('earley_row_size')}, allowed lexemes {w.get('allowed_lexemes')}; "
                     f"slices contained {w.get('slices_contained')} {w.get('error', '')}".rstrip())
    return lines


def render(results: dict[str, Any], token_bytes: Callable[[int], bytes], kinds: int) -> str:
    """The whole printed report."""
    meta = results["meta"]
    head = (f"CFG masks, JSON grammar: {meta['docs']} documents ({meta['bytes']:,} bytes, "
            f"{meta['eligible']:,} eligible, max {meta['max_bytes']:,} bytes) from {meta['corpus']}, "
            f"{meta['tokenizer_name']} ({meta['vocab_size']:,} tokens): {meta['masks']:,} masks per engine "
            f"({meta['string_masks']:,} in strings); {meta['wall_s']:.0f} s on {meta['cpus']} CPUs, "
            f"1-min load average {meta['load_average'][0]} at start, {meta['load_average'][1]} at end")
    sections = [[head, *(f"- {note}" for note in results["notes"])], render_masks(results),
                ["targets and ratios (ratio = leapgram / llguidance, below 1 means leapgram is faster)",
                 format_table(target_rows(results), ["metric", "value", "target", ""])],
                ["per document, µs (compile = grammar compile + matcher, or deep_copy when warm)",
                 format_table(ttfm_rows(results), TTFM_HEADER)],
                [f"- {line}" for line in render_cache(results) + render_agreement(results)],
                render_kinds(results, token_bytes, kinds),
                [SLOWEST_TITLE, *render_slowest(results)]]
    return "\n\n".join("\n".join(section) for section in sections if section)


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=200, help="documents to walk (default 200)")
    parser.add_argument("--max-bytes", type=int, default=4096,
                        help="skip documents whose serialization is longer (default 4096)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="jsonschemabench folder")
    parser.add_argument("--tokenizer", type=Path, default=DEFAULT_TOKENIZER,
                        help="tokenizer.json, or a folder holding one (default: Llama-3)")
    parser.add_argument("--json", type=Path, help="also write all results and per-mask samples here")
    parser.add_argument("--no-warm", action="store_true", help="skip the secondary warm-grammar runs")
    parser.add_argument("--builder-grammar", action="store_true",
                        help="use the builder json_grammar() for leapgram even if from_lark works")
    parser.add_argument("--grammar", choices=["lark", *GBNF_GRAMMARS], default="lark",
                        help="the JSON grammar: Lark with lexemes (default) or llama.cpp's character-level GBNF")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="time each fill by the wall clock (default) or the thread's CPU time")
    parser.add_argument("--slowest", type=int, default=5, help="slowest leapgram masks to show (default 5)")
    parser.add_argument("--kinds", type=int, default=5,
                        help="kinds of disagreement to show per pair (default 5)")
    return parser.parse_args(argv)


@dataclass
class Setup:
    """Loaded vocabularies and the engine configurations to run."""

    vocab: Any
    runners: list[MaskRunner]
    llguidance: LlguidanceLarkEngine | None
    notes: list[str]


def make_setup(path: Path, args: argparse.Namespace) -> Setup:
    """Load leapgram's vocabulary and llguidance's tokenizer; build the runners."""
    import leapgram as lg

    notes: list[str] = []
    start = time.perf_counter()
    vocab = lg.Vocabulary.from_tokenizer_json(str(path))
    notes.append(f"leapgram {lg.__version__}: vocabulary load {time.perf_counter() - start:.2f} s")
    make_grammar = leapgram_grammar_factory(lg, args.builder_grammar, notes, args.grammar)
    runners: list[MaskRunner] = [
        LeapgramRunner(lg, vocab, make_grammar, use_slicer=True, fresh=True, key="leapgram",
                       label="leapgram"),
        LeapgramRunner(lg, vocab, make_grammar, use_slicer=False, fresh=True, key="leapgram_no_slicer",
                       label="leapgram no slicer")]
    peer_text = JSON_LARK if args.grammar == "lark" else peer_gbnf(notes, GBNF_GRAMMARS[args.grammar][0])
    peer = load_llguidance(path, notes, peer_text) if peer_text else None
    if peer is not None:
        runners.append(LlguidanceRunner(peer, peer_text, fresh=True, key="llguidance", label="llguidance"))
    if not args.no_warm:
        runners.append(LeapgramRunner(lg, vocab, make_grammar, use_slicer=True, fresh=False,
                                      key="leapgram_warm", label="leapgram warm"))
        if peer is not None:
            runners.append(LlguidanceRunner(peer, peer_text, fresh=False, key="llguidance_warm",
                                            label="llguidance warm"))
    return Setup(vocab, runners, peer, notes)


def peer_gbnf(notes: list[str], text: str) -> str | None:
    """A GBNF grammar in llguidance's Lark dialect, by llguidance's own converter."""
    try:
        from llguidance.gbnf_to_lark import gbnf_to_lark
    except ImportError as err:
        notes.append(f"llguidance unavailable: {err}")
        return None
    return gbnf_to_lark(text)


def load_llguidance(path: Path, notes: list[str], text: str = JSON_LARK) -> LlguidanceLarkEngine | None:
    """llguidance's tokenizer and a check of the grammar; None (and a note) if unavailable."""
    try:
        peer = LlguidanceLarkEngine(path)
        peer.compile(text)
    except Exception as err:  # noqa: BLE001 - not installed, or its Lark dialect rejects the text
        notes.append(f"llguidance unavailable: {type(err).__name__}: {err}")
        return None
    notes.append(f"llguidance {peer.version}: tokenizer load {peer.load_seconds:.2f} s "
                 f"(default slicer); grammar: {'JSON_LARK' if text == JSON_LARK else 'gbnf_to_lark(the GBNF text)'} via grammar_from_lark")
    return peer


def tokenize(docs: list[Document], vocab: Any,
             peer: LlguidanceLarkEngine | None) -> tuple[list[Document], str]:
    """Documents with leapgram's token ids, and a line on whether llguidance tokenizes the same."""
    tokenized = [Document(d.name, d.data, tuple(vocab.encode(d.data))) for d in docs]
    if peer is None:
        return tokenized, "tokenization: leapgram Vocabulary.encode (llguidance not available to compare)"
    same = sum(list(d.tokens) == peer.tokenize(d.data) for d in tokenized)
    return tokenized, (f"tokenization: leapgram Vocabulary.encode equals llguidance tokenize_bytes on "
                       f"{same}/{len(tokenized)} documents (leapgram's ids are used by every engine)")


def warm_up(runners: list[MaskRunner], vocab: Any, words: int) -> list[str]:
    """Walk a small document once per runner (numba kernels, slicer tables); returns notes."""
    data = serialize(WARMUP_DOCUMENT) or b"{}"
    doc = Document("warm-up", data, tuple(vocab.encode(data)))
    notes = []
    for runner in runners:
        start = time.perf_counter()
        walk_document(runner, doc, words, None, lambda i: {})
        notes.append(f"{runner.label} {time.perf_counter() - start:.2f} s")
    return ["warm-up (untimed; kernels, slicer tables): " + ", ".join(notes)]


@dataclass
class Collected:
    """Totals per engine, disagreement logs and per-document records."""

    totals: dict[str, EngineTotals]
    logs: list[DisagreementLog]
    slow: SlowestMasks
    documents: list[dict[str, Any]] = field(default_factory=list)


def disagreement_pairs(keys: list[str]) -> list[tuple[str, str]]:
    """Pairs of engines whose masks must agree."""
    wanted = [("leapgram", "llguidance"), ("leapgram", "leapgram_no_slicer"), ("leapgram", "leapgram_warm"),
              ("llguidance", "llguidance_warm")]
    return [(a, b) for a, b in wanted if a in keys and b in keys]


def run_document(setup: Setup, doc: Document, doc_index: int, words: int, collected: Collected) -> None:
    """Walk one document with every runner, then compare their masks."""
    token_bytes = setup.vocab.token_bytes
    offsets = doc.offsets(token_bytes)
    inside = string_flags(doc.data)[offsets]
    where = location(doc, doc_index, offsets, inside, token_bytes)
    runs: dict[str, DocumentRun] = {}
    gc.collect()
    gc.disable()
    try:
        for runner in setup.runners:
            slow = collected.slow if runner.key == "leapgram" else None
            runs[runner.key] = walk_document(runner, doc, words, slow, where)
    finally:
        gc.enable()
    for runner in setup.runners:
        collected.totals[runner.key].add(runs[runner.key], inside, doc)
    for log in collected.logs:
        log.compare(runs[log.name_a], runs[log.name_b], doc.data, where)
    collected.documents.append(document_record(doc, inside, runs))


def document_record(doc: Document, inside: np.ndarray, runs: dict[str, DocumentRun]) -> dict[str, Any]:
    """Per-document samples for ``--json``."""
    return {"name": doc.name, "bytes": len(doc.data), "tokens": len(doc.tokens),
            "in_string": inside.astype(int).tolist(),
            "engines": {key: {"start_us": run.start_ns / 1e3,
                              "times_us": np.round(run.times_ns[:run.count] / 1e3, 2).tolist(),
                              "popcounts": popcounts(run.masks[:run.count]).tolist(),
                              "rejected_at": run.rejected_at, "eos_allowed": run.eos_allowed}
                        for key, run in runs.items()}}


def run_all(setup: Setup, docs: list[Document], words: int, args: argparse.Namespace) -> Collected:
    """Walk every document; a progress line on stderr every ``PROGRESS_EVERY`` documents."""
    keys = [r.key for r in setup.runners]
    logs = [DisagreementLog(a, b, setup.vocab.token_bytes) for a, b in disagreement_pairs(keys)]
    collected = Collected({k: EngineTotals() for k in keys}, logs, SlowestMasks(args.slowest))
    start = time.perf_counter()
    masks = 0
    for index, doc in enumerate(docs):
        run_document(setup, doc, index, words, collected)
        masks += len(doc.tokens) + 1
        if (index + 1) % PROGRESS_EVERY == 0 or index + 1 == len(docs):
            print(f"  {index + 1}/{len(docs)} docs, {masks:,} masks per engine, "
                  f"{time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    return collected


def log_record(log: DisagreementLog) -> dict[str, Any]:
    """A disagreement log as plain data: unexplained kinds first, each group in order of appearance."""
    kinds = sorted(log.kinds.values(), key=lambda kind: kind["explained"] == kind["masks"])
    return {"a": log.name_a, "b": log.name_b, "count": log.count, "in_string": log.in_string,
            "compared": log.compared, "explained": log.explained, "kinds": kinds}


def build_results(setup: Setup, docs: list[Document], collected: Collected, meta: dict[str, Any],
                  notes: list[str], tokenization: str) -> dict[str, Any]:
    """Everything the report and ``--json`` need."""
    engines = {key: engine_stats(t) for key, t in collected.totals.items()}
    results = {"meta": meta, "notes": notes, "labels": {r.key: r.label for r in setup.runners},
               "engines": engines, "tokenization": tokenization,
               "disagreements": [log_record(log) for log in collected.logs],
               "slowest": [{"us": s.ns / 1e3, "where": s.where} for s in collected.slow.slowest_first()],
               "documents": collected.documents}
    if "leapgram" in collected.totals and "leapgram_no_slicer" in collected.totals:
        results["computed_string_speedup"] = computed_string_speedup(collected.totals["leapgram"],
                                                                     collected.totals["leapgram_no_slicer"])
    return results


def run_meta(args: argparse.Namespace, path: Path, docs: list[Document], eligible: int,
             vocab: Any, inside_count: int) -> dict[str, Any]:
    """Where and on what this run happened."""
    return {"docs": len(docs), "eligible": eligible, "max_bytes": args.max_bytes,
            "bytes": sum(len(d.data) for d in docs), "masks": sum(len(d.tokens) + 1 for d in docs),
            "string_masks": inside_count, "corpus": str(args.corpus), "tokenizer": str(path),
            "tokenizer_name": path.parent.name, "vocab_size": int(vocab.size),
            "python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "clock": args.clock}


def load_average() -> float | None:
    """The 1-minute load average (other processes share the CPUs), where the OS has one."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def count_string_masks(docs: list[Document], token_bytes: Callable[[int], bytes]) -> int:
    """Masks that come inside a JSON string, over all documents."""
    return sum(int(string_flags(d.data)[d.offsets(token_bytes)].sum()) for d in docs)


def write_json(out: Path, results: dict[str, Any]) -> None:
    """Write the results; bytes are written as their ``repr``."""
    def default(value: Any) -> Any:
        return repr(value) if isinstance(value, bytes) else str(value)

    out.write_text(json.dumps(results, default=default) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the report."""
    args = parse_args(argv)
    CLOCK[0] = time.thread_time_ns if args.clock == "cpu" else time.perf_counter_ns
    began = time.perf_counter()
    loads_at_start = load_average()
    path = tokenizer_json_path(args.tokenizer)
    setup = make_setup(path, args)
    sampled, eligible = load_documents(args.corpus, args.docs, args.max_bytes)
    docs, tokenization = tokenize(sampled, setup.vocab, setup.llguidance)
    words = (int(setup.vocab.size) + 31) // 32
    notes = setup.notes + warm_up(setup.runners, setup.vocab, words)
    print(f"  walking {len(docs)} documents with {len(setup.runners)} engine runs each ...", file=sys.stderr)
    collected = run_all(setup, docs, words, args)
    in_strings = count_string_masks(docs, setup.vocab.token_bytes)
    meta = run_meta(args, path, docs, eligible, setup.vocab, in_strings)
    meta["wall_s"] = time.perf_counter() - began
    results = build_results(setup, docs, collected, meta, notes, tokenization)
    replay_slowest(setup.runners[0], docs, results["slowest"], words)
    meta["load_average"] = [loads_at_start, load_average()]
    print(render(results, setup.vocab.token_bytes, args.kinds))
    if args.json:
        write_json(args.json, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
