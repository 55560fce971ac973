"""Coverage of the JSON Schema value keywords on JSONSchemaBench (../shared/jsonschemabench).

For every ``pattern``/``format`` reachable from the root through ``properties`` and ``items``, and
every string of a valid instance found there: does the string lexeme accept it? Also counts the
patterns that compile, are refused or are malformed, and the slowest compilation.

    PYTHONPATH=. python benchmarks/json_schema_values.py [../shared/jsonschemabench]
"""

from __future__ import annotations

import collections
import json
import sys
import time
from pathlib import Path

from leapgram.errors import GrammarError, UnsupportedError
from leapgram.frontends.json_schema.context import SchemaContext
from leapgram.frontends.json_schema.formats import FORMATS
from leapgram.frontends.json_schema.numbers import NUMBER_KEYWORDS, number_expr
from leapgram.frontends.json_schema.strings import string_expr
from leapgram.regex.expr import ExprPool

KEYS = ("pattern", "minLength", "maxLength", "format")


class Coverage:
    def __init__(self) -> None:
        self.pool = ExprPool()
        self.ctx = SchemaContext(self.pool)
        self.compiled: dict[str, int | None] = {}
        self.outcomes: collections.Counter[str] = collections.Counter()
        self.slowest = (0.0, "")
        self.values: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
        self.rejected: list[tuple[str, str, str]] = []

    def expr(self, schema: dict) -> int | None:
        key = json.dumps({k: schema.get(k) for k in KEYS}, sort_keys=True)
        if key not in self.compiled:
            start = time.perf_counter()
            try:
                self.compiled[key] = string_expr(self.ctx, {k: schema[k] for k in KEYS if k in schema}, "")
                self.outcomes["compiled"] += 1
            except UnsupportedError:
                self.compiled[key] = None
                self.outcomes["refused"] += 1
            except GrammarError:
                self.compiled[key] = None
                self.outcomes["malformed"] += 1
            self.slowest = max(self.slowest, (time.perf_counter() - start, key))
        return self.compiled[key]

    def visit(self, schema: object, value: object, case: str) -> None:
        if not isinstance(schema, dict):
            return
        keyword = "pattern" if isinstance(schema.get("pattern"), str) else "format"
        if isinstance(value, str) and (keyword == "pattern" or schema.get("format") in FORMATS):
            self.check(schema, value, case, keyword if keyword == "pattern" else schema["format"])
        if isinstance(value, (int, float)) and not isinstance(value, bool) and any(k in schema for k in NUMBER_KEYWORDS):
            self.check_number(schema, value, case)
        if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
            for name, sub in schema["properties"].items():
                if name in value:
                    self.visit(sub, value[name], case)
        if isinstance(value, list) and isinstance(schema.get("items"), dict):
            for item in value:
                self.visit(schema["items"], item, case)

    def check(self, schema: dict, value: str, case: str, label: str) -> None:
        expr = self.expr(schema)
        if expr is None:
            return
        accepted = self.pool.matches(expr, json.dumps(value, ensure_ascii=False).encode())
        self.values[label][0] += 1
        self.values[label][1] += accepted
        if not accepted:
            self.rejected.append((case, label, value[:80]))

    def check_number(self, schema: dict, value: float, case: str) -> None:
        integer = schema.get("type") == "integer" and isinstance(value, int)
        try:
            expr = number_expr(self.ctx, schema, "", integer=integer)
        except GrammarError as exc:
            self.outcomes[f"number refused: {exc.message[:50]}"] += 1
            return
        text = json.dumps(value)
        label = "number (exponent form)" if "e" in text else "number"
        self.values[label][0] += 1
        accepted = self.pool.matches(expr, text.encode())
        self.values[label][1] += accepted
        if not accepted:
            self.rejected.append((case, label, f"{text} under {({k: schema[k] for k in NUMBER_KEYWORDS if k in schema})}"))

    def every_pattern(self, node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                self.expr(node)
            for sub in node.values():
                self.every_pattern(sub)
        elif isinstance(node, list):
            for sub in node:
                self.every_pattern(sub)


def main(folder: Path) -> None:
    coverage = Coverage()
    for path in sorted(folder.glob("*.json")):
        case = json.loads(path.read_text())
        coverage.every_pattern(case.get("schema"))
        for test in case.get("tests", []):
            if test.get("valid"):
                coverage.visit(case.get("schema"), test.get("data"), path.name)
    print("compiled:", dict(coverage.outcomes))
    print(f"slowest compilation: {coverage.slowest[0]:.3f} s for {coverage.slowest[1][:100]}")
    for label, (total, accepted) in sorted(coverage.values.items(), key=lambda kv: -kv[1][0]):
        print(f"{label:24} valid values accepted {accepted}/{total}")
    for row in coverage.rejected[:20]:
        print("REJECTED", *row)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parents[1].parent / "shared" / "jsonschemabench"))
