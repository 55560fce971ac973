"""Draft proposals (leapgram.drafts): layout, lookup and prompt-text drafts are grammatical, follow
the document's own whitespace, and the draft length weighs pass cost against acceptance. No model:
the byte vocabulary (one token per byte) makes every proposal readable as text."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leapgram import Grammar, GrammarCompiler, Matcher, Vocabulary
from leapgram.drafts import KINDS, Drafter, DraftPolicy, Layout, draft_length

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "house": {"enum": ["Gryffindor", "Hufflepuff"]},
        "wand": {"type": "object", "properties": {"wood": {"type": "string"}, "length": {"type": "number"}},
                 "required": ["wood", "length"], "additionalProperties": False},
        "alive": {"type": "boolean"},
    },
    "required": ["name", "house", "wand", "alive"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return Vocabulary.byte_vocabulary()


@pytest.fixture(scope="module")
def compiled(vocab):
    return GrammarCompiler(vocab).compile(Grammar.from_json_schema(json.dumps(SCHEMA)))


def follow(vocab, compiled, text: bytes, prompt: bytes = b"", **options) -> tuple[Drafter, Matcher]:
    drafter = Drafter(vocab, vocab.encode(prompt), **options)
    matcher = Matcher(compiled)
    for token in vocab.encode(text):
        assert matcher.consume_token(token), (text, token)
        drafter.append(token)
    return drafter, matcher


def proposal(vocab, drafter: Drafter, matcher: Matcher, limit: int = 40) -> tuple[bytes, list[str]]:
    tokens, kinds = drafter.propose(matcher, limit)
    assert len(tokens) == len(kinds) <= limit
    assert matcher.validate_tokens(tokens) == len(tokens)
    return vocab.decode(tokens), kinds


def test_layout_repeats_the_whitespace_at_the_same_depth_then_the_forced_key(vocab, compiled) -> None:
    drafter, matcher = follow(vocab, compiled, b'{\n  "name": "Ann",')
    text, kinds = proposal(vocab, drafter, matcher)
    assert text.startswith(b'\n  "house": "'), text
    assert set(kinds) <= {"layout", "forced"} and kinds[0] == "layout"


CASES = [
    # (prompt, output so far, the proposal starts with, kind of its first token)
    (b"", b'{\n  "name": "Ann",\n  "house": "Hufflepuff",\n  "wand": {', b'\n    "wood": "', "layout"),  # re-indented
    (b"", b'{\n  "name": "Ann",\n  "house": "H', b'ufflepuff",\n  "wand": ', "forced"),  # then the layout
    (b"Tell me about Luna Lovegood. Her wand: 9 inches of pear.", b'{"name": "Lu',
     b"na Lovegood. Her wand: 9 inches of pear.", "prompt"),  # copied until the grammar refuses
    (b"", b'{"name": "Ann Smith-Jones", "house": "Gryffindor", "wand": {"wood": "Ann Smi', b'th-Jones"',
     "lookup"),  # the output repeats itself
]


@pytest.mark.parametrize(("prompt", "output", "expected", "kind"), CASES)
def test_proposals(vocab, compiled, prompt, output, expected, kind) -> None:
    drafter, matcher = follow(vocab, compiled, output, prompt)
    text, kinds = proposal(vocab, drafter, matcher)
    assert text.startswith(expected), text
    assert kinds[0] == kind


def test_kinds_can_be_turned_off(vocab, compiled) -> None:
    drafter, matcher = follow(vocab, compiled, b'{\n  "name": "Ann",', kinds=("forced",))
    assert proposal(vocab, drafter, matcher) == (b"", [])
    with pytest.raises(ValueError, match="unknown draft kinds"):
        Drafter(vocab, kinds=("guess",))


def test_nothing_after_the_end(vocab, compiled) -> None:
    document = b'{"name": "A", "house": "Gryffindor", "wand": {"wood": "oak", "length": 9}, "alive": true}'
    drafter, matcher = follow(vocab, compiled, document)
    assert matcher.is_accepting()
    text, _ = proposal(vocab, drafter, matcher)
    assert text == b"" or matcher.validate_tokens(vocab.encode(text)) == len(text)
    matcher.consume_token(vocab.eos_token_ids[0])
    assert drafter.propose(matcher, 8) == ([], [])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=200), indent=st.sampled_from([0, 2, 4]))
def test_every_proposal_is_grammatical(vocab, compiled, cut, indent) -> None:
    value = {"name": "Ann \"A\" Lee", "house": "Hufflepuff", "wand": {"wood": "yew", "length": 10.5}, "alive": False}
    document = json.dumps(value, indent=indent or None).encode()
    prefix = document[: cut % (len(document) + 1)]
    drafter, matcher = follow(vocab, compiled, prefix, b"Describe Ann Lee: yew wand, 10.5 inches.")
    _text, kinds = proposal(vocab, drafter, matcher, limit=24)
    assert set(kinds) <= set(KINDS)


def test_layout_memory_keeps_the_latest_whitespace() -> None:
    layout = Layout()
    layout.note(ord(","), 1, b"\n  ", ord('"'))
    layout.note(ord(","), 1, b" ", ord('"'))
    assert layout.predict(ord(","), 1) == [b' "', b" "]  # then the whitespace alone
    assert layout.predict(ord(","), 2) == [b' "', b" "]
    layout.note(ord("{"), 1, b"\n  ", ord('"'))
    layout.note(ord("{"), 2, b"\n  ", ord("}"))  # an empty object at depth 2: "}" one level out
    assert layout.predict(ord("{"), 3)[:2] == [b'\n      "', b"\n    }"]
    assert layout.predict(ord(":"), 1) == []


def test_draft_length_pays_for_the_wider_pass() -> None:
    policy = DraftPolicy()
    for _ in range(200):
        policy.observe_draft("layout", True)
        policy.observe_draft("prompt", False)
    assert draft_length(["layout"] * 8, policy) == 8
    assert draft_length(["prompt"] * 8, policy) == 0
    assert draft_length(["layout", "layout", "prompt", "prompt"], policy) == 2
    assert draft_length([], policy) == 0
    assert policy.pass_cost(1) == 1.0 and policy.pass_cost(9) > policy.pass_cost(2) > 1.0


def test_pass_costs_are_learned_from_timings() -> None:
    policy = DraftPolicy()
    for _ in range(50):
        policy.observe_pass(1, 0.05)
        policy.observe_pass(5, 0.05)
    assert policy.pass_cost(5) == pytest.approx(1.0, rel=0.01)
    assert policy.pass_cost(2) == 1.0  # never below a single pass
    assert 1.0 < policy.pass_cost(20) < 2.0
