"""Structural tags → grammar IR: free text in which tool calls are exact.

Parses what vLLM forwards and XGrammar documents (the legacy ``structures``/``triggers`` form and
the ``format`` tree) or a list of :class:`Tag`, and builds one grammar: free text as lexemes that
end where a trigger may start, tags as literal lexemes, JSON Schemas spliced in by the JSON Schema
front end. Design, inputs and limits: ``docs/design/structural-tags.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import GrammarError, UnsupportedError
from ..grammar.builder import GrammarBuilder
from ..grammar.ir import GrammarIR
from ..limits import Limits
from ..regex.expr import INF
from ..regex.syntax import parse_regex
from ..regex.utf8 import negate, normalize, ranges_to_expr
from .syntax_tree import Alternatives, Literal, Repeat


@dataclass(frozen=True)
class Tag:
    """A tool call ``begin``, content, ``end``: the content is JSON valid under ``schema`` (a
    dict, JSON text or Pydantic model class), or another structural-tag ``format`` (a dict)."""

    begin: str
    schema: Any = True
    end: str | Sequence[str] = ""
    format: dict | None = field(default=None, compare=False)


# ----- the format tree: these, and syntax_tree's Literal, Alternatives (a sequence: one option), Repeat


@dataclass(frozen=True)
class Json:
    schema: Any
    whitespace: Any = None
    any_order: bool = False


@dataclass(frozen=True)
class Regex:
    pattern: str


@dataclass(frozen=True)
class TagNode:
    begin: str
    content: Any
    ends: tuple[str, ...]


@dataclass(frozen=True)
class AnyText:
    excludes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Triggered:
    triggers: tuple[str, ...]
    tags: tuple[TagNode, ...]
    at_least_one: bool = False
    stop_after_first: bool = False
    excludes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Separated:
    tags: tuple[TagNode, ...]
    separator: str
    at_least_one: bool = False
    stop_after_first: bool = False


_REPEATS = {"optional": (0, 1), "star": (0, INF), "plus": (1, INF)}


def parse_structural_tag(spec: Any, triggers: Sequence[str] | None = None) -> Any:
    """The format tree of ``spec``: JSON text, a dict (legacy or ``format`` form), or a list of
    :class:`Tag` (with ``triggers``; default: each tag's begin)."""
    if isinstance(spec, (str, bytes)):
        try:
            spec = json.loads(spec)
        except json.JSONDecodeError as err:
            text = spec.decode("utf-8", "replace") if isinstance(spec, bytes) else spec
            raise GrammarError(f"structural tag is not valid JSON: {err.msg}", source=text, offset=err.pos) from None
        if not isinstance(spec, dict):  # a list of tags is Python's form only: JSON text is an object
            raise GrammarError(f"a structural tag in JSON is an object, not {type(spec).__name__}", pointer="")
    if isinstance(spec, (list, tuple)):
        tags = tuple(_python_tag(tag, f"/{i}") for i, tag in enumerate(spec))
        found = tuple(triggers) if triggers is not None else tuple(dict.fromkeys(t.begin for t in tags))
        return Triggered(found, tags)
    if not isinstance(spec, dict):
        raise TypeError(f"a structural tag is JSON text, a dict or a list of leapgram.Tag, not {type(spec).__name__}")
    if spec.get("type", "structural_tag") != "structural_tag":
        return parse_format(spec, "")
    if "format" in spec:
        return parse_format(spec["format"], "/format")
    if "structures" not in spec:
        raise GrammarError("a structural tag needs 'format' or 'structures' and 'triggers'", pointer="")
    tags = tuple(_legacy_tag(s, f"/structures/{i}") for i, s in enumerate(_list(spec, "structures", "")))
    found = triggers if triggers is not None else spec.get("triggers")
    if found is None:
        raise GrammarError("the legacy structural tag needs 'triggers'", pointer="")
    return Triggered(tuple(_strings(found, "/triggers")), tags)


def _python_tag(tag: Any, pointer: str) -> TagNode:
    if not isinstance(tag, Tag):
        raise TypeError(f"expected a leapgram.Tag at {pointer}, not {type(tag).__name__}")
    content = parse_format(tag.format, pointer + "/format") if tag.format is not None else Json(tag.schema)
    return TagNode(tag.begin, content, _ends(tag.end, pointer))


def _legacy_tag(item: Any, pointer: str) -> TagNode:
    if not isinstance(item, dict):
        raise GrammarError("a structure is an object with begin, schema and end", pointer=pointer)
    begin, end = _string(item, "begin", pointer), _string(item, "end", pointer)
    return TagNode(begin, Json(item.get("schema", True)), (end,))


def parse_format(node: Any, pointer: str) -> Any:
    """One format object of XGrammar's structural tag, as a node of the format tree."""
    if not isinstance(node, dict) or not isinstance(node.get("type"), str):
        raise GrammarError("a format is an object with a 'type'", pointer=pointer)
    kind = node["type"]
    parse = _PARSERS.get(kind)
    if parse is None:
        raise UnsupportedError(f"format {kind}", f"the structural tag format {kind!r} is not supported; use "
                               f"one of {', '.join(sorted(_PARSERS))}", pointer=pointer)
    return parse(node, pointer)


def _parse_json(node: dict, pointer: str) -> Json:
    if node.get("style", "json") != "json":
        raise UnsupportedError("json_schema style", f"only style 'json' is supported, not {node['style']!r}",
                               pointer=pointer + "/style")
    if node.get("excludes"):
        raise UnsupportedError("json_schema excludes", "excluded substrings in JSON strings are not supported; "
                               "use a pattern in the schema", pointer=pointer + "/excludes")
    if "json_schema" not in node:
        raise GrammarError("json_schema format needs 'json_schema'", pointer=pointer)
    ws = node.get("max_whitespace_cnt")
    return Json(node["json_schema"], ws if ws is not None else None, bool(node.get("any_order", False)))


def _parse_any_text(node: dict, pointer: str) -> AnyText:
    for key in ("max_tokens", "max_chars"):
        if node.get(key) is not None:
            raise UnsupportedError(f"any_text {key}", f"{key} is not supported; drop it or bound the text "
                                   "with a regex", pointer=f"{pointer}/{key}")
    return AnyText(tuple(_strings(node.get("excludes", []), pointer + "/excludes")))


def _parse_items(node: dict, pointer: str) -> tuple:
    return tuple(parse_format(item, f"{pointer}/elements/{i}") for i, item in enumerate(_list(node, "elements", pointer)))


def _parse_repeat(node: dict, pointer: str) -> Repeat:
    content = parse_format(node.get("content"), pointer + "/content")
    if node["type"] in _REPEATS:
        return Repeat(content, *_REPEATS[node["type"]])
    low, high = node.get("min"), node.get("max")
    if not isinstance(low, int) or not isinstance(high, int) or low < 0 or (high != -1 and high < low):
        raise GrammarError("repeat needs integers 0 <= min <= max (max -1: unbounded)", pointer=pointer)
    return Repeat(content, low, INF if high == -1 else high)


def parse_tag(node: Any, pointer: str) -> TagNode:
    if not isinstance(node, dict) or node.get("type", "tag") != "tag":
        raise GrammarError("expected a tag format (begin, content, end)", pointer=pointer)
    begin = _token_text(node.get("begin"), pointer + "/begin")
    content = parse_format(node.get("content"), pointer + "/content")
    return TagNode(begin, content, _ends(node.get("end"), pointer + "/end"))


def _parse_triggered(node: dict, pointer: str) -> Triggered:
    tags = tuple(parse_tag(t, f"{pointer}/tags/{i}") for i, t in enumerate(_list(node, "tags", pointer)))
    return Triggered(tuple(_strings(node.get("triggers"), pointer + "/triggers")), tags,
                     bool(node.get("at_least_one", False)), bool(node.get("stop_after_first", False)),
                     tuple(_strings(node.get("excludes", []), pointer + "/excludes")))


def _parse_separated(node: dict, pointer: str) -> Separated:
    tags = tuple(parse_tag(t, f"{pointer}/tags/{i}") for i, t in enumerate(_list(node, "tags", pointer)))
    return Separated(tags, _string(node, "separator", pointer), bool(node.get("at_least_one", False)),
                     bool(node.get("stop_after_first", False)))


_PARSERS = {
    "const_string": lambda n, p: Literal(_string(n, "value", p), 0),
    "json_schema": _parse_json,
    "regex": lambda n, p: Regex(_string(n, "pattern", p)),
    "any_text": _parse_any_text,
    "sequence": lambda n, p: Alternatives((_parse_items(n, p),), 0),
    "or": lambda n, p: Alternatives(tuple((item,) for item in _parse_items(n, p)), 0),
    "optional": _parse_repeat, "star": _parse_repeat, "plus": _parse_repeat, "repeat": _parse_repeat,
    "tag": parse_tag,
    "token": lambda n, p: Literal(_token_text(n, p), 0),
    "triggered_tags": _parse_triggered,
    "tags_with_separator": _parse_separated,
}


def _token_text(value: Any, pointer: str) -> str:
    """A begin or end: a string, or a ``token`` format naming the token by its text."""
    if isinstance(value, dict) and value.get("type") == "token":
        value = value.get("token")
        if not isinstance(value, str):
            raise UnsupportedError("token id", "name the token by its text, not its id", pointer=pointer)
    if not isinstance(value, str):
        raise GrammarError("expected a string", pointer=pointer)
    return value


def _ends(value: Any, pointer: str) -> tuple[str, ...]:
    if isinstance(value, (list, tuple)):
        if not value:
            raise GrammarError("a tag needs at least one end string", pointer=pointer)
        return tuple(_token_text(v, f"{pointer}/{i}") for i, v in enumerate(value))
    return (_token_text(value, pointer),)


def _string(node: dict, key: str, pointer: str) -> str:
    value = node.get(key)
    if not isinstance(value, str):
        raise GrammarError(f"'{key}' must be a string", pointer=f"{pointer}/{key}")
    return value


def _list(node: dict, key: str, pointer: str) -> list:
    value = node.get(key)
    if not isinstance(value, list):
        raise GrammarError(f"'{key}' must be a list", pointer=f"{pointer}/{key}")
    return value


def _strings(value: Any, pointer: str) -> list[str]:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v for v in value):
        raise GrammarError("expected a list of non-empty strings", pointer=pointer)
    return list(value)


