"""leapgram as vLLM's structured-output backend (v1 engine).

Select it with ``--structured-outputs-config '{"backend": "leapgram"}'``, or offline with
:func:`register` before ``LLM(model, structured_outputs_config={"backend": "leapgram"})``.
vLLM 0.32 has no registry for out-of-tree backends, so :func:`register` (the
``vllm.general_plugins`` entry point) wraps the config's backend ``Literal``, request validation
(bad grammars are HTTP 400s with leapgram's message) and the backend's construction, for the name
``"leapgram"`` only, and only on the versions in :data:`TESTED_VLLM`. How and why:
``docs/design/vllm.md``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import sys
import threading
import time
import warnings
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

import leapgram
from leapgram import Grammar, LeapgramError, Matcher, Vocabulary
from leapgram.compiler import memory_of, running_memory

TESTED_VLLM = ("0.32.0", "0.33")
"""vLLM versions :func:`register` patches: from the first (included) to the second (excluded)."""

BACKEND_NAME = "leapgram"
DEFAULT_CACHE_SIZE = 128
"""Compiled grammars a backend keeps (``LEAPGRAM_VLLM_CACHE_SIZE`` overrides), most recent first."""
DEFAULT_CACHE_MB = 64
"""... and at most this many MB of them (``LEAPGRAM_VLLM_CACHE_MB`` overrides, ``0``: no bound):
a JSON schema's compiled grammar keeps ~0.8 MB after a request over SmolLM2's vocabulary, so 64 MB
keeps about one round of ``bench_vllm``'s schemas, what a fresh engine holds
(``docs/design/memory.md``)."""

_PATCHED = "__leapgram_patched__"
logger = logging.getLogger("vllm.leapgram")  # under vLLM's logger, so that its handlers print it


# ----- request → grammar ----------------------------------------------------------------------

def grammar_for(request_type: str, spec: str, *, compact: bool = False) -> Grammar:
    """The :class:`leapgram.Grammar` of one vLLM request: ``request_type`` is the name of a
    ``StructuredOutputOptions`` member, ``spec`` its text as vLLM keys it. Raises
    :class:`leapgram.GrammarError` (or ``UnsupportedError``) for malformed or unsupported input."""
    whitespace = "compact" if compact else "flexible"
    if request_type == "JSON":
        return Grammar.from_json_schema(spec, whitespace=whitespace)
    if request_type == "JSON_OBJECT":
        return Grammar.from_json_schema({"type": "object"}, whitespace=whitespace)
    if request_type == "REGEX":
        return Grammar.from_regex(spec)
    if request_type == "GRAMMAR":
        return Grammar.from_lark(spec) if _is_lark(spec) else Grammar.from_gbnf(spec)
    if request_type == "CHOICE":
        return Grammar.from_regex(choice_regex(json.loads(spec)))
    if request_type == "STRUCTURAL_TAG":
        return Grammar.from_structural_tag(spec)
    raise leapgram.UnsupportedError(request_type, "leapgram's vLLM backend knows JSON, JSON_OBJECT, REGEX, "
                                    "GRAMMAR, CHOICE and STRUCTURAL_TAG requests")


class ValidatedGrammars:
    """Grammars that request validation translated, kept for the compile of the same request when
    both run in one process (vLLM's in-process engine: ``LLM`` with
    ``VLLM_ENABLE_V1_MULTIPROCESSING=0``), so that a request's spec is translated once, not twice.
    Kept only while a backend lives in this process (:meth:`activate`): the front-end process of a
    multi-process engine never compiles, so it keeps none. At most ``size`` grammars, the oldest
    dropped first; each is taken once; thread-safe."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[str, str, bool], Grammar] = OrderedDict()
        self._backends = 0
        self._lock = threading.Lock()

    def activate(self, on: bool) -> None:
        """A backend was built (``True``) or destroyed (``False``) in this process."""
        with self._lock:
            self._backends += 1 if on else -1
            if self._backends <= 0:
                self._backends = 0
                self._entries.clear()

    def put(self, key: tuple[str, str, bool], grammar: Grammar) -> None:
        with self._lock:
            if not self._backends:
                return
            self._entries[key] = grammar
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def take(self, key: tuple[str, str, bool]) -> Grammar | None:
        with self._lock:
            return self._entries.pop(key, None)

    def __len__(self) -> int:
        return len(self._entries)


VALIDATED = ValidatedGrammars()
"""This process's :class:`ValidatedGrammars`."""


