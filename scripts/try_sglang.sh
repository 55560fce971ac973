#!/usr/bin/env bash
# A record, runnable, of the SGLang 0.5.23 trial on this CPU-only machine (issue 21, item 5).
# Not part of CI: SGLang starts here only with import shims, so no leapgram grammar backend is
# registered for it yet.
#
# What it took (2026-11, SGLang 0.5.23, after `bash scripts/setup_vllm.sh`):
# - `pip install sglang==0.5.23` pins torch==2.14.1, sglang-kernel==0.4.10 (CUDA kernels only:
#   sm90/sm100 .so files, no CPU build on PyPI), flashinfer, cuda-python, nvidia-cutlass-dsl...
#   So: the wheel with --no-deps, over .venv-vllm's packages (torch 2.13.0+cpu, transformers
#   5.19, xgrammar, llguidance) through a .pth file, plus what import asks for: orjson, ipython,
#   traitlets, gguf, soundfile, and PyPI's unrelated `cutlass` 0.9.0 to get past an `import cutlass`.
# - torchvision and torchaudio: SGLang's config and multimodal modules import them at start-up,
#   and the registry's wheels are CUDA builds that do not load against the CPU torch
#   ("operator torchvision::nms does not exist", "Could not load this library:
#   _torchaudio.abi3.so"). A shim package (below) stands in for both.
# - Then `python -m sglang.launch_server --device cpu --attention-backend torch_native` serves the
#   embedded SmolLM2-135M folder (about 2 minutes to "fired up", under load), and a /generate
#   request with a json_schema through SGLang's xgrammar backend returned valid JSON.
# - SGLang has a public registry for grammar backends (`register_grammar_backend(name, init)` in
#   srt/constrained/base_grammar_backend.py, entry-point group `sglang.srt.plugins`) and a batched
#   fill hook (`BaseGrammarObject.fill_vocab_mask_batched`): the place for leapgram's backend.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-sglang
[ -x .venv-vllm/bin/python ] || bash scripts/setup_vllm.sh
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
vllm_site=$(.venv-vllm/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
site=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
echo "$vllm_site" > "$site/zz-vllm-site.pth"
"$venv/bin/pip" install -q --no-deps "sglang==0.5.23" orjson ipython traitlets gguf soundfile cutlass
shim="$PWD/$venv/shim"
mkdir -p "$shim/torchvision" "$shim/torchaudio"
cat > "$shim/torchvision/__init__.py" <<'EOF'
# Stands in for torchvision and torchaudio (CUDA wheels only): any submodule, any attribute.
import importlib.abc, importlib.machinery, sys, types
__version__ = "0.28.0"
__path__ = []
class _Any(types.ModuleType):
    __path__ = []
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Any(self.__name__ + "." + name)
    def __call__(self, *a, **k):
        return _Any("call")
    def __mro_entries__(self, bases):
        return (object,)
class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name.startswith(("torchvision.", "torchaudio.")):
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
    def create_module(self, spec):
        return _Any(spec.name)
    def exec_module(self, module):
        pass
sys.meta_path.insert(0, _Finder())
EOF
printf 'import torchvision\n__version__ = "2.13.0"\n__path__ = []\n' > "$shim/torchaudio/__init__.py"
model=$(.venv/bin/python -c "from leapgram.integrations import smollm2 as m; print(m.cache_dir())")
echo "starting SGLang on 127.0.0.1:30123 (Ctrl-C stops it); then:"
echo "  curl -s http://127.0.0.1:30123/generate -H 'Content-Type: application/json' \\"
echo "    -d '{\"text\": \"A person as JSON:\", \"sampling_params\": {\"max_new_tokens\": 30, \"json_schema\": \"{\\\"type\\\":\\\"object\\\"}\"}}'"
cd /tmp
PYTHONPATH="$shim" exec "$OLDPWD/$venv/bin/python" -m sglang.launch_server --model-path "$model" --device cpu \
    --host 127.0.0.1 --port 30123 --dtype float32 --grammar-backend xgrammar --attention-backend torch_native
