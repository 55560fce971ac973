"""The official JSON-Schema-Test-Suite (required tests of drafts 4, 6, 7, 2019-09 and 2020-12,
vendored in tests/data/json_schema_test_suite with its LICENSE).

Each group's schema is compiled for a byte vocabulary (with the group's draft as ``$schema``
when it names none, and the suite's remote documents it names bundled in: ``suite_schema``) and each instance, written as ``json.dumps(data, ensure_ascii=False)``, is
walked byte by byte through a :class:`leapgram.Matcher`. The test fails on any invalid instance
accepted (a loosened answer). A schema refused with :class:`UnsupportedError` is counted, not a
failure; a schema that matches nothing (a ``GrammarError`` saying so) rejects every instance.
A valid instance rejected fails unless :data:`STRICTER` lists it with the documented choice that
makes leapgram stricter than the specification.

The whole suite takes seconds, with or without JIT, so both runs of scripts/test.sh check it all.
"""

from __future__ import annotations

import json

import pytest

import leapgram
from leapgram import Grammar, GrammarError, UnsupportedError, Vocabulary
from tests.helpers.json_schema_suite import DIALECTS, SUITE, suite_schema

# Documented choices that reject instances the specification calls valid:
# (file, group description, test description or "*" for every test of the group): reason.
ORDER = "declared property order: properties are written in the order the schema declares them"
STRICTER = {
    ("allOf.json", "allOf", "allOf"): ORDER,
    ("allOf.json", "allOf with base schema", "valid"): ORDER,
    ("dependentRequired.json", "single dependency", "with dependency"): ORDER,
    ("dependentRequired.json", "multiple dependents required", "with dependencies"): ORDER,
    ("dependentRequired.json", "dependencies with escaped characters", "quoted quotes"): ORDER,
    ("dependencies.json", "dependencies", "with dependency"): ORDER,
    ("unevaluatedProperties.json", "unevaluatedProperties with $ref", "with no unevaluated properties"): ORDER,
    ("dependencies.json", "multiple dependencies", "with dependencies"): ORDER,
    ("unevaluatedProperties.json", "unevaluatedProperties with $recursiveRef", "with no unevaluated properties"): ORDER,
    ("const.json", "const with object", "same object with different property order is valid"):
        "a const or enum object is written with its keys in the order the schema gives them",
    ("type.json", "integer type matches integers", "a float with zero fractional part is an integer"):
        "an integer is written without a fraction or exponent: 1.0 is not an integer",
    ("vocabulary.json", "schema that uses custom metaschema with with no validation vocabulary",
     "no validation: invalid number, but it still validates"):
        "$vocabulary is not read: the validation keywords always apply",
    ("format.json", "*", "*"): "format is enforced (drafts 2019-09 and 2020-12 make it an annotation by default)",
    ("unevaluatedProperties.json", "unevaluatedProperties with anyOf", "when two match and has no unevaluated properties"):
        "beside anyOf, unevaluated* counts what one succeeding branch evaluates, not all of them together",
}

_VOCAB = Vocabulary.byte_vocabulary()


def compile_schema(schema, **options) -> leapgram.CompiledGrammar:
    return leapgram.GrammarCompiler(_VOCAB).compile(Grammar.from_json_schema(schema, **options))


def accepts(compiled: leapgram.CompiledGrammar | None, text: str) -> bool:
    """Whether the matcher takes every byte of ``text`` and may end there (``None``: the schema
    matches nothing)."""
    if compiled is None:
        return False
    matcher = leapgram.Matcher(compiled)
    return matcher.consume_tokens(text.encode("utf-8")) and matcher.is_accepting()


def stricter_reason(file: str, group: str, test: str) -> str | None:
    for key in ((file, group, test), (file, group, "*"), (file, "*", "*")):
        if key in STRICTER:
            return STRICTER[key]
    return None


def suite_cases() -> list:
    out = []
    for draft in DIALECTS:
        for path in sorted((SUITE / draft).glob("*.json")):
            out.append(pytest.param(draft, path.name, id=f"{draft}/{path.stem}"))
    return out


def run_group(draft: str, file: str, group: dict) -> dict:
    """Counts and problems of one group: ``unsupported`` (0/1), ``loosened`` and ``stricter``
    (lists of descriptions), ``right`` (instances answered as the suite says)."""
    result = {"unsupported": 0, "loosened": [], "stricter": [], "right": 0}
    try:
        compiled = compile_schema(suite_schema(group["schema"], draft))
    except UnsupportedError:
        result["unsupported"] = 1
        return result
    except GrammarError as err:
        if "matches no JSON value" not in err.message:
            raise
        compiled = None
    for test in group["tests"]:
        text = json.dumps(test["data"], ensure_ascii=False)
        verdict = accepts(compiled, text)
        where = f"{draft}/{file}: {group['description']!r} / {test['description']!r}: {text[:80]}"
        if verdict == test["valid"]:
            result["right"] += 1
        elif verdict:
            result["loosened"].append(where)
        else:
            reason = stricter_reason(file, group["description"], test["description"])
            if reason is None:
                result["stricter"].append(where)
            elif reason is ORDER:
                loose = compile_schema(suite_schema(group["schema"], draft), any_order=True)
                if not accepts(loose, text):
                    result["stricter"].append(f"{where} (also rejected with any_order=True)")
    return result


@pytest.mark.parametrize(("draft", "file"), suite_cases())
def test_suite_file(draft, file):
    groups = json.loads((SUITE / draft / file).read_text(encoding="utf-8"))
    loosened, stricter = [], []
    for group in groups:
        result = run_group(draft, file, group)
        loosened += result["loosened"]
        stricter += result["stricter"]
    assert not loosened, "invalid instances accepted:\n" + "\n".join(loosened)
    assert not stricter, "valid instances rejected without a documented reason:\n" + "\n".join(stricter)


def test_stricter_list_names_real_tests():
    """Every entry of STRICTER names a group and test of the suite (the list does not decay)."""
    seen = set()
    for draft in DIALECTS:
        for path in (SUITE / draft).glob("*.json"):
            for group in json.loads(path.read_text(encoding="utf-8")):
                for test in group["tests"]:
                    seen |= {(path.name, group["description"], test["description"]),
                             (path.name, group["description"], "*"), (path.name, "*", "*")}
    assert set(STRICTER) <= seen, set(STRICTER) - seen