def choice_regex(choices: Iterable[Any]) -> str:
    """A regex that matches exactly one of ``choices`` (strings, as vLLM's ``choice`` gives them)."""
    options = [str(c) for c in choices]
    if not options:
        raise leapgram.GrammarError("choice needs at least one option")
    return "|".join(f"(?:{_escaped(option)})" for option in options)


def _escaped(text: str) -> str:
    out = []
    for ch in text:
        if ch in "\\.^$*+?{}[]|()":
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out)


def _is_lark(text: str) -> bool:
    """vLLM's rule (``grammar_is_likely_lark``): GBNF when a line outside comments holds ``::=``."""
    import re

    return not any("::=" in re.sub(r"(#|//).*$", "", line) for line in text.split("\n"))


# ----- the per-request grammar ----------------------------------------------------------------

class LeapgramGrammar:
    """One request's state for vLLM (``StructuredOutputGrammar``'s methods), over a
    :class:`leapgram.Matcher`.

    ``stop_ids`` are the request's stop tokens (EOS and user stop ids): allowed exactly when the
    output is complete, and consuming one terminates the grammar. Every other special token and
    every id past the tokenizer's vocabulary (a padded model vocabulary) stays masked.
    """

    def __init__(self, matcher: Matcher, stop_ids: Iterable[int],
                 prefetcher: MaskPrefetcher | None = None) -> None:
        self.matcher = matcher
        vocab = matcher.compiled.vocab
        self._size = vocab.size
        self._stops = frozenset(int(t) for t in stop_ids)
        self._eos_bits = _bits(vocab.eos_token_ids)
        self._stop_bits = _bits(t for t in self._stops if 0 <= t < self._size)
        self._fix_stops = self._stops != frozenset(vocab.eos_token_ids)
        self._stopped = False
        self._bitmask: Any = None
        self._rows: np.ndarray | None = None
        self.num_processed_tokens = 0
        self._prefetcher = prefetcher
        self._busy = threading.Lock()  # held by the prefetch thread while it reads the matcher
        self._wanted = False  # a prefetch of the current state's mask is queued and still useful

    def _settle(self) -> None:
        """Before the engine's thread touches the matcher: cancel a queued prefetch, or wait
        for the one running (it holds ``_busy``)."""
        self._wanted = False
        with self._busy:
            pass

    def _prefetch(self, scratch: np.ndarray) -> bool:
        """In the prefetch thread: compute (and so cache) the current state's mask, unless the
        engine's thread has touched the matcher since it was queued. Whether it ran."""
        if not self._wanted:
            return False
        with self._busy:
            if not self._wanted:
                return False
            self._wanted = False
            try:  # a 1-D scratch row: the matcher keeps its checked views of vLLM's bitmask
                self.matcher.fill_next_token_bitmask(scratch, 0)
            except Exception:  # the engine's own fill meets it again and reports it
                logger.debug("leapgram: mask prefetch failed", exc_info=True)
        return True

    def accept_tokens(self, request_id: str, tokens: list[int]) -> bool:
        """Advance by ``tokens``; ``False`` at the first one the grammar forbids. Tokens after a
        stop token are ignored (``True``), as vLLM's xgrammar backend does. With a prefetcher,
        the new state's mask is then computed in its thread, during the next forward pass."""
        self._settle()
        for token in tokens:
            if self._stopped:
                return True
            if not self._accept(int(token)):
                logger.error("leapgram: request %s: token %s rejected (%s)", request_id, token,
                             self.matcher.error() or "a stop token before the output is complete")
                return False
            self.num_processed_tokens += 1
        if self._prefetcher is not None and not self._stopped:
            self._wanted = True
            self._prefetcher.submit(self)
        return True

    def _accept(self, token: int) -> bool:
        if token in self._stops:
            self._stopped = self.matcher.is_accepting()
            return self._stopped
        if not 0 <= token < self._size:
            return False
        if self.matcher.consume_token(token):
            return True
        self.matcher.rollback(0)  # leave the error state: the rejected token was never consumed
        return False

    def validate_tokens(self, tokens: list[int]) -> list[int]:
        """The longest accepted prefix of ``tokens`` (a stop token included when it may end the
        output there); the state does not change."""
        if self._stopped:
            return []
        self._settle()
        tokens = [int(t) for t in tokens]
        end = next((i for i, t in enumerate(tokens) if t in self._stops or not 0 <= t < self._size),
                   len(tokens))
        accepted = self.matcher.validate_tokens(tokens[:end])
        if accepted < end or end == len(tokens) or tokens[end] not in self._stops:
            return tokens[:accepted]
        self.matcher.consume_tokens(tokens[:end])
        complete = self.matcher.is_accepting()
        self.matcher.rollback(end)
        return tokens[: end + 1] if complete else tokens[:end]

    def rollback(self, num_tokens: int) -> None:
        """Undo the last ``num_tokens`` accepted tokens (a stop token counts as one)."""
        if num_tokens <= 0:
            return
        self._settle()
        if self._stopped:
            self._stopped = False
            num_tokens -= 1
            self.num_processed_tokens -= 1
        self.matcher.rollback(num_tokens)
        self.num_processed_tokens -= num_tokens

    def fill_bitmask(self, bitmask: Any, batch_index: int) -> None:
        """Write the allowed next tokens into row ``batch_index`` of vLLM's int32 bitmask (a CPU
        torch tensor or a numpy array); words past the tokenizer's vocabulary are zeroed."""
        self._settle()
        if bitmask is not self._bitmask:  # vLLM reuses one tensor: one numpy view of it, checked once
            self._bitmask, self._rows = bitmask, (bitmask.numpy() if hasattr(bitmask, "numpy") else bitmask)
        rows = self._rows
        self.matcher.fill_next_token_bitmask(rows, batch_index)
        if self._fix_stops:
            self._swap_stop_bits(rows[batch_index].view(np.uint32))

    def _swap_stop_bits(self, row: np.ndarray) -> None:
        """The matcher allows the vocabulary's EOS when complete; this request stops on its own ids."""
        if self._eos_bits:
            complete = any(row[w] & b for w, b in self._eos_bits)
        else:
            complete = self.matcher.is_accepting()
        for word, bit in self._eos_bits:
            row[word] &= ~bit
        for word, bit in self._stop_bits:
            row[word] = (row[word] | bit) if complete else (row[word] & ~bit)

    def is_terminated(self) -> bool:
        return self._stopped

    def reset(self) -> None:
        self._settle()
        self.matcher.reset()
        self._stopped = False
        self.num_processed_tokens = 0


