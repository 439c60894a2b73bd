"""Partial contexts: every VCA quantity on the items that have the contexts it needs (VCA §19), with its n."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from typer.testing import CliRunner
from vca_fixtures import (
    RELATION_GROUPS,
    RELATION_ITEMS,
    RELATION_MARGINS,
    RELATION_STATEMENTS,
    SUPPORT_LABELS,
    SUPPORT_MARGINS,
    rows_from_arrays,
)

from vlaudit.analysis.vca.report import (
    ReportSettings,
    bootstrap_run,
    cluster_labels,
    compute_report,
    run_events,
)
from vlaudit.cli import app
from vlaudit.files import write_table
from vlaudit.metrics.vca import permutation, support
from vlaudit.results.vca.audit import Coverage
from vlaudit.sources.margins import runs_from_rows
from vlaudit.stats.bootstrap import EXPANDED, ClusterBootstrap, percentile_intervals

SETTINGS = ReportSettings(n_resamples=100)


def _drop(rows, context, items):
    return [r for r in rows if not (r["context"] == context and r["item_id"] in items)]


def _report(rows):
    return compute_report(runs_from_rows(rows, path="m.jsonl"), SETTINGS)


def _csv(path):
    with path.open() as handle:
        return list(csv.DictReader(handle))


def test_missing_erasure_context_does_not_block_the_report(tmp_path) -> None:
    """A partial run: irre is unavailable for 1 of 3 items (boxes cover the image); rele for 2 of 3."""
    margins = {"original": [2.0, -1.0, 0.5], "text": [1.0, 0.5, -1.0], "blank": [-1.0, -3.0, -2.0],
               "rele": [0.5, 1.0, -0.5], "irre": [1.5, -2.0, 0.3]}
    rows = _drop(_drop(rows_from_arrays(margins, labels=["yes", "no", "no"]), "irre", {"i1"}), "rele", {"i0", "i2"})
    path = tmp_path / "margins.jsonl"
    write_table(path, rows)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["vca", "report", str(path), "--out", str(out), "--resamples", "50",
                                      "--no-plot"])
    assert result.exit_code == 0, result.output
    (run,) = json.loads((out / "vca.json").read_text())["runs"]
    assert (run["n"], run["n_excluded"]) == (3, 0)
    coverage = {row["contexts"]: row for row in run["coverage"]}
    assert (coverage["irre"]["n"], coverage["irre"]["n_excluded"]) == (2, 1)
    assert (coverage["rele"]["n"], coverage["rele"]["n_excluded"]) == (1, 2)
    erasure = {row["context"]: row for row in _csv(out / "erasure.csv")}
    # irre on i0, i2: d = +1 for both; r_o − r_irre = 0.5, 0.2 → both drop; decisions survive
    assert (erasure["irre"]["n"], float(erasure["irre"]["same"]), float(erasure["irre"]["drop_mean"])) == (
        "2", 1.0, pytest.approx(0.35))
    # rele on i1 only: d = −1, m_rele = 1.0 flips the decision, r_o − r_rele = 1 − (−1) = 2
    assert (erasure["rele"]["n"], float(erasure["rele"]["same"]), float(erasure["rele"]["drop_mean"])) == (
        "1", 0.0, 2.0)
    printed = " ".join(result.output.split())
    assert "irrelevant-region erasure (irre) n=2, 1 excluded (irre: 1 missing)" in printed
    assert {row["quantity"] for row in _csv(out / "coverage.csv")} >= {"headline", "relation-region erasure"}


def test_item_missing_a_headline_control_is_excluded_with_a_warning(tmp_path) -> None:
    """Known answer: the report over the 5 complete items equals the report of a table holding only them."""
    rows = rows_from_arrays(SUPPORT_MARGINS, labels=SUPPORT_LABELS)
    partial = _report(_drop(rows, "blank", {"i1", "i5"}))
    complete = _report([r for r in rows if r["item_id"] not in ("i1", "i5")])
    (a,), (b,) = partial.runs, complete.runs
    assert (a.n, a.n_total, a.n_excluded, a.excluded_items) == (5, 7, 2, ["i1", "i5"])
    for key in ("acc", "dep", "dcc", "cu", "wrong_dep", "strict"):
        assert getattr(a, key) == getattr(b, key) and a.interval_of(key) == b.interval_of(key), key
    # the fixture's exact zeros (i3's original margin, i7's blank) also get the tie warning
    (warning,) = [w for w in partial.warnings if not w.startswith("ties decide")]
    assert "2 of 7 items" in warning and "context 'blank' is missing for 2 of 7 items" in warning
    assert "'i1', 'i5'" in warning and [w for w in a.warnings if not w.startswith("ties decide")] == [warning]
    assert a.coverage[0] == Coverage(quantity="headline", contexts="original+text+blank", n=5,
                                      n_excluded=2, missing="blank: 2")
    assert len(partial.items) == 5


def test_cli_prints_the_warning_and_counts(tmp_path) -> None:
    path = tmp_path / "m.csv"
    write_table(path, _drop(rows_from_arrays(SUPPORT_MARGINS, labels=SUPPORT_LABELS), "text", {"i3"}))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["vca", "report", str(path), "--out", str(out), "--resamples", "50",
                                      "--no-plot"])
    assert result.exit_code == 0, result.output
    printed = " ".join(result.output.split())
    assert "warning:" in printed and "'i3'" in printed and "excluded from every quantity" in printed
    (row,) = _csv(out / "headline.csv")
    assert (row["n"], row["n_excluded"]) == ("6", "1")


def test_mismatch_axis_on_its_own_items() -> None:
    """Permutation calibration, Dep+M and Strict+M use the items with a mismatch margin; the headline all."""
    rows = rows_from_arrays(SUPPORT_MARGINS, labels=SUPPORT_LABELS)
    (full,) = _report(rows).runs
    (partial,) = _report(_drop(rows, "mismatch", {"i0", "i6"})).runs
    subset = [r for r in rows if r["item_id"] not in ("i0", "i6")]
    (only,) = _report(subset).runs
    for key in ("acc", "dep", "dcc", "cu"):
        assert getattr(partial, key) == getattr(full, key)
    for key in ("dep_perm", "dcc_perm", "delta_dcc", "cu_perm", "orig_only", "perm_only", "dcc"):
        assert getattr(partial.perm, key) == getattr(only.perm, key), key
    assert (partial.perm.n, partial.perm.n_excluded) == (5, 2)
    # Δ_DCC^perm is D-CC − D-CC_perm on the same 5 items, not the 7-item D-CC minus a 5-item D-CC_perm
    assert partial.perm.delta_dcc == pytest.approx(partial.perm.dcc - partial.perm.dcc_perm)
    sens = partial.sensitivity
    assert (sens.n, sens.n_m, sens.n_m_excluded) == (7, 5, 2)
    for key in ("dep_m", "strict_m"):
        assert getattr(sens, key) == getattr(only.sensitivity, key)
    assert sens.dep_on_m_items == only.dep
    sets = {row.control_set: row for row in partial.robustness.control_sets}
    assert (sets["text+blank"].n, sets["text+blank+mismatch"].n) == (7, 5)
    assert sets["text+blank+mismatch"].dep == sens.dep_m
    assert sets["text+blank+mismatch"].strict == sens.strict_m


def test_subset_rates_bootstrap_against_readable_loop() -> None:
    """Axis rates are Σ numerator / Σ axis items over the drawn clusters of the one shared plan."""
    rng = np.random.default_rng(3)
    n = 30
    margins = {c: rng.normal(size=n).round(3) for c in ("original", "text", "blank", "mismatch")}
    labels = [bool(x) for x in rng.random(n) < 0.5]
    rows = _drop(rows_from_arrays(margins, labels=labels), "mismatch", {f"i{k}" for k in range(0, n, 4)})
    (run,) = runs_from_rows(rows)
    settings = ReportSettings(n_resamples=120, seed=5)
    cis = bootstrap_run(run_events(run, settings.controls), settings)
    plan = ClusterBootstrap.draw(run.n, clusters=cluster_labels(run), n_resamples=120, seed=5)
    samples = []
    for b in range(120):
        idx = plan.record_indices(b)
        idx = idx[~np.isnan(run.margins["mismatch"][idx])]
        m = {c: v[idx] for c, v in run.margins.items()}
        dep = support.dependence(support.image_gap(m, settings.controls))
        dep_perm = permutation.permutation_dependence(m, settings.controls)
        correct = support.correctness(support.prediction_direction(m["original"]), run.labels[idx])
        samples.append([dep_perm.mean(), (correct & dep).mean() - (correct & dep_perm).mean(),
                        support.dependence(support.image_gap(m, ("text", "blank", "mismatch"))).mean(),
                        support.strict_isolation(m, ("text", "blank", "mismatch")).mean()])
    expected = percentile_intervals(np.array(samples), settings.level, n_clusters=plan.n_clusters, method=EXPANDED)
    for name, row in zip(("dep_perm", "delta_dcc", "dep_m", "strict_m"), expected, strict=True):
        np.testing.assert_allclose(cis[name], row, rtol=1e-12, atol=1e-12, err_msg=name)


def test_relation_group_losing_a_member_is_excluded_and_counted() -> None:
    rows = rows_from_arrays(RELATION_MARGINS, item_ids=RELATION_ITEMS, group_ids=RELATION_GROUPS,
                            statements=RELATION_STATEMENTS)
    partial = _report(_drop(rows, "text", {"c"}))  # c is a false statement of G1
    only_g2 = _report([r for r in rows if r["item_id"] in ("d", "e", "f")])
    (a,), (b,) = partial.runs, only_g2.runs
    assert (a.n, a.n_excluded) == (5, 1)
    rel = a.relation
    assert (rel.groups, rel.groups_excluded) == (1, 1)
    assert rel.contexts[0].context == "original" and rel.contexts[0].rel == b.relation.contexts[0].rel
    for key in ("pair_credit", "pair_d", "joint", "g_int_mean"):
        assert getattr(rel, key) == getattr(b.relation, key), key
    assert [g["group_id"] for g in partial.groups] == ["G2"]
    coverage = {row.quantity: row for row in a.coverage}
    assert (coverage["relation groups"].n, coverage["relation groups"].n_excluded) == (1, 1)


def test_no_item_with_every_headline_control_is_an_input_error() -> None:
    from vlaudit.errors import InputError

    rows = rows_from_arrays({"original": [1.0, -1.0, 2.0], "text": [0.5, 0.2, 0.1], "blank": [0.1, 0.3, 0.0]})
    rows = _drop(_drop(rows, "blank", {"i0", "i1"}), "text", {"i2"})
    with pytest.raises(InputError, match="no item of run .* has every headline control"):
        _report(rows)
