"""``SliceChecker``'s first-bytes test: a lexer state none of whose expressions can start with
all first bytes of a slice (a key or enum literal, a closing quote) is answered "no slice
contained" without the full decision, and the answer is the full decision's."""

from __future__ import annotations

import numpy as np

from leapgram import Grammar, Matcher
from tests.helpers.compiling import compile_for
from tests.helpers.masks import walk_to

SCHEMA = {"type": "object",
          "properties": {"location": {"type": "string"}, "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
                         "unit": {"enum": ["celsius", "fahrenheit"]}, "tags": {"type": "array",
                                                                             "items": {"type": "string"}}},
          "required": ["location"]}


def test_first_bytes_answers_agree_with_the_full_decision(llama3_vocab):
    compiled = compile_for(Grammar.from_json_schema(SCHEMA), llama3_vocab)
    rng = np.random.default_rng(7)
    for _ in range(4):
        walk_to(Matcher(compiled), llama3_vocab, rng, 25)
    engine = compiled._engine
    slicer = engine.slicer
    quick = 0
    for state in range(1, engine.lexer.num_states):
        classes = slicer._actual or slicer.slices
        answer = slicer._none_by_first_bytes(state)
        full = slicer._decide(state, classes)
        if answer is not None:
            quick += 1
            assert answer == full == (False,) * len(classes)
    assert quick >= 10
