"""`vca stability`: the noise floor τ of a run, known answers (exact and planted noise), cost, resume, refusal,
and the report's decisions inside the noise."""

from __future__ import annotations

import csv
import html
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vlaudit
from vlaudit.metrics.vca.noise import noise_band, noise_flags, noise_floor
from vlaudit.reference.batch_noise import BatchNoiseModel

#: |Δ| ~ Uniform(0, s) under batch 1 vs batched: the planted p99 is 0.99 s; with 600 records the empirical
#: p99 lies within 0.04 s of it (the binomial spread of the 99th order statistic is ~0.005 s)
PLANTED_TOLERANCE = 0.04


def _items(root: Path, n: int) -> Path:
    """ROOT/items.jsonl and ROOT/images/: ``n`` items (two per small image, labels yes/no, no groups)."""
    from PIL import Image

    (root / "images").mkdir(parents=True)
    rows = []
    rng = np.random.default_rng(0)
    for i in range((n + 1) // 2):
        Image.fromarray(rng.integers(0, 256, (12, 16, 3), dtype=np.uint8)).save(root / "images" / f"im{i}.png")
        rows += [{"item_id": f"i{i:03d}_{j}", "image": f"im{i}.png", "question": f"Is the cat left of {i}/{j}?",
                  "label": "yes" if j == 0 else "no", "dataset": "toy"} for j in range(2)]
    path = root / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows[:n]))
    return path


def _score(items: Path, out: Path, noise_scale: float | None = None) -> Path:
    model = vlaudit.ModelRef("ref:batch-noise", vlaudit.PlantedOptions(noise_scale=noise_scale))
    vlaudit.score_margins(vlaudit.ScoreSpec(model=model, benchmark=items, images=items.parent / "images", out=out))
    return out


def test_an_exact_backend_has_floor_zero_and_flags_nothing(tmp_path: Path) -> None:
    run = _score(_items(tmp_path / "bench", 20), tmp_path / "run", noise_scale=0.0)
    result = vlaudit.measure_stability(run, sample=200)
    assert result.noise_floor == 0.0
    assert all(row.all.max == 0.0 and row.all.sign_flips == 0 for row in result.perturbations)
    noise = vlaudit.vca_report(run / "margins.parquet", n_resamples=50).data["runs"][0]["noise"]
    assert noise["measured"] and noise["n_decision"] == noise["n_credit"] == 0
    report = vlaudit.vca_report(run / "margins.parquet", n_resamples=50).data["runs"][0]
    assert noise["band"]["acc"] == [report["acc"]] * 2 and noise["band"]["dcc"] == [report["dcc"]] * 2


def test_planted_batch_noise_gives_its_quantile_and_flags_exactly_the_items_within_it(tmp_path: Path
                                                                                       ) -> None:
    scale = 0.25
    run = _score(_items(tmp_path / "bench", 200), tmp_path / "run", noise_scale=scale)
    result = vlaudit.measure_stability(run, sample=200, seed=3)
    assert result.sample.n_items == 200 and result.sample.n_records == 600
    assert abs(result.noise_floor - 0.99 * scale) <= PLANTED_TOLERANCE * scale
    (row,) = result.perturbations
    assert row.perturbation == "batch-1" and row.all.max <= scale
    saved = json.loads((run / "stability.json").read_text())
    assert saved["noise_floor"] == result.noise_floor and saved["schema_version"] == 1
    report = vlaudit.vca_report(run / "margins.parquet", n_resamples=50)
    noise = report.data["runs"][0]["noise"]
    tau = result.noise_floor
    margins = report.report.items
    original = {r["item_id"]: r for r in margins}
    import pyarrow.parquet as pq

    rows = pq.read_table(run / "margins.parquet").to_pylist()
    m_o = {r["item_id"]: r["margin"] for r in rows if r["context"] == "original"}
    assert set(noise["decision_items"]) == {i for i, m in m_o.items() if abs(m) <= tau} != set()
    assert set(noise["credit_items"]) == {i for i, r in original.items() if abs(r["g_img"]) <= 2 * tau} != set()
    for key in ("acc", "dep", "dcc"):
        lo, hi = noise["band"][key]
        assert lo <= report.data["runs"][0][key] <= hi and lo < hi


def test_the_baseline_is_the_runs_cache_and_a_rerun_scores_nothing(tmp_path: Path) -> None:
    run = _score(_items(tmp_path / "bench", 60), tmp_path / "run")
    backend = BatchNoiseModel("ref:batch-noise")
    first = vlaudit.measure_stability(run, out=tmp_path / "out", sample=20, model=backend, chunk_size=16)
    n_units = first.sample.n_units
    assert backend.n_scored == len(first.perturbations) * n_units == first.forwards.total_perturbed
    assert first.forwards.per_sampled_item == pytest.approx(3.0)  # one context triple per item
    again = vlaudit.measure_stability(run, out=tmp_path / "out", sample=20, model=backend, chunk_size=16)
    assert backend.n_scored == n_units and again.forwards.scored_now == 0
    assert again.noise_floor == first.noise_floor
    assert (run / "stability.json").is_file() and (tmp_path / "out" / "stability.json").is_file()


