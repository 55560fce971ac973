"""Differential fuzzing of the JSON Schema front end against ``jsonschema`` (with format checking).

Schemas come from :func:`random_schema` (the keywords the front end translates, nested) or from
:func:`mutate_schema` applied to real schemas (JSONSchemaBench in the benchmark script).
Instances are drawn by ``hypothesis-jsonschema`` (deterministically) plus :func:`mutate_value`
of those and of given instances, so about half are invalid. :func:`check_schema` compiles the
schema for a byte vocabulary, walks each instance (``json.dumps(data, ensure_ascii=False)``)
through a :class:`leapgram.Matcher`, and sorts each answer:

* ``agree``;
* ``loosened``: leapgram accepts an instance the reference rejects (a bug);
* ``stricter:<reason>``: leapgram rejects a valid instance for a documented choice: ``order``
  (the declared property order: accepted with the members in another order, or as written
  with ``any_order=True``), ``exponent`` (a number in
  exponent form under a bound or ``multipleOf``, see ``numbers.py``), ``integer`` (an integral
  float such as ``1.0`` is not an integer; accepted once such floats are written as ints),
  ``format`` (a format the reference does not check without optional packages, or checks
  more loosely, as ``email``), ``dialect`` (a schema without ``$schema``: leapgram reads the
  keywords of every draft, ``dependencies`` too, the reference reads 2020-12; accepted with
  2020-12 named); ``stricter:other`` is a bug too;
* ``unchecked format``: accepted where the reference rejects, because leapgram checks a format
  the reference does not (a malformed hostname passes a ``not``): rejected once the schema's
  formats are dropped. Not a bug: the instance is valid where formats are asserted.

The reference reads ``pattern`` with ECMA-262's ASCII ``\\w`` and ``\\d`` (as the specification
says; Python's ``re`` would take them as Unicode).

A schema the front end refuses (:class:`UnsupportedError`, :class:`BudgetExceededError`) counts
as ``unsupported`` with its instances left out; one the reference cannot use (an invalid
schema, a remote ``$ref``) is skipped.
"""

from __future__ import annotations

import copy
import json
import random
import warnings
from collections import Counter
from typing import Any

import leapgram
from leapgram import BudgetExceededError, Grammar, GrammarError, UnsupportedError, Vocabulary

VOCAB = Vocabulary.byte_vocabulary()
PATTERNS = ["^[a-z]+$", "^[0-9]{2,4}$", "a", "^(ab|cd)*$", "^\\w+@\\w+$", "^.{0,3}$", "x$", "^[A-Z][a-z]*"]
FORMATS = ["date", "ipv4", "ipv6", "uuid", "email", "date-time", "time", "uri", "hostname", "duration"]
SCALARS = [0, 1, -1, 2.5, 1e3, "", "a", "xyz", "é", True, False, None]
NAMES = ["a", "b", "id", "name", "x-y", "ä"]


# ----- schemas ----------------------------------------------------------------------------------


def random_schema(rng: random.Random, depth: int = 0) -> Any:
    """A random schema over the keywords the front end translates (nested up to depth 3)."""
    if depth > 3 or rng.random() < 0.05:
        return rng.choice([True, {}, {"type": "null"}, {"const": rng.choice(SCALARS)}])
    roll = rng.random()
    if roll < 0.12 and depth < 3:
        keyword = rng.choice(["allOf", "anyOf", "oneOf"])
        return {keyword: [random_schema(rng, depth + 1) for _ in range(rng.randint(1, 3))]}
    if roll < 0.17 and depth < 3:
        return {"not": random_schema(rng, depth + 1)}
    if roll < 0.22:
        return {"enum": rng.sample(SCALARS, rng.randint(1, 4))}
    if roll < 0.26 and depth < 3:
        return {"if": random_schema(rng, depth + 1), "then": random_schema(rng, depth + 1),
                "else": random_schema(rng, depth + 1)}
    kind = rng.choice(["string", "integer", "number", "boolean", "array", "object", "object", "multi"])
    if kind == "multi":
        return {"type": rng.sample(["string", "integer", "number", "boolean", "null", "array", "object"], 2)}
    return {"type": kind, **_keywords(rng, kind, depth)}


