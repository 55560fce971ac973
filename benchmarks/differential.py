"""Differential: record what the matcher does at every step of many schemas with one source tree,
then compare two records; any difference between a base tree and a changed one is a finding.

Every engine change must keep masks bit-identical (``docs/design/README.md``, "How to measure a
change"). Three commands::

    # both trees in two subprocesses (PYTHONPATH=TREE each), then compare; exit 1 on a difference
    python benchmarks/differential.py run --base /work/wt/base22 --new . ../shared/jsonschemabench --sample 200
    # the parts by hand
    PYTHONPATH=/work/wt/base22 python benchmarks/differential.py record FOLDER --sample 400 --out base.jsonl
    PYTHONPATH=. python benchmarks/differential.py record FOLDER --sample 400 --out new.jsonl
    python benchmarks/differential.py compare base.jsonl new.jsonl

``record`` imports ``leapgram`` from ``PYTHONPATH`` (the script itself may come from another
tree), compiles each case of a JSONSchemaBench folder (or a folder of links to some of its files)
with a ``GrammarCompiler`` cleared per case, and walks its valid instances token by token as
``bench_schemas.py`` does (``json.dumps(data, ensure_ascii=False)``, ``tokenizers`` ids, then
EOS); ``--invalid`` walks the invalid instances too, each until its rejection. At every step
(before each token, and before EOS) it notes ``[mask, allowed, token allowed, consume_token,
is_accepting, forced_bytes, fast_forward_tokens, checks]``: an 8-byte BLAKE2 hash of the
bitmask's bytes and its count of allowed tokens, whether the next token's bit is set,
``consume_token``'s result (EOS included: the last step), ``is_accepting()`` before the token,
the length and a 4-byte hash of ``forced_bytes()`` and of ``fast_forward_tokens()`` (``""`` when
empty), and at every ``CHECK_EVERY``-th position the checks' note (below; ``""`` elsewhere). An
instance stops at the first token ``consume_token`` refuses. Per instance also ``error()`` (the
matcher's message), ``is_terminated()``, a crash (an exception out of the matcher: type and
message) and ``self_check``, the checks that failed; per case the compile error (exception type
and message, first 500 characters), ``timeout`` (``--timeout-s``, default 120) or ``died`` (the
exit status of a recording process that died in the case). The first line of the file says what
was recorded: tree, git commit (``+dirty`` with uncommitted changes to tracked files), tokenizer,
property order, source, folder.

The checks (``Checks``), at every ``CHECK_EVERY``-th position of an instance, compare the matcher
with itself; their failures are the instance's ``self_check``, a difference when the other record
has not the same:

- **rollback**: ``rollback(k)`` of the last ``ROLLBACK`` tokens, then their masks and forced bytes
  again, consuming them again: equal to those noted before;
- **draft masks**: ``draft_masks`` of the next ``DRAFT`` tokens (their 4-byte hash is the note):
  row ``j`` equal to the mask noted ``j`` positions later;
- **forks**: ``fork()``'s mask and forced bytes equal to its parent's; the fork then consumes the
  next ``DRAFT`` tokens and its masks must equal the parent's when it gets there (once per
  instance, at the first check, a ``fork(share_charts=False)`` the same);
- **batch fill**: the fork above, once it has consumed its ``DRAFT`` tokens, forks ``BATCH``
  matchers, one more token each (positions ``DRAFT + 1 .. DRAFT + BATCH`` ahead, not yet
  masked); ``leapgram.fill_next_token_bitmasks`` fills their rows and the matcher's own in one
  call (rows in reverse order; the uncached ones always in threads: the recorder sets
  ``leapgram.batch``'s thread choice so, where it would pick one thread when that measures
  cheaper): the matcher's row equal to its mask, the others to the masks noted when the matcher
  gets there;
- **continuations not in the data**: a fork walks ``WALK`` tokens drawn from its own masks
  (seeded by the position: the same in both records), then one token drawn from the whole
  vocabulary; ``validate_tokens`` of them on the matcher must count what ``consume_token``
  accepted on the fork, and ``RANDOM`` tokens drawn from the vocabulary each ``validate_tokens``
  as the mask's bit says (the drawn tokens' hash and the count are in the note);
- **fast-forward**: at every position, ``validate_tokens`` accepts all of ``fast_forward_tokens()``.

Each case is recorded in a worker process (forked: the tokenized cases come from the parent) with
a time limit (not counting the worker's set-up: a first mask, which compiles the kernels in a
fresh tree, a minute or more under load, once a 120 s timeout of a tree's first case), so a hang inside a kernel, which no signal interrupts, or a process that dies is a
``timeout`` or ``died`` record and the worker starts again for the next case.

``--grammar lark|gbnf|gbnf-optional-ws|gbnf-schema-style`` records instead the documents of
``bench_cfg_masks.py`` (the first valid instance of each file, at most ``--max-bytes``, ``--sample``
of them, 100 by default) under its JSON grammar, one compiled grammar for all documents (warm: the
lexer and parser rows of one document serve the next), token ids from ``Vocabulary.encode``.

Cases: sorted file names; ``--only A,B`` (file names, ``.json`` optional); ``--sample N`` evenly
spaced over them (as ``bench_schemas.py``), or drawn at random with ``--seed S``; ``--shard K/N``
keeps every N-th of those from the K-th (1-based), to split a run over processes.

``compare A B`` prints, per differing case, the first difference (case, index of the test in its
file, step, what: which field, with the allowed counts of a differing mask), then the counts of
identical and different cases and of cases in one record only. Exit status 0 when identical, 1 on any
difference (a case in one record only included), 2 when the records were made with different
options. ``--ignore-messages`` compares exception types and not their messages.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import multiprocessing
import os
import random
import subprocess
import sys
import tempfile
import time
from importlib import import_module
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from bench_schemas import DEFAULT_FOLDER, _encode, resolve_tokenizer

FORMAT = 3
STEP_FIELDS = ("mask", "allowed tokens", "token allowed", "consume_token", "is_accepting", "forced_bytes",
               "fast_forward_tokens", "checks")
OPTION_KEYS = ("format", "tokenizer", "vocab_size", "source", "property_order", "invalid", "checks")
GRAMMARS = ("lark", "gbnf", "gbnf-optional-ws", "gbnf-schema-style")
CHECK_EVERY = 8  # the checks run at positions 7, 15, 23, ... of each instance
ROLLBACK = 3  # tokens rolled back and consumed again at a check
DRAFT = 3  # draft tokens (and tokens a fork consumes) at a check
BATCH = 3  # matchers after the fork's, one more token each, filled by one batch call at a check
WALK = 2  # tokens of a continuation drawn from the masks at a check, then one from the vocabulary
RANDOM = 4  # tokens drawn from the vocabulary, each validated against the mask's bit, at a check
ENDED = ("timeout", "died")  # a case's record that says it did not finish
SETUP_TIMEOUT_S = 900  # a worker's set-up: the kernels compiled in a fresh tree (minutes under load)


# ----- cases --------------------------------------------------------------------------------


def select_files(folder: Path, only: str | None, sample: int | None, seed: int | None,
                 shard: str | None) -> list[Path]:
    """The case files of ``folder`` chosen by ``--only``, ``--sample``/``--seed`` and ``--shard``."""
    files = sorted(folder.glob("*.json"))
    if only:
        names = {n.removesuffix(".json") for n in only.split(",") if n}
        files = [f for f in files if f.stem in names]
    if sample and sample < len(files):
        if seed is None:
            files = [files[i * len(files) // sample] for i in range(sample)]
        else:
            files = sorted(random.Random(seed).sample(files, sample))
    if shard:
        k, n = parse_shard(shard)
        files = files[k - 1::n]
    return files


def parse_shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise SystemExit(f"--shard wants K/N (1 <= K <= N), not {text!r}") from None
    if not 1 <= k <= n:
        raise SystemExit(f"--shard wants K/N with 1 <= K <= N, not {text!r}")
    return k, n


def schema_cases(files: list[Path], tokenizer_json: Path, invalid: bool):
    """``(name, schema document or None, [(test index, valid, token ids)], unreadable reason)`` per
    file."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_json))
    for path in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            tests = [(n, t) for n, t in enumerate(data.get("tests", [])) if invalid or t["valid"]]
            yield path.stem, data["schema"], [(n, bool(t["valid"]), _encode(tokenizer, t["data"])) for n, t in tests], None
        except (ValueError, KeyError, TypeError) as exc:
            yield path.stem, None, [], f"{type(exc).__name__}: {exc}"


