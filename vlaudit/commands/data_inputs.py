"""``vlaudit data vsr|gsr-coco|vsr-inverse|whatsup-controlled``: real benchmarks → the ITEMS table.

Each command prints what it kept and what it excluded (and why), writes ITEMS (JSONL or Parquet by suffix)
and a JSON summary beside it (``ITEMS.summary.json``). Each benchmark argument is the benchmark's own file or a
Hugging Face dataset (``hf-dataset:NAME[:CONFIG][@SPLIT]``, a ``save_to_disk`` folder or its Parquet export;
:mod:`vlaudit.sources.rows`), whose images are written once, named by content, into ``--hf-images``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

import vlaudit
from vlaudit.commands._apps import data_app
from vlaudit.commands._options import out_file_option
from vlaudit.commands._render import print_table
from vlaudit.commands._say import images_line, say, warn
from vlaudit.errors import InputError
from vlaudit.settings import (
    VSR_INVERSE_EXCLUDED,
    VSR_INVERSE_GROUPS,
    VSR_PAPER_QUERIES,
    VSR_PAPER_RELATION_TYPES,
    VSR_PAPER_YES,
)


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
    print_table(title, ["what", "n", "why"], rows)


# rich would read "[@SPLIT]" as markup and drop it: brackets are escaped
_SOURCE_HELP = r" Or a Hugging Face dataset: hf-dataset:NAME\[:CONFIG]\[@SPLIT], a save_to_disk folder, or .parquet."


def hf_images_option() -> Any:
    """``--hf-images``: where a dataset's image column is written (content-addressed; the scoring --images)."""
    return typer.Option(None, "--hf-images", help="Where a dataset's images are written, named by content "
                                                  "(default $VLAUDIT_HF_IMAGES, else ~/.cache/vlaudit/hf-images); "
                                                  "the --images of scoring.")


def _finish(build: Any, title: str, source: Path) -> None:
    """Print what a build kept and excluded (and why); a build that kept nothing is an error (nothing written)."""
    summary = build.summary
    print_build(title, summary)  # when nothing was kept, the exclusion reasons explain why
    if not build.written:
        raise InputError(f"nothing kept ({summary['n_excluded']} excluded); no output written", path=str(source))
    for warning in summary.get("warnings", []):
        warn(f"{source}: {warning}")
    if "hf_images" in summary:
        say(images_line(summary["hf_images"]))
    say(f"wrote {build.out} and {build.summary_path}")


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
    chosen = None if relations is None else [r.strip() for r in relations.split(",") if r.strip()]
    build = vlaudit.build_vsr_items(split_file, out=out, meta=meta, dataset=dataset, split=split,
                                    image_prefix=image_prefix, instances=instances, hf_images=hf_images,
                                    relations=chosen)
    print_population(build.counts, chosen)
    _finish(build, f"VSR — {split_file.name}", split_file)


def print_population(counts: Any, relations: list[str] | None) -> None:
    """The population this build holds, then the paper's as a gap: its nine relation types are not named (§4).

    ``counts``: the build's :class:`vlaudit.api.data.BuildCounts` (None when it counted nothing)."""
    labels = {} if counts is None else counts.labels
    n_relations = 0 if counts is None or counts.n_relations is None else counts.n_relations
    which = "all relations" if relations is None else "--relations"
    say(f"population: {sum(labels.values())} items ({labels.get('yes', 0)} yes) over {n_relations} "
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
    build = vlaudit.build_vsr_inverse_items(split_file, out=out, entities=entities, meta=meta, dataset=dataset,
                                            split=split, image_prefix=image_prefix, instances=instances,
                                            hf_images=hf_images)
    print_relations(build.relations or [], build.categories)
    if build.counts is not None:
        print_inverse_built(build.counts, build.n_excluded, entities)
    _finish(build, f"VSR inverse pairs — {split_file.name}", split_file)


def print_relations(rows: list[Any], categories: dict[str, str] | None) -> None:
    """Per VSR relation (:class:`vlaudit.api.data.RelationCandidates`): family, inverse, candidates and groups
    (and meta-category with ``--meta``)."""
    columns = ["relation", "family", "inverse", "candidates", "groups"]
    table: list[list[str | int]] = [[r.relation, r.family, r.inverse, r.candidates, r.groups] for r in rows]
    if categories is not None:
        columns.insert(1, "meta")
        for row, r in zip(table, rows, strict=True):
            row.insert(1, categories.get(r.relation, "—"))
    print_table("Strict-family candidates per VSR relation", columns, table)


def print_inverse_built(counts: Any, n_excluded: int, entities: str) -> None:
    """What this build made, then the paper's split as a gap: its 35 exclusions are not definable (VCA §18)."""
    say(f"built: {counts.n_groups} groups from {counts.n_candidates} candidates, {n_excluded} excluded "
        f"(--entities {entities})")
    paper = (counts.n_groups, n_excluded) == (VSR_INVERSE_GROUPS, VSR_INVERSE_EXCLUDED)
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
    build = vlaudit.build_gsr_coco_items(two_obj, out=out, instances=instances, split=split,
                                         image_prefix=image_prefix)
    _finish(build, f"GSR-COCO — {two_obj.name}", two_obj)


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
    build = vlaudit.build_whatsup_items(controlled, out=out, split=split, image_prefix=image_prefix,
                                        hf_images=hf_images)
    _finish(build, f"What's Up controlled — {controlled.name}", controlled)
