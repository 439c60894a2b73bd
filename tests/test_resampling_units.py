"""Every interval and p-value names its resampling unit and cluster count: `cycles eval --cluster`, the exact
McNemar test on the binary mismatch-axis and relation-group metrics of `compare vca`, and the clustered
2×2 metrics of `compare cycles`."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.contingency_tables import mcnemar
from typer.testing import CliRunner

import vlaudit
from vlaudit.analysis.compare.vca import mcnemar_applies
from vlaudit.analysis.vca.report import run_events
from vlaudit.cli import app
from vlaudit.errors import InputError
from vlaudit.files import write_jsonl
from vlaudit.metrics.cycles import CYCLE_UNIT_CAVEAT, cycle_credit, cycle_unit, summarize_contrasts
from vlaudit.records import Cycle
from vlaudit.settings import MIN_CLUSTERS
from vlaudit.sources.margins import runs_from_rows
from vlaudit.stats.bootstrap import bootstrap_means
from vlaudit.stats.clusters import ResamplingUnit, small_sample_cells

# ------------------------------------------------------------------------------------------ cycles eval


def _shared_image_cycles(n: int = 40, images: int = 8) -> list[Cycle]:
    """``n`` cycles on ``images`` images (cycle k uses images k % images and (k + 1) % images, so they form
    one chain) plus an extra column ``source`` that puts cycles k and k + 1 (k even) together."""
    return [Cycle(f"c{k:02d}", "left", f"u{k % images}", f"v{k}a", f"u{(k + 1) % images}", f"v{k}b",
                  split="test", extra={"source": f"s{k // 2}"}) for k in range(n)]


def _cycle_scores(cycles: list[Cycle], seed: int = 0) -> dict[tuple[str, str], float]:
    rng = np.random.default_rng(seed)
    return {(img, cap): float(rng.normal() + (0.6 if cap.endswith("a") == (img == c.image_1) else 0.0))
            for c in cycles for img in (c.image_1, c.image_2) for cap in (c.caption_1, c.caption_2)}


def test_cycles_eval_cluster_image_names_the_unit_and_clusters(tmp_path: Path) -> None:
    """`cycles eval --cluster image` resamples linked cycles together; the table, eval.json and the warning
    name the unit and the number of clusters (one chain of images: one cluster)."""
    cycles = _shared_image_cycles()
    write_jsonl(tmp_path / "cycles.jsonl", [{"cycle_id": c.cycle_id, "family": c.family, "image_1": c.image_1,
                                             "caption_1": c.caption_1, "image_2": c.image_2,
                                             "caption_2": c.caption_2, "split": c.split, **c.extra}
                                            for c in cycles])
    write_jsonl(tmp_path / "scores.jsonl", [{"image_id": u, "caption_id": v, "score": s}
                                            for (u, v), s in _cycle_scores(cycles).items()])
    common = ["cycles", "eval", "--cycles", str(tmp_path / "cycles.jsonl"), "--scores",
              str(tmp_path / "scores.jsonl"), "--resamples", "200", "--min-cycles", "5", "--no-plot"]
    runner = CliRunner()
    plain = runner.invoke(app, [*common, "--out", str(tmp_path / "plain.json")])
    assert plain.exit_code == 0, plain.output
    assert "unit: cycle" in plain.output and "cycles that share an image" in plain.output
    cell = json.loads((tmp_path / "plain.json").read_text())["families"]["left"]["test"]
    assert (cell["unit"], cell["n_clusters"]) == ("cycle", 40)

    joined = runner.invoke(app, [*common, "--cluster", "image", "--out", str(tmp_path / "image.json")])
    assert joined.exit_code == 0, joined.output
    data = json.loads((tmp_path / "image.json").read_text())
    cell = data["families"]["left"]["test"]
    assert (cell["unit"], cell["n_clusters"]) == ("image", 1) and data["cluster"] == "image"
    assert cell["ci"] == [cell["cycle_acc"], cell["cycle_acc"]]  # one cluster: every resample is the sample
    assert "unit: image" in joined.output and "left test 40 1" in " ".join(joined.output.split())
    assert any("only 1 image cluster" in w and f"(< {MIN_CLUSTERS})" in w for w in data["warnings"])

    by_column = vlaudit.evaluate_cycles(cycles, _cycle_scores(cycles), min_cycles=5, n_resamples=200,
                                        cluster="source").evaluation
    assert by_column.families["left"]["test"].n_clusters == 20
    assert by_column.families["left"]["test"].unit == "source"
    with pytest.raises(InputError, match="--cluster stem: cycles can be clustered by .*source"):
        vlaudit.evaluate_cycles(cycles, _cycle_scores(cycles), min_cycles=5, cluster="stem")


def test_cycles_eval_clustered_interval_equals_a_readable_cluster_bootstrap() -> None:
    """The clustered interval is the percentile interval of the mean credit over the records of k clusters
    drawn with replacement (clusters coded in order of first appearance, PCG64 draws of the seed)."""
    cycles = _shared_image_cycles(n=60, images=60)
    unit = cycle_unit(cycles, "source")
    rng = np.random.default_rng(3)
    delta = rng.normal(0.2, 1.0, size=60)
    cell = summarize_contrasts(delta, n_resamples=400, seed=11, unit=unit)
    credit = cycle_credit(delta)
    labels = list(dict.fromkeys(unit.labels.tolist()))
    members = [np.flatnonzero(unit.labels == label) for label in labels]
    draws = np.random.default_rng(11).integers(0, len(labels), size=(400, len(labels)))
    means = [credit[np.concatenate([members[k] for k in row])].mean() for row in draws]
    assert cell.ci == pytest.approx(tuple(np.nanquantile(means, [0.025, 0.975])), abs=1e-12)
    assert (cell.unit, cell.n_clusters, cell.n) == ("source", 30, 60)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=1, max_size=40), st.randoms(use_true_random=False))
def test_cycle_clusters_of_one_equal_the_cycle_level_results(deltas: list[float], shuffle: Any) -> None:
    """With every cluster one cycle (labels in any order) the interval is the cycle-level one, and the
    clustered bootstrap of single cycles draws the same means as the item bootstrap."""
    delta = np.asarray(deltas)
    labels = [f"x{i}" for i in range(delta.size)]
    shuffle.shuffle(labels)
    unit = ResamplingUnit(np.array(labels, dtype=object), "source", "source")
    assert summarize_contrasts(delta, n_resamples=100, seed=2, unit=unit).ci == \
        summarize_contrasts(delta, n_resamples=100, seed=2).ci
    credit = cycle_credit(delta)
    in_order = np.array([f"y{i:03d}" for i in range(delta.size)], dtype=object)
    np.testing.assert_allclose(bootstrap_means(credit, n_resamples=50, seed=4, clusters=in_order),
                               bootstrap_means(credit, n_resamples=50, seed=4), rtol=0, atol=1e-12)


def test_small_sample_cells_warn_once_naming_each_cell() -> None:
    assert small_sample_cells({"a/val": MIN_CLUSTERS, "b/val": 40}, "cycle") == []
    (line,) = small_sample_cells({"a/val": 5, "b/test": 12, "c/val": 99}, "image")
    # each cell with its own count ("only 5 image clusters" was once printed for b/test's 12 too)
    assert "2 cell(s) have fewer than 20 image clusters (a/val 5, b/test 12)" in line and "only 5" not in line
    (line,) = small_sample_cells({"a/val": 5, "c/val": 99}, "image")
    assert line.startswith("a/val: only 5 image clusters (< 20)")


# ------------------------------------------------------------------------------------------ compare vca


def _mismatch_rows(model: str, seed: int, n: int, *, clusters: bool = False) -> list[dict[str, Any]]:
    """Yes/no margins with a mismatch context; ``clusters``: items 4j..4j+3 declare one cluster."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n):
        label = k % 2 == 0
        sign = 1.0 if label else -1.0
        values = {"original": sign * rng.uniform(0, 3) + rng.normal(0, 1), "text": rng.normal(0, 1),
                  "blank": rng.normal(0, 1), "mismatch": rng.normal(0, 1.5)}
        for context, margin in values.items():
            row = {"model": model, "dataset": "toy", "item_id": f"q{k:03d}", "context": context,
                   "margin": float(margin), "label": "yes" if label else "no"}
            if clusters:
                row |= {"cluster": f"c{k // 4}", "cluster_unit": "image"}
            rows.append(row)
    return rows


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mismatch_axis_binary_metrics_take_exact_mcnemar_equal_to_statsmodels(tmp_path: Path, seed: int) -> None:
    """Independent items: Dep_perm, D-CC_perm, Dep+M and Strict+M get the exact McNemar test (no 1/(B + 1)
    floor), equal to statsmodels' exact test on the 2×2 table of the two models' per-item events."""
    rows = {name: _mismatch_rows(name, 10 * seed + i, 80) for i, name in enumerate(("a", "b"))}
    paths = []
    for name, model_rows in rows.items():
        (tmp_path / name).mkdir()
        write_jsonl(tmp_path / name / "margins.jsonl", model_rows)
        paths.append(tmp_path / name / "margins.jsonl")
    result = vlaudit.compare_vca(paths, n_resamples=100, n_permutations=99).comparison
    events = {name: run_events(runs_from_rows(model_rows)[0]) for name, model_rows in rows.items()}
    columns = {"dep_perm": lambda ev: ev.dep_perm, "dep_m": lambda ev: ev.dep_m, "strict_m": lambda ev: ev.strict_m,
               "dcc_perm": lambda ev: ev.correct & ev.dep_perm}
    for metric, column in columns.items():
        row = next(r for r in result.comparisons if r.metric == metric and r.family == "all")
        a, b = column(events["a"]), column(events["b"])
        table = [[int((a & b).sum()), int((a & ~b).sum())], [int((~a & b).sum()), int((~a & ~b).sum())]]
        assert row.test == "mcnemar" and (row.unit, row.n_clusters) == ("item", 80)
        assert row.p == pytest.approx(mcnemar(table, exact=True).pvalue, abs=1e-12), (metric, table)