def _keywords(rng: random.Random, kind: str, depth: int) -> dict:
    out: dict[str, Any] = {}
    if kind == "string":
        if rng.random() < 0.4:
            out["minLength"] = rng.randint(0, 3)
        if rng.random() < 0.4:
            out["maxLength"] = rng.randint(0, 6)
        if rng.random() < 0.3:
            out["pattern"] = rng.choice(PATTERNS)
        if rng.random() < 0.2:
            out["format"] = rng.choice(FORMATS)
    elif kind in ("integer", "number"):
        for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
            if rng.random() < 0.25:
                out[key] = rng.choice([-10, -1, 0, 1, 2.5, 7, 100]) if kind == "number" else rng.randint(-10, 100)
        if rng.random() < 0.2:
            out["multipleOf"] = rng.choice([2, 3, 5, 10] if kind == "integer" else [0.5, 2, 0.25])
    elif kind == "array" and depth < 3:
        if rng.random() < 0.7:
            out["items"] = random_schema(rng, depth + 1)
        if rng.random() < 0.25:
            out["prefixItems"] = [random_schema(rng, depth + 1) for _ in range(rng.randint(1, 2))]
        if rng.random() < 0.3:
            out["minItems"] = rng.randint(0, 2)
        if rng.random() < 0.3:
            out["maxItems"] = rng.randint(1, 4)
        if rng.random() < 0.15:
            out["contains"] = random_schema(rng, depth + 1)
        if rng.random() < 0.1:
            out["uniqueItems"] = True
    elif kind == "object" and depth < 3:
        names = rng.sample(NAMES, rng.randint(0, 4))
        out["properties"] = {n: random_schema(rng, depth + 1) for n in names}
        if names and rng.random() < 0.6:
            out["required"] = rng.sample(names, rng.randint(1, len(names)))
        if rng.random() < 0.4:
            out["additionalProperties"] = rng.choice([False, True, random_schema(rng, depth + 1)])
        if rng.random() < 0.15:
            out["patternProperties"] = {"^x": random_schema(rng, depth + 1)}
        if rng.random() < 0.1:
            out["propertyNames"] = {"maxLength": 3}
        if rng.random() < 0.2:
            out["minProperties"] = rng.randint(0, 2)
        if rng.random() < 0.2:
            out["maxProperties"] = rng.randint(1, 3)
        if names and rng.random() < 0.1:
            out["dependentRequired"] = {names[0]: rng.sample(NAMES, 1)}
    return out


def mutate_schema(rng: random.Random, schema: Any) -> Any:
    """``schema`` with one random change at a random subschema (bounds, types, extra keywords,
    a combinator with a random schema)."""
    out = copy.deepcopy(schema)
    places = [node for node in _nodes(out) if isinstance(node, dict)]
    if not places:
        return {"allOf": [out, random_schema(rng, 2)]}
    node = rng.choice(places)
    change = rng.randrange(7)
    if change == 0:
        node["additionalProperties"] = False
    elif change == 1:
        node[rng.choice(["minItems", "maxItems", "minLength", "maxLength", "minProperties"])] = rng.randint(0, 3)
    elif change == 2:
        node[rng.choice(["minimum", "maximum"])] = rng.randint(-5, 50)
    elif change == 3:
        node["allOf"] = [*node.get("allOf", []), random_schema(rng, 2)] if isinstance(node.get("allOf"), list) else [
            random_schema(rng, 2)]
    elif change == 4:
        node["not"] = random_schema(rng, 3)
    elif change == 5 and isinstance(node.get("properties"), dict) and node["properties"]:
        node["required"] = sorted({*node.get("required", []), rng.choice(list(node["properties"]))}) \
            if isinstance(node.get("required"), list) else [rng.choice(list(node["properties"]))]
    else:
        node["anyOf"] = [random_schema(rng, 2), random_schema(rng, 2)]
    return out


