"""Concurrency: matchers of one compiled grammar, walked in many threads at once while its lazily
built tables (DFA states, lexer rows, Earley charts, cached masks, slices) grow, give exactly
the masks one thread gives on a fresh copy of the grammar.

Each round compiles the grammar anew (a new ``GrammarCompiler``, so nothing is cached yet),
releases all threads together through a barrier, and has each walk every text token by token
in its own order, comparing the mask, ``is_accepting()`` and the forced bytes at every step.
"""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest

import leapgram
from leapgram import Grammar, Vocabulary

SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "minimum": 0},
        "name": {"type": "string", "pattern": "^[A-Z][a-z]+$"},
        "tags": {"type": "array", "items": {"enum": ["red", "green", "blue"]}, "maxItems": 3},
        "owner": {"type": "object", "properties": {"email": {"type": "string", "format": "email"},
                                                   "age": {"type": "number"}}, "required": ["email"]},
        "ok": {"type": "boolean"},
    },
    "required": ["id", "name"],
}
SCHEMA_TEXTS = [
    '{"id": 7, "name": "Alice", "tags": ["red", "blue"], "ok": true}',
    '{"id": 0, "name": "Bo", "owner": {"email": "bo@example.com", "age": 3.5}}',
    '{"id": 12345, "name": "Zed", "tags": [], "owner": {"email": "z@x.org"}, "ok": false}',
    '{"id": 42, "name": "Éa"}',  # rejected at É: the masks of the dead end must agree too
]
LARK = r"""
start: expr
expr: term (("+" | "-") term)*
term: factor (("*" | "/") factor)*
factor: NUMBER | "(" expr ")" | "-" factor
NUMBER: /[0-9]+(\.[0-9]+)?/
%ignore " "
"""
LARK_TEXTS = ["1 + 2 * (3 - 4.5)", "((7))/-8", "12*(3+4)*(5+(6-7))", "9 - -(8.25 / (7 * 6)) + 5 * 4 - 3"]
REGEX = r"([a-z]+@[a-z]+\.(com|org))|(\+?[0-9]{1,3}-[0-9]{3,}-[0-9]{4})"
REGEX_TEXTS = ["abc@def.com", "+1-555-1234", "x@y.org", "12-345-6789"]

CASES = [
    pytest.param(Grammar.from_json_schema(SCHEMA), SCHEMA_TEXTS, id="json-schema"),
    pytest.param(Grammar.from_json_schema(SCHEMA, any_order=True), SCHEMA_TEXTS, id="json-schema-any-order"),
    pytest.param(Grammar.from_lark(LARK), LARK_TEXTS, id="lark"),
    pytest.param(Grammar.from_regex(REGEX), REGEX_TEXTS, id="regex"),
]
THREADS = 12
ROUNDS = 4


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    """Every byte, plus 300 pieces of the texts (so tokens span lexemes and the trie is deep),
    plus EOS."""
    rng = random.Random(24)
    corpus = [t.encode() for t in SCHEMA_TEXTS + LARK_TEXTS + REGEX_TEXTS]
    pieces = set()
    while len(pieces) < 300:
        text = rng.choice(corpus)
        start = rng.randrange(len(text))
        pieces.add(text[start:start + rng.randint(2, 8)])
    tokens = [bytes([i]) for i in range(256)] + sorted(p for p in pieces if len(p) > 1) + [b"<eos>"]
    return Vocabulary(tokens, eos_token_ids=[len(tokens) - 1], special_token_ids=[len(tokens) - 1])


def tokenize(vocab: Vocabulary, text: str) -> list[int]:
    """Greedy longest match over the vocabulary's tokens."""
    ids = {vocab.token_bytes(i): i for i in range(vocab.size) if not vocab.is_special(i)}
    data, out, i = text.encode(), [], 0
    while i < len(data):
        size = max(n for n in range(1, 9) if data[i:i + n] in ids)
        out.append(ids[data[i:i + size]])
        i += size
    return out


def walk(compiled: leapgram.CompiledGrammar, tokens: list[int]) -> list[tuple[bytes, bool, bytes]]:
    """At each step until the matcher rejects a token or the text ends: (mask, accepting, forced)."""
    return walk_matcher(leapgram.Matcher(compiled), tokens)


def walk_matcher(matcher: leapgram.Matcher, tokens: list[int]) -> list[tuple[bytes, bool, bytes]]:
    """:func:`walk` from ``matcher``'s state."""
    steps = []
    for token in [*tokens, None]:
        steps.append((matcher.compute_mask().tobytes(), matcher.is_accepting(), matcher.forced_bytes()))
        if token is None or not matcher.consume_token(token):
            break
    return steps


