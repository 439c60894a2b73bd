"""Cycles from 2×2 benchmarks (Winoground, NaturalBench, generic blocks): each example is one exact cycle.

Nothing is paired or filtered here: the benchmark built its blocks (both texts describe an image pair with
the same words or opposite answers), so every example becomes one cycle row of the family its tags name, in
the single split ``test`` (these benchmarks are test sets; no split is derived from them). No family is
withdrawn at build time: the benchmark's own metrics are reported on its whole population, while ``cycles
eval`` still applies the minimum-cycle rule (cycle paper §D.5) to CycleAcc per family.

Each row carries ``benchmark``, ``benchmark_metrics`` (whose own metrics ``cycles eval`` adds),
``example_id`` and the benchmark's ``tags``, so the scorers and ``cycles eval`` need nothing else.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from vlaudit.builders.cycles.build_steps import new_row, write_outputs
from vlaudit.errors import InputError
from vlaudit.settings import TWO_BY_TWO_SPLIT
from vlaudit.sources.two_by_two import ParsedBenchmark, TwoByTwoBlock, read_two_by_two


def check_images(blocks: list[TwoByTwoBlock], images: Path, source: str) -> None:
    """Every image file exists under ``images`` (the reader already refused paths that leave it)."""
    for block in blocks:
        for side, name in ((1, block.image_1), (2, block.image_2)):
            if not (images / name).is_file():
                raise InputError(f"image {name!r} not found in {str(images)!r}", path=source, record=block.record,
                                 field=f"image {side}")


def block_rows(blocks: list[TwoByTwoBlock]) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Cycle rows (ids ``{family}/test/{example_id}``) and the captions table of the blocks."""
    rows, captions = [], {}
    for block in blocks:
        row = new_row(block.image_1, block.caption_1, block.image_2, block.caption_2, block.text_1, block.text_2,
                      block.image_1, block.image_2)
        row.update(cycle_id=f"{block.family}/{TWO_BY_TWO_SPLIT}/{block.example_id}", family=block.family,
                   split=TWO_BY_TWO_SPLIT, benchmark=block.benchmark, benchmark_metrics=block.metrics,
                   example_id=block.example_id, tags=block.tags)
        rows.append(row)
        for caption_id, text, image in ((block.caption_1, block.text_1, block.image_1),
                                        (block.caption_2, block.text_2, block.image_2)):
            captions[caption_id] = {"caption_id": caption_id, "text": text, "image_id": image,
                                    "source": block.benchmark}
    return rows, captions


def build_benchmark_cycles(benchmark: str, examples: str | Path, out: str | Path, *, images: str | Path,
                           parsed: ParsedBenchmark | None = None) -> dict[str, Any]:
    """Write one cycle per example of a 2×2 benchmark file (plus captions and metadata beside it).

    Args:
        benchmark: ``winoground``, ``naturalbench`` or ``blocks`` (formats: :mod:`vlaudit.sources.two_by_two`).
        examples: the benchmark file (JSONL or Parquet).
        out: the cycles file to write.
        images: the folder the image file names are relative to; every file must exist.
        parsed: blocks already read from another row source (e.g. a Hugging Face dataset); ``examples`` then
            only names that source in the metadata.

    Returns:
        The build summary in the shape of the other builders' (Table-6 counts per family, one split).
    """
    parsed = parsed or read_two_by_two(benchmark, examples, images)
    check_images(parsed.blocks, Path(images), str(examples))
    rows, captions = block_rows(parsed.blocks)
    counts: dict[str, dict[str, int]] = {}
    for family, n in Counter(block.family for block in parsed.blocks).items():
        counts[family] = {TWO_BY_TWO_SPLIT: n}
    meta = {"source": benchmark, "examples": str(examples), "images": str(images),
            "families": sorted(counts), "splits": {TWO_BY_TWO_SPLIT: 1.0}, "min_cycles": 0,
            "images_in_pool": len({b.image_1 for b in parsed.blocks} | {b.image_2 for b in parsed.blocks}),
            "counts": dict(sorted(counts.items())), "unavailable": {},
            "skipped": dict(parsed.skipped), "warnings": {f"skipped {k}": v for k, v in parsed.skipped.items()}}
    paths = write_outputs(out, rows, captions, meta)
    return {**meta, "paths": paths, "cycles_written": len(rows)}
