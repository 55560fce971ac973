"""The lexer table's growth (``Lexer._grow``, ``Lexer._ready_rows``): a state's row is marked
unknown when the state is numbered, growing copies the states' rows only, and a grammar's start
block has spare rows allocated. Masks must not depend on how the table grew."""

from __future__ import annotations

import leapgram
import leapgram.parser.lexer as lexer_module
import leapgram.parser.lexer_blocks as lexer_blocks_module
from leapgram import Grammar
from leapgram.limits import Limits
from leapgram.regex.dfa import UNKNOWN
from tests.helpers.family import isolate_family_memo
from tests.parser.test_lexer_block import SCHEMAS, small_vocab, walks

ENUM = {"type": "object", "properties": {"pick": {"enum": [f"value number {k}" for k in range(60)]},
                                         "note": {"type": "string", "pattern": "^[a-z]{2,9}@[0-9]+$"}}}


def isolate_json_family(monkeypatch, vocab) -> None:
    """The JSON Schema family's memo isolated until the test ends: blocks made while
    ``BLOCK_SPARE`` is patched have that many spare rows (and accepting entries), and later tests
    of the session must not get them from the memo."""
    compiled = leapgram.GrammarCompiler(vocab).compile(Grammar.from_json_schema(ENUM))
    isolate_family_memo(monkeypatch, compiled._engine.lexer.pool)


def lexer_after_walks(vocab, limits: Limits, texts: list[bytes]):
    compiled = leapgram.GrammarCompiler(vocab, limits=limits).compile(Grammar.from_json_schema(ENUM, limits=limits))
    for text in texts:
        matcher = leapgram.Matcher(compiled)
        for byte in text:
            matcher.compute_mask()
            if not matcher.consume_token(byte):
                break
    return compiled._engine.lexer


def test_masks_do_not_depend_on_spare_rows_or_on_how_many_rows_are_marked_at_once(monkeypatch):
    vocab = small_vocab()
    reference = [walks(vocab, index, Limits(max_dfa_states=49_011)) for index in range(len(SCHEMAS))]
    isolate_json_family(monkeypatch, vocab)
    monkeypatch.setattr(lexer_blocks_module, "BLOCK_SPARE", 1)  # every new state grows the table
    monkeypatch.setattr(lexer_module, "READY_ROWS", 1)
    assert [walks(vocab, index, Limits(max_dfa_states=49_012)) for index in range(len(SCHEMAS))] == reference


def test_every_row_of_a_state_is_written_and_only_states_rows_are_copied(monkeypatch):
    vocab = small_vocab()
    texts = [b'{"pick": "value number 17", "note": "ab@12"}', b'{"pick": "value number 4"}']
    isolate_json_family(monkeypatch, vocab)
    for spare, ready in ((512, 64), (1, 1), (3, 2)):
        monkeypatch.setattr(lexer_blocks_module, "BLOCK_SPARE", spare)
        monkeypatch.setattr(lexer_module, "READY_ROWS", ready)
        lexer = lexer_after_walks(vocab, Limits(max_dfa_states=49_013 + spare), texts)
        states = lexer.num_states
        assert states <= lexer._ready <= lexer.trans.shape[0]
        rows = lexer.trans[:states]
        assert ((rows >= UNKNOWN) & (rows < states)).all()  # unknown, dead or a state's id
        assert (lexer.trans[states:lexer._ready] == UNKNOWN).all()
        assert lexer.unwritten_bytes == (lexer.trans.shape[0] - lexer._ready) * 1024


def test_the_lexer_views_name_its_current_arrays_after_growth(monkeypatch):
    """``Lexer.views`` (the kernels' one argument for ``trans``, ``accepting`` and
    ``kernel_arrays``) names the lexer's current arrays after every growth (each new state grows
    the table here) and ``acc_pool``'s; a views array made before holds the arrays it named."""
    from leapgram._kernels.views import LEXER_ARRAYS, lexer_of

    vocab = small_vocab()
    isolate_json_family(monkeypatch, vocab)
    monkeypatch.setattr(lexer_blocks_module, "BLOCK_SPARE", 1)
    compiled = leapgram.GrammarCompiler(vocab).compile(Grammar.from_json_schema(ENUM))
    lexer = compiled._engine.lexer
    first_views, first_trans = lexer.views, lexer.trans
    matcher = leapgram.Matcher(compiled)
    for byte in b'{"pick": "value number 17", "note": "ab@12"}':
        matcher.compute_mask()
        assert matcher.consume_token(byte)
    assert lexer.trans is not first_trans  # grown
    arrays = (lexer.trans, lexer.accepting, *lexer.kernel_arrays)
    made = lexer_of(lexer.views)
    assert len(made) == len(arrays) == LEXER_ARRAYS
    for a, b in zip(made, arrays):
        assert a.dtype == b.dtype and a.shape == b.shape and a.ctypes.data == b.ctypes.data
    if not isinstance(first_views, tuple):  # numba on: the old views still hold the first table
        assert first_views.base.arrays[0] is first_trans and first_views[0, 0] == first_trans.ctypes.data



def test_masks_do_not_depend_on_small_pages(monkeypatch):
    """Every table (lexer and regex DFA) advised to small pages (``empty_table`` from 0 bytes
    on): the same masks."""
    import leapgram.regex.dfa as dfa_module

    vocab = small_vocab()
    reference = [walks(vocab, index, Limits(max_dfa_states=49_021)) for index in range(len(SCHEMAS))]
    monkeypatch.setattr(dfa_module, "SMALL_PAGES_FROM", 0)
    assert [walks(vocab, index, Limits(max_dfa_states=49_022)) for index in range(len(SCHEMAS))] == reference


def test_a_large_table_is_advised_to_small_pages():
    import sys

    import pytest

    from leapgram.regex.dfa import SMALL_PAGES_FROM, empty_table

    rows = SMALL_PAGES_FROM // 1024
    table = empty_table(rows)
    assert table.shape == (rows, 256) and table.dtype.name == "int32"
    assert table.flags.c_contiguous and table.flags.writeable and table.flags.owndata
    if not sys.platform.startswith("linux"):
        pytest.skip("madvise is Linux's")
    start = table.ctypes.data
    flags = {}  # the mapping (VMA) holding the table's middle, and its VmFlags
    with open("/proc/self/smaps") as smaps:
        inside = False
        for line in smaps:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                low, high = (int(x, 16) for x in head.split("-"))
                inside = low <= start + table.nbytes // 2 < high
            elif inside and head == "VmFlags:":
                flags = set(line.split()[1:])
    assert "nh" in flags and "hg" not in flags
