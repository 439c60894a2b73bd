"""A run that lost most of its records never looks like a result.

A user's mistake at small scale: `vca score` with most image files missing (the wrong --images folder) must
not print a summary and exit 0, and `vca report` must not print Acc on the few rows left without the console,
vca.json, the CSV tables and the HTML report saying that almost every record was lost.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vlaudit.results.vca.coverage import cell_of, coverage_of

REPO = Path(__file__).resolve().parents[1]
MODEL = "ref:tiny-qwen2-vl"


def test_coverage_counts_failed_records_and_not_the_inapplicable_ones() -> None:
    original = cell_of("vsr", "original", "yesno", [("ok", None)] * 6 + [("failed", "image file not found")] * 194)
    irre = cell_of("vsr", "irre", "yesno", [("ok", None)] * 3 + [("skipped", None)] * 3)
    assert (original.asked, original.scored, original.failed, original.coverage) == (200, 6, 194, 0.03)
    assert original.failed_by_reason == {"image file not found": 194}
    assert irre.coverage == 1.0 and irre.not_applicable == 3  # a context unavailable by design is not lost
    total = coverage_of([original, irre])
    assert (total.asked, total.scored, total.lowest) == (206, 9, 0.03)
    assert total.coverage == pytest.approx(9 / 203)
    assert total.below(0.95) and not total.below(0.01)
    assert "9 of 203 records scored (4.4%); 194 failed (image file not found: 194)" in total.line()
    assert "lowest original/yesno of vsr: 6 of 200 (3.0%)" in total.line()


def test_a_wrong_images_folder_fails_in_one_line_before_any_model_loads(toy_items, tmp_path) -> None:
    toy_items(tmp_path, n_images=1, missing=3)  # 8 items, 6 of them name an image that is not there
    (tmp_path / "images" / "img1.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)  # one corrupt file
    cache = tmp_path / "vlaudit-cache"
    done = subprocess.run([sys.executable, "-m", "vlaudit.cli", "vca", "score", "--model", MODEL, "--benchmark",
                           "items.jsonl", "--images", "images", "--out", "run"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1",
                                                       "VLAUDIT_CACHE": str(cache)})
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in done.stderr, done.stderr
    line = lines[0]
    assert "the images of 6 of 8 items cannot be used" in line
    assert "corrupt or unreadable image: 2" in line and "image file not found: 4" in line
    assert "at most 25.0% of the records could be scored, below --min-coverage 95%" in line
    assert "give --images the folder" in line and "--min-coverage" in line
    assert not cache.exists()  # no reference model was built or loaded
    assert not (tmp_path / "run" / "manifest.json").exists() and not (tmp_path / "run" / "margins.parquet").exists()
    assert len((tmp_path / "run" / "failures.jsonl").read_text().splitlines()) == 6 * 3  # 3 default contexts


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open() as handle:
        return list(csv.DictReader(handle))


def test_a_run_below_min_coverage_is_not_a_result_anywhere(make_benchmark, cli, tmp_path, reference_cache,
                                                           monkeypatch) -> None:
    items = make_benchmark(tmp_path / "bench", n_images=4, questions=2)  # 8 items, two per image
    images, run, report = tmp_path / "bench" / "images", tmp_path / "run", tmp_path / "reports" / "x"
    for name in ("img2.png", "img3.png"):
        (images / name).unlink()  # half the items' images are missing
    score = ["vca", "score", "--model", MODEL, "--benchmark", items, "--images", images,
             "--out", run, "--contexts", "original,text,blank"]

    # the images pass the check before the model loads only with a lower threshold; the run then still says so
    code, out, err = cli(*score, "--min-coverage", "0.4")
    assert code == 0, err
    flat = " ".join(out.split())
    assert "coverage: 12 of 24 records scored (50.0%); 12 failed (image file not found: 12)" in flat
    summary = json.loads((run / "summary.json").read_text())
    cells = summary["coverage"]["cells"]
    assert [(c["context"], c["asked"], c["scored"]) for c in cells] == [
        ("original", 8, 4), ("text", 8, 4), ("blank", 8, 4)]
    assert summary["coverage"]["lowest"] == 0.5

    # the default threshold: the report writes its files, says it everywhere, and exits 1 with the way out
    code, out, err = cli("vca", "report", run / "margins.parquet", "--out", report, "--resamples", "50", "--no-plot")
    assert code == 1, (out, err)
    assert err.strip().startswith("error: ") and len(err.strip().splitlines()) == 1
    assert "below --min-coverage 95%" in err and "--min-coverage 0" in err and "not a result" in err
    flat = " ".join(out.split())
    assert "NOT A RESULT — coverage: 12 of 24 records scored (50.0%)" in flat
    assert "accuracy points" not in flat  # no credit sentence reads like a finding
    audit = json.loads((report / "vca.json").read_text())
    assert audit["settings"]["min_coverage"] == 0.95
    first = audit["runs"][0]
    assert first["below_coverage"] is True and first["scoring"]["scored"] == 12 and first["scoring"]["asked"] == 24
    assert "not a result" in first["warnings"][0] and "not a result" in audit["warnings"][0]
    head = _read_csv(report / "headline.csv")[0]
    assert (head["records_asked"], head["records_scored"], head["scoring_coverage"], head["below_min_coverage"]) \
        == ("24", "12", "0.5", "true")
    code, out, err = cli("report", report)
    assert code == 0, err
    page = next(report.glob("*.html")).read_text()
    assert "NOT A RESULT: 4 / 8 (50.0%)" in page and "not a result" in page

    # --min-coverage 0 accepts the run as it is
    code, _, err = cli("vca", "report", run / "margins.parquet", "--out", tmp_path / "accepted", "--resamples",
                       "50", "--no-plot", "--min-coverage", "0")
    assert code == 0, err


def test_vca_score_exits_1_when_records_are_lost_after_the_check(toy_items, cli, tmp_path, reference_cache,
                                                                monkeypatch) -> None:
    """What the check before the model cannot see (here: files gone after it) still fails the run."""
    import vlaudit.api.runs as runs

    toy_items(tmp_path / "bench", n_images=1, missing=1)
    monkeypatch.setattr(runs, "check_run_images", lambda *args, **kwargs: None)
    run = tmp_path / "run"
    code, out, err = cli("vca", "score", "--model", MODEL, "--benchmark", tmp_path / "bench" / "items.jsonl",
                         "--images", tmp_path / "bench" / "images", "--out", run, "--contexts", "original,text")
    assert code == 1, (out, err)
    assert "coverage: 4 of 8 records scored (50.0%)" in " ".join(out.split())
    assert err.count("error: ") == 1 and "below --min-coverage 95%" in err and f"run {run}" in " ".join(err.split())
    assert (run / "margins.parquet").is_file() and (run / "summary.json").is_file()  # written, and said to be low
