"""Rank-based byte-pair encoding, the algorithm of tiktoken, in plain Python.

The text is split into pieces by the encoding's pre-tokenizer regex. A piece that is a token is
that token; otherwise it starts as single bytes and the adjacent pair whose concatenation has
the lowest rank is merged (the leftmost on a tie) until no adjacent pair is a token. The rank of
a token is its id. The pattern needs the third-party ``regex`` module (for ``\\p{L}`` and
possessive quantifiers), imported on first use.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from ..errors import TokenizerError

_NO_RANK = 1 << 62


class RankBPE:
    """Tiktoken's encoder over ``ranks`` (``{token bytes: rank}``) and a pre-tokenizer ``pattern``."""

    def __init__(self, ranks: dict[bytes, int], pattern: str) -> None:
        self._ranks = ranks
        self._pattern = pattern
        self._regex: Any = None

    def encode(self, text: str) -> list[int]:
        """The ranks of ``text``'s tokens, special-token text encoded as ordinary text."""
        ids: list[int] = []
        ranks = self._ranks
        for match in self._compiled().finditer(text):
            piece = match.group().encode("utf-8")
            rank = ranks.get(piece)
            if rank is None:
                ids.extend(self.encode_piece(piece))
            else:
                ids.append(rank)
        return ids

    def encode_piece(self, piece: bytes) -> list[int]:
        """The ranks that merging the bytes of one pre-tokenized ``piece`` ends with."""
        ranks = self._ranks
        starts = list(range(len(piece) + 1))
        pairs = [ranks.get(piece[i : i + 2], _NO_RANK) for i in range(len(piece) - 1)]
        while pairs:
            best = min(pairs)
            if best == _NO_RANK:
                break
            i = pairs.index(best)
            del starts[i + 1]
            del pairs[i]
            if i > 0:
                pairs[i - 1] = ranks.get(piece[starts[i - 1] : starts[i + 1]], _NO_RANK)
            if i < len(pairs):
                pairs[i] = ranks.get(piece[starts[i] : starts[i + 2]], _NO_RANK)
        return [self._rank_of(piece[a:b]) for a, b in pairwise(starts)]

    def _rank_of(self, token: bytes) -> int:
        rank = self._ranks.get(token)
        if rank is None:
            raise TokenizerError(f"the rank file has no token for {token!r}; it must rank every single byte")
        return rank

    def _compiled(self) -> Any:
        if self._regex is None:
            try:
                import regex
            except ImportError:
                raise ImportError(
                    "encoding with a tiktoken vocabulary needs regex: pip install regex"
                ) from None
            self._regex = regex.compile(self._pattern)
        return self._regex

    def __getstate__(self) -> dict[str, Any]:
        return {"_ranks": self._ranks, "_pattern": self._pattern, "_regex": None}