def test_a_killed_stability_run_resumes_from_its_cache(tmp_path: Path) -> None:
    run = _score(_items(tmp_path / "bench", 40), tmp_path / "run")

    class Killed(Exception):
        pass

    def kill_after_first_chunk(name: str, done: int, total: int) -> None:
        raise Killed

    backend = BatchNoiseModel("ref:batch-noise")
    with pytest.raises(Killed):
        vlaudit.measure_stability(run, sample=20, model=backend, chunk_size=10, on_progress=kill_after_first_chunk)
    assert backend.n_scored == 10 and not (run / ".lock").exists()
    result = vlaudit.measure_stability(run, sample=20, model=backend, chunk_size=10)
    assert backend.n_scored == result.sample.n_units == 60 and result.forwards.scored_now == 50


def test_another_model_is_refused_in_one_line(tmp_path: Path, cli, one_error_line, reference_cache) -> None:
    run = _score(_items(tmp_path / "bench", 6), tmp_path / "run")
    with pytest.raises(vlaudit.InputError, match="model fingerprint differs"):
        vlaudit.measure_stability(run, model=BatchNoiseModel("ref:batch-noise", noise_scale=0.5))
    line = one_error_line(*cli("vca", "stability", run, "--model", "ref:tiny-qwen2-vl"))
    assert "model fingerprint differs" in line and "ref:batch-noise" in line


def test_a_report_without_a_floor_says_so(tmp_path: Path, cli) -> None:
    run = _score(_items(tmp_path / "bench", 6), tmp_path / "run")
    code, out, _ = cli("vca", "report", run / "margins.parquet", "--out", tmp_path / "rep", "--no-plot",
                       "--resamples", "20")
    assert code == 0 and "noise floor not measured" in out
    data = json.loads((tmp_path / "rep" / "vca.json").read_text())
    # not computable carries its reason: in the JSON, the CSV and the HTML report
    reason = data["runs"][0]["noise"]["missing"]
    assert data["runs"][0]["noise"] == {"missing": reason} and "not measured" in reason
    with (tmp_path / "rep" / "headline.csv").open(encoding="utf-8") as handle:
        (row,) = list(csv.DictReader(handle))
    # numeric columns stay numeric (empty); the reason is in its own text column
    assert row["noise_tau"] == row["dcc_noise_lo"] == "" and row["noise_missing"] == reason
    assert cli("report", tmp_path / "rep")[0] == 0
    page = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    assert html.escape(f"— ({reason})") in page


def test_the_stability_command_prints_the_floor_and_the_report_reads_it(tmp_path: Path, cli,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    run = _score(_items(tmp_path / "bench", 20), tmp_path / "run")
    code, out, err = cli("vca", "stability", run, "--sample", "10")
    assert code == 0, err
    assert "tau = " in out and _whole_at_80(out)
    code, out, _ = cli("vca", "report", run / "margins.parquet", "--out", tmp_path / "rep", "--no-plot",
                       "--resamples", "20")
    assert code == 0 and "noise floor τ" in out and "inside the noise" in out
    assert _whole_at_80(out)
    assert cli("report", tmp_path / "rep")[0] == 0
    assert "Decisions above the noise" in (tmp_path / "rep" / "report.html").read_text()


def _whole_at_80(text: str) -> bool:
    """Every line fits 80 columns, except a single word (a path) that cannot be broken."""
    return all(len(line) <= 80 or " " not in line.strip() for line in text.splitlines())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.floats(-3, 3), st.floats(-3, 3)), min_size=1,
                max_size=40), st.floats(0, 1))
def test_noise_bands_contain_the_estimate_and_collapse_at_zero(rows, tau) -> None:
    correct = np.array([r[0] for r in rows])
    dep = np.array([r[1] for r in rows])
    m_o, gap = np.array([r[2] for r in rows]), np.array([r[3] for r in rows])
    decision, credit = noise_flags(m_o, gap, tau)
    band = noise_band(correct, dep, decision, credit)
    for key, point in (("acc", correct.mean()), ("dep", dep.mean()), ("dcc", (correct & dep).mean())):
        lo, hi = band[key]
        assert lo <= point <= hi
    zero = noise_band(correct, dep, *noise_flags(m_o, gap, 0.0))
    assert zero["acc"] == [correct.mean()] * 2 and zero["dcc"] == [(correct & dep).mean()] * 2


