"""Every registered dataset reader (vlaudit.sources.registry.READERS) on a tiny file in its real format, on the
same rows saved as a dataset folder (``Dataset.save_to_disk``) and as ``hf-dataset:FOLDER``: the forms its
entry lists give the same records; a form it does not list is refused as one InputError line."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from benchmark_releases import HALLUSION, RELEASES, mmbench_hub
from reader_samples import (
    AI2D,
    CAPTIONS,
    CONTROLLED,
    CV_BENCH,
    CYCLES,
    GQA,
    INSTANCES,
    MMBENCH,
    MME,
    MMMU,
    MMSTAR,
    PAIRS,
    POPE,
    SCIENCEQA,
    SEED,
    SUGARCREPE,
    TWO_OBJ,
    VSR,
)
from two_by_two_samples import WINOGROUND_ROWS, naturalbench_files

from vlaudit.errors import InputError
from vlaudit.sources.benchmarks.release import BenchmarkRead
from vlaudit.sources.coco import CocoCaptions, CocoInstances, read_coco_instances
from vlaudit.sources.gqa import SceneGraphs
from vlaudit.sources.registry import FORMATS, ITEMS, READERS, benchmark_format
from vlaudit.sources.rows import ImageFolder
from vlaudit.sources.two_by_two import ParsedBenchmark

datasets = pytest.importorskip("datasets")

BLOCKS = [{"id": "b1", "image_1": "a.png", "image_2": "b.png", "text_1": "a cat on a mat", "text_2": "a mat on a cat"},
          {"id": "b2", "image_1": "c.png", "image_2": "d.png", "text_1": "a red cup", "text_2": "a cup, not red",
           "tag": "colour"}]
PAIR_ROWS = [{"image_id": "1", "caption": "a dog", "label": 1}, {"image_id": "1", "caption": "a cat", "label": 0}]


def _write(path: Path, content: object) -> Path:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in content))  # type: ignore[attr-defined]
    else:
        path.write_text(json.dumps(content))
    return path


def _release_rows(fmt: str, root: Path) -> list[dict]:
    """The rows of the benchmark's dataset form (its Hub Parquet export, tests/benchmark_releases.py)."""
    if fmt == "hallusionbench":
        return HALLUSION
    path = mmbench_hub(root) if fmt == "mmbench" else RELEASES[fmt][0](root)
    return pq.read_table(path).to_pylist()


# name → (file name, its content, the rows of its dataset form or None when it has none)
Case = tuple[str, object, Callable[[Path], list[dict]] | None]
ITEM_FILES: dict[str, tuple[str, object]] = {
    "pope": ("coco_pope_random.jsonl", POPE), "mme": ("mme.jsonl", MME),
    "hallusionbench": ("HallusionBench.json", HALLUSION), "mmstar": ("mmstar.jsonl", MMSTAR),
    "mmbench": ("mmbench.jsonl", MMBENCH), "seed-bench": ("SEED-Bench.json", SEED),
    "scienceqa": ("problems.json", SCIENCEQA), "mmmu": ("mmmu.jsonl", MMMU), "cv-bench": ("cv_bench.jsonl", CV_BENCH),
    "ai2d": ("ai2d.jsonl", AI2D)}
CASES: dict[str, Case] = {
    **{fmt: (name, content, lambda root, fmt=fmt: _release_rows(fmt, root))
       for fmt, (name, content) in ITEM_FILES.items()},
    "winoground": ("examples.jsonl", WINOGROUND_ROWS, lambda root: WINOGROUND_ROWS),
    "naturalbench": ("naturalbench.jsonl", None, lambda root: [
        json.loads(line) for line in naturalbench_files(root / "nb")[0].read_text().splitlines()]),
    "blocks": ("blocks.jsonl", BLOCKS, lambda root: BLOCKS),
    "sugarcrepe": ("swap_att.json", SUGARCREPE, lambda root: list(SUGARCREPE.values())),
    "pair-table": ("pairs.jsonl", PAIR_ROWS, lambda root: PAIR_ROWS),
    "vsr": ("zeroshot_test.jsonl", VSR, lambda root: VSR),
    "whatsup-spatial": ("coco_qa_two_obj.json", TWO_OBJ, lambda root: [
        {"image_id": image_id, "true_caption": true, "false_caption": false} for image_id, true, false in TWO_OBJ]),
    "whatsup-controlled": ("controlled_images_dataset.json", CONTROLLED, lambda root: CONTROLLED),
    "coco-captions": ("captions_val2017.json", CAPTIONS, lambda root: CAPTIONS["annotations"]),
    "coco-instances": ("instances_val2017.json", INSTANCES, None),
    "gqa-scene-graphs": ("val_sceneGraphs.json", GQA, None),
    "pairs-jsonl": ("pairs.jsonl", PAIRS, None),
    "cycles": ("cycles.jsonl", CYCLES, None),
}


