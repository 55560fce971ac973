"""The public :class:`Grammar` handle: what the output must look like."""

from __future__ import annotations

from .frontends.regex import regex_to_ir
from .grammar.ir import GrammarIR
from .errors import UnsupportedError
from .limits import DEFAULT_LIMITS, Limits


class Grammar:
    """A constraint on the output, parsed and checked, not yet bound to a vocabulary.

    Build one with a ``from_*`` constructor; malformed input raises
    :class:`leapgram.GrammarError` (with line, column and a caret excerpt) and valid but
    unsupported input raises :class:`leapgram.UnsupportedError`.
    """

    def __init__(self, ir: GrammarIR, *, kind: str, source: str, options: tuple = ()) -> None:
        self.ir = ir
        self.kind = kind
        self.source = source
        self.key = (kind, source, options)

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

        ir = lark_to_ir(text, start=start, limits=limits or DEFAULT_LIMITS)
        return cls(ir, kind="lark", source=text, options=(start,))

    @classmethod
    def from_gbnf(cls, text: str, *, start: str = "root", limits: Limits | None = None) -> Grammar:
        """A context-free grammar in llama.cpp's GBNF syntax; ``start`` names the start rule.

        GBNF matches characters, not lexemes; the translation keeps its language exactly (see
        :mod:`leapgram.frontends.gbnf`): a grammar without recursion becomes one regex.
        """
        try:
            from .frontends.gbnf import gbnf_to_ir
        except ImportError as exc:
            raise UnsupportedError("GBNF", "the GBNF front end is not available in this version; "
                                   "translate the grammar to Lark syntax") from exc

        ir = gbnf_to_ir(text, start=start, limits=limits or DEFAULT_LIMITS)
        return cls(ir, kind="gbnf", source=text, options=(start,))

    def __repr__(self) -> str:
        text = self.source if len(self.source) <= 60 else self.source[:57] + "..."
        return f"Grammar.from_{self.kind}({text!r})"
