#!/usr/bin/env bash
# Creates .venv-sglang (once): SGLang 0.5.23 over .venv-vllm's packages, leapgram editable on top
# (its `sglang.srt.plugins` entry point registers `--grammar-backend leapgram`). Idempotent, quiet.
#
# SGLang has no CPU build of its dependencies on the registries (2026-11, SGLang 0.5.23):
# - `pip install sglang==0.5.23` pins torch==2.14.1, sglang-kernel==0.4.10 (CUDA kernels only),
#   flashinfer, cuda-python... So the wheel goes in with --no-deps, over .venv-vllm's packages
#   (torch 2.13.0+cpu, transformers, numba 0.65, openai, pytest) through a .pth file that adds
#   .venv-vllm's site-packages with site.addsitedir (its .pth files too: numba's cache folder),
#   plus what SGLang's imports ask for: orjson, ipython, traitlets, gguf, soundfile, pandas, and
#   PyPI's unrelated `cutlass` 0.9.0 to get past an `import cutlass`.
# - torchvision and torchaudio: SGLang's config and multimodal modules import them at start-up,
#   and the registry's wheels are CUDA builds that do not load against the CPU torch ("operator
#   torchvision::nms does not exist"). A stand-in package (any submodule, any attribute) is
#   written into .venv-sglang for both; text models never call them.
# - Then `python -m sglang.launch_server --device cpu --attention-backend torch_native` serves the
#   embedded SmolLM2-135M folder (tests/helpers/sglang_server.py; about 1-2 minutes to start).
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-sglang
bash scripts/setup_vllm.sh
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
site=$("$venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
vllm_site=$(.venv-vllm/bin/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
echo "import site; site.addsitedir('$vllm_site')" > "$site/zz-vllm-site.pth"
stamp="$venv/.leapgram-installed"
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ "$0" -nt "$stamp" ]; then
    "$venv/bin/python" -m pip install -q --no-deps "sglang==0.5.23" "orjson==3.13.0" "ipython==9.18.1" \
        "traitlets==5.16.1" "gguf==0.19.0" "soundfile==0.14.0" "pandas==3.1.1" "cutlass==0.9.0"
    "$venv/bin/python" -m pip install -q --no-deps -e .
    mkdir -p "$site/torchvision" "$site/torchaudio"
    cat > "$site/torchvision/__init__.py" <<'PY'
# leapgram's stand-in for torchvision and torchaudio (CUDA wheels only on the registries):
# any submodule, any attribute. Written by scripts/setup_sglang.sh.
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
PY
    printf 'import torchvision\n__version__ = "2.13.0"\n__path__ = []\n' > "$site/torchaudio/__init__.py"
    touch "$stamp"
fi