def test_mismatch_axis_on_clustered_items_takes_the_cluster_permutation_test(tmp_path: Path) -> None:
    paths = []
    for i, name in enumerate(("a", "b")):
        (tmp_path / name).mkdir()
        write_jsonl(tmp_path / name / "margins.jsonl", _mismatch_rows(name, 40 + i, 80, clusters=True))
        paths.append(tmp_path / name / "margins.jsonl")
    result = vlaudit.compare_vca(paths, n_resamples=100, n_permutations=99).comparison
    mismatch = [r for r in result.comparisons if r.metric in ("dep_perm", "dcc_perm", "dep_m", "strict_m")]
    assert len(mismatch) == 4
    # 20 image clusters: the exact cluster sign flip (at most EXACT_SIGN_FLIP_CLUSTERS), not Monte Carlo
    assert {(r.test, r.unit, r.n_clusters) for r in mismatch} == {("sign-flip", "image", 20)}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 5)), min_size=1, max_size=30))
def test_mcnemar_applies_exactly_to_binary_events_on_independent_units(rows: list[tuple[bool, bool, int]]) -> None:
    num = np.array([[float(a) for a, _, _ in rows], [float(b) for _, b, _ in rows]])
    den = np.ones_like(num)
    singletons = np.array([f"i{k}" for k in range(len(rows))], dtype=object)
    assert mcnemar_applies(num, den, singletons)
    shared = np.array([f"c{c}" for _, _, c in rows], dtype=object)
    assert mcnemar_applies(num, den, shared) == (len(set(shared.tolist())) == len(rows))
    # a group metric: only the records with a denominator (each group's true statement) are counted
    group_den = np.tile(np.array([1.0 if k % 2 == 0 else 0.0 for k in range(len(rows))]), (2, 1))
    pairs = np.array([f"g{k // 2}" for k in range(len(rows))], dtype=object)
    assert mcnemar_applies(num * group_den, group_den, pairs)
    assert not mcnemar_applies(num * 0.5 + 0.25, den, singletons)  # not 0/1 events
    assert not mcnemar_applies(num, np.vstack([den[0], den[0] * 2]), singletons)  # denominators differ


