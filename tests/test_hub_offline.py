"""Without HF_HUB_OFFLINE on a machine that cannot reach the hub, an `hf:` model (and open_clip
weights, an `hf-dataset:`) not in the local cache fails in seconds with one line naming the way out, instead of
the hub libraries retrying for minutes (3 min 17 s for `hf:` before the fix).

The hub is made unreachable deterministically: HF_ENDPOINT points at a closed local port, so the test does not
depend on whether this machine has a network (it has none; the test suite runs with HF_HUB_OFFLINE=1, which
these subprocesses unset).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])  # closed again when this returns: a connection is refused


def _online_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "HTTPS_PROXY",
                        "https_proxy", "ALL_PROXY", "all_proxy")}
    env |= {"PYTHONPATH": str(REPO), "HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}",
            "HF_HOME": str(tmp_path / "hf-home"), "VLAUDIT_CACHE": str(tmp_path / "vlaudit-cache"),
            "OMP_NUM_THREADS": "1"}
    # the limit is the test: before the fix the hub was retried for minutes
    return subprocess.run([sys.executable, "-m", "vlaudit.cli", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=90)


def _one_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in done.stderr, done.stderr
    return " ".join(lines[0].split())


def test_an_uncached_hf_model_fails_fast_when_the_hub_cannot_be_reached(toy_items, tmp_path) -> None:
    toy_items(tmp_path)
    line = _one_line(_online_cli(tmp_path, "vca", "score", "--model", "hf:vlaudit-tests/never-downloaded",
                                 "--benchmark", "items.jsonl", "--images", "images", "--out", "run"))
    assert "'vlaudit-tests/never-downloaded' is not in the local Hugging Face cache" in line
    assert "cannot be reached" in line and "HF_HUB_OFFLINE=1" in line and "hf:/path/to/model" in line
    assert not (tmp_path / "run" / "manifest.json").exists()


def test_open_clip_weights_fail_fast_when_the_hub_cannot_be_reached(tmp_path) -> None:
    pytest.importorskip("open_clip")
    (tmp_path / "images").mkdir()
    (tmp_path / "cycles.jsonl").write_text(json.dumps({
        "cycle_id": "c", "family": "toy", "image_1": "a", "image_2": "b", "caption_1": "x", "caption_2": "y",
        "text_1": "a dog", "text_2": "a cat", "file_name_1": "a.png", "file_name_2": "b.png"}) + "\n")
    from PIL import Image

    for name in ("a", "b"):
        Image.new("RGB", (16, 16)).save(tmp_path / "images" / f"{name}.png")
    line = _one_line(_online_cli(tmp_path, "features", "--model", "open_clip:ViT-B-32/laion2b_s34b_b79k",
                                 "--cycles", "cycles.jsonl", "--images", "images", "--out", "feats"))
    assert "not in the local cache" in line and "cannot be reached" in line and "HF_HUB_OFFLINE=1" in line


def test_an_uncached_hub_dataset_fails_fast_when_the_hub_cannot_be_reached(tmp_path) -> None:
    pytest.importorskip("datasets")
    line = _one_line(_online_cli(tmp_path, "data", "vsr", "hf-dataset:vlaudit-tests/never-downloaded",
                                 "--out", "items.jsonl"))
    assert "cannot load the dataset" in line and "cannot be reached" in line and "HF_HUB_OFFLINE=1" in line
    assert "save_to_disk" in line


def test_the_hub_probe_names_what_it_could_not_reach(monkeypatch) -> None:
    from vlaudit.sources import hub_access

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        monkeypatch.setattr(hub_access.constants, "ENDPOINT", f"http://127.0.0.1:{port}")
        for name in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
        hub_access.hub_reachable.cache_clear()
        assert hub_access.hub_reachable() is None  # a listening host is reachable
    hub_access.hub_reachable.cache_clear()
    reason = hub_access.hub_reachable()
    assert reason is not None and reason.startswith(f"127.0.0.1:{port} cannot be reached (")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.invalid:3128")  # behind a proxy, the proxy is what is reached
    assert hub_access._hub_address() == ("proxy.invalid", 3128)
    hub_access.hub_reachable.cache_clear()
