"""Reads the imports of every module under leapgram/ and fails on an import cycle, on a
private name imported from another module, or on a layer break (``LAYERS``, ``FRONT_END_USERS``,
``FRAMEWORKS``, ``INTEGRATION_USERS``).

Every import counts, those inside functions too (a lazy import that closes a circle still
makes two modules depend on each other, and a lazy import of a framework or of a higher layer
breaks the layers as a load-time one does); only ``if TYPE_CHECKING:`` blocks are left out.
``--load-time`` counts module-level imports only. A ``from X import _name`` of another leapgram
module (``TYPE_CHECKING`` blocks included) is reported too: a name another module needs is
public. The layers (DESIGN.md, "Layers"): a lower layer imports only the layers ``LAYERS``
lists for it, and only the public API and what is above it imports a front end (the core never
does; front ends never import ``parser`` or ``mask``). ``integrations`` is the only place the
frameworks (torch, transformers, vLLM, SGLang) are imported, and only the modules of
``INTEGRATION_USERS`` import it, but for the lazy imports named in ``SEAMS``. Usage:
``python scripts/check_imports.py`` (exit 1 and the cycles, private imports or layer breaks
printed when there is one).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "leapgram"
_BOTTOM = {"errors", "limits", "_gc"}
# Each lower layer (a top-level module or package of leapgram) and the layers it may import, its own
# aside. The layers above (compiler, matcher, the public API) may import these; FRONT_END_USERS says
# which of them may import a front end.
LAYERS: dict[str, set[str]] = {
    "errors": set(), "limits": set(), "_gc": set(),
    "_kernels": _BOTTOM,
    "vocab": {"_kernels"} | _BOTTOM,
    "regex": {"_kernels"} | _BOTTOM,
    "grammar": {"regex", "_kernels"} | _BOTTOM,
    "frontends": {"grammar", "regex"} | _BOTTOM,
    "parser": {"grammar", "regex", "_kernels"} | _BOTTOM,
    "bitmask": _BOTTOM,  # bitmask_words, allocate_token_bitmask: under mask and the compiler
    "mask": {"parser", "grammar", "regex", "vocab", "_kernels", "bitmask"} | _BOTTOM,
}
# The modules that may import a front end: the public API that builds grammars, and above it.
FRONT_END_USERS = {"frontends", "grammars", "warmup", "cli", "__main__", "integrations", "remote", PACKAGE}
# The frameworks DESIGN.md keeps in ``integrations`` (top-level import names), and the layers that
# may import ``integrations`` (``leapgram generate`` runs a model).
FRAMEWORKS = {"torch", "transformers", "vllm", "sglang"}
INTEGRATION_USERS = {"integrations", "cli", "__main__"}
# Lazy imports of ``integrations`` from below it that the design asks for, each with its reason;
# the same import at load time is still a break (``import leapgram`` must not import torch).
SEAMS = {
    ("leapgram.bitmask", "leapgram.integrations.torch"):
        "apply_token_bitmask takes numpy arrays and torch tensors (DESIGN.md, Public API)",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(tree: ast.Module, name: str, is_package: bool, load_time: bool) -> set[str]:
    """The modules ``name`` imports (when it loads, with ``load_time``): leapgram's by their full
    names (and ``module.name`` for each ``from module import name``), others as written."""
    found: set[str] = set()
    base = name.split(".") if is_package else name.split(".")[:-1]

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    anchor = base[: len(base) - node.level + 1]
                    target = ".".join(anchor + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                found.add(target)
                if target.split(".")[0] == PACKAGE:
                    found.update(f"{target}.{alias.name}" for alias in node.names)
            elif load_time and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue  # its body runs when called
            else:
                skip_body = isinstance(node, ast.If) and is_type_checking(node)
                for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                    if field == "body" and skip_body:
                        continue
                    for child in getattr(node, field, None) or []:
                        visit(child.body if isinstance(child, (ast.ExceptHandler, ast.match_case)) else [child])
    visit(tree.body)
    return found


def module_imports(load_time: bool) -> dict[str, set[str]]:
    """Every leapgram module's imports (:func:`imports_of`)."""
    found = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        name = module_name(path)
        found[name] = imports_of(ast.parse(path.read_text(encoding="utf-8")), name, path.name == "__init__.py",
                                 load_time)
    return found


