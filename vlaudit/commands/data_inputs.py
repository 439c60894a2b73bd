"""``vlaudit data vsr|gsr-coco|vsr-inverse|whatsup-controlled``: real benchmarks → the ITEMS table.

Each command prints what it kept and what it excluded (and why), writes ITEMS (JSONL or Parquet by suffix)
and a JSON summary beside it (``ITEMS.summary.json``). Each benchmark argument is the benchmark's own file or a
Hugging Face dataset (``hf-dataset:NAME[:CONFIG][@SPLIT]``, a ``save_to_disk`` folder or its Parquet export;
:mod:`vlaudit.sources.rows`), whose images are written once, named by content, into ``--hf-images``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from vlaudit.commands._apps import data_app
from vlaudit.commands._lazy import lazy_module
from vlaudit.commands._options import out_file_option
from vlaudit.commands._say import say
from vlaudit.errors import InputError
from vlaudit.settings import (
    VSR_INVERSE_EXCLUDED,
    VSR_INVERSE_GROUPS,
    VSR_PAPER_QUERIES,
    VSR_PAPER_RELATION_TYPES,
    VSR_PAPER_YES,
)

# The library, loaded on first use so that `vlaudit --help` stays light; mypy reads the real modules
# (see commands/_lazy.py).
if TYPE_CHECKING:
    import vlaudit.builders.benchmark_items as builders_benchmark_items
    import vlaudit.report.console as report_console
    import vlaudit.results.demo as results_demo
    import vlaudit.sources.items as sources_items
    import vlaudit.sources.rows as sources_rows
    import vlaudit.sources.vsr as sources_vsr
    import vlaudit.sources.whatsup as sources_whatsup
    import vlaudit.tables as tables
else:
    report_console = lazy_module("vlaudit.report.console")
    builders_benchmark_items = lazy_module("vlaudit.builders.benchmark_items")
    sources_items = lazy_module("vlaudit.sources.items")
    sources_rows = lazy_module("vlaudit.sources.rows")
    sources_vsr = lazy_module("vlaudit.sources.vsr")
    sources_whatsup = lazy_module("vlaudit.sources.whatsup")
    results_demo = lazy_module("vlaudit.results.demo")
    tables = lazy_module("vlaudit.tables")


def summary_path(out: Path) -> Path:
    """``items.jsonl`` → ``items.summary.json`` (beside the output)."""
    return out.with_name(out.name.split(".")[0] + ".summary.json")


def print_build(title: str, summary: dict[str, Any]) -> None:
    """Rich table: kept counts, then every exclusion reason with its count."""
    rows: list[list[Any]] = [["kept items", summary["n_items"], ""]]
    for key, value in summary.items():
        # the paper's figures are said on their own line, as a gap, never as rows of what was built
        if key in ("n_items", "n_excluded", "excluded", "excluded_by_reason", "notes") or key.startswith(("_", "paper_")):
            continue
        if isinstance(value, dict):
            for sub, n in value.items():
                rows.append([f"{key}: {sub}", n, ""])
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            rows.append([key, value, ""])
    for reason, n in summary["excluded_by_reason"].items():
        rows.append(["excluded", n, reason])
    if not summary["excluded_by_reason"]:
        rows.append(["excluded", 0, "—"])
    if summary["notes"]:
        rows.append(["notes (kept)", len(summary["notes"]), summary["notes"][0].get("note", "")])
    report_console.print_table(title, ["what", "n", "why"], rows)


# rich would read "[@SPLIT]" as markup and drop it: brackets are escaped
_SOURCE_HELP = r" Or a Hugging Face dataset: hf-dataset:NAME\[:CONFIG]\[@SPLIT], a save_to_disk folder, or .parquet."


def hf_images_option() -> Any:
    """``--hf-images``: where a dataset's image column is written (content-addressed; the scoring --images)."""
    return typer.Option(None, "--hf-images", help="Where a dataset's images are written, named by content "
                                                  "(default $VLAUDIT_HF_IMAGES, else ~/.cache/vlaudit/hf-images); "
                                                  "the --images of scoring.")


def _image_folder(folder: Path | None) -> Any:
    return sources_rows.ImageFolder(folder if folder is not None else sources_rows.default_images_dir())


def _stem(source: Path) -> str:
    return sources_rows.source_stem(source)


def _finish(result: Any, out: Path, title: str, *, images: Any = None, **meta: Any) -> None:
    summary = result.summary(**meta, out=str(out))
    if not result.items:
        print_build(title, summary)  # the exclusion reasons explain why nothing was kept
        raise InputError(f"nothing kept ({len(result.excluded)} excluded); no output written", path=meta.get("source"))
    if images is not None and images.written + images.reused:
        summary["hf_images"] = {"folder": str(images.folder), "written": images.written, "reused": images.reused}
    sources_items.write_items(out, result.items)
    tables.write_result(summary_path(out), results_demo.ItemsBuildSummary.from_dict(summary))
    print_build(title, summary)
    for warning in summary.get("warnings", []):
        typer.secho(f"warning: {meta.get('source')}: {warning}", fg="yellow", err=True)
    if "hf_images" in summary:
        say(f"images: {images.written} written, {images.reused} already in {images.folder} "
                   "(give it as --images)")
    say(f"wrote {out} and {summary_path(out)}")


