"""Fixtures of the tests that run a real vLLM (the vLLM environment: ``make test-vllm``; tests/conftest.py
skips this folder where vllm is not installed).

An engine on a shared CPU takes minutes to start, so every engine here is a session fixture, started once and
shared by every test that asks for it:

* ``hd32_model(family)``: a tiny random ``qwen2-vl`` / ``qwen2.5-vl`` with head_dim 32 (vLLM's CPU attention
  takes head sizes 32, 64, 80, ...), built from config in this environment's transformers, once per session;
* ``vllm_backend(family)``: the ``vllm:`` backend (in-process ``vllm.LLM``) on that model, one per family
  (eager for the families in ``EAGER``);
* ``hf_backend(family)``: the ``hf:`` backend on the same folder, the reference the margins are checked against;
* ``vllm_server``: ``vllm serve --enforce-eager`` on the tiny Qwen2-VL, on 127.0.0.1 only, as ``(base_url, model_name)``;
  started at its first use, killed at the session's end (the ``openai:`` backend's tests use it).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# vLLM's CPU engine in this process (start-up and memory halve); 1 GiB of KV cache covers the tiny models
os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
os.environ.setdefault("DO_NOT_TRACK", "1")

FAMILIES = ("qwen2-vl", "qwen2.5-vl")
#: the families whose engines start with --enforce-eager: no torch.compile at start-up (7 s instead of 28 s for
#: each engine on the CPU); qwen2.5-vl's in-process engine compiles, as vLLM does by default, so the margins
#: are checked against the hf: backend on both paths
EAGER = ("qwen2-vl",)
#: the served model's name on the test server
SERVED_NAME = "tiny-qwen2-vl"
#: the engine settings the server runs with: the same weights, numbers and limits as the offline engine
#: (docs/guide/served-models.md shows this command; tests/test_served_models_guide.py checks they agree)
SERVER_FLAGS = ("--dtype", "float32", "--block-size", "32", "--max-model-len", "4096", "--seed", "0",
                "--limit-mm-per-prompt", '{"image": 1, "video": 0}', "--max-logprobs", "20", "--enforce-eager")
#: how long the server may take to start on a shared 2-core machine before the fixture gives up
SERVER_START_S = 900


@pytest.fixture(scope="session")
def hd32_model(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``hd32_model(family)``: the folder of a tiny head_dim-32 ``family`` model, built once per session."""
    built: dict[str, Path] = {}

    def folder(family: str) -> Path:
        if family not in built:
            from vlaudit.backends.tiny.mllm import build_tiny_mllm

            built[family] = build_tiny_mllm(family, tmp_path_factory.mktemp(f"hd32-{family}"), head_dim=32)
        return built[family]

    return folder


@pytest.fixture(scope="session")
def vllm_model(hd32_model: Callable[[str], Path]) -> Callable[[str], Any]:
    """``vllm_model(family)``: the ``vllm:`` model reference with its engine options (eager for ``EAGER``), as
    the engine below is loaded and as a spec scored with that engine records it."""

    def model(family: str) -> Any:
        from vlaudit.backends.options import VllmOptions
        from vlaudit.backends.registry import ModelRef

        return ModelRef(f"vllm:{hd32_model(family)}", VllmOptions(enforce_eager=family in EAGER))

    return model


@pytest.fixture(scope="session")
def vllm_backend(vllm_model: Callable[[str], Any]) -> Callable[[str], Any]:
    """``vllm_backend(family)``: the ``vllm:`` backend on the tiny model (yes/no, true/false and letter
    interfaces), one engine per family for the whole session."""
    engines: dict[str, Any] = {}

    def backend(family: str) -> Any:
        if family not in engines:
            from vlaudit.backends.registry import load_backend

            engines[family] = load_backend(vllm_model(family), interfaces=["yesno", "truefalse", "letter"])
        return engines[family]

    return backend


@pytest.fixture(scope="session")
def hf_backend(hd32_model: Callable[[str], Path]) -> Callable[[str], Any]:
    """``hf_backend(family)``: the transformers backend on the same folder (fp32, batch 4)."""
    loaded: dict[str, Any] = {}

    def backend(family: str) -> Any:
        if family not in loaded:
            from vlaudit.backends.options import RunOptions
            from vlaudit.backends.registry import load_backend

            loaded[family] = load_backend(f"hf:{hd32_model(family)}", RunOptions(batch_size=4, device="cpu"),
                                          interfaces=["yesno", "truefalse", "letter"])
        return loaded[family]

    return backend


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=5) as response:  # noqa: S310 (loopback)
            return bool(response.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="session")
def vllm_server(hd32_model: Callable[[str], Path], tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[tuple[str, str]]:
    """``(base_url, model_name)`` of ``vllm serve`` on the tiny head_dim-32 Qwen2-VL, listening on 127.0.0.1
    only (``base_url`` ends in ``/v1``); the same engine settings as the offline backend. Its log is
    ``server.log`` in a session temp folder (named in the failure when it does not start)."""
    port = _free_port()
    log = tmp_path_factory.mktemp("vllm-server") / "server.log"
    # the API server module, not `vllm serve`: the CLI asks for a distribution named "vllm" (here "vllm-cpu")
    command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(hd32_model("qwen2-vl")),
               "--host", "127.0.0.1", "--port", str(port), "--served-model-name", SERVED_NAME, *SERVER_FLAGS]
    url = f"http://127.0.0.1:{port}"
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + SERVER_START_S
            while not _healthy(url):
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"vllm serve did not start (exit {server.poll()}); log: {log}")
                time.sleep(2)
            yield f"{url}/v1", SERVED_NAME
        finally:
            server.terminate()
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
