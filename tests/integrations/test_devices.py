"""Masks and generation with the model and logits on a GPU, and prompts the loop must not choke on.

The ``gpu`` checks run where torch sees a CUDA device (CI has none: docs/design/generation.md,
"On a GPU"); ``LEAPGRAM_TEST_DEVICE=cpu`` runs them on the CPU instead, to debug the tests. The
model is a tiny Llama with random weights (seeded), made here from a config: the checks are about
where tensors live and what the loop keeps, not about what a trained model writes. The tokenizer
is SmolLM2's, from tests/data.
"""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest

import leapgram

torch = pytest.importorskip("torch", reason="needs torch: pip install 'leapgram[torch]'")
# LEAPGRAM_TEST_DEVICE=cpu runs the same checks without a GPU (to debug the tests themselves)
transformers = pytest.importorskip("transformers")
DEVICE = torch.device(os.environ.get("LEAPGRAM_TEST_DEVICE", "cuda"))
gpu = pytest.mark.skipif(DEVICE.type == "cuda" and not torch.cuda.is_available(), reason="needs a CUDA device")

from conftest import tokenizer_path

from leapgram.integrations.torch import apply_token_bitmask_torch
from leapgram.integrations.transformers import (
    LeapgramLogitsProcessor,
    compile_for,
    generate,
    vocabulary_of,
)

PATTERN = r'\{"name": "[a-z]{1,4}", "age": [1-9][0-9]?\}'
SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "maxLength": 4},
                                           "age": {"type": "integer", "minimum": 1, "maximum": 99}},
          "required": ["name", "age"], "additionalProperties": False}
PROMPTS = ["Write a person as JSON:", "A record:\n", "{"]


@pytest.fixture(scope="module")
def tokenizer():
    return transformers.AutoTokenizer.from_pretrained(str(tokenizer_path("smollm2")))


def tiny_model(tokenizer, device: torch.device):
    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128,
                                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                      max_position_embeddings=512, tie_word_embeddings=True)
    return transformers.LlamaForCausalLM(config).to(device).eval()


@pytest.fixture(scope="module")
def model(tokenizer):
    if DEVICE.type == "cuda" and not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    return tiny_model(tokenizer, DEVICE)


def _random_bitmask(rng: np.random.Generator, batch: int, vocab_size: int) -> np.ndarray:
    mask = leapgram.allocate_token_bitmask(batch, vocab_size)
    mask[:] = rng.integers(-(2**31), 2**31, size=mask.shape, dtype=np.int64).astype(np.int32)
    return mask


@gpu
@pytest.mark.parametrize("vocab_size", [1, 33, 49152, 151_000])
def test_bitmask_on_cuda_logits(vocab_size: int) -> None:
    """A numpy, CPU-tensor or DEVICE-tensor bitmask masks DEVICE logits as numpy masks CPU ones."""
    rng = np.random.default_rng(vocab_size)
    mask = _random_bitmask(rng, 3, vocab_size)
    logits = rng.standard_normal((3, vocab_size)).astype(np.float32)
    expected = leapgram.apply_token_bitmask(logits.copy(), mask)
    for bitmask in (mask, torch.from_numpy(mask), torch.from_numpy(mask).to(DEVICE)):
        on_gpu = torch.from_numpy(logits.copy()).to(DEVICE)
        assert apply_token_bitmask_torch(on_gpu, bitmask) is on_gpu
        assert on_gpu.device.type == DEVICE.type
        np.testing.assert_array_equal(on_gpu.cpu().numpy(), expected)
    on_gpu = torch.from_numpy(logits.copy()).to(DEVICE)
    assert leapgram.apply_token_bitmask(on_gpu, mask) is on_gpu
    np.testing.assert_array_equal(on_gpu.cpu().numpy(), expected)


