"""Benchmark releases → the ITEMS table: the one door of ``vlaudit data items`` and of notebooks."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from vlaudit.errors import InputError
from vlaudit.files import check_file_target, write_result
from vlaudit.results.demo import Exclusion, ItemNote, ItemsBuildSummary
from vlaudit.results.versioned import JsonObject, record_from_dict
from vlaudit.sources.items import check_items_target, write_items
from vlaudit.sources.registry import benchmark_format, read_benchmark_items
from vlaudit.sources.rows import ImageFolder, default_images_dir


def items_summary_path(out: str | Path) -> Path:
    """``items.jsonl`` → ``items.summary.json`` (beside the ITEMS table)."""
    out = Path(out)
    return out.with_name(out.name.split(".")[0] + ".summary.json")


def build_benchmark_items(benchmark: str, source: str | Path, *, out: str | Path,
                          images: str | Path | None = None) -> ItemsBuildSummary:
    """Read a benchmark release with the reader registered as ``benchmark`` and write its ITEMS table.

    Args:
        benchmark: a name of :data:`vlaudit.sources.registry.FORMATS` (``pope``, ``mme``, ``mmstar``, ...).
        source: the release's file (JSON, JSONL, TSV, Parquet), a ``save_to_disk`` folder or
            ``hf-dataset:NAME[:CONFIG][@SPLIT]``.
        out: the ITEMS table to write (``.jsonl`` or ``.parquet``); its summary goes beside it
            (``NAME.summary.json``).
        images: where embedded images are written once, named by content (default ``$VLAUDIT_HF_IMAGES``,
            else ``~/.cache/vlaudit/hf-images``); give it as ``--images`` when scoring.

    Returns:
        The summary as written: kept items per category and label, text-only items, exclusions by reason.
        Nothing is written when no item is kept.
    """
    registered = benchmark_format(benchmark)
    check_file_target(out, field="--out")
    check_items_target(out)
    folder = ImageFolder(images if images is not None else default_images_dir())
    read = read_benchmark_items(benchmark, source, images=folder)
    reasons = read.excluded_by_reason()
    if not read.items:
        shown = "; ".join(f"{n} {reason}" for reason, n in reasons.items()) or "the release has no rows"
        raise InputError(f"no {benchmark} items kept ({shown}); nothing written", path=source)
    write_items(out, read.items)
    categories: JsonObject = dict(read.categories())
    labels: JsonObject = dict(sorted(Counter(str(item.label) for item in read.items).items()))
    excluded = [record_from_dict(Exclusion, row, path=source, name="excluded") for row in read.excluded]
    summary = ItemsBuildSummary(
        n_items=len(read.items), n_excluded=len(read.excluded), excluded_by_reason=reasons,
        excluded=excluded, notes=list[str | ItemNote](read.notes), warnings=list(read.warnings),
        extra={"benchmark": benchmark, "kind": registered.answers, "source": str(source), "out": str(out),
               "categories": categories, "labels": labels,
               "text_only": sum(item.image is None for item in read.items),
               "images": {"folder": str(folder.folder), "written": folder.written, "reused": folder.reused,
                          "repeated": folder.repeated}})
    write_result(items_summary_path(out), summary)
    return summary