@pytest.mark.parametrize(("grammar", "texts"), CASES)
def test_threads_sharing_a_compiled_grammar_see_single_thread_masks(vocab, grammar, texts):
    sequences = [tokenize(vocab, text) for text in texts]
    reference = [walk(leapgram.GrammarCompiler(vocab).compile(grammar), seq) for seq in sequences]
    assert any(len(steps) == len(seq) + 1 for steps, seq in zip(reference, sequences))  # a text walked to its end
    for _ in range(ROUNDS):
        shared = leapgram.GrammarCompiler(vocab).compile(grammar)  # cold: its tables grow in the threads
        barrier = threading.Barrier(THREADS)
        problems: list[str] = []

        def work(k: int, shared=shared, barrier=barrier, problems=problems) -> None:
            try:
                order = list(range(len(sequences)))
                random.Random(k).shuffle(order)
                barrier.wait()
                for i in order:
                    if walk(shared, sequences[i]) != reference[i]:
                        problems.append(f"thread {k}: text {i} differs from the single-thread walk")
            except BaseException as exc:  # noqa: BLE001 -- reported by the test
                problems.append(f"thread {k}: {type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not problems, "\n".join(problems)


def test_batch_fill_in_threads_on_a_cold_grammar(vocab, monkeypatch):
    """``fill_next_token_bitmasks`` over many matchers of one cold compiled grammar, at staggered
    positions, equals filling each row alone on a fresh copy. Threads are forced (the fill would
    otherwise choose by measured cost, starting with one thread)."""
    import leapgram.batch as batch_module

    class Always:
        def workers(self, allowed):
            return allowed

        def record(self, workers, seconds_per_row):
            pass

    monkeypatch.setattr(batch_module, "_CHOICE", Always())
    grammar = Grammar.from_json_schema(SCHEMA)
    sequences = [tokenize(vocab, text) for text in SCHEMA_TEXTS[:3]]
    positions = [(i, n) for i, seq in enumerate(sequences) for n in range(0, len(seq), 3)]
    shared = leapgram.GrammarCompiler(vocab).compile(grammar)
    matchers = []
    for i, n in positions:
        matcher = leapgram.Matcher(shared)
        assert matcher.consume_tokens(sequences[i][:n])
        matchers.append(matcher)
    batch = leapgram.allocate_token_bitmask(len(matchers), vocab.size)
    leapgram.fill_next_token_bitmasks(matchers, batch, threads=THREADS)
    fresh = leapgram.GrammarCompiler(vocab).compile(grammar)
    for row, (i, n) in enumerate(positions):
        alone = leapgram.Matcher(fresh)
        alone.consume_tokens(sequences[i][:n])
        assert np.array_equal(batch[row], alone.compute_mask()), (i, n)


def test_forks_sharing_an_arena_on_threads_see_single_thread_masks(vocab):
    """Forks of one matcher share its chart arena. Walked on many threads at once, on a cold
    grammar, while one of them consumes a long array (its charts, items and memo tables grow
    many times, so the arena's arrays are replaced under the other walks), they give the masks,
    ``is_accepting()`` and forced bytes of one thread, and nothing reads freed memory: the
    walks take turns on the arena's lock (``ChartArena.share``)."""
    grammar = Grammar.from_json_schema({"type": "array", "items": SCHEMA})
    texts = ["[" + ", ".join(SCHEMA_TEXTS[:3] * 20) + "]"]
    texts += ["[" + text + "]" for text in SCHEMA_TEXTS] + ["[" + ", ".join(SCHEMA_TEXTS[k:k + 2]) + "]" for k in range(3)]
    sequences = [tokenize(vocab, text) for text in texts]
    reference = [walk(leapgram.GrammarCompiler(vocab).compile(grammar), seq) for seq in sequences]
    assert len(reference[0]) == len(sequences[0]) + 1  # the long text is walked to its end
    for _ in range(ROUNDS):
        parent = leapgram.Matcher(leapgram.GrammarCompiler(vocab).compile(grammar))  # cold
        arena = parent._states[-1][0]
        barrier = threading.Barrier(THREADS)
        problems: list[str] = []

        def work(k: int, fork=None, barrier=barrier, problems=problems) -> None:
            try:
                order = [0] if k == 0 else list(range(1, len(sequences)))  # thread 0 grows the arena
                random.Random(k).shuffle(order)
                barrier.wait()
                for i in order:
                    if walk_matcher(fork.fork(), sequences[i]) != reference[i]:
                        problems.append(f"thread {k}: text {i} differs from the single-thread walk")
            except BaseException as exc:  # noqa: BLE001 -- reported by the test
                problems.append(f"thread {k}: {type(exc).__name__}: {exc}")

        threads = [threading.Thread(target=work, args=(k, parent.fork())) for k in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not problems, "\n".join(problems)
        assert arena.lock is not None and arena.items.shape[0] > 1024  # shared, and grown under the walks
