"""Vocabularies (token id → bytes) and the token trie over them."""

from .trie import TokenTrie
from .vocabulary import Vocabulary

__all__ = ["TokenTrie", "Vocabulary"]
