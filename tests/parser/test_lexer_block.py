"""The family lexer block (``leapgram.parser.lexer.family_block``): the single-lexeme states of a
JSON Schema grammar's family lexemes (whitespace, strings, numbers, punctuation) start every
lexer as a copy of one block per pool family and set of lexemes. Masks must not depend on which
schemas were compiled before, in which threads, or on the bound on blocks."""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
import threading
from pathlib import Path

import leapgram
import leapgram.parser.lexer as lexer_module
import leapgram.parser.lexer_blocks as lexer_blocks_module
from leapgram import Grammar, Vocabulary
from leapgram.limits import Limits
from leapgram.parser import Lexer
from tests.helpers.family import without_row_templates

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = [
    {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
     "required": ["city"]},
    {"type": "object", "properties": {"amount": {"type": "number"}, "note": {"type": "string"},
                                      "flags": {"type": "array", "items": {"type": "boolean"}}}},
    {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": ["integer", "null"]}},
     "required": ["x", "y"]},
    {"type": "array", "items": {"type": "string", "maxLength": 3}},
]
TEXTS = [
    ['{"city": "Paris \\u00e9\\n", "days": 12}', '{ "city" :"é☃"}'],
    ['{"amount": -1.5e+3, "note": "a\\"b", "flags": [true, false]}', '{"note": ""}'],
    ['{"x": 0.25, "y": null}', '{"x": -0, "y": 7}'],
    ['["ab", "", "xyz"]', '["abcd"]'],
]


def small_vocab() -> Vocabulary:
    """Every byte, plus the pieces of 2 to 6 bytes of the texts at every third byte (tokens that
    span lexemes), plus EOS."""
    data = [text.encode() for texts in TEXTS for text in texts]
    pieces = {text[i:i + n] for text in data for i in range(0, len(text), 3) for n in (2, 4, 6)}
    tokens = [bytes([i]) for i in range(256)] + sorted(p for p in pieces if len(p) > 1) + [b"<eos>"]
    return Vocabulary(tokens, eos_token_ids=[len(tokens) - 1], special_token_ids=[len(tokens) - 1])


def walks(vocab: Vocabulary, index: int, limits: Limits) -> list[list[str]]:
    """For each text of schema ``index``, byte by byte-token: the mask (hex) and acceptance at each
    step, until the text ends or a byte is rejected."""
    compiled = leapgram.GrammarCompiler(vocab, limits=limits).compile(
        Grammar.from_json_schema(SCHEMAS[index], limits=limits))
    out = []
    for text in TEXTS[index]:
        matcher = leapgram.Matcher(compiled)
        steps = []
        for byte in [*text.encode(), None]:
            steps.append(f"{matcher.compute_mask().tobytes().hex()}:{matcher.is_accepting()}")
            if byte is None or not matcher.consume_token(byte):  # token ids 0-255 are the bytes
                break
        out.append(steps)
    return out


def fresh_process_walks(index: int) -> list[list[str]]:
    code = ("import json, sys; from tests.parser.test_lexer_block import small_vocab, walks; "
            "from leapgram.limits import Limits; "
            f"print(json.dumps(walks(small_vocab(), {index}, Limits())))")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_masks_after_other_schemas_equal_a_fresh_process():
    vocab = small_vocab()
    limits = Limits()
    for index in range(len(SCHEMAS)):  # every schema after the others: blocks made by them
        walks(vocab, (index + 1) % len(SCHEMAS), limits)
        assert walks(vocab, index, limits) == fresh_process_walks(index)


def test_masks_with_and_without_the_block(monkeypatch):
    vocab = small_vocab()
    with_block = [walks(vocab, index, Limits(max_dfa_states=49_001)) for index in range(len(SCHEMAS))]
    lexer = Lexer(Grammar.from_json_schema(SCHEMAS[1], limits=Limits(max_dfa_states=49_001)).ir,
                  Limits(max_dfa_states=49_001))
    assert lexer.num_states > 30  # the block is there
    monkeypatch.setattr(Lexer, "_start_with_block", lambda self, punctuation=None: None)
    assert with_block == [walks(vocab, index, Limits(max_dfa_states=49_002)) for index in range(len(SCHEMAS))]


def test_blocks_are_bounded_per_family(monkeypatch):
    monkeypatch.setattr(lexer_blocks_module, "MAX_FAMILY_BLOCKS", 1)
    vocab = small_vocab()
    limits = Limits(max_dfa_states=49_003)  # a family of its own (base pools are cached per limits)
    sizes = []
    for index in range(len(SCHEMAS)):
        ir = Grammar.from_json_schema(SCHEMAS[index], limits=limits).ir
        sizes.append(Lexer(ir, limits).num_states)
    assert sizes[0] > 30 and min(sizes[1:]) < 10  # one block kept, the other sets of lexemes have none
    blocks = ir.pool.family.memo[("lexer blocks",)]
    assert len(blocks) == 1
    monkeypatch.setattr(lexer_blocks_module, "MAX_FAMILY_BLOCKS", 64)
    reference = [walks(vocab, index, Limits(max_dfa_states=49_004)) for index in range(len(SCHEMAS))]
    monkeypatch.setattr(lexer_blocks_module, "MAX_FAMILY_BLOCKS", 1)
    assert [walks(vocab, index, limits) for index in range(len(SCHEMAS))] == reference


