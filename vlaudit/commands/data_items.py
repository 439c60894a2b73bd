"""``vlaudit data items --format NAME SOURCE``: a published benchmark (POPE, MME, MMStar, ...) → ITEMS.

Prints the kept items per category and label, the text-only items, and every exclusion by reason; writes
ITEMS (JSONL or Parquet by suffix) and ``ITEMS.summary.json`` beside it. See docs/reference/benchmarks.md.
"""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import data_app
from vlaudit.commands._options import FOLDER, out_file_option
from vlaudit.commands._say import images_line, say
from vlaudit.settings import BENCHMARK_FORMATS


def _counts(title: str, counts: object) -> list[str]:
    """A name → n table of the summary as lines (counts first: aligned however long a name is)."""
    table = counts if isinstance(counts, dict) else {}
    return [f"  {'n':>6}  {title}"] + [f"  {n:>6}  {name}" for name, n in table.items()]


@data_app.command("items")
def data_items(
    source: str = typer.Argument(..., help="The release: its JSON, JSONL, TSV or Parquet file, a save_to_disk "
                                           "folder, or hf-dataset:NAME (then :CONFIG and @SPLIT as needed)."),
    benchmark: str = typer.Option(..., "--format", metavar="NAME",
                                  help="The release's reader: " + ", ".join(BENCHMARK_FORMATS) + "."),
    out: Path = out_file_option(help="ITEMS table to write (.jsonl or .parquet)."),
    images: Path | None = typer.Option(None, "--images", metavar=FOLDER,
                                       help="Where embedded images are written, named by content (default "
                                            "$VLAUDIT_HF_IMAGES, else ~/.cache/vlaudit/hf-images); the "
                                            "--images of scoring."),
) -> None:
    """A published benchmark's release → the ITEMS table (see docs/reference/benchmarks.md for each release's schema)."""
    summary = vlaudit.build_benchmark_items(benchmark, source, out=out, images=images)
    extra = summary.extra
    lines = [f"{benchmark} ({extra['kind']}): {summary.n_items} items kept, {summary.n_excluded} excluded"]
    lines += _counts("category", extra["categories"])
    lines += _counts("label", extra["labels"])
    if extra["text_only"]:
        lines.append(f"  text-only items (no image; reported apart): {extra['text_only']}")
    if summary.excluded_by_reason:
        lines += _counts("excluded because", summary.excluded_by_reason)
    lines += [f"warning: {warning}" for warning in summary.warnings]
    lines += [f"note: {note}" for note in summary.notes]
    written = extra["images"]
    if isinstance(written, dict) and (written["written"] or written["reused"] or written.get("repeated")):
        lines.append(images_line(written))
    lines.append(f"wrote {out} and {out.with_name(out.name.split('.')[0] + '.summary.json')}")
    say("\n".join(lines))
