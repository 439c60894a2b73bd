"""The resampling unit: every builder declares its cluster, ``vca report`` and
``compare vca`` resample and permute it (``--cluster COLUMN`` overrides), and every output names it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import vlaudit
from vlaudit.analysis.vca.units import run_unit, shared_unit
from vlaudit.cli import app
from vlaudit.errors import InputError
from vlaudit.files import write_jsonl
from vlaudit.sources.items import BenchmarkItem, image_clusters
from vlaudit.sources.margins import runs_from_rows
from vlaudit.stats.clusters import nest_groups, small_sample_warning
from vlaudit.stats.paired import cluster_permutation_pvalues
from vlaudit.stats.sign_flip import sign_flip_test

CONTEXTS = ("original", "text", "blank")


def _rows(model: str, seed: int, n: int, *, cluster_of: Any = None, unit: str = "stem",
          groups: bool = False) -> list[dict[str, Any]]:
    """Random margins of one model on ``n`` labelled items; ``cluster_of(k)`` the declared cluster of item k."""
    rng = np.random.default_rng(seed)
    rows = []
    for k in range(n):
        label = k % 2 == 0
        base = rng.normal(0, 1, size=3)
        values = {"original": base[0] + (1.0 if label else -1.0), "text": base[1], "blank": base[2]}
        for context in CONTEXTS:
            row: dict[str, Any] = {"model": model, "dataset": "toy", "item_id": f"q{k:03d}", "context": context,
                                   "margin": float(values[context]), "label": "yes" if label else "no"}
            if cluster_of is not None:
                row |= {"cluster": str(cluster_of(k)), "cluster_unit": unit}
            if groups:
                row |= {"group_id": f"g{k // 2}", "statement": "true" if k % 2 == 0 else "false"}
            rows.append(row)
    return rows


def _write(folder: Path, rows: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return write_jsonl(folder / "margins.jsonl", rows)


def _partition(labels: Any) -> set[frozenset[int]]:
    blocks: dict[str, set[int]] = {}
    for i, label in enumerate(labels):
        blocks.setdefault(str(label), set()).add(i)
    return {frozenset(b) for b in blocks.values()}


def _nest_reference(labels: list[str], groups: list[str | None]) -> set[frozenset[int]]:
    """Readable reference: start from the clusters, merge any two blocks that share a group until none do."""
    blocks = [set(b) for b in _partition(labels)]
    merged = True
    while merged:
        merged = False
        for i in range(len(blocks)):
            for j in range(i + 1, len(blocks)):
                gi = {groups[x] for x in blocks[i]} - {None}
                gj = {groups[x] for x in blocks[j]} - {None}
                if gi & gj:
                    blocks[i] |= blocks.pop(j)
                    merged = True
                    break
            if merged:
                break
    return {frozenset(b) for b in blocks}


@settings(max_examples=40)
@given(st.lists(st.tuples(st.integers(0, 5), st.one_of(st.none(), st.integers(0, 4))), min_size=1, max_size=25))
def test_nest_groups_equals_the_readable_merge(pairs: list[tuple[int, int | None]]) -> None:
    labels = [f"c{c}" for c, _ in pairs]
    groups = [None if g is None else f"g{g}" for _, g in pairs]
    assert _partition(nest_groups(np.array(labels, dtype=object), groups)) == _nest_reference(labels, groups)


@settings(max_examples=3, deadline=None)
@given(n=st.integers(6, 30), seed=st.integers(0, 10_000), names=st.randoms(use_true_random=False))
def test_clusters_of_one_item_give_the_item_level_comparison(tmp_path_factory: pytest.TempPathFactory, n: int,
                                                             seed: int, names: Any) -> None:
    """A declared cluster per item (named anyhow) gives the item-level comparison bit for bit: the same
    intervals, the exact McNemar test on the binary metrics, the same p-values."""
    tmp = tmp_path_factory.mktemp("single")
    labels = [f"img-{x}" for x in names.sample(range(10 * n), n)]
    plain = [_write(tmp / f"p{m}", _rows(f"m{m}", seed + m, n)) for m in range(2)]
    single = [_write(tmp / f"s{m}", _rows(f"m{m}", seed + m, n, cluster_of=labels.__getitem__, unit="image"))
              for m in range(2)]
    left = vlaudit.compare_vca(plain, n_resamples=200, n_permutations=200).comparison.comparisons
    right = vlaudit.compare_vca(single, n_resamples=200, n_permutations=200).comparison.comparisons
    for x, y in zip(left, right, strict=True):
        assert (x.ci, x.test, x.p, x.p_holm) == (y.ci, y.test, y.p, y.p_holm), x.metric
        assert (x.unit, y.unit, y.n_clusters) == ("item", "image", n)
        assert y.test == ("mcnemar" if y.metric in ("acc", "dep", "dcc", "cu", "strict") else y.test)


def test_clusters_of_one_item_give_the_item_level_report(tmp_path: Path) -> None:
    n = 24
    labels = [f"img-{(7 * k) % n}" for k in range(n)]  # one image per item, in another order than the items
    plain = _write(tmp_path / "p", _rows("m", 5, n))
    single = _write(tmp_path / "s", _rows("m", 5, n, cluster_of=labels.__getitem__, unit="image"))
    (a,), (b,) = (vlaudit.vca_report(path, n_resamples=200).result.runs for path in (plain, single))
    assert a.ci == b.ci and a.bootstrap.unit == "item"
    assert (b.bootstrap.cluster, b.bootstrap.unit, b.bootstrap.n_clusters) == ("cluster", "image", n)


def test_compare_resamples_and_permutes_the_declared_stems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stems of four items: every row names the unit and the number of stems, the binary metrics use the
    cluster sign flip (no McNemar: items of a stem are not independent) on the stems' differences — exact
    with 12 stems (at most EXACT_SIGN_FLIP_CLUSTERS), the Monte Carlo flips beyond that."""
    n, size = 48, 4
    paths = [_write(tmp_path / f"m{m}", _rows(f"m{m}", 10 + m, n, cluster_of=lambda k: f"s{k // size}"))
             for m in range(2)]
    result = vlaudit.compare_vca(paths, n_resamples=300, n_permutations=500)
    rows = result.comparison.comparisons
    assert {(r.unit, r.n_clusters) for r in rows} == {("stem", n // size)}
    acc = next(r for r in rows if r.metric == "acc")
    assert acc.test == "sign-flip"
    runs = [runs_from_rows([json.loads(line) for line in p.read_text().splitlines()]) for p in paths]
    unit = shared_unit([r[0] for r in runs])
    correct = [((r[0].margins["original"] > 0) == r[0].labels).astype(np.float64) for r in runs]
    exact = sign_flip_test(correct[0] - correct[1], unit.labels)
    assert exact.method == "exact" and acc.p == pytest.approx(exact.p, abs=0)
    # the Monte Carlo test where the exact one is not used (a limit of 0 clusters)
    monkeypatch.setattr("vlaudit.analysis.compare.vca.EXACT_SIGN_FLIP_CLUSTERS", 0)
    result = vlaudit.compare_vca(paths, n_resamples=300, n_permutations=500)
    acc = next(r for r in result.comparison.comparisons if r.metric == "acc")
    assert acc.test == "permutation"
    expected = cluster_permutation_pvalues(correct[0] - correct[1], unit.labels, n_permutations=500,
                                           seed=result.comparison.settings.seed)
    assert acc.p == pytest.approx(float(expected[0]), abs=0)
    # overriding the unit with each item alone gives the item-level tests back
    items = vlaudit.compare_vca(paths, n_resamples=300, n_permutations=500, cluster="item_id")
    assert {(r.unit, r.n_clusters) for r in items.comparison.comparisons} == {("item", n)}
    assert next(r for r in items.comparison.comparisons if r.metric == "acc").test == "mcnemar"
    # fewer stems than the documented minimum: one warning naming the unit, the count and the coverage
    (warning,) = [w for w in result.comparison.warnings if "stem clusters" in w]
    assert "12 stem clusters (< 20)" in warning and "91%" in warning and "expanded percentile" in warning


def test_unknown_cluster_column_is_one_line_naming_it(tmp_path: Path) -> None:
    path = _write(tmp_path / "m", _rows("m", 0, 8))
    with pytest.raises(InputError, match="--cluster stem_id: .* has no such column"):
        vlaudit.vca_report(path, n_resamples=50, cluster="stem_id")


def test_relation_groups_are_kept_whole_inside_the_clusters() -> None:
    """A declared cluster that splits a relation group is merged with the group's other cluster."""
    rows = _rows("m", 3, 8, cluster_of=lambda k: f"c{(k + 1) // 2}", groups=True)  # q1,q2 | q3,q4 | ...
    (run,) = runs_from_rows(rows)
    unit = run_unit(run)
    assert _partition(unit.labels) == {frozenset(range(8))}  # the chain of groups and clusters is one cluster
    assert run_unit(run, "group_id").n_clusters == 4 and run_unit(run).unit == "stem"


def test_builders_declare_their_cluster() -> None:
    items = [BenchmarkItem(item_id=f"q{k}", image=f"img{k // 3}.jpg", question="?") for k in range(6)]
    items.append(BenchmarkItem(item_id="t", image=None, question="?"))
    clustered = image_clusters(items)
    assert [i.cluster for i in clustered] == ["img0.jpg"] * 3 + ["img1.jpg"] * 3 + [None]
    assert {i.cluster_unit for i in clustered} == {"image", None}


def test_small_sample_warning_quotes_the_measured_coverage() -> None:
    assert small_sample_warning(20, "stem") is None
    line = small_sample_warning(5, "image", "pope/yesno")
    assert line is not None and line.startswith("pope/yesno: only 5 image clusters (< 20)")


def test_cli_names_the_unit_and_prints_no_zero_p(tmp_path: Path) -> None:
    paths = [_write(tmp_path / f"m{m}", _rows(f"m{m}", 20 + m, 40, cluster_of=lambda k: f"s{k // 4}"))
             for m in range(2)]
    out = CliRunner().invoke(app, ["compare", "vca", *map(str, paths), "--out", str(tmp_path / "cmp"),
                                   "--resamples", "100", "--permutations", "100", "--no-plot"], env={"COLUMNS": "80"})
    assert out.exit_code == 0, out.output
    assert "10 stem clusters" in out.output and "0.0000" not in out.output
    assert "CI: unadjusted" in out.output
    report = CliRunner().invoke(app, ["vca", "report", str(paths[0]), "--out", str(tmp_path / "rep"),
                                      "--resamples", "100", "--cluster", "item_id", "--no-plot"], env={"COLUMNS": "80"})
    assert report.exit_code == 0, report.output
    assert "40 item clusters" in report.output


def test_factorial_items_carry_their_stem_into_the_margins_row(tmp_path: Path) -> None:
    """``data factorial`` declares the stem; ``vca score`` writes it on every margins row of the item."""
    from vlaudit.builders.factorial import build_factorial
    from vlaudit.scoring.run.plan import Record
    from vlaudit.scoring.run.runner import _item_fields
    from vlaudit.sources.items import read_items

    build_factorial(tmp_path, n_per_relation=1)
    items = read_items(tmp_path / "items.jsonl")
    assert {(i.cluster, i.cluster_unit) for i in items} == {(i.extra["stem_id"], "stem") for i in items}
    assert len({i.cluster for i in items}) == 4 and len(items) == 36
    row = _item_fields(Record(items[0], "original", "yesno"), "m")
    assert (row["cluster"], row["cluster_unit"]) == (items[0].extra["stem_id"], "stem")


@pytest.mark.slow
def test_the_compare_tutorial_reports_stem_clusters_and_the_stem_level_p(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/tutorials/compare.md, run as written: 16 stem clusters, every p a stem-level sign flip. Strict is 0
    for both models once a tied margin is no decision (the grounded model's text margin is exactly 0: before
    the tie convention its +0.125 had item-level p 0.001 and stem-level p ≈ 0.25), so it cannot survive; the
    headline differences, equal on every stem, survive with the exact sign flip's p of 2/2^16."""
    runner = CliRunner()
    steps = [["data", "factorial", "--out", "factorial", "--stems", "4"],
             *[["vca", "score", "--model", f"ref:scene-vqa-{name}", "--benchmark", "factorial/items.jsonl",
                "--images", "factorial", "--out", f"runs/{name}"] for name in ("grounded", "prior")],
             ["compare", "vca", "runs/grounded", "runs/prior", "--out", "compare", "--resamples", "1000",
              "--permutations", "1000"]]
    monkeypatch.chdir(tmp_path)
    for step in steps:
        out = runner.invoke(app, step, env={"COLUMNS": "80"})
        assert out.exit_code == 0, (step, out.output)
    assert "16 stem clusters" in out.output and "only 16 stem clusters (< 20)" in out.output
    rows = {r["metric"]: r for r in json.loads(Path("compare/compare.json").read_text())["comparisons"]
            if r["family"] == "all"}
    strict = rows["strict"]
    assert (strict["unit"], strict["n_clusters"], strict["test"]) == ("stem", 16, "sign-flip")
    assert strict["difference"] == 0.0 and strict["p"] == 1.0 and not strict["survives"]
    assert "ties decide Strict on 57 of 144 items" in " ".join(out.output.split())
    for metric in ("acc", "dep", "dcc", "cu"):
        row = rows[metric]
        # every stem gives the same difference: the exact sign flip's p is 2/2^16 (Monte Carlo: 1/1001)
        assert (row["unit"], row["n_clusters"], row["test"]) == ("stem", 16, "sign-flip")
        assert row["p"] == pytest.approx(2 / 2**16) and row["survives"]
    assert rows["dcc"]["survives"] and rows["dcc"]["holm_family"] == "factorial/yesno/all/headline"


def test_cycles_cluster_by_shared_image_joins_cycles_that_share_one() -> None:
    from vlaudit.metrics.cycles import CYCLE_UNIT_CAVEAT, cycle_unit
    from vlaudit.records import Cycle

    cycles = [Cycle("c1", "f", "a", "x", "b", "y"), Cycle("c2", "f", "b", "x", "c", "y"),
              Cycle("c3", "f", "d", "x", "e", "y"), Cycle("c4", "f", "e", "x", "a", "y")]
    assert cycle_unit(cycles).n_clusters == 4 and cycle_unit(cycles).unit == "cycle"
    assert _partition(cycle_unit(cycles, "image").labels) == {frozenset({0, 1, 2, 3})}  # a-b-c, d-e-a: one
    assert cycle_unit(cycles[:3], "image").n_clusters == 2
    with pytest.raises(InputError, match="--cluster stem"):
        cycle_unit(cycles, "stem")
    assert "share an image" in CYCLE_UNIT_CAVEAT


def test_compare_cycles_names_the_unit_and_joins_cycles_by_image() -> None:
    """By default the unit is the cycle; ``cluster="image"`` resamples cycles that share an image together."""
    from vlaudit.records import Cycle

    # 40 cycles on 10 images: cycle k uses images k % 10 and (k + 1) % 10, so all are linked into one chain
    cycles = [Cycle(f"c{k:02d}", "left", f"u{k % 10}", f"v{k}a", f"u{(k + 1) % 10}", f"v{k}b", split="test")
              for k in range(40)]
    rng = np.random.default_rng(0)
    scores = [{(img, cap): float(rng.normal() + (shift if cap.endswith("a") == (img == c.image_1) else 0))
               for c in cycles for img in (c.image_1, c.image_2) for cap in (c.caption_1, c.caption_2)}
              for shift in (1.0, 0.0)]
    kwargs: dict[str, Any] = {"min_cycles": 5, "n_resamples": 100, "n_permutations": 100}
    plain = vlaudit.compare_cycles(cycles, {"a": scores[0], "b": scores[1]}, **kwargs).comparison
    assert {(r.unit, r.n_clusters) for r in plain.comparisons} == {("cycle", 40)}
    assert {r.holm_family for r in plain.comparisons} == {"CycleAcc/test/left"}
    joined = vlaudit.compare_cycles(cycles, {"a": scores[0], "b": scores[1]}, cluster="image", **kwargs).comparison
    assert {(r.unit, r.n_clusters) for r in joined.comparisons} == {("image", 1)}
    assert joined.settings.cluster == "image"
