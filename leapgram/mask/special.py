"""Special tokens a grammar asks for: a control token whose text is a literal of the grammar.

Masks never allow special tokens (their bytes are a display form, not text the model writes),
except here: a special token of the vocabulary (EOS aside) whose text is exactly the string of a
literal lexeme of the grammar (``<tool_call>`` in a structural tag, ``"<|python_tag|>"`` in a Lark
rule, or a regex terminal matching that one string, ``/<tool_call>/``) is allowed where that
lexeme can match its text as a whole, and consuming it consumes the text. A lexeme matching one string only ends on it after exactly that string, so "the lexeme
is complete after the text" means the text is this lexeme, not part of free text or of a JSON
string that happens to contain it.
"""

from __future__ import annotations

import weakref

import numpy as np

from ..grammar.ir import GrammarIR
from ..vocab.vocabulary import Vocabulary


class SpecialTokens:
    """The special tokens of ``vocab`` that ``ir`` names as literal lexemes (often none)."""

    def __init__(self, ir: GrammarIR, vocab: Vocabulary) -> None:
        self.tokens: dict[int, tuple[bytes, int]] = {}
        if ir.is_regex:
            return
        pool = ir.pool
        lexeme_of_expr = None
        found = []
        # A text is a lexeme's one string only where the pool holds the literal of the text
        # (pool.find_literal), so at least the node of its first byte: most grammars have none
        # for '<', and one look-up per first byte rules their texts out (the first bytes of every
        # lexeme, the earlier filter, cost a tenth of a JSON Schema's compile). By the expression,
        # not pool.memo's literals: Lark and GBNF pools share their memo with earlier grammars, so
        # a look-up there would depend on what was compiled before.
        for first, texts in _special_texts(vocab).items():
            if not pool.holds_byte(first):
                continue
            if lexeme_of_expr is None:
                ignored = set(ir.ignore)
                lexeme_of_expr = {lexeme.expr: i for i, lexeme in enumerate(ir.lexemes) if i not in ignored}
            for token_id, data in texts:
                lexeme = lexeme_of_expr.get(pool.find_literal(data))
                if lexeme is not None:
                    found.append((token_id, (data, lexeme)))
        self.tokens.update(sorted(found))  # by id, as split_forced tries them

    def __bool__(self) -> bool:
        return bool(self.tokens)

    def advance(self, engine, state, token_id: int):
        """The engine state after special token ``token_id``, or ``None`` where the grammar does
        not ask for its text as a whole lexeme (or it is not one of these tokens)."""
        found = self.tokens.get(token_id)
        if found is None:
            return None
        data, lexeme = found
        after = engine.advance(state, data)
        if after is None or lexeme not in engine.lexer.accepted(after[2]):
            return None
        return after

    def fill(self, engine, state, mask: np.ndarray) -> None:
        """OR the tokens allowed in ``state`` into ``mask`` (uint32 words)."""
        for token_id in self.tokens:
            if self.advance(engine, state, token_id) is not None:
                mask[token_id >> 5] |= np.uint32(1 << (token_id & 31))

    def split_forced(self, engine, state, forced: bytes) -> tuple[int | None, bytes]:
        """Fast-forward through these tokens: ``(token, b"")`` when ``forced`` starts with the
        text of one the grammar allows in ``state`` (the model writes the token, not its text in
        ordinary tokens), else ``(None, forced cut before the first such text)``."""
        cut = len(forced)
        for token_id, (data, _) in self.tokens.items():
            at = forced.find(data)
            if at == 0 and self.advance(engine, state, token_id) is not None:
                return token_id, b""
            if at > 0:
                cut = min(cut, at)
        return None, forced[:cut]


_SPECIAL_TEXTS: weakref.WeakKeyDictionary[Vocabulary, dict[int, tuple[tuple[int, bytes], ...]]] = \
    weakref.WeakKeyDictionary()


def _special_texts(vocab: Vocabulary) -> dict[int, tuple[tuple[int, bytes], ...]]:
    """``(id, text)`` of the vocabulary's special tokens other than EOS with a text, by the text's
    first byte, read once per vocabulary (Llama-3 has 255: reading them cost a tenth of a compile)."""
    found = _SPECIAL_TEXTS.get(vocab)
    if found is None:
        eos = set(vocab.eos_token_ids)
        by_first: dict[int, list[tuple[int, bytes]]] = {}
        for t in sorted(vocab.special_token_ids - eos):
            data = vocab.token_bytes(t)
            if data:
                by_first.setdefault(data[0], []).append((t, data))
        found = _SPECIAL_TEXTS[vocab] = {first: tuple(texts) for first, texts in by_first.items()}
    return found