def _bits(ids: Iterable[int]) -> list[tuple[int, np.uint32]]:
    return [(t >> 5, np.uint32(1 << (t & 31))) for t in sorted(set(ids))]


class MaskPrefetcher:
    """One daemon thread that computes the next mask of each request during the forward pass,
    so that the next step's :meth:`LeapgramGrammar.fill_bitmask` copies a cached row instead of
    walking the vocabulary on the engine's critical path.

    vLLM accepts a step's tokens (each accept queues its grammar with :meth:`submit`), schedules
    the next step (then the plugin calls :meth:`release`), runs the forward pass, then fills the
    bitmask.
    The forward pass releases the GIL, so the masks not cached yet are computed beside it;
    released any earlier, the thread would fight the engine's own Python for the GIL. The work
    is the same, only moved: where the forward pass already fills every core, it competes with
    the model. While grammars are being compiled (:meth:`compiling`), queued masks are left to
    the engine's fill: the thread would slow the compiles, and so new requests' first tokens.
    ``jobs`` and ``cpu_s`` count what this thread did. A grammar the engine touches
    first settles its queued prefetch (skipped) or waits for the running one; leapgram's masks
    are thread-safe, so filling beside the engine is safe.

    ``idle=True`` (``LEAPGRAM_VLLM_PREFETCH=idle``) runs the thread under Linux's ``SCHED_IDLE``
    policy: it gets a core only when no other thread wants it, so it never preempts the model's
    threads (a preempted OpenMP thread stalls every barrier of the forward pass); fewer masks are
    then ready in time and the engine's fill computes the rest. Opt-in: on a host whose cores
    other processes keep busy, the thread can be descheduled for hundreds of milliseconds while
    it holds the GIL, and the engine's thread waits for it (a priority inversion).

    ``nice=N`` (``LEAPGRAM_VLLM_PREFETCH=nice``: 10) raises the thread's nice value by ``N`` (Linux:
    per thread): it still gets a share of a busy core (about a tenth at 10 against the model's
    threads at 0, where ``SCHED_IDLE`` gets a few thousandths), so it is descheduled for a
    bounded time while it holds the GIL. Opt-in, measured in ``docs/design/vllm.md``."""

    def __init__(self, words: int, *, idle: bool = False, nice: int = 0) -> None:
        self._queue: deque[LeapgramGrammar] = deque()
        self._wake = threading.Event()
        self._scratch = np.zeros(words, dtype=np.int32)
        self._lock = threading.Lock()
        self._closed = False
        self._compiles = 0
        self.jobs = 0
        self.cpu_s = 0.0
        self.idle = idle
        self.nice = nice
        self._thread = threading.Thread(target=self._run, name="leapgram-mask-prefetch", daemon=True)
        self._thread.start()

    def submit(self, grammar: LeapgramGrammar) -> None:
        """Queue ``grammar``'s next mask (computed after the next :meth:`release`)."""
        self._queue.append(grammar)

    @contextlib.contextmanager
    def compiling(self) -> Iterator[None]:
        """Around a grammar's compilation (in vLLM's compile threads): no prefetch meanwhile."""
        with self._lock:
            self._compiles += 1
        try:
            yield
        finally:
            with self._lock:
                self._compiles -= 1

    def release(self) -> None:
        """Compute the queued masks now (the engine is about to run the forward pass)."""
        if self._queue:
            self._wake.set()

    def close(self) -> None:
        self._closed = True
        self._queue.clear()
        self._wake.set()

    def _run(self) -> None:
        if self.idle:
            self.idle = _lower_this_thread()
        elif self.nice:
            self.nice = _renice_this_thread(self.nice)
        queue, wake, scratch, clock = self._queue, self._wake, self._scratch, time.thread_time
        while not self._closed:
            wake.wait()
            wake.clear()
            while queue:
                try:
                    grammar = queue.popleft()
                except IndexError:
                    break
                if self._compiles:  # compiles first; the engine fills this one itself
                    continue
                start = clock()
                if grammar._prefetch(scratch):
                    self.jobs += 1
                    self.cpu_s += clock() - start


