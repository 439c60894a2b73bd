"""Property-based fuzzing of every reader (readers that stay hostile-proof).

Each reader starts from a small valid file in its real format; hypothesis mutates it — a value replaced by
any JSON value (huge integers, ±1e308, lists where text belongs, nested objects), a key or element deleted,
an element repeated — or damages its bytes (truncation, one byte overwritten). Whatever comes out, the
reader (and the builder that consumes it) either returns or raises :class:`~vlaudit.errors.VlauditError`,
which the CLI prints as one line: never another exception, which would be a traceback.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from vlaudit.errors import VlauditError

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
LEAVES = (st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70) | TEXT
          | st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([1e308, -1e308, 0.5, -3, "yes"]))
JSON = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                    max_leaves=5)

VSR = [{"image": "000000085637.jpg", "caption": "The cat is left of the dog.", "label": 1, "relation": "left of",
        "annotator_id": 7, "vote_true_validator_id": "[2, 9]"},
       {"image": "000000085638.jpg", "caption": "The cup is on top of the table.", "label": 0,
        "relation": "on top of", "subj": "cup", "obj": "table"}]
TWO_OBJ = [[453302, "A photo of a toaster to the left of a sink", "A photo of a toaster to the right of a sink"],
           [181303, "A photo of a kite above a person", "A photo of a kite below a person"]]
CONTROLLED = [{"image_path": "data/controlled_images/mug_on_table.jpeg",
               "caption_options": ["A mug on a table", "A mug under a table", "A mug to the left of a table"]}]
SUGARCREPE = {"0": {"filename": "000000565045.jpg", "caption": "A cat on a mat.", "negative_caption": "A dog on a mat."},
              "1": {"filename": "000000565046.jpg", "caption": "A red car.", "negative_caption": "A blue car."}}
GQA = {"2354786": {"width": 500, "height": 333, "objects": {
    "1": {"name": "cat", "x": 10, "y": 20, "w": 50, "h": 40, "attributes": ["black"],
          "relations": [{"name": "to the left of", "object": "2"}]},
    "2": {"name": "dog", "x": 200, "y": 30, "w": 60, "h": 50, "attributes": [], "relations": {}}}}}
INSTANCES = {"images": [{"id": 1, "width": 100, "height": 80, "file_name": "a.jpg"},
                        {"id": 2, "width": 64, "height": 64, "file_name": "b.jpg"}],
             "annotations": [{"id": 5, "image_id": 1, "category_id": 18, "bbox": [10, 10, 5, 20], "iscrowd": 0},
                             {"id": 6, "image_id": 2, "category_id": 3, "bbox": [0, 0, 64, 64]}],
             "categories": [{"id": 18, "name": "dog"}, {"id": 3, "name": "car"}]}
CAPTIONS = {"annotations": [{"id": 11, "image_id": 1, "caption": "a dog"}, {"id": 12, "image_id": 2, "caption": "a car"}]}
PAIRS = [{"image_id": "k1", "width": 100, "height": 80, "caption": "a dog left of a chair", "caption_id": "c1",
          "objects": [{"name": "dog", "box": [1, 1, 10, 10]}, {"name": "chair", "box": [50, 5, 20, 20]}],
          "mentions": ["dog"], "triples": [{"subject": "dog", "relation": "left of", "object": "chair"}]},
         {"image_id": 7, "caption": "a cat", "objects": [{"name": "cat", "iscrowd": True}]}]
ITEMS = [{"item_id": "a", "image": "a.png", "question": "Is the cat left of the dog?", "label": "yes",
          "group_id": "g", "statement": "true", "boxes": {"subject": [1, 2, 3, 4], "object": [5, 6, 7, 8]}},
         {"item_id": 2, "image": None, "question": "Is the cat right of the dog?", "label": 0, "group_id": "g",
          "statement": "false"}]
CYCLES = [{"cycle_id": "c1", "family": "f", "image_1": "u1", "caption_1": "v1", "image_2": "u2", "caption_2": "v2",
           "split": "test"},
          {"cycle_id": 2, "family": "f", "image_1": 3, "caption_1": "v3", "image_2": "u4", "caption_2": "v4"}]
SCORES = [{"image_id": u, "caption_id": v, "score": 0.5 if u[1] == v[1] else 0.25}
          for u in ("u1", "u2") for v in ("v1", "v2")]
MARGINS = [{"model": "m", "dataset": "d", "item_id": i, "context": c, "margin": 0.5 - k, "label": "yes",
            "group_id": "g", "statement": "true" if i == "a" else "false"}
           for k, i in enumerate(("a", "b")) for c in ("original", "text", "blank")]
PAIR_TABLE = [{"image_id": 1, "caption": "a dog", "label": 1}, {"image_id": 2, "caption_id": "c2", "label": "false"}]
POPE = [{"question_id": 1, "image": "a.jpg", "text": "Is there a cat in the image?", "label": "yes",
         "category": "random"},
        {"id": "2", "question_id": "2", "question": "Is there a dog?", "answer": "no", "image": "b.jpg",
         "image_source": "COCO", "category": "adversarial"}]
MME = [{"question_id": "existence/1.jpg", "image": "1.jpg", "question": "Is there a train?", "answer": "Yes",
        "category": "existence"},
       {"question_id": "existence/1.jpg", "image": "1.jpg", "question": "Is there a bed?", "answer": "No",
        "category": "existence"}]
HALLUSION = [{"category": "VD", "subcategory": "ocr", "visual_input": "1", "set_id": "0", "figure_id": "0",
              "question_id": "0", "question": "Is it red?", "gt_answer": "1", "filename": "./VD/ocr/0_0.png"},
             {"category": "VS", "subcategory": "chart", "visual_input": "0", "set_id": 1, "figure_id": 0,
              "question_id": 0, "question": "Was it 2020?", "gt_answer": "0", "filename": None}]
MMSTAR = [{"index": 0, "question": "Which?\nOptions: A: a cat, B: a dog, C: a cow", "image": "0.jpg", "answer": "B",
           "category": "coarse perception", "l2_category": "image style"}]
MMBENCH = [{"index": 241, "question": "What colour?", "hint": None, "A": "red", "B": "green", "C": "nan",
            "answer": "B", "category": "attribute", "L2-category": "fine", "image": "241.png"}]
SEED = {"questions": [{"answer": "A", "choice_a": "1", "choice_b": "2", "choice_c": "3", "choice_d": "4",
                       "data_id": "a.jpg", "data_type": "image", "question": "How many?", "question_id": "7",
                       "question_type_id": 5},
                      {"answer": "B", "choice_a": "run", "choice_b": "walk", "choice_c": "sit", "choice_d": "lie",
                       "data_id": "v.mp4", "data_type": "video", "question": "Doing?", "question_id": "8",
                       "question_type_id": 10}]}
SCIENCEQA = {"1": {"question": "Which is north?", "choices": ["a", "b", "c"], "answer": 2, "hint": "",
                   "image": "image.png", "split": "test", "subject": "social science", "topic": "geography"},
             "2": {"question": "Which word?", "choices": ["x", "y"], "answer": 0, "image": None, "split": "test"}}
MMMU = [{"id": "validation_Art_1", "question": "<image 1> which?", "options": "['a', 'b', 'c']", "answer": "C",
         "question_type": "multiple-choice", "image_1": "1.png", "image_2": "2.png", "subfield": "History"},
        {"id": "validation_Art_2", "question": "Year?", "options": "[]", "answer": "1888", "question_type": "open",
         "image_1": "3.png"}]
CV_BENCH = [{"idx": 0, "type": "2D", "task": "Count", "question": "How many?", "choices": ["3", "2"],
             "answer": "(B)", "filename": "img/a.png", "source": "ADE20K"}]
AI2D = [{"question": "Which?", "options": ["c", "D", "b"], "answer": "1", "image": "a.png"}]
META = ["Adjacency: adjacent to, alongside", "Directional: away from, towards", "", "Unallocated: among"]


def _vsr(path: Path) -> None:
    from vlaudit.builders.benchmark_items import vsr_inverse_items, vsr_items
    from vlaudit.sources.vsr import read_vsr

    rows = read_vsr(path)
    vsr_items(rows, dataset="d", split="s")
    vsr_inverse_items(rows, dataset="d", split="s", entities="any")


def _two_obj(path: Path) -> None:
    from vlaudit.builders.benchmark_items import gsr_coco_items
    from vlaudit.sources.whatsup import read_whatsup_spatial

    gsr_coco_items(read_whatsup_spatial(path), split="s")


def _controlled(path: Path) -> None:
    from vlaudit.builders.benchmark_items import controlled_items
    from vlaudit.sources.whatsup import read_whatsup_controlled

    controlled_items(read_whatsup_controlled(path), split="s")


def _audited(fmt: str) -> Callable[[Path], None]:
    def read(path: Path) -> None:
        from vlaudit.metrics.pair_audit import audit_pairs
        from vlaudit.sources.labelled_pairs import read_labelled_pairs

        audit_pairs(read_labelled_pairs(path, fmt, warnings=[])[1])

    return read


def _gqa(path: Path) -> None:
    from vlaudit.sources.gqa import read_gqa_scene_graphs

    read_gqa_scene_graphs(path)


def _instances(path: Path) -> None:
    from vlaudit.sources.coco import read_coco_instances

    read_coco_instances(path)


def _captions(path: Path) -> None:
    from vlaudit.sources.coco import read_coco_captions, read_coco_instances

    instances_path = path.with_name("instances.json")
    instances_path.write_text(json.dumps(INSTANCES))
    read_coco_captions(path, read_coco_instances(instances_path))


def _pairs(path: Path) -> None:
    from vlaudit.sources.pairs_jsonl import read_pairs_jsonl

    read_pairs_jsonl(path)


def _items(path: Path) -> None:
    from vlaudit.sources.items import read_items

    read_items(path)


def _cycles(path: Path) -> None:
    from vlaudit.sources.cycle_tables import read_cycles

    read_cycles(path)


def _scores(path: Path) -> None:
    from vlaudit.metrics.cycles import evaluate_cycle_families
    from vlaudit.records import Cycle
    from vlaudit.sources.cycle_tables import read_scores

    scores = read_scores(path)
    try:
        evaluate_cycle_families([Cycle("c", "f", "u1", "v1", "u2", "v2")], scores, min_cycles=1, n_resamples=5)
    except VlauditError:
        pass


def _margins(path: Path) -> None:
    from vlaudit.sources.margins import read_margins

    read_margins(path)


def _meta(path: Path) -> None:
    from vlaudit.sources.vsr import read_meta_categories

    read_meta_categories(path)


def _benchmark(fmt: str) -> Callable[[Path], None]:
    def read(path: Path) -> None:
        from vlaudit.sources.registry import read_benchmark_items

        read_benchmark_items(fmt, path)

    return read


# reader → (seed, file name, read-and-build)
READERS: dict[str, tuple[Any, str, Callable[[Path], None]]] = {
    "vsr": (VSR, "split.jsonl", _vsr),
    "whatsup_spatial": (TWO_OBJ, "coco_qa_two_obj.json", _two_obj),
    "whatsup_controlled": (CONTROLLED, "controlled.json", _controlled),
    "sugarcrepe": (SUGARCREPE, "swap_att.json", _audited("auto")),
    "gqa": (GQA, "sceneGraphs.json", _gqa),
    "coco_instances": (INSTANCES, "instances_x.json", _instances),
    "coco_captions": (CAPTIONS, "captions_x.json", _captions),
    "pairs": (PAIRS, "pairs.jsonl", _pairs),
    "items": (ITEMS, "items.jsonl", _items),
    "cycles": (CYCLES, "cycles.jsonl", _cycles),
    "cycles_as_pairs": (CYCLES, "cycles.jsonl", _audited("cycles")),
    "scores": (SCORES, "scores.jsonl", _scores),
    "margins": (MARGINS, "margins.jsonl", _margins),
    "labelled_table": (PAIR_TABLE, "pairs.jsonl", _audited("table")),
    "meta": (META, "rel_meta_category_dict.txt", _meta),
    "pope": (POPE, "coco_pope_random.jsonl", _benchmark("pope")),
    "mme": (MME, "mme.jsonl", _benchmark("mme")),
    "hallusionbench": (HALLUSION, "HallusionBench.json", _benchmark("hallusionbench")),
    "mmstar": (MMSTAR, "mmstar.jsonl", _benchmark("mmstar")),
    "mmbench": (MMBENCH, "mmbench.jsonl", _benchmark("mmbench")),
    "seed-bench": (SEED, "SEED-Bench.json", _benchmark("seed-bench")),
    "scienceqa": (SCIENCEQA, "problems.json", _benchmark("scienceqa")),
    "mmmu": (MMMU, "mmmu.jsonl", _benchmark("mmmu")),
    "cv-bench": (CV_BENCH, "cv_bench.jsonl", _benchmark("cv-bench")),
    "ai2d": (AI2D, "ai2d.jsonl", _benchmark("ai2d")),
}


def _encode(obj: Any, name: str) -> bytes:
    if name.endswith(".txt"):
        return "\n".join(str(line) for line in (obj if isinstance(obj, list) else [obj])).encode("utf-8")
    if name.endswith(".jsonl"):
        rows = obj if isinstance(obj, list) else [obj]
        return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")


def _paths(obj: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    if isinstance(obj, dict):
        for key, value in obj.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(obj, list):
        for index, value in enumerate(obj):
            found += _paths(value, (*prefix, index))
    return found


def _mutate(data: st.DataObject, seed: Any) -> Any:
    """One to three structural edits of a deep copy of ``seed``."""
    obj = copy.deepcopy(seed)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(obj)))
        if not path:
            continue
        parent = obj
        for key in path[:-1]:
            parent = parent[key]
        key = path[-1]
        operation = data.draw(st.sampled_from(["replace", "replace", "delete", "repeat"]))
        if operation == "replace":
            parent[key] = data.draw(JSON)
        elif operation == "delete":
            del parent[key]
        elif isinstance(parent, list):
            parent.insert(key, copy.deepcopy(parent[key]))
    return obj


def _survives(read: Callable[[Path], None], name: str, content: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(content)
        try:
            read(path)
        except VlauditError:
            pass  # a clean one-line error


@pytest.mark.parametrize("reader", sorted(READERS))
def test_the_valid_seed_reads(reader: str) -> None:
    seed, name, read = READERS[reader]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(_encode(seed, name))
        read(path)


@pytest.mark.parametrize("reader", sorted(READERS))
@settings(max_examples=40)
@given(data=st.data())
def test_mutated_records_give_a_clean_error_or_a_result(reader: str, data: st.DataObject) -> None:
    seed, name, read = READERS[reader]
    _survives(read, name, _encode(_mutate(data, seed), name))


@pytest.mark.parametrize("reader", sorted(READERS))
@settings(max_examples=15)
@given(data=st.data())
def test_damaged_bytes_give_a_clean_error_or_a_result(reader: str, data: st.DataObject) -> None:
    seed, name, read = READERS[reader]
    content = bytearray(_encode(seed, name))
    position = data.draw(st.integers(0, len(content) - 1))
    if data.draw(st.booleans()):
        content = content[:position]  # truncated
    else:
        content[position] = data.draw(st.integers(0, 255))  # one byte overwritten (non-UTF-8 included)
    _survives(read, name, bytes(content))


@settings(max_examples=25)
@given(data=st.data())
def test_a_mutated_vsr_dataset_in_parquet_reads_cleanly(data: st.DataObject) -> None:
    """The dataset path (:mod:`vlaudit.sources.rows`): the same mutations, stored as a Parquet export."""
    import pyarrow as pa

    from vlaudit.files import rows_to_table, write_parquet

    rows = _mutate(data, VSR)
    assume(isinstance(rows, list) and rows and all(isinstance(r, dict) and r for r in rows))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "random_test.parquet"
        try:
            write_parquet(path, rows_to_table(rows))
        except (pa.ArrowException, OverflowError):
            assume(False)  # Arrow cannot store these values: no Parquet export can hold them
        try:
            _vsr(path)
        except VlauditError:
            pass


BENCHMARK_PARQUET_SEEDS = {"pope": POPE, "mme": MME, "mmstar": MMSTAR, "mmbench": MMBENCH, "mmmu": MMMU,
                           "cv-bench": CV_BENCH, "ai2d": AI2D}


@settings(max_examples=40, deadline=None)
@given(fmt=st.sampled_from(sorted(BENCHMARK_PARQUET_SEEDS)), data=st.data())
def test_mutated_benchmark_rows_in_parquet_read_cleanly(fmt: str, data: st.DataObject) -> None:
    """The benchmark readers on the dataset path: the same mutations, stored as a Parquet export."""
    import pyarrow as pa

    from vlaudit.files import rows_to_table, write_parquet
    from vlaudit.sources.registry import read_benchmark_items

    rows = _mutate(data, BENCHMARK_PARQUET_SEEDS[fmt])
    assume(isinstance(rows, list) and rows and all(isinstance(r, dict) and r for r in rows))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "release.parquet"
        try:
            write_parquet(path, rows_to_table(rows))
        except (pa.ArrowException, OverflowError):
            assume(False)  # Arrow cannot store these values: no Parquet export can hold them
        try:
            read_benchmark_items(fmt, path)
        except VlauditError:
            pass


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_a_damaged_benchmark_tsv_reads_cleanly(data: st.DataObject) -> None:
    """A VLMEvalKit TSV with base64 images, truncated or with one byte overwritten."""
    from benchmark_releases import mmbench_tsv

    from vlaudit.sources.registry import read_benchmark_items
    from vlaudit.sources.rows import ImageFolder

    with tempfile.TemporaryDirectory() as folder:
        path = mmbench_tsv(Path(folder))
        content = bytearray(path.read_bytes())
        position = data.draw(st.integers(0, len(content) - 1))
        if data.draw(st.booleans()):
            content = content[:position]
        else:
            content[position] = data.draw(st.integers(0, 255))
        path.write_bytes(bytes(content))
        try:
            read_benchmark_items("mmbench", path, images=ImageFolder(Path(folder) / "images"))
        except VlauditError:
            pass
# the whole file re-encoded the way files arrive from other tools and systems
WRAPPERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": lambda raw: __import__("gzip").compress(raw, mtime=0),
    "bom": lambda raw: b"\xef\xbb\xbf" + raw,
    "crlf": lambda raw: raw.replace(b"\n", b"\r\n"),
    "nfd": lambda raw: __import__("unicodedata").normalize("NFD", raw.decode("utf-8")).encode("utf-8"),
    "utf16": lambda raw: raw.decode("utf-8").encode("utf-16"),
    "nul": lambda raw: raw[: len(raw) // 2] + b"\x00" * 8 + raw[len(raw) // 2:],
}


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_re_encoded_file_gives_a_clean_error_or_a_result(reader: str, wrapper: str) -> None:
    seed, name, read = READERS[reader]
    _survives(read, name, WRAPPERS[wrapper](_encode(seed, name)))


@pytest.mark.parametrize("reader", sorted(r for r in READERS if READERS[r][1].endswith((".json", ".jsonl"))))
def test_a_compressed_json_file_says_so(reader: str) -> None:
    import gzip

    seed, name, read = READERS[reader]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(gzip.compress(_encode(seed, name), mtime=0))
        with pytest.raises(VlauditError, match=r"is compressed, not JSON: gzip \(gunzip it first\)"):
            read(path)
