"""`vlaudit suite eval` end to end: a suite file in vlaudit's own layout (`pairs-suite`), scored by a reference dual
encoder and by the tiny yes/no model, written as one typed result that round-trips from JSON, resumable, shown
in the HTML report.

Known answers: ``ref:scene-clip-bag`` embeds texts as bags of words, so every cycle whose two texts are the same
words in another order is an exact tie — CycleAcc exactly ½ — and the strict official scores count those
ties wrong (0)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

import vlaudit
from vlaudit.errors import InputError

pytestmark = pytest.mark.usefixtures("one_torch_thread")

BAG = "ref:scene-clip-bag"
TINY = "ref:tiny-qwen2-vl"


def _scene(path: Path, left: tuple[int, int, int], right: tuple[int, int, int]) -> None:
    picture = Image.new("RGB", (160, 120), (235, 235, 230))
    draw = ImageDraw.Draw(picture)
    draw.rectangle((20, 40, 60, 80), fill=left)
    draw.ellipse((100, 40, 140, 80), fill=right)
    picture.save(path)


RED, BLUE, GREEN = (200, 30, 30), (30, 30, 200), (30, 160, 30)
ROWS = [
    {"id": "swap", "images": ["a.png", "b.png"], "subset": "2x2",
     "texts": ["a red square to the left of a blue circle", "a blue square to the left of a red circle"],
     "positives": [[0, 0], [1, 1]]},
    {"id": "p1", "images": ["c.png"], "subset": "pairs",
     "texts": ["a green square to the left of a red circle", "a red square to the left of a green circle"],
     "positives": [[0, 0]]},
    {"id": "p2", "images": [{"path": "wide.png", "crop": [10, 5, 160, 120]}], "subset": "pairs",
     "texts": ["a red square to the left of a green circle", "a green square to the left of a red circle"],
     "positives": [[0, 0]]},
]


@pytest.fixture(scope="module")
def suite_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("suite")
    images = root / "images"
    images.mkdir()
    _scene(images / "a.png", RED, BLUE)
    _scene(images / "b.png", BLUE, RED)
    _scene(images / "c.png", GREEN, RED)
    wide = Image.new("RGB", (180, 130), (235, 235, 230))
    wide.paste(Image.open(images / "a.png").convert("RGB").crop((0, 0, 160, 120)), (10, 5))
    wide.save(images / "wide.png")
    path = root / "suite.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    return path, images


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory: pytest.TempPathFactory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("VLAUDIT_CACHE", str(tmp_path_factory.mktemp("vlaudit-cache")))
        patch.setenv("HF_HUB_OFFLINE", "1")
        yield


def test_dual_encoder_end_to_end_round_trips_and_resumes(suite_file, module_cache, tmp_path, cli,
                                                          monkeypatch) -> None:
    path, images = suite_file
    monkeypatch.setenv("COLUMNS", "80")
    out = tmp_path / "bag"
    code, stdout, err = cli("suite", "eval", "pairs-suite", path, "--images", images, "--model", BAG, "--out", out,
                            "--resamples", "100")
    assert code == 0, stdout + err
    assert "read 3, kept 3" in stdout and "CycleAcc" in stdout and "text score (i2t)" in stdout
    assert max(len(line) for line in stdout.splitlines() if str(tmp_path) not in line) <= 80  # paths stay whole
    result = vlaudit.load_suite_result(out)
    assert vlaudit.SuiteResult.from_dict(json.loads((out / "suite.json").read_text())) == result
    assert vlaudit.SuiteResult.from_dict(result.to_dict()) == result
    assert result.kind == "features" and result.query is None and result.n_items == 3
    cells = {cell.subset: cell for cell in result.cycles}
    assert list(cells) == ["all", "2x2", "pairs"]
    assert (cells["all"].within, cells["all"].across) == (1, 1)
    # a bag of words cannot tell a role swap: every cycle ties exactly, CycleAcc ½, the strict figures 0
    assert cells["all"].cell.cycle_acc == 0.5 and cells["all"].cell.ties == 2
    figures = {f.key: f for f in result.figures}
    assert figures["text"].value == 0.0 and figures["text"].n == 3 and result.coverage(figures["text"]) == 1.0
    assert figures["image"].n == 1 and result.coverage(figures["image"]) == pytest.approx(1 / 3)
    assert all(cell.tv_image == 0 and cell.tv_caption == 0 for cell in result.audit)  # an exact-cycle set
    # the crop is materialised once, by content, and the scores table holds every entry of every matrix
    assert len(list((out / "crops").glob("*.png"))) == 1
    import pyarrow.parquet as pq
    table = pq.read_table(out / "scores.parquet").to_pylist()
    assert len(table) == 4 + 2 + 2 and {row["image"] for row in table} >= {"wide.png#10,5,160,120"}
    import csv
    with (out / "suite.csv").open(encoding="utf-8") as handle:
        csv_rows = list(csv.DictReader(handle))
    assert {row["section"] for row in csv_rows} == {"official", "cycles", "audit"}
    assert [row["value"] for row in csv_rows if row["section"] == "cycles"] == ["0.5", "0.5", "0.5"]

    manifest = out / "features" / "manifest.json"
    stamp = manifest.stat().st_mtime_ns
    again = vlaudit.evaluate_suite("pairs-suite", path, images=images, model=BAG, out=out, n_resamples=100,
                                   batch_size=7)  # an operational change: the features are read back
    assert manifest.stat().st_mtime_ns == stamp and again == result
    with pytest.raises(InputError, match="holds a run with other arguments.*model"):
        vlaudit.evaluate_suite("pairs-suite", path, images=images, model="ref:scene-clip-spatial", out=out)
    with pytest.raises(InputError, match="--query is for yes/no MLLMs"):
        vlaudit.evaluate_suite("pairs-suite", path, images=images, model=BAG, out=tmp_path / "q", query="{caption}?")

    report = vlaudit.write_report(out)
    html = report.read_text(encoding="utf-8")
    assert 'id="suites"' in html and "pairs-suite" in html and "could not be rendered" not in html


def test_text_similarity_of_a_dual_encoder(suite_file, module_cache, tmp_path) -> None:
    from vlaudit.api.suites import read_suite
    from vlaudit.backends.registry import load_backend
    from vlaudit.scoring.suite_scores import dual_suite_scores, suite_image_files

    path, images = suite_file
    read = read_suite("pairs-suite", path)
    files = suite_image_files(read.items, images, tmp_path)
    scores, ran = dual_suite_scores(lambda: load_backend(BAG), read.items, files, tmp_path / "features",
                                    arguments={"command": "test"}, text_similarity=True)
    assert ran and scores.texts is not None
    for matrix in scores.texts:
        np.testing.assert_allclose(np.diag(matrix), 1.0, atol=1e-6)
        assert matrix[0, 1] == pytest.approx(1.0, abs=1e-6)  # the same bag of words
    _, ran_again = dual_suite_scores(lambda: pytest.fail("the model is loaded again"), read.items, files,
                                     tmp_path / "features", arguments={"command": "test"}, text_similarity=True)
    assert not ran_again


def test_yes_no_model_end_to_end_and_resume_after_a_partial_run(suite_file, module_cache, tmp_path) -> None:
    path, images = suite_file
    out = tmp_path / "tiny"
    result = vlaudit.evaluate_suite("pairs-suite", path, images=images, model=TINY, out=out, n_resamples=100,
                                    batch_size=4, chunk_size=2)
    assert result.kind == "yesno" and result.query == 'Does the caption "{caption}" describe the image?'
    run = out / "run"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["n_unique_units"] == 8 and summary["n_units_scored_now"] == 8  # 4 + 2 + 2 distinct pairs
    import pyarrow.parquet as pq
    margins = {row["item_id"]: row["margin"] for row in pq.read_table(run / "margins.parquet").to_pylist()}
    scores = pq.read_table(out / "scores.parquet").to_pylist()
    from vlaudit.scoring.mllm_cycle_scores import pair_item_id
    assert all(row["score"] == margins[pair_item_id(row["image"], row["text"])] for row in scores)
    # the additive identity on the yes/no margins: Δ is the same whatever a(u) + b(v) is added
    cells = {cell.subset: cell for cell in result.cycles}
    assert cells["all"].cell.n == 2 and vlaudit.SuiteResult.from_dict(result.to_dict()) == result

    # a killed run leaves its cache chunks and no results: the rerun scores nothing again
    (run / "margins.parquet").unlink()
    (run / "summary.json").unlink()
    (out / "suite.json").unlink()
    again = vlaudit.evaluate_suite("pairs-suite", path, images=images, model=TINY, out=out, n_resamples=100,
                                   batch_size=2, chunk_size=2)
    assert json.loads((run / "summary.json").read_text())["n_units_scored_now"] == 0
    assert again == result
    with pytest.raises(InputError, match="holds a run with other arguments.*query"):
        vlaudit.evaluate_suite("pairs-suite", path, images=images, model=TINY, out=out,
                               query="Is this {caption}?")


def test_bad_inputs_are_one_clear_error(suite_file, tmp_path, cli, one_error_line) -> None:
    path, images = suite_file
    with pytest.raises(InputError, match="unknown suite"):
        vlaudit.evaluate_suite("pairs-suit", path, images=images, model=BAG, out=tmp_path / "x")
    with pytest.raises(InputError, match="unknown reader option"):
        vlaudit.evaluate_suite("pairs-suite", path, images=images, model=BAG, out=tmp_path / "x",
                               options={"split": "val"})
    missing = tmp_path / "missing.jsonl"
    missing.write_text(json.dumps({**ROWS[0], "images": ["nothere.png", "a.png"]}) + "\n")
    line = one_error_line(*cli("suite", "eval", "pairs-suite", missing, "--images", images, "--model", BAG,
                               "--out", tmp_path / "y"))
    assert "missing.jsonl" in line and "images[0]" in line and "not found" in line
