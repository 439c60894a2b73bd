"""``vlaudit vca proxies`` (VCA §18): proxy signals with known answers, control robustness, families, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon
from scipy.special import expit
from typer.testing import CliRunner
from vca_panel_fixtures import MODELS, edit_rows, panel_rows

from vlaudit.analysis.vca.proxies import ProxySettings, compute_proxies
from vlaudit.analysis.vca.scored_runs import join_edits, run_scores
from vlaudit.cli import app
from vlaudit.files import write_table
from vlaudit.metrics.vca import proxies
from vlaudit.results.vca.outputs import VcaProxiesResult
from vlaudit.sources.margins import runs_from_rows

FAST = ProxySettings(n_resamples=100)


def _contexts(model, v, s):
    """mismatch: the true statement keeps "yes" with 1.5s (beats r_o, so the mismatch set withdraws its credit);
    rele (relation erased) flips the true statement when v > ½; irre (relevant only) keeps every decision."""
    return {"mean": (-0.25 * s, -0.25 * s), "mismatch": (1.5 * s, -2.0 * s if v > 0.5 else -s),
            "rele": (-0.5 * s if v > 0.5 else 0.4 * s, -0.1 * s),
            "irre": (s * (0.5 + v), -s * (0.5 + v) if v > 0.5 else 0.1 * s)}


def _setup(n=12, models=MODELS):
    scores = run_scores(runs_from_rows(panel_rows(n, models, extra=_contexts)))
    return scores, join_edits(edit_rows(n, models), scores)


def test_perceptual_score_is_accuracy_on_original_minus_accuracy_on_the_permutation():
    scores, _ = _setup()
    result = compute_proxies(scores, None, FAST)
    for row, s in zip(result.aggregates, scores, strict=True):
        m, labels = s.run.margins, s.run.labels
        acc_o = np.mean((m["original"] >= 0) == labels)
        acc_x = np.mean((m["mismatch"] >= 0) == labels)
        assert row.perceptual_score == acc_o - acc_x == -0.25
        acc_null = (np.mean((m["text"] >= 0) == labels) + np.mean((m["blank"] >= 0) == labels)) / 2
        assert row.visual_dependence == pytest.approx((acc_o - acc_null) / acc_o)


def test_proxy_table_puts_the_raw_gap_at_auroc_one_and_names_every_signal():
    scores, edits = _setup()
    rows = compute_proxies(scores, edits, FAST).proxies
    by = {(r.signal, r.check): r for r in rows}
    assert {r.signal for r in rows} == {"Confidence", "VisNec-style", "Perceptual Score", "Permutation drop",
                                           "FPVG-style", "−Sufficiency", "Comprehensiveness", "Comp.–Suff.",
                                           "Raw image gap"}
    for check in ("SRC gsr", "Swap strict", "Swap flip_vis"):
        assert by[("Raw image gap", check)].auroc == 1.0
        assert by[("Raw image gap", check)].per_model.keys() == set(MODELS)
    # the relation-erased view flips exactly the groups with v > ½: comprehensiveness and FPVG rank Rel_o too
    assert by[("Comprehensiveness", "SRC gsr")].auroc == 1.0
    assert by[("FPVG-style", "SRC gsr")].auroc == 1.0
    # the mismatch image hurts no true statement's correctness: Perceptual Score is flat there
    assert by[("Perceptual Score", "SRC gsr")].auroc == 0.5


def test_control_aggregation_agrees_with_the_headline_where_the_paper_says_it_must():
    scores, edits = _setup()
    rows = {r.variant: r for r in compute_proxies(scores, edits, FAST).aggregation}
    assert rows["r_o − max"].mean_agreement == 1.0 and rows["r_o − max"].spearman == pytest.approx(1.0)
    assert rows["Probability max"].min_agreement == 1.0  # σ is monotone: every binary event is kept
    # JS is unsigned, so its event (JS > 0) holds everywhere: agreement = the headline Dep rate (here 1)
    assert rows["Minimum JS"].mean_agreement == 1.0
    aurocs = {a.check: a.auroc for a in rows["r_o − max"].aurocs}
    assert aurocs == {"SRC gsr": 1.0, "Swap flip_vis": 1.0}


def test_min_js_is_the_jensen_shannon_divergence_of_the_answer_distributions():
    margins = {"original": np.array([2.0, -0.5]), "text": np.array([1.0, 3.0]), "blank": np.array([-1.0, -0.4])}
    p = expit(margins["original"])
    want = np.minimum(*[[jensenshannon([a, 1 - a], [b, 1 - b]) ** 2 for a, b in zip(p, expit(margins[c]),
                                                                                     strict=True)]
                        for c in ("text", "blank")])
    assert proxies.min_js(margins) == pytest.approx(want)


def test_three_control_set_stability_counts_the_c_u_core():
    scores, _ = _setup()
    cs = compute_proxies(scores, None, FAST).control_sets
    assert cs.n == 24 * len(MODELS)
    rows = {r.control_set: r for r in cs.sets}
    assert cs.unavailable_sets == []
    assert rows["text+blank"].agreement == 1.0 and rows["text+blank"].cu == 0.0
    assert rows["text+mean"].agreement == 1.0
    # adding mismatch withdraws credit from every true statement (all correct) and from false ones with v > ½
    mm = rows["text+blank+mismatch"]
    assert mm.credit == pytest.approx(6 / 24) and mm.cu == pytest.approx(18 / 24)
    assert cs.cu_union == 18 * len(MODELS) and cs.cu_intersection == 0
    assert cs.stable == pytest.approx(6 / 24)


def test_a_control_set_without_its_context_is_listed_not_fatal():
    rows = [r for r in panel_rows(6, ("alpha", "beta"), extra=_contexts) if r["context"] != "mean"]
    cs = compute_proxies(run_scores(runs_from_rows(rows)), None, FAST).control_sets
    assert cs.unavailable_sets == ["text+mean"]
    assert [r.control_set for r in cs.sets] == ["text+blank", "text+blank+mismatch"]


def test_relation_families_follow_the_meta_category_map():
    scores, _ = _setup(models=("alpha",))
    rows = compute_proxies(scores, None, FAST, meta={"left of": "Projective", "above": "Projective2"}).families
    assert [(r.family, r.n) for r in rows] == [("Projective", 12), ("Projective2", 12)]
    assert all(r.dep == 1.0 for r in rows)


def test_proxies_cli_writes_files(tmp_path, versioned_outputs):
    write_table(tmp_path / "m.parquet", panel_rows(8, extra=_contexts))
    write_table(tmp_path / "edit_outcomes.csv", edit_rows(8))
    meta = tmp_path / "meta.txt"
    meta.write_text("Projective: left of, above\n", encoding="utf-8")
    out = tmp_path / "p"
    result = CliRunner().invoke(app, ["vca", "proxies", str(tmp_path / "m.parquet"), "--edits",
                                      str(tmp_path / "edit_outcomes.csv"), "--meta", str(meta), "--out", str(out),
                                      "--resamples", "50"])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "proxies.json").read_text())
    assert {r["family"] for r in data["families"]} == {"Projective"}
    for name in ("proxies", "proxy_aggregates", "control_aggregation", "control_sets", "families",
                 "proxy_model_rankings"):
        assert (out / f"{name}.csv").exists()
    assert (out / "proxies.png").stat().st_size > 0
    assert "Cached-context proxies" in result.output
    versioned_outputs(out, {"proxies.json": VcaProxiesResult})


@pytest.mark.skipif(not hasattr(__import__("vlaudit.sources.margins", fromlist=["MarginRun"]).MarginRun, "available"),
                    reason="partial contexts need the margins reader that accepts them")
def test_a_signal_needing_an_optional_context_uses_the_items_that_have_it():
    rows = [r for r in panel_rows(12, extra=_contexts)
            if not (r["context"] in ("rele", "irre") and r["group_id"] in ("g000", "g001", "g002"))]
    scores = run_scores(runs_from_rows(rows))
    by = {(r.signal, r.check): r for r in compute_proxies(scores, None, FAST).proxies}
    assert all(v.n == 9 for v in by[("Comprehensiveness", "SRC gsr")].per_model.values())
    assert all(v.n == 12 for v in by[("Raw image gap", "SRC gsr")].per_model.values())
