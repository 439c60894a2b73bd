"""`compare vca` reads each run's noise floor: the compared decisions inside it, the noise band of a paired
difference, and "noise floor not measured" for a run without one; a standalone report folder is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import vlaudit
from vlaudit.cli import app
from vlaudit.errors import InputError
from vlaudit.files import write_jsonl, write_result
from vlaudit.metrics.vca.support import image_gap
from vlaudit.results.vca.checks import StabilityForwards, StabilitySample
from vlaudit.results.vca.outputs import StabilityResult

CONTEXTS = ("original", "text", "blank")
N = 40


def _margins(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.arange(N) % 2 == 0
    original = rng.normal(0, 1, N) + np.where(labels, 0.8, -0.8)
    return {"original": original, "text": rng.normal(0, 1, N), "blank": rng.normal(0, 1, N)}


def _run(folder: Path, model: str, seed: int, tau: float | None) -> tuple[Path, dict[str, np.ndarray]]:
    """A run folder of ``model`` (margins.jsonl) and, with ``tau``, its stability.json through the writer."""
    margins = _margins(seed)
    rows: list[dict[str, Any]] = [
        {"model": model, "dataset": "toy", "item_id": f"q{k:03d}", "context": c, "margin": float(margins[c][k]),
         "label": "yes" if k % 2 == 0 else "no", "source_sha256": f"img{k}"} for k in range(N) for c in CONTEXTS]
    folder.mkdir(parents=True)
    write_jsonl(folder / "margins.jsonl", rows)
    if tau is not None:
        write_result(folder / "stability.json", StabilityResult(
            model=model, spec=model, run=str(folder),
            sample=StabilitySample(n_items=N, seed=0, requested=None, n_units=N, n_records=N * len(CONTEXTS),
                                   contexts=list(CONTEXTS), interfaces=["yesno"]),
            perturbations=[], noise_floor=tau, floor_definition="planted",
            forwards=StabilityForwards(baseline_from_run_cache=N, scored_now=0, total_perturbed=0,
                                       per_sampled_item=0.0)))
    return folder / "margins.jsonl", margins


def _compare(paths: list[Path], **options: Any) -> dict[str, Any]:
    return dict(vlaudit.compare_vca(paths, n_resamples=50, n_permutations=50, **options).data)


def _rows(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["metric"]: r for r in data["comparisons"] if r["family"] == "all"}


def test_a_zero_floor_gives_a_band_equal_to_the_point_difference(tmp_path: Path) -> None:
    a, _ = _run(tmp_path / "a", "a", 0, 0.0)
    b, _ = _run(tmp_path / "b", "b", 1, 0.0)
    data = _compare([a, b])
    for model in data["models"]:
        noise = model["datasets"]["toy/yesno"]["noise"]
        assert noise["measured"] and noise["n_decision"] == 0 and noise["n_credit"] == 0
    for metric in ("acc", "dep", "dcc"):
        row = _rows(data)[metric]
        assert row["noise_band"] == pytest.approx([row["difference"], row["difference"]], abs=1e-12), metric
    assert "noise_band" not in _rows(data)["strict"]


def test_a_planted_floor_flags_exactly_the_items_inside_it(tmp_path: Path) -> None:
    tau = 0.4
    a, margins = _run(tmp_path / "a", "a", 2, tau)
    b, _ = _run(tmp_path / "b", "b", 3, None)
    data = _compare([a, b])
    noise_a = data["models"][0]["datasets"]["toy/yesno"]["noise"]
    ids = np.array([f"q{k:03d}" for k in range(N)])
    gap = image_gap(margins)
    assert noise_a["tau"] == tau and noise_a["n_items"] == N
    assert noise_a["decision_items"] == sorted(ids[np.abs(margins["original"]) <= tau].tolist())
    assert noise_a["credit_items"] == sorted(ids[np.abs(gap) <= 2 * tau].tolist())
    assert 0 < noise_a["n_decision"] < N and 0 < noise_a["n_credit"] < N
    assert data["models"][1]["datasets"]["toy/yesno"]["noise"] == {
        "measured": False, "note": data["models"][1]["datasets"]["toy/yesno"]["noise"]["note"]}
    assert "noise floor not measured" in data["models"][1]["datasets"]["toy/yesno"]["noise"]["note"]
    assert _rows(data)["acc"]["noise_band"] is None  # B has no floor: no band


def test_the_band_holds_the_difference_and_spans_everything_when_every_item_is_flagged(tmp_path: Path) -> None:
    a, _ = _run(tmp_path / "a", "a", 4, 0.3)
    b, _ = _run(tmp_path / "b", "b", 5, 0.2)
    rows = _rows(_compare([a, b]))
    for metric in ("acc", "dep", "dcc"):
        low, high = rows[metric]["noise_band"]
        assert low <= rows[metric]["difference"] <= high and low < high
    wide_a, _ = _run(tmp_path / "wa", "a", 4, 1e6)
    wide_b, _ = _run(tmp_path / "wb", "b", 5, 1e6)
    wide = _rows(_compare([wide_a, wide_b]))
    assert wide["acc"]["noise_band"] == [-1.0, 1.0] and wide["dep"]["noise_band"] == [-1.0, 1.0]


def test_the_console_prints_the_floor_per_model_at_80_columns(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    a, _ = _run(tmp_path / "a", "model-with-a-long-name-a", 6, 0.4)
    b, _ = _run(tmp_path / "b", "model-with-a-long-name-b", 7, None)
    monkeypatch.chdir(tmp_path)  # relative paths: the width checked is the command's, not the temp folder's
    result = CliRunner().invoke(app, ["compare", "vca", str(a.relative_to(tmp_path)), str(b.relative_to(tmp_path)),
                                      "--out", "o",
                                      "--resamples", "50", "--permutations", "50"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "inside the noise" in result.output and "noise floor not measured" in result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    assert CliRunner().invoke(app, ["report", str(tmp_path / "o")]).exit_code == 0
    page = (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
    assert "noise band" in page and "inside the noise" in page


def test_a_report_folder_away_from_its_run_is_refused_in_one_line(tmp_path: Path) -> None:
    a, _ = _run(tmp_path / "a", "a", 8, None)
    b, _ = _run(tmp_path / "b", "b", 9, None)
    report = CliRunner().invoke(app, ["vca", "report", str(b), "--out", str(tmp_path / "standalone"),
                                      "--no-plot", "--resamples", "20"])
    assert report.exit_code == 0, report.output
    assert (tmp_path / "standalone" / "items.csv").is_file()
    with pytest.raises(InputError) as error:
        _compare([a, tmp_path / "standalone"])
    message = str(error.value)
    assert "\n" not in message and "standalone" in message
    assert "margins" in message and "run folder" in message


def test_both_runs_with_a_floor_write_the_band_as_two_csv_columns(tmp_path: Path) -> None:
    """With stability.json beside both runs `compare vca` exited 1 (pyarrow ArrowInvalid: a
    list in a CSV cell); the band is written as noise_band_lo / noise_band_hi, empty where a row has none."""
    import csv

    a, _ = _run(tmp_path / "a", "a", 10, 0.3)
    b, _ = _run(tmp_path / "b", "b", 11, 0.2)
    out = tmp_path / "o"
    result = CliRunner().invoke(app, ["compare", "vca", str(a), str(b), "--out", str(out), "--resamples", "50",
                                      "--permutations", "50"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    with (out / "comparisons.csv").open(encoding="utf-8") as handle:
        table = {row["metric"]: row for row in csv.DictReader(handle) if row["family"] == "all"}
    rows = _rows(_compare([a, b]))
    for metric in ("acc", "dep", "dcc"):
        low, high = rows[metric]["noise_band"]
        assert float(table[metric]["noise_band_lo"]) == pytest.approx(low)
        assert float(table[metric]["noise_band_hi"]) == pytest.approx(high)
    assert table["strict"]["noise_band_lo"] == table["strict"]["noise_band_hi"] == ""
    assert "noise_band" not in table["acc"]