# ------------------------------------------------------------------------------------------ compare cycles


def test_compare_cycles_clustered_two_by_two_metrics_use_the_sign_flip_not_mcnemar() -> None:
    """The all-or-nothing Winoground metrics: exact McNemar over blocks by default; clustered by image (linked
    blocks), the exact sign flip of the clusters' totals (McNemar would treat linked blocks as independent)."""
    # cycles 2j and 2j + 1 (j < 15) share both images: 15 clusters of two, then 30 cycles alone
    cycles = [Cycle(f"c{k:02d}", "left", f"u{k // 2}" if k < 30 else f"p{k}", f"v{k}a",
                    f"x{k // 2}" if k < 30 else f"q{k}", f"v{k}b", split="test",
                    extra={"benchmark": "wino", "benchmark_metrics": "winoground"}) for k in range(60)]
    scores = {"a": _cycle_scores(cycles, 1), "b": _cycle_scores(cycles, 2)}
    kwargs: dict[str, Any] = {"min_cycles": 5, "n_resamples": 100, "n_permutations": 99}
    plain = vlaudit.compare_cycles(cycles, scores, **kwargs).comparison
    whole = [r for r in plain.comparisons if r.metric in ("text", "image", "group")]
    assert {(r.test, r.unit, r.n_clusters) for r in whole} == {("mcnemar", "cycle", 60)}
    joined = vlaudit.compare_cycles(cycles, scores, cluster="image", **kwargs).comparison
    whole = [r for r in joined.comparisons if r.metric in ("text", "image", "group")]
    assert {(r.test, r.unit, r.n_clusters) for r in whole} == {("sign-flip", "image", 45)}