def _lower_this_thread() -> bool:
    """Put the calling thread under ``SCHED_IDLE`` (Linux: the policy is per thread); whether it
    worked. Lowering one's own priority needs no privilege."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        logger.info("leapgram: SCHED_IDLE is not available here; the mask prefetch runs at normal priority")
        return False
    return True


def _renice_this_thread(step: int) -> int:
    """Raise the calling thread's nice value by ``step`` (at most to 19); the step taken, 0 when
    it could not be (raising one's own nice value needs no privilege). Linux only: elsewhere a
    thread id is no process id, and the nice value is the whole process's."""
    if not sys.platform.startswith("linux"):
        logger.info("leapgram: per-thread nice values are Linux's; the mask prefetch runs at normal priority")
        return 0
    try:
        tid = threading.get_native_id()
        now = os.getpriority(os.PRIO_PROCESS, tid)
        target = min(19, now + step)
        os.setpriority(os.PRIO_PROCESS, tid, target)
    except (AttributeError, OSError):
        logger.info("leapgram: the mask prefetch thread's nice value cannot be set here; it runs at normal priority")
        return 0
    return target - now


# ----- the engine-level backend ---------------------------------------------------------------

class GrammarCache:
    """Compiled grammars by ``(request type, spec)``: the ``size`` most recently used, fewer when
    they keep more than ``max_bytes`` together (:func:`leapgram.compiler.memory_of`, checked at
    each insert; the newest always stays); thread-safe (vLLM compiles grammars in a thread pool)."""

    def __init__(self, compiler: Any, size: int, *, compact: bool = False, max_bytes: int | None = None,
                 precompute_ms: float = 0.0) -> None:
        self.compiler = compiler
        self.size = size
        self.compact = compact
        self.max_bytes = max_bytes
        self.precompute_ms = precompute_ms  # > 0: masks computed ahead for a grammar compiled here
        self._entries: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, request_type: str, spec: str) -> Any:
        key = (request_type, spec)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
        grammar = VALIDATED.take((request_type, spec, self.compact))
        if grammar is None:
            grammar = grammar_for(request_type, spec, compact=self.compact)
        compiled = self.compiler.compile(grammar)
        if self.precompute_ms > 0:
            precompute_for_server(compiled, self.precompute_ms, compact=self.compact)
        with self._lock:
            self._entries[key] = compiled
            trim_cache(self._entries, self.size, self.max_bytes)
        return compiled

    def memory_bytes(self) -> int:
        """The estimated bytes the cached grammars keep (:func:`leapgram.compiler.memory_of`)."""
        with self._lock:
            grammars = list(self._entries.values())
        return memory_of(grammars)

    def __len__(self) -> int:
        return len(self._entries)


