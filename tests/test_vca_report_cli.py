"""``vlaudit vca report`` end to end on small tables in real formats (VCA §19 contract)."""

from __future__ import annotations

import csv
import json

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

from vlaudit.cli import app
from vlaudit.errors import InputError
from vlaudit.files import write_table
from vlaudit.results.vca.outputs import VcaReportResult

ITEM_COLUMNS = ["model", "dataset", "interface", "item_id", "group_id", "label", "pred", "correct", "g_img", "dep",
                "dcc", "cu", "wrong_dep"]
GROUP_COLUMNS = ["model", "dataset", "interface", "group_id", "h_o", "h_t", "h_b", "g_int", "rel_o", "pair_credit",
                 "pair_d", "joint"]


def _table(tmp_path):
    rows = rows_from_arrays(SUPPORT_MARGINS, model="alpha", dataset="vsr", labels=SUPPORT_LABELS, interface="yesno")
    rel = {**RELATION_MARGINS, "mismatch": [0.1, -0.2, 0.3, -0.4, 0.5, -0.6]}
    for interface, sign in (("yesno", 1.0), ("truefalse", 0.5)):
        scaled = {c: [sign * v for v in values] for c, values in rel.items()}
        rows += rows_from_arrays(scaled, model="alpha", dataset="gsr", interface=interface, item_ids=RELATION_ITEMS,
                                 labels=["yes", "no", "no", "yes", "no", "yes"], group_ids=RELATION_GROUPS,
                                 statements=RELATION_STATEMENTS)
    rows += rows_from_arrays(SUPPORT_MARGINS, model="beta", dataset="vsr", labels=SUPPORT_LABELS[::-1],
                             interface="yesno")
    # pyarrow's from_pylist takes its columns from the first row, so give every row every column
    columns = dict.fromkeys(key for row in rows for key in row)
    path = tmp_path / "margins.parquet"
    write_table(path, [{key: row.get(key) for key in columns} for row in rows])
    return path


def _csv(path):
    with path.open() as handle:
        return list(csv.DictReader(handle))


def test_report_end_to_end(tmp_path, versioned_outputs) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["vca", "report", str(_table(tmp_path)), "--out", str(out), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    assert "Visual Credit Audit" in result.output
    report = json.loads((out / "vca.json").read_text())
    runs = {(r["model"], r["dataset"], r["interface"]): r for r in report["runs"]}
    assert set(runs) == {("alpha", "vsr", "yesno"), ("alpha", "gsr", "yesno"), ("alpha", "gsr", "truefalse"),
                         ("beta", "vsr", "yesno")}
    for run in runs.values():
        for key in ("acc", "dep", "dcc", "cu", "wrong_dep"):
            assert 0.0 <= run[key] <= 1.0
        for key in ("acc", "dep", "dcc", "cu"):
            lo, hi = run["ci"][key]
            assert 0.0 <= lo <= hi <= 1.0
    vsr = runs[("alpha", "vsr", "yesno")]
    assert (vsr["n"], vsr["acc"], vsr["dep"], vsr["dcc"]) == (7, pytest.approx(3 / 7), pytest.approx(4 / 7),
                                                             pytest.approx(1 / 7))
    assert vsr["perm"]["delta_dcc"] == pytest.approx(-1 / 7) and len(vsr["perm"]["ci_delta_dcc"]) == 2
    assert vsr["relation"] is None  # no relation groups: the axis is not computable
    gsr = runs[("alpha", "gsr", "yesno")]
    rel = gsr["relation"]
    assert {k: rel[k] for k in ("groups", "pair_credit", "pair_d", "joint")} == {
        "groups": 2, "pair_credit": 0.5, "pair_d": 0.5, "joint": 0.5}
    assert {c["short"]: c["rel"] for c in rel["contexts"]} == {"o": 0.5, "t": 0.0, "b": 0.0}
    assert rel["g_int_mean"] == pytest.approx(0.5) and len(rel["ci_g_int_mean"]) == 2
    assert gsr["bootstrap"]["cluster"] == "group_id" and vsr["bootstrap"]["cluster"] == "item_id"
    (iface,) = report["interfaces"]
    # the True/False run is the Yes/No run scaled by ½: every event agrees
    assert iface["ensemble_dep_agreement"] == 1.0 and iface["item_flip"] == 0.0 and iface["pair_jaccard"] == 1.0
    assert report["settings"]["seed"] == 20260719

    items = _csv(out / "items.csv")
    assert list(items[0])[:13] == ITEM_COLUMNS
    assert len(items) == 7 + 6 + 6 + 7
    groups = _csv(out / "groups.csv")
    assert list(groups[0]) == GROUP_COLUMNS and len(groups) == 4
    assert "Strict+M" in result.output and "Dep+M" in result.output
    for name in ("headline", "taxonomy", "stratified", "balanced", "survival", "gaps", "permutation", "relation",
                 "robustness_controls", "robustness_aggregation", "robustness_interfaces", "macro", "sensitivity",
                 "coverage"):
        assert _csv(out / f"{name}.csv"), name
    assert (out / "gap_hist.png").read_bytes()[:4] == b"\x89PNG"
    assert not list(out.glob(".*.tmp"))
    versioned_outputs(out, {"vca.json": VcaReportResult})


def test_label_free_table_and_controls_option(tmp_path) -> None:
    path = tmp_path / "m.jsonl"
    write_table(path, rows_from_arrays(SUPPORT_MARGINS))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["vca", "report", str(path), "--out", str(out), "--resamples", "50",
                                      "--controls", "text", "--no-plot"])
    assert result.exit_code == 0, result.output
    (run,) = json.loads((out / "vca.json").read_text())["runs"]
    assert run["acc"] is None and run["dcc"] is None and run["ci"]["acc"] is None
    assert run["dep"] == pytest.approx(5 / 7) and run["controls"] == ["text"]
    assert run["perm"]["delta_dcc"] is None and run["perm"]["dep_perm"] is not None
    assert not (out / "gap_hist.png").exists()
    assert _csv(out / "items.csv")[0]["correct"] == ""
    assert not (out / "groups.csv").read_text().strip().count("\n")  # header only


