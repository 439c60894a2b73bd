"""The fabricated run folder of the report tests (``build_run_folder`` in conftest.py) is what discovery reads."""

from __future__ import annotations

from pathlib import Path


def test_fixture_folder_is_discovered(build_run_folder, tmp_path: Path) -> None:
    from vlaudit.report.html_discover import discover

    art = discover(build_run_folder(tmp_path / "run"))
    assert art.summary is not None and not art.problems
    assert [p.name for p in art.vca_items] == ["items.csv"]
    assert [p.name for p in art.margins] == ["margins.parquet"]
    assert [p.name for p in art.cycle_tables] == ["coco.jsonl"]
    assert [p.name for p in art.score_tables] == ["scores_coco_zero-shot.csv"]
    assert len(art.factorials) == 1 and len(art.manifests) == 1 and len(art.known_answers) == 3
