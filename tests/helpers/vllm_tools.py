"""Two tools for the vLLM structural-tag tests: their schemas, a system prompt that offers them to
the embedded SmolLM2 (its chat template has no tools section), the structural tag that makes
every call exact (XGrammar's ``triggered_tags`` format and vLLM's legacy form), and a checker
that parses and validates every completed call of an output."""

from __future__ import annotations

import json
import re
from typing import Any

TOOLS: dict[str, dict] = {
    "get_weather": {
        "type": "object",
        "properties": {"city": {"type": "string", "minLength": 1, "maxLength": 20},
                       "unit": {"enum": ["celsius", "fahrenheit"]}},
        "required": ["city", "unit"],
        "additionalProperties": False,
    },
    "get_time": {
        "type": "object",
        "properties": {"timezone": {"type": "string", "minLength": 1, "maxLength": 30}},
        "required": ["timezone"],
        "additionalProperties": False,
    },
}
TRIGGER = "<tool_call>"
SYSTEM = (
    "You are a helpful assistant with two tools. To call a tool, write\n"
    '<tool_call>\n{"name": TOOL, "arguments": ARGUMENTS}\n</tool_call>\n'
    "Tools:\n" + "\n".join(f"- {name}: arguments {json.dumps(schema)}" for name, schema in TOOLS.items())
    + "\nExample:\n<tool_call>\n"
    + '{"name": "get_weather", "arguments": {"city": "Oslo", "unit": "celsius"}}\n</tool_call>'
)
QUESTIONS = ["What is the weather in Paris?", "What time is it in Tokyo?",
             "Is it warm in Rome, and what time is it there?", "Tell me the weather in Lima in fahrenheit."]
_CALL = re.compile(r"<tool_call>\n(.*?)\n</tool_call>", re.DOTALL)


def _begin(name: str) -> str:
    return f'{TRIGGER}\n{{"name": "{name}", "arguments": '


_END = "}\n</tool_call>"


def structural_tag(*, required: bool = False) -> dict[str, Any]:
    """XGrammar's newest form (``{"type": "structural_tag", "format": {...}}``): free text with
    exact calls (``triggered_tags``) or, ``required``, calls only, at least one
    (``tags_with_separator``, what a ``tool_choice="required"`` request asks for)."""
    tags = [{"type": "tag", "begin": _begin(name), "content": {"type": "json_schema", "json_schema": schema},
             "end": _END} for name, schema in TOOLS.items()]
    if required:
        return {"type": "structural_tag",
                "format": {"type": "tags_with_separator", "tags": tags, "separator": "\n", "at_least_one": True}}
    return {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": [TRIGGER], "tags": tags}}


def legacy_structural_tag() -> dict[str, Any]:
    """vLLM's legacy form (``structures`` and ``triggers``)."""
    return {"type": "structural_tag", "triggers": [TRIGGER],
            "structures": [{"begin": _begin(name), "schema": schema, "end": _END} for name, schema in TOOLS.items()]}


def messages(question: str) -> list[dict[str, str]]:
    """The system prompt, one worked exchange (the small model copies its call), the question."""
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "What is the weather in Oslo?"},
            {"role": "assistant", "content": '<tool_call>\n{"name": "get_weather", "arguments": '
                                             '{"city": "Oslo", "unit": "celsius"}}\n</tool_call>'},
            {"role": "user", "content": question}]


def completed_calls(text: str) -> list[tuple[str, dict]]:
    """Every completed call of ``text``, parsed and validated against its tool's schema (an
    unfinished call at the end, cut by ``max_tokens``, is not completed). Raises on any
    call that does not parse or validate."""
    import jsonschema

    calls = []
    for body in _CALL.findall(text):
        call = json.loads(body)
        assert set(call) == {"name", "arguments"} and call["name"] in TOOLS, body
        jsonschema.validate(call["arguments"], TOOLS[call["name"]])
        calls.append((call["name"], call["arguments"]))
    assert text.count(TRIGGER) in (len(calls), len(calls) + 1), text  # at most the last one unfinished
    return calls