def test_compiles_and_walks_in_threads_on_a_cold_family():
    vocab = small_vocab()
    reference = [walks(vocab, index, Limits(max_dfa_states=49_005)) for index in range(len(SCHEMAS))]
    limits = Limits(max_dfa_states=49_006)  # cold: its blocks are made in the threads
    barrier = threading.Barrier(8)
    problems: list[str] = []

    def work(k: int) -> None:
        try:
            order = list(range(len(SCHEMAS)))
            random.Random(k).shuffle(order)
            barrier.wait()
            for index in order:
                if walks(vocab, index, limits) != reference[index]:
                    problems.append(f"thread {k}: schema {index} differs")
        except BaseException as exc:  # noqa: BLE001 -- reported by the test
            problems.append(f"thread {k}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not problems, "\n".join(problems)


def test_block_states_whatever_the_lexeme_ids_and_which_is_ignored(monkeypatch):
    """The block's states in a lexer (items, lexemes ending, list ids, ignored-only flags) do not
    depend on the ids a grammar gives the family lexemes, nor on which of them is ignored: equal
    to the states built one by one for every order of three family lexemes, each ignored in turn."""
    from leapgram.frontends.json_schema.common import schema_pool
    from leapgram.grammar.builder import GrammarBuilder
    from tests.parser.test_lexer_templates import rows_by_items

    limits = Limits()
    source = Grammar.from_json_schema(SCHEMAS[1], limits=limits).ir
    family = source.pool.family.size
    exprs = sorted({lexeme.expr for lexeme in source.lexemes if lexeme.expr < family})[:3]
    assert len(exprs) == 3
    cases = []
    for order in itertools.permutations(exprs):
        for ignored in (None, *order):
            builder = GrammarBuilder(limits, pool=schema_pool(limits))
            start = builder.nonterminal("start")
            builder.rule(start, [builder.literal("<")])  # a literal first: the family lexemes' ids vary
            for expr in order:
                if expr == ignored:
                    builder.ignore(expr, "skipped")
                else:
                    builder.rule(start, [builder.lexeme(f"e{expr}", expr)])
            cases.append(builder.build(start))
    with_block = []
    for ir in cases:
        assert Lexer(ir, limits).num_states > 20  # the block is there
        fresh_sets = [frozenset(range(len(ir.lexemes)))] + [frozenset([lex]) for lex in range(len(ir.lexemes))]
        with_block.append(rows_by_items(ir, fresh_sets))
    monkeypatch.setattr(Lexer, "_start_with_block", lambda self, punctuation=None: None)
    without_row_templates(monkeypatch, source.pool)  # (one family: the builders' pools are its copies)
    for ir, expected in zip(cases, with_block):
        fresh_sets = [frozenset(range(len(ir.lexemes)))] + [frozenset([lex]) for lex in range(len(ir.lexemes))]
        assert rows_by_items(ir, fresh_sets) == expected


def test_punctuation_laid_out_at_set_up(monkeypatch):
    """JSON's ``{`` and ``[`` (base pool literals outside the family, SET_UP_TOKENS) have their
    states and rows right after the block when the lexer is made: the fresh state of ``{`` alone
    is known before the first mask, and the table has its spare states after them. Masks are the
    same when they are left to the rows as reached."""
    limits = Limits(max_dfa_states=49_007)
    ir = Grammar.from_json_schema(SCHEMAS[1], limits=limits).ir
    lexer = Lexer(ir, limits)
    brace = next(lex for lex, lexeme in enumerate(ir.lexemes) if ir.pool.matches(lexeme.expr, b"{"))
    start = lexer._ids[(True, ((brace, ir.lexemes[brace].expr),))]
    assert lexer.trans[start, 0] != lexer_module.UNKNOWN
    assert lexer.trans.shape[0] - lexer.num_states == lexer_blocks_module.BLOCK_SPARE - 1  # as without them (DEAD is state 0)
    vocab = small_vocab()
    laid_out = [walks(vocab, index, Limits(max_dfa_states=49_008)) for index in range(len(SCHEMAS))]
    monkeypatch.setattr(Lexer, "_punctuation", lambda self: [])
    assert laid_out == [walks(vocab, index, Limits(max_dfa_states=49_009)) for index in range(len(SCHEMAS))]
