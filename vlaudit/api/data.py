"""Benchmarks → ITEMS tables: VSR, VSR inverse pairs, GSR-COCO and What's Up (VCA §11, §18).

Each builder reads the benchmark's own file (or a Hugging Face dataset, :mod:`vlaudit.sources.rows`), writes the
ITEMS table ``out`` and its summary beside it (``ITEMS.summary.json``), exactly as ``vlaudit data …`` does.
A build that keeps nothing writes nothing: its :attr:`ItemsBuild.written` is False and its summary says why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vlaudit.builders.benchmark_items import (
    BuildResult,
    attach_coco_boxes,
    controlled_items,
    gsr_coco_items,
    select_relations,
    split_from_stem,
    vsr_inverse_items,
    vsr_items,
)
from vlaudit.files import write_result
from vlaudit.results.demo import ItemsBuildSummary
from vlaudit.results.versioned import JsonObject, JsonValue
from vlaudit.settings import (
    VSR_INVERSE_EXCLUDED,
    VSR_INVERSE_GROUPS,
    VSR_PAPER_QUERIES,
    VSR_PAPER_RELATION_TYPES,
    VSR_PAPER_YES,
)
from vlaudit.sources.items import write_items
from vlaudit.sources.rows import ImageFolder, default_images_dir, source_stem
from vlaudit.sources.vsr import check_strict_mapping, read_meta_categories, read_vsr
from vlaudit.sources.whatsup import read_whatsup_controlled, read_whatsup_spatial


@dataclass(frozen=True)
class RelationCandidates:
    """One VSR relation of the strict families (VCA §18): its family and inverse, how many rows were candidates
    and how many became original/inverse groups."""

    relation: str
    family: str
    inverse: str
    candidates: int
    groups: int


@dataclass(frozen=True)
class BuildCounts:
    """The counts a build's console lines show: ``labels`` (yes/no items), the relations seen, and for inverse
    pairs the candidates and the groups made from them; None where the build does not count it."""

    labels: dict[str, int] = field(default_factory=dict)
    n_relations: int | None = None
    n_candidates: int | None = None
    n_groups: int | None = None

    @classmethod
    def of(cls, counts: Mapping[str, object]) -> BuildCounts:
        """The counts above out of a builder's ``counts`` (the keys it writes into the summary)."""
        labels = counts.get("labels")

        def number(name: str) -> int | None:
            value = counts.get(name)
            return value if isinstance(value, int) else None

        return cls(labels={str(k): int(v) for k, v in labels.items() if isinstance(v, int)}
                   if isinstance(labels, Mapping) else {}, n_relations=number("n_relations"),
                   n_candidates=number("n_candidates"), n_groups=number("n_groups"))


@dataclass(frozen=True)
class ItemsBuild:
    """What a benchmark build kept and excluded: ``summary`` is ``ITEMS.summary.json``'s content, ``written``
    whether anything was kept (and so written), ``summary_path`` where the summary went."""

    summary: JsonObject
    written: bool
    out: Path
    summary_path: Path
    relations: list[RelationCandidates] | None = None  # VSR inverse pairs: candidates and groups per relation
    categories: dict[str, str] | None = None  # the --meta relation → meta-category map, when given
    counts: BuildCounts | None = None  # the builder's counts (labels, relations, groups, candidates)
    n_excluded: int = 0


def summary_path(out: Path) -> Path:
    """``ITEMS.summary.json`` beside the ITEMS table ``out``."""
    return out.with_name(out.name.split(".")[0] + ".summary.json")


def _images(folder: str | Path | None) -> ImageFolder:
    return ImageFolder(Path(folder) if folder is not None else default_images_dir())


def _finish(result: BuildResult, out: Path, meta: JsonObject, *, images: ImageFolder | None = None) -> ItemsBuild:
    summary: JsonObject = {**meta, **result.summary(out=str(out))}  # meta's keys first, as written before
    if not result.items:
        return ItemsBuild(summary, False, out, summary_path(out))
    if images is not None and images.written + images.reused + images.repeated:
        summary["hf_images"] = {"folder": str(images.folder), "written": images.written, "reused": images.reused,
                                "repeated": images.repeated}
    write_items(out, result.items)
    write_result(summary_path(out), ItemsBuildSummary.from_dict(summary))
    return ItemsBuild(summary, True, out, summary_path(out))


