"""``vca.json`` ``runs[].benchmark`` as a typed record (:class:`BenchmarkFigures`): a figure that is 0/0 carries
its reason in the JSON, the console and categories.csv; an older file's section reads as today's."""

from __future__ import annotations

import csv
import json

from vlaudit.report.benchmark_tables import benchmark_tables, category_rows, gain_rows
from vlaudit.results.missing import Missing
from vlaudit.results.vca.benchmark import OLDER, POOLED, BenchmarkFigures, upgrade_benchmark
from vlaudit.results.vca.run_sections import upgrade_run
from vlaudit.results.versioned import UNRECORDED, record_from_dict, to_json

#: a run's benchmark section as the vlaudit before 3dc9d95 / 6b8853d wrote it: MME one list with an ``all``
#: row, CircularEval without dropped or incomplete questions, POPE's 0/0 as null, ML missing as ``ml_reason``
OLDER_SECTION = {
    "mmstar": {"acc_image": 0.75, "acc_text": 0.5, "mg": 0.25, "ml_reason": "ML needs the base LLM's text-only run"},
    "categories": [{"category": "random", "n": 2, "dep": 0.5}],
    "pope": [{"category": "all", "n": 3, "accuracy": 1.0, "precision": None, "recall": None, "f1": None,
              "yes_ratio": 0.0}],
    "mme": [{"category": "all", "n": 4, "n_pairs": 2, "acc": 0.75, "acc_plus": 0.5, "score": 125.0},
            {"category": "existence", "n": 4, "n_pairs": 2, "acc": 0.75, "acc_plus": 0.5, "score": 125.0}],
    "circular": {"n_items": 2, "circular_acc": 0.5, "credited_every_rotation": 0.0,
                 "per_rotation": [{"rotation": 0, "n": 2, "acc": 1.0, "dcc": 1.0}]},
}


def test_an_older_benchmark_section_reads_as_today_and_round_trips() -> None:
    f = record_from_dict(BenchmarkFigures, upgrade_run({"benchmark": OLDER_SECTION})["benchmark"], path="vca.json")
    assert f.mmstar is not None and f.mmstar.ml == Missing("ML needs the base LLM's text-only run")
    assert f.categories is not None and f.categories[0].acc == Missing("no labels")
    assert f.pope is not None and f.pope[0].precision == Missing(UNRECORDED) and f.pope[0].accuracy == 1.0
    assert f.mme is not None and f.mme.pooled.category == POOLED and f.mme.totals == Missing(OLDER)
    assert [r.category for r in f.mme.subtasks] == ["existence"]
    assert f.circular is not None and f.circular.incomplete == Missing(OLDER) and f.circular.n_items == 2
    assert f.blind is None and f.hallusionbench is None
    written = to_json(f)
    assert isinstance(written, dict)
    # the file keeps its shape: absent sections left out, a missing ML as ml_reason, a 0/0 as its reason
    assert "blind" not in written and "hallusionbench" not in written and "per_category" not in written["circular"]
    assert written["mmstar"] == OLDER_SECTION["mmstar"]
    assert written["pope"][0]["precision"] == {"missing": UNRECORDED}
    assert record_from_dict(BenchmarkFigures, upgrade_benchmark(written), path="vca.json") == f
    assert record_from_dict(BenchmarkFigures, json.loads(json.dumps(written)), path="vca.json") == f


def test_the_tables_print_the_reason_where_a_figure_would_stand() -> None:
    f = record_from_dict(BenchmarkFigures, upgrade_benchmark(OLDER_SECTION), path="vca.json")
    tables = {title: rows for title, _, rows in benchmark_tables(f)}
    assert [str(cell) for cell in tables["POPE figures (%)"][0][3:6]] == [f"— ({UNRECORDED})"] * 3
    assert [str(cell) for cell in category_rows(f)[0][2:]] == ["— (no labels)", "50.0", "— (no labels)",
                                                               "— (no labels)"]
    # a missing ML is a bare dash in its cell; gain_notes prints the reason under the table
    assert gain_rows([("m", f)])[0][4] is None


def test_a_pope_run_that_never_answers_yes_says_why_precision_is_missing(cli, tmp_path) -> None:
    """Every answer "no": POPE's precision is 0/0 (the official script would divide by zero), so vca.json and
    the console say 'no "yes" answer' where it would stand; categories.csv holds the category's figures."""
    rows = []
    for k, gold in enumerate(("yes", "no", "no")):
        for context, m in (("original", -1.0), ("text", -0.5), ("blank", -0.2)):
            rows.append({"model": "m", "dataset": "pope", "item_id": f"i{k}", "context": context, "margin": m,
                         "label": gold, "category": "random"})
    path = tmp_path / "margins.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out, err = cli("vca", "report", path, "--out", tmp_path / "rep", "--resamples", 20, "--no-plot")
    assert code == 0, err
    (run,) = json.loads((tmp_path / "rep" / "vca.json").read_text())["runs"]
    pope = run["benchmark"]["pope"][0]
    assert pope["precision"] == {"missing": 'no "yes" answer'} and pope["recall"] == 0.0
    assert pope["accuracy"] == 2 / 3 and pope["yes_ratio"] == 0.0
    assert '— (no "yes" answer)' in out
    with (tmp_path / "rep" / "categories.csv").open(encoding="utf-8") as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["category"] == "random" and float(row["acc"]) == 2 / 3
