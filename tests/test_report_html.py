"""``vlaudit report``: the HTML report's content, escaping, self-containedness and missing pieces (no browser)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from vlaudit.cli import app
from vlaudit.errors import InputError
from vlaudit.report.html import write_report
from vlaudit.report.html_page import esc, num
from vlaudit.report.html_sections import known_answers

DATA_URI = re.compile(r"data:[a-z]+/[a-z+.-]+;base64,[A-Za-z0-9+/=]+")


@pytest.fixture(scope="module")
def report(build_run_folder, tmp_path_factory: pytest.TempPathFactory) -> str:
    root = build_run_folder(tmp_path_factory.mktemp("report") / "run")
    return write_report(root).read_text(encoding="utf-8")


def test_headline_tables_show_the_runs_numbers_with_intervals(report: str) -> None:
    for anchor in ("known-answers", "cycles", "vca", "factorial", "galleries", "manifest"):
        assert f'id="{anchor}"' in report
    # CycleAcc by family × encoder, the additive column first, the split named
    assert "ref:scene-clip-spatial" in report and "ref:scene-clip-bag" in report
    assert report.index(">additive<") < report.index(">zero-shot<") < report.index(">probe-rank-64<")
    assert "<td>test</td>" in report
    assert '<span class="v">0.870</span><span class="ci">[0.790, 0.950]</span>' in report
    assert "ties 100%" in report
    # Acc / Dep / D-CC / C-U in percent with intervals (grounded: Acc 88.0 [84.0, 92.0])
    assert '<span class="v">88.0</span><span class="ci">[84.0, 92.0]</span>' in report
    # known answers: the tally and a fail badge for the failing row
    assert "<b>2 of 3</b> checks" in report
    assert 'class="badge fail"' in report and 'class="badge pass"' in report


def test_a_known_answer_the_run_could_not_observe_shows_why() -> None:
    rows = [{"check": "circular", "expected": "<= 0.02", "observed": {"missing": "no CircularEval result"},
             "passed": False}]
    found = known_answers(rows)
    assert found is not None and "— (no CircularEval result)" in str(found[2])


def test_plots_and_galleries_are_present(report: str) -> None:
    for alt in ("Acc = D-CC + C-U per run", "G_img histograms", "CycleAcc per family", "rank sweep", "factorial"):
        assert f'alt="{alt}"' in report
    # C-U gallery: the three C-U items of the fixture, with a margin for every context
    assert report.count("<th>context</th>") == 3 and "+0.4000" in report
    # failed strict cycles: all three fabricated failures, with their contrasts
    assert "3 of 3 cycles failed" in report
    for delta in ("-2.0000", "-3.0000", "-4.0000"):
        assert f"Δ = {delta}" in report
    assert "abc123" in report and "0123456789abcdef" in report  # manifest: revision and commit


def test_text_from_data_is_escaped(hostile, report: str) -> None:
    assert "<script" not in report.lower()
    assert esc(hostile) in report
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt; &amp; &quot;quoted&quot;" in report


def test_report_is_self_contained(report: str) -> None:
    images = re.findall(r'<img src="([^"]*)"', report)
    assert len(images) >= 10 and all(src.startswith("data:image/") for src in images)
    text = DATA_URI.sub("", report)
    assert "http" not in text.lower()
    links = re.findall(r'(?:src|href)="([^"]*)"', report)
    assert all(link.startswith(("#", "data:")) for link in links)
    assert "<link" not in text and "@import" not in text and "url(" not in text


def test_escape_helpers() -> None:
    assert esc('<b a="1">&') == "&lt;b a=&quot;1&quot;&gt;&amp;"
    assert esc(esc("<")) == "&lt;"  # already-escaped fragments are not escaped twice
    assert "—" in num(None) and "—" in num(float("nan"))
    assert num(0.5, [0.25, 0.75], pct=True) == '<span class="v">50.0</span><span class="ci">[25.0, 75.0]</span>'


def test_empty_folder_still_gives_a_report(tmp_path: Path) -> None:
    text = write_report(tmp_path).read_text(encoding="utf-8")
    assert "Nothing to report" in text and 'id="manifest"' in text


def test_missing_folder_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="run folder not found"):
        write_report(tmp_path / "nope")


def test_a_broken_file_is_listed_and_the_rest_is_reported(build_run_folder, tmp_path: Path) -> None:
    root = build_run_folder(tmp_path / "run")
    (root / "broken.json").write_text("{not json")
    (root / "cycles" / "scores_coco_zero-shot.csv").write_text("image_id,caption_id,score\n0,c0,notanumber\n")
    text = write_report(root).read_text(encoding="utf-8")
    assert "broken.json" in text and "Files skipped" in text
    assert 'id="vca"' in text and "Failed strict cycles" not in text


def test_todays_demo_summary_and_a_cycles_eval_json(tmp_path: Path) -> None:
    """The earlier demo summary (cycle_acc per "source / scorer", vca a list) and a flat `cycles eval` JSON."""
    summary = {"config": {"dual": "ref:tiny-open-clip", "seed": 0},
               "cycles": {"cycle_acc": {"coco / additive-shortcut": {"coco-strict-size": 0.5}}},
               "vca": [{"model": "m", "dataset": "d", "interface": "yesno", "n": 4, "acc": 0.5, "dep": 1.0,
                        "dcc": 0.5, "cu": 0.0}], "seconds": {"vca": 1.5}}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    text = write_report(tmp_path).read_text(encoding="utf-8")
    assert "ref:tiny-open-clip" in text and "additive-shortcut" in text and "<td>test</td>" in text
    assert '<span class="v">50.0</span>' in text
    user = tmp_path / "user"
    user.mkdir()
    result = {"families": {"fam-a": {"n": 10, "cycle_acc": 0.7, "ties": 0, "ci": [0.5, 0.9]}},
              "overall": {"n": 10, "cycle_acc": 0.7, "ties": 0, "ci": [0.5, 0.9]}, "tol": 1e-9,
              "scores": "/elsewhere/my_scores.csv"}
    (user / "eval.json").write_text(json.dumps(result))
    text = write_report(user).read_text(encoding="utf-8")
    assert "my_scores" in text and "fam-a" in text and "not recorded" in text


def test_margins_alone_get_a_computed_vca_section(tmp_path: Path) -> None:
    from vca_fixtures import SUPPORT_MARGINS, rows_from_arrays

    from vlaudit.files import write_table

    write_table(tmp_path / "run" / "margins.parquet", rows_from_arrays(SUPPORT_MARGINS))
    text = write_report(tmp_path).read_text(encoding="utf-8")
    assert 'id="vca"' in text and "G_img per item" in text


def test_cli_report_writes_the_file(build_run_folder, tmp_path: Path) -> None:
    root = build_run_folder(tmp_path / "run")
    result = CliRunner().invoke(app, ["report", str(root)])
    assert result.exit_code == 0, result.output
    assert (root / "report.html").is_file() and "report.html" in result.output


def test_lower_rank_probes_go_to_the_rank_sweep(tmp_path: Path) -> None:
    """Probe scorers of several ranks: the table keeps the largest, the sweep (derived here) shows them all."""
    def cell(acc: float) -> dict:
        return {"test": {"n": 30, "cycle_acc": acc, "ci": [acc - 0.1, acc + 0.1], "ties": 0, "tie_rate": 0.0}}

    scorers = {f"probe-rank-{r}": {"families": {"fam": cell(a)}} for r, a in ((1, 0.55), (8, 0.7), (64, 0.81))}
    scorers["additive"] = {"families": {"fam": cell(0.5)}}
    (tmp_path / "summary.json").write_text(json.dumps({"cycles": {"encoders": {"enc": {"scorers": scorers}}}}))
    text = write_report(tmp_path).read_text(encoding="utf-8")
    assert ">probe-rank-64<" in text and ">probe-rank-8<" not in text and "0.810" in text
    assert 'alt="rank sweep"' in text
    # the demo's row form of cycles.rank_sweep is read as well
    rows = [{"model": "enc", "family": "fam", "rank": r, "cycle_acc": a, "ci": [a - 0.1, a + 0.1], "n": 30}
            for r, a in ((1, 0.55), (64, 0.81))]
    summary = {"cycles": {"encoders": {"enc": {"scorers": {"additive": scorers["additive"]}}}, "rank_sweep": rows}}
    (tmp_path / "summary.json").write_text(json.dumps(summary))
    assert 'alt="rank sweep"' in write_report(tmp_path).read_text(encoding="utf-8")