@data_app.command("vsr")
def data_vsr(
    split_file: Path = typer.Argument(..., help="VSR split (jsonl), random or zero-shot." + _SOURCE_HELP),
    out: Path = out_file_option(help="ITEMS table to write (.jsonl or .parquet)."),
    meta: Path | None = typer.Option(None, "--meta", help="rel_meta_category_dict.txt: adds meta_category."),
    dataset: str | None = typer.Option(None, "--dataset", help="Dataset name (default from the file name)."),
    split: str | None = typer.Option(None, "--split", help="Split name (default from the file name)."),
    image_prefix: str = typer.Option("", "--image-prefix", help="Prefix added to each image file name."),
    instances: Path | None = typer.Option(None, "--instances",
                                          help="COCO instances json: add boxes where each object is unique."),
    relations: str | None = typer.Option(None, "--relations",
                                         help="Keep only these VSR relations (comma-separated, VSR's own names, "
                                              "e.g. 'left of,right of'). The paper's nine relation types are "
                                              "not named, so there is no preset for them."),
    hf_images: Path | None = hf_images_option(),
) -> None:
    """VSR yes/no items: one per row, label from `label`, subject/object from fields or the caption template."""
    default_dataset, default_split = builders_benchmark_items.split_from_stem(_stem(split_file))
    images = _image_folder(hf_images)
    rows = sources_vsr.read_vsr(split_file, images=images)
    chosen = None if relations is None else [r.strip() for r in relations.split(",") if r.strip()]
    if chosen is not None:
        rows = builders_benchmark_items.select_relations(rows, chosen, source=str(split_file))
    result = builders_benchmark_items.vsr_items(rows, dataset=dataset or default_dataset, split=split or default_split,
                                                image_prefix=image_prefix, meta_categories=sources_vsr.read_meta_categories(meta) if meta else None)
    if instances is not None:
        result = builders_benchmark_items.attach_coco_boxes(result, instances)
    print_population(result.counts, chosen)
    _finish(result, out, f"VSR — {split_file.name}", images=images, source=str(split_file),
            relations=chosen, paper_population={"queries": VSR_PAPER_QUERIES, "yes": VSR_PAPER_YES,
                                                "relation_types": VSR_PAPER_RELATION_TYPES,
                                                "rebuilt": False, "why": "the nine relation types are not named"})


def print_population(counts: dict[str, Any], relations: list[str] | None) -> None:
    """The population this build holds, then the paper's as a gap: its nine relation types are not named (§4)."""
    n = sum(counts["labels"].values())
    which = "all relations" if relations is None else "--relations"
    say(f"population: {n} items ({counts['labels'].get('yes', 0)} yes) over {counts['n_relations']} "
        f"relation(s), {which}")
    say(f"paper (VCA §4): {VSR_PAPER_QUERIES} queries ({VSR_PAPER_YES} yes) over {VSR_PAPER_RELATION_TYPES} "
        "relation types — not rebuilt: the paper does not name them (docs/concepts/vca.md)")


@data_app.command("vsr-inverse")
def data_vsr_inverse(
    split_file: Path = typer.Argument(..., help="VSR split (jsonl)." + _SOURCE_HELP),
    out: Path = out_file_option(help="ITEMS table to write (.jsonl or .parquet)."),
    entities: str = typer.Option("structured", "--entities",
                                 help="'structured' (default, VCA §18): a row's own subj/obj fields, else "
                                      "its caption template's slots (random splits have no fields); "
                                      "'fields': only rows with their own fields; 'any': also fields "
                                      "repaired from the caption."),
    meta: Path | None = typer.Option(None, "--meta",
                                     help="rel_meta_category_dict.txt: check the family mapping against "
                                          "VSR's relation list and show each relation's meta-category."),
    dataset: str | None = typer.Option(None, "--dataset", help="Dataset name (default from the file name)."),
    split: str | None = typer.Option(None, "--split", help="Split name (default from the file name)."),
    image_prefix: str = typer.Option("", "--image-prefix", help="Prefix added to each image file name."),
    instances: Path | None = typer.Option(None, "--instances",
                                          help="COCO instances json: add boxes where each object is unique."),
    hf_images: Path | None = hf_images_option(),
) -> None:
    """Original/inverse same-image groups for positive left/right, above/below, front/behind VSR items (§18).

    Prints candidates, groups and exclusions per relation and by reason, then the paper's 504 + 35 split as a
    gap it does not rebuild (which 35 candidates lack structured entities is not stated).
    """
    categories = sources_vsr.check_strict_mapping(sources_vsr.read_meta_categories(meta), meta) if meta else None
    default_dataset, default_split = builders_benchmark_items.split_from_stem(_stem(split_file))
    images = _image_folder(hf_images)
    result = builders_benchmark_items.vsr_inverse_items(sources_vsr.read_vsr(split_file, images=images), dataset=dataset or default_dataset,
                                                        split=split or default_split, image_prefix=image_prefix, entities=entities)
    if instances is not None:
        result = builders_benchmark_items.attach_coco_boxes(result, instances)
    print_relations(result.counts["by_relation"], categories)
    print_inverse_built(result.counts, len(result.excluded), entities)
    _finish(result, out, f"VSR inverse pairs — {split_file.name}", images=images, source=str(split_file),
            entities=entities, paper_split={"groups": VSR_INVERSE_GROUPS, "excluded": VSR_INVERSE_EXCLUDED,
                                            "rebuilt": False, "why": "the paper does not state which "
                                            "candidates lack structured entities"})


