"""Start-up does only the work asked: ``models list`` imports neither torch nor
transformers, and a rerun of a finished ``vca score`` run with nothing changed is answered from the run folder
without loading the model (no torch for a planted model whose loader needs it); anything changed since — an
image, the model's files, ``--overwrite`` — takes the ordinary path. Behaviour, never timings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import benchmark_releases
import pytest

import vlaudit
import vlaudit.reference.load
from vlaudit.api.margins import Margins

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "transformers", "matplotlib")


def _imported(args: list[str], cwd: Path) -> tuple[set[str], str]:
    """The top-level packages a fresh ``python -m vlaudit ARGS`` imported (``-X importtime``), and its stdout."""
    env = os.environ | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "vlaudit", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    names = {line.rsplit("|", 1)[1].strip().split(".")[0] for line in done.stderr.splitlines()
             if line.startswith("import time:") and "|" in line}
    return names, done.stdout


@pytest.mark.slow  # a fresh interpreter
def test_models_list_imports_no_torch(tmp_path: Path) -> None:
    imported, out = _imported(["models", "list"], tmp_path)
    assert "understands:" in out
    assert imported & set(HEAVY) == set()


def _score(root: Path, **options: object) -> Margins:
    return vlaudit.score_margins(vlaudit.ScoreSpec.of(model="ref:scene-vqa-grounded", benchmark=root / "pope.jsonl",
                                                      images=root / "images", out=root / "run"), **options)


@pytest.fixture
def finished(tmp_path: Path) -> Path:
    """A finished run of the planted scene reader (a torch model) on a small POPE release."""
    vlaudit.build_benchmark_items("pope", benchmark_releases.pope(tmp_path), out=tmp_path / "pope.jsonl",
                                  images=tmp_path / "images")
    first = _score(tmp_path)
    assert first.summary.n_units_scored_now == first.summary.n_unique_units > 0
    return tmp_path


def _no_model_load(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(vlaudit.reference.load, "load_backend", refuse)


def test_a_rerun_of_a_finished_run_does_not_load_the_model(finished: Path, monkeypatch) -> None:
    before = (finished / "run" / "margins.parquet").read_bytes()
    _no_model_load(monkeypatch)
    plans: list[tuple[int, int]] = []
    again = _score(finished, on_plan=lambda total, cached: plans.append((total, cached)))
    summary = again.summary
    assert summary.n_units_scored_now == 0 and summary.n_units_from_cache == summary.n_unique_units
    assert plans == [(summary.n_unique_units, summary.n_unique_units)]
    assert (finished / "run" / "margins.parquet").read_bytes() == before
    assert json.loads((finished / "run" / "summary.json").read_text())["n_units_scored_now"] == 0
    assert again.warnings  # the planted reader understands no POPE question: still said on a rerun


@pytest.mark.parametrize("change", ["image", "model files", "overwrite"])
def test_anything_changed_takes_the_ordinary_path(finished: Path, monkeypatch, change: str) -> None:
    loads: list[str] = []
    real = vlaudit.reference.load.load_backend

    def counted(*args: object, **kwargs: object) -> object:
        loads.append(str(args[0]))
        return real(*args, **kwargs)

    monkeypatch.setattr(vlaudit.reference.load, "load_backend", counted)
    options: dict[str, object] = {}
    if change == "image":
        image = next(p for p in sorted((finished / "images").iterdir()) if p.suffix == ".png")
        image.write_bytes(benchmark_releases.png((10, 20, 30)))
    elif change == "model files":
        manifest = finished / "run" / "manifest.json"
        recorded = json.loads(manifest.read_text())
        recorded["model_files"] = {"reference": {"scene-vqa-grounded.safetensors": "0" * 64}}
        manifest.write_text(json.dumps(recorded))
    else:
        options["overwrite"] = True
    again = _score(finished, **options)
    assert loads == ["scene-vqa-grounded"]
    if change == "image":
        assert again.summary.n_units_scored_now > 0  # the changed image's contexts are scored again
    else:
        assert again.summary.n_units_scored_now == 0  # loaded to check, then every unit from the cache


@pytest.mark.slow  # fresh interpreters
def test_a_cached_rerun_on_the_command_line_imports_no_torch(tmp_path: Path) -> None:
    vlaudit.build_benchmark_items("pope", benchmark_releases.pope(tmp_path), out=tmp_path / "pope.jsonl",
                                  images=tmp_path / "images")
    args = ["vca", "score", "--model", "ref:scene-vqa-grounded", "--benchmark", "pope.jsonl", "--images", "images",
            "--out", "run"]
    first, _ = _imported(args, tmp_path)
    assert "torch" in first  # the planted reader is a torch model: scoring loads it
    again, out = _imported(args, tmp_path)
    assert "n_units_scored_now" in out and again & set(HEAVY) == set()


def test_a_damaged_cache_chunk_takes_the_ordinary_path_and_is_named(finished: Path) -> None:
    chunk = sorted((finished / "run" / "cache").glob("chunk-*.jsonl"))[0]
    chunk.write_bytes(chunk.read_bytes()[:-10])
    warned: list[str] = []
    again = _score(finished, on_warning=warned.append)
    assert any(str(chunk) in line for line in warned)
    assert again.summary.n_units_scored_now > 0 and again.summary.damaged_cache_chunks