# ------------------------------------------------------------------------------------------ every record

#: records with an interval that do not carry ``unit`` and ``n_clusters`` themselves, and where their unit and
#: cluster count are named instead (docs/concepts/statistics.md, "Where each output names its unit")
UNIT_NAMED_ELSEWHERE = {
    "HeadlineIntervals": "RunAudit.bootstrap (one count matrix per run)",
    "Taxonomy": "RunAudit.bootstrap; the Wilson interval is design-effect corrected over the same clusters",
    "PermutationAxis": "RunAudit.bootstrap",
    "Sensitivity": "RunAudit.bootstrap",
    "SourceEffect": "FactorialResult.unit and .stems",
    "FactorialPooled": "FactorialResult.unit and .stems",
    "FactorialModel": "Wilson intervals design-effect corrected over the stems: FactorialResult.unit, .stems, "
                      ".definitions",
    "PooledRate": "the accepted edits (EditOutcomesSummary.n_accepted), printed by edits analyze",
    "FeasibilityCheck": "a Wilson interval over the sampled items (item-level)",
    "AnnotationConsensusSummary": "pairwise_range is a range of agreements, not an interval",
    "DemoCycleCell": "the demo's cycles, bootstrapped within each seed (the cycle)",
    "DemoRankPoint": "a CycleAccCell of one seed (the cycle)",
    "DemoRunHeadline": "the demo run's RunAudit.bootstrap",
    "DemoDeltaV": "the demo factorial's FactorialResult (stems)",
    "ControlSetStability": "stable_range and cu_retention_range are ranges over runs, not intervals",
    "Discordance": "high_conf_uncredited_range is a range over runs, not an interval",
    "ControlSurvival": "a Wilson interval over the credited items, corrected over RunAudit.bootstrap's clusters",
    "Survival": "a Wilson interval over the credited items, corrected over RunAudit.bootstrap's clusters",
    "NoiseBand": "a band from the noise floor (every decision inside it set both ways), not resampled",
    "GroupIntervals": "RunAudit.bootstrap (relation.csv carries its unit and n_clusters)",
    "RelationSummary": "RunAudit.bootstrap (relation.csv carries its unit and n_clusters)",
}