def trim_cache(entries: OrderedDict[Any, Any], size: int, max_bytes: int | None,
               compiled_of: Callable[[Any], Any] = lambda value: value) -> None:
    """Drop the oldest of ``entries`` (oldest first) beyond the newest ``size``, and beyond the
    newest whose compiled grammars (``compiled_of(value)``, ``None`` for a value that holds none)
    fit in ``max_bytes`` together; the newest entry always stays."""
    while len(entries) > size:
        entries.popitem(last=False)
    if max_bytes is None:
        return
    keep = 1
    newest_first = [compiled_of(value) for value in reversed(entries.values())]
    for count, total in enumerate(running_memory(newest_first), 1):
        if total > max_bytes:
            break
        keep = count
    while len(entries) > keep:
        entries.popitem(last=False)


def cache_budget(variable: str, default_mb: float) -> int | None:
    """``max_bytes`` for a cache from the environment ``variable`` in MB (``default_mb`` when unset;
    ``0`` or ``off``: no memory bound). A setting that is no finite, non-negative number is logged
    and the default taken."""
    setting = os.environ.get(variable, "").strip().lower()
    if setting in ("0", "off", "none"):
        return None
    megabytes = _setting_number(variable, setting, default_mb)
    return int(megabytes * 2**20) if megabytes > 0 else None


def precompute_budget(variable: str) -> float:
    """Milliseconds of masks computed ahead per grammar compiled, from the environment ``variable``
    (unset or ``0``: none; a setting that is no finite, non-negative number is logged and ignored)."""
    return _setting_number(variable, os.environ.get(variable, "").strip(), 0.0)


def precompute_for_server(compiled: Any, max_ms: float, *, compact: bool) -> None:
    """:func:`leapgram.precompute_masks` for a grammar a server just compiled, in the layout its JSON
    takes (compact when the server turned flexible whitespace off); logged at debug level."""
    from leapgram.precompute import precompute_masks

    done = precompute_masks(compiled, max_ms=max_ms, separators=() if compact else (", ", ": "))
    logger.debug("leapgram: %d masks computed ahead (%d states, %.1f ms, %s)", done.masks, done.states,
                 done.seconds * 1e3, "complete" if done.complete else f"stopped by {done.stopped_by}")


def cache_count(variable: str, default: int) -> int:
    """A cache's bound on grammars from the environment ``variable`` (``default`` when unset; a
    setting that is no positive integer is logged and the default taken)."""
    setting = os.environ.get(variable, "").strip()
    count = _setting_number(variable, setting, default)
    if count != int(count) or count < 1:
        logger.warning("leapgram: %s=%r is not a positive number of grammars; using %s", variable, setting, default)
        return default
    return int(count)


def _setting_number(variable: str, setting: str, default: float) -> float:
    if not setting:
        return default
    try:
        value = float(setting)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value) or value < 0:
        logger.warning("leapgram: %s=%r is not a finite, non-negative number; using %s", variable, setting, default)
        return default
    return value


def vocabulary_for(tokenizer: Any, vocab_size: int) -> Vocabulary:
    """leapgram's vocabulary of vLLM's tokenizer, checked against the model's ``vocab_size``."""
    try:
        vocab = Vocabulary.from_huggingface(tokenizer)
    except (ValueError, LeapgramError) as exc:
        raise ValueError(f"leapgram's vLLM backend needs a Hugging Face fast tokenizer: {exc}") from exc
    if vocab.size > vocab_size:
        raise ValueError(f"the tokenizer has {vocab.size} ids but the model's vocabulary only {vocab_size}")
    return vocab


def warm_up(compiler: Any) -> None:
    """:func:`leapgram.warm_up` for the backend's vocabulary, so that the first request pays
    neither numba's cache loading nor the vocabulary's tables; a failure is logged, never raised."""
    try:
        timings = leapgram.warm_up(compiler.vocab)
        logger.info("leapgram: warmed up in %s", ", ".join(f"{k} {v:.2f} s" for k, v in timings.items()))
    except Exception:
        logger.warning("leapgram: warm-up failed", exc_info=True)


