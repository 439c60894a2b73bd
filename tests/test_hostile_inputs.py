"""Hostile inputs are refused where they are read, in one line.

A features folder from a newer vlaudit (schema_version 99), a --circular run compared with a plain one,
an image path that leaves the images folder (``../../etc/passwd``), and the MMBench reader's warnings printed as
``note:``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from PIL import Image

_OPENED: list[str] = []
_LISTENING: list[bool] = []


def _record_opens(event: str, args: tuple) -> None:
    if _LISTENING and event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        _OPENED.append(os.fsdecode(args[0]))


sys.addaudithook(_record_opens)  # an audit hook cannot be removed: it records only while _LISTENING


@pytest.fixture
def opened_paths():
    """Every path the process opens while the test runs (CPython's audit event ``open``)."""
    _OPENED.clear()
    _LISTENING.append(True)
    yield _OPENED
    _LISTENING.clear()


def test_read_features_refuses_a_newer_schema_version(write_dual_dataset, cli, one_error_line, tmp_path) -> None:
    cycles, _ = write_dual_dataset(tmp_path / "data")
    feats = tmp_path / "feats"
    feats.mkdir()
    (feats / "manifest.json").write_text(json.dumps({"schema_version": 99, "files": {
        "images": "images.parquet", "texts": "texts.parquet"}}))
    line = one_error_line(*cli("cycles", "zero-shot", "--features", feats, "--cycles", cycles, "--out",
                               tmp_path / "scores.csv"))
    assert f"{feats / 'manifest.json'}, field 'schema_version'" in line and "99 is newer" in line
    assert "upgrade vlaudit" in line and not (tmp_path / "scores.csv").exists()


def _margins(path: Path, ids: list[tuple[str, str | None, int | None]]) -> Path:
    rows = [{"model": path.stem, "dataset": "mcq", "item_id": item, "context": context, "interface": "yesno",
             "margin": 0.5 if context == "original" else -0.1 * k, "label": "yes", "circular_id": circular,
             "rotation": rotation}
            for k, (item, circular, rotation) in enumerate(ids) for context in ("original", "text", "blank")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_compare_vca_of_a_circular_run_and_a_plain_run_names_the_circular_ids(cli, one_error_line, tmp_path) -> None:
    plain = _margins(tmp_path / "plain.jsonl", [(f"q{i}", None, None) for i in range(4)])
    circular = _margins(tmp_path / "circular.jsonl", [(f"q{i}~r{j}", f"q{i}", j) for i in range(4) for j in range(2)])
    line = one_error_line(*cli("compare", "vca", plain, circular, "--resamples", "20",
                               "--out", tmp_path / "cmp"))
    assert f"{circular} is a --circular run" in line and "q0~r0, q0~r1, q1~r0, …" in line
    assert f"{plain} is not" in line and "compare --circular runs with --circular runs" in line
    # MMBench's published copies carry circular_id and rotation under their own ids: not a --circular run
    copies = _margins(tmp_path / "copies.jsonl", [(f"q{i}", "q0", i) for i in range(4)])
    code, _, err = cli("compare", "vca", plain, copies, "--resamples", "20", "--out", tmp_path / "cmp2")
    assert "--circular run" not in err


def test_data_vsr_refuses_an_image_path_that_leaves_the_images_folder(cli, one_error_line, tmp_path) -> None:
    split = tmp_path / "test.jsonl"
    row = {"caption": "The cat is left of the dog.", "label": 1, "relation": "left of"}
    for image in ("../../etc/passwd", "/etc/passwd"):
        split.write_text(json.dumps({"image": "ok.jpg", **row}) + "\n" + json.dumps({"image": image, **row}) + "\n")
        line = one_error_line(*cli("data", "vsr", split, "--out", tmp_path / "items.jsonl"))
        assert f"{split}, record line 2, field 'image'" in line and "leaves the images folder" in line
        assert not (tmp_path / "items.jsonl").exists()


def test_no_command_opens_an_image_outside_images(toy_items, cli, tmp_path, reference_cache, opened_paths) -> None:
    toy_items(tmp_path / "bench", n_images=2)
    outside = tmp_path / "outside.png"
    Image.new("RGB", (24, 24), (9, 9, 9)).save(outside)
    items = tmp_path / "bench" / "items.jsonl"
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    rows += [dict(rows[j], item_id=f"{name}_{j}", image=image, group_id=name)
             for name, image in (("escape", "../../outside.png"), ("absolute", str(outside))) for j in (0, 1)]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    images = tmp_path / "bench" / "images"
    opened_paths.clear()  # from here on: what the commands open
    code, _, err = cli("vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", items, "--images", images,
                       "--out", tmp_path / "run", "--contexts", "original,text", "--min-coverage", "0")
    assert code == 0, err
    failures = (tmp_path / "run" / "failures.jsonl").read_text()
    assert failures.count("image outside --images") == 8  # 4 items x 2 contexts
    cycles = tmp_path / "cycles.jsonl"
    cycles.write_text(json.dumps({"cycle_id": "c1", "family": "toy", "image_1": "img0.png", "image_2": "../outside.png",
                                  "caption_1": "a", "caption_2": "b", "text_1": "a cat", "text_2": "a dog"}) + "\n")
    code, _, err = cli("features", "--model", "ref:tiny-open-clip", "--cycles", cycles, "--images", images, "--out",
                       tmp_path / "feats")
    assert code == 2 and "outside" in err, err
    code, _, err = cli("vca", "score-dual", "--model", "ref:tiny-open-clip", "--benchmark", items, "--images", images,
                       "--out", tmp_path / "dual")
    assert code == 0, err
    assert "outside.png" not in " ".join(opened_paths), "an image outside --images was opened"
    assert str(outside.resolve()) not in {str(Path(p).resolve()) for p in opened_paths if p}


def test_mmbench_relabelled_options_and_missing_rotations_print_as_warnings(cli, tmp_path) -> None:
    import base64
    import io

    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 10, 10)).save(buffer, format="PNG")
    image = base64.b64encode(buffer.getvalue()).decode()
    header = ["index", "question", "hint", "A", "B", "C", "D", "answer", "category", "l2-category", "image", "split"]
    rows = [["7", "Which?", "", "red", "green", "", "blue", "D", "ocr", "x", image, "dev"],  # C empty: relabelled
            ["1000009", "Which?", "", "green", "red", "", "", "A", "ocr", "x", image, "dev"]]  # no row 9 of its own
    tsv = tmp_path / "MMBench_DEV_EN.tsv"
    tsv.write_text("\n".join("\t".join(r) for r in [header, *rows]) + "\n", encoding="utf-8")
    code, out, err = cli("data", "items", "--format", "mmbench", tsv, "--out", tmp_path / "items.jsonl",
                         "--images", tmp_path / "images")
    assert code == 0, err
    said = " ".join(out.split())
    for text in ("are lettered A, B, C here", "have copies but no row of their own"):
        assert said.split(text)[0].rsplit("warning: ", 1)[-1].count("note: ") == 0, out  # its own line says warning
        assert said.split(text)[0].rfind("warning: ") > said.split(text)[0].rfind("note: "), out
