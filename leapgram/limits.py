"""Named budgets for every step that could grow without bound.

Running out of a budget is a :class:`leapgram.errors.BudgetExceededError` at compile time and an
error state (``Matcher.error()`` names the limit) while matching; never a hang.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Budgets, each with its default and what one unit costs.

    * ``max_dfa_states`` (default 50,000): states of one lazily built lexer DFA. Each state holds a
      256-entry int32 transition row, so the default caps the table at about 50 MB. Before its
      second mask a JSON Schema's lexer lays out the states of its key literals in one batch
      (``Lexer.lay_out_literals``): at most 512, and a quarter of this budget, whether or not a walk
      reaches them, so a grammar that ends near the budget runs out of it up to that much sooner.
    * ``max_regex_nodes`` (default 500,000): distinct hash-consed regex expressions in one pool,
      about 200 bytes each.
    * ``max_emptiness_steps`` (default 20,000): derivative states explored by one search that
      decides whether a regex with intersection or complement matches anything. A step derives
      the state by each of its byte classes: 30–60 µs in JSON strings (measured on
      JSONSchemaBench), up to 200 µs for an intersection of many patterns and lengths
      (``allOf``/``not`` of ``pattern``s). A key that is none of the declared names takes none.
    * ``max_row_emptiness_steps`` (default 10,000): the steps of ``max_emptiness_steps`` summed
      over the searches of one lexer row (every allowed lexeme's derivative by every byte class;
      an ``anyOf`` of patterns makes hundreds of lexemes, each search small), so 0.3–2 s at
      most per row (``Lexer.fill_row`` and ``fill_entry`` open it with
      ``ExprPool.emptiness_budget``). Calibrated on JSONSchemaBench: the largest row of any
      passing case takes 3,709 steps.
    * ``max_repeat`` (default 10,000): the largest bound allowed in ``{m,n}``.
    * ``max_earley_items`` (default 50,000): items in one Earley row (about 1 µs each to
      compute); long right-recursive lists are what grows rows, so the builder uses left recursion.
    * ``max_parse_items`` (default 16,000,000): Earley items in all the charts of one matcher (8
      bytes each, so about 128 MB); the charts of a long output and of the continuations the
      mask computation explored. A finished matcher's charts are reused by the next matcher of
      the same compiled grammar (and count here) only while they hold at most 1/64 of this
      (one spare arena per compiled grammar, about 2 MB of items at most).
    * ``max_cached_masks`` (default 1,024): token masks kept per compiled grammar, keyed by
      lexer state; each costs ``vocab_size / 8`` bytes (16 KB for Llama-3) at most: masks with
      the same bits in grammars of one vocabulary are held once (``compiler.RowStore``).
    * ``max_forced_bytes`` (default 256): forced bytes found per ``forced_bytes()`` call (a cap:
      the rest is found at a later call); one lexer and parser step each, about 5 µs.
    * ``max_extension_nodes`` (default 4,096): trie nodes the fast-forward back-off tries when it
      asks whether the grammar allows a token running past the forced bytes (about 5–20 µs
      each); past it the answer is a conservative yes.
    """

    max_dfa_states: int = 50_000
    max_regex_nodes: int = 500_000
    max_emptiness_steps: int = 20_000
    max_row_emptiness_steps: int = 10_000
    max_repeat: int = 10_000
    max_cached_masks: int = 1_024
    max_earley_items: int = 50_000
    max_parse_items: int = 16_000_000
    max_forced_bytes: int = 256
    max_extension_nodes: int = 4_096


DEFAULT_LIMITS = Limits()
