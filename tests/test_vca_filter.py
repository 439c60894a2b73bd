"""``vlaudit vca filter`` (VCA §16): leave-one-model-out panels on planted margins, and the CLI path."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner
from vca_panel_fixtures import MODELS, SCALES

from vlaudit.analysis.vca.heldout_filter import FilterSettings, compute_filter, select
from vlaudit.analysis.vca.scored_runs import run_scores
from vlaudit.cli import app
from vlaudit.files import write_table
from vlaudit.metrics.vca import proxies
from vlaudit.results.vca.outputs import VcaFilterResult
from vlaudit.sources.margins import runs_from_rows

N_GROUPS = 16
NECESSARY = {"g001", "g004", "g010", "g013"}  # a quarter of the groups


def necessary_rows(models=MODELS, n_groups=N_GROUPS, necessary=NECESSARY):
    """Groups in ``necessary`` need the image for every model (both controls oppose the decision, G_img = 2s
    plus noise); the others are answered as well without it (G_img ≈ 0.1s). Scales and noise differ by model."""
    rows = []
    for k, model in enumerate(models):
        s = SCALES[model]
        rng = np.random.default_rng(k)
        for g in range(n_groups):
            gid = f"g{g:03d}"
            need = gid in necessary
            noise = rng.uniform(0, 0.2, size=2)
            for j, (suffix, label, sign) in enumerate((("t", "yes", 1.0), ("f", "no", -1.0))):
                m = {"original": sign * s * (1.0 + noise[j]), "text": sign * s * (-1.0 if need else 0.9),
                     "blank": -sign * s}
                for context, margin in m.items():
                    rows.append({"model": model, "dataset": "gsr", "item_id": f"{gid}-{suffix}", "context": context,
                                 "interface": "yesno", "margin": margin, "label": label, "group_id": gid,
                                 "statement": "true" if sign > 0 else "false", "relation": "left of"})
    return rows


FAST = FilterSettings(n_resamples=200)


def test_vca_panel_recovers_the_shared_visually_necessary_groups_at_25_percent():
    result = compute_filter(run_scores(runs_from_rows(necessary_rows())), FAST).datasets[0]
    assert result.groups == N_GROUPS and result.models == sorted(MODELS)
    for sel in result.selections:
        if sel.coverage == 25.0 and sel.panel == "VCA panel":
            assert set(sel.groups) == NECESSARY, sel
    vca = [r for r in result.per_held_out if r.coverage == 25.0 and r.panel == "VCA panel"]
    assert len(vca) == len(MODELS)
    for row in vca:
        # kept items: correct with the image, wrong without it → Acc 1, text-only accuracy 0, Dep 1
        got = (row.acc, row.blind_gap, row.visual_gain, row.dep, row.groups, row.items)
        assert got == pytest.approx((1.0, -0.5, 1.0, 1.0, 4, 8))
    full = result.rows[0]
    assert full.panel == "Full benchmark" and full.visual_gain == pytest.approx(0.25)


def test_filter_reports_jaccard_and_paired_bootstrap_differences():
    result = compute_filter(run_scores(runs_from_rows(necessary_rows())), FAST).datasets[0]
    overlap = {(r.coverage, r.panel): r.jaccard_with_vca for r in result.jaccard}
    # VisNec-style and the Shortcut Score also see the planted set (text-only is wrong exactly there)
    assert overlap[(25.0, "VisNec-style")] == 1.0 and overlap[(25.0, "Shortcut Score")] == 1.0
    boot = {r.contrast: r for r in result.bootstrap}
    assert set(boot) == {"VCA − Shortcut Score", "VCA − VisNec-style", "VCA − Confidence panel",
                         "VCA − Direct prob-gap avg"}
    for row in boot.values():
        assert row.acc_lo <= row.acc <= row.acc_hi


def test_selection_is_deterministic_under_ties_by_group_id():
    keys = np.array(["g:c", "g:a", "g:b", "g:d"], dtype=object)
    scores = np.array([1.0, 1.0, 1.0, 0.0])
    assert select(scores, keys, 50).tolist() == [False, True, True, False]


def test_shortcut_score_is_t_minus_v():
    margins = {"original": np.array([2.0, -1.0]), "text": np.array([1.0, 1.0])}
    labels = np.array([True, True])
    g_t = 1 / (1 + np.exp(-1.0))
    g_o = 1 / (1 + np.exp(-np.array([2.0, -1.0])))
    want = g_t - (g_o - g_t) / 0.5  # text-only is correct and confident for both
    assert proxies.shortcut_score(margins, labels) == pytest.approx(want)
    assert proxies.visnec_style(margins, labels) == pytest.approx(np.log(g_o) - np.log(g_t))


def test_filter_cli_writes_files(tmp_path, versioned_outputs):
    write_table(tmp_path / "m.parquet", necessary_rows())
    out = tmp_path / "f"
    result = CliRunner().invoke(app, ["vca", "filter", str(tmp_path / "m.parquet"), "--coverage", "25,50",
                                      "--out", str(out), "--resamples", "50"])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "filter.json").read_text())
    assert data["settings"]["coverages"] == [25.0, 50.0]
    for name in ("filter", "filter_held_out", "filter_jaccard", "filter_bootstrap", "filter_selections"):
        assert (out / f"{name}.csv").exists()
    assert (out / "filter.png").stat().st_size > 0
    assert "Held-out filtering" in result.output
    versioned_outputs(out, {"filter.json": VcaFilterResult})
    bad = CliRunner().invoke(app, ["vca", "filter", str(tmp_path / "m.parquet"), "--coverage", "0,50",
                                   "--out", str(out)])
    assert bad.exit_code != 0
