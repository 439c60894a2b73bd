"""The benchmark readers by name: ``--format NAME`` → reader → typed ITEMS (:mod:`vlaudit.sources.benchmarks`).

Every reader follows one contract, ``read_<format>(source, *, images=None) -> BenchmarkRead``: ``source`` is
the release's own file (JSON, JSONL, TSV, Parquet), a ``save_to_disk`` folder or
``hf-dataset:NAME[:CONFIG][@SPLIT]``; ``images`` the folder embedded images are written to, named by content.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vlaudit.errors import InputError
from vlaudit.settings import BENCHMARK_FORMATS
from vlaudit.sources.benchmarks.choice import read_mmbench, read_mmstar, read_scienceqa, read_seed_bench
from vlaudit.sources.benchmarks.choice_more import read_ai2d, read_cv_bench, read_mmmu
from vlaudit.sources.benchmarks.release import BenchmarkRead
from vlaudit.sources.benchmarks.yes_no import read_hallusionbench, read_mme, read_pope
from vlaudit.sources.rows import ImageFolder

Reader = Callable[..., BenchmarkRead]
YES_NO, MULTIPLE_CHOICE = "yes/no", "multiple choice"


@dataclass(frozen=True)
class BenchmarkFormat:
    """One registered release: its name, answer kind, reader, and the release it reads (one line)."""

    name: str
    kind: str
    reader: Reader
    release: str


FORMATS: dict[str, BenchmarkFormat] = {f.name: f for f in (
    BenchmarkFormat("pope", YES_NO, read_pope, "lmms-lab/POPE, or the coco_pope_{category}.json files"),
    BenchmarkFormat("mme", YES_NO, read_mme, "lmms-lab/MME, or VLMEvalKit's MME.tsv"),
    BenchmarkFormat("hallusionbench", YES_NO, read_hallusionbench,
                    "HallusionBench.json, or lmms-lab/HallusionBench (image, non_image)"),
    BenchmarkFormat("mmstar", MULTIPLE_CHOICE, read_mmstar, "Lin-Chen/MMStar (mmstar.parquet, or MMStar.tsv)"),
    BenchmarkFormat("mmbench", MULTIPLE_CHOICE, read_mmbench,
                    "lmms-lab/MMBench, or the OpenCompass/VLMEvalKit TSV (base64 images)"),
    BenchmarkFormat("seed-bench", MULTIPLE_CHOICE, read_seed_bench,
                    "lmms-lab/SEED-Bench, or SEED-Bench.json (the image part)"),
    BenchmarkFormat("scienceqa", MULTIPLE_CHOICE, read_scienceqa,
                    "derek-thomas/ScienceQA, or problems.json (items with an image)"),
    BenchmarkFormat("mmmu", MULTIPLE_CHOICE, read_mmmu, "MMMU/MMMU, one subject config (multiple-choice items)"),
    BenchmarkFormat("cv-bench", MULTIPLE_CHOICE, read_cv_bench, "nyu-visionx/CV-Bench (2D, 3D)"),
    BenchmarkFormat("ai2d", MULTIPLE_CHOICE, read_ai2d, "lmms-lab/ai2d"),
)}
assert tuple(FORMATS) == BENCHMARK_FORMATS, "settings.BENCHMARK_FORMATS lists the registered readers"


def benchmark_format(name: str) -> BenchmarkFormat:
    """The registered format ``name``; an unknown one is an :class:`InputError` listing them all."""
    if name not in FORMATS:
        raise InputError(f"unknown benchmark format {name!r}; choose from {', '.join(FORMATS)}", field="format")
    return FORMATS[name]


def read_benchmark_items(name: str, source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """Read ``source`` with the reader registered as ``name``."""
    return benchmark_format(name).reader(source, images=images)