def _interval_records() -> dict[str, set[str]]:
    """Every record type of vlaudit.results with an interval field → its field names."""
    import dataclasses
    import importlib
    import pkgutil
    import typing

    import vlaudit.results

    found: dict[str, set[str]] = {}
    for info in pkgutil.walk_packages(vlaudit.results.__path__, "vlaudit.results."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if not (isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == module.__name__):
                continue
            hints = typing.get_type_hints(obj)
            if any("tuple[float, float]" in str(hints[f.name]) for f in dataclasses.fields(obj)):
                found[name] = {f.name for f in dataclasses.fields(obj)}
    return found


def test_every_record_with_an_interval_names_its_unit_and_cluster_count() -> None:
    """A new record with an interval must carry ``unit`` and ``n_clusters`` or say where they are named."""
    records = _interval_records()
    assert {"CycleAccCell", "VcaComparison", "VcaLeaderboardRow", "CycleLeaderboardRow"} <= set(records)
    unnamed = [name for name, fields in records.items()
               if not {"unit", "n_clusters"} <= fields and name not in UNIT_NAMED_ELSEWHERE]
    assert not unnamed, f"records with an interval but no unit/n_clusters: {unnamed}"
    stale = [name for name in UNIT_NAMED_ELSEWHERE if name in records and {"unit", "n_clusters"} <= records[name]]
    assert not stale and set(UNIT_NAMED_ELSEWHERE) <= set(records)


def test_leaderboards_name_their_unit_in_the_rows_the_console_and_the_csv(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vlaudit.commands._render import show

    paths = []
    for i, name in enumerate(("a", "b", "c")):
        (tmp_path / name).mkdir()
        write_jsonl(tmp_path / name / "margins.jsonl", _mismatch_rows(name, 60 + i, 80, clusters=True))
        paths.append(tmp_path / name / "margins.jsonl")
    result = vlaudit.compare_vca(paths, out=tmp_path / "out", n_resamples=50, n_permutations=49, plot=False)
    assert {(r.unit, r.n_clusters) for r in result.comparison.leaderboard} == {("image", 20)}
    show(vlaudit.compare_view(result.comparison))  # what `vlaudit compare vca` prints
    printed = " ".join(capsys.readouterr().out.split())
    assert "leaderboard (%; 20 image clusters;" in printed
    with (tmp_path / "out" / "leaderboard.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {(row["unit"], row["n_clusters"]) for row in rows} == {("image", "20")}


def test_compare_cycles_warns_below_the_minimum_number_of_clusters() -> None:
    cycles = _shared_image_cycles(n=40, images=40)
    scores = {"a": _cycle_scores(cycles, 1), "b": _cycle_scores(cycles, 2)}
    kwargs: dict[str, Any] = {"min_cycles": 5, "n_resamples": 50, "n_permutations": 49}
    # the cycle unit's caveat is a warning of the file too, not only of the console
    assert vlaudit.compare_cycles(cycles, scores, **kwargs).comparison.warnings == [CYCLE_UNIT_CAVEAT]
    assert vlaudit.compare_cycles(cycles, scores, cluster="source", **kwargs).comparison.warnings == []  # 20
    chain = _shared_image_cycles(n=40, images=8)
    joined = vlaudit.compare_cycles(chain, {"a": _cycle_scores(chain, 1), "b": _cycle_scores(chain, 2)},
                                    cluster="image", **kwargs)
    collapse, line = joined.comparison.warnings
    assert "CycleAcc/test/left: only 1 image cluster" in line
    assert "into 1 connected cluster" in collapse


def test_declared_clusters_of_one_item_give_the_item_level_comparison(tmp_path: Path) -> None:
    """Every item declared its own cluster: the same tests, p-values and intervals as undeclared items."""
    results = []
    for declared in (False, True):
        paths = []
        for i, name in enumerate(("a", "b")):
            rows = _mismatch_rows(name, 80 + i, 60)
            if declared:
                rows = [r | {"cluster": f"solo-{r['item_id']}", "cluster_unit": "item"} for r in rows]
            folder = tmp_path / str(declared) / name
            folder.mkdir(parents=True)
            write_jsonl(folder / "margins.jsonl", rows)
            paths.append(folder / "margins.jsonl")
        results.append(vlaudit.compare_vca(paths, n_resamples=100, n_permutations=99).comparison)
    plain, solo = results
    assert [(r.metric, r.test, r.p, r.ci, r.n_clusters) for r in plain.comparisons] == \
        [(r.metric, r.test, r.p, r.ci, r.n_clusters) for r in solo.comparisons]
    assert {r.test for r in plain.comparisons if r.metric in ("dep_perm", "strict_m")} == {"mcnemar"}