def build_vsr_items(split_file: str | Path, *, out: str | Path, meta: str | Path | None = None,
                    dataset: str | None = None, split: str | None = None, image_prefix: str = "",
                    instances: str | Path | None = None, hf_images: str | Path | None = None,
                    relations: Sequence[str] | None = None) -> ItemsBuild:
    """One ITEMS row per VSR row; ``meta`` adds meta_category, ``instances`` (COCO) adds boxes, ``relations``
    keeps only those relations (a name the split lacks is an InputError).

    The paper's population (VCA §4: 1,249 queries, 667 yes, nine relation types) is recorded as a gap in the
    summary (``paper_population``): the nine types are not named, so it is not rebuilt."""
    default_dataset, default_split = split_from_stem(source_stem(split_file))
    images = _images(hf_images)
    rows = read_vsr(split_file, images=images)
    chosen = None if relations is None else list(relations)
    if chosen is not None:
        rows = select_relations(rows, chosen, source=str(split_file))
    result = vsr_items(rows, dataset=dataset or default_dataset, split=split or default_split,
                       image_prefix=image_prefix, meta_categories=read_meta_categories(meta) if meta else None)
    if instances is not None:
        result = attach_coco_boxes(result, instances)
    meta_keys: JsonObject = {
        "source": str(split_file), "relations": None if chosen is None else [*chosen],
        "paper_population": {"queries": VSR_PAPER_QUERIES, "yes": VSR_PAPER_YES,
                             "relation_types": VSR_PAPER_RELATION_TYPES, "rebuilt": False,
                             "why": "the nine relation types are not named"}}
    build = _finish(result, Path(out), meta_keys, images=images)
    return ItemsBuild(build.summary, build.written, build.out, build.summary_path,
                      counts=BuildCounts.of(result.counts))


def build_vsr_inverse_items(split_file: str | Path, *, out: str | Path, entities: str = "structured",
                            meta: str | Path | None = None, dataset: str | None = None, split: str | None = None,
                            image_prefix: str = "", instances: str | Path | None = None,
                            hf_images: str | Path | None = None) -> ItemsBuild:
    """Original/inverse same-image groups in the six strict VSR families (VCA §18); ``relations`` holds the
    candidates and groups per relation."""
    categories = check_strict_mapping(read_meta_categories(meta), meta) if meta else None
    default_dataset, default_split = split_from_stem(source_stem(split_file))
    images = _images(hf_images)
    result = vsr_inverse_items(read_vsr(split_file, images=images), dataset=dataset or default_dataset,
                               split=split or default_split, image_prefix=image_prefix, entities=entities)
    if instances is not None:
        result = attach_coco_boxes(result, instances)
    paper_split: JsonValue = {"groups": VSR_INVERSE_GROUPS, "excluded": VSR_INVERSE_EXCLUDED, "rebuilt": False,
                              "why": "the paper does not state which candidates lack structured entities"}
    build = _finish(result, Path(out), {"source": str(split_file), "entities": entities, "paper_split": paper_split},
                    images=images)
    relations = [RelationCandidates(relation=str(r["relation"]), family=str(r["family"]), inverse=str(r["inverse"]),
                                    candidates=int(r["candidates"]), groups=int(r["groups"]))
                 for r in result.counts["by_relation"]]
    return ItemsBuild(build.summary, build.written, build.out, build.summary_path, relations=relations,
                      categories=categories, counts=BuildCounts.of(result.counts), n_excluded=len(result.excluded))


def build_gsr_coco_items(two_obj: str | Path, *, out: str | Path, instances: str | Path | None = None,
                         split: str | None = None, image_prefix: str = "") -> ItemsBuild:
    """Same-image true/false groups from What's Up's COCO two-object rows (VCA §11)."""
    result = gsr_coco_items(read_whatsup_spatial(two_obj), split=split or source_stem(two_obj), image_prefix=image_prefix)
    if instances is not None:
        result = attach_coco_boxes(result, instances)
    return _finish(result, Path(out), {"source": str(two_obj)})


def build_whatsup_items(controlled: str | Path, *, out: str | Path, split: str | None = None,
                        image_prefix: str = "", hf_images: str | Path | None = None) -> ItemsBuild:
    """What's Up Controlled-A/B: one group per image, option 0 true and every other option false."""
    images = _images(hf_images)
    result = controlled_items(read_whatsup_controlled(controlled, images=images), split=split or source_stem(controlled),
                              image_prefix=image_prefix)
    return _finish(result, Path(out), {"source": str(controlled)}, images=images)
