"""The benchmark readers on small releases written in their published schemas (tests/benchmark_releases.py):
each round-trips to ITEMS that ``read_items`` reads back with the agreed fields, embedded images are written
once and named by content, and a malformed row is one line naming file, row and field."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from benchmark_releases import BLUE, GREEN, RED, RELEASES, mmbench_hub, mmbench_tsv, pope

import vlaudit
from vlaudit.errors import InputError
from vlaudit.hashing import sha256_bytes
from vlaudit.settings import BENCHMARK_FORMATS
from vlaudit.sources.items import read_items
from vlaudit.sources.registry import FORMATS, read_benchmark_items
from vlaudit.sources.rows import ImageFolder


def _build(fmt: str, source: Path | str, tmp_path: Path, suffix: str = ".jsonl") -> tuple[list, dict]:
    out = tmp_path / "out" / f"items{suffix}"
    summary = vlaudit.build_benchmark_items(fmt, source, out=out, images=tmp_path / "images")
    return read_items(out), summary.to_dict()


def _by_id(items: list) -> dict:
    return {item.item_id: item for item in items}


def test_every_registered_format_has_a_release_here() -> None:
    assert tuple(FORMATS) == BENCHMARK_FORMATS == tuple(RELEASES)


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
@pytest.mark.parametrize("fmt", sorted(RELEASES))
def test_each_release_round_trips_to_items(fmt: str, suffix: str, tmp_path: Path) -> None:
    writer, kept, excluded = RELEASES[fmt]
    items, summary = _build(fmt, writer(tmp_path), tmp_path, suffix)
    assert (summary["n_items"], summary["n_excluded"]) == (kept, excluded)
    assert {item.dataset for item in items} == {fmt}
    for item in items:
        if item.image is not None and fmt != "hallusionbench":  # its JSON names files in the user's folder
            assert (tmp_path / "images" / item.image).is_file(), item.image
        if FORMATS[fmt].answers == "yes/no":
            assert item.options is None and item.label in ("yes", "no")
        else:
            assert item.options and item.label in item.letters
    assert json.loads((tmp_path / "out" / "items.summary.json").read_text())["benchmark"] == fmt


def test_pope_keeps_its_category_and_names_images_by_content(tmp_path: Path) -> None:
    items, summary = _build("pope", pope(tmp_path), tmp_path)
    assert [(i.item_id, i.category, i.label) for i in items] == [
        ("pope-adversarial-1", "adversarial", "yes"), ("pope-popular-1", "popular", "no"),
        ("pope-random-2", "random", "no")]
    assert items[0].image == items[1].image == sha256_bytes(RED) + ".png"
    assert summary["images"]["written"] == 2 and summary["categories"] == {"adversarial": 1, "popular": 1,
                                                                           "random": 1}


def test_pope_authors_files_take_the_category_from_the_file_name(tmp_path: Path) -> None:
    path = tmp_path / "coco_pope_adversarial.json"  # JSON lines, though named .json
    path.write_text("".join(json.dumps({"question_id": k, "image": "COCO_val2014_000000016631.jpg",
                                        "text": text, "label": label}) + "\n"
                            for k, text, label in ((1, "Is there a person in the image?", "yes"),
                                                   (2, "Is there a dog in the image?", "no"))))
    items, _ = _build("pope", path, tmp_path)
    assert [(i.item_id, i.category, i.image, i.label) for i in items] == [
        ("pope-adversarial-1", "adversarial", "COCO_val2014_000000016631.jpg", "yes"),
        ("pope-adversarial-2", "adversarial", "COCO_val2014_000000016631.jpg", "no")]
    single = tmp_path / "coco_pope_random.json"
    single.write_text(json.dumps({"question_id": 3, "image": "a.jpg", "text": "Is there a cat?", "label": "no"}))
    (item,), _ = _build("pope", single, tmp_path)
    assert (item.item_id, item.label) == ("pope-random-3", "no")


def test_mme_pairs_the_two_questions_of_an_image(tmp_path: Path) -> None:
    items, _ = _build("mme", RELEASES["mme"][0](tmp_path), tmp_path)
    pairs = [item.extra["image_pair"] for item in items]
    assert pairs == ["code_reasoning/0020.png"] * 2 + ["existence/000000006040.jpg"] * 2
    assert [item.label for item in items] == ["yes", "no", "yes", "no"]
    assert items[0].category == "code_reasoning" and len({i.item_id for i in items}) == 4


def test_hallusionbench_keeps_ids_and_makes_text_only_items(tmp_path: Path) -> None:
    items, summary = _build("hallusionbench", RELEASES["hallusionbench"][0](tmp_path), tmp_path)
    text_only = [item for item in items if item.image is None]
    assert len(text_only) == 1 == summary["text_only"] and text_only[0].extra["visual_input"] is False
    assert items[0].image == "hallusion_bench/VD/illusion/0_0.png" and items[0].extra["visual_input"] is True
    assert items[0].category == "VD/illusion" and items[1].label == "no"
    assert {k: items[1].extra[k] for k in ("set_id", "figure_id", "question_id")} == {
        "set_id": "0", "figure_id": "1", "question_id": "0"}


def test_mmstar_splits_the_options_out_of_the_question(tmp_path: Path) -> None:
    items, _ = _build("mmstar", RELEASES["mmstar"][0](tmp_path), tmp_path)
    first = items[0]
    assert first.question == "Which option describe the object relationship in the image correctly?"
    assert first.options == ("The suitcase is on the book.", "The suitcase is beneath the cat.",
                             "The suitcase is beneath the bed.", "The suitcase is beneath the book.")
    assert (first.label, first.category, first.extra["l2_category"]) == (
        "A", "instance reasoning", "cross-instance relation reasoning")
    assert items[1].options == ("Trees", "Mountains", "A lake") and items[1].label == "B"


def test_mmbench_tsv_decodes_base64_images_hints_and_short_option_lists(tmp_path: Path) -> None:
    items, summary = _build("mmbench", mmbench_tsv(tmp_path), tmp_path)
    first, second = items
    assert first.image == second.image == sha256_bytes(RED) + ".png"  # "241" reuses row 241's image
    assert summary["images"]["written"] == 1
    assert first.options == ("red", "green", "blue", "yellow") and first.hint is None
    assert second.options == ("square", "circle", "triangle") and second.hint == "The image shows one shape."
    assert (second.extra["source_index"], second.extra["l2_category"], second.category) == (
        "242", "finegrained_perception (instance-level)", "attribute_recognition")


def test_mmbench_hub_release_reads_like_the_tsv(tmp_path: Path) -> None:
    items, _ = _build("mmbench", mmbench_hub(tmp_path), tmp_path)
    assert [(i.item_id, i.label, i.hint, i.extra["source_index"]) for i in items] == [
        ("mmbench-241", "A", None, "241"), ("mmbench-1000241", "D", None, "1000241")]


def test_seed_scienceqa_mmmu_exclude_what_they_do_not_read(tmp_path: Path) -> None:
    reasons = {}
    for fmt, images in (("seed-bench", 1), ("scienceqa", 1), ("mmmu", 2)):
        _, summary = _build(fmt, RELEASES[fmt][0](tmp_path), tmp_path / fmt)
        reasons |= summary["excluded_by_reason"]
        assert summary["images"]["written"] == images  # an excluded row's images are not written
    assert reasons == {"video question (the image part is read)": 1,
                       "no image (ScienceQA-IMG is the items with one)": 1, "open question (no options)": 1}


def test_mmmu_keeps_every_image_in_order(tmp_path: Path) -> None:
    items, _ = _build("mmmu", RELEASES["mmmu"][0](tmp_path), tmp_path)
    (item,) = items
    assert item.image == sha256_bytes(RED) + ".png"
    assert item.extra["images"] == [sha256_bytes(RED) + ".png", sha256_bytes(BLUE) + ".png"]
    assert item.options == ("<image 1>", "<image 2>", "Both the same") and item.label == "B"
    assert (item.category, item.extra["l2_category"]) == ("Art_Theory", "Art History")


def test_index_and_parenthesised_answers_become_letters(tmp_path: Path) -> None:
    scienceqa, _ = _build("scienceqa", RELEASES["scienceqa"][0](tmp_path), tmp_path)
    assert (scienceqa[0].label, scienceqa[0].category, scienceqa[0].extra["l2_category"]) == (
        "A", "social science", "geography")
    cv, _ = _build("cv-bench", RELEASES["cv-bench"][0](tmp_path), tmp_path)
    assert [(i.item_id, i.label, i.category, i.extra["l2_category"]) for i in cv] == [
        ("cv-bench-2D-0", "C", "Count", "2D"), ("cv-bench-3D-0", "B", "Depth", "3D")]
    ai2d, _ = _build("ai2d", RELEASES["ai2d"][0](tmp_path), tmp_path)
    assert [i.label for i in ai2d] == ["B", "D"] and ai2d[0].image == sha256_bytes(BLUE) + ".png"
    seed, _ = _build("seed-bench", RELEASES["seed-bench"][0](tmp_path), tmp_path)
    assert (seed[0].label, seed[0].category, seed[0].image) == ("B", "Instances Counting",
                                                               sha256_bytes(GREEN) + ".png")


def test_a_saved_dataset_with_an_image_feature_reads_as_its_parquet(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    rows = {"id": ["0"], "question_id": ["1"], "question": ["Is there a cat?"], "answer": ["yes"],
            "image_source": ["COCO"], "image": [{"bytes": RED, "path": None}], "category": ["random"]}
    features = datasets.Features({name: datasets.Value("string") for name in rows if name != "image"}
                                 | {"image": datasets.Image()})
    datasets.Dataset.from_dict(rows, features=features).save_to_disk(str(tmp_path / "pope_saved"))
    items, _ = _build("pope", f"hf-dataset:{tmp_path / 'pope_saved'}", tmp_path)
    assert items[0].image == sha256_bytes(RED) + ".png" and items[0].split == "pope_saved"


RED64 = base64.b64encode(RED).decode()
BAD_TSV_ROWS = {
    "answer not an option": (["1", "Q?", "", "a", "b", "", "", "C", "x", "y", RED64, "dev"], "row 1, field "
                             "'answer': answer 'C' is none of the options (A, B or their texts)"),
    "the answer names the empty option": (["1", "Q?", "", "a", "b", "", "d", "C", "x", "y", RED64, "dev"],
                                          "row 1, field 'answer': answer 'C' is none of the options (A, B, D "
                                          "or their texts)"),
    "not base64": (["1", "Q?", "", "a", "b", "", "", "A", "x", "y", "***not an image***" * 5, "dev"],
                   "row 1, field 'image': image is not base64"),
    "dangling image reference": (["1", "Q?", "", "a", "b", "", "", "A", "x", "y", "7", "dev"],
                                 "row 1, field 'image': image refers to row index 7"),
}


@pytest.mark.parametrize("case", sorted(BAD_TSV_ROWS))
def test_a_malformed_tsv_row_is_one_line_naming_file_row_and_field(case: str, tmp_path: Path) -> None:
    row, expected = BAD_TSV_ROWS[case]
    path = mmbench_tsv(tmp_path, [row])
    with pytest.raises(InputError) as caught:
        read_benchmark_items("mmbench", path, images=ImageFolder(tmp_path / "images"))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path)) and expected in message, message


BAD_JSON_ROWS = {
    "scienceqa": ({"1": {"question": "Q?", "choices": ["a", "b"], "answer": 2, "image": "image.png",
                         "split": "test"}}, "entry 1, field 'answer': answer index 2 is none of the 2 options"),
    "cv-bench": ([{"idx": 1, "question": "Q?", "choices": ["a", "b"], "answer": "(E)", "filename": "a.png"}],
                 "entry 1, field 'answer': answer '(E)' is none of the options"),
    "mmstar": ([{"index": 1, "question": "Q?\nOptions: A: x, B: y", "answer": "z", "image": "a.png"}],
               "entry 1, field 'answer': answer 'z' is none of the options"),
    "mmmu": ([{"id": "validation_Art_1", "question": "Q?", "options": "['a', ", "answer": "A",
               "question_type": "multiple-choice", "image_1": "a.png"}], "entry 1, field 'options'"),
    "hallusionbench": ([{**{k: "0" for k in ("set_id", "figure_id", "question_id")}, "category": "VD",
                         "subcategory": "ocr", "visual_input": "1", "question": "Q?", "gt_answer": "1",
                         "filename": None}], "entry 1, field 'filename': visual_input 1 needs an image"),
    "pope": ([{"question_id": 1, "image": "a.jpg", "text": "Q?", "label": "yes", "category": "hard"}],
             "entry 1, field 'category': expected a category random, popular, adversarial"),
    "mme": ([{"question_id": "a/1.png", "image": "../a.png", "question": "Q?", "answer": "Yes", "category": "a"}],
            "entry 1, field 'image': image path '../a.png' leaves the images folder"),
}


@pytest.mark.parametrize("fmt", sorted(BAD_JSON_ROWS))
def test_a_malformed_json_entry_is_one_line_naming_file_entry_and_field(fmt: str, tmp_path: Path) -> None:
    data, expected = BAD_JSON_ROWS[fmt]
    path = tmp_path / "release.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as caught:
        read_benchmark_items(fmt, path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path)) and expected in message, message


def test_an_unknown_format_names_every_registered_one() -> None:
    with pytest.raises(InputError, match="choose from pope, mme, hallusionbench"):
        read_benchmark_items("mmlu", "x.json")


def test_the_command_prints_counts_and_exclusions_at_80_columns(cli, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)  # relative paths: the width checked is the command's, not the temp folder's
    RELEASES["scienceqa"][0](Path("."))
    code, out, err = cli("data", "items", "--format", "scienceqa", "scienceqa_test.parquet", "--out",
                         "o/items.jsonl", "--images", "images")
    assert code == 0, err
    assert "scienceqa (multiple choice): 1 items kept, 1 excluded" in out
    assert "no image (ScienceQA-IMG is the items with one)" in out and "social science" in out
    assert "images: 1 written, 0 already in images (give it as --images)" in out
    assert [line for line in out.splitlines() if len(line) > 80] == [], out
    assert len(read_items(tmp_path / "o" / "items.jsonl")) == 1


def test_the_command_refuses_a_release_with_nothing_kept(cli, one_error_line, tmp_path, files_under) -> None:
    path = tmp_path / "mmmu.json"
    path.write_text(json.dumps([{"id": "validation_Art_1", "question": "Q?", "options": "[]", "answer": "1",
                                 "question_type": "open"}]))
    line = one_error_line(*cli("data", "items", "--format", "mmmu", path, "--out", tmp_path / "o" / "i.jsonl"))
    assert "no mmmu items kept (1 open question (no options)); nothing written" in line
    assert not (tmp_path / "o").exists() or files_under(tmp_path / "o") == []


def test_the_authors_json_files_name_their_images(tmp_path: Path) -> None:
    seed = tmp_path / "SEED-Bench.json"
    seed.write_text(json.dumps({"questions": [
        {"answer": "C", "choice_a": "1", "choice_b": "2", "choice_c": "3", "choice_d": "4",
         "data_id": "1454426_2591111986.jpg", "data_type": "image", "question": "How many towels?",
         "question_id": "101669", "question_type_id": 5},
        {"answer": "A", "choice_a": "run", "choice_b": "walk", "choice_c": "sit", "choice_d": "lie",
         "data_id": "v1.mp4", "data_type": "video", "question": "Doing?", "question_id": "9", "question_type_id": 10}],
        "question_type": {"Instances Counting": 5, "Action Recognition": 10}}))
    (item,), summary = _build("seed-bench", seed, tmp_path)
    assert (item.image, item.label, item.category, summary["n_excluded"]) == (
        "1454426_2591111986.jpg", "C", "Instances Counting", 1)
    problems = tmp_path / "problems.json"
    problems.write_text(json.dumps({"5": {"question": "Which is north?", "choices": ["a", "b"], "answer": 1,
                                          "hint": "Look at the map.", "image": "image.png", "split": "test",
                                          "subject": "social science", "topic": "geography"}}))
    (item,), _ = _build("scienceqa", problems, tmp_path)
    assert (item.item_id, item.image, item.label, item.hint) == ("scienceqa-5", "test/5/image.png", "B",
                                                                 "Look at the map.")


def test_mmstar_tsv_takes_its_options_from_the_letter_columns(tmp_path: Path) -> None:
    header = ["index", "question", "A", "B", "C", "D", "answer", "category", "l2_category", "image"]
    row = ["3", "Which is red?", "apple", "sky", "grass", "coal", "A", "coarse perception", "image style", RED64]
    path = tmp_path / "MMStar.tsv"
    path.write_text("\t".join(header) + "\n" + "\t".join(row) + "\n")
    (item,), _ = _build("mmstar", path, tmp_path)
    assert (item.question, item.options, item.label, item.extra["l2_category"]) == (
        "Which is red?", ("apple", "sky", "grass", "coal"), "A", "image style")
    assert item.image == sha256_bytes(RED) + ".png"


def test_an_answer_given_as_an_options_text_is_its_letter_and_none_is_an_option(tmp_path: Path) -> None:
    rows = [["1", "Which colour?", "", "red", "green", "", "", "green", "x", "y", RED64, "dev"],
            ["2", "Which is missing?", "", "all", "None", "", "", "B", "x", "y", "1", "dev"]]
    items, _ = _build("mmbench", mmbench_tsv(tmp_path, rows), tmp_path)
    assert [(item.label, item.options) for item in items] == [("B", ("red", "green")), ("B", ("all", "None"))]


def test_pope_images_repeated_within_the_file_are_not_called_already_in_the_folder(cli, tmp_path,
                                                                                   monkeypatch) -> None:
    """POPE asks several questions of one image; the second use is a repeat within the
    release, not an image "already in pope-images" (which says the folder held it before this build)."""
    monkeypatch.chdir(tmp_path)
    pope(tmp_path)  # rows 0 and 1 embed the same red PNG
    args = ["data", "items", "--format", "pope", "pope.parquet", "--images", "pope-images"]
    code, out, err = cli(*args, "--out", "a.jsonl")
    assert code == 0, err
    assert "images: 2 written, 0 already in pope-images, 1 repeat within the release" in out
    code, out, err = cli(*args, "--out", "b.jsonl")
    assert code == 0 and "images: 0 written, 2 already in" in out and "1 repeat within" in out, err
