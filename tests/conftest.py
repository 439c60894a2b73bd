"""Shared fixtures: offline by default, real sample data when ../shared/data is present."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest
import transformers.utils.logging as transformers_logging
from hypothesis import HealthCheck, settings

# Deterministic property tests (same examples every run) with no per-example deadline: a shared 2-core
# machine must not turn a slow example into a failure.
settings.register_profile("vlaudit", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("vlaudit")

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# Tiny models on a shared 2-core machine: thread hand-off costs far more than it saves.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# transformers binds its log handler to the sys.stderr of the moment it is first imported. Bind it to the real
# one here: imported first inside a CliRunner (which swaps sys.stderr for a buffer it then closes), its later
# warnings would land in whatever command output is being captured at that time.
transformers_logging.get_logger("vlaudit")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """The real data samples beside the repository; skips cleanly where a clone has none."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is absent (a user's clone has none)")
    return SHARED_DATA


class _NetworkRefused(RuntimeError):
    pass


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Refuse every socket connection (AF_UNIX stays allowed for local IPC)."""
    real_connect = socket.socket.connect

    def guarded_connect(self: socket.socket, address: object) -> object:
        if self.family == socket.AF_UNIX:
            return real_connect(self, address)
        raise _NetworkRefused(f"network access attempted: {address!r}")

    def refuse(*args: object, **kwargs: object) -> object:
        raise _NetworkRefused(f"network access attempted: {args!r}")

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


@pytest.fixture
def one_torch_thread():
    """Tiny models and matrices: one torch thread is fastest; restore the caller's setting afterwards."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def reference_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """VLAUDIT_CACHE for the reference models, one folder per session (built on first use, offline)."""
    root = tmp_path_factory.getbasetemp() / "vlaudit-reference-cache"
    root.mkdir(exist_ok=True)
    monkeypatch.setenv("VLAUDIT_CACHE", str(root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return root


@pytest.fixture
def cli(capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch):
    """``cli(*args) -> (exit status, stdout, stderr)`` of the real entry point, in-process."""
    from tests.cli_helpers import run_main

    return lambda *args: run_main([str(a) for a in args], capsys, monkeypatch)


@pytest.fixture
def versioned_outputs():
    """``check(root, expected={pattern: ResultType}, skip=(pattern, ...))``: every JSON file a command wrote
    under ``root`` carries ``schema_version`` (run manifests and files matching ``skip`` aside), and each file
    whose path relative to ``root`` matches a pattern of ``expected`` (``fnmatch``) reads back with that typed
    result's ``from_dict`` and writes the same keys again; every pattern must match a file."""
    import json
    from fnmatch import fnmatch

    def check(root: Path, expected: dict | None = None, skip: tuple[str, ...] = ()) -> list[Path]:
        expected, found, matched = expected or {}, [], set()
        for path in sorted(Path(root).rglob("*.json")):
            relative = path.relative_to(root).as_posix()
            if path.name == "manifest.json" or any(fnmatch(relative, pattern) for pattern in skip):
                continue
            data = json.loads(path.read_text(encoding="utf-8"))
            assert isinstance(data, dict) and isinstance(data.get("schema_version"), int), path
            for pattern, kind in expected.items():
                if fnmatch(relative, pattern):
                    assert kind.from_dict(data, path=path).to_dict() == data, path
                    matched.add(pattern)
            found.append(path)
        assert matched == set(expected), f"expected outputs not written: {sorted(set(expected) - matched)}"
        return found

    return check