def _size(read: object) -> int:
    """How many records a reader's result holds, whatever it yields."""
    if isinstance(read, BenchmarkRead):
        return len(read.items)
    if isinstance(read, ParsedBenchmark):
        return len(read.blocks)
    if isinstance(read, CocoCaptions):
        return len(read.texts)
    if isinstance(read, CocoInstances):
        return len(read.image_ids)
    if isinstance(read, SceneGraphs):
        return len(read.images)
    if isinstance(read, tuple):  # pairs JSONL: (images, captions)
        return len(read[1])
    assert isinstance(read, list), type(read)
    return len(read)


def _file(name: str, root: Path) -> Path:
    file_name, content, _ = CASES[name]
    if name == "naturalbench":
        return naturalbench_files(root / "nb-file")[0]
    return _write(root / file_name, content)


def _read(name: str, source: str | Path, root: Path) -> object:
    entry = READERS[name]
    options: dict[str, object] = {"images": ImageFolder(root / "images")} if entry.images else {}
    if "instances" in entry.needs:
        options["instances"] = read_coco_instances(_write(root / "instances_val2017.json", INSTANCES))
    return entry.reader(source, **options)


def test_every_reader_is_a_read_function_declaring_its_inputs_with_a_case_here() -> None:
    assert set(CASES) == set(READERS)
    assert FORMATS == {name: entry for name, entry in READERS.items() if entry.yields == ITEMS}
    for entry in READERS.values():
        assert entry.reader.__name__.startswith("read_"), entry.name
        parameters = inspect.signature(entry.reader).parameters
        assert ("images" in parameters) == entry.images and set(entry.needs) <= set(parameters), entry.name
        assert entry.sources[0] == "file" and set(entry.sources) <= {"file", "folder", "hf-dataset"}
        assert entry.release and "\n" not in entry.release
    assert CASES.keys() - {n for n, e in READERS.items() if "hf-dataset" in e.sources} == {
        "coco-instances", "gqa-scene-graphs", "pairs-jsonl", "cycles"}


@pytest.mark.parametrize("name", sorted(READERS))
def test_each_reader_reads_every_source_it_lists_and_refuses_the_others(name: str, tmp_path: Path) -> None:
    entry, (_, _, dataset_rows) = READERS[name], CASES[name]
    from_file = _read(name, _file(name, tmp_path), tmp_path)
    assert _size(from_file) > 0
    folder = tmp_path / "saved"
    rows = dataset_rows(tmp_path) if dataset_rows is not None else [{"x": 1}]
    datasets.Dataset.from_list(rows).save_to_disk(str(folder))
    for kind, source in (("folder", str(folder)), ("hf-dataset", f"hf-dataset:{folder}")):
        if kind in entry.sources:
            read = _read(name, source, tmp_path)
            # the ITEMS readers' dataset forms are their Hub exports, not the rows of the file above
            expected = _size(read) if entry.yields == ITEMS else _size(from_file)
            assert _size(read) == expected > 0, (kind, source)
        else:
            with pytest.raises(InputError) as refused:
                _read(name, source, tmp_path)
            line = str(refused.value)
            assert "\n" not in line and "not a dataset" in line and str(folder) in line, line


def test_a_file_only_reader_refuses_its_release_folder_in_one_line(tmp_path: Path) -> None:
    annotations = tmp_path / "annotations"
    annotations.mkdir()
    _write(annotations / "instances_val2017.json", INSTANCES)
    with pytest.raises(InputError, match=r"annotations: this reader takes a COCO instances_\*\.json file, not a "
                                         r"dataset \(hf-dataset: or a folder\)$"):
        READERS["coco-instances"].reader(annotations)


def test_an_unknown_benchmark_format_lists_the_registered_ones() -> None:
    with pytest.raises(InputError, match="unknown benchmark format 'coco'; choose from pope, mme, .*, ai2d$"):
        benchmark_format("coco")


def test_the_benchmarks_reference_lists_every_reader_with_what_it_yields_and_takes() -> None:
    page = (Path(__file__).parent.parent / "docs" / "reference" / "benchmarks.md").read_text(encoding="utf-8")
    for entry in READERS.values():
        assert f"| `{entry.name}` | {entry.yields} | {', '.join(entry.sources)} |" in page, entry.name