def _nodes(value: Any):
    stack = [value]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, dict):
            stack += [v for k, v in node.items() if k not in ("enum", "const", "default", "examples")]
        elif isinstance(node, list):
            stack += node


# ----- instances --------------------------------------------------------------------------------


def draw_instances(schema: Any, count: int) -> list[Any]:
    """Up to ``count`` instances hypothesis-jsonschema draws from ``schema`` (deterministic;
    none when it cannot handle the schema)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis_jsonschema import from_schema

    found: list[Any] = []
    try:
        strategy = from_schema(schema)
    except Exception:  # noqa: BLE001 -- a schema it does not support
        return found

    @settings(max_examples=count, database=None, derandomize=True, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value):
        found.append(value)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            collect()
    except Exception:  # noqa: BLE001, S110 -- unsatisfiable or too hard to satisfy: keep what came
        pass
    unique = {json.dumps(v, sort_keys=True): v for v in found}
    return list(unique.values())[:count]


def mutate_value(rng: random.Random, value: Any) -> Any:
    """``value`` with one random change somewhere inside it (valid or not afterwards)."""
    out = copy.deepcopy(value)
    holders = [(None, None)] + [(node, key) for node in _nodes(out) if isinstance(node, (dict, list))
                                for key in (list(node) if isinstance(node, dict) else range(len(node)))]
    node, key = rng.choice(holders)
    target = out if node is None else node[key]
    new = _changed(rng, target)
    if node is None:
        return new
    node[key] = new
    return out


def _changed(rng: random.Random, value: Any) -> Any:
    roll = rng.random()
    if roll < 0.2:
        return rng.choice(SCALARS + [[], {}])
    if isinstance(value, dict) and value:
        keys = list(value)
        if roll < 0.45:
            value.pop(rng.choice(keys))
        elif roll < 0.7:
            value[rng.choice(NAMES + ["zz"])] = rng.choice(SCALARS)
        else:
            return dict(rng.sample(list(value.items()), len(value)))
        return value
    if isinstance(value, list):
        if value and roll < 0.5:
            value.pop(rng.randrange(len(value)))
        else:
            value.append(copy.deepcopy(rng.choice(value)) if value and roll < 0.75 else rng.choice(SCALARS))
        return value
    if isinstance(value, str):
        return rng.choice([value + rng.choice("a1-é@:"), value[1:], value.upper(), "", value * 2])
    if isinstance(value, bool) or value is None:
        return rng.choice([not value, 0, "true"])
    if isinstance(value, (int, float)):
        return rng.choice([value + 1, value - 1, -value, value * 10, value + 0.5, float(value), str(value)])
    return value


# ----- verdicts ---------------------------------------------------------------------------------


def compile_schema(schema: Any, **options) -> leapgram.CompiledGrammar | None:
    """The compiled schema; ``None`` when it matches nothing. Refusals raise."""
    try:
        grammar = Grammar.from_json_schema(schema, **options)
    except UnsupportedError:
        raise
    except GrammarError as err:
        if "matches no JSON value" in err.message:
            return None
        raise
    return leapgram.GrammarCompiler(VOCAB, cache_size=0).compile(grammar)


def accepts(compiled: leapgram.CompiledGrammar | None, value: Any) -> bool:
    if compiled is None:
        return False
    matcher = leapgram.Matcher(compiled)
    return matcher.consume_tokens(json.dumps(value, ensure_ascii=False).encode("utf-8")) and matcher.is_accepting()


def reference_validator(schema: Any):
    """A ``jsonschema`` validator with format checking, or ``None`` when the reference cannot
    use the schema."""
    import jsonschema

    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        validator = cls(_ecma_patterns(schema), format_checker=cls.FORMAT_CHECKER)
        validator.is_valid(None)  # resolves the root's references early
        return validator
    except Exception:  # noqa: BLE001 -- an invalid schema or one with remote references
        return None


def _ecma_patterns(schema: Any) -> Any:
    """``schema`` with its ``pattern`` and ``patternProperties`` regexes given ECMA-262's meaning
    in Python's ``re``, which ``jsonschema`` uses: ASCII ``\\w`` and ``\\d`` (``re`` takes them as
    Unicode), a ``.`` that matches no line terminator (``re``'s matches ``\\r``, U+2028 and U+2029)
    and a ``$`` only at the end (``re``'s also matches before a final ``\\n``)."""
    if isinstance(schema, list):
        return [_ecma_patterns(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key == "pattern" and isinstance(value, str):
            out[key] = _ecma_pattern(value)
        elif key == "patternProperties" and isinstance(value, dict):
            out[key] = {_ecma_pattern(k): _ecma_patterns(v) for k, v in value.items()}
        elif key in ("enum", "const", "default", "examples"):
            out[key] = value
        else:
            out[key] = _ecma_patterns(value)
    return out


_ASCII_CLASSES = {"w": "A-Za-z0-9_", "d": "0-9"}


def _ecma_pattern(pattern: str) -> str:
    out, i, in_class = [], 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt in _ASCII_CLASSES:
                out.append(_ASCII_CLASSES[nxt] if in_class else f"[{_ASCII_CLASSES[nxt]}]")
            elif nxt.lower() in _ASCII_CLASSES and not in_class:
                out.append(f"[^{_ASCII_CLASSES[nxt.lower()]}]")
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class:
            in_class = False
        elif ch == "." and not in_class:
            ch = "[^\\n\\r\u2028\u2029]"
        elif ch == "$" and not in_class:
            ch = "\\Z"
        out.append(ch)
        i += 1
    return "".join(out)


def check_schema(schema: Any, values: list[Any], counts: Counter, examples: list[str] | None = None) -> None:
    """Add the answers for ``values`` under ``schema`` to ``counts`` (see the module docstring);
    disagreements that are bugs go to ``examples``."""
    validator = reference_validator(schema)
    if validator is None:
        counts["schemas skipped (reference cannot use them)"] += 1
        return
    try:
        compiled = compile_schema(schema)
    except (UnsupportedError, BudgetExceededError):
        counts["schemas unsupported"] += 1
        return
    except GrammarError as err:  # the reference took it: worth a look, but no answer to compare
        counts["schemas leapgram calls malformed"] += 1
        if examples is not None:
            examples.append(json.dumps({"verdict": "malformed", "error": str(err)[:300], "schema": schema}))
        return
    except Exception as err:  # noqa: BLE001 -- a crash is a bug, counted with the others
        counts["crash"] += 1
        if examples is not None:
            examples.append(json.dumps({"verdict": "crash", "error": repr(err)[:300], "schema": schema}))
        return
    counts["schemas checked"] += 1
    variants: dict = {}
    for value in values:
        if not _is_json(value):  # hypothesis may draw inf or nan, which json.dumps writes but JSON has not
            counts["instances skipped (not JSON)"] += 1
            continue
        try:
            expected = validator.is_valid(value)
        except Exception:  # noqa: BLE001 -- the reference fails on this instance
            counts["instances skipped (reference failed)"] += 1
            continue
        got = accepts(compiled, value)
        counts["instances"] += 1
        counts["valid" if expected else "invalid"] += 1
        if got == expected:
            counts["agree"] += 1
            continue
        if got:
            verdict = "unchecked format" if _format_unchecked(schema, value, variants) else "loosened"
        else:
            verdict = "stricter:" + _stricter_reason(schema, value, compiled, variants)
        counts[verdict] += 1
        if examples is not None and verdict in ("loosened", "stricter:other"):
            examples.append(json.dumps({"verdict": verdict, "schema": schema, "instance": value}, ensure_ascii=False))


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except ValueError:
        return False
    return True


def _stricter_reason(schema: Any, value: Any, compiled: leapgram.CompiledGrammar | None, variants: dict) -> str:
    """The documented choice that rejects ``value`` (the format-free variant compiled once per
    schema)."""
    if (_accepts_in_any_order(schema, value, variants) or accepts(compiled, in_declared_order(schema, value))
            or accepts_some_order(compiled, value)):
        return "order"
    if any(isinstance(x, float) and "e" in repr(x) for x in _nodes(value)):
        return "exponent"
    as_ints = _integral_floats_as_ints(value)
    if json.dumps(as_ints) != json.dumps(value) and accepts_some_order(compiled, as_ints):
        return "integer"
    if isinstance(schema, dict) and "$schema" not in schema:
        if "dialect" not in variants:  # the reference reads it as 2020-12, leapgram with every draft's keywords
            variants["dialect"] = _try_compile({"$schema": "https://json-schema.org/draft/2020-12/schema", **schema})
        if accepts_some_order(variants["dialect"], as_ints):
            return "dialect"
    if "format" in json.dumps(schema):
        if "no_format" not in variants:
            variants["no_format"] = _try_compile(_without_formats(schema))
        if accepts_some_order(variants["no_format"], as_ints):
            return "format"
    return "other"


def _format_unchecked(schema: Any, value: Any, variants: dict) -> bool:
    """Whether leapgram accepts ``value`` only because it checks a format the reference does not
    (``hostname``, ``uri``, ``date-time``... need packages ``jsonschema`` leaves optional): the
    schema names such a format and, compiled without formats, rejects ``value`` (a string that
    leapgram finds malformed passes a ``not``)."""
    import jsonschema

    checked = jsonschema.validators.validator_for(schema).FORMAT_CHECKER.checkers
    names = {node["format"] for node in _nodes(schema) if isinstance(node, dict) and isinstance(node.get("format"), str)}
    if not names - set(checked):
        return False
    if "no_format" not in variants:
        variants["no_format"] = _try_compile(_without_formats(schema))
    return variants["no_format"] is not None and not accepts(variants["no_format"], value)


def _accepts_in_any_order(schema: Any, value: Any, variants: dict) -> bool:
    """Whether the schema compiled with ``any_order=True`` accepts ``value`` as written (tried
    before the member-order search, which backtracks exponentially on an object of 26 optional
    properties nested in another and ran out of budget before it found the declared order)."""
    if "any_order" not in variants:
        variants["any_order"] = _try_compile(schema, any_order=True)
    return accepts(variants["any_order"], value)


def in_declared_order(schema: Any, value: Any) -> Any:
    """``value`` with the members of each object in the order the schema declares their names
    (a name's first place in any ``properties``, in document order; undeclared names last, as
    written): the order leapgram's default grammar asks for, found without a search (the
    member-order search runs out of budget on objects of dozens of members)."""
    rank: dict[str, int] = {}
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if isinstance(node.get("properties"), dict):
                for name in node["properties"]:
                    rank.setdefault(name, len(rank))
            stack += reversed([v for k, v in node.items() if k not in ("enum", "const", "default", "examples")])
        elif isinstance(node, list):
            stack += reversed(node)
    last = len(rank)

    def reordered(item: Any) -> Any:
        if isinstance(item, dict):
            ordered = sorted(enumerate(item.items()), key=lambda pair: (rank.get(pair[1][0], last), pair[0]))
            return {key: reordered(member) for _, (key, member) in ordered}
        if isinstance(item, list):
            return [reordered(member) for member in item]
        return item

    return reordered(value)


def _try_compile(schema: Any, **options):
    try:
        return compile_schema(schema, **options)
    except (GrammarError, BudgetExceededError):  # UnsupportedError too (any_order past its bound)
        return None


class _Exhausted(Exception):
    pass


def accepts_some_order(compiled: leapgram.CompiledGrammar | None, value: Any, budget: int = 300_000) -> bool:
    """Whether ``value``, written as ``json.dumps`` writes it but with the members of each object
    in some order, is accepted: a depth-first search with the public matcher (consume, roll
    back), at most ``budget`` writes (past it the answer is no). Each object keeps the first
    order that writes it whole, so a ``True`` is always an accepted text; a ``False`` may miss
    one where two orders of one object lead to different continuations."""
    if compiled is None:
        return False
    matcher = leapgram.Matcher(compiled)
    left = [budget]
    try:
        return _write(matcher, value, matcher.is_accepting, left)
    except (_Exhausted, RecursionError):
        return False


def _emit(matcher: leapgram.Matcher, data: bytes, left: list[int]) -> int | None:
    left[0] -= 1
    if left[0] < 0:
        raise _Exhausted
    for n, byte in enumerate(data):
        if not matcher.consume_token(byte):
            matcher.rollback(n)
            return None
    return len(data)


def _write(matcher: leapgram.Matcher, value: Any, then, left: list[int]) -> bool:
    """Write ``value`` and call ``then``; on failure leave the matcher as it was."""
    if isinstance(value, dict) and value:
        # The first order that writes the whole object is kept (a cut: the declared order admits
        # one, and trying every order of every object before a later failure is exponential).
        start = matcher.num_tokens
        opened = _emit(matcher, b"{", left)
        closed = opened is not None and _members(matcher, list(value.items()), True,
                                                 lambda: _close(matcher, b"}", lambda: True, left), left)
        if closed and then():
            return True
        matcher.rollback(matcher.num_tokens - start)
        return False
    if isinstance(value, list) and value:
        opened = _emit(matcher, b"[", left)
        if opened is not None and _items(matcher, value, 0, lambda: _close(matcher, b"]", then, left), left):
            return True
        matcher.rollback(opened or 0)
        return False
    written = _emit(matcher, json.dumps(value, ensure_ascii=False).encode("utf-8"), left)
    if written is not None and then():
        return True
    matcher.rollback(written or 0)
    return False


def _members(matcher, items: list, first: bool, then, left: list[int]) -> bool:
    if not items:
        return then()
    for i, (key, item) in enumerate(items):
        head = (b"" if first else b", ") + json.dumps(key, ensure_ascii=False).encode("utf-8") + b": "
        written = _emit(matcher, head, left)
        if written is None:
            continue
        rest = items[:i] + items[i + 1:]
        if _write(matcher, item, lambda rest=rest: _members(matcher, rest, False, then, left), left):
            return True
        matcher.rollback(written)
    return False


def _items(matcher, items: list, i: int, then, left: list[int]) -> bool:
    if i == len(items):
        return then()
    written = _emit(matcher, b", " if i else b"", left)
    if written is None:
        return False
    if _write(matcher, items[i], lambda: _items(matcher, items, i + 1, then, left), left):
        return True
    matcher.rollback(written)
    return False


def _close(matcher, data: bytes, then, left: list[int]) -> bool:
    written = _emit(matcher, data, left)
    if written is not None and then():
        return True
    matcher.rollback(written or 0)
    return False


def _integral_floats_as_ints(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral_floats_as_ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral_floats_as_ints(v) for v in value]
    return value


def _without_formats(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_formats(v) for k, v in schema.items() if not (k == "format" and isinstance(v, str))}
    if isinstance(schema, list):
        return [_without_formats(v) for v in schema]
    return schema


def fuzz_schema(rng: random.Random, schema: Any, given: list[Any], draws: int, mutations: int,
                counts: Counter, examples: list[str] | None = None) -> None:
    """Draw instances for ``schema``, add ``mutations`` mutated copies of each drawn or given
    one, and check them all."""
    values = draw_instances(schema, draws) + list(given)
    mutated = [mutate_value(rng, v) for v in values for _ in range(mutations)]
    check_schema(schema, values + mutated, counts, examples)
