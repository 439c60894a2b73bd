"""`vlaudit compare vca` / `vlaudit.compare_vca`: paired comparisons of models on the items they share."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

import vlaudit
from vlaudit.cli import app
from vlaudit.errors import InputError
from vlaudit.files import read_json, write_jsonl
from vlaudit.results.compare import CompareVcaResult
from vlaudit.settings import EXACT_SIGN_FLIP_CLUSTERS

CONTEXTS = ("original", "text", "blank")


def margins_rows(model: str, seed: int, n: int = 60, *, groups: bool = False, strength: float = 1.0,
                 label_flip: set[int] | None = None) -> list[dict[str, Any]]:
    """Random yes/no margins of one model; the image context shifts the margin toward the label by ``strength``."""
    rng = np.random.default_rng(seed)
    rows = []
    labels = [k % 2 == 0 for k in range(n)]
    for k in range(n):
        label = labels[k] != (k in (label_flip or set()))
        base = rng.normal(0, 1, size=3)
        values = {"original": base[0] + (strength if label else -strength), "text": base[1], "blank": base[2]}
        if groups:  # pairs (2j, 2j+1): the even item true, the odd one false
            values["original"] = base[0] + (strength if k % 2 == 0 else -strength)
        for context in CONTEXTS:
            row: dict[str, Any] = {"model": model, "dataset": "toy", "item_id": f"q{k:03d}", "context": context,
                                   "margin": float(values[context]), "label": "yes" if label else "no",
                                   "source_sha256": f"img{k // 2}"}
            if groups:
                row |= {"group_id": f"g{k // 2}", "statement": "true" if k % 2 == 0 else "false",
                        "relation": "left of" if k % 4 < 2 else "above"}
            rows.append(row)
    return rows


def write_run(folder: Path, rows: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(folder / "margins.jsonl", rows)
    return folder / "margins.jsonl"


def test_identical_copies_give_zero_difference_interval_zero_and_p_one(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", margins_rows("m", 0))
    copy = tmp_path / "copy"
    shutil.copytree(a.parent, copy)
    result = vlaudit.compare_vca([a, copy / "margins.jsonl"], n_resamples=200, n_permutations=200)
    assert result.rows
    for row in result.comparison.comparisons:
        assert row.difference == 0.0 and row.ci == (0.0, 0.0) and row.p == 1.0, row


def test_a_better_model_is_found_and_swapping_flips_every_sign(tmp_path: Path) -> None:
    strong = write_run(tmp_path / "strong", margins_rows("strong", 1, n=120, strength=3.0))
    weak = write_run(tmp_path / "weak", margins_rows("weak", 2, n=120, strength=0.0))
    ab = vlaudit.compare_vca([strong, weak], n_resamples=300, n_permutations=300).comparison
    ba = vlaudit.compare_vca([weak, strong], n_resamples=300, n_permutations=300).comparison
    acc = next(r for r in ab.comparisons if r.metric == "acc")
    assert acc.test == "mcnemar" and acc.difference > 0.3 and acc.ci is not None and acc.ci[0] > 0 and acc.survives
    for x, y in zip(ab.comparisons, ba.comparisons, strict=True):
        assert (x.model_a, x.model_b) == (y.model_b, y.model_a)
        assert x.difference is not None and y.difference is not None and x.difference == -y.difference
        assert x.ci is not None and y.ci is not None and x.ci == (-y.ci[1], -y.ci[0])
        assert x.p == y.p and x.p_holm == y.p_holm


def test_item_order_changes_no_byte_of_the_output(tmp_path: Path) -> None:
    rows_a, rows_b = margins_rows("a", 3, groups=True), margins_rows("b", 4, groups=True, strength=0.3)
    first = [write_run(tmp_path / "x" / name, rows) for name, rows in (("a", rows_a), ("b", rows_b))]
    rng = np.random.default_rng(0)
    second = [write_run(tmp_path / "y" / name, [rows[i] for i in rng.permutation(len(rows))])
              for name, rows in (("a", rows_a), ("b", rows_b))]
    vlaudit.compare_vca(first, out=tmp_path / "out1", n_resamples=200, n_permutations=200)
    vlaudit.compare_vca(second, out=tmp_path / "out2", n_resamples=200, n_permutations=200)
    one = json.loads((tmp_path / "out1" / "compare.json").read_text())
    two = json.loads((tmp_path / "out2" / "compare.json").read_text())
    for data in (one, two):
        for model in data["models"]:
            model.pop("source")
    assert one == two
    for name in ("comparisons.csv", "leaderboard.csv"):
        assert (tmp_path / "out1" / name).read_bytes() == (tmp_path / "out2" / name).read_bytes()


def test_relation_axis_uses_the_permutation_test_and_families(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", margins_rows("a", 5, groups=True, strength=2.0))
    b = write_run(tmp_path / "b", margins_rows("b", 6, groups=True, strength=0.0))
    data = vlaudit.compare_vca([a, b], n_resamples=200, n_permutations=200).data
    metrics = {r["metric"] for r in data["comparisons"]}
    assert {"rel_o", "pair_credit", "pair_d", "joint", "g_int_mean", "acc", "dcc"} <= metrics
    # grouped items are not independent: the item metrics and mean G_int take the cluster sign flip — exact
    # over at most EXACT_SIGN_FLIP_CLUSTERS clusters (the item metrics' integer differences always; mean G_int
    # while its nonzero clusters can be enumerated), Monte Carlo beyond; each relation group is one cluster,
    # so the binary group metrics count independent groups: exact McNemar
    binary_groups = {"rel_o", "pair_credit", "pair_d", "joint"}
    for r in data["comparisons"]:
        if r["metric"] in binary_groups:
            assert r["test"] == "mcnemar"
        elif r["n_clusters"] > EXACT_SIGN_FLIP_CLUSTERS:
            assert r["test"] == "permutation"
        elif r["metric"] != "g_int_mean":
            assert r["test"] == "sign-flip", r
    assert {r["test"] for r in data["comparisons"]} >= {"mcnemar", "permutation", "sign-flip"}
    assert {r["family"] for r in data["comparisons"]} == {"all", "left/right", "above/below"}
    rel = next(r for r in data["comparisons"] if r["metric"] == "rel_o" and r["family"] == "all")
    assert rel["n"] == 30


def test_partial_overlap_runs_on_the_intersection_and_says_why(tmp_path: Path, capsys: Any) -> None:
    rows_a = margins_rows("a", 7)
    rows_b = [r for r in margins_rows("b", 8) if r["item_id"] not in ("q000", "q001")]
    rows_b = [r for r in rows_b if not (r["item_id"] == "q002" and r["context"] == "blank")]
    a, b = write_run(tmp_path / "a", rows_a), write_run(tmp_path / "b", rows_b)
    result = CliRunner().invoke(app, ["compare", "vca", str(a), str(b), "--out", str(tmp_path / "out"),
                                      "--resamples", "100", "--permutations", "100"])
    assert result.exit_code == 0, result.output
    data = read_json(tmp_path / "out" / "compare.json")
    typed = CompareVcaResult.from_dict(data)
    by_model = {m.model: m.datasets["toy/yesno"] for m in typed.models}
    assert by_model["a"].n_compared == 57
    assert by_model["b"].dropped == {"lacks blank": 1, "missing": 2}
    assert by_model["a"].dropped == {"not in every run": 3}
    assert "57 items compared" in result.output
    assert typed.to_dict() == data


def test_save_writes_the_commands_bytes(tmp_path: Path) -> None:
    paths = [write_run(tmp_path / n, margins_rows(n, s)) for n, s in (("a", 9), ("b", 10), ("c", 11))]
    result = CliRunner().invoke(app, ["compare", "vca", *map(str, paths), "--out", str(tmp_path / "cli"),
                                      "--resamples", "100", "--permutations", "100"])
    assert result.exit_code == 0, result.output
    api = vlaudit.compare_vca(paths, n_resamples=100, n_permutations=100)
    api.save(tmp_path / "api")
    for name in ("compare.json", "comparisons.csv", "leaderboard.csv"):
        assert (tmp_path / "cli" / name).read_bytes() == (tmp_path / "api" / name).read_bytes(), name
    assert (tmp_path / "cli" / "pairwise_toy_yesno.png").is_file()
    assert "leaderboard" in result.output
    assert api.result is not None and api.schema_version == 1


def test_content_mismatch_single_run_and_missing_labels(tmp_path: Path) -> None:
    rows_b = margins_rows("b", 13)
    for row in rows_b:
        if row["item_id"] == "q004":
            row["source_sha256"] = "other"
    a, b = write_run(tmp_path / "a", margins_rows("a", 12)), write_run(tmp_path / "b", rows_b)
    with pytest.raises(InputError, match="q004") as error:
        vlaudit.compare_vca([a, b], n_resamples=50)
    assert "image" in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(InputError, match="at least two runs"):
        vlaudit.compare_vca([a], n_resamples=50)
    with pytest.raises(InputError, match="not a vca score run folder"):
        vlaudit.compare_vca([a, tmp_path / "nothing"], n_resamples=50)
    unlabelled = write_run(tmp_path / "u", [{k: v for k, v in r.items() if k != "label"}
                                           for r in margins_rows("u", 14)])
    data = vlaudit.compare_vca([a, unlabelled], n_resamples=50, n_permutations=50).data
    assert {r["metric"] for r in data["skipped"]} == {"acc", "dcc", "cu"}
    assert {r["metric"] for r in data["comparisons"]} == {"dep", "strict"}


def test_the_html_report_shows_a_compare_folder(tmp_path: Path) -> None:
    paths = [write_run(tmp_path / n, margins_rows(n, s)) for n, s in (("a", 15), ("b", 16), ("c", 17))]
    vlaudit.compare_vca(paths, out=tmp_path / "cmp", n_resamples=100, n_permutations=100)
    result = CliRunner().invoke(app, ["report", str(tmp_path / "cmp")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "cmp" / "report.html").read_text(encoding="utf-8")
    assert 'id="comparison"' in page and "Leaderboard" in page and "pairwise_toy_yesno.png" in page
    assert "Nothing to report" not in page


def test_console_output_reads_whole_at_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)  # relative paths: the width checked is the command's, not the temp folder's
    paths = [write_run(tmp_path / n, margins_rows(f"model-with-a-long-name-{n}", s, groups=True))
             for n, s in (("a", 18), ("b", 19), ("c", 20))]
    relative = [str(path.relative_to(tmp_path)) for path in paths]
    result = CliRunner().invoke(app, ["compare", "vca", *relative, "--out", "o",
                                      "--resamples", "50", "--permutations", "50", "--no-plot"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    assert "leaderboard" in result.output


def test_different_context_sets_compare_the_metrics_both_can_compute(tmp_path: Path) -> None:
    rows_a = margins_rows("a", 21)
    extra = [r | {"context": "mismatch", "margin": r["margin"] * 0.5} for r in rows_a if r["context"] == "text"]
    with_mismatch = write_run(tmp_path / "a", rows_a + extra)
    plain = write_run(tmp_path / "b", margins_rows("b", 22))
    twin = write_run(tmp_path / "c", [r | {"model": "c"} for r in rows_a + extra])
    data = vlaudit.compare_vca([with_mismatch, plain], n_resamples=50, n_permutations=50).data
    assert {r["metric"] for r in data["skipped"]} == {"dep_perm", "dcc_perm", "dep_m", "strict_m"}
    assert all("b has none" in r["reason"] for r in data["skipped"])
    both = vlaudit.compare_vca([with_mismatch, twin], n_resamples=50, n_permutations=50).data
    assert {"dep_perm", "dcc_perm", "dep_m", "strict_m"} <= {r["metric"] for r in both["comparisons"]}
    assert not both["skipped"]


def test_an_unreadable_run_is_one_line_naming_the_file(tmp_path: Path) -> None:
    good = write_run(tmp_path / "a", margins_rows("a", 23))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "margins.parquet").write_bytes(b"not a parquet file")
    with pytest.raises(InputError) as error:
        vlaudit.compare_vca([good, broken], n_resamples=20)
    assert "margins.parquet" in str(error.value) and "\n" not in str(error.value)


def test_the_rows_are_flat_cells_with_each_interval_as_two_columns(tmp_path: Path) -> None:
    """``rows`` / ``to_frame()`` hold one scalar per cell: the difference's interval and the Acc/Dep/D-CC noise
    band (None without a floor) as ``*_lo`` / ``*_hi``; ``comparison`` is the typed file, ``data`` its JSON."""
    a = write_run(tmp_path / "a", margins_rows("a", 12))
    b = write_run(tmp_path / "b", margins_rows("b", 13, strength=0.2))
    result = vlaudit.compare_vca([a, b], n_resamples=50, n_permutations=50)
    typed = result.comparison
    assert result.data == typed.to_dict() and len(result.rows) == len(typed.comparisons)
    for row, record in zip(result.rows, typed.comparisons, strict=True):
        assert all(value is None or isinstance(value, (str, int, float, bool)) for value in row.values()), row
        assert record.ci is not None and (row["difference_lo"], row["difference_hi"]) == record.ci
        assert ("noise_band_lo" in row) == (record.metric in ("acc", "dep", "dcc"))
        assert row.get("noise_band_lo") is None and row["p_holm"] == record.p_holm
    frame = result.to_frame()
    assert {"difference", "difference_lo", "difference_hi", "p", "p_holm", "survives"} <= set(frame.columns)


def test_the_html_report_shows_both_comparisons_from_their_typed_files(tmp_path: Path) -> None:
    """The report's "Model comparison" section reads compare.json and compare_cycles.json back as their typed
    results: every compared pair, the noise note, a cycle comparison's split, and nothing fails to render."""
    from vlaudit.records import Cycle
    from vlaudit.report.html import build_html

    paths = [write_run(tmp_path / "in" / n, margins_rows(n, s)) for n, s in (("a", 14), ("b", 15))]
    vlaudit.compare_vca(paths, out=tmp_path / "report" / "vca", n_resamples=50, n_permutations=50, plot=False)
    cycles = [Cycle(f"c{k}", "left", f"u{k}", f"v{k}", f"u{k}b", f"v{k}b", split="test") for k in range(12)]
    scores = {name: {(c.image_1, c.caption_1): 1.0 + bias for c in cycles} | {
        (c.image_2, c.caption_2): 1.0 for c in cycles} | {(c.image_1, c.caption_2): 0.0 for c in cycles} | {
        (c.image_2, c.caption_1): 0.0 for c in cycles} for name, bias in (("x", 0.5), ("y", -2.0))}
    vlaudit.compare_cycles(cycles, scores, out=tmp_path / "report" / "cycles", min_cycles=5, n_resamples=50,
                           n_permutations=50, plot=False)
    page = build_html(tmp_path / "report")
    assert "Model comparison" in page and "could not be rendered" not in page
    assert "vca: a, b" in page and "cycles: x, y" in page
    assert "noise floor not measured" in page and "CycleAcc" in page