def warm_first_masks(matcher: Matcher, limit: int = 16) -> None:
    """Compute (and so cache, in the compiled grammar) the masks of the start state and of the
    states after each token the grammar forces from there (``fast_forward_tokens``), up to
    ``limit`` tokens; the matcher is left at its start. vLLM compiles grammars in a thread pool
    while the model runs, so the request's first steps find their masks ready instead of
    walking the vocabulary on the engine's critical path. A grammar error found here is
    found again, and reported, at the request's first fill."""
    consumed = 0
    try:
        matcher.compute_mask()
        for token in matcher.fast_forward_tokens()[:limit]:
            if not matcher.consume_token(token):
                break
            consumed += 1
            matcher.compute_mask()
    finally:
        matcher.rollback(consumed)  # also leaves an error state


_OFF = ("0", "false", "no", "off")
_ON = ("", "1", "true", "yes", "on")
_IDLE = ("idle",)
_NICE = ("nice",)
NICE_STEP = 10  # LEAPGRAM_VLLM_PREFETCH=nice: the prefetch thread's nice value, above the engine's


def _prefetch_mode(vllm_config: Any) -> str | None:
    """How the backend runs its :class:`MaskPrefetcher`, by ``LEAPGRAM_VLLM_PREFETCH``: ``"on"``
    (the default, normal priority), ``"idle"`` for ``idle`` (the thread under ``SCHED_IDLE``: it
    takes only cores no other thread wants), ``"nice"`` for ``nice`` (the thread ``NICE_STEP``
    nice levels below the engine's), both opt-in (see :class:`MaskPrefetcher`), ``None`` for
    ``0``/``off`` (no thread), and ``None`` as well when the engine decodes speculatively (the
    manager fills right after each draft token's accept, so nothing overlaps). Measured on a
    2-core CPU whose forward pass takes both cores: ``docs/design/vllm.md``."""
    setting = os.environ.get("LEAPGRAM_VLLM_PREFETCH", "").strip().lower()
    if setting not in _OFF + _ON + _IDLE + _NICE:
        logger.warning("leapgram: LEAPGRAM_VLLM_PREFETCH=%r is none of 1, idle, nice, 0; the prefetch stays on",
                       setting)
    if setting in _OFF or getattr(vllm_config, "speculative_config", None) is not None:
        return None
    return "idle" if setting in _IDLE else "nice" if setting in _NICE else "on"


def _compiler_for(vocab: Vocabulary) -> Any:
    return leapgram.GrammarCompiler(vocab, cache_size=0)  # the backend's GrammarCache bounds it


