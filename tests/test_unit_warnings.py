"""Unit overrides and warnings: an override finer than the declared cluster is
warned about; ``compare vca`` warns per relation family row with few clusters; the cycle-unit caveat and the
``--cluster image`` collapse go into ``compare_cycles.json``'s warnings; at most five clusters say that no test
can reach p ≤ 0.05; ``compare vca`` takes the exact sign flip at ≤ 20 clusters (16 stems: 2/2^16)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import vlaudit
from vlaudit.analysis.vca.report import ReportSettings, compute_report
from vlaudit.files import write_jsonl
from vlaudit.metrics.cycles import CYCLE_UNIT_CAVEAT
from vlaudit.records import Cycle
from vlaudit.sources.margins import runs_from_rows
from vlaudit.stats.clusters import small_sample_warning

CONTEXTS = ("original", "text", "blank")


def _rows(model: str, seed: int, n: int, *, size: int = 4, strength: float = 1.0, groups: bool = False,
          correct: bool | None = None) -> list[dict[str, Any]]:
    """Labelled margins of one model on ``n`` items in declared stems of ``size``; ``correct`` fixes every
    decision right (True) or wrong (False) with the image carrying it."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n):
        label = k % 2 == 0
        sign = 1.0 if label else -1.0
        base = rng.normal(0, 1, size=3)
        original = base[0] + sign * strength if correct is None else sign * (3.0 if correct else -3.0)
        values = {"original": original, "text": base[1] * 0.1, "blank": base[2] * 0.1}
        for context in CONTEXTS:
            row: dict[str, Any] = {"model": model, "dataset": "toy", "item_id": f"q{k:03d}", "context": context,
                                   "margin": float(values[context]), "label": "yes" if label else "no",
                                   "cluster": f"s{k // size}", "cluster_unit": "stem"}
            if groups:
                row |= {"relation": "left of" if (k // size) % 4 == 0 else "above"}
            rows.append(row)
    return rows


def _write(folder: Path, rows: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_jsonl(folder / "margins.jsonl", rows)


def test_an_override_finer_than_the_declared_stems_is_warned_about() -> None:
    (run,) = runs_from_rows(_rows("m", 0, 48))
    finer = compute_report([run], ReportSettings(n_resamples=100, cluster="item_id")).result
    (line,) = [w for w in finer.warnings if "--cluster item_id" in w]
    assert "finer than the unit the items declare (12 stem clusters)" in line and "splits 12 of them" in line
    assert "48 item clusters" in line
    same = compute_report([run], ReportSettings(n_resamples=100, cluster="cluster")).result
    assert not [w for w in same.warnings if "finer" in w]
    default = compute_report([run], ReportSettings(n_resamples=100)).result
    assert not [w for w in default.warnings if "finer" in w]


def test_compare_vca_warns_on_the_override_and_per_family_row(tmp_path: Path) -> None:
    paths = [_write(tmp_path / f"m{m}", _rows(f"m{m}", m, 96, groups=True)) for m in range(2)]
    result = vlaudit.compare_vca(paths, n_resamples=100, n_permutations=99).comparison
    # 24 stems in all (no total warning), of which 6 are left/right and 18 above/below: one line naming both
    assert not [w for w in result.warnings if w.startswith("toy/yesno: only")]
    (families,) = [w for w in result.warnings if "cell(s)" in w]
    assert "toy/yesno/above/below 18" in families and "toy/yesno/left/right 6" in families
    assert "fewer than 20 stem clusters" in families
    over = vlaudit.compare_vca(paths, n_resamples=100, n_permutations=99, cluster="item_id").comparison
    assert sum("--cluster item_id" in w and "finer" in w for w in over.warnings) == 2


def test_five_clusters_or_fewer_say_no_test_can_reach_significance() -> None:
    line = small_sample_warning(5, "stem", "x")
    assert line is not None and "no paired test can reach p <= 0.05" in line and "2/2^5 = 0.0625" in line
    six = small_sample_warning(6, "stem")
    assert six is not None and "no paired test" not in six


def test_compare_vca_exact_sign_flip_at_sixteen_stems(tmp_path: Path) -> None:
    """A right on every item, B wrong on every item, 16 stems of 4: every stem's total is +4, so the exact
    sign flip gives p = 2/2^16 = 3.05e-5 (10,000 Monte Carlo flips could not go below 1e-4)."""
    a = _write(tmp_path / "a", _rows("a", 0, 64, correct=True))
    b = _write(tmp_path / "b", _rows("b", 1, 64, correct=False))
    result = vlaudit.compare_vca([a, b], n_resamples=100).comparison
    acc = next(r for r in result.comparisons if r.metric == "acc" and r.family == "all")
    assert (acc.test, acc.unit, acc.n_clusters, acc.difference) == ("sign-flip", "stem", 16, 1.0)
    assert acc.p == pytest.approx(2 / 2**16, rel=1e-12)
    assert result.settings.interval == "expanded percentile"


def _cycles() -> tuple[list[Cycle], list[dict[tuple[str, str], float]]]:
    # 40 cycles over 10 images: cycle k uses images k % 10 and (k + 1) % 10, so all are linked into one chain
    cycles = [Cycle(f"c{k:02d}", "left", f"u{k % 10}", f"v{k}a", f"u{(k + 1) % 10}", f"v{k}b", split="test")
              for k in range(40)]
    rng = np.random.default_rng(0)
    scores = [{(img, cap): float(rng.normal() + (shift if cap.endswith("a") == (img == c.image_1) else 0))
               for c in cycles for img in (c.image_1, c.image_2) for cap in (c.caption_1, c.caption_2)}
              for shift in (1.0, 0.0)]
    return cycles, scores


def test_compare_cycles_writes_the_unit_caveat_and_the_image_collapse_into_its_warnings(tmp_path: Path) -> None:
    cycles, scores = _cycles()
    kwargs: dict[str, Any] = {"min_cycles": 5, "n_resamples": 100, "n_permutations": 100}
    plain = vlaudit.compare_cycles(cycles, {"a": scores[0], "b": scores[1]}, **kwargs)
    assert CYCLE_UNIT_CAVEAT in plain.comparison.warnings
    plain.save(tmp_path / "plain")
    assert CYCLE_UNIT_CAVEAT in (tmp_path / "plain" / "compare_cycles.json").read_text(encoding="utf-8")
    joined = vlaudit.compare_cycles(cycles, {"a": scores[0], "b": scores[1]}, cluster="image", **kwargs)
    (line,) = [w for w in joined.comparison.warnings if w.startswith("--cluster image")]
    assert "joins the 40 cycles over 10 images into 1 connected cluster " in line
    assert "the largest holds 40 cycles" in line and "fewer than 20" in line
    assert CYCLE_UNIT_CAVEAT not in joined.comparison.warnings


def _paper_rows(dataset: str, *, groups: bool) -> list[dict[str, Any]]:
    """48 items on 12 images (the unit vlaudit's builders declare for VSR and GSR-COCO); with ``groups`` each
    image's items form two true/false relation pairs."""
    rows = []
    for row in _rows("m", 3, 48):
        k = int(row["item_id"][1:])
        row = row | {"dataset": dataset, "cluster": f"img{k // 4}", "cluster_unit": "image"}
        if groups:
            row |= {"group_id": f"g{k // 2}", "statement": "true" if k % 2 == 0 else "false"}
        rows.append(row)
    return rows


@pytest.mark.parametrize(("dataset", "groups", "option"), [("gsr-coco", True, "group_id"),
                                                           ("vsr-random", False, "item_id")])
def test_the_departure_from_the_paper_unit_is_printed(dataset: str, groups: bool, option: str) -> None:
    """VCA §19 resamples GSR relation pairs and VSR sample ids; vlaudit the declared images: each such run's
    bootstrap notes say so and name the option that follows the paper (which then notes nothing)."""
    (run,) = runs_from_rows(_paper_rows(dataset, groups=groups))
    (audit,) = compute_report([run], ReportSettings(n_resamples=100)).result.runs
    (note,) = audit.bootstrap.notes
    assert "VCA §19 resamples" in note and "12 image clusters" in note and f"--cluster {option}" in note
    (paper,) = compute_report([run], ReportSettings(n_resamples=100, cluster=option)).result.runs
    assert paper.bootstrap.notes == [] and paper.bootstrap.cluster == option
    (other,) = runs_from_rows(_paper_rows("toy", groups=groups))
    assert compute_report([other], ReportSettings(n_resamples=100)).result.runs[0].bootstrap.notes == []


def test_the_console_prints_the_departure_and_names_the_interval(capsys: pytest.CaptureFixture[str]) -> None:
    from rich.console import Console

    from vlaudit.commands._render import show
    from vlaudit.report.vca_console import axes_view, headline_view

    (run,) = runs_from_rows(_paper_rows("gsr-coco", groups=True))
    report = compute_report([run], ReportSettings(n_resamples=100))
    show(axes_view(report), console=Console(width=200))
    show(headline_view(report.runs), console=Console(width=200))
    out = " ".join(capsys.readouterr().out.split())
    assert "note: run (model='m', dataset='gsr-coco'" in out and "--cluster group_id follows the paper" in out
    assert "paired bootstrap expanded percentile CI" in out