# ----- grammar ------------------------------------------------------------------------------

_TOKEN_LIKE = re.compile(r"<\|[^|\n]{1,64}\|>|<｜[^｜\n]{1,64}｜>|</?[A-Za-z_][^<>\s]{0,62}>|\[[A-Z_]{2,32}\]")
"""Pieces of a begin or end that a vocabulary may hold as one special token (``<tool_call>``,
``<|python_tag|>``, ``[TOOL_CALLS]``): each becomes its own literal lexeme."""


class _TagCompiler:
    """Format tree → :class:`GrammarBuilder` calls. ``follow`` is what may come right after a
    node: the strings that end free text there (``None``: the end of the output)."""

    def __init__(self, limits: Limits, whitespace: Any, any_order: bool | str, lenient: bool) -> None:
        from .json_schema.common import schema_pool  # the JSON base pool: string lexemes' derivatives taken

        self.b = GrammarBuilder(limits, pool=schema_pool(limits, formats=True))  # its schemas may use formats
        self.pool = self.b.pool
        self.whitespace = whitespace
        self.any_order = any_order
        self.lenient = lenient
        self.warnings: list[str] = []
        self._texts: dict[tuple[str, ...], int] = {}

    def build(self, root: Any) -> GrammarIR:
        start = self.b.nonterminal("start")
        self.b.rule(start, self.symbols(root, ()))
        return self.b.build(start)

    def symbols(self, node: Any, follow: tuple[str, ...] | None) -> list[int]:
        """The symbols of ``node`` when the strings in ``follow`` may come after it (``()``: the
        end of the output; ``None``: something that is not a literal)."""
        if isinstance(node, Literal):
            return self.literal(node.text)
        if isinstance(node, Json):
            return [self.json(node)]
        if isinstance(node, Regex):
            return [self.b.lexeme(f"/{node.pattern}/", parse_regex(node.pattern, self.pool))]
        if isinstance(node, AnyText):
            return [self.text(follow, node.excludes)]
        if isinstance(node, Alternatives):
            options = [self.sequence(option, follow) for option in node.options]
            return options[0] if len(options) == 1 else [self.b.choice(options, hint="or")]
        if isinstance(node, Repeat):
            starts = _starts(node.item)
            again = None if starts is None or follow is None else tuple(dict.fromkeys(starts + follow))
            return [self.b.repeat(self.symbols(node.item, again), node.low, node.high, hint="rep")]
        if isinstance(node, TagNode):
            return self.tag(node)
        if isinstance(node, Triggered):
            return [self.triggered(node, follow)]
        return [self.separated(node, follow)]

    def sequence(self, items: tuple, follow: tuple[str, ...] | None) -> list[int]:
        return [symbol for i, item in enumerate(items) for symbol in self.symbols(item, _follow(items[i + 1:], follow))]

    def literal(self, text: str) -> list[int]:
        """``text`` as literal lexemes, each token-like piece (``<tool_call>``) its own."""
        out, at = [], 0
        for match in _TOKEN_LIKE.finditer(text):
            if match.start() > at:
                out.append(self.b.literal(text[at:match.start()]))
            out.append(self.b.literal(match.group()))
            at = match.end()
        if at < len(text):
            out.append(self.b.literal(text[at:]))
        return out

    def json(self, node: Json) -> int:
        from .json_schema import json_schema_symbol, schema_document

        whitespace = self.whitespace if node.whitespace is None else node.whitespace
        any_order = "auto" if node.any_order else self.any_order
        symbol, warnings = json_schema_symbol(schema_document(node.schema), self.b, whitespace=whitespace,
                                              lenient=self.lenient, any_order=any_order)
        self.warnings += warnings
        return symbol

    def tag(self, node: TagNode, skip: str = "") -> list[int]:
        """``begin content end`` (``skip``: the part of begin already written, a trigger)."""
        head = self.literal(node.begin[len(skip):])
        body = self.symbols(node.content, node.ends)
        ends = [self.literal(end) for end in node.ends]
        tail = ends[0] if len(ends) == 1 else [self.b.choice(ends, hint="end")]
        return head + body + tail

    def triggered(self, node: Triggered, follow: tuple[str, ...] | None) -> int:
        """Free text with tags, each started by its trigger."""
        calls = self.b.choice(self.tag_calls(node), hint="call")
        text = self.text(None if follow is None else node.triggers + follow, node.excludes)
        if node.stop_after_first:
            return self.b.choice([[text, calls]] if node.at_least_one else [[text], [text, calls]], hint="tags")
        loop = self.b.star([calls, text], hint="calls")
        if node.at_least_one:
            return self.b.sequence([text, calls, text, loop], hint="tags")
        return self.b.sequence([text, loop], hint="tags")

    def tag_calls(self, node: Triggered) -> list[list[int]]:
        out = []
        for i, tag in enumerate(node.tags):
            starts = [t for t in node.triggers if tag.begin.startswith(t)]
            if not starts:
                raise GrammarError(f"tag {tag.begin!r} starts with none of the triggers {list(node.triggers)}",
                                   pointer=f"/tags/{i}")
            trigger = max(starts, key=len)
            out.append([self.b.literal(trigger), *self.tag(tag, skip=trigger)])
        return out

    def separated(self, node: Separated, follow: tuple[str, ...] | None) -> int:
        one = self.b.choice([self.tag(tag) for tag in node.tags], hint="tag")
        if node.stop_after_first:
            return one if node.at_least_one else self.b.optional([one], hint="tags")
        more = self.b.star([*self.literal(node.separator), one], hint="tags")
        some = self.b.sequence([one, more], hint="tags")
        return some if node.at_least_one else self.b.optional([some], hint="tags")

    def text(self, stops: tuple[str, ...] | None, excludes: tuple[str, ...]) -> int:
        """Free text containing none of ``stops`` and ``excludes``, lexed so that a stop string
        written next starts its own lexeme (``stops`` ``None``: what follows is not a literal)."""
        if stops is None:
            raise UnsupportedError("free text before a non-literal", "free text (any_text, triggered_tags) must "
                                   "be followed by a literal string, a tag or the end of the output")
        stops = tuple(dict.fromkeys(stops + excludes))
        found = self._texts.get(stops)
        if found is None:
            found = self._texts[stops] = self._new_text(stops)
        return found

    def _new_text(self, stops: tuple[str, ...]) -> int:
        firsts = sorted({s[0] for s in stops})
        for stop in stops:
            inner = [c for c in stop[1:] if c in firsts]
            if inner:
                raise UnsupportedError("overlapping stop strings", f"{stop!r} contains {inner[0]!r}, the first "
                                       "character of a trigger, end or excluded string, after its start; free "
                                       "text around it cannot be lexed in one pass")
        pool, b = self.pool, self.b
        other = ranges_to_expr(pool, negate(normalize([(ord(c), ord(c)) for c in firsts])))
        chunk = b.lexeme("TEXT", pool.repeat(other, 1, INF))
        pieces = []
        for first in firsts:
            starts = [pool.concat(pool.literal(s.encode("utf-8")), pool.universal()) for s in stops if s[0] == first]
            piece = pool.difference(pool.concat(pool.literal(first.encode("utf-8")), pool.repeat(other, 0, INF)),
                                    pool.alt(starts))
            if not pool.is_empty(piece):
                pieces.append([b.lexeme(f"TEXT{first!r}", piece)])
        if not pieces:
            return b.optional([chunk], hint="text")
        rest = b.star([b.choice(pieces, hint="piece")], hint="pieces")
        return b.sequence([b.optional([chunk], hint="chunk"), rest], hint="text")


