"""Lark grammar text → grammar IR.

Lark 1.x syntax with templates, ``%ignore``, ``%import common``, ``%declare``/``%override``/
``%extend`` and llguidance's ``%json {schema}``. Terminals become regex lexemes; rules go to the
Earley parser. leapgram's lexer is greedy over the lexemes the parser allows, so keywords are not
reserved and priorities do not apply. Syntax and differences from Lark: docs/design/lark.md.
Malformed grammars raise :class:`GrammarError` with line, column and a caret excerpt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from ..errors import GrammarError, UnsupportedError
from ..grammar.builder import GrammarBuilder
from ..grammar.ir import GrammarIR
from ..limits import DEFAULT_LIMITS, Limits
from ..regex.expr import EMPTY, INF
from ..regex.syntax import parse_regex
from ..regex.utf8 import ranges_to_expr
from .lark_common import COMMON_TERMINALS, cfg_pool, share_pool
from .syntax_tree import Alternatives, Escapes, Literal, Ref, Repeat, scan_string

MAX_TEMPLATE_INSTANCES = 1_000
"""Distinct template instantiations allowed in one grammar."""
MAX_TEMPLATE_NESTING = 32
"""Depth of templates in template arguments (a guard against ``t{x}: t{u{x}}``)."""


# ----- syntax tree --------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    """``/body/flags``; ``body_offset`` is where the body starts in the grammar text."""

    body: str
    flags: str
    offset: int
    body_offset: int


@dataclass(frozen=True)
class CharRange:
    """``"a".."z"``."""

    low: str
    high: str
    offset: int


@dataclass(frozen=True)
class JsonSchema:
    """``%json { ... }``: the JSON texts valid under a schema. ``text`` is the schema's JSON as
    written (its ``x-leapgram`` or ``x-guidance`` object holds the options), ``offset`` where
    ``%json`` starts; the schema is parsed and compiled once per distinct text."""

    text: str
    offset: int


@dataclass(frozen=True)
class TemplateUse:
    """``name{arg, ...}``."""

    name: str
    args: tuple[Node, ...]
    offset: int


Node = Ref | Literal | Pattern | CharRange | Alternatives | Repeat | TemplateUse | JsonSchema


@dataclass
class Definition:
    """A rule or terminal: ``body`` is ``None`` for a declared terminal; ``common`` holds the
    regex of an imported ``common`` terminal."""

    name: str
    offset: int
    params: tuple[str, ...] = ()
    body: Alternatives | None = None
    common: str | None = None


@dataclass(frozen=True)
class Import:
    """``%import module.NAME [-> ALIAS]`` or ``%import module (A, B)``."""

    module: tuple[str, ...]
    relative: bool
    names: tuple[tuple[str, str, int], ...]
    offset: int


def is_terminal_name(name: str) -> bool:
    """Whether ``name`` names a terminal (uppercase) rather than a rule (lowercase)."""
    return name.lstrip("_")[:1].isupper()


def walk(node: Node) -> Iterator[Node]:
    """``node`` and every node inside it, parents first."""
    yield node
    if isinstance(node, Alternatives):
        for option in node.options:
            for item in option:
                yield from walk(item)
    elif isinstance(node, Repeat):
        yield from walk(node.item)
    elif isinstance(node, TemplateUse):
        for arg in node.args:
            yield from walk(arg)


def render(node: Node) -> str:
    """The node written back in Lark syntax (names of anonymous lexemes and template instances)."""
    if isinstance(node, Literal):
        return _quote(node.text) + ("i" if node.ignore_case else "")
    if isinstance(node, Pattern):
        return f"/{node.body}/{node.flags}"
    if isinstance(node, CharRange):
        return f"{_quote(node.low)}..{_quote(node.high)}"
    if isinstance(node, TemplateUse):
        return node.name + "{" + ", ".join(render(arg) for arg in node.args) + "}"
    if isinstance(node, JsonSchema):
        return f"%json {node.text}"
    if isinstance(node, Ref):
        return node.name
    return "(...)"


def _nesting(node: Node) -> int:
    if not isinstance(node, TemplateUse):
        return 0
    return 1 + max(_nesting(arg) for arg in node.args)


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


# ----- scanner ------------------------------------------------------------------------------


class Token(NamedTuple):
    """One token of grammar text; ``value`` holds a string's ``(text, ignore_case)``, a regex's
    ``(body, flags)``, a number's int or a directive's name."""

    kind: str
    text: str
    offset: int
    value: object = None


_BLANK = re.compile(r"(?:[ \t\r\f]+|\\[ \t\r]*\n|(?://|#)[^\n]*)*")
_GAP = re.compile(r"(?:\s+|\\[ \t\r]*\n|(?://|#)[^\n]*)*")
_NAME = re.compile(r"[_A-Za-z][_A-Za-z0-9]*")
_NUMBER = re.compile(r"[+-]?[0-9]+")
_REGEX_FLAGS = re.compile(r"[imslux]*")
_PUNCT = set(":()[]{},?*+~!")
_ESCAPES = Escapes({"\\": "\\", '"': '"', "n": "\n", "t": "\t", "r": "\r", "f": "\f"})  # others stay as written


class _Scanner:
    """Grammar text → tokens. A newline ends a statement (``NL``) unless the next line starts
    with ``|``; blank lines and comments produce nothing."""

    def __init__(self, text: str) -> None:
        self.src = text
        self.pos = 0
        self.last = "NL"

    def fail(self, message: str, offset: int) -> GrammarError:
        return GrammarError(message, source=self.src, offset=offset)

    def next_token(self) -> Token:
        """The next token (``EOF`` at the end, again and again)."""
        token = None
        while token is None:
            self.pos = _BLANK.match(self.src, self.pos).end()
            if self.pos >= len(self.src):
                return Token("EOF", "", len(self.src))
            token = self.scan_newline() if self.src[self.pos] == "\n" else self.scan_token()
        self.last = token.kind
        return token

    def scan_newline(self) -> Token | None:
        at = self.pos
        self.pos = _GAP.match(self.src, self.pos).end()
        if self.src.startswith("|", self.pos) or self.last == "NL":
            return None
        return Token("NL", "\n", at)

    def scan_token(self) -> Token:
        src, at = self.src, self.pos
        ch = src[at]
        if ch == '"':
            return self.scan_string()
        if ch == "/":
            return self.scan_regex()
        for text, kind in (("->", "ARROW"), ("..", "DOTDOT"), (".", "DOT"), ("|", "VBAR")):
            if src.startswith(text, at):
                self.pos += len(text)
                return Token(kind, text, at)
        return self.scan_word(ch, at)

    def scan_word(self, ch: str, at: int) -> Token:
        if ch == "%":
            match = _NAME.match(self.src, at + 1)
            if match is None:
                raise self.fail("expected a directive name after '%'", at)
            self.pos = match.end()
            return Token("DIRECTIVE", match.group(), at, match.group())
        for pattern, kind in ((_NUMBER, "NUMBER"), (_NAME, "NAME")):
            match = pattern.match(self.src, at)
            if match:
                self.pos = match.end()
                return Token(kind, match.group(), at, int(match.group()) if kind == "NUMBER" else None)
        if ch in _PUNCT:
            self.pos += 1
            return Token(ch, ch, at)
        raise self.fail(f"unexpected character {ch!r}", at)

    def scan_string(self) -> Token:
        at = self.pos
        text, i = scan_string(self.src, at, _ESCAPES, self.fail)
        ignore_case = self.src.startswith("i", i + 1)
        self.pos = i + 1 + ignore_case
        return Token("STRING", self.src[at:self.pos], at, (text, ignore_case))

    def scan_regex(self) -> Token:
        at = self.pos
        i = at + 1
        while i >= len(self.src) or self.src[i] != "/":
            if i >= len(self.src) or self.src[i] == "\n":
                raise self.fail("unterminated regex literal", at)
            i += 2 if self.src[i] == "\\" and self.src[i + 1 : i + 2] in ("/", "\\") else 1
        flags = _REGEX_FLAGS.match(self.src, i + 1).group()
        self.pos = i + 1 + len(flags)
        return Token("REGEXP", self.src[at:self.pos], at, (self.src[at + 1 : i], flags))


# ----- parser -------------------------------------------------------------------------------

_SEQUENCE_END = {"VBAR", "NL", "EOF", ")", "]", "}", ",", "ARROW"}
_OPERATORS = {"?": (0, 1), "*": (0, INF), "+": (1, INF)}
_CLOSER = {"(": ")", "[": "]"}
MAX_GROUP_DEPTH = 100


def _describe(token: Token) -> str:
    return {"NL": "end of line", "EOF": "end of grammar"}.get(token.kind, repr(token.text))


class _Parser:
    """Tokens → statements: ``(kind, payload)`` with kind ``define``, ``override``, ``extend``
    (a :class:`Definition`), ``import`` (an :class:`Import`), ``declare`` (a :class:`Definition`)
    or ``ignore`` (an :class:`Alternatives`)."""

    def __init__(self, text: str, limits: Limits) -> None:
        self.src = text
        self.limits = limits
        self.scanner = _Scanner(text)
        self.tokens: list[Token] = []
        self.index = 0
        self.statements: list[tuple[str, object]] = []
        self.aliases: list[Token] = []
        self.depth = 0

    def fail(self, message: str, offset: int) -> GrammarError:
        return GrammarError(message, source=self.src, offset=offset)

    def peek(self) -> Token:
        while len(self.tokens) <= self.index:
            self.tokens.append(self.scanner.next_token())
        return self.tokens[self.index]

    def take(self) -> Token:
        token = self.peek()
        self.index += 1
        return token

    def expect(self, kind: str, what: str) -> Token:
        token = self.peek()
        if token.kind != kind:
            raise self.fail(f"expected {what}, found {_describe(token)}", token.offset)
        return self.take()

    def name(self, what: str) -> Token:
        token = self.expect("NAME", what)
        core = token.text.lstrip("_")
        if not core or not (core.isupper() or core.islower()) or core[0].isdigit():
            raise self.fail(f"bad name {token.text!r}: rules are lowercase, terminals uppercase", token.offset)
        return token

    # ----- statements -------------------------------------------------------------------

    def parse(self) -> list[tuple[str, object]]:
        while self.peek().kind != "EOF":
            self.parse_statement()
            token = self.peek()
            if token.kind not in ("NL", "EOF"):
                raise self.fail(f"expected '|' or the end of the line, found {_describe(token)}", token.offset)
            if token.kind == "NL":
                self.take()
        return self.statements

    def parse_statement(self) -> None:
        token = self.peek()
        if token.kind != "DIRECTIVE":
            self.statements.append(("define", self.parse_definition()))
            return
        self.take()
        directive = token.value
        if directive == "ignore":
            self.statements.append(("ignore", self.parse_ignore(token)))
        elif directive == "import":
            self.statements.append(("import", self.parse_import(token)))
        elif directive == "declare":
            self.parse_declare(token)
        elif directive in ("override", "extend"):
            self.statements.append((directive, self.parse_definition()))
        else:
            raise self.fail(f"unknown directive %{directive}", token.offset)

    def parse_ignore(self, directive: Token) -> Alternatives:
        seen = len(self.aliases)
        body = self.parse_alternatives(None)
        if len(self.aliases) > seen:
            raise self.fail("%ignore can't have aliases", self.aliases[seen].offset)
        if body.options == ((),):
            raise self.fail("%ignore needs a terminal, string or regex", directive.offset)
        return body

    def parse_definition(self) -> Definition:
        markers = []
        while self.peek().kind in ("?", "!"):
            markers.append(self.take())
        if self.peek().kind != "NAME":
            found = _describe(self.peek())
            raise self.fail(f"expected a rule or terminal definition (name: ...) or a %directive, found {found}",
                            self.peek().offset)
        name = self.name("a rule or terminal name")
        terminal = is_terminal_name(name.text)
        if markers and terminal:
            raise self.fail(f"the {markers[0].text!r} marker applies to rules, not terminal {name.text}", markers[0].offset)
        params = self.parse_params(name, terminal) if self.peek().kind == "{" else ()
        if self.peek().kind == "DOT":
            self.take()
            self.expect("NUMBER", "a priority number after '.'")
        self.expect(":", f"':' after {name.text}")
        seen = len(self.aliases)
        body = self.parse_alternatives(None)
        if len(self.aliases) > seen and (terminal or name.text.startswith("_")):
            raise self.fail(f"{name.text} can't have aliases: it is a terminal or starts with '_' (inlined)",
                            self.aliases[seen].offset)
        return Definition(name.text, name.offset, params, body)

    def parse_params(self, name: Token, terminal: bool) -> tuple[str, ...]:
        if terminal:
            raise self.fail(f"terminal {name.text} can't be a template; templates are rules", self.peek().offset)
        params = self.name_list("a template parameter", "}", "the template parameters")
        texts = [p.text for p in params]
        for param in params:
            if is_terminal_name(param.text) or texts.count(param.text) > 1:
                raise self.fail(f"template parameter {param.text!r} must be a distinct lowercase name", param.offset)
        return tuple(texts)

    def parse_import(self, directive: Token) -> Import:
        relative = self.peek().kind == "DOT"
        if relative:
            self.take()
        path = [self.name("a module name after %import")]
        while self.peek().kind == "DOT":
            self.take()
            path.append(self.name("a name after '.'"))
        if self.peek().kind == "(":
            names = self.parse_import_list()
            return Import(tuple(p.text for p in path), relative, names, directive.offset)
        if len(path) < 2:
            raise self.fail("expected %import module.NAME or %import module (NAME, ...)", path[0].offset)
        last = path[-1]
        alias = last.text
        if self.peek().kind == "ARROW":
            self.take()
            alias = self.name("a name after '->'").text
        return Import(tuple(p.text for p in path[:-1]), relative, ((last.text, alias, last.offset),), directive.offset)

    def parse_import_list(self) -> tuple[tuple[str, str, int], ...]:
        names = self.name_list("a name to import", ")", "the imported names")
        return tuple((n.text, n.text, n.offset) for n in names)

    def name_list(self, what: str, closer: str, after: str) -> list[Token]:
        """After the opening bracket: names separated by commas, then ``closer``."""
        self.take()
        names = [self.name(what)]
        while self.peek().kind == ",":
            self.take()
            names.append(self.name(what))
        self.expect(closer, f"'{closer}' after {after}")
        return names

    def parse_declare(self, directive: Token) -> None:
        if self.peek().kind != "NAME":
            raise self.fail("%declare needs terminal names", directive.offset)
        while self.peek().kind == "NAME":
            name = self.name("a terminal name")
            if not is_terminal_name(name.text):
                raise self.fail(f"%declare takes terminals (uppercase), not rule {name.text!r}", name.offset)
            self.statements.append(("declare", Definition(name.text, name.offset)))

    # ----- expansions -------------------------------------------------------------------

    def parse_alternatives(self, opener: Token | None) -> Alternatives:
        offset = self.peek().offset if opener is None else opener.offset
        options = [self.parse_sequence(opener)]
        while self.peek().kind == "VBAR":
            self.take()
            options.append(self.parse_sequence(opener))
        self.close_group(opener)
        return Alternatives(tuple(options), offset)

    def parse_sequence(self, opener: Token | None) -> tuple[Node, ...]:
        items = []
        while self.peek().kind not in _SEQUENCE_END:
            items.append(self.parse_expr())
        if self.peek().kind == "ARROW":
            arrow = self.take()
            if opener is not None:
                raise self.fail("an alias '-> name' can only end a top-level alternative", arrow.offset)
            alias = self.name("an alias name after '->'")
            self.aliases.append(alias)
            if is_terminal_name(alias.text):
                raise self.fail(f"an alias must be a rule name (lowercase), not {alias.text!r}", alias.offset)
        return tuple(items)

    def close_group(self, opener: Token | None) -> None:
        token = self.peek()
        if opener is None:
            if token.kind in (")", "]", "}", ","):
                raise self.fail(f"unmatched {token.text!r}", token.offset)
            return
        closer = _CLOSER[opener.kind]
        if token.kind == closer:
            self.take()
            return
        if token.kind in ("NL", "EOF"):
            raise self.fail(f"{opener.text!r} is never closed", opener.offset)
        raise self.fail(f"expected {closer!r} to close {opener.text!r}, found {_describe(token)}", token.offset)

    def parse_expr(self) -> Node:
        atom = self.parse_atom()
        token = self.peek()
        if token.kind in _OPERATORS:
            self.take()
            node: Node = Repeat(atom, *_OPERATORS[token.kind], token.offset)
        elif token.kind == "~":
            node = self.parse_tilde(atom, self.take())
        else:
            return atom
        if self.peek().kind in ("?", "*", "+", "~"):
            raise self.fail("misplaced operator: one repetition per item; add parentheses", self.peek().offset)
        return node

    def parse_tilde(self, atom: Node, tilde: Token) -> Repeat:
        low = self.expect("NUMBER", "a repetition count after '~'").value
        high = low
        if self.peek().kind == "DOTDOT":
            self.take()
            high = self.expect("NUMBER", "an upper bound after '..'").value
        if not 0 <= low <= high:
            raise self.fail(f"bad repetition range ~{low}..{high}: need 0 <= low <= high", tilde.offset)
        if high > self.limits.max_repeat:
            raise UnsupportedError(f"repeat bound above {self.limits.max_repeat}",
                                   f"repetition bound {high} is above Limits.max_repeat; raise it or use * / +",
                                   source=self.src, offset=tilde.offset)
        return Repeat(atom, low, high, tilde.offset)

    def parse_atom(self) -> Node:
        token = self.peek()
        if token.kind not in _CLOSER:
            return self.parse_value()
        self.take()
        self.depth += 1
        if self.depth > MAX_GROUP_DEPTH:  # the parser and the lowering recurse per group
            raise UnsupportedError(f"nesting deeper than {MAX_GROUP_DEPTH} groups",
                                   f"groups nest deeper than {MAX_GROUP_DEPTH} levels; flatten the rule "
                                   "(name inner groups as rules)", source=self.src, offset=token.offset)
        body = self.parse_alternatives(token)
        self.depth -= 1
        return body if token.kind == "(" else Repeat(body, 0, 1, token.offset)

    def parse_value(self) -> Node:
        token = self.take()
        if token.kind == "STRING":
            if self.peek().kind == "DOTDOT":
                self.take()
                return self.char_range(token, self.expect("STRING", "a string after '..'"))
            return Literal(token.value[0], token.offset, ignore_case=token.value[1])
        if token.kind == "REGEXP":
            body, flags = token.value
            return Pattern(body, flags, token.offset, token.offset + 1)
        if token.kind == "NAME":
            self.index -= 1
            name = self.name("a name")
            return self.parse_template_use(name) if self.peek().kind == "{" else Ref(name.text, name.offset)
        if token.kind == "DIRECTIVE" and token.value == "json" and self.index == len(self.tokens):
            return self.parse_json(token)
        raise self.fail(f"expected a name, string, regex, '(' or '[', found {_describe(token)}", token.offset)

    def parse_json(self, directive: Token) -> JsonSchema:
        """``%json`` then a JSON object, read by the JSON decoder from the grammar text."""
        scanner = self.scanner
        at = _GAP.match(self.src, scanner.pos).end()
        try:
            value, end = json.JSONDecoder().raw_decode(self.src, at)
        except json.JSONDecodeError as err:
            raise self.fail(f"%json needs a JSON Schema object: {err.msg}", err.pos) from None
        if not isinstance(value, (dict, bool)):
            raise self.fail("%json needs a JSON Schema (an object or a boolean)", at)
        scanner.pos, scanner.last = end, "JSON"
        return JsonSchema(json.dumps(value), directive.offset)

    def parse_template_use(self, name: Token) -> TemplateUse:
        self.take()
        args = [self.parse_value()]
        while self.peek().kind == ",":
            self.take()
            args.append(self.parse_value())
        self.expect("}", "',' or '}' in the template arguments")
        return TemplateUse(name.text, tuple(args), name.offset)

    def char_range(self, low: Token, high: Token) -> CharRange:
        (lo, lo_case), (hi, hi_case) = low.value, high.value
        if lo_case or hi_case:
            raise UnsupportedError("case-insensitive range", "write both cases as two ranges",
                                   source=self.src, offset=low.offset)
        if len(lo) != 1 or len(hi) != 1:
            raise self.fail('a range takes two one-character strings, like "a".."z"', low.offset)
        if lo > hi:
            raise self.fail(f"empty range: {lo!r} comes after {hi!r}", low.offset)
        return CharRange(lo, hi, low.offset)


# ----- compiler -----------------------------------------------------------------------------


class _Compiler:
    """Statements → :class:`GrammarBuilder` calls: checks names, inlines terminals into single
    expressions, builds the rules reachable from the start rule."""

    def __init__(self, text: str, limits: Limits) -> None:
        self.src = text
        # Starts from the pool shared by Lark and GBNF grammars (JSON Schema's base pool plus the
        # lexemes of grammars compiled before): JSON string and number lexemes (the commonest
        # terminals of a Lark grammar too), and any lexeme an earlier grammar had, parse to the
        # same expressions there, whose derivatives are already taken.
        self.builder = GrammarBuilder(limits, pool=cfg_pool(limits))
        self.pool = self.builder.pool
        self.defs: dict[str, Definition] = {}
        self.term_exprs: dict[str, int] = {}
        self.literal_exprs: dict[Node, int] = {}
        self.active: list[str] = []
        self.rule_symbols: dict[str, int] = {}
        self.queue: list[tuple[int, Alternatives, dict[str, Node]]] = []
        self.instances = 0
        self.json_symbols: dict[str, int] = {}
        self.warnings: list[str] = []

    def fail(self, message: str, offset: int | None) -> GrammarError:
        return GrammarError(message, source=self.src, offset=offset)

    def compile(self, statements: list[tuple[str, object]], start: str) -> GrammarIR:
        self.collect(statements)
        ignores = [body for kind, body in statements if kind == "ignore"]
        self.check(ignores)
        start_def = self.start_definition(start)
        for name in self.defs:
            if is_terminal_name(name):
                try:
                    self.terminal_expr(name, self.defs[name].offset)
                except RecursionError:  # each terminal inlines the ones it names
                    raise UnsupportedError("nesting", f"terminal {name} inlines a chain of terminals deeper than "
                                           "Python's recursion allows; make part of the chain rules (lowercase)",
                                           source=self.src, offset=self.defs[name].offset) from None
        self.compile_literals()
        start_symbol = self.rule_symbol(start)
        self.drain()
        for body in ignores:
            self.add_ignore(body)
        try:
            return self.builder.build(start_symbol)
        except GrammarError as err:
            if err.source is not None:
                raise
            raise self.fail(err.message, start_def.offset) from None

    # ----- collecting definitions -------------------------------------------------------

    def collect(self, statements: list[tuple[str, object]]) -> None:
        for kind, payload in statements:
            if kind in ("define", "declare"):
                self.define(payload)
            elif kind == "import":
                self.add_import(payload)
        for kind, payload in statements:
            if kind in ("override", "extend"):
                self.redefine(kind, payload)

    def define(self, definition: Definition) -> None:
        first = self.defs.get(definition.name)
        if first is not None:
            line = self.src.count("\n", 0, first.offset) + 1
            what = "terminal" if is_terminal_name(definition.name) else "rule"
            raise self.fail(f"{what} {definition.name} is defined twice (first on line {line}); "
                            "use %override to replace it", definition.offset)
        self.defs[definition.name] = definition

    def add_import(self, spec: Import) -> None:
        if spec.relative or spec.module != ("common",):
            module = "." * spec.relative + ".".join(spec.module)
            raise UnsupportedError(f"%import {module}", f"only the common library is built in, not {module!r}; "
                                   "paste the definitions into the grammar", source=self.src, offset=spec.offset)
        for name, alias, offset in spec.names:
            pattern = COMMON_TERMINALS.get(name)
            if pattern is None:
                raise self.fail(f"common has no terminal {name!r}", offset)
            if not is_terminal_name(alias):
                raise self.fail(f"imported terminal {name} needs an uppercase name, not {alias!r}", offset)
            if alias not in self.defs or self.defs[alias].common != pattern:
                self.define(Definition(alias, offset, common=pattern))

    def redefine(self, kind: str, definition: Definition) -> None:
        old = self.defs.get(definition.name)
        if old is None:
            raise self.fail(f"can't %{kind} {definition.name}: it is not defined", definition.offset)
        if kind == "override":
            self.defs[definition.name] = definition
            return
        if old.body is None or old.params != definition.params:
            raise self.fail(f"can't %extend {definition.name}: it is declared, imported or has other parameters",
                            definition.offset)
        body = Alternatives(old.body.options + definition.body.options, old.body.offset)
        self.defs[definition.name] = Definition(old.name, old.offset, old.params, body)

    # ----- checking names ---------------------------------------------------------------

    def check(self, ignores: list[Alternatives]) -> None:
        for name, definition in self.defs.items():
            if definition.body is not None:
                self.check_body(definition.body, set(definition.params), is_terminal_name(name), name)
        for body in ignores:
            self.check_body(body, set(), True, "%ignore")

    def check_body(self, body: Node, params: set[str], in_terminal: bool, owner: str) -> None:
        for node in walk(body):
            if isinstance(node, Ref) and node.name not in params:
                self.check_ref(node, in_terminal, owner)
            elif isinstance(node, TemplateUse):
                self.check_template_use(node, in_terminal, owner)

    def check_ref(self, ref: Ref, in_terminal: bool, owner: str) -> None:
        terminal = is_terminal_name(ref.name)
        definition = self.defs.get(ref.name)
        if definition is None:
            raise self.fail(f"{'terminal' if terminal else 'rule'} {ref.name} is used but not defined", ref.offset)
        if in_terminal and not terminal:
            raise self.fail(f"rule {ref.name} used inside {owner}: terminals can only use terminals", ref.offset)
        if definition.params:
            raise self.fail(f"template {ref.name} needs {len(definition.params)} arguments: "
                            f"{ref.name}{{...}}", ref.offset)

    def check_template_use(self, use: TemplateUse, in_terminal: bool, owner: str) -> None:
        definition = self.defs.get(use.name)
        if in_terminal:
            raise self.fail(f"template {use.name} used inside {owner}: terminals can only use terminals", use.offset)
        if definition is None or not definition.params:
            raise self.fail(f"{use.name} is not a template", use.offset)
        if len(use.args) != len(definition.params):
            raise self.fail(f"template {use.name} takes {len(definition.params)} arguments, "
                            f"got {len(use.args)}", use.offset)

    def start_definition(self, start: str) -> Definition:
        definition = self.defs.get(start)
        if definition is None or is_terminal_name(start):
            raise self.fail(f"start rule {start!r} is not defined; define it or pass start=...", None)
        if definition.params:
            raise self.fail(f"start rule {start} can't be a template", definition.offset)
        return definition

    # ----- regular expressions ----------------------------------------------------------

    def terminal_expr(self, name: str, at: int) -> int:
        """The one expression of terminal ``name`` (its references inlined)."""
        found = self.term_exprs.get(name)
        if found is not None:
            return found
        if name in self.active:
            cycle = " -> ".join(self.active[self.active.index(name):] + [name])
            raise self.fail(f"terminal {name} is recursive ({cycle}); terminals must be regular, "
                            "make it a rule (lowercase)", at)
        self.active.append(name)
        expr = self.definition_expr(self.defs[name])
        self.active.pop()
        self.term_exprs[name] = expr
        return expr

    def definition_expr(self, definition: Definition) -> int:
        if definition.common is not None:
            return parse_regex(definition.common, self.pool)
        if definition.body is None:
            return EMPTY
        return self.regular_expr(definition.body)

    def regular_expr(self, node: Node) -> int:
        if isinstance(node, Ref):
            return self.terminal_expr(node.name, node.offset)
        if isinstance(node, Repeat):
            return self.pool.repeat(self.regular_expr(node.item), node.low, node.high)
        if isinstance(node, Alternatives):
            options = [self.pool.concat_all([self.regular_expr(item) for item in option]) for option in node.options]
            return self.pool.alt(options)
        if isinstance(node, JsonSchema):
            raise self.fail("%json makes a rule, not a terminal: use it in a rule (lowercase)", node.offset)
        return self.literal_expr(node)

    def literal_expr(self, node: Node) -> int:
        """The expression of a string, regex or range (cached)."""
        found = self.literal_exprs.get(node)
        if found is None:
            if isinstance(node, Literal):
                found = self.string_expr(node)
            elif isinstance(node, Pattern):
                found = self.pattern_expr(node)
            else:
                found = ranges_to_expr(self.pool, ((ord(node.low), ord(node.high)),))
            self.literal_exprs[node] = found
        return found

    def string_expr(self, node: Literal) -> int:
        if not node.ignore_case:
            return self.pool.literal(node.text.encode("utf-8"))
        chars = []
        for ch in node.text:
            variants = {v for v in (ch, ch.lower(), ch.upper(), ch.swapcase()) if len(v) == 1}
            chars.append(self.pool.alt([self.pool.literal(v.encode("utf-8")) for v in variants]))
        return self.pool.concat_all(chars)

    def pattern_expr(self, node: Pattern) -> int:
        for i, flag in enumerate(node.flags):
            if flag not in "isu":
                raise UnsupportedError(f"regex flag '{flag}'", f"regex flag {flag!r} is not supported (only i, s, u); "
                                       "rewrite the pattern without it", source=self.src,
                                       offset=node.body_offset + len(node.body) + 1 + i)
        try:
            return parse_regex(node.body, self.pool, ignore_case="i" in node.flags, dotall="s" in node.flags)
        except GrammarError as err:
            raise self.relocate(err, node) from None

    def relocate(self, err: GrammarError, node: Pattern) -> GrammarError:
        """``err`` (located in the regex body) located in the grammar text instead."""
        offset = node.body_offset + (err.column or 1) - 1
        if isinstance(err, UnsupportedError):
            return UnsupportedError(err.feature, err.message, source=self.src, offset=offset)
        return GrammarError(err.message, source=self.src, offset=offset)

    def compile_literals(self) -> None:
        """Compile every string, regex and range in rules, so errors show even in unused rules."""
        for definition in self.defs.values():
            if definition.body is not None and not is_terminal_name(definition.name):
                for node in walk(definition.body):
                    if isinstance(node, (Literal, Pattern, CharRange)):
                        self.literal_expr(node)

    def add_ignore(self, body: Alternatives) -> None:
        only = body.options[0] if len(body.options) == 1 and len(body.options[0]) == 1 else ()
        name = only[0].name if only and isinstance(only[0], Ref) else "%ignore"
        expr = self.regular_expr(body)
        pool = self.pool
        json_space = pool.repeat(ranges_to_expr(pool, [(9, 10), (13, 13), (32, 32)]), 0, INF)
        if self.json_symbols and not pool.is_empty(pool.difference(expr, json_space)):
            # %ignore is global here (llguidance gives %json its own lexer): it may come between
            # a schema's lexemes, where anything but whitespace would break the JSON
            raise UnsupportedError("%ignore with %json", f"{name} matches more than whitespace and would be "
                                   "allowed inside %json's JSON; ignore only whitespace in a grammar with %json",
                                   source=self.src, offset=body.offset)
        self.builder.ignore(expr, name)

    # ----- rules ------------------------------------------------------------------------

    def rule_symbol(self, name: str) -> int:
        found = self.rule_symbols.get(name)
        if found is None:
            found = self.builder.nonterminal(name)
            self.rule_symbols[name] = found
            self.queue.append((found, self.defs[name].body, {}))
        return found

    def instance_symbol(self, use: TemplateUse, scope: dict[str, Node]) -> int:
        resolved = TemplateUse(use.name, tuple(self.resolve(arg, scope) for arg in use.args), use.offset)
        if _nesting(resolved) > MAX_TEMPLATE_NESTING or self.instances >= MAX_TEMPLATE_INSTANCES:
            raise self.fail(f"template {use.name} expands without end", use.offset)
        key = render(resolved)
        found = self.rule_symbols.get(key)
        if found is None:
            self.instances += 1
            found = self.builder.nonterminal(key)
            self.rule_symbols[key] = found
            definition = self.defs[use.name]
            self.queue.append((found, definition.body, dict(zip(definition.params, resolved.args))))
        return found

    def resolve(self, node: Node, scope: dict[str, Node]) -> Node:
        """A template argument with the enclosing template's parameters substituted."""
        if isinstance(node, Ref):
            return scope.get(node.name, node)
        if isinstance(node, TemplateUse):
            return TemplateUse(node.name, tuple(self.resolve(arg, scope) for arg in node.args), node.offset)
        return node

    def drain(self) -> None:
        while self.queue:
            symbol, body, scope = self.queue.pop()
            for option in body.options:
                self.builder.rule(symbol, self.sequence(option, scope))

    def sequence(self, items: tuple[Node, ...], scope: dict[str, Node]) -> list[int]:
        return [symbol for item in items for symbol in self.symbols(item, scope)]

    def symbols(self, node: Node, scope: dict[str, Node]) -> list[int]:
        """The grammar symbols standing for ``node`` in a rule."""
        if isinstance(node, Ref):
            return self.ref_symbols(node, scope)
        if isinstance(node, TemplateUse):
            return [self.instance_symbol(node, scope)]
        if isinstance(node, Repeat):
            return [self.repeat_symbol(node, scope)]
        if isinstance(node, Alternatives):
            if len(node.options) == 1:
                return self.sequence(node.options[0], scope)
            return [self.builder.choice([self.sequence(o, scope) for o in node.options], hint="group")]
        if isinstance(node, JsonSchema):
            return [self.json_symbol(node)]
        return [self.builder.lexeme(render(node), self.literal_expr(node))]

    def json_symbol(self, node: JsonSchema) -> int:
        """The JSON Schema front end's symbol for ``%json``, built into this grammar's builder
        (each distinct schema once); options come from the schema's ``x-leapgram`` or
        llguidance's ``x-guidance`` object."""
        found = self.json_symbols.get(node.text)
        if found is None:
            from .json_schema import json_schema_symbol

            schema, options = json_options(json.loads(node.text))
            try:
                found, warnings = json_schema_symbol(schema, self.builder, **options)
            except GrammarError as err:
                where = f" at {err.pointer or '/'}" if err.pointer is not None else ""
                kind = UnsupportedError if isinstance(err, UnsupportedError) else GrammarError
                args = (err.feature,) if isinstance(err, UnsupportedError) else ()
                raise kind(*args, f"in %json: {err.message}{where}", source=self.src, offset=node.offset) from None
            self.json_symbols[node.text] = found
            self.warnings += warnings
        return found

    def ref_symbols(self, ref: Ref, scope: dict[str, Node]) -> list[int]:
        if ref.name in scope:
            return self.symbols(scope[ref.name], {})
        if is_terminal_name(ref.name):
            return [self.builder.lexeme(ref.name, self.terminal_expr(ref.name, ref.offset))]
        return [self.rule_symbol(ref.name)]

    def repeat_symbol(self, node: Repeat, scope: dict[str, Node]) -> int:
        return self.builder.quantified(self.symbols(node.item, scope), node.low, node.high)


