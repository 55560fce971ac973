"""Keeping a test's stand-ins out of a pool family's memo.

A :class:`leapgram.regex.expr.PoolFamily`'s ``memo`` lives as long as the process (every JSON
Schema pool is a copy of one base pool) and keeps what is computed from family expressions once
for all later grammars: row templates, counted characters, shared rows, blocks. A test that
replaces one of those computations (``row_template`` returning ``None``) would otherwise leave
its stand-in's results there for every later test of the session: ``counted_char(pool, X, None)``
kept as ``None`` turns off counted and product rows of JSON strings for the rest of the run.
"""

from __future__ import annotations

import leapgram.parser.lexer_blocks as lexer_blocks_module
from leapgram.regex.expr import ExprPool


def isolate_family_memo(monkeypatch, pool: ExprPool) -> None:
    """Until the test ends, ``pool``'s family (if any) keeps what it computes in a copy of its
    memo (the dicts in it copied too: shared rows, blocks), and the process's memo is put back
    after it, without anything the test added."""
    family = pool.family
    if family is not None:
        copy = {key: dict(value) if isinstance(value, dict) else value for key, value in family.memo.items()}
        monkeypatch.setattr(family, "memo", copy)


def without_row_templates(monkeypatch, pool: ExprPool) -> None:
    """Rows built one at a time (``lexer_blocks.row_template`` answering ``None``) until the test
    ends, in an isolated family memo (:func:`isolate_family_memo`)."""
    isolate_family_memo(monkeypatch, pool)
    monkeypatch.setattr(lexer_blocks_module, "row_template", lambda pool, expr: None)