def test_bad_inputs_fail_with_input_errors(tmp_path) -> None:
    rows = rows_from_arrays(SUPPORT_MARGINS)
    rows.append(dict(rows[0]))
    path = tmp_path / "dup.csv"
    write_table(path, rows)
    result = CliRunner().invoke(app, ["vca", "report", str(path), "--out", str(tmp_path / "o")])
    assert isinstance(result.exception, InputError) and "duplicate" in str(result.exception)
    assert not (tmp_path / "o" / "vca.json").exists()
    path = tmp_path / "ok.csv"
    write_table(path, rows_from_arrays({"original": [1.0], "text": [0.0]}))
    result = CliRunner().invoke(app, ["vca", "report", str(path), "--out", str(tmp_path / "o")])
    assert isinstance(result.exception, InputError) and "blank" in str(result.exception)


def test_headline_keeps_long_names_readable_in_80_columns() -> None:
    from rich.console import Console

    from vlaudit.analysis.vca.report import ReportSettings, compute_report
    from vlaudit.commands._render import show
    from vlaudit.report.vca_console import headline_view
    from vlaudit.sources.margins import runs_from_rows

    long_model = "Qwen/Qwen3-VL-8B-Instruct-with-a-long-suffix"
    rows = []
    for interface in ("yesno", "truefalse"):
        rows += rows_from_arrays({**SUPPORT_MARGINS}, model=long_model, dataset="gsr-coco-test",
                                 interface=interface, labels=SUPPORT_LABELS)
    report = compute_report(runs_from_rows(rows), ReportSettings(n_resamples=50))
    console = Console(width=80, record=True, force_terminal=False)
    show(headline_view(report.runs, title="VCA"), console=console)
    text = console.export_text()
    assert f"{long_model} · gsr-coco-test" in text
    assert "truefalse" in text and "…" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "42.9" in text  # Acc = 3/7, printed as a percentage
    assert "Δ D-CC perm" in text


def test_bad_controls_option_is_a_usage_error(tmp_path) -> None:
    path = tmp_path / "ok.csv"
    write_table(path, rows_from_arrays(SUPPORT_MARGINS))
    result = CliRunner().invoke(app, ["vca", "report", str(path), "--out", str(tmp_path / "o"), "--controls", "foo"])
    assert result.exit_code == 2 and "unknown context 'foo'" in result.output
    result = CliRunner().invoke(app, ["vca", "report", str(path), "--out", str(tmp_path / "o"),
                                      "--controls", "original,text"])
    assert result.exit_code == 2
    assert not (tmp_path / "o").exists()


def _run_folder(root, name):
    """A run folder as `vca score` leaves it, for the report's purposes: margins.parquet beside manifest.json."""
    folder = root / name
    folder.mkdir()
    _table(folder)
    (folder / "manifest.json").write_text(json.dumps({"schema_version": 1, "command": "vca score"}))
    return folder


def test_report_reads_a_run_folder_as_its_margins(tmp_path, cli) -> None:
    """`vca report RUN_DIR` reads RUN_DIR/margins.parquet, as `compare` and `report` do."""
    run = _run_folder(tmp_path, "run")
    code, out, err = cli("vca", "report", run, "--out", run / "report", "--resamples", "20", "--no-plot")
    assert code == 0, err
    assert (run / "report" / "vca.json").is_file()
    (tmp_path / "empty").mkdir()
    code, out, err = cli("vca", "report", tmp_path / "empty", "--out", tmp_path / "r2", "--resamples", "20")
    assert code == 2 and "folder without margins.parquet" in err and "Traceback" not in err, err
    assert not (tmp_path / "r2").exists()


