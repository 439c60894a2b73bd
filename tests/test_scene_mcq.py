"""Known answers for the multiple-choice audit: the planted ``ref:scene-mcq-*`` mechanisms on procedural
scenes, scored through the letter interface and the ordinary runner."""

from __future__ import annotations

import pytest


def test_reader_reads_every_rendered_scene(tmp_path) -> None:
    from PIL import Image

    from vlaudit.builders.mcq_scenes import render_mcq_scenes
    from vlaudit.reference.scene_mcq import read_relation

    items = render_mcq_scenes(tmp_path, 40, seed=5)
    for item in items:
        with Image.open(tmp_path / "images" / item.image) as handle:
            read = read_relation(handle, item.subject.split()[0], item.object.split()[0])
        assert item.options is not None and read == item.options["ABCD".index(item.label)]
    assert {i.category for i in items} == {"horizontal", "vertical"}


def test_mechanisms_recover_the_planted_credit_through_the_letter_interface(tmp_path) -> None:
    from vlaudit.demo.vca_mcq import run_mcq_stage

    result = run_mcq_stage(tmp_path, n_scenes=24, seed=3, n_resamples=200, log=lambda _: None)
    failed = [row for row in result["known_answers"] if not row["passed"]]
    assert not failed, failed
    assert len(result["known_answers"]) == 4 and 0 < result["planted"] < 1
    grounded, prior, mixture = result["runs"]
    assert grounded["interface"] == "letter" and mixture["dcc"] == pytest.approx(result["planted"], abs=1e-12)
    # the prior answers the same blind: no gain from the image (vlaudit's own figure: scene-mcq is not MMStar)
    assert prior["benchmark"]["blind"]["mg"] == 0.0 and "mmstar" not in prior["benchmark"]
    assert grounded["benchmark"]["circular"]["circular_acc"] == 1.0


def test_yes_no_form_of_the_mechanism() -> None:
    from PIL import Image, ImageDraw

    from vlaudit.builders.scene_render import OBJECT_COLORS
    from vlaudit.reference.scene_mcq import IMAGE_LOGIT, load_backend

    image = Image.new("RGB", (96, 72), (128, 128, 128))
    draw = ImageDraw.Draw(image)
    draw.rectangle((10, 30, 24, 44), fill=OBJECT_COLORS["red"])
    draw.ellipse((60, 30, 74, 44), fill=OBJECT_COLORS["blue"])
    grounded = load_backend("scene-mcq-grounded")
    assert grounded.margin("Is the red square to the left of the blue circle?", image) == IMAGE_LOGIT
    assert grounded.margin("Is the red square above the blue circle?", image) == -IMAGE_LOGIT
    assert grounded.margin("Is the red square to the left of the blue circle?", None) == 0.0


def test_vca_score_circular_scores_every_rotation(cli, tmp_path) -> None:
    """``--circular`` on published (unrotated) items: four rotations each; the mixture's credit in every
    rotation is the planted fraction and the grounded model is right in every rotation."""
    import json

    from vlaudit.builders.mcq_scenes import render_mcq_scenes
    from vlaudit.reference.scene_mcq import load_backend

    items = render_mcq_scenes(tmp_path / "mcq", 20, seed=9)
    planted = sum(load_backend().reads_image(i.question) for i in items) / len(items)
    for name in ("scene-mcq-mixture", "scene-mcq-grounded"):
        code, out, err = cli("vca", "score", "--model", f"ref:{name}", "--benchmark", tmp_path / "mcq" / "items.jsonl",
                             "--images", tmp_path / "mcq" / "images", "--out", tmp_path / name, "--interface",
                             "letter", "--circular")
        assert code == 0, err
        code, out, err = cli("vca", "report", tmp_path / name / "margins.parquet", "--out", tmp_path / f"{name}-r",
                             "--resamples", 100, "--no-plot")
        assert code == 0, err
        run = json.loads((tmp_path / f"{name}-r" / "vca.json").read_text())["runs"][0]
        circular = run["benchmark"]["circular"]
        assert run["n"] == 80 and circular["n_items"] == 20 and len(circular["per_rotation"]) == 4
        if name == "scene-mcq-grounded":
            assert circular["circular_acc"] == 1.0 == circular["credited_every_rotation"]
        else:
            assert circular["credited_every_rotation"] == pytest.approx(planted)
        assert "CircularEval" in out


def test_circular_items_rotate_the_gold_letter() -> None:
    from vlaudit.builders.circular import circular_items
    from vlaudit.sources.items import BenchmarkItem

    item = BenchmarkItem("q", None, "Which?", label="B", options=("w", "x", "y"))
    rotated = circular_items([item])
    assert [r.options for r in rotated] == [("w", "x", "y"), ("x", "y", "w"), ("y", "w", "x")]
    assert [r.label for r in rotated] == ["B", "A", "C"]  # the gold text "x" under each rotation
    assert [r.extra["rotation"] for r in rotated] == [0, 1, 2] and rotated[2].item_id == "q~r2"


def test_a_yes_no_only_backend_refuses_the_letter_interface(cli, one_error_line, tmp_path) -> None:
    from vlaudit.builders.mcq_scenes import render_mcq_scenes

    render_mcq_scenes(tmp_path / "mcq", 2, seed=1)
    code, out, err = cli("vca", "score", "--model", "ref:scene-vqa-prior", "--benchmark",
                         tmp_path / "mcq" / "items.jsonl", "--images", tmp_path / "mcq" / "images", "--out",
                         tmp_path / "run", "--interface", "letter")
    assert "ref:scene-vqa-prior does not read option letters" in one_error_line(code, out, err)