# ----- recording ----------------------------------------------------------------------------


def short_hash(data: bytes, size: int) -> str:
    return hashlib.blake2b(data, digest_size=size).hexdigest()


class Recorder:
    """Walks instances with one leapgram (the one on ``sys.path``) and notes every step."""

    def __init__(self, tokenizer_json: Path) -> None:
        import leapgram
        from leapgram.cli import load_vocabulary

        self.lg = leapgram
        self.tokenizer_json = tokenizer_json
        self.vocab = load_vocabulary(str(tokenizer_json))
        self.eos = int(self.vocab.eos_token_ids[0])
        self.bitmask = leapgram.allocate_token_bitmask(1, self.vocab.size)
        choice = getattr(import_module("leapgram.batch"), "_CHOICE", None)
        if choice is not None:  # every batch check's uncached rows in threads, the path it is there for
            choice.workers = lambda allowed: allowed

    def mask(self, matcher) -> bytes:
        """The bytes of the matcher's next-token bitmask."""
        matcher.fill_next_token_bitmask(self.bitmask, 0)
        return self.bitmask.tobytes()

    def step(self, matcher, token: int, checks: Checks) -> list:
        """``STEP_FIELDS`` at one position, the checks last (at a check's position), then
        ``token`` consumed."""
        data = self.mask(matcher)
        count = int(np.bitwise_count(self.bitmask).sum())
        allowed = bool(data[token // 8] >> (token % 8) & 1)
        accepting = matcher.is_accepting()
        forced = bytes_note(matcher.forced_bytes())
        forward = matcher.fast_forward_tokens()
        checks.fast_forward(matcher, forward)
        note = checks.at_position(matcher, data, forced)
        consumed = bool(matcher.consume_token(token))
        return [short_hash(data, 8), count, allowed, consumed, accepting, forced, tokens_note(forward), note]

    def walk(self, compiled, test: int, valid: bool, tokens: list[int]) -> dict:
        """One instance (``tests[test]`` of its file): its steps until a refused token or EOS, and
        how it ended."""
        record = {"test": test, "valid": valid, "tokens": len(tokens), "steps": []}
        matcher = self.lg.Matcher(compiled)
        checks = Checks(self, [*tokens, self.eos])
        try:
            for token in checks.sequence:
                record["steps"].append(self.step(matcher, token, checks))
                if not record["steps"][-1][3]:
                    break
            record["terminated"] = matcher.is_terminated()
            record["error"] = matcher.error()
        except Exception as exc:  # noqa: BLE001 - a crash is a finding, recorded
            record["crash"] = [type(exc).__name__, str(exc)[:500]]
        if checks.failures:
            record["self_check"] = checks.failures[:10]
        return record


def bytes_note(data: bytes) -> str:
    return f"{len(data)}:{short_hash(data, 4)}" if data else ""


def tokens_note(tokens: list[int]) -> str:
    return bytes_note(b"".join(int(t).to_bytes(4, "little") for t in tokens))


class Checks:
    """The matcher compared with itself along one instance (the module's docstring, "The
    checks"): ``noted[i]`` is ``(mask bytes, forced bytes' note)`` at position ``i`` (the bytes
    ``None`` once no rollback goes back to it), ``expected[i]`` the masks that draft rows and
    forks said position ``i`` will have; ``failures`` what differed."""

    def __init__(self, recorder: Recorder, sequence: list[int]) -> None:
        self.recorder = recorder
        self.sequence = sequence
        self.noted: list[tuple[bytes | None, str]] = []
        self.expected: dict[int, list[tuple[str, bytes]]] = {}
        self.failures: list[str] = []

    def fast_forward(self, matcher, forward: list[int]) -> None:
        """Every fast-forward token can be consumed in order."""
        if forward and matcher.validate_tokens(forward) != len(forward):
            self.failures.append(f"step {len(self.noted)}: fast_forward_tokens {forward[:8]} not all valid")

    def at_position(self, matcher, mask: bytes, forced: str) -> str:
        """Note position ``len(noted)``, check what earlier checks expected of it, and run the
        checks there when it is a check's position: their note (the draft rows' hash, then the
        continuation's note)."""
        here = len(self.noted)
        self.noted.append((mask, forced))
        if here > ROLLBACK:
            self.noted[here - ROLLBACK - 1] = (None, self.noted[here - ROLLBACK - 1][1])
        for what, expected in self.expected.pop(here, []):
            if expected != mask:
                self.failures.append(f"step {here}: the mask differs from the {what}'s")
        if here % CHECK_EVERY != CHECK_EVERY - 1 or matcher.is_error() or matcher.is_terminated():
            return ""
        self.rollback(matcher, here)
        ahead = self.fork(matcher, here, matcher.fork(), "fork")
        if ahead is not None:
            self.batch(matcher, here, ahead)
        if here == CHECK_EVERY - 1:
            self.fork(matcher, here, matcher.fork(share_charts=False), "unshared fork")
        return f"{self.draft(matcher, here)} {self.continuation(matcher, here, mask)}"

    def state(self, matcher) -> tuple[bytes, str]:
        return self.recorder.mask(matcher), bytes_note(matcher.forced_bytes())

    def rollback(self, matcher, here: int) -> None:
        """Roll back ``ROLLBACK`` tokens, then consume them again: the same masks and forced bytes."""
        k = min(ROLLBACK, here)
        matcher.rollback(k)
        for position in range(here - k, here):
            if self.state(matcher) != self.noted[position]:
                self.failures.append(f"step {here}: after rollback({k}), position {position} differs")
            if not matcher.consume_token(self.sequence[position]):
                self.failures.append(f"step {here}: after rollback({k}), token {position} refused")
                return
        if self.state(matcher) != self.noted[here]:
            self.failures.append(f"step {here}: rollback({k}) and the tokens again: the mask or forced bytes differ")

    def fork(self, matcher, here: int, fork, what: str):
        """The fork's mask and forced bytes are its parent's; its next masks, the parent's later.
        The fork when it has consumed all its ``DRAFT`` tokens, else ``None``."""
        if self.state(fork) != self.noted[here]:
            self.failures.append(f"step {here}: the {what}'s mask or forced bytes differ")
        for offset, token in enumerate(self.sequence[here:here + DRAFT], 1):
            if not fork.consume_token(token) or fork.is_terminated():
                return None
            self.expected.setdefault(here + offset, []).append((what, self.recorder.mask(fork)))
        return fork if len(self.sequence) > here + DRAFT else None

    def batch(self, matcher, here: int, ahead) -> None:
        """``BATCH`` forks of ``ahead`` (``DRAFT`` tokens on), one more token each, and the
        matcher, filled by one ``fill_next_token_bitmasks`` call into rows in reverse order:
        the matcher's row its mask, the others the masks the matcher will have there."""
        members, position = [], here + DRAFT
        for token in self.sequence[position:position + BATCH]:
            ahead = ahead.fork()
            if not ahead.consume_token(token) or ahead.is_terminated():
                break
            position += 1
            members.append((position, ahead))
        recorder = self.recorder
        rows = recorder.lg.allocate_token_bitmask(len(members) + 1, recorder.vocab.size)
        order = [matcher] + [m for _, m in members]
        recorder.lg.fill_next_token_bitmasks(order, rows, list(range(len(order)))[::-1])
        if rows[len(members)].tobytes() != self.noted[here][0]:
            self.failures.append(f"step {here}: the batch row of the matcher differs from its mask")
        for j, (at, _) in enumerate(members, 1):
            self.expected.setdefault(at, []).append(("batch row", rows[len(members) - j].tobytes()))

    def continuation(self, matcher, here: int, mask: bytes) -> str:
        """``validate_tokens`` off the data: ``WALK`` tokens drawn from a fork's masks, then one
        from the vocabulary, counted as ``consume_token`` on the fork counts them; and ``RANDOM``
        tokens from the vocabulary, each validated as the mask's bit says. The note: the drawn
        tokens' hash and the count."""
        draw = random.Random(f"{len(self.sequence)}:{here}")
        size = self.recorder.vocab.size
        walker, row, tokens, accepted = matcher.fork(), mask, [], 0
        for _ in range(WALK):
            token = draw_allowed(draw, row)
            if token is None:
                break
            tokens.append(token)
            if not walker.consume_token(tokens[-1]):
                self.failures.append(f"step {here}: token {tokens[-1]} of the mask refused off the data")
                break
            accepted += 1
            if walker.is_terminated():
                break
            row = self.recorder.mask(walker)
        if accepted == len(tokens):
            tokens.append(draw.randrange(size))
            accepted += bool(walker.consume_token(tokens[-1]))
        counted = matcher.validate_tokens(tokens)
        if counted != accepted:
            self.failures.append(f"step {here}: validate_tokens {tokens} counts {counted}, consume_token {accepted}")
        for token in (draw.randrange(size) for _ in range(RANDOM)):
            if matcher.validate_tokens([token]) != mask[token // 8] >> (token % 8) & 1:
                self.failures.append(f"step {here}: validate_tokens([{token}]) disagrees with the mask")
        return f"{tokens_note(tokens)}/{counted}"

    def draft(self, matcher, here: int) -> str:
        """``draft_masks`` of the next ``DRAFT`` tokens: row 0 is this mask, row ``j`` the mask
        ``j`` positions later (when reached); the note is the rows' hash."""
        tokens = self.sequence[here:here + DRAFT]
        rows = matcher.draft_masks(tokens)
        if rows[0].tobytes() != self.noted[here][0]:
            self.failures.append(f"step {here}: draft row 0 differs from the mask")
        for offset in range(1, len(rows)):
            self.expected.setdefault(here + offset, []).append(("draft row", rows[offset].tobytes()))
        return short_hash(rows.tobytes(), 4)


def draw_allowed(draw: random.Random, mask: bytes) -> int | None:
    """A token the mask allows: a random one of a random nonzero word (``None``: none)."""
    words = np.frombuffer(mask, dtype="<u4")
    nonzero = np.flatnonzero(words)
    if not nonzero.size:
        return None
    word = int(nonzero[draw.randrange(nonzero.size)])
    bits = [b for b in range(32) if int(words[word]) >> b & 1]
    return 32 * word + bits[draw.randrange(len(bits))]


def compile_error(exc: BaseException) -> list[str]:
    return [type(exc).__name__, str(exc)[:500]]


def record_schema_case(recorder: Recorder, compiler, any_order, case) -> dict:
    """The record of one JSONSchemaBench case (compile, then every instance)."""
    name, schema, instances, unreadable = case
    out = {"case": name, "compile": None, "instances": []}
    if unreadable is not None:
        out["compile"] = ["unreadable", unreadable]
        return out
    compiler.clear_cache()
    try:
        grammar = (recorder.lg.Grammar.from_json_schema(schema, any_order=any_order) if any_order
                   else recorder.lg.Grammar.from_json_schema(schema))
        compiled = compiler.compile(grammar)
    except Exception as exc:  # noqa: BLE001 - every failure is a record
        out["compile"] = compile_error(exc)
        return out
    for test, valid, tokens in instances:
        out["instances"].append(recorder.walk(compiled, test, valid, tokens))
    return out


class Worker:
    """A forked process that records one case at a time with ``record(case)`` (``make()`` in the
    process, once, gives it), so that a case that hangs inside a kernel (no signal reaches it
    there) or kills its process is a ``timeout`` or ``died`` record; the next case starts a new
    process."""

    def __init__(self, make, timeout_s: float) -> None:
        self.make = make
        self.timeout_s = timeout_s
        self.process = None
        self.conn = None

    def record(self, name: str, case) -> dict:
        if self.process is None:
            self.start()
        self.conn.send(case)
        try:
            if self.conn.poll(self.timeout_s):
                return self.conn.recv()
            ended = {"timeout": self.timeout_s}
        except (EOFError, OSError):
            ended = {}
        self.stop()
        ended = ended or {"died": self.process_status}
        return {"case": name, "compile": None, "instances": [], **ended}

    def start(self) -> None:
        context = multiprocessing.get_context("fork")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=serve, args=(child, self.make), daemon=True)
        self.process.start()
        child.close()
        if not self.conn.poll(SETUP_TIMEOUT_S) or self.conn.recv() != "ready":  # (EOFError: it died)
            raise RuntimeError(f"the recording worker was not ready in {SETUP_TIMEOUT_S} s")

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.process_status = self.process.exitcode
        self.conn.close()
        self.process = self.conn = None

    def close(self) -> None:
        if self.process is not None:
            with contextlib.suppress(OSError):
                self.conn.send(None)
            self.process.join(5)
            self.stop()


def serve(conn, make) -> None:
    """The worker's loop: ready once ``make()`` is done, then a case in, its record out, until ``None``."""
    record = make()
    conn.send("ready")
    while (case := conn.recv()) is not None:
        conn.send(record(case))


def tree_commit(root: Path) -> str:
    """``git rev-parse HEAD`` of ``root``, ``+dirty`` with uncommitted changes to tracked files."""
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False).stdout.strip()

    head = git("rev-parse", "HEAD") or "unknown"
    return head + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def header(recorder: Recorder, args, source: str, folder: Path, cases: int) -> dict:
    root = Path(recorder.lg.__file__).resolve().parents[1]
    return {"format": FORMAT, "tree": str(root), "commit": tree_commit(root), "tokenizer": args.tokenizer,
            "vocab_size": recorder.vocab.size, "source": source, "property_order": args.property_order,
            "invalid": args.invalid, "folder": str(folder.resolve()), "cases": cases,
            "checks": [CHECK_EVERY, ROLLBACK, DRAFT, BATCH, WALK, RANDOM],
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def schema_records(recorder: Recorder, args, folder: Path):
    """The header, then one record per case of the folder (each in the worker)."""
    files = select_files(folder, args.only, args.sample, args.seed, args.shard)
    yield header(recorder, args, "jsonschemabench", folder, len(files))
    any_order = {"declared": False, "any": True, "auto": "auto"}[args.property_order]

    def make():  # a first mask loads (or compiles) the kernels outside the first case's time limit
        compiler = recorder.lg.GrammarCompiler(recorder.vocab)
        recorder.mask(recorder.lg.Matcher(compiler.compile(recorder.lg.Grammar.from_json_schema({"type": "object"}))))
        return lambda case: record_schema_case(recorder, compiler, any_order, case)

    worker = Worker(make, args.timeout_s)
    try:
        for case in schema_cases(files, recorder.tokenizer_json, args.invalid):
            yield worker.record(case[0], case)
    finally:
        worker.close()


def cfg_records(recorder: Recorder, args, folder: Path):
    """The header, then one record per document of ``bench_cfg_masks.py`` under ``--grammar``."""
    from bench_cfg_masks import leapgram_grammar_factory, load_documents

    docs, _ = load_documents(folder, args.sample or 100, args.max_bytes)
    if args.shard:
        k, n = parse_shard(args.shard)
        docs = docs[k - 1::n]
    notes: list[str] = []
    grammar = leapgram_grammar_factory(recorder.lg, False, notes, args.grammar)
    yield {**header(recorder, args, f"cfg:{args.grammar}", folder, len(docs)), "grammar": notes}

    def make():  # one compiled grammar for every document the worker records; its first mask (the kernels)
        compiled = recorder.lg.GrammarCompiler(recorder.vocab).compile(grammar())
        recorder.mask(recorder.lg.Matcher(compiled))
        return lambda case: record_document(recorder, compiled, *case)

    worker = Worker(make, args.timeout_s)
    try:
        for doc in docs:
            yield worker.record(doc.name, (doc.name, [int(t) for t in recorder.vocab.encode(doc.data)]))
    finally:
        worker.close()


def record_document(recorder: Recorder, compiled, name: str, tokens: list[int]) -> dict:
    """The record of one ``bench_cfg_masks.py`` document (its tokens): one valid instance."""
    return {"case": name, "compile": None, "instances": [recorder.walk(compiled, 0, True, tokens)]}


def run_record(args) -> int:
    folder = Path(args.folder) if args.folder else DEFAULT_FOLDER
    if not folder.is_dir():
        raise SystemExit(f"folder {folder} not found: pass FOLDER (JSONSchemaBench files, or links to some)")
    recorder = Recorder(resolve_tokenizer(args.tokenizer))
    records = cfg_records(recorder, args, folder) if args.grammar else schema_records(recorder, args, folder)
    with open(args.out, "w", encoding="utf-8") if args.out else contextlib.nullcontext(sys.stdout) as out:
        for n, record in enumerate(records):
            out.write(json.dumps(record, separators=(",", ":")) + "\n")
            out.flush()  # a process that dies in a case leaves the records before it whole
            if n and args.out and not args.quiet and n % 50 == 0:
                print(f"  {n} cases recorded", file=sys.stderr, flush=True)
    return 0


# ----- comparing ----------------------------------------------------------------------------


def load_record(path: Path) -> tuple[dict, dict[str, dict]]:
    """The header and the case records (by name) of a ``record`` file."""
    with open(path, encoding="utf-8") as lines:
        head = json.loads(next(lines))
        cases = {}
        for line in lines:
            case = json.loads(line)
            cases[case["case"]] = case
    return head, cases


def first_difference(a: dict, b: dict, ignore_messages: bool) -> str | None:
    """Where two records of one case first differ, in words; ``None`` when they agree."""
    for key in ENDED:
        if a.get(key) is not None or b.get(key) is not None:
            return None if a.get(key) == b.get(key) else f"{key}: {a.get(key)} vs {b.get(key)}"
    if not same_error(a["compile"], b["compile"], ignore_messages):
        return f"compile: {a['compile']} vs {b['compile']}"
    if len(a["instances"]) != len(b["instances"]):
        return f"instances: {len(a['instances'])} vs {len(b['instances'])}"
    for x, y in zip(a["instances"], b["instances"]):
        found = instance_difference(x, y, ignore_messages)
        if found:
            return f"test {x['test']} ({'valid' if x['valid'] else 'invalid'}, {x['tokens']} tokens): {found}"
    return None


def instance_difference(x: dict, y: dict, ignore_messages: bool) -> str | None:
    for step, (s, t) in enumerate(zip(x["steps"], y["steps"])):
        if s != t:
            fields = [STEP_FIELDS[i] for i in range(len(s)) if s[i] != t[i]]
            counts = f" ({s[1]} vs {t[1]} tokens allowed)" if "mask" in fields else ""
            values = "" if "mask" in fields else f" ({[s[STEP_FIELDS.index(f)] for f in fields]} vs {[t[STEP_FIELDS.index(f)] for f in fields]})"
            eos = " (the EOS step)" if step == x["tokens"] else ""
            return f"step {step}{eos}: {', '.join(fields)}{counts}{values}"
    if len(x["steps"]) != len(y["steps"]):
        return f"steps: {len(x['steps'])} vs {len(y['steps'])}"
    if x.get("self_check") != y.get("self_check"):
        return f"self_check: {x.get('self_check')} vs {y.get('self_check')}"
    if not same_error(x.get("crash"), y.get("crash"), ignore_messages):
        return f"crash: {x.get('crash')} vs {y.get('crash')}"
    if x.get("terminated") != y.get("terminated"):
        return f"is_terminated: {x.get('terminated')} vs {y.get('terminated')}"
    if not ignore_messages and x.get("error") != y.get("error"):
        return f"error(): {x.get('error')!r} vs {y.get('error')!r}"
    return None


def self_check_failures(cases: dict[str, dict]) -> list[str]:
    """``case test N: failure`` per instance whose checks failed (the first failure each)."""
    return [f"{name} test {i['test']}: {i['self_check'][0]}" for name, case in cases.items()
            for i in case["instances"] if i.get("self_check")]


def same_error(a: list | None, b: list | None, ignore_messages: bool) -> bool:
    if a is None or b is None or not ignore_messages:
        return a == b
    return a[0] == b[0]


def run_compare(args) -> int:
    head_a, cases_a = load_record(Path(args.a))
    head_b, cases_b = load_record(Path(args.b))
    for label, head in (("A", head_a), ("B", head_b)):
        print(f"{label}: {head['tree']} at {head['commit']}, {len(cases_a if label == 'A' else cases_b)} cases")
    mismatched = [k for k in OPTION_KEYS if head_a.get(k) != head_b.get(k)]
    if mismatched:
        print("records made with different options: " + "; ".join(f"{k} {head_a.get(k)!r} vs {head_b.get(k)!r}" for k in mismatched))
        return 2
    identical, different = 0, []
    for name, a in cases_a.items():
        if name in cases_b:
            found = first_difference(a, cases_b[name], args.ignore_messages)
            if found:
                different.append((name, found))
            else:
                identical += 1
    only_a = [n for n in cases_a if n not in cases_b]
    only_b = [n for n in cases_b if n not in cases_a]
    for name, found in different[:args.show]:
        print(f"DIFFERENT {name}: {found}")
    for label, names in (("A", only_a), ("B", only_b)):
        if names:
            print(f"only in {label}: {', '.join(names[:args.show])}{' ...' if len(names) > args.show else ''}")
    for label, cases in (("A", cases_a), ("B", cases_b)):
        failed = self_check_failures(cases)
        if failed:
            print(f"self-check failures in {label}: {len(failed)} instances; first: {failed[0]}")
    steps = sum(len(i["steps"]) for c in cases_a.values() for i in c["instances"])
    print(f"cases: {identical} identical, {len(different)} different, {len(only_a)} only in A, "
          f"{len(only_b)} only in B; {steps} steps in A")
    return 1 if different or only_a or only_b else 0


# ----- both trees ---------------------------------------------------------------------------


def run_both(args, record_argv: list[str]) -> int:
    """``record`` with each tree on ``PYTHONPATH`` (one after the other, or ``--parallel``), then
    ``compare``; the records stay in ``--out-dir`` (a new temporary folder by default)."""
    out_dir = Path(args.out_dir or tempfile.mkdtemp(prefix="leapgram-differential-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs = []
    for label, tree in (("base", args.base), ("new", args.new)):
        env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve())}
        argv = [sys.executable, str(Path(__file__).resolve()), "record", *record_argv, "--quiet", "--out", str(out_dir / f"{label}.jsonl")]
        print(f"{label}: PYTHONPATH={env['PYTHONPATH']}", flush=True)
        jobs.append(subprocess.Popen(argv, env=env))
        if not args.parallel:
            jobs[-1].wait()
    for job in jobs:
        if job.wait():
            out = Path(job.args[-1])
            print(f"record failed (exit status {job.returncode}): {' '.join(job.args[1:])}; {out} "
                  f"ends after {last_case(out)} (the next case in sorted order is the one that failed)")
            return 3
    print(f"records: {out_dir}/base.jsonl, {out_dir}/new.jsonl")
    return run_compare(argparse.Namespace(a=out_dir / "base.jsonl", b=out_dir / "new.jsonl",
                                          ignore_messages=args.ignore_messages, show=args.show))


def last_case(path: Path) -> str:
    """The name of the last case recorded in ``path`` (``"the header"`` or ``"nothing"`` before any)."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    if len(lines) < 2:
        return "the header" if lines else "nothing"
    return json.loads(lines[-1])["case"]


# ----- command line -------------------------------------------------------------------------


def add_record_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", nargs="?", help="JSONSchemaBench files (default ../shared/jsonschemabench)")
    parser.add_argument("--tokenizer", default="llama3", help="name under ../shared/tokenizers (llama3, qwen3, ...) or a tokenizer.json")
    parser.add_argument("--sample", type=int, help="N cases evenly spaced over the sorted files (random with --seed)")
    parser.add_argument("--seed", type=int, help="draw the --sample at random with this seed")
    parser.add_argument("--only", help="comma-separated case names")
    parser.add_argument("--shard", help="K/N: every N-th case from the K-th (1-based)")
    parser.add_argument("--property-order", choices=["declared", "any", "auto"], default="declared",
                        help="Grammar.from_json_schema's any_order (declared: False)")
    parser.add_argument("--invalid", action="store_true", help="also walk the invalid instances, each until rejection")
    parser.add_argument("--grammar", choices=GRAMMARS, help="bench_cfg_masks.py's documents under its JSON grammar instead")
    parser.add_argument("--max-bytes", type=int, default=4096, help="with --grammar: the longest document")
    parser.add_argument("--timeout-s", type=float, default=120.0, help="per case (a hang is a timeout record)")


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    record = commands.add_parser("record", help="record the steps of many cases with the leapgram on PYTHONPATH")
    add_record_arguments(record)
    record.add_argument("--out", help="JSON lines file (default: standard output)")
    record.add_argument("--quiet", action="store_true", help="no progress lines")
    compare = commands.add_parser("compare", help="compare two records; exit 1 on a difference")
    compare.add_argument("a")
    compare.add_argument("b")
    both = commands.add_parser("run", help="record with --base and --new trees, then compare; other arguments go to record")
    both.add_argument("--base", required=True, help="the base tree (its root: the folder holding leapgram/)")
    both.add_argument("--new", required=True, help="the changed tree")
    both.add_argument("--out-dir", help="where base.jsonl and new.jsonl go (default: a new temporary folder)")
    both.add_argument("--parallel", action="store_true", help="record both trees at once")
    for sub in (compare, both):
        sub.add_argument("--ignore-messages", action="store_true", help="compare exception types, not messages")
        sub.add_argument("--show", type=int, default=20, help="differing cases printed")
    if argv and argv[0] == "run":  # the arguments it does not know go to record
        args, rest = both.parse_known_args(argv[1:])
        args.command = "run"
        return args, rest
    return parser.parse_args(argv), []


def main(argv: list[str] | None = None) -> int:
    args, rest = parse_args(sys.argv[1:] if argv is None else argv)
    if args.command == "record":
        return run_record(args)
    if args.command == "compare":
        return run_compare(args)
    probe = argparse.ArgumentParser(prog="differential.py run")
    add_record_arguments(probe)
    probe.parse_args(rest)  # a bad argument fails here, not in both subprocesses
    return run_both(args, rest)


if __name__ == "__main__":
    sys.exit(main())
