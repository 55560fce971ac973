"""A number is one value in every JSON spelling: what a schema excludes by value (``not`` of a
``const``/``enum`` number, of a bound or ``multipleOf``, a ``oneOf`` branch) stays excluded when
written ``1.00``, ``-0``, ``1e2``, ``10E1`` or ``15e-1``. ``json.dumps`` writes none of these, so
the suite test (and the other tests) never try them.

Each numeric instance of the vendored JSON-Schema-Test-Suite, and of a table of hand-made cases,
is written again in other spellings; ``jsonschema`` on the value so written is the reference. No
spelling it calls invalid may be accepted; a valid spelling may be rejected only by the documented
stricter choices: an exponent form (under a nonzero bound, ``multipleOf``, or a number something
is cut out of), an integral value with a fraction under ``integer``, or a ``const``/``enum``
number written other than as ``json.dumps`` writes it (an int also as ``1.0``).
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

import pytest
from schema_fuzz import reference_validator

from leapgram import Grammar, GrammarError, UnsupportedError, Vocabulary
from tests.helpers.compiling import compile_for
from tests.helpers.json_schema_suite import DIALECTS, SUITE, suite_schema
from tests.helpers.schema_acceptance import accepts

_VOCAB = Vocabulary.byte_vocabulary()

# (schema, instances): instances whose other spellings the schema forbids (or allows)
CASES = [
    ({"not": {"const": 1}}, [1, 2]),
    ({"not": {"const": 0}}, [0]),
    ({"not": {"const": 100}}, [100]),
    ({"not": {"const": 1.5}}, [1.5]),
    ({"not": {"const": 1e-7}}, [1e-7]),
    ({"not": {"enum": [0, 2, 2.5]}}, [0, 2, 2.5, 3]),
    ({"type": "integer", "not": {"const": 0}}, [0]),
    ({"type": "number", "not": {"enum": [0, 100]}}, [100]),
    ({"oneOf": [{"const": 1}, {"type": "number"}]}, [1]),
    ({"oneOf": [{"const": 0}, {"type": "number"}]}, [0]),
    ({"items": {"not": {"enum": [2]}}}, [[2, 3], [2.0]]),
    ({"anyOf": [{"type": "string"}, {"not": {"const": 10}}]}, [10]),
    ({"not": {"multipleOf": 2}}, [2, 4, 40, 3]),
    ({"not": {"multipleOf": 3}}, [30]),
    ({"not": {"minimum": 5}}, [10]),
    ({"not": {"maximum": 5}}, [1]),
    ({"not": {"exclusiveMinimum": 0}}, [0]),
    ({"not": {"minimum": 0}}, [0, -1, 1]),
    ({"type": "number", "not": {"multipleOf": 0.5}}, [1.5, 1.25]),
    ({"type": "integer", "not": {"minimum": 0}}, [0]),
    ({"not": {"type": "integer"}}, [1, 1.5]),
    ({"type": "array", "items": {"not": {"const": 1}}}, [[1], [0, 1.5]]),
]


def spellings(x: float) -> dict[str, str]:
    """Other texts of the number ``x``, by kind: ``zeros`` (a longer fraction), ``minus`` (``-0``
    for zero) and three exponent forms."""
    value = Decimal(x) if isinstance(x, int) else Decimal(repr(x))
    sign, digits, exponent = value.normalize().as_tuple()
    minus = "-" if sign else ""
    mantissa = "".join(map(str, digits))
    fixed = format(abs(value), "f")
    out = {"zeros": f"{minus}{fixed}{'0' if '.' in fixed else '.00'}",
           "exponent": f"{minus}{mantissa}e{exponent}",
           "exponent_upper": f"{minus}{mantissa}0E{exponent - 1}",
           "exponent_fraction": f"{minus}{mantissa[0]}.{mantissa[1:] or '0'}0e{exponent + len(mantissa) - 1:+d}"}
    if value == 0:
        out.update(minus="-0", minus_zeros="-0.00", exponent_upper="0E5")
    return out


def written(value: Any, kind: str) -> str:
    """``value`` as ``json.dumps`` writes it, with every number in the ``kind`` spelling."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float)):
        return spellings(value).get(kind, json.dumps(value)) if finite(value) else json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(written(v, kind) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)}: {written(v, kind)}" for k, v in value.items()) + "}"


def finite(x: float) -> bool:
    return isinstance(x, int) or math.isfinite(x)


def has_number(value: Any) -> bool:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True
    if isinstance(value, list):
        return any(has_number(v) for v in value)
    return isinstance(value, dict) and any(has_number(v) for v in value.values())


def respelled(value: Any) -> list[tuple[str, str]]:
    kinds = ("zeros", "minus", "minus_zeros", "exponent", "exponent_upper", "exponent_fraction")
    original = json.dumps(value, ensure_ascii=False)
    return [(kind, text) for kind in kinds if (text := written(value, kind)) != original]


def check(schema: Any, instances: list[Any], where: str) -> list[str]:
    """The spellings accepted though the reference calls them invalid, or rejected though valid
    without a documented reason."""
    validator = reference_validator(schema)
    if validator is None:
        return []
    try:
        compiled = compile_for(Grammar.from_json_schema(schema), _VOCAB)
    except UnsupportedError:
        return []
    except GrammarError as err:
        if "matches no JSON value" not in err.message:
            raise
        compiled = None
    problems = []
    for value in instances:
        if not has_number(value):
            continue
        as_dumped = compiled is not None and accepts(compiled, json.dumps(value, ensure_ascii=False))
        for kind, text in respelled(value):
            valid = validator.is_valid(json.loads(text))
            verdict = compiled is not None and accepts(compiled, text)
            if verdict and not valid:
                problems.append(f"accepted, invalid: {where}: {json.dumps(schema)[:120]} {text[:80]}")
            elif valid and as_dumped and not verdict and not kind.startswith("exponent") and not stricter(schema, value):
                problems.append(f"rejected, valid: {where}: {json.dumps(schema)[:120]} {text[:80]}")
    return problems


def stricter(schema: Any, value: Any) -> bool:
    """Whether rejecting a valid spelling of ``value`` may be one of the documented stricter
    choices besides exponent forms: a ``const``/``enum`` number is written only as ``json.dumps``
    writes it (an int also as ``1.0``), an integer without fraction (read from the schema's text
    and the instance, loosely)."""
    text = json.dumps(schema)
    return '"const"' in text or '"enum"' in text or '"integer"' in text and has_integral(value)


def has_integral(value: Any) -> bool:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return finite(value) and value == int(value)
    if isinstance(value, list):
        return any(has_integral(v) for v in value)
    return isinstance(value, dict) and any(has_integral(v) for v in value.values())


@pytest.mark.parametrize(("schema", "instances"), CASES, ids=[json.dumps(s)[:60] for s, _ in CASES])
def test_hand_made_cases(schema, instances):
    problems = check(schema, instances, "case")
    assert not problems, "\n".join(problems)


def suite_cases() -> list:
    return [pytest.param(draft, id=draft) for draft in DIALECTS]


@pytest.mark.parametrize("draft", suite_cases())
def test_suite_numbers_in_other_spellings(draft):
    """Every group of the suite whose tests hold a number, its instances respelled."""
    problems = []
    for path in sorted((SUITE / draft).glob("*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            instances = [test["data"] for test in group["tests"]]
            if any(has_number(v) for v in instances):
                schema = suite_schema(group["schema"], draft)
                problems += check(schema, instances, f"{draft}/{path.name}: {group['description']}")
    assert not problems, "\n".join(problems)
