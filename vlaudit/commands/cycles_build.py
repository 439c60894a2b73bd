"""``vlaudit cycles build coco|gqa|jsonl`` and ``vlaudit cycles audit`` (cycle paper §4, §D; Tables 5–6)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich import box
from rich.console import Console
from rich.table import Table

import vlaudit
from vlaudit.commands._apps import cycles_app, cycles_build_app
from vlaudit.commands._console import print_unavailable
from vlaudit.commands._options import out_file_option
from vlaudit.commands._render import print_table
from vlaudit.commands._say import say
from vlaudit.errors import EXIT_CHECK_FAILED, InputError
from vlaudit.settings import (
    COCO_CAPTIONS_PER_IMAGE,
    COCO_CATEGORIES_PER_IMAGE,
    COCO_IMAGE_USES,
    COCO_STATEMENTS_PER_IMAGE,
    CYCLE_POOL_SEED,
    MIN_CYCLES,
)

_FAMILIES_HELP = "Comma-separated family names (default: all of this source)."
_SPLITS_HELP = "Image-disjoint seeded splits 'name=fraction,...'; one name takes the whole pool (e.g. 'test')."


def _families(value: str | None) -> list[str] | None:
    return [f.strip() for f in value.split(",") if f.strip()] if value else None


def _print_counts(summary: vlaudit.CycleBuildSummary) -> None:
    """Table 6: cycles per family and split of the written families; each withdrawn family (fewer than
    --min-cycles cycles in some split, §D.5) is a row of '—' cells carrying its counts, and a line below."""
    splits = list(summary.splits)
    minimum = summary.min_cycles
    extra = summary.extra
    counted = str(extra.get("min_cycles_counted") or "val")
    gated = {"val"} if counted.startswith("val") else set(counted.split(", "))  # the cells the minimum counts
    label = vlaudit.family_label
    rows = [[label(family), *[counts.get(s, 0) for s in splits]] for family, counts in summary.counts.items()]
    for family, counts in summary.unavailable.items():
        rows.append([f"{label(family)} (unavailable)",
                     *[f"— ({counts.get(s, 0)}{' < ' + str(minimum) if s in gated and counts.get(s, 0) < minimum else ''})"
                       for s in splits]])
    print_table(f"Cycles per family and split (Table 6; pool: {extra.get('images_in_pool')} images)",
                ["family", *splits], rows)
    if extra.get("pool_seed") is not None:
        say(f"pool drawn with pool seed {extra['pool_seed']}; splits and pairing with seed {extra.get('seed')} "
            "(every seed shares the pool, §D.5)")
    print_unavailable(summary.unavailable, minimum, counted)
    reasons = extra.get("swap_reasons")
    if isinstance(reasons, dict) and reasons:
        print_table("Why the swaps are invalid (swaps per family; a named family keeps only its own reason)",
                    ["family", *vlaudit.GQA_SWAP_REASONS],
                    [[label(family), *[counts.get(r, 0) for r in vlaudit.GQA_SWAP_REASONS]]
                     for family, counts in reasons.items() if isinstance(counts, dict)])
    for name, count in summary.warnings.items():
        say(f"warning: {name}: {count}")
    if summary.cycles_written == 0:
        # No empty cycles file that a later command would take for a result: fail now, saying why (exit 2).
        what = "validation" if counted == "val" else counted
        raise InputError(f"no family reached --min-cycles {minimum} ({what} cycles), so no cycles were written "
                         f"(counts in {summary.paths['failed']}); lower --min-cycles or use more images")
    for key in ("cycles", "captions", "meta"):
        say(f"wrote {summary.paths[key]}")


def _print_audit(result: vlaudit.CycleAudit, name: str) -> None:
    """Table 5, compact enough for 80 columns; an exact zero is shown as 0, anything else with 4 decimals."""
    def cell(value: object) -> str:
        return "0" if value == 0 else f"{value:.4f}" if isinstance(value, float) else str(value)

    table = Table(title=f"Cycle audit (Table 5): {name}", box=box.SIMPLE_HEAD, pad_edge=False,
                  caption="n: cycles; img, cap: distinct images and captions; TV: total variation between the "
                          "matched and swapped marginals of images / captions / caption lengths (must be 0 / 0 / 0); "
                          "|deg|: max |signed degree| (must be 0); viol.: validity violations re-checked from the "
                          "annotations (must be 0)")
    table.add_column("family", no_wrap=True)
    table.add_column("split", overflow="fold")
    for header in ("n", "img", "cap", "TV", "|deg|", "viol."):
        table.add_column(header, justify="right", no_wrap=True)
    for row in result.rows:
        tv = " / ".join(cell(value) for value in (row.tv_image, row.tv_caption, row.tv_caption_length))
        table.add_row(row.family, row.split, *(cell(value) for value in (row.cycles, row.images, row.captions)), tv,
                      cell(row.max_abs_signed_degree), cell(row.validity_violations))
    Console().print(table)


# Options shared by the build commands (one definition, so their flags and help never drift apart).
_OUT = out_file_option(help="Cycles file to write (JSONL); captions + metadata go beside it.")
_FAMILIES = typer.Option(None, "--families", help=_FAMILIES_HELP)
_SEED = typer.Option(0, "--seed", min=0, help="Seed of the splits and the pairing, drawn inside the pool (§D.5: one "
                                              "split per seed).")
_OVERWRITE = typer.Option(False, "--overwrite", help="Replace a cycles file --out that was built with another "
                                                     "--seed (refused without it: one cycles file per seed).")
_MAX_IMAGES = typer.Option(None, "--max-images", min=1, help="Subsample of the image pool, drawn with --pool-seed "
                                                             "(default: every image).")
_POOL_SEED = typer.Option(CYCLE_POOL_SEED, "--pool-seed", min=0,
                          help="Seed of the --max-images pool: fixed by default, so every --seed builds its splits "
                               "inside the same pool (§D.5: families and seeds share image pools; the value is "
                               "vlaudit's, not a paper setting).")
_MIN_CYCLES = typer.Option(MIN_CYCLES, "--min-cycles", min=0,
                           help="A family with fewer val cycles (every split without a val split), or with none in "
                                "another split, is unavailable (§D.5): withdrawn whole (written nowhere, listed "
                                "with its counts).")
_MAX_CYCLES = typer.Option(None, "--max-cycles-per-family", min=1, help="Seeded cap per family and split (default: no cap).")
_MARGIN_X = typer.Option(0.05, "--margin-x", min=0.0, max=1.0, help="left_of(a,b) iff cx(a) + margin_x*W < cx(b).")
_MARGIN_Y = typer.Option(0.05, "--margin-y", min=0.0, max=1.0, help="above(a,b) iff cy(a) + margin_y*H < cy(b).")
_SIZE_RATIO = typer.Option(2.0, "--size-ratio", min=1.0, help="larger_than(a,b) iff area(a) >= ratio*area(b).")
_MIN_AREA = typer.Option(0.01, "--min-area", min=0.0, max=1.0, help="Eligible boxes cover at least this image fraction.")


def _rules(margin_x: float, margin_y: float, size_ratio: float, min_area: float) -> vlaudit.GeometryRules:
    return vlaudit.GeometryRules(margin_x=margin_x, margin_y=margin_y, size_ratio=size_ratio, min_area=min_area)


_COCO_HELP = (
    "Exact cycles from COCO instances and captions (8 families; Table 6 counts).\n\n"
    "Object families read the categories a caption mentions from the shipped synonym table "
    "(vlaudit/builders/cycles/coco_synonyms.json: all 80 categories, plurals and common synonyms). "
    "Relations are valid over eligible instances (iscrowd=0, area >= --min-area of the image) with the margins "
    "and ratio below, and invalid when no instance pair at all satisfies them with zero margin and ratio 1 "
    "(the conservative reading of §4's swap 'false under the same rule': not a paper setting); "
    "a block that needs anything in between is discarded. The work bounds (--captions-per-image, "
    "--categories-per-image, --statements-per-image, --image-uses) are vlaudit's, not paper settings."
)


@cycles_build_app.command("coco", help=_COCO_HELP)
def build_coco(
    instances: Path = typer.Option(..., "--instances", help="Official COCO instances_*.json."),
    captions: Path = typer.Option(None, "--captions", help="Official COCO captions_*.json (default: none, so no object families)."),
    out: Path = _OUT,
    families: str = _FAMILIES,
    seed: int = _SEED,
    max_images: int = _MAX_IMAGES,
    pool_seed: int = _POOL_SEED,
    splits: str = typer.Option("train=0.8,val=0.2", "--splits", help=_SPLITS_HELP),
    min_cycles: int = _MIN_CYCLES,
    max_cycles: int = _MAX_CYCLES,
    margin_x: float = _MARGIN_X,
    margin_y: float = _MARGIN_Y,
    size_ratio: float = _SIZE_RATIO,
    min_area: float = _MIN_AREA,
    validation_from: Path = typer.Option(
        None, "--validation-from",
        help="CYCLES.meta.json of the same seed's train2017 build, for a build without a val split (the paper's "
             "test from val2017): --min-cycles then counts that build's val cycles (§D.5). Default: none, so such "
             "a build counts its own split(s) and says which."),
    captions_per_image: int = typer.Option(COCO_CAPTIONS_PER_IMAGE, "--captions-per-image", min=1,
                                           help="Seeded human captions read per image (not a paper setting)."),
    categories_per_image: int = typer.Option(COCO_CATEGORIES_PER_IMAGE, "--categories-per-image", min=1,
                                             help="Seeded eligible categories per image that relation statements "
                                                  "may name (not a paper setting)."),
    statements_per_image: int = typer.Option(COCO_STATEMENTS_PER_IMAGE, "--statements-per-image", min=1,
                                             help="Seeded statements per image and relation family (not a paper "
                                                  "setting)."),
    image_uses: int = typer.Option(COCO_IMAGE_USES, "--image-uses", min=1,
                                   help="Blocks of one family and split that may use the same image (1: "
                                        "image-disjoint blocks; not a paper setting)."),
    overwrite: bool = _OVERWRITE,
) -> None:
    """Exact cycles from COCO instances and captions (8 families; Table 6 counts)."""
    caps = vlaudit.CocoCaps(captions_per_image=captions_per_image, categories_per_image=categories_per_image,
                            statements_per_image=statements_per_image, image_uses=image_uses)
    summary = vlaudit.build_cycles("coco", out=out, instances=instances, captions=captions,
                                   families=_families(families), seed=seed, splits=splits, min_cycles=min_cycles,
                                   max_cycles_per_family=max_cycles, max_images=max_images, pool_seed=pool_seed,
                                   rules=_rules(margin_x, margin_y, size_ratio, min_area),
                                   validation_from=validation_from, caps=caps, overwrite=overwrite)
    _print_counts(summary)


@cycles_build_app.command("gqa")
def build_gqa(
    scene_graphs: Path = typer.Option(..., "--scene-graphs", help="GQA sceneGraphs JSON."),
    out: Path = _OUT,
    families: str = _FAMILIES,
    seed: int = _SEED,
    max_images: int = _MAX_IMAGES,
    pool_seed: int = _POOL_SEED,
    splits: str = typer.Option("train=0.6,val=0.1,test=0.3", "--splits", help=_SPLITS_HELP),
    min_cycles: int = _MIN_CYCLES,
    max_cycles: int = _MAX_CYCLES,
    image_pattern: str = typer.Option("{image_id}.jpg", "--image-pattern",
                                      help="Image file name from its id (COCO-style: '{image_id:0>12}.jpg')."),
    extra_families: bool = typer.Option(False, "--extra-families",
                                        help="Also build the cross-noun families (gqa-attribute-cross-noun, "
                                             "gqa-relation-cross-noun; or name them in --families): not in "
                                             "the paper, labelled so."),
    overwrite: bool = _OVERWRITE,
) -> None:
    """Exact cycles from GQA scene graphs (the paper's attribute, relation-object and binding families)."""
    summary = vlaudit.build_cycles("gqa", out=out, scene_graphs=scene_graphs, families=_families(families), seed=seed,
                                   splits=splits, min_cycles=min_cycles, max_cycles_per_family=max_cycles,
                                   max_images=max_images, pool_seed=pool_seed, image_pattern=image_pattern,
                                   extra_families=extra_families, overwrite=overwrite)
    _print_counts(summary)


@cycles_build_app.command("jsonl")
def build_jsonl(
    pairs: Path = typer.Option(..., "--pairs", help="Pairs JSONL (format: vlaudit.sources.pairs_jsonl)."),
    out: Path = _OUT,
    families: str = _FAMILIES,
    seed: int = _SEED,
    max_images: int = _MAX_IMAGES,
    pool_seed: int = _POOL_SEED,
    splits: str = typer.Option("train=0.8,val=0.2", "--splits", help=_SPLITS_HELP),
    min_cycles: int = _MIN_CYCLES,
    max_cycles: int = _MAX_CYCLES,
    margin_x: float = _MARGIN_X,
    margin_y: float = _MARGIN_Y,
    size_ratio: float = _SIZE_RATIO,
    min_area: float = _MIN_AREA,
    overwrite: bool = _OVERWRITE,
) -> None:
    """Exact cycles from your own image–caption pairs with structured facts."""
    summary = vlaudit.build_cycles("jsonl", out=out, pairs=pairs, families=_families(families), seed=seed,
                                   splits=splits, min_cycles=min_cycles, max_cycles_per_family=max_cycles,
                                   max_images=max_images, pool_seed=pool_seed,
                                   rules=_rules(margin_x, margin_y, size_ratio, min_area), overwrite=overwrite)
    _print_counts(summary)


@cycles_app.command("audit")
def audit(
    cycles: Path = typer.Argument(..., help="Cycles file written by 'vlaudit cycles build'."),
    annotations: list[Path] = typer.Option(..., "--annotations",
                                           help="COCO instances JSON, GQA scene graphs or pairs JSONL (repeatable)."),
    out: Path = out_file_option(help="Where to write the audit JSON."),
) -> None:
    """Table 5: marginal TVs (must be 0), max |signed degree| (0) and re-checked validity violations (0)."""
    result = vlaudit.audit_cycles(cycles, annotations, out=out)
    _print_audit(result, cycles.name)
    say(f"wrote {out}")
    if result.validity_violations or result.max_abs_signed_degree:
        say("audit FAILED: violations or nonzero signed degree", err=True)
        raise typer.Exit(EXIT_CHECK_FAILED)
