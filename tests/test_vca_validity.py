"""``vlaudit vca validity`` (VCA §15) on planted multi-model margins: known answers and the CLI path."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner
from vca_panel_fixtures import MODELS, edit_rows, panel_rows

from vlaudit.analysis.vca.scored_runs import join_edits, run_scores
from vlaudit.analysis.vca.validity import (
    QUADRANTS,
    ValiditySettings,
    compute_validity,
    conditional_auroc,
    confidence_high,
)
from vlaudit.cli import app, main
from vlaudit.files import write_table
from vlaudit.results.missing import Missing
from vlaudit.results.vca.outputs import VcaValidityResult
from vlaudit.sources.margins import runs_from_rows
from vlaudit.stats.ranking import (
    auprc,
    auroc,
    high_minus_low,
    percentile_ranks,
    weighted_auprc,
    weighted_auroc,
    weighted_high_minus_low,
)

FAST = ValiditySettings(n_resamples=200, repeats=2, ridges=(1.0,))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.booleans(), st.integers(0, 3)), min_size=3, max_size=25))
def test_weighted_metrics_equal_the_metrics_of_the_repeated_sample(records):
    scores = np.array([r[0] for r in records], dtype=float)
    target = np.array([r[1] for r in records])
    counts = np.array([r[2] for r in records], dtype=float)
    idx = np.repeat(np.arange(len(records)), counts.astype(int))
    for weighted, plain in ((weighted_auroc, auroc), (weighted_auprc, auprc), (weighted_high_minus_low, high_minus_low)):
        got = weighted(scores, target, counts[None, :])[0]
        want = plain(scores[idx], target[idx]) if idx.size else float("nan")
        assert (np.isnan(got) and np.isnan(want)) or got == pytest.approx(want, abs=1e-12)


def test_percentile_ranks_break_ties_by_the_given_key_not_input_order():
    values = np.array([1.0, 1.0, 0.0])
    assert percentile_ranks(values).tolist() == pytest.approx([2.5 / 3, 2.5 / 3, 1 / 3])
    assert percentile_ranks(values, tie_break=["b", "a", "c"]).tolist() == pytest.approx([1.0, 2 / 3, 1 / 3])
    assert percentile_ranks(values[::-1], tie_break=["c", "a", "b"]).tolist() == pytest.approx([1 / 3, 2 / 3, 1.0])


def _scores(rows):
    return run_scores(runs_from_rows(rows))


def test_a_gap_that_ranks_the_outcome_perfectly_gives_auroc_one_per_model_macro_and_rank_pooled():
    scores = _scores(panel_rows(12))
    edits = join_edits(edit_rows(12), scores)
    result = compute_validity(scores, edits, FAST)
    rows = result.standalone
    assert {r.check for r in rows} == {"SRC", "Swap strict", "Swap flip+vis."}
    for row in rows:
        assert row.auroc == 1.0 and row.auprc == 1.0 and row.hl == 1.0, row
        assert row.auroc_lo == 1.0
    pooled = [r for r in rows if r.model == "Rank-pooled" and r.check == "SRC"][0]
    assert pooled.n == 12 * len(MODELS) and pooled.base_rate == 0.5
    # raw gaps live on per-model scales: ranking them across models would not separate the outcome
    raw = np.concatenate([s.events.gap[s.events.groups.true_index] for s in scores])
    rel = np.concatenate([s.events.groups.rel["original"] for s in scores])
    assert auroc(raw, rel) < 0.9


def test_discordance_quadrants_partition_the_records_and_join_the_edits():
    scores = _scores(panel_rows(12))
    edits = join_edits(edit_rows(12), scores)
    d = compute_validity(scores, edits, FAST).discordance
    assert [r.quadrant for r in d.rows] == list(QUADRANTS)
    assert sum(r.n for r in d.rows) == d.n == 24 * len(MODELS)
    assert sum(r.share for r in d.rows) == pytest.approx(1.0)
    assert sum(r.swap_n for r in d.rows) == 12 * len(MODELS)
    # every statement here is credited; confidence σ(|m_o|) rises with v, so the high half holds v > ½
    high = d.rows[0]
    assert high.n == 12 * len(MODELS) and high.flip_vis == 1.0 and d.rows[2].flip_vis == 0.0
    assert d.n_high == d.rows[0].n + d.rows[1].n and d.n_low == d.n - d.n_high
    assert all(r.n_high + r.n_low == r.n for r in d.per_run)


def test_confidence_split_puts_median_ties_in_the_high_stratum():
    # hand-worked: median 0.5 and three records tie with it → 4 high; even n without ties → n/2 high
    assert confidence_high(np.array([0.1, 0.5, 0.5, 0.5, 0.9])).tolist() == [False, True, True, True, True]
    assert confidence_high(np.array([0.4, 0.1, 0.3, 0.2])).tolist() == [True, False, True, False]
    assert confidence_high(np.array([0.3, 0.1, 0.2])).sum() == 2  # odd n: the median record is high


# VCA §15 "Confidence–VCA discordance": 3,715 + 573 high and 1,821 + 2,407 low of 8,516 records, split within
# each of 8 runs (4 models × VSR 1,249 and GSR-COCO 880 records).
PAPER_HIGH, PAPER_LOW, PAPER_RUNS = 3715 + 573, 1821 + 2407, [1249] * 4 + [880] * 4


def test_paper_split_sizes_need_the_ties_high_rule():
    assert PAPER_HIGH + PAPER_LOW == sum(PAPER_RUNS) == 8516
    # strictly above the median holds at most ⌊n/2⌋ per run: 4,256 < 4,288, so the paper's rule is ≥ median
    assert sum(n // 2 for n in PAPER_RUNS) == 4256 < PAPER_HIGH
    # ≥ median holds at least ⌈n/2⌉ per run (4,260); the 28 more are records tied at a median
    assert sum(-(-n // 2) for n in PAPER_RUNS) == 4260 <= PAPER_HIGH


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=40))
def test_confidence_high_holds_at_least_half(values):
    confidence = np.array(values, dtype=float)
    high = confidence_high(confidence)
    assert high.sum() >= -(-len(values) // 2)
    assert confidence[high].min() >= confidence[~high].max(initial=-1.0)


def _gap_beyond_confidence(model, v, s):
    """True statement: m_o ≈ s (its confidence carries no signal), text falls with v → G_img ≈ s·(0.5 + v);
    the false statement is rejected (Rel_o) exactly when v > ½."""
    jitter = 0.01 * ((np.sin(v * 12.9898) * 43758.5453) % 1.0)  # a fixed pseudo-random order unrelated to v
    false_original = -s * (0.5 + jitter) if v > 0.5 else s * 0.1
    return {"original": (s * (1.0 + jitter), false_original), "text": (s * (0.5 - v), -s * 0.2)}


def test_incremental_control_credits_a_gap_that_confidence_does_not_carry():
    scores = _scores(panel_rows(16, extra=_gap_beyond_confidence))
    edits = join_edits(edit_rows(16), scores)
    rows = compute_validity(scores, edits, FAST).incremental
    primary = [r for r in rows if r.analysis == "primary" and r.target == "Flip+visibility"][0]
    assert primary.edits == 16 and primary.records == 64
    assert primary.augmented > 0.9 and primary.baseline < 0.7
    assert primary.delta > 0.3 and primary.delta_lo > 0
    assert all(d > 0 for d in primary.per_model_delta.values())
    names = {r.analysis for r in rows}
    assert {"signed-margin rank", "horizontal", "vertical"} <= names
    assert {f"without {m}" for m in MODELS} <= names


def _with_pair_d(rows, pair_d):
    """Every record in Rel_o, with the planted Pair D of its (model, edit) and flip+visibility = planted."""
    out = []
    for k, row in enumerate(rows):
        flag, success = pair_d(k)
        out.append(row | {"rel_o": 1, "pair_d": int(flag), "flip_vis": int(success)})
    return out


def test_pair_d_increment_within_rel_o_credits_a_pair_d_the_baseline_does_not_carry():
    # VCA §15: leave-one-edit-out within Rel_o, baseline model + relation + direction + confidence rank,
    # augmented by Pair D. Planted: the outcome is Pair D itself, drawn independently of every baseline feature.
    scores = _scores(panel_rows(20))
    rng = np.random.default_rng(3)
    planted = rng.random(80) < 0.5
    edits = join_edits(_with_pair_d(edit_rows(20), lambda k: (planted[k], planted[k])), scores)
    rows = compute_validity(scores, edits, FAST).incremental
    (row,) = [r for r in rows if r.analysis == "Pair D within Rel_o"]
    assert (row.target, row.added, row.edits, row.records) == ("Flip+visibility", "Pair D", 20, 80)
    assert row.augmented > 0.95 and row.baseline < 0.75
    assert row.delta > 0.2 and row.delta_lo > 0 and not isinstance(row.delta_hi, Missing)
    # the G_img rows say what they add, beside it
    assert {r.added for r in rows if r.analysis == "primary"} == {"G_img rank"}


@pytest.mark.slow  # ~8 s: three validity runs
def test_pair_d_increment_is_null_when_pair_d_carries_nothing_and_not_computable_without_it():
    # a Pair D shared by every Rel_o record carries nothing beyond the intercept: the same predictions, Δ = 0
    scores = _scores(panel_rows(20))
    outcomes = np.random.default_rng(5).random(80) < 0.5
    flags = np.ones(80, dtype=bool)
    edits = join_edits(_with_pair_d(edit_rows(20), lambda k: (flags[k], outcomes[k])), scores)
    (row,) = [r for r in compute_validity(scores, edits, FAST).incremental if r.analysis == "Pair D within Rel_o"]
    assert row.delta == pytest.approx(0.0, abs=1e-12) and row.baseline == pytest.approx(row.augmented)
    assert row.delta_lo == pytest.approx(0.0, abs=1e-12) == row.delta_hi
    # an older outcome table with joint but no pair_d: within Rel_o, Pair D is Joint
    older = [{k: v for k, v in r.items() if k != "pair_d"} | {"joint": r["pair_d"]}
             for r in _with_pair_d(edit_rows(20), lambda k: (flags[k], outcomes[k]))]
    (same,) = [r for r in compute_validity(scores, join_edits(older, scores), FAST).incremental
               if r.analysis == "Pair D within Rel_o"]
    assert same.delta == row.delta
    (missing,) = [r for r in compute_validity(scores, join_edits(edit_rows(20), scores), FAST).incremental
                  if r.analysis == "Pair D within Rel_o"]
    assert isinstance(missing.delta, Missing) and "pair_d" in missing.delta.reason


def test_shared_margin_control_separates_the_true_margin_from_the_gap():
    scores = _scores(panel_rows(12, extra=_gap_beyond_confidence))
    rows = compute_validity(scores, None, FAST).shared_margin
    macro = [r for r in rows if r.target == "rel_o" and r.model.startswith("Macro")][0]
    assert macro.gap_auroc == 1.0
    assert macro.true_margin_auroc < 0.8
    assert macro.cv_delta > 0.2 and macro.cv_delta_lo <= macro.cv_delta <= macro.cv_delta_hi


def test_conditional_auroc_is_the_size_weighted_mean_over_bins_with_both_classes():
    scores = np.array([1.0, 2.0, 3.0, 4.0, 2.0, 1.0])
    target = np.array([False, True, False, True, False, True])
    condition = np.array([1.0, 1.0, 2.0, 2.0, 3.0, 3.0])
    # bins of two: AUROC 1, 1 and 0 → (1 + 1 + 0) / 3
    assert conditional_auroc(scores, target, condition, 3) == pytest.approx(2 / 3)


def test_validity_cli_writes_json_csv_and_plot(tmp_path, versioned_outputs):
    rows = panel_rows(10, split="test")
    write_table(tmp_path / "a.parquet", [r for r in rows if r["model"] in ("alpha", "beta")])
    write_table(tmp_path / "b.csv", [r for r in rows if r["model"] in ("gamma", "delta")])
    outcomes = edit_rows(10)
    write_table(tmp_path / "edit_outcomes.csv", outcomes)
    out = tmp_path / "val"
    result = CliRunner().invoke(app, ["vca", "validity", str(tmp_path / "a.parquet"), str(tmp_path / "b.csv"),
                                      "--edits", str(tmp_path / "edit_outcomes.csv"), "--out", str(out),
                                      "--resamples", "100", "--hl-resamples", "60", "--repeats", "2"])
    assert result.exit_code == 0, result.output
    data = json.loads((out / "validity.json").read_text())
    assert data["edits"] == {"dataset": "gsr", "records": 40, "edits": 10}
    assert (data["settings"]["n_resamples"], data["settings"]["hl_resamples"]) == (100, 60)
    assert "strata (confidence ≥ median within run): high n = " in result.output
    assert {tuple(r["splits"]) for r in data["runs"]} == {("test",)}
    assert "split test" in result.output
    for name in ("standalone", "discordance", "discordance_runs", "shared_margin", "incremental"):
        assert (out / f"{name}.csv").exists()
    assert (out / "validity.png").stat().st_size > 0
    assert "Standalone predictive validity" in result.output
    said = " ".join(result.output.split())
    assert "Pair D within Rel_o" in said and "not computable (the edit outcomes have no pair_d" in said
    versioned_outputs(out, {"validity.json": VcaValidityResult})


def test_validity_cli_without_source_ids_asks_for_the_edit_items(tmp_path, monkeypatch):
    write_table(tmp_path / "m.csv", panel_rows(6))
    write_table(tmp_path / "edit_outcomes.csv",
                [{k: v for k, v in r.items() if k != "source_item_id"} for r in edit_rows(6)])
    monkeypatch.setattr("sys.argv", ["vlaudit", "vca", "validity", str(tmp_path / "m.csv"), "--edits",
                                     str(tmp_path / "edit_outcomes.csv"), "--out", str(tmp_path / "o"),
                                     "--resamples", "10", "--repeats", "1", "--no-plot"])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    # with the build's items.jsonl the same outcomes join
    probes = [{"item_id": f"p{g}", "edit_id": f"e{g:03d}", "probe": "src-r", "source_item_id": f"g{g:03d}-t"}
              for g in range(6)]
    write_table(tmp_path / "items.jsonl", probes)
    result = CliRunner().invoke(app, ["vca", "validity", str(tmp_path / "m.csv"), "--edits",
                                      str(tmp_path / "edit_outcomes.csv"), "--edit-items", str(tmp_path / "items.jsonl"),
                                      "--out", str(tmp_path / "o"), "--resamples", "10", "--repeats", "1", "--no-plot"])
    assert result.exit_code == 0, result.output


def test_edit_outcome_records_name_their_source_statement_for_the_join():
    from vlaudit.analysis.vca.edits import edit_outcomes

    probes = [{"item_id": f"{e}-{p}", "edit_id": e, "probe": p, "source_item_id": f"{e}-t", "source_group_id": f"{e}-g"}
              for e in ("e1", "e2") for p in ("src-r", "src-inv", "edit-r", "edit-inv", "edit-subj", "edit-obj")]
    preds = [{"model": "m", "interface": "yesno", "item_id": p["item_id"], "pred": "yes"} for p in probes]
    items = [{"model": "m", "interface": "yesno", "item_id": f"{e}-t", "cu": 0, "dcc": 1} for e in ("e1", "e2")]
    groups = [{"model": "m", "interface": "yesno", "group_id": f"{e}-g", "rel_o": True, "pair_d": True,
               "joint": True} for e in ("e1", "e2")]
    records = edit_outcomes(probes, ["e1", "e2"], preds, items, groups, n_resamples=20).records
    assert [(r["source_item_id"], r["source_group_id"]) for r in records] == [("e1-t", "e1-g"), ("e2-t", "e2-g")]


def _two_model_ranking(**kw):
    from vlaudit.analysis.vca.scored_runs import ranking_rows
    from vlaudit.results.vca.validity import RankingRow

    # model a: 4 records, 3 successes (base rate 0.75); model b: 8 records, 2 successes (0.25)
    scores = np.array([4, 3, 2, 1, 8, 7, 6, 5, 4, 3, 2, 1], dtype=float)
    target = np.array([1, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0], dtype=bool)
    models = np.array(["a"] * 4 + ["b"] * 8, dtype=object)
    clusters = np.array([f"g{i % 4}" for i in range(12)], dtype=object)
    return ranking_rows(scores, target, models, clusters, seed=7, make=RankingRow, **kw)


def test_macro_base_rate_averages_the_models_and_pooling_weights_records():
    rows = {r.model: r for r in _two_model_ranking(n_resamples=50)}
    assert rows["a"].base_rate == 0.75 and rows["b"].base_rate == 0.25
    assert rows["Macro (2 models)"].base_rate == 0.5  # as the paper's SRC macro 53.01 = mean of 4 models
    assert rows["Rank-pooled"].base_rate == pytest.approx(5 / 12)


def test_hl_intervals_use_their_own_resample_count():
    from vlaudit.settings import HL_RESAMPLES

    assert ValiditySettings().hl_resamples == HL_RESAMPLES == 2000
    mixed = _two_model_ranking(n_resamples=300, hl_resamples=100)
    same_count = _two_model_ranking(n_resamples=300)
    hl_only = _two_model_ranking(n_resamples=100)
    for m, s, h in zip(mixed, same_count, hl_only, strict=True):
        assert (m.auroc_lo, m.auroc_hi, m.auprc_lo) == (s.auroc_lo, s.auroc_hi, s.auprc_lo)
        assert (m.hl_lo, m.hl_hi) == (h.hl_lo, h.hl_hi)
