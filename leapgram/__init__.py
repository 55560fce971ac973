"""leapgram: token masks that keep a language model's output inside a grammar.

Import cost: numpy and numba only. Frameworks (torch, transformers) live in
``leapgram.integrations`` and are imported on use.
"""

from __future__ import annotations

from .bitmask import allocate_token_bitmask, allowed_tokens, apply_token_bitmask, unpack_bitmask
from .batch import fill_next_token_bitmasks
from .compiler import CompiledGrammar, clear_cache, compile
from .errors import BudgetExceededError, GrammarError, LeapgramError, UnsupportedError
from .grammars import Grammar
from .frontends.structural_tag import Tag
from .limits import Limits
from .matcher import Matcher
from .vocab import TokenTrie, Vocabulary
from .vocab.partial import heal_prompt

__version__ = "0.1.0"

__all__ = [
    "BudgetExceededError",
    "CompiledGrammar",
    "Grammar",
    "GrammarError",
    "LeapgramError",
    "Limits",
    "Matcher",
    "Tag",
    "TokenTrie",
    "UnsupportedError",
    "Vocabulary",
    "allocate_token_bitmask",
    "allowed_tokens",
    "apply_token_bitmask",
    "fill_next_token_bitmasks",
    "clear_cache",
    "compile",
    "heal_prompt",
    "unpack_bitmask",
]