def json_options(schema: dict | bool) -> tuple[dict | bool, dict]:
    """The schema without its option object, and the options for the JSON Schema front end:
    ``"x-leapgram": {"whitespace": ..., "any_order": ..., "lenient": ...}`` (as
    :meth:`leapgram.Grammar.from_json_schema` takes them) or llguidance's ``"x-guidance":
    {"whitespace_flexible": bool, "item_separator": ..., "key_separator": ..., "lenient": bool}``."""
    if not isinstance(schema, dict):
        return schema, {}
    schema = dict(schema)
    guidance = schema.pop("x-guidance", None) or {}
    options = dict(schema.pop("x-leapgram", None) or {})
    if "item_separator" in guidance or "key_separator" in guidance:
        options.setdefault("whitespace", (guidance.get("item_separator", ","), guidance.get("key_separator", ":")))
    elif "whitespace_flexible" in guidance:
        options.setdefault("whitespace", "flexible" if guidance["whitespace_flexible"] else "compact")
    if "lenient" in guidance:
        options.setdefault("lenient", bool(guidance["lenient"]))
    unknown = sorted(set(options) - {"whitespace", "any_order", "lenient"})
    if unknown:
        raise UnsupportedError("x-leapgram option", f"unknown x-leapgram option {unknown[0]!r}: use whitespace, "
                               "any_order or lenient")
    if isinstance(options.get("whitespace"), list):
        options["whitespace"] = tuple(options["whitespace"])
    return schema, options


def lark_to_ir(text: str, *, start: str = "start", limits: Limits = DEFAULT_LIMITS,
               warnings: list[str] | None = None) -> GrammarIR:
    """Compile a grammar in Lark syntax (docs/design/lark.md) into a :class:`GrammarIR`.

    ``start`` names the start rule. Malformed grammars raise :class:`GrammarError` located in
    ``text``; valid but unsupported features raise :class:`UnsupportedError`.
    """
    if not isinstance(text, str):
        raise TypeError(f"grammar text must be str, not {type(text).__name__}")
    statements = _Parser(text, limits).parse()
    compiler = _Compiler(text, limits)
    ir = compiler.compile(statements, start)
    share_pool(ir, limits)
    if warnings is not None:  # the keywords lenient %json schemas skipped
        warnings.extend(compiler.warnings)
    return ir
