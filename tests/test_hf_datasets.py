"""Hugging Face datasets as benchmark inputs: built here with ``datasets`` itself, saved to disk
or exported to Parquet, and read back offline through the command a user runs."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from vlaudit.results.cycles import PairAuditResult
from vlaudit.results.demo import ItemsBuildSummary

datasets = pytest.importorskip("datasets")

VSR_ROWS = [  # zero-shot shape; line 3 has an upstream-truncated subj, line 4 is a random-split row
    {"image": "000000085637.jpg", "image_link": "http://x/85637.jpg", "caption": "The cat is left of the dog.",
     "label": 1, "relation": "left of", "subj": "cat", "obj": "dog", "annotator_id": 7,
     "vote_true_validator_id": "[2, 9]", "vote_false_validator_id": "[]"},
    {"image": "000000085638.jpg", "image_link": "http://x/85638.jpg", "caption": "The cup is on the table.",
     "label": 0, "relation": "on", "subj": "cup", "obj": "table", "annotator_id": 3,
     "vote_true_validator_id": "[]", "vote_false_validator_id": "[1]"},
    {"image": "000000085639.jpg", "image_link": "http://x/85639.jpg", "caption": "The horse is behind the car.",
     "label": 1, "relation": "behind", "subj": "orse", "obj": "car", "annotator_id": 7,
     "vote_true_validator_id": "[4]", "vote_false_validator_id": "[]"},
    {"image": "000000085640.jpg", "image_link": "http://x/85640.jpg",
     "caption": "The teddy bear is under the bed.", "label": 1, "relation": "under", "subj": None, "obj": None,
     "annotator_id": 11, "vote_true_validator_id": "[5]", "vote_false_validator_id": "[]"},
]


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))  # an empty cache: nothing to find but our files
    monkeypatch.setenv("VLAUDIT_HF_IMAGES", str(tmp_path / "default-images"))
    monkeypatch.chdir(tmp_path)


def _png(colour: tuple[int, int, int], size: tuple[int, int] = (6, 4)) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def _items(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _vsr_jsonl(root: Path) -> Path:
    path = root / "zeroshot_test.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in VSR_ROWS))
    return path


def test_data_vsr_on_a_saved_dataset_gives_the_items_of_its_jsonl(cli, tmp_path, capsys, monkeypatch,
                                                                   versioned_outputs) -> None:
    jsonl = _vsr_jsonl(tmp_path)
    dataset = datasets.Dataset.from_json(str(jsonl))
    dataset.save_to_disk(str(tmp_path / "saved" / "zeroshot_test"))
    dataset.to_parquet(str(tmp_path / "zeroshot_test.parquet"))
    capsys.readouterr()  # the progress bars of building the dataset here
    results = {}
    for name, source in (("jsonl", str(jsonl)), ("disk", "hf-dataset:saved/zeroshot_test"),
                         ("parquet", "zeroshot_test.parquet"), ("folder", "saved/zeroshot_test")):
        code, out, err = cli(*["data", "vsr", source, "--out", f"{name}.jsonl"])
        assert code == 0 and err == "", err  # no progress bars or library logs
        results[name] = (tmp_path / f"{name}.jsonl").read_text()
    assert results["disk"] == results["jsonl"] == results["parquet"] == results["folder"]
    items = _items(tmp_path / "disk.jsonl")
    assert [i["item_id"] for i in items] == [f"vsr-zeroshot-test-0000{k}" for k in (1, 2, 3, 4)]
    assert items[2]["subject"] == "horse" and items[2]["entity_source"] == "fields-repaired"
    assert not (tmp_path / "default-images").exists()  # no image column: nothing written
    for name in results:
        assert ItemsBuildSummary.from_dict(json.loads((tmp_path / f"{name}.summary.json").read_text())).n_items == 4


def test_an_image_column_is_written_once_by_content(cli, files_under, tmp_path, capsys, monkeypatch) -> None:
    red, blue = _png((255, 0, 0)), _png((0, 0, 255))
    features = datasets.Features({"image": datasets.Image(),
                                  "caption_options": datasets.Sequence(datasets.Value("string"))})
    options = ["A mug on a table", "A mug under a table", "A mug to the left of a table",
               "A mug to the right of a table"]
    dataset = datasets.Dataset.from_dict(
        {"image": [{"bytes": red, "path": None}, {"bytes": blue, "path": None}, {"bytes": red, "path": None}],
         "caption_options": [options] * 3}, features=features)
    dataset.save_to_disk(str(tmp_path / "controlled"))
    args = ["data", "whatsup-controlled", "hf-dataset:controlled", "--hf-images", "imgs"]
    code, out, err = cli(*[*args, "--out", "a.jsonl"])
    assert code == 0, err
    # the second red image repeats one of this release: not "already in" the folder
    assert "images: 2 written, 0 already in imgs, 1 repeat within the release" in out
    import hashlib

    names = {hashlib.sha256(red).hexdigest() + ".png", hashlib.sha256(blue).hexdigest() + ".png"}
    assert set(files_under(tmp_path / "imgs")) == names
    assert (tmp_path / "imgs" / (hashlib.sha256(red).hexdigest() + ".png")).read_bytes() == red
    items = _items(tmp_path / "a.jsonl")
    assert [i["image"] for i in items[::4]] == [hashlib.sha256(b).hexdigest() + ".png" for b in (red, blue, red)]
    code, out, err = cli(*[*args, "--out", "b.jsonl"])  # a rerun writes nothing
    assert code == 0 and "images: 0 written, 2 already in imgs, 1 repeat within the release" in out
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()
    summary = json.loads((tmp_path / "b.summary.json").read_text())
    assert summary["hf_images"] == {"folder": "imgs", "written": 0, "reused": 2, "repeated": 1}


def test_a_dataset_dict_needs_its_split_named(cli, one_error_line, tmp_path, capsys, monkeypatch) -> None:
    rows = datasets.Dataset.from_list([{"image_id": 139, "true_caption": "A photo of a cup to the left of a dog",
                                        "false_caption": "A photo of a cup to the right of a dog"}])
    datasets.DatasetDict({"test": rows, "validation": rows}).save_to_disk(str(tmp_path / "spatial"))
    capsys.readouterr()  # the set-up's own progress bars (shown unless an earlier test turned them off)
    line = one_error_line(*cli(*["data", "gsr-coco", "hf-dataset:spatial", "--out", "g.jsonl"]))
    assert "splits ['test', 'validation']" in line and "@SPLIT" in line
    line = one_error_line(*cli(*["data", "gsr-coco", "hf-dataset:spatial@train", "--out", "g.jsonl"]))
    assert "no split 'train'" in line
    assert not (tmp_path / "g.jsonl").exists()
    code, out, err = cli(*["data", "gsr-coco", "hf-dataset:spatial@test", "--out", "g.jsonl"])
    assert code == 0, err
    item = _items(tmp_path / "g.jsonl")[0]
    assert item["image"] == "val2017/000000000139.jpg" and item["split"] == "spatial" and item["label"] == "yes"


def test_an_uncached_hub_dataset_offline_is_one_line(cli, one_error_line, tmp_path, capsys, monkeypatch, no_network) -> None:
    line = one_error_line(*cli(*["data", "vsr", "hf-dataset:nobody/no-such-vsr:default@test", "--out",
                                     "v.jsonl"]))
    assert "hf-dataset:nobody/no-such-vsr:default@test" in line and "cannot load" in line
    assert not (tmp_path / "v.jsonl").exists()


def test_hf_spec_parsing() -> None:
    from vlaudit.sources.rows import HfSpec, parse_hf_spec, source_stem

    assert parse_hf_spec("hf-dataset:org/vsr") == HfSpec("org/vsr")
    assert parse_hf_spec("hf-dataset:org/vsr:zeroshot@test") == HfSpec("org/vsr", "zeroshot", "test")
    assert parse_hf_spec("hf-dataset:org/vsr@dev") == HfSpec("org/vsr", None, "dev")
    assert source_stem("hf-dataset:org/vsr@dev") == "vsr_dev"
    assert source_stem("random_test.jsonl") == "random_test"


def test_audit_pairs_reads_a_sugarcrepe_dataset_with_images(cli, tmp_path, capsys, monkeypatch,
                                                            versioned_outputs) -> None:
    features = datasets.Features({"image": datasets.Image(), "caption": datasets.Value("string"),
                                  "negative_caption": datasets.Value("string")})
    red, blue = _png((255, 0, 0)), _png((0, 0, 255))
    datasets.Dataset.from_dict({"image": [{"bytes": red, "path": None}, {"bytes": blue, "path": None}],
                                "caption": ["a red square", "a blue square"],
                                "negative_caption": ["a blue square", "a red square"]},
                               features=features).to_parquet(str(tmp_path / "swap.parquet"))
    code, out, err = cli(*["cycles", "audit-pairs", "swap.parquet", "--out", "audit"])
    assert code == 0, err
    row = json.loads((tmp_path / "audit" / "audit_pairs.json").read_text())["rows"][0]
    # each caption is positive for one image and negative for the other: an exact cycle, written as pairs
    assert row["format"] == "sugarcrepe" and row["tv_caption"] == 0 and row["positives_in_cycles"] == 2
    assert not (tmp_path / "default-images").exists()  # labels need no image files
    versioned_outputs(tmp_path / "audit", {"audit_pairs.json": PairAuditResult})


def test_coco_captions_from_a_dataset_equal_the_official_file(tmp_path) -> None:
    from vlaudit.sources.coco import read_coco_captions, read_coco_instances

    instances = {"images": [{"id": 1, "width": 10, "height": 10, "file_name": "a.jpg"},
                            {"id": 2, "width": 10, "height": 10, "file_name": "b.jpg"}],
                 "annotations": [], "categories": [{"id": 1, "name": "dog"}]}
    captions = [{"id": 11, "image_id": 1, "caption": "a dog"}, {"id": 12, "image_id": 2, "caption": "a cat"}]
    (tmp_path / "instances.json").write_text(json.dumps(instances))
    (tmp_path / "captions.json").write_text(json.dumps({"annotations": captions}))
    datasets.Dataset.from_list(captions).save_to_disk(str(tmp_path / "captions"))
    parsed = read_coco_instances(tmp_path / "instances.json")
    official = read_coco_captions(tmp_path / "captions.json", parsed)
    from_dataset = read_coco_captions("hf-dataset:captions", parsed)
    assert from_dataset.texts == official.texts and from_dataset.raw_ids.tolist() == official.raw_ids.tolist()
    assert from_dataset.image.tolist() == official.image.tolist()


def test_real_vsr_split_and_coco_captions_as_datasets_give_the_same_outputs(cli, shared_data, tmp_path, capsys,
                                                                             monkeypatch) -> None:
    """The real sample files, made into datasets the way a user would, give byte-identical outputs."""
    split = shared_data / "vsr" / "zeroshot_test.jsonl"
    datasets.Dataset.from_json(str(split)).save_to_disk(str(tmp_path / "zeroshot_test"))
    for name, source in (("file", str(split)), ("dataset", "hf-dataset:zeroshot_test")):
        code, _, err = cli(*["data", "vsr", source, "--out", f"vsr_{name}.jsonl"])
        assert code == 0, err
    assert (tmp_path / "vsr_file.jsonl").read_text() == (tmp_path / "vsr_dataset.jsonl").read_text()
    assert len(_items(tmp_path / "vsr_dataset.jsonl")) == 1222

    annotations = shared_data / "coco_val2017_sample" / "annotations"
    captions = json.loads((annotations / "captions_val2017_subset20.json").read_text())["annotations"]
    datasets.Dataset.from_list(captions).to_parquet(str(tmp_path / "captions.parquet"))
    for name, source in (("file", str(annotations / "captions_val2017_subset20.json")),
                         ("dataset", "captions.parquet")):
        code, _, err = cli(*["cycles", "build", "coco", "--instances",
                                 str(annotations / "instances_val2017_subset20.json"), "--captions", source,
                                 "--min-cycles", "1", "--splits", "test=1.0", "--out", f"c_{name}.jsonl"])
        assert code == 0, err
    for suffix in (".jsonl", ".captions.jsonl"):
        assert (tmp_path / f"c_file{suffix}").read_text() == (tmp_path / f"c_dataset{suffix}").read_text()
