"""The public :class:`Grammar` handle: what the output must look like."""

from __future__ import annotations

import io
import json
import pickle
from typing import Any

from .errors import GrammarError
from .frontends.regex import regex_to_ir
from .grammar.ir import GrammarIR
from .limits import DEFAULT_LIMITS, Limits


class Grammar:
    """A constraint on the output, parsed and checked, not yet bound to a vocabulary.

    Build one with a ``from_*`` constructor; malformed input raises
    :class:`leapgram.GrammarError` (with line, column and a caret excerpt) and valid but
    unsupported input raises :class:`leapgram.UnsupportedError`.
    """

    def __init__(self, ir: GrammarIR, *, kind: str, source: str | bytes, options: tuple = (),
                 warnings: tuple[str, ...] = ()) -> None:
        self.ir = ir
        self.kind = kind
        self._source = source  # bytes: a JSON document's snapshot (_snapshot), written out on first use
        self.key = (kind, source, options)
        self.warnings = warnings

    @property
    def source(self) -> str:
        """The grammar's text (a JSON Schema as JSON text)."""
        source = self._source
        if isinstance(source, bytes):
            source = self._source = json.dumps(pickle.loads(source), ensure_ascii=False, default=str)
        return source

    @classmethod
    def from_regex(cls, pattern: str, *, ignore_case: bool = False, dotall: bool = False,
                   limits: Limits | None = None) -> Grammar:
        """The whole output must match ``pattern`` (Python ``re.fullmatch`` semantics over UTF-8)."""
        ir = regex_to_ir(pattern, ignore_case=ignore_case, dotall=dotall, limits=limits or DEFAULT_LIMITS)
        return cls(ir, kind="regex", source=pattern, options=(ignore_case, dotall))

    @classmethod
    def from_lark(cls, text: str, *, start: str = "start", limits: Limits | None = None) -> Grammar:
        """A context-free grammar in Lark syntax (rules, terminals, ``%ignore``, ``%import common``)."""
        from .frontends.lark import lark_to_ir

        warnings: list[str] = []
        ir = lark_to_ir(text, start=start, limits=limits or DEFAULT_LIMITS, warnings=warnings)
        return cls(ir, kind="lark", source=text, options=(start,), warnings=tuple(warnings))

    @classmethod
    def from_json_schema(cls, schema: Any, *, whitespace: str | int | tuple[str, str] = "flexible", lenient: bool = False,
                         any_order: bool | str = False, limits: Limits | None = None) -> Grammar:
        """JSON text valid under a JSON Schema (a dict, JSON text, or a Pydantic model class).

        ``whitespace``: ``"flexible"`` (default: up to 20 whitespace bytes around ``{}[],:``, or
        up to 100 that end in a newline and indentation, as ``json.dumps`` writes with or without
        ``indent``), ``"compact"`` (none), the longest
        run allowed, or one fixed single-line layout: a pair of separators as ``json.dumps`` takes
        them (``(", ", ": ")``, also spelled ``"dumps"``), which forces every separator. Properties
        come in the order the schema declares them, undeclared keys after them; ``any_order=True`` allows any order (exact for up to 10 properties, else
        tracking the required ones only; an object with more than 10 required properties, or more
        than 10 properties and a count bound, is refused), and ``any_order="auto"`` keeps such
        objects in declared order instead (listed in :attr:`warnings`). Every keyword is enforced
        exactly, refused with :class:`leapgram.UnsupportedError` naming it and its JSON pointer, or
        made stricter where docs/design/json-schema-reliability.md lists it (``unevaluated*``
        beside ``anyOf``, with a warning in :attr:`warnings`; numbers written without exponent
        under a nonzero bound, ``multipleOf``, or a ``not``/``const``/``enum`` value cut out);
        ``lenient=True`` skips refused keywords instead and lists them in :attr:`warnings`.
        """
        from .frontends.json_schema import json_schema_to_ir, schema_document

        if any_order not in (False, True, "auto"):
            raise ValueError(f"any_order must be False, True or 'auto', not {any_order!r}")
        document = schema_document(schema)
        if isinstance(whitespace, list):
            whitespace = tuple(whitespace)
        ir, warnings = json_schema_to_ir(document, whitespace=whitespace, lenient=lenient, any_order=any_order,
                                         limits=limits or DEFAULT_LIMITS)
        return cls(ir, kind="json_schema", source=_snapshot(document), options=(whitespace, lenient, any_order),
                   warnings=tuple(warnings))

    @classmethod
    def from_gbnf(cls, text: str, *, start: str = "root", limits: Limits | None = None) -> Grammar:
        """A context-free grammar in llama.cpp's GBNF syntax."""
        from .frontends.gbnf import gbnf_to_ir

        ir = gbnf_to_ir(text, start=start, limits=limits or DEFAULT_LIMITS)
        return cls(ir, kind="gbnf", source=text, options=(start,))

    @classmethod
    def from_structural_tag(cls, spec: Any, triggers: Any = None, *, whitespace: str | int | tuple[str, str] = "flexible",
                            any_order: bool | str = False, lenient: bool = False,
                            limits: Limits | None = None) -> Grammar:
        """Free text in which every tool call is exact: XGrammar's and vLLM's structural tag.

        ``spec``: JSON text or a dict, either ``{"type": "structural_tag", "format": {...}}``
        (format types ``triggered_tags``, ``tag``, ``json_schema``, ``const_string``,
        ``any_text``, ``sequence``, ``or``, ...) or the legacy ``{"structures": [{"begin",
        "schema", "end"}], "triggers": [...]}``; or a list of :class:`leapgram.Tag` with
        ``triggers`` (default: each tag's begin). Outside a tag any text is allowed that writes no
        trigger; a trigger starts one of its tags, which must then be completed exactly. A special
        token of the vocabulary whose text is a begin or end (``<tool_call>``) is allowed exactly
        there. ``whitespace``, ``any_order`` and ``lenient`` apply to the embedded JSON Schemas as
        in :meth:`from_json_schema`. Design: ``docs/design/structural-tags.md``.
        """
        from .frontends.structural_tag import structural_tag_to_ir

        if isinstance(whitespace, list):
            whitespace = tuple(whitespace)
        ir, warnings, root = structural_tag_to_ir(spec, triggers=triggers, whitespace=whitespace, any_order=any_order,
                                                  lenient=lenient, limits=limits or DEFAULT_LIMITS)
        return cls(ir, kind="structural_tag", source=repr(root), options=(whitespace, any_order, lenient),
                   warnings=tuple(warnings))

    def __repr__(self) -> str:
        text = self.source if len(self.source) <= 60 else self.source[:57] + "..."
        return f"Grammar.from_{self.kind}({text!r})"


def _snapshot(document: Any) -> str | bytes:
    """A JSON document as the key of its grammar (key order is part of the grammar): its pickle
    without the memo, so equal documents give equal bytes however their objects are shared
    (a seventh of ``json.dumps``' cost, which was 5% of a schema's time to first mask), or its
    JSON text where it does not pickle so."""
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.fast = True
    try:
        pickler.dump(document)
    except (pickle.PicklingError, TypeError, AttributeError, ValueError, RecursionError):
        try:
            return json.dumps(document, ensure_ascii=False, default=str)
        except (ValueError, RecursionError) as exc:  # a dict or list that holds itself, or nesting too deep
            raise GrammarError(f"the schema is not a JSON document: {exc}") from None
    return out.getvalue()
