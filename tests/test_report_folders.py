"""`vlaudit report` on the README's layout and on what is not a report folder.

The README scores into ``runs/x`` and reports into ``reports/x`` (outside the run folder): the gallery cards
showed "image not found", "(question not found)" and "scores not found" on every card there, as the report
folder alone holds no items, images or margins. ``vlaudit report`` on a folder with no results wrote an empty
page and exited 0; on ``runs/x/margins.parquet`` it said "run folder not found".
"""

from __future__ import annotations

import json
import re


def test_a_report_folder_outside_its_run_finds_the_items_images_and_scores(make_benchmark, cli, tmp_path,
                                                                          reference_cache, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    make_benchmark(tmp_path / "bench", n_images=4, questions=2)
    code, _, err = cli("vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", "bench/items.jsonl",
                       "--images", "bench/images", "--out", "runs/x", "--contexts", "original,text,blank")
    assert code == 0, err
    code, _, err = cli("vca", "report", "runs/x/margins.parquet", "--out", "reports/x", "--resamples", "50",
                       "--no-plot")
    assert code == 0, err
    assert json.loads((tmp_path / "reports/x/vca.json").read_text())["margins_files"] == [
        str((tmp_path / "runs/x/margins.parquet").resolve())]
    code, _, err = cli("report", "reports/x")
    assert code == 0, err
    page = (tmp_path / "reports/x/report.html").read_text()
    cards = re.findall(r'<div class="card">.*?</div>\s*(?=<div class="card">|</div>)', page, flags=re.S)
    assert cards, "no gallery card"
    assert "image not found" not in page and "(question not found)" not in page and "scores not found" not in page
    assert "Is the cat" in page and "data:image/" in page  # the question and an embedded thumbnail


def test_report_refuses_an_empty_folder_and_a_margins_file_in_one_line(cli, one_error_line, tmp_path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    line = one_error_line(*cli("report", empty))
    assert "no audit output found here" in line and "vca report --out" in line
    assert not (empty / "report.html").exists()
    run = tmp_path / "runs" / "x"
    run.mkdir(parents=True)
    (run / "margins.parquet").write_bytes(b"PAR1")
    line = one_error_line(*cli("report", run / "margins.parquet"))
    assert "is a file" in line and f"vlaudit report {run}" in line and "run folder not found" not in line