def _make_backend_class() -> type:
    """:class:`LeapgramBackend`, a subclass of vLLM's ``StructuredOutputBackend`` (made on first
    use so that importing this module does not import vLLM)."""
    from vllm.v1.structured_output.backend_types import StructuredOutputBackend, StructuredOutputGrammar

    grammar_class = type("LeapgramVllmGrammar", (LeapgramGrammar, StructuredOutputGrammar), {})

    @dataclass
    class LeapgramBackend(StructuredOutputBackend):
        """vLLM's engine-level backend: one vocabulary, a bounded cache of compiled grammars."""

        def __post_init__(self) -> None:
            config = self.vllm_config.structured_outputs_config
            vocab = vocabulary_for(self.tokenizer, self.vocab_size)
            size = cache_count("LEAPGRAM_VLLM_CACHE_SIZE", DEFAULT_CACHE_SIZE)
            self.cache = GrammarCache(_compiler_for(vocab), size,
                                      compact=bool(getattr(config, "disable_any_whitespace", False)),
                                      max_bytes=cache_budget("LEAPGRAM_VLLM_CACHE_MB", DEFAULT_CACHE_MB),
                                      precompute_ms=precompute_budget("LEAPGRAM_VLLM_PRECOMPUTE_MS"))
            warm_up(self.cache.compiler)
            mode = _prefetch_mode(self.vllm_config)
            self.prefetcher = (MaskPrefetcher((vocab.size + 31) // 32, idle=mode == "idle",
                                              nice=NICE_STEP if mode == "nice" else 0)
                               if mode is not None else None)
            # LEAPGRAM_VLLM_WARM_MASKS=0: the first masks are computed at the first fills instead
            self.warm_masks = os.environ.get("LEAPGRAM_VLLM_WARM_MASKS", "1").strip().lower() not in _OFF
            VALIDATED.activate(True)

        def compile_grammar(self, request_type: Any, grammar_spec: str,
                            stop_token_ids: set[int] | None = None) -> StructuredOutputGrammar:
            with self.prefetcher.compiling() if self.prefetcher is not None else contextlib.nullcontext():
                compiled = self.cache.get(request_type.name, grammar_spec)
                matcher = Matcher(compiled)
                if self.warm_masks:
                    warm_first_masks(matcher)
            stops = stop_token_ids if stop_token_ids else compiled.vocab.eos_token_ids
            return grammar_class(matcher, stops, self.prefetcher)

        def allocate_token_bitmask(self, max_num_seqs: int) -> Any:
            import torch

            return torch.full((max_num_seqs, (self.vocab_size + 31) // 32), -1, dtype=torch.int32)

        def destroy(self) -> None:
            if self.prefetcher is not None:
                self.prefetcher.close()
            if self.cache is not None:
                VALIDATED.activate(False)
            self.cache = None

    return LeapgramBackend


def __getattr__(name: str) -> Any:
    """``LeapgramBackend`` is made on first access (it subclasses a vLLM class)."""
    if name == "LeapgramBackend":
        return globals().setdefault("LeapgramBackend", _make_backend_class())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ----- request validation (front end) ---------------------------------------------------------

def validate_request(params: Any, model_config: Any, config: Any, tokenizer: Any) -> None:
    """vLLM's generic structured-output checks, then leapgram's front ends on the request's
    grammar: any problem is a ``VLLMValidationError`` (HTTP 400) carrying leapgram's message."""
    from vllm.exceptions import VLLMValidationError
    from vllm.sampling_params import check_json_nesting
    from vllm.v1.structured_output.request import get_structured_output_key

    so = params.structured_outputs
    if getattr(model_config, "is_diffusion", False):
        raise VLLMValidationError("Structured outputs are not supported for diffusion language models.")
    if tokenizer is None:
        raise VLLMValidationError("Structured outputs need a tokenizer (not 'skip_tokenizer_init').")
    if so._backend and so._backend != BACKEND_NAME:
        raise VLLMValidationError(f"Request-level structured output backend selection is not supported: the "
                                  f"request asked for '{so._backend}', vLLM runs with '{BACKEND_NAME}'.")
    so._backend = BACKEND_NAME
    _check_not_empty(so, VLLMValidationError)
    check_json_nesting(so.json)
    check_json_nesting(so.structural_tag, structural_tag=True)
    request_type, spec = get_structured_output_key(so)
    compact = bool(config.disable_any_whitespace)
    try:
        grammar = grammar_for(request_type.name, spec, compact=compact)
    except (LeapgramError, ValueError, TypeError, RecursionError) as exc:  # any malformed request: a 400
        raise VLLMValidationError(f"leapgram: {exc}", parameter="structured_outputs") from exc
    VALIDATED.put((request_type.name, spec, compact), grammar)  # for this request's compile, in-process


def _check_not_empty(so: Any, error: type) -> None:
    if isinstance(so.choice, list) and not so.choice:
        raise error("structured_outputs.choice cannot be an empty list")
    for field in ("grammar", "json", "structural_tag"):
        value = getattr(so, field)
        if isinstance(value, str) and not value.strip():
            raise error(f"structured_outputs.{field} cannot be an empty string")
    if so.json_object is False:
        raise error("structured_outputs.json_object must be True if set")
    if so.regex and "\x00" in so.regex:
        raise error("structured_outputs.regex must not contain a NUL character ('\\x00')")


# ----- the plugin -----------------------------------------------------------------------------

def register() -> bool:
    """Make ``"leapgram"`` a structured-output backend of the running vLLM (idempotent).

    The ``vllm.general_plugins`` entry point; call it yourself before ``LLM(...)``. Returns
    whether the backend is installed: outside :data:`TESTED_VLLM` it warns and does nothing.
    """
    try:
        import vllm
    except ImportError:
        warnings.warn("leapgram.integrations.vllm.register: vLLM is not installed", RuntimeWarning,
                      stacklevel=2)
        return False
    version = getattr(vllm, "__version__", "unknown")
    if not _is_tested(version):
        warnings.warn(f"leapgram's vLLM backend was tested with vLLM >= {TESTED_VLLM[0]}, < {TESTED_VLLM[1]}; "
                      f"this is vLLM {version}, so the 'leapgram' structured-output backend is NOT installed. "
                      "Upgrade leapgram or pin vLLM to a tested version.", RuntimeWarning, stacklevel=2)
        return False
    _hide_llvmlite_dunders()
    _extend_backend_literal()
    _wrap_validation()
    _wrap_manager()
    _wrap_scheduler()
    return True


def _is_tested(version: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        found = Version(version.split("+")[0])
    except InvalidVersion:
        return False
    low, high = (Version(v) for v in TESTED_VLLM)
    return low <= Version(found.base_version) < high


def _hide_llvmlite_dunders() -> None:
    """vLLM 0.32's CPU worker scans every module attribute with ``vars(value)`` when it installs its
    kernels; llvmlite's library handle (imported with numba, so with this plugin) answers every
    attribute, ``__dict__`` included, with a function wrapper, and the scan crashes the worker.
    Dunder lookups on that handle raise ``AttributeError`` instead (it has no such functions)."""
    from llvmlite.binding import ffi

    wrapper_class = ffi._lib_wrapper
    original = wrapper_class.__getattr__
    if getattr(original, _PATCHED, False):
        return

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return original(self, name)

    setattr(__getattr__, _PATCHED, True)
    wrapper_class.__getattr__ = __getattr__


def _extend_backend_literal() -> None:
    from typing import Literal, get_args

    from pydantic.dataclasses import rebuild_dataclass
    from vllm.config import structured_outputs as module

    names = get_args(module.StructuredOutputsBackend)
    if BACKEND_NAME in names:
        return
    extended = Literal[(*names, BACKEND_NAME)]
    cls = module.StructuredOutputsConfig
    module.StructuredOutputsBackend = extended
    cls.__annotations__["backend"] = extended
    cls.__dataclass_fields__["backend"].type = extended
    rebuild_dataclass(cls, force=True)


def _wrap_validation() -> None:
    from vllm.sampling_params import SamplingParams

    original = SamplingParams._validate_structured_outputs
    if getattr(original, _PATCHED, False):
        return

    def _validate_structured_outputs(self, model_config, structured_outputs_config, tokenizer):
        if (structured_outputs_config is None or self.structured_outputs is None
                or structured_outputs_config.backend != BACKEND_NAME):
            return original(self, model_config, structured_outputs_config, tokenizer)
        return validate_request(self, model_config, structured_outputs_config, tokenizer)

    setattr(_validate_structured_outputs, _PATCHED, True)
    SamplingParams._validate_structured_outputs = _validate_structured_outputs


def _wrap_manager() -> None:
    from vllm.v1.structured_output import StructuredOutputManager

    original_init = StructuredOutputManager.__init__
    original_grammar_init = StructuredOutputManager.grammar_init
    if getattr(original_init, _PATCHED, False):
        return

    def __init__(self, vllm_config):
        original_init(self, vllm_config)
        if vllm_config.structured_outputs_config.backend == BACKEND_NAME and hasattr(self, "tokenizer"):
            _install_backend(self)

    def grammar_init(self, request):
        so_request = request.structured_output_request
        if (self.backend is None and so_request is not None
                and request.sampling_params.structured_outputs._backend == BACKEND_NAME):
            _install_backend(self)
        return original_grammar_init(self, request)

    for wrapper in (__init__, grammar_init):
        setattr(wrapper, _PATCHED, True)
    StructuredOutputManager.__init__ = __init__
    StructuredOutputManager.grammar_init = grammar_init


def _wrap_scheduler() -> None:
    """Release leapgram's :class:`MaskPrefetcher` once a step is scheduled, right before the
    forward pass (no-op for other backends)."""
    from vllm.v1.core.sched.scheduler import Scheduler

    original = Scheduler.schedule
    if getattr(original, _PATCHED, False):
        return

    def schedule(self, *args, **kwargs):
        output = original(self, *args, **kwargs)
        prefetcher = getattr(getattr(getattr(self, "structured_output_manager", None), "backend", None),
                             "prefetcher", None)
        if prefetcher is not None:
            prefetcher.release()
        return output

    setattr(schedule, _PATCHED, True)
    Scheduler.schedule = schedule


def _install_backend(manager: Any) -> None:
    import time

    start = time.perf_counter()
    backend_class = __getattr__("LeapgramBackend")  # this module's own lazy attribute
    manager.backend = backend_class(manager.vllm_config, tokenizer=manager.tokenizer,
                                    vocab_size=manager.vllm_config.model_config.get_vocab_size())
    logger.info("leapgram structured-output backend ready in %.2f s (kernels warmed)",
                time.perf_counter() - start)