def test_report_refuses_an_out_folder_inside_another_runs_folder(tmp_path, cli, files_under) -> None:
    """A report of run A written inside run B's folder would show A under B in `vlaudit report
    B`; refused in one line before anything is written, and the run's own margins still report there."""
    mmstar, pope = _run_folder(tmp_path, "mmstar"), _run_folder(tmp_path, "pope")
    before = files_under(pope)
    code, out, err = cli("vca", "report", mmstar / "margins.parquet", "--out", pope / "report", "--resamples", "20")
    assert code == 2 and err.startswith("error: ") and "--out" in err and str(pope) in err, err
    assert files_under(pope) == before
    code, out, err = cli("vca", "report", pope / "margins.parquet", "--out", pope / "report", "--resamples", "20",
                         "--no-plot")
    assert code == 0, err
    import vlaudit

    result = vlaudit.vca_report(mmstar, n_resamples=20)
    with pytest.raises(InputError, match="inside the run folder"):
        result.save(pope / "report2")
    assert not (pope / "report2").exists()


def test_each_headline_says_in_plain_words_what_the_image_is_credited_with(tmp_path, cli, monkeypatch) -> None:
    """Under each headline one sentence "of A accuracy points, D are credited to the image
    [lo, hi]; C are answered without it" — the report's own Acc, D-CC (with its interval) and C-U = Acc − D-CC."""
    monkeypatch.setenv("COLUMNS", "200")  # one line per sentence, to read it back whole
    code, out, err = cli("vca", "report", _table(tmp_path), "--out", tmp_path / "out", "--resamples", "50",
                         "--no-plot")
    assert code == 0, err
    runs = json.loads((tmp_path / "out" / "vca.json").read_text())["runs"]
    for run in runs:
        lo, hi = run["ci"]["dcc"]
        said = (f"of {100 * run['acc']:.1f} accuracy points, {100 * run['dcc']:.1f} are credited to the image "
                f"[{100 * lo:.1f}, {100 * hi:.1f}]; {100 * run['cu']:.1f} are answered without it")
        assert said in out, (said, out)
    assert "yesno: of " in out and "truefalse: of " in out  # a (model, dataset) with two interfaces names each


def _written_before_typed_sections(run: dict) -> dict:
    """A run of ``vca.json`` in the shape files had before its strata, survival, gap, relation and noise
    sections were typed rows (schema_version 1): the same numbers under the old keys."""
    old = dict(run)
    old["stratified"] = {}
    for row in run["stratified"]:
        old["stratified"].setdefault(row["by"], {})[row["stratum"]] = {
            k: v for k, v in row.items() if k not in ("by", "stratum")}
    old["balanced"] = {row["by"]: {k: v for k, v in row.items() if k != "by"} for row in run["balanced"]}
    s = run["survival"]
    old["survival"] = {"n_dep": s["n_dep"], **{f"{c['control']}_same": c["same"] for c in s["controls"]},
                       "both_same": s["both_same"], "any_changes": s["any_changes"],
                       "wilson": {**{f"{c['control']}_same": c["wilson"] for c in s["controls"]},
                                  "both_same": s["both_same_wilson"]}}
    g = run["gap"]
    old["gap"] = {"mean": g["mean"], "min": g["min"], "max": g["max"],
                  **{f"q{round(q['q'] * 100):02d}": q["value"] for q in g["quantiles"]},
                  **{f"near_zero_{z['eps']:g}": z["share"] for z in g["near_zero"]}}
    if run["relation"] is not None:
        rel = {k: v for k, v in run["relation"].items() if k != "contexts"}
        old["relation"] = rel | {f"rel_{c['short']}": c["rel"] for c in run["relation"]["contexts"]} | {
            f"h_{c['short']}_mean": c["h_mean"] for c in run["relation"]["contexts"]}
    if "missing" in run["noise"]:
        old["noise"] = {"measured": False, "note": run["noise"]["missing"]}
    return old


def test_a_vca_json_written_before_the_typed_sections_reads_as_today(tmp_path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["vca", "report", str(_table(tmp_path)), "--out", str(out), "--resamples", "50",
                                      "--no-plot"])
    assert result.exit_code == 0, result.output
    today = json.loads((out / "vca.json").read_text())
    older = today | {"schema_version": 1, "runs": [_written_before_typed_sections(r) for r in today["runs"]]}
    assert older["runs"][1]["survival"]["text_same"] is not None and "quantiles" not in older["runs"][1]["gap"]
    assert VcaReportResult.from_dict(older) == VcaReportResult.from_dict(today)
    # and the report of such a folder renders
    (out / "vca.json").write_text(json.dumps(older))
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    assert "noise floor not measured" in (out / "report.html").read_text(encoding="utf-8")