def import_graph(load_time: bool, imports: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    """``module -> the leapgram modules it imports``."""
    imports = module_imports(load_time) if imports is None else imports
    return {name: {t for t in targets if t in imports and t != name} for name, targets in imports.items()}


def seam_breaks(load_time_graph: dict[str, set[str]]) -> list[str]:
    """``module -> target`` for each of ``SEAMS`` imported when ``module`` loads."""
    return [f"{name} -> {target} (a seam imported at load time: {why})" for (name, target), why in SEAMS.items()
            if target in load_time_graph.get(name, ())]


def framework_breaks(imports: dict[str, set[str]]) -> list[str]:
    """``module -> framework`` for each import of ``FRAMEWORKS`` outside ``integrations``."""
    found = []
    for name in sorted(imports):
        if layer_of(name) == "integrations":
            continue
        for target in sorted(t for t in imports[name] if t.split(".")[0] in FRAMEWORKS):
            found.append(f"{name} -> {target} (only integrations imports a framework)")
    return found


def private_imports() -> list[str]:
    """``path:line: from X import _name`` for each private name a module takes from another
    leapgram module (dunder names such as ``__version__`` are not private)."""
    found = []
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        name = module_name(path)
        base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                target = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != PACKAGE or target == name:
                continue
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.endswith("__"):
                    where = path.relative_to(ROOT)
                    found.append(f"{where}:{node.lineno}: from {target} import {alias.name}")
    return found


def layer_of(module: str) -> str:
    """The layer of a leapgram module: its top-level module or package (``leapgram`` itself for
    the package's ``__init__``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else PACKAGE


def layer_breaks(graph: dict[str, set[str]], load_time: bool = False) -> list[str]:
    """``module -> target`` for each import that breaks ``LAYERS``, ``FRONT_END_USERS`` or
    ``INTEGRATION_USERS``; a lazy import of ``SEAMS`` is none (with ``load_time``, ``graph``
    holds load-time imports only: a seam there is a break)."""
    found = []
    for name in sorted(graph):
        layer = layer_of(name)
        for target in sorted(graph[name]):
            other = layer_of(target)
            if other == layer:
                continue
            if (name, target) in SEAMS and not load_time:  # (seam_breaks checks it is lazy)
                continue
            if layer in LAYERS and other not in LAYERS[layer]:
                found.append(f"{name} -> {target} ({layer} may import only {', '.join(sorted(LAYERS[layer])) or 'nothing'})")
            elif other == "frontends" and layer not in FRONT_END_USERS:
                found.append(f"{name} -> {target} (the core never imports a front end)")
            elif other == "integrations" and layer not in INTEGRATION_USERS and (name, target) not in SEAMS:
                found.append(f"{name} -> {target} (only {', '.join(sorted(INTEGRATION_USERS))} import integrations)")
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph[node]:
            if succ not in index:
                connect(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def main() -> int:
    load_time = "--load-time" in sys.argv[1:]
    imports = module_imports(load_time)
    graph = import_graph(load_time, imports)
    breaks = layer_breaks(graph, load_time) + framework_breaks(imports) + seam_breaks(import_graph(True))
    # a package's __init__ re-exporting its submodules is how packages work, not a dependency
    for name in graph:
        graph[name] = {t for t in graph[name] if not (t.startswith(name + ".") and name in graph)}
        graph[name] = {t for t in graph[name] if not name.startswith(t + ".")}
    found = cycles(graph)
    for component in found:
        print("import cycle:", " <-> ".join(component))
    private = private_imports()
    for line in private:
        print("private name imported:", line)
    for line in breaks:
        print("layer break:", line)
    print(f"{len(graph)} modules, {sum(map(len, graph.values()))} {'load-time ' if load_time else ''}imports, "
          f"{len(found)} cycles, {len(private)} private imports, {len(breaks)} layer breaks")
    return 1 if found or private or breaks else 0


if __name__ == "__main__":
    sys.exit(main())
