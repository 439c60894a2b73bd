"""`vca stability` on `vca score-dual` runs: the noise floor of a dual encoder's cosine margins (batch 1 and
float32 vs bfloat16), its cost, resume, refusal, and the noise band `vca report` draws from it."""

from __future__ import annotations

from pathlib import Path

import pytest
from dual_groups import make_groups

import vlaudit
from vlaudit.errors import InputError
from vlaudit.results.vca.checks import GapFlips

pytestmark = pytest.mark.usefixtures("one_torch_thread", "no_network")

#: batch composition only reorders float32 sums in the towers: far below bfloat16's rounding of the weights
EXACT_BOUND = 1e-5


def _dual_run(model: str, root: Path, n: int = 4, batch_size: int = 8) -> Path:
    items = make_groups(root / "bench", n)
    vlaudit.score_dual_margins(vlaudit.DualScoreSpec.of(model=model, benchmark=items,
                                                        images=root / "bench" / "images", out=root / "run",
                                                        options={"dtype": "float32"},
                                                        run=vlaudit.RunOptions(batch_size=batch_size, device="cpu")))
    return root / "run"


def test_a_deterministic_reference_encoder_has_a_zero_floor_and_flags_nothing(tmp_path: Path) -> None:
    """ref:scene-clip-spatial runs float32 on the CPU: batch 1 against the run's 8 is its only perturbation,
    and it leaves every margin within EXACT_BOUND (in practice equal): τ ≤ EXACT_BOUND, no flips, and the
    report flags no decision and no credit (|m_o| and |G_img| are far above 2 EXACT_BOUND)."""
    run = _dual_run("ref:scene-clip-spatial", tmp_path, n=8)
    result = vlaudit.measure_stability(run)
    assert [row.perturbation for row in result.perturbations] == ["batch-1"]
    row = result.perturbations[0]
    assert result.noise_floor == row.all.max <= EXACT_BOUND  # fewer than 299 units: tau is their maximum
    assert row.all.n == 16 * 5 and row.all.sign_flips == 0 and row.g_img == GapFlips(
        n=16, controls=["text", "blank"], sign_flips=0)
    report = vlaudit.vca_report(run / "margins.parquet", n_resamples=50).data["runs"][0]
    noise = report["noise"]
    assert noise["measured"] and noise["tau"] == result.noise_floor
    assert noise["n_decision"] == 0 and noise["n_credit"] == 0
    assert noise["band"]["acc"] == [report["acc"]] * 2 and noise["band"]["dep"] == [report["dep"]] * 2


@pytest.mark.parametrize("model", ["ref:tiny-open-clip", "ref:tiny-clip", "ref:tiny-siglip"])
def test_float32_vs_bfloat16_and_batch_1_on_tiny_dual_encoders(model: str, tmp_path: Path) -> None:
    run = _dual_run(model, tmp_path)
    result = vlaudit.measure_stability(run)
    rows = {row.perturbation: row for row in result.perturbations}
    assert rows["dtype"].description == "bfloat16 instead of float32"
    assert rows["batch-1"].all.p99 < EXACT_BOUND < rows["dtype"].all.max == result.noise_floor < 0.5
    assert set(rows["dtype"].contexts) == {"original", "text", "blank", "mean", "mismatch"}
    # one embedding per (perturbation, distinct context image or statement): 2 statements, ≤ 4·4 + 1 images
    assert result.forwards.scored_now == result.forwards.total_perturbed == 2 * result.sample.n_units
    assert result.sample.n_records == 8 * 5 and result.sample.n_units <= 2 + 4 * 4 + 1
    again = vlaudit.measure_stability(run)
    assert again.forwards.scored_now == 0 and again.noise_floor == result.noise_floor
    print(f"\n{model}: tau = {result.noise_floor:.3g} (dtype p99 {rows['dtype'].all.p99:.3g}, "
          f"batch-1 p99 {rows['batch-1'].all.p99:.3g})")


def test_the_command_and_the_report_show_the_dual_floor(tmp_path: Path, cli,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    run = _dual_run("ref:tiny-open-clip", tmp_path)
    code, out, _ = cli("vca", "stability", run, "--perturbations", "dtype", "--sample", "3")
    assert code == 0 and "tau = " in out and "dtype: median" in out and "embedded inputs" in out
    assert all(len(line) <= 80 or " " not in line.strip() for line in out.splitlines())  # a path may not break
    code, out, _ = cli("vca", "report", run / "margins.parquet", "--out", tmp_path / "rep", "--no-plot",
                       "--resamples", "50")
    assert code == 0 and "noise floor τ" in out and "inside the noise" in out and "not measured" not in out
    assert cli("report", tmp_path / "rep")[0] == 0
    assert "Decisions above the noise" in (tmp_path / "rep" / "report.html").read_text()


def test_another_encoder_is_refused_in_one_line(tmp_path: Path) -> None:
    run = _dual_run("ref:tiny-open-clip", tmp_path)
    with pytest.raises(InputError, match="other settings or weights") as caught:
        vlaudit.measure_stability(run, model="ref:tiny-clip")
    assert "\n" not in str(caught.value)
    with pytest.raises(InputError, match="supports the perturbations batch-1, dtype"):
        vlaudit.measure_stability(run, perturbations=["attention"])
    with pytest.raises(InputError, match="not a vca score run"):
        vlaudit.generate_check(run)  # a dual encoder does not generate