@gpu
def test_bitmask_filled_on_cpu_moved_without_blocking(tokenizer) -> None:
    """SGLang's path: a CPU int32 tensor filled by matchers, moved with ``non_blocking=True``,
    applied to the batch's logits on the GPU; each row keeps exactly its matcher's tokens."""
    vocab = vocabulary_of(tokenizer)
    compiled = compile_for(SCHEMA, vocab)
    matchers = [leapgram.Matcher(compiled) for _ in range(4)]
    for step, matcher in enumerate(matchers):
        matcher.consume_tokens(tokenizer('{"name": "ab', add_special_tokens=False)["input_ids"][:step])
    cpu_mask = torch.full((4, (vocab.size + 31) // 32), -1, dtype=torch.int32)
    for row, matcher in enumerate(matchers):
        matcher.fill_next_token_bitmask(cpu_mask.numpy(), row)
    logits = torch.zeros((4, vocab.size), device=DEVICE)
    apply_token_bitmask_torch(logits, cpu_mask.to(DEVICE, non_blocking=True))
    allowed = torch.isfinite(logits).cpu().numpy()
    for row, matcher in enumerate(matchers):
        expected = np.zeros(vocab.size, dtype=bool)
        expected[leapgram.allowed_tokens(cpu_mask.numpy()[row], vocab.size)] = True
        np.testing.assert_array_equal(allowed[row], expected)


@gpu
@pytest.mark.parametrize("batch_size", [1, 3])
def test_generate_on_cuda_keeps_the_greedy_tokens(model, tokenizer, batch_size: int) -> None:
    """leapgram's loop with the model on the GPU: every mode writes the plain greedy output."""
    grammar = leapgram.Grammar.from_regex(PATTERN)
    runs = {mode: generate(model, tokenizer, PROMPTS, grammar, max_new_tokens=40, jump_forward=mode,
                           batch_size=batch_size)
            for mode in (False, True, "verify", "draft")}
    for results in runs.values():
        for result in results:
            assert result.is_complete and re.fullmatch(PATTERN, result.text), result
    plain = [r.tokens for r in runs[False]]
    assert [r.tokens for r in runs["verify"]] == plain
    assert [r.tokens for r in runs["draft"]] == plain
    assert sum(r.stats.fast_forwarded_tokens for r in runs["draft"]) > 0


@gpu
def test_generate_on_cuda_json_schema_and_sampling(model, tokenizer) -> None:
    grammar = leapgram.Grammar.from_json_schema(SCHEMA, whitespace="compact")
    for seed in (1, 2):
        results = generate(model, tokenizer, PROMPTS, grammar, max_new_tokens=60, temperature=1.0,
                           seed=seed, batch_size=2)
        for result in results:
            assert result.finish_reason in ("grammar", "eos", "length"), result
            if result.is_complete:
                value = json.loads(result.text)
                assert set(value) == {"name", "age"} and 1 <= value["age"] <= 99 and len(value["name"]) <= 4


@gpu
def test_logits_processor_with_generate_on_cuda(model, tokenizer) -> None:
    grammar = leapgram.Grammar.from_regex(PATTERN)
    processor = LeapgramLogitsProcessor(grammar, tokenizer)
    inputs = tokenizer(PROMPTS[:1], return_tensors="pt").to(DEVICE)
    out = model.generate(**inputs, logits_processor=[processor], max_new_tokens=40, do_sample=False,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.eos_token_id)
    text = tokenizer.decode(out[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
    assert processor.matchers[0].is_accepting() or processor.matchers[0].is_terminated(), text
    json.loads(text)


@pytest.mark.parametrize("jump_forward", [False, True, "verify", "draft"])
def test_prompt_of_one_healable_token(tokenizer, jump_forward) -> None:
    """A prompt whose only token healing would take back is kept whole (the model needs one token
    to read); an empty prompt is a clear error. On the CPU: it needs no GPU."""
    model = tiny_model(tokenizer, torch.device("cpu"))
    grammar = leapgram.Grammar.from_regex(PATTERN)
    [result] = generate(model, tokenizer, "{", grammar, max_new_tokens=30, jump_forward=jump_forward)
    assert result.is_complete and re.fullmatch(PATTERN, result.text), result
    with pytest.raises(ValueError, match="no tokens"):
        generate(model, tokenizer, "", grammar, max_new_tokens=5)
