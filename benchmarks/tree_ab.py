"""Old against new leapgram in one process, alternating per case: computed masks and time to first mask.

``python benchmarks/tree_ab.py FOLDER --base-root DIR [--base COMMIT] [--sample N] [--seed S]
[--rounds R] [--aa]``: ``DIR`` holds the base tree's package renamed ``leapgram_base``, made
there from ``COMMIT`` (``git archive``, run in this repository) when it is missing; keep ``DIR``
between runs, as its kernels compile on the first (a minute or two: discard that run). The new
tree is the ``leapgram`` on ``sys.path``. Both load their own vocabulary and warm up. Per round and case (``N`` cases of
``FOLDER`` shuffled with ``S``, as ``lexer_states_probe.py``), each tree compiles the schema
and walks its valid instances, in alternating order; thread CPU of the time to first mask
(compile and first fill, a collection before each, off the clock) and of the computed masks
(the grammar's mask cache grew). ``--aa``: the new tree against itself. Prints per round new /
old: computed masks, all fills, TTFM (totals) and the per-case median of TTFM.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import io
import statistics
import subprocess
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_schemas import LeapgramEngine, resolve_tokenizer
from lexer_states_probe import shuffled_cases
from shared_states_probe import one


class BaseEngine(LeapgramEngine):
    """:class:`LeapgramEngine` on the package ``leapgram_base``."""

    def __init__(self, tokenizer_json: Path) -> None:
        lg = importlib.import_module("leapgram_base")
        cli = importlib.import_module("leapgram_base.cli")
        self.lg = lg
        self.vocab = cli.load_vocabulary(str(tokenizer_json))
        self.compiler = lg.GrammarCompiler(self.vocab)
        self.eos = list(self.vocab.eos_token_ids)
        self.bitmask = lg.allocate_token_bitmask(1, self.vocab.size)
        importlib.import_module("leapgram_base.warmup").warm_up(self.vocab)
        self.prepare()


def make_base(root: Path, commit: str) -> None:
    """``root/leapgram_base``: the package of ``commit``, its lazy names renamed to match."""
    if (root / "leapgram_base").exists():
        return
    archive = subprocess.run(["git", "archive", commit, "leapgram"], check=True, capture_output=True,
                             cwd=Path(__file__).resolve().parent.parent).stdout
    root.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(root / "unpacked")
    (root / "unpacked" / "leapgram").rename(root / "leapgram_base")
    init = root / "leapgram_base" / "__init__.py"
    init.write_text(init.read_text().replace('"leapgram.', '"leapgram_base.'))


def tree_parser(description: str) -> argparse.ArgumentParser:
    """A parser with the arguments every old-against-new script takes: the folder, the base
    tree (``--base-root``, ``--base``), the tokenizer."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("folder")
    parser.add_argument("--base-root", required=True, help="the folder holding leapgram_base")
    parser.add_argument("--base", help="the base commit, to make leapgram_base from when it is missing")
    parser.add_argument("--tokenizer", default="llama3")
    return parser


def main() -> int:
    parser = tree_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--aa", action="store_true", help="the new tree against itself")
    args = parser.parse_args()
    if not args.aa:
        if args.base:
            make_base(Path(args.base_root), args.base)
        sys.path.insert(0, args.base_root)
    tokenizer = resolve_tokenizer(args.tokenizer)
    cases = shuffled_cases(Path(args.folder), tokenizer, args.sample, args.seed)
    new = LeapgramEngine(tokenizer)
    old = LeapgramEngine(tokenizer) if args.aa else BaseEngine(tokenizer)
    engines = {"old": old, "new": new}
    gc.freeze()
    for round_ in range(args.rounds):
        totals = {"old": [0, 0, 0, 0], "new": [0, 0, 0, 0]}
        ratios = []
        for k, case in enumerate(cases):
            runs = {}
            for name in (("old", "new") if (k + round_) % 2 == 0 else ("new", "old")):
                runs[name] = one(engines[name], case)[0]  # (ttfm, computed, fills, count) in ns
            if runs["old"] is None or runs["new"] is None:
                continue
            for name, run in runs.items():
                totals[name] = [a + b for a, b in zip(totals[name], run)]
            ratios.append(runs["new"][0] / runs["old"][0])
        a, b = totals["old"], totals["new"]
        print(f"round {round_}: new / old: computed masks {b[1] / a[1]:.3f}x ({a[3]} / {b[3]} masks, old"
              f" {a[1] / max(a[3], 1) / 1e3:.1f} µs)  fills {b[2] / a[2]:.3f}x  TTFM {b[0] / a[0]:.3f}x"
              f" (per-case median {statistics.median(ratios):.3f}x, old {a[0] / len(ratios) / 1e3:.0f} µs)",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