def _follow(rest: tuple, follow: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The strings that may come after a node followed by ``rest`` and then ``follow``."""
    starts = _sequence_starts(rest)
    if starts is None:
        return None
    if not all(_nullable(item) for item in rest):
        return tuple(dict.fromkeys(starts))
    return None if follow is None else tuple(dict.fromkeys(starts + follow))


def _sequence_starts(items: tuple) -> tuple[str, ...] | None:
    """The literal strings a sequence of nodes may start with (``None``: not only literals)."""
    out: tuple[str, ...] = ()
    for item in items:
        found = _starts(item)
        if found is None:
            return None
        out += found
        if not _nullable(item):
            break
    return out


def _starts(node: Any) -> tuple[str, ...] | None:
    """The literal strings ``node`` may start with (``None``: not only literals)."""
    if isinstance(node, Literal):
        return (node.text,) if node.text else ()
    if isinstance(node, TagNode):
        return (node.begin,)
    if isinstance(node, Alternatives):
        found = [_sequence_starts(option) for option in node.options]
        return None if None in found else tuple(s for f in found for s in f)
    if isinstance(node, Repeat):
        return _starts(node.item)
    if isinstance(node, Separated):
        return tuple(tag.begin for tag in node.tags)
    return None


def _nullable(node: Any) -> bool:
    if isinstance(node, Literal):
        return not node.text
    if isinstance(node, Repeat):
        return node.low == 0 or _nullable(node.item)
    if isinstance(node, Alternatives):
        return any(all(_nullable(item) for item in option) for option in node.options)
    if isinstance(node, Separated):
        return not node.at_least_one
    return isinstance(node, (AnyText, Triggered))


def structural_tag_to_ir(spec: Any, *, triggers: Sequence[str] | None = None, whitespace: Any = "flexible",
                         any_order: bool | str = False, lenient: bool = False,
                         limits: Limits) -> tuple[GrammarIR, list[str], Any]:
    """The grammar of ``spec`` (``docs/design/structural-tags.md``), its warnings and its format tree."""
    root = parse_structural_tag(spec, triggers)
    compiler = _TagCompiler(limits, whitespace, any_order, lenient)
    return compiler.build(root), compiler.warnings, root
