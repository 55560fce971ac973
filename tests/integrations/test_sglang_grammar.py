"""leapgram's SGLang grammar backend against SGLang's own base classes, without a server.

Runs only under an interpreter with SGLang (``bash scripts/setup_sglang.sh``, then
``.venv-sglang/bin/python -m pytest tests/integrations/test_sglang_grammar.py``).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

pytest.importorskip("sglang", reason="needs SGLang: bash scripts/setup_sglang.sh, then run with .venv-sglang/bin/python")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import sglang
from sglang.srt.arg_groups.choices import GRAMMAR_BACKEND_CHOICES
from sglang.srt.constrained.base_grammar_backend import (
    GRAMMAR_BACKEND_REGISTRY,
    BaseGrammarBackend,
    BaseGrammarObject,
    GrammarRow,
    InvalidGrammarObject,
)

import leapgram
from leapgram.integrations import sglang as lg
from tests.helpers.vllm_server import model_folder

VOCAB = 49152  # SmolLM2's tokenizer and model
EOS = 2  # <|im_end|>, the model's EOS
CITY = {"type": "object", "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
        "required": ["city", "population"], "additionalProperties": False}


@pytest.fixture(scope="module")
def tokenizer():
    return transformers.AutoTokenizer.from_pretrained(str(model_folder()))


@pytest.fixture(scope="module")
def backend(tokenizer):
    assert lg.register()
    return lg.LeapgramGrammarBackend(tokenizer, VOCAB, {EOS})


def encode(tokenizer, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False)


def allowed(grammar, vocab_size: int = VOCAB) -> set[int]:
    mask = grammar.allocate_vocab_mask(vocab_size, 1, "cpu")
    grammar.fill_vocab_mask(mask, 0)
    return set(leapgram.allowed_tokens(mask.numpy()[0], vocab_size))


def walk(grammar, tokens: list[int]) -> None:
    """Accept ``tokens`` one by one, each one allowed by the mask filled just before."""
    for token in tokens:
        assert token in allowed(grammar), (token, grammar.matcher.num_tokens)
        grammar.accept_token(token)


def test_register_adds_the_choice_and_the_registry_entry() -> None:
    assert lg.register() and lg.register()  # idempotent
    assert GRAMMAR_BACKEND_CHOICES.count("leapgram") == 1
    assert GRAMMAR_BACKEND_REGISTRY["leapgram"] is lg.create_backend
    assert issubclass(lg.LeapgramGrammarBackend, BaseGrammarBackend)
    assert issubclass(lg.LeapgramSglangGrammar, BaseGrammarObject)


@pytest.mark.parametrize("version, tested", [("0.5.23", True), ("0.5.23.post1", True), ("0.5.23+cpu", True),
                                             ("0.5.22", False), ("0.5.24", False), ("0.6.0", False),
                                             ("unknown", False)])
def test_version_range(version: str, tested: bool) -> None:
    assert lg._is_tested(version) is tested


def test_untested_version_warns_and_registers_nothing(monkeypatch) -> None:
    monkeypatch.setattr(sglang, "__version__", "0.5.24")
    monkeypatch.setitem(GRAMMAR_BACKEND_REGISTRY, "leapgram", None)
    with pytest.warns(RuntimeWarning, match="NOT installed"):
        assert lg.register() is False
    assert GRAMMAR_BACKEND_REGISTRY["leapgram"] is None


def test_json_schema_walk_terminates_on_eos_and_rolls_back(backend, tokenizer) -> None:
    grammar = backend.dispatch_json(json.dumps(CITY))
    assert isinstance(grammar, lg.LeapgramSglangGrammar)
    tokens = encode(tokenizer, '{"city": "Paris", "population": 2100000}')
    walk(grammar, tokens)
    assert EOS in allowed(grammar)
    grammar.accept_token(EOS)
    assert grammar.is_terminated()
    grammar.accept_token(5)  # ignored after termination, as SGLang's xgrammar backend does
    grammar.rollback(1)  # the EOS
    assert not grammar.is_terminated() and grammar.matcher.num_tokens == len(tokens)
    grammar.rollback(3)
    assert grammar.matcher.num_tokens == len(tokens) - 3
    walk(grammar, tokens[-3:])
    assert grammar.matcher.is_accepting()


def test_eos_is_masked_until_the_output_is_complete(backend, tokenizer) -> None:
    grammar = backend.dispatch_json(json.dumps(CITY))
    walk(grammar, encode(tokenizer, '{"city": "Paris"'))
    assert EOS not in allowed(grammar)
    with pytest.raises(ValueError, match="leapgram"):
        grammar.accept_token(EOS)
    assert not grammar.is_terminated()


def test_a_forbidden_token_is_a_value_error_and_the_state_is_kept(backend, tokenizer) -> None:
    grammar = backend.dispatch_regex(r"(red|green|blue) [0-9]{1,3}")
    walk(grammar, encode(tokenizer, "red"))
    before = allowed(grammar)
    bad = encode(tokenizer, "x")[0]
    assert bad not in before
    with pytest.raises(ValueError, match="leapgram: token"):
        grammar.accept_token(bad)
    assert allowed(grammar) == before
    walk(grammar, encode(tokenizer, " 42"))
    grammar.accept_token(EOS)
    assert grammar.is_terminated()


@pytest.mark.parametrize("key_type, text, sample", [
    ("json", lg.ANY_JSON, "[1, true]"),
    ("json", '{"type": "object"}', '{"a": 1}'),
    ("regex", r"(alpha|beta|gamma)", "beta"),
    ("ebnf", 'root ::= "yes" | "no" " " number\nnumber ::= [0-9]+', "no 12"),
    ("ebnf", 'start: "yes" | "no" " " NUMBER\nNUMBER: /[0-9]+/', "no 12"),  # Lark, as vLLM tells them apart
])
def test_request_types_through_sglangs_dispatch(backend, tokenizer, key_type: str, text: str, sample: str) -> None:
    grammar = backend._init_value_dispatch((key_type, text), False)  # SGLang's own dispatch by key type
    assert isinstance(grammar, lg.LeapgramSglangGrammar), grammar
    walk(grammar, encode(tokenizer, sample))
    grammar.accept_token(EOS)
    assert grammar.is_terminated()


def test_structural_tags_both_forms(backend, tokenizer) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    legacy = {"type": "structural_tag", "structures": [
        {"begin": "<function=get_weather>", "schema": schema, "end": "</function>"}], "triggers": ["<function="]}
    current = {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<function="], "tags": [
        {"begin": "<function=get_weather>", "content": {"type": "json_schema", "json_schema": schema},
         "end": "</function>"}]}}
    for tag in (legacy, current):
        grammar = backend.dispatch_structural_tag(json.dumps(tag))
        assert isinstance(grammar, lg.LeapgramSglangGrammar), grammar
        walk(grammar, encode(tokenizer, 'Sure. <function=get_weather>{"city": "Oslo"}</function>'))
        assert EOS in allowed(grammar)


def test_structural_tags_as_sglangs_openai_route_serializes_them(backend, tokenizer) -> None:
    from sglang.srt.entrypoints.openai.protocol import ChatCompletionRequest

    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    formats = [{"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<function="], "tags": [
                   {"begin": "<function=get_weather>", "content": {"type": "json_schema", "json_schema": schema},
                    "end": "</function>"}]}},
               {"type": "structural_tag", "structures": [{"begin": "<function=get_weather>", "schema": schema,
                                                          "end": "</function>"}], "triggers": ["<function="]}]
    for response_format in formats:
        request = ChatCompletionRequest(model="m", messages=[{"role": "user", "content": "x"}],
                                        response_format=response_format)
        grammar = backend.dispatch_structural_tag(json.dumps(request.response_format.model_dump(by_alias=True)))
        walk(grammar, encode(tokenizer, '<function=get_weather>{"city": "Oslo"}</function>'))
        assert EOS in allowed(grammar)


@pytest.mark.parametrize("key_type, text, message", [
    ("json", json.dumps({"type": "object", "properties": {"n": {"type": "integer", "maximum": "ten"}}}), "maximum"),
    ("json", "{not json", "leapgram"),
    ("regex", "(unclosed", "leapgram"),
    ("ebnf", 'root ::= "a" | undefined', "undefined"),
    ("structural_tag", json.dumps({"type": "structural_tag", "format": {"type": "nonsense"}}), "leapgram"),
])
def test_bad_grammars_are_invalid_grammar_objects_with_leapgram_message(backend, key_type, text, message) -> None:
    grammar = backend._init_value_dispatch((key_type, text), False)
    assert isinstance(grammar, InvalidGrammarObject)
    assert grammar.error_message.startswith("leapgram: ") and message in grammar.error_message


def test_copy_is_a_fresh_state_on_the_same_compiled_grammar(backend, tokenizer) -> None:
    grammar = backend.dispatch_regex("abc|abd")
    walk(grammar, encode(tokenizer, "ab"))
    fresh = grammar.copy()
    assert fresh.matcher.compiled is grammar.matcher.compiled
    assert fresh.matcher.num_tokens == 0 and not fresh.is_terminated() and not fresh.finished
    walk(fresh, encode(tokenizer, "abd"))
    assert grammar.matcher.num_tokens == len(encode(tokenizer, "ab"))


def test_masks_match_the_matcher_and_batched_fill(backend) -> None:
    grammars = [backend.dispatch_json(json.dumps(CITY)), backend.dispatch_regex("[0-9]+"), None,
                backend.dispatch_ebnf('root ::= "x"+')]
    mask = grammars[0].allocate_vocab_mask(VOCAB, len(grammars), "cpu")
    assert mask.dtype == torch.int32 and mask.shape == (4, VOCAB // 32) and bool((mask == -1).all())
    entries = [GrammarRow(row=row, grammar=g) for row, g in enumerate(grammars) if g is not None]
    grammars[0].fill_vocab_mask_batched(entries, mask)
    assert bool((mask[2] == -1).all())  # rows without a grammar keep "everything allowed"
    for row, grammar in enumerate(grammars):
        if grammar is not None:
            expected = leapgram.allocate_token_bitmask(1, VOCAB)
            grammar.matcher.fill_next_token_bitmask(expected, 0)
            np.testing.assert_array_equal(mask[row].numpy(), expected[0])
    logits = torch.zeros(4, VOCAB)
    grammars[0].apply_vocab_mask(logits, mask)
    for row, grammar in enumerate(grammars):
        finite = set(torch.nonzero(torch.isfinite(logits[row])).flatten().tolist())
        assert finite == (set(range(VOCAB)) if grammar is None else allowed(grammar))
    grammars[0].reset_vocab_mask(mask)
    assert bool((mask == -1).all())
    assert grammars[0].move_vocab_mask(mask, "cpu").equal(mask)


def test_padded_model_vocabulary_keeps_extra_ids_masked(tokenizer) -> None:
    padded = lg.LeapgramGrammarBackend(tokenizer, VOCAB + 100, {EOS})
    grammar = padded.dispatch_json(lg.ANY_JSON)
    mask = grammar.allocate_vocab_mask(VOCAB + 100, 1, "cpu")
    assert mask.shape == (1, (VOCAB + 100 + 31) // 32)
    grammar.fill_vocab_mask(mask, 0)
    assert max(leapgram.allowed_tokens(mask.numpy()[0], VOCAB + 100)) < VOCAB
    logits = torch.zeros(1, VOCAB + 100)
    grammar.apply_vocab_mask(logits, mask)
    assert bool(torch.isinf(logits[0, VOCAB:]).all())


def test_model_eos_ids_are_the_stop_tokens(tokenizer) -> None:
    """SGLang passes the model's EOS ids (generation config); the tokenizer's EOS is not one here."""
    other = encode(tokenizer, "<|im_start|>")[0]
    custom = lg.LeapgramGrammarBackend(tokenizer, VOCAB, [other])
    grammar = custom.dispatch_regex("ok")
    walk(grammar, encode(tokenizer, "ok"))
    assert other in allowed(grammar) and EOS not in allowed(grammar)
    grammar.accept_token(other)
    assert grammar.is_terminated()


def test_special_tokens_other_than_the_stops_are_never_allowed(backend, tokenizer) -> None:
    grammar = backend.dispatch_json(lg.ANY_JSON)
    specials = set(tokenizer.all_special_ids) - {EOS}
    assert specials and not specials & allowed(grammar)


def test_sglangs_cache_path_is_bounded_and_copies(tokenizer) -> None:
    small = lg.LeapgramGrammarBackend(tokenizer, VOCAB, {EOS}, cache_size=2)
    keys = [("regex", "a+"), ("regex", "b+"), ("regex", "c+")]
    for key in keys:
        value, hit = small.get_cached_or_future_value(key, False)
        assert not hit
        small.set_cache(key, value.result().copy())  # what SGLang's GrammarManager does
    assert list(small.cache) == keys[1:]
    value, hit = small.get_cached_or_future_value(keys[1], False)
    assert hit and isinstance(value, lg.LeapgramSglangGrammar) and value is not small.cache[keys[1]]
    small.set_cache(keys[0], InvalidGrammarObject("x"))
    assert list(small.cache) == [keys[1], keys[0]]  # keys[1] was used last, so keys[2] went


def test_sglangs_cache_is_bounded_by_memory_too(tokenizer) -> None:
    small = lg.LeapgramGrammarBackend(tokenizer, VOCAB, {EOS}, cache_size=8, max_bytes=1)
    keys = [("regex", "a+"), ("regex", "b+")]
    for key in keys:
        value, _ = small.get_cached_or_future_value(key, False)
        small.set_cache(key, value.result().copy())
    assert list(small.cache) == keys[1:]  # the newest stays, even over the budget
    small.set_cache(keys[0], InvalidGrammarObject("x"))  # holds no grammar: costs nothing, but is newest
    assert list(small.cache) == [keys[0]]


def test_sglangs_max_bytes_zero_means_no_memory_bound(tokenizer, monkeypatch) -> None:
    monkeypatch.setenv("LEAPGRAM_SGLANG_CACHE_MB", "1")
    assert lg.LeapgramGrammarBackend(tokenizer, VOCAB, {EOS}, max_bytes=0).max_bytes is None
    assert lg.LeapgramGrammarBackend(tokenizer, VOCAB, {EOS}).max_bytes == 2**20


def test_a_precompute_budget_computes_masks_at_compile(tokenizer, monkeypatch) -> None:
    spec = json.dumps({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": False})
    monkeypatch.setenv("LEAPGRAM_SGLANG_PRECOMPUTE_MS", "10000")
    ahead = lg.LeapgramGrammarBackend(tokenizer, VOCAB, {EOS}).dispatch_json(spec)
    monkeypatch.delenv("LEAPGRAM_SGLANG_PRECOMPUTE_MS")
    plain = lg.LeapgramGrammarBackend(tokenizer, VOCAB, {EOS}).dispatch_json(spec)
    assert len(ahead.matcher.compiled._masks) > max(10, len(plain.matcher.compiled._masks))


def test_import_leapgram_integrations_sglang_imports_neither_sglang_nor_torch() -> None:
    import subprocess
    import sys

    code = ("import sys, leapgram.integrations.sglang; "
            "print(sorted(m for m in ('sglang', 'torch') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lg.grammar_for_key("regex", "a")  # no SGLang needed to build a grammar


def test_a_reasoning_parser_leaves_the_backend_unwrapped_and_bounded(tokenizer, monkeypatch) -> None:
    """SGLang 0.5.23's ``create_grammar_backend`` returns a registered backend as it is: only its
    built-in backends go into ``ReasonerGrammarBackend``, whose cache (a plain dict of its own) has
    no bound. So with ``--reasoning-parser`` the scheduler still talks to leapgram's backend and
    its bounds hold. Should a tested SGLang start wrapping registered backends, this fails."""
    from types import SimpleNamespace

    from sglang.srt import runtime_context
    from sglang.srt.constrained import base_grammar_backend as base

    serving = SimpleNamespace(reasoning_parser="qwen3", enable_strict_thinking=False,
                              constrained_json_whitespace_pattern=None, constrained_json_disable_any_whitespace=False)
    kernel = SimpleNamespace(kernel=SimpleNamespace(grammar_backend="leapgram"))
    for module in (base, runtime_context):
        monkeypatch.setattr(module, "get_serving", lambda: serving)
    monkeypatch.setattr(base, "get_exec", lambda: kernel)
    monkeypatch.setenv("LEAPGRAM_SGLANG_CACHE_SIZE", "2")
    assert lg.register()
    created = base.create_grammar_backend(None, tokenizer, VOCAB, {EOS}, think_end_ids=encode(tokenizer, "</think>"))
    assert type(created) is lg.LeapgramGrammarBackend
    keys = [("regex", "a+"), ("regex", "b+"), ("regex", "c+")]
    for key in keys:
        value, _ = created.get_cached_or_future_value(key, True)
        created.set_cache(key, value.result().copy())
    assert list(created.cache) == keys[1:]
