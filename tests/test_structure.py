"""The package's shape: no import cycle, a public surface of a few names, no heavy imports."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import leapgram

REPO = Path(__file__).resolve().parents[1]


def test_no_import_cycle_inside_the_package():
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "check_imports.py")], check=False, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert " 0 cycles" in run.stdout


def test_no_private_name_imported_across_modules():
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "check_imports.py")], check=False, capture_output=True,
                         text=True, timeout=120)
    assert " 0 private imports" in run.stdout, run.stdout


def test_the_public_surface_is_small_and_named():
    assert set(dir(leapgram)) == set(leapgram.__all__)
    assert len(leapgram.__all__) <= 25
    for name in leapgram.__all__:
        assert not name.startswith("_") and getattr(leapgram, name).__doc__, name
    compiled_public = {n for n in dir(leapgram.CompiledGrammar) if not n.startswith("_")}
    assert compiled_public == {"vocab_size"}  # plus the grammar, vocab and limits attributes of an instance


def test_layer_rules_catch_a_front_end_importing_the_parser():
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import check_imports
    finally:
        sys.path.remove(str(REPO / "scripts"))
    breaks = check_imports.layer_breaks({"leapgram.frontends.json_schema.common": {"leapgram.parser.lexer"},
                                         "leapgram.parser.lexer": {"leapgram.regex.expr", "leapgram.mask.walk"},
                                         "leapgram.matcher": {"leapgram.frontends.lark"},
                                         "leapgram.grammars": {"leapgram.frontends.lark"}})
    assert [line.split(" (")[0] for line in breaks] == [
        "leapgram.frontends.json_schema.common -> leapgram.parser.lexer", "leapgram.matcher -> leapgram.frontends.lark",
        "leapgram.parser.lexer -> leapgram.mask.walk"]
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "check_imports.py")], check=False, capture_output=True,
                         text=True, timeout=120)
    assert " 0 layer breaks" in run.stdout, run.stdout


def test_layer_rules_see_lazy_imports_of_frameworks_and_integrations():
    """A framework or ``integrations`` imported inside a function is a break as at load time,
    but for the named seam (``bitmask``'s torch tensors), which must stay lazy."""
    import ast

    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import check_imports
    finally:
        sys.path.remove(str(REPO / "scripts"))
    planted = "def f():\n    try:\n        import torch\n    finally:\n        from .integrations.torch import g\n"
    seam = "def apply(x):\n    if x:\n        from .integrations.torch import apply_token_bitmask_torch\n"

    def imports(load_time, bitmask=seam):
        sources = {"leapgram.cli": planted, "leapgram.matcher": planted, "leapgram.bitmask": bitmask,
                   "leapgram.integrations.torch": "import torch\n"}
        return {name: check_imports.imports_of(ast.parse(text), name, False, load_time)
                for name, text in sources.items()}

    lazy = imports(False)
    assert [line.split(" (")[0] for line in check_imports.framework_breaks(lazy)] == [
        "leapgram.cli -> torch", "leapgram.matcher -> torch"]
    assert [line.split(" (")[0] for line in check_imports.layer_breaks(check_imports.import_graph(False, lazy))] == [
        "leapgram.matcher -> leapgram.integrations.torch"]  # cli may use integrations; bitmask's is the seam
    assert not check_imports.framework_breaks(imports(True))  # none of them at load time
    assert not check_imports.seam_breaks(check_imports.import_graph(True, imports(True)))
    eager = imports(True, bitmask="from .integrations.torch import apply_token_bitmask_torch\n")
    assert [line.split(" (")[0] for line in check_imports.seam_breaks(check_imports.import_graph(True, eager))] == [
        "leapgram.bitmask -> leapgram.integrations.torch"]
