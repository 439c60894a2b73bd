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
from reader_samples import (
    AI2D,
    CAPTIONS,
    CONTROLLED,
    CV_BENCH,
    CYCLES,
    GQA,
    HALLUSION,
    INSTANCES,
    ITEMS,
    MARGINS,
    META,
    MMBENCH,
    MME,
    MMMU,
    MMSTAR,
    PAIR_TABLE,
    PAIRS,
    POPE,
    SCIENCEQA,
    SCORES,
    SEED,
    SUGARCREPE,
    TWO_OBJ,
    VSR,
)

from vlaudit.errors import VlauditError

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
LEAVES = (st.none() | st.booleans() | st.integers(-(2 ** 70), 2 ** 70) | TEXT
          | st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([1e308, -1e308, 0.5, -3, "yes"]))
JSON = st.recursive(LEAVES, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
                    max_leaves=5)



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
