"""Context-free grammars built directly with the GrammarBuilder (front-end independent)."""

from __future__ import annotations

from leapgram.grammar import GrammarBuilder
from leapgram.grammars import Grammar

STRING = r'"([^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"'
NUMBER = r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"


def json_grammar(with_ws: bool = True) -> Grammar:
    b = GrammarBuilder()
    start, value, obj, arr, member = (b.nonterminal(n) for n in ["start", "value", "object", "array", "member"])
    lit = b.literal
    string = b.regex(STRING, name="STRING")
    b.rule(start, [value])
    for alt in ([obj], [arr], [string], [b.regex(NUMBER, name="NUMBER")], [lit("true")], [lit("false")], [lit("null")]):
        b.rule(value, alt)
    b.rule(obj, [lit("{"), lit("}")])
    b.rule(obj, [lit("{"), member, b.star([lit(","), member]), lit("}")])
    b.rule(member, [string, lit(":"), value])
    b.rule(arr, [lit("["), lit("]")])
    b.rule(arr, [lit("["), value, b.star([lit(","), value]), lit("]")])
    if with_ws:
        b.ignore(b.pool.star(b.pool.byteset(sum(1 << c for c in b" \t\n\r"))))
    return Grammar(b.build(start), kind="builder", source=f"json ws={with_ws}")


def arithmetic_grammar() -> Grammar:
    """Left-recursive expressions with precedence, nullable signs and right recursion for powers."""
    b = GrammarBuilder()
    expr, term, factor, atom, sign = (b.nonterminal(n) for n in ["expr", "term", "factor", "atom", "sign"])
    lit = b.literal
    b.rule(expr, [expr, b.regex(r"[+-]"), term])
    b.rule(expr, [term])
    b.rule(term, [term, b.regex(r"[*/%]"), factor])
    b.rule(term, [factor])
    b.rule(factor, [sign, atom, lit("^"), factor])
    b.rule(factor, [sign, atom])
    b.rule(sign, [lit("-")])
    b.rule(sign, [])
    b.rule(atom, [b.regex(r"[0-9]+(\.[0-9]+)?")])
    b.rule(atom, [b.regex(r"[a-z][a-z0-9_]*")])
    b.rule(atom, [lit("("), expr, lit(")")])
    b.rule(atom, [b.regex(r"[a-z]+"), lit("("), b.optional([expr, b.star([lit(","), expr])]), lit(")")])
    b.ignore(b.pool.star(b.pool.literal(b" ")))
    return Grammar(b.build(expr), kind="builder", source="arithmetic")


def keyword_grammar() -> Grammar:
    """Keywords that are also identifiers (two lexemes ending together), and nullable lexemes."""
    b = GrammarBuilder()
    start, stmt = b.nonterminal("start"), b.nonterminal("stmt")
    ident = b.regex(r"[a-z]+", name="IDENT")
    b.rule(start, [b.plus([stmt])])
    b.rule(stmt, [b.literal("if"), ident, b.literal(";")])
    b.rule(stmt, [ident, b.literal("="), b.regex(r"[0-9]*", name="DIGITS"), b.literal(";")])
    b.ignore(b.pool.star(b.pool.literal(b" ")))
    return Grammar(b.build(start), kind="builder", source="keywords")


SENTENCES = {
    "json": ['{"a": [1, 2.5, {"b": null}], "c": "x\\n\\u00e9", "d": true}', "[]", '  {"k" : "v"}  ', "-0.5e+3"],
    "arithmetic": ["1+2*3", "f(x, -2)^2 - (y/3)", "-a % b ^ -c", "max(1,2,3)+x_1"],
    "keywords": ["if x;", "x=12; if ifx;", "iff=;", "if if;"],
}
GRAMMARS = {"json": json_grammar, "arithmetic": arithmetic_grammar, "keywords": keyword_grammar}
