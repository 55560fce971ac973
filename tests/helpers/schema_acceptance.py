"""Helpers shared by the JSON Schema structure tests: byte-level acceptance and JSON layouts."""

from __future__ import annotations

import json

import leapgram


def accepts(compiled: leapgram.CompiledGrammar, text: str) -> bool:
    """Whether the grammar accepts all of ``text`` and may end there."""
    engine = compiled._engine
    state = engine.advance(engine.initial, text.encode("utf-8"))
    return state is not None and engine.is_accepting(state)


def texts(value) -> list[str]:
    """The instance as json.dumps writes it, compact, and indented."""
    return list(dict.fromkeys([json.dumps(value, ensure_ascii=False), json.dumps(value, separators=(",", ":")),
                               json.dumps(value, indent=2, ensure_ascii=False)]))