def test_the_floor_is_the_largest_per_perturbation_bound_of_the_p99() -> None:
    """Each perturbation's p99 bounded from above by an order statistic; with 101 units (fewer than the 299 a
    95% bound needs) the bound is their maximum, with 1,000 it is the 996th smallest."""
    exact, noisy = np.zeros(100), np.linspace(0, 1, 101)
    assert noise_floor({"a": exact, "b": noisy}) == 1.0
    many = np.arange(1000) / 999
    assert noise_floor({"a": exact, "b": many}) == pytest.approx(995 / 999)
    assert noise_floor({"a": exact}) == 0.0 and noise_floor({}) == 0.0


def test_a_planted_model_measures_batch_1_and_its_known_floor_zero(tmp_path: Path, cli) -> None:
    """The docs say the planted ``ref:`` models support ``batch-1``; a constructed mechanism
    scores each request alone, so at the run's own batch size (1) τ = 0 is the known answer (was a refusal)."""
    bench = tmp_path / "mcq"
    assert cli("data", "mcq-scenes", "--out", bench, "--scenes", "4")[0] == 0
    vlaudit.score_margins(vlaudit.ScoreSpec.of(model="ref:scene-mcq-grounded", benchmark=bench / "items.jsonl",
                                               images=bench / "images", out=tmp_path / "run", interfaces=["letter"]))
    code, out, err = cli("vca", "stability", tmp_path / "run")
    assert code == 0, err
    result = json.loads((tmp_path / "run" / "stability.json").read_text())
    assert [p["perturbation"] for p in result["perturbations"]] == ["batch-1"]
    assert result["noise_floor"] == 0.0 and "tau = 0" in out


def test_a_backend_without_a_perturbation_is_told_there_is_no_noise_to_measure(tmp_path: Path) -> None:
    """A batching backend loaded at batch size 1 has nothing to change: ``batch-1`` would re-run the run."""
    run = _score(_items(tmp_path / "bench", 6), tmp_path / "run")
    with pytest.raises(vlaudit.InputError, match="supports no perturbation") as error:
        vlaudit.measure_stability(run, batch_size=1)
    assert "no numerical noise" in str(error.value) and "\n" not in str(error.value)
    assert not (run / "stability.json").exists()


def test_each_unit_is_counted_once(tmp_path: Path) -> None:
    """Two items asking the same question of one image share their units (one forward, one
    |Δ|); the floor and the summaries count each once (they counted it once per item)."""
    root = tmp_path / "bench"
    items = _items(root, 12)
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    for row in rows:
        row["question"] = row["question"].split("/")[0] + "?"  # the two items of an image ask one question
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = _score(items, tmp_path / "run", noise_scale=0.25)
    result = vlaudit.measure_stability(run, sample=12)
    (row,) = result.perturbations
    # both items of an image now ask one question on one image: one unit per (image, context), 6 × 3
    assert result.sample.n_records == 36 and result.sample.n_units == 18
    assert row.all.n == 18 and {c: s.n for c, s in row.contexts.items()} == {"blank": 6, "original": 6, "text": 6}
    assert result.estimate is not None and result.estimate.bounds[0].n == 18


def test_too_few_units_say_tau_is_their_maximum_and_how_often_it_covers(tmp_path: Path, cli) -> None:
    run = _score(_items(tmp_path / "bench", 10), tmp_path / "run", noise_scale=0.25)
    code, out, err = cli("vca", "stability", run)
    assert code == 0
    saved = json.loads((run / "stability.json").read_text())
    (bound,) = saved["estimate"]["bounds"]
    assert bound["n"] == 30 and bound["order"] == 30 and not bound["bounded"]
    assert bound["coverage"] == pytest.approx(1 - 0.99**30) and saved["noise_floor"] == bound["value"]
    assert saved["estimate"]["n_needed"] == 299
    assert "warning: tau rests on 30 re-scored units" in err and "26%" in err
    assert "order statistic 30 of 30" in out


def test_a_nan_margin_or_tau_is_an_error_not_a_floor_that_flags_nothing(tmp_path: Path) -> None:
    from vlaudit.scoring.stability import floor_estimate

    with pytest.raises(ValueError, match="NaN"):
        noise_floor({"batch-1": np.array([0.1, np.nan])})
    with pytest.raises(vlaudit.InputError, match="batch-1: 1 of 2"):
        floor_estimate({"batch-1": np.array([0.1, np.nan])}, where=tmp_path)
    with pytest.raises(ValueError, match="non-negative"):
        noise_flags(np.array([0.5, -2.0]), np.array([0.1, 0.2]), float("nan"))
    run = _score(_items(tmp_path / "bench", 4), tmp_path / "run", noise_scale=0.0)
    vlaudit.measure_stability(run)
    saved = json.loads((run / "stability.json").read_text())
    saved["noise_floor"] = None  # how a NaN is written (strict JSON has none)
    (run / "stability.json").write_text(json.dumps(saved))
    with pytest.raises(vlaudit.InputError, match="noise_floor"):
        vlaudit.vca_report(run / "margins.parquet", n_resamples=20)