def print_relations(rows: list[dict[str, Any]], categories: dict[str, str] | None) -> None:
    """Per VSR relation: family, inverse, candidates and groups (and meta-category with ``--meta``)."""
    columns = ["relation", "family", "inverse", "candidates", "groups"]
    table = [[r["relation"], r["family"], r["inverse"], r["candidates"], r["groups"]] for r in rows]
    if categories is not None:
        columns.insert(1, "meta")
        for row, r in zip(table, rows, strict=True):
            row.insert(1, categories.get(r["relation"], "—"))
    report_console.print_table("Strict-family candidates per VSR relation", columns, table)


def print_inverse_built(counts: dict[str, Any], n_excluded: int, entities: str) -> None:
    """What this build made, then the paper's split as a gap: its 35 exclusions are not definable (VCA §18)."""
    say(f"built: {counts['n_groups']} groups from {counts['n_candidates']} candidates, {n_excluded} excluded "
        f"(--entities {entities})")
    paper = (counts["n_groups"], n_excluded) == (VSR_INVERSE_GROUPS, VSR_INVERSE_EXCLUDED)
    say(f"paper (VCA §18, VSR test): {VSR_INVERSE_GROUPS} groups + {VSR_INVERSE_EXCLUDED} excluded "
        f"{'— matched' if paper else '— not rebuilt: which 35 lack structured entities is not stated'} "
        "(docs/concepts/vca.md)")


@data_app.command("gsr-coco")
def data_gsr_coco(
    two_obj: Path = typer.Argument(..., help="What's Up coco_qa_two_obj.json ([image_id, true, false] list)."
                                             + _SOURCE_HELP),
    out: Path = out_file_option(help="ITEMS table to write (.jsonl or .parquet)."),
    instances: Path | None = typer.Option(None, "--instances",
                                          help="COCO instances json: add boxes where each object is unique."),
    split: str | None = typer.Option(None, "--split", help="Split name (default: the file stem)."),
    image_prefix: str = typer.Option("", "--image-prefix", help="Prefix before val2017/{id:012d}.jpg."),
) -> None:
    """GSR-COCO (§11): 440 same-image true/false groups on the real file; unparsable captions reported."""
    result = builders_benchmark_items.gsr_coco_items(sources_whatsup.read_two_obj(two_obj), split=split or _stem(two_obj), image_prefix=image_prefix)
    if instances is not None:
        result = builders_benchmark_items.attach_coco_boxes(result, instances)
    _finish(result, out, f"GSR-COCO — {two_obj.name}", source=str(two_obj))


@data_app.command("whatsup-controlled")
def data_whatsup_controlled(
    controlled: Path = typer.Argument(..., help="What's Up controlled_images_dataset.json." + _SOURCE_HELP),
    out: Path = out_file_option(help="ITEMS table to write (.jsonl or .parquet)."),
    split: str | None = typer.Option(None, "--split", help="Split name (default: the file stem)."),
    image_prefix: str = typer.Option("", "--image-prefix",
                                     help="Prefix added before each image_path (those of the released file start "
                                          "with data/controlled_images/, so --images is the folder holding data/)."),
    hf_images: Path | None = hf_images_option(),
) -> None:
    """What's Up Controlled-A/B: one group per image, the first caption option true, the others false."""
    images = _image_folder(hf_images)
    result = builders_benchmark_items.controlled_items(sources_whatsup.read_controlled(controlled, images=images), split=split or _stem(controlled),
                                                       image_prefix=image_prefix)
    _finish(result, out, f"What's Up controlled — {controlled.name}", images=images, source=str(controlled))
