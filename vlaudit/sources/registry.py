"""Every dataset reader by name: name → reader → what it yields (:data:`READERS`).

One contract for all of them: ``read_<format>(source, *, images=None)``. ``source`` is the release's own file
(JSON, JSONL, TSV, Parquet), a folder (``Dataset.save_to_disk``, or a folder of Parquet files) or
``hf-dataset:NAME[:CONFIG][@SPLIT]`` (:mod:`vlaudit.sources.rows`); ``images`` the folder embedded images are
written to, named by content (readers whose rows carry no images take none). A format published only as one
file (COCO instances, GQA scene graphs, ...) lists only ``file`` in :attr:`Reader.sources` and refuses a dataset
source with one :class:`~vlaudit.errors.InputError` line. A bad row is one line naming file, record and field.

What a reader yields (:attr:`Reader.yields`): ITEMS rows (:class:`~vlaudit.sources.benchmarks.release.
BenchmarkRead`, ``vlaudit data items --format NAME``: :data:`FORMATS`), 2×2 blocks (``cycles build
--benchmark``), labelled pairs (``cycles audit-pairs``), benchmark rows for an ITEMS builder (``data vsr``,
``data gsr-coco``, ...), annotations to build cycles from (``cycles build``), or cycles.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from vlaudit.errors import InputError
from vlaudit.settings import BENCHMARK_FORMATS
from vlaudit.sources.benchmarks.choice import read_mmbench, read_mmstar, read_scienceqa, read_seed_bench
from vlaudit.sources.benchmarks.choice_more import read_ai2d, read_cv_bench, read_mmmu
from vlaudit.sources.benchmarks.release import BenchmarkRead
from vlaudit.sources.benchmarks.yes_no import read_hallusionbench, read_mme, read_pope
from vlaudit.sources.coco import read_coco_captions, read_coco_instances
from vlaudit.sources.cycle_tables import read_cycles
from vlaudit.sources.gqa import read_gqa_scene_graphs
from vlaudit.sources.labelled_pairs import read_pair_table
from vlaudit.sources.pairs_jsonl import read_pairs_jsonl
from vlaudit.sources.rows import ImageFolder
from vlaudit.sources.sugarcrepe import read_sugarcrepe
from vlaudit.sources.two_by_two import read_blocks, read_naturalbench, read_winoground
from vlaudit.sources.vsr import read_vsr
from vlaudit.sources.whatsup import read_whatsup_controlled, read_whatsup_spatial

YES_NO, MULTIPLE_CHOICE = "yes/no", "multiple choice"
ITEMS: Final = "ITEMS rows"
BLOCKS: Final = "2×2 blocks"
LABELLED_PAIRS: Final = "labelled pairs"
BENCHMARK_ROWS: Final = "benchmark rows"
ANNOTATIONS: Final = "annotations"
CYCLES: Final = "cycles"
Yields = Literal["ITEMS rows", "2×2 blocks", "labelled pairs", "benchmark rows", "annotations", "cycles"]
Source = Literal["file", "folder", "hf-dataset"]
EVERY_SOURCE: tuple[Source, ...] = ("file", "folder", "hf-dataset")
FILE_ONLY: tuple[Source, ...] = ("file",)


@dataclass(frozen=True)
class Reader:
    """One registered reader: its name, what it yields, the function, and the release it reads (one line).

    ``sources``: the kinds of source it takes (``file``; ``folder`` and ``hf-dataset`` where the format has a
    dataset form). ``images``: whether it takes ``images=`` (its rows carry images). ``needs``: other inputs it
    takes by keyword (COCO captions are checked against their instances). ``answers``: yes/no or multiple
    choice, for a reader of ITEMS rows."""

    name: str
    yields: Yields
    reader: Callable[..., object]
    release: str
    sources: tuple[Source, ...] = EVERY_SOURCE
    images: bool = True
    needs: tuple[str, ...] = ()
    answers: str | None = None


def _items(name: str, answers: str, reader: Callable[..., BenchmarkRead], release: str) -> Reader:
    return Reader(name, ITEMS, reader, release, answers=answers)


READERS: dict[str, Reader] = {r.name: r for r in (
    _items("pope", YES_NO, read_pope, "lmms-lab/POPE, or the coco_pope_{category}.json files"),
    _items("mme", YES_NO, read_mme, "lmms-lab/MME, or VLMEvalKit's MME.tsv"),
    _items("hallusionbench", YES_NO, read_hallusionbench,
           "HallusionBench.json, or lmms-lab/HallusionBench (image, non_image)"),
    _items("mmstar", MULTIPLE_CHOICE, read_mmstar, "Lin-Chen/MMStar (mmstar.parquet, or MMStar.tsv)"),
    _items("mmbench", MULTIPLE_CHOICE, read_mmbench,
           "lmms-lab/MMBench, or the OpenCompass/VLMEvalKit TSV (base64 images)"),
    _items("seed-bench", MULTIPLE_CHOICE, read_seed_bench, "lmms-lab/SEED-Bench, or SEED-Bench.json (the image part)"),
    _items("scienceqa", MULTIPLE_CHOICE, read_scienceqa, "derek-thomas/ScienceQA, or problems.json (items with an image)"),
    _items("mmmu", MULTIPLE_CHOICE, read_mmmu, "MMMU/MMMU, one subject config (multiple-choice items)"),
    _items("cv-bench", MULTIPLE_CHOICE, read_cv_bench, "nyu-visionx/CV-Bench (2D, 3D)"),
    _items("ai2d", MULTIPLE_CHOICE, read_ai2d, "lmms-lab/ai2d"),
    Reader("winoground", BLOCKS, read_winoground, "Winoground's examples.jsonl (images DIR/{image_k}.png), or a dataset of its rows"),
    Reader("naturalbench", BLOCKS, read_naturalbench, "BaiqiL/NaturalBench (the yes/no samples)"),
    Reader("blocks", BLOCKS, read_blocks, "any 2×2 set as id, image_1, image_2, text_1, text_2 rows (e.g. EqBen)"),
    Reader("sugarcrepe", LABELLED_PAIRS, read_sugarcrepe, "SugarCrepe's data/{add,replace,swap}_*.json"),
    Reader("pair-table", LABELLED_PAIRS, read_pair_table,
           "image_id, caption_id or caption, label rows (JSONL, CSV, Parquet)", images=False),
    Reader("vsr", BENCHMARK_ROWS, read_vsr, "a VSR split .jsonl (data/splits/random or zeroshot), or a dataset of its rows"),
    Reader("whatsup-spatial", BENCHMARK_ROWS, read_whatsup_spatial,
           "What's Up COCO-Spatial coco_qa_two_obj.json ([image_id, true, false] lists)", images=False),
    Reader("whatsup-controlled", BENCHMARK_ROWS, read_whatsup_controlled,
           "What's Up Controlled-A/B controlled_images_dataset.json"),
    Reader("coco-instances", ANNOTATIONS, read_coco_instances, "COCO annotations/instances_*.json",
           FILE_ONLY, images=False),
    Reader("coco-captions", ANNOTATIONS, read_coco_captions,
           "COCO annotations/captions_*.json, or a dataset of image_id, caption rows", images=False,
           needs=("instances",)),
    Reader("gqa-scene-graphs", ANNOTATIONS, read_gqa_scene_graphs, "GQA {train,val}_sceneGraphs.json",
           FILE_ONLY, images=False),
    Reader("pairs-jsonl", ANNOTATIONS, read_pairs_jsonl,
           "any image-caption set as image_id, caption, objects, mentions, triples JSONL rows",
           FILE_ONLY, images=False),
    Reader("cycles", CYCLES, read_cycles, "a cycles table (JSONL or Parquet) written by cycles build or by hand",
           FILE_ONLY, images=False),
)}

#: the readers of ITEMS rows: ``vlaudit data items --format NAME``
FORMATS: dict[str, Reader] = {name: r for name, r in READERS.items() if r.yields == ITEMS}
assert tuple(FORMATS) == BENCHMARK_FORMATS, "settings.BENCHMARK_FORMATS lists the registered ITEMS readers"


def benchmark_format(name: str) -> Reader:
    """The registered ITEMS reader ``name``; an unknown one is an :class:`InputError` listing them all."""
    if name not in FORMATS:
        raise InputError(f"unknown benchmark format {name!r}; choose from {', '.join(FORMATS)}", field="format")
    return FORMATS[name]


def read_benchmark_items(name: str, source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """Read ``source`` with the ITEMS reader registered as ``name``."""
    read = benchmark_format(name).reader(source, images=images)
    assert isinstance(read, BenchmarkRead)
    return read
