"""COCO cycle families (cycle paper §4, §D.2; Table 6) and ``build_coco_cycles``.

* ``coco-object-coarse``: human captions whose mentioned categories (shipped synonym table) are all
  annotated in their own image; a swap is invalid when the caption mentions a category with no annotation
  at all in the target image.
* ``coco-object-matched``: as coarse, but the two captions mention the same number (≥ 2) of categories and
  share one, so that the swap fails on a more specific object.
* ``coco-object-text-neighbor``: coarse object cycles whose two captions are mutual TF-IDF nearest
  neighbours among the captions one word away (the rule: :mod:`vlaudit.builders.cycles.text_neighbor`).
* ``coco-box-relation``: generated captions ("a dog to the left of a chair") valid under the box rules;
  a swap is invalid by a missing object or a false relation.
* ``coco-strict-left-right`` / ``-above-below`` / ``-size``: both images contain both categories with
  opposite configurations; the captions swap the roles under the same relation word ("a dog to the left of
  a chair" / "a chair to the left of a dog"); swaps are false relations, never missing objects.
* ``coco-same-pair-relation``: the same (subject, object) order with opposite relation words ("a dog to the
  left of a chair" / "a dog to the right of a chair"), any axis: directional role binding.

Work is bounded by seeded sampling, so that all of train2017 builds in about twice its parse time
(``benchmarks/cycle_build_scale.py``). The bounds are options (:class:`CocoCaps`; ``cycles build coco
--captions-per-image --categories-per-image --statements-per-image --image-uses``), recorded under ``caps`` in
``CYCLES.meta.json``; none is a paper setting (§D.2 states no caps): 2 human captions read per image, at most 6
eligible categories per image named by relation statements, at most 3 statements per image and relation
family, and each image used at most once per family and split (see ``common``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.builders.cycles.build_steps import (
    DEFAULT_SPLITS,
    BuildResult,
    assign_splits,
    counted_split,
    finalize,
    generated_caption_id,
    new_row,
    pair_candidates,
    parse_splits,
    rng_for,
    select_families,
    subsample,
    timed,
    validation_counts_from,
    write_outputs,
)
from vlaudit.builders.cycles.coco_index import CocoIndex, build_index
from vlaudit.builders.cycles.rules import RELATIONS, GeometryRules, caption_text
from vlaudit.builders.cycles.synonyms import MentionMatcher
from vlaudit.builders.cycles.text_neighbor import TEXT_NEIGHBOR_FAMILY, mutual_neighbor_pairs
from vlaudit.errors import InputError
from vlaudit.settings import (
    COCO_CAPTIONS_PER_IMAGE,
    COCO_CATEGORIES_PER_IMAGE,
    COCO_IMAGE_USES,
    COCO_STATEMENTS_PER_IMAGE,
    CYCLE_POOL_SEED,
    MIN_CYCLES,
)
from vlaudit.sources.coco import CocoCaptions, gc_paused, read_coco_captions, read_coco_instances

OBJECT_FAMILIES = ("coco-object-coarse", "coco-object-matched", TEXT_NEIGHBOR_FAMILY)
STRICT_AXES = {"coco-strict-left-right": 0, "coco-strict-above-below": 1, "coco-strict-size": 2}
COCO_FAMILIES = (*OBJECT_FAMILIES, "coco-box-relation", *STRICT_AXES, "coco-same-pair-relation")


@dataclass(frozen=True)
class CocoCaps:
    """The COCO builder's work bounds (vlaudit's, not paper settings; defaults in :mod:`vlaudit.settings`)."""

    captions_per_image: int = COCO_CAPTIONS_PER_IMAGE
    categories_per_image: int = COCO_CATEGORIES_PER_IMAGE
    statements_per_image: int = COCO_STATEMENTS_PER_IMAGE
    image_uses: int = COCO_IMAGE_USES

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if value < 1:
                raise InputError(f"{name} must be ≥ 1, got {value}", field=name)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "paper_settings": False}


def _sample_per_image(image: np.ndarray, in_pool: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Bool mask: a seeded random subset of at most ``k`` captions per pool image."""
    order = np.argsort(image + rng.random(len(image)), kind="stable")
    sorted_image = image[order]
    first: np.ndarray | list[int] = np.concatenate([[0], np.nonzero(sorted_image[1:] != sorted_image[:-1])[0] + 1]) if len(image) else []
    rank = np.arange(len(image)) - np.repeat(first, np.diff(np.concatenate([first, [len(image)]])).astype(np.int64))
    mask = np.zeros(len(image), dtype=bool)
    mask[order[rank < k]] = True
    return mask & in_pool[image]


def _object_blocks(index: CocoIndex, captions: CocoCaptions, rows: np.ndarray, mentions: np.ndarray, family: str,
                   rng: np.random.Generator, max_pairs: int | None, rounds: int, names: list[str],
                   image_uses: int = COCO_IMAGE_USES) -> list[dict[str, Any]]:
    """Pair captions into object cycles: ``rows`` are caption rows valid for their own image and ``mentions``
    (len(rows), C) the categories each mentions."""
    presence = index.presence
    image = captions.image[rows].astype(np.int64)

    def check(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return ((mentions[i] & ~presence[image[j]]).any(1) & (mentions[j] & ~presence[image[i]]).any(1))

    if family != "coco-object-matched":
        bucket = np.zeros(len(rows), dtype=np.int64)
    else:
        count = mentions.sum(1)
        # one anchor category per caption, drawn uniformly among those it mentions
        pick = np.floor(rng.random(len(rows)) * count).astype(np.int8)
        anchor = (mentions.cumsum(1, dtype=np.int8) > pick[:, None]).argmax(1)
        bucket = count * mentions.shape[1] + anchor
    if family == TEXT_NEIGHBOR_FAMILY:  # mutual TF-IDF nearest neighbours one word apart (text_neighbor.py)
        pairs = mutual_neighbor_pairs([captions.texts[k] for k in rows.tolist()], image, check, rng, max_pairs,
                                      image_uses=image_uses)
    else:
        pairs = pair_candidates(rng, image, bucket, check, rounds=rounds, max_pairs=max_pairs, image_uses=image_uses)
    if not pairs:
        return []
    ends = np.asarray(pairs, dtype=np.int64).ravel()  # item_1, item_2 of block 0, then of block 1, ...
    categories: list[list[str]] = [[] for _ in range(len(ends))]
    at, cat = np.nonzero(mentions[ends])  # row-major: each caption's categories in table order
    for k, c in zip(at.tolist(), cat.tolist(), strict=True):
        categories[k].append(names[c])
    ids, files = index.instances.image_ids, index.instances.file_names
    texts, raw_ids = captions.texts, captions.raw_ids
    caption_rows = rows[ends].tolist()
    caption_ids = raw_ids[rows[ends]].tolist()  # Python ints: str() of a numpy scalar is ~10x slower
    blocks = []
    for k, (i1, i2) in enumerate(zip(image[ends[0::2]].tolist(), image[ends[1::2]].tolist(), strict=True)):
        c1, c2 = caption_rows[2 * k], caption_rows[2 * k + 1]
        block = new_row(ids[i1], str(caption_ids[2 * k]), ids[i2], str(caption_ids[2 * k + 1]), texts[c1].strip(),
                        texts[c2].strip(), files[i1], files[i2])
        block["categories_1"], block["categories_2"] = categories[2 * k], categories[2 * k + 1]
        blocks.append(block)
    return blocks


def _statement(names: list[str], subject: int, code: int, obj: int) -> dict[str, str]:
    return {"subject": names[subject], "relation": RELATIONS[code], "object": names[obj]}


def _relation_blocks(index: CocoIndex, images: np.ndarray, family: str, rng: np.random.Generator,
                     max_pairs: int | None, rounds: int, result: BuildResult, caps: CocoCaps
                     ) -> list[dict[str, Any]]:
    """Relation families over generated captions (see module docstring)."""
    C = index.n_categories
    if family == "coco-box-relation":
        st = index.statements(images, tuple(range(6)), rng, caps.statements_per_image)
        bucket = np.zeros(len(st["image"]), dtype=np.int64)
        side = None

        def check(i: np.ndarray, j: np.ndarray) -> np.ndarray:
            return (index.invalid(st["image"][i], st["subject"][j], st["code"][j], st["object"][j])
                    & index.invalid(st["image"][j], st["subject"][i], st["code"][i], st["object"][i]))
    else:
        axes = (STRICT_AXES[family],) if family in STRICT_AXES else (0, 1, 2)
        st = index.statements(images, tuple(2 * a for a in axes), rng, caps.statements_per_image)
        lo = np.minimum(st["subject"], st["object"])
        hi = np.maximum(st["subject"], st["object"])
        bucket = (lo * C + hi) * 3 + st["code"] // 2
        side = (st["subject"] > st["object"]).astype(np.int64)

        def check(i: np.ndarray, j: np.ndarray) -> np.ndarray:
            # j's statement is i's with the roles swapped: it must be false in i's image, and vice versa
            return (index.invalid(st["image"][i], st["subject"][j], st["code"][j], st["object"][j])
                    & index.invalid(st["image"][j], st["subject"][i], st["code"][i], st["object"][i]))

    pairs = pair_candidates(rng, st["image"], bucket, check, side=side, rounds=rounds, max_pairs=max_pairs,
                            image_uses=caps.image_uses)
    flip = rng.random(len(pairs)) < 0.5
    if not pairs:
        return []
    pa, pb = np.asarray(pairs, dtype=np.int64).T
    s1 = [st["subject"][pa], st["code"][pa], st["object"][pa]]
    s2 = [st["subject"][pb], st["code"][pb], st["object"][pb]]
    if family == "coco-same-pair-relation":
        # s2 = (s1.object, R, s1.subject) is said as (s1.subject, inverse R, s1.object)
        s2 = [s2[2], s2[1] + 1, s2[0]]
        # flipped blocks say both with the roles exchanged: (o, inverse R, s) — the same statements
        s1 = [np.where(flip, s1[2], s1[0]), np.where(flip, s1[1] + 1, s1[1]), np.where(flip, s1[0], s1[2])]
        s2 = [np.where(flip, s2[2], s2[0]), np.where(flip, s2[1] - 1, s2[1]), np.where(flip, s2[0], s2[2])]
    elif family != "coco-box-relation":
        s1 = [np.where(flip, s1[2], s1[0]), np.where(flip, s1[1] + 1, s1[1]), np.where(flip, s1[0], s1[2])]
        s2 = [np.where(flip, s2[2], s2[0]), np.where(flip, s2[1] + 1, s2[1]), np.where(flip, s2[0], s2[2])]
    # few distinct statements, many blocks: caption each distinct statement once
    C6 = index.n_categories * len(RELATIONS)
    keys = np.concatenate([(s[0] * len(RELATIONS) + s[1]) * index.n_categories + s[2] for s in (s1, s2)])
    unique, inverse = np.unique(keys, return_inverse=True)
    info = [result.generated((k // C6, k % C6 // index.n_categories, k % index.n_categories))
            for k in unique.tolist()]
    inverse = inverse.reshape(2, -1)
    image = st["image"]
    ids, files = index.instances.image_ids, index.instances.file_names
    blocks = []
    for i1, i2, k1, k2 in zip(image[pa].tolist(), image[pb].tolist(), inverse[0].tolist(), inverse[1].tolist(),
                              strict=True):
        (cid_1, text_1, rel_1), (cid_2, text_2, rel_2) = info[k1], info[k2]
        block = new_row(ids[i1], cid_1, ids[i2], cid_2, text_1, text_2, files[i1], files[i2])
        block["relation_1"], block["relation_2"] = rel_1, rel_2
        blocks.append(block)
    return blocks


class _GeneratedCaptions:
    """Caption id, text and relation of a statement (cached: few distinct statements, many blocks)."""

    def __init__(self, names: list[str], result: BuildResult) -> None:
        self.names, self.result = names, result
        self.cache: dict[tuple[int, int, int], tuple[str, str, dict[str, str]]] = {}

    def __call__(self, statement: tuple[int, int, int]) -> tuple[str, str, dict[str, str]]:
        hit = self.cache.get(statement)
        if hit is None:
            rel = _statement(self.names, *statement)
            text = caption_text(rel["subject"], rel["relation"], rel["object"])
            cid = generated_caption_id(text)
            self.result.captions.setdefault(cid, {"caption_id": cid, "text": text, "image_id": None,
                                                  "source": "generated", **rel})
            hit = self.cache[statement] = (cid, text, rel)
        return hit


def build_coco(index: CocoIndex, captions: CocoCaptions | None, pool: np.ndarray, split_of: np.ndarray,
               splits: Sequence[tuple[str, float]], families: Sequence[str], *, seed: int,
               max_cycles_per_family: int | None, rounds: int = 4,
               result: BuildResult | None = None, caps: CocoCaps | None = None) -> BuildResult:
    """Blocks of every requested family in every split (images of ``pool``; ``split_of`` per pool image)."""
    result = BuildResult() if result is None else result
    caps = caps or CocoCaps()
    names = index.instances.category_names
    result.generated = _GeneratedCaptions(names, result)
    need_objects = any(f in OBJECT_FAMILIES for f in families)
    if need_objects:
        if captions is None:
            raise InputError("object families need a captions file", field="captions")
        with timed(result.seconds, "caption mentions"):
            in_pool = np.zeros(len(index.instances.image_ids), dtype=bool)
            in_pool[pool] = True
            cap_image = captions.image.astype(np.int64)
            sampled = np.nonzero(_sample_per_image(cap_image, in_pool, caps.captions_per_image,
                                                   rng_for(seed, "captions")))[0]
            mentions = MentionMatcher(names).matrix([captions.texts[k] for k in sampled.tolist()])
            n_mentioned = mentions.sum(1)
            # a caption is usable only if every category it mentions is annotated in its own image
            usable = ~(mentions & ~index.presence[cap_image[sampled]]).any(1)
    if any(f not in OBJECT_FAMILIES for f in families):
        with timed(result.seconds, "relation statements"):
            index.prepare_statements(pool, rng_for(seed, "statements"), caps.categories_per_image)
    for split_index, (split, _) in enumerate(splits):
        images = np.sort(pool[split_of == split_index])
        in_split = np.zeros(len(index.instances.image_ids), dtype=bool)
        in_split[images] = True
        for family in families:
            rng = rng_for(seed, family, split)
            with timed(result.seconds, family):
                if family in OBJECT_FAMILIES:
                    minimum = 2 if family == "coco-object-matched" else 1
                    items = np.nonzero(in_split[cap_image[sampled]] & usable & (n_mentioned >= minimum))[0]
                    assert captions is not None  # object families need captions: refused above otherwise
                    blocks = _object_blocks(index, captions, sampled[items], mentions[items], family, rng,
                                            max_cycles_per_family, rounds, names, caps.image_uses)
                    for block in blocks:
                        for k in ("1", "2"):
                            cid = block[f"caption_{k}"]
                            result.captions[cid] = {"caption_id": cid, "text": block[f"text_{k}"],
                                                    "image_id": block[f"image_{k}"], "source": "coco"}
                else:
                    blocks = _relation_blocks(index, images, family, rng, max_cycles_per_family, rounds, result,
                                              caps)
            result.blocks[(family, split)] = blocks
    return result


def build_coco_cycles(instances_path: str | Path, captions_path: str | Path | None, out_path: str | Path, *,
                      families: Sequence[str] | None = None, seed: int = 0,
                      splits: str | Sequence[tuple[str, float]] = DEFAULT_SPLITS, min_cycles: int = MIN_CYCLES,
                      max_cycles_per_family: int | None = None, max_images: int | None = None, pool_seed: int = CYCLE_POOL_SEED,
                      rules: GeometryRules | None = None, rounds: int = 4,
                      validation_from: str | Path | None = None, caps: CocoCaps | None = None) -> dict[str, Any]:
    """Parse the official COCO files, build the cycle families and write CYCLES + captions + metadata.

    ``validation_from``: the ``CYCLES.meta.json`` of the same seed's train2017 build, for a build without a
    validation split (the paper's test from val2017): the minimum then counts that build's validation cycles
    (§D.5), as the paper does; without it such a build counts its own split(s) and says so
    (``min_cycles_counted``). ``caps``: the work bounds (:class:`CocoCaps`; not paper settings).

    Returns the summary (Table-6 counts per family and split, unavailable families, warnings, rules) and
    ``seconds``, the wall-clock time of each stage and family (not written to the metadata file).
    """
    rules = rules or GeometryRules()
    caps = caps or CocoCaps()
    families = select_families(families, COCO_FAMILIES, "COCO")
    split_spec = parse_splits(splits)
    result = BuildResult()
    seconds = result.seconds
    with gc_paused():  # only acyclic containers are built here; see gc_paused
        with timed(seconds, "parse instances"):
            instances = read_coco_instances(instances_path)
        needs_captions = any(f in OBJECT_FAMILIES for f in families)
        with timed(seconds, "parse captions"):
            captions = read_coco_captions(captions_path, instances) if (captions_path and needs_captions) else None
        with timed(seconds, "index"):
            index = build_index(instances, rules)
            pool = subsample(len(instances.image_ids), max_images, pool_seed)
            split_of = assign_splits(len(pool), split_spec, seed)
        build_coco(index, captions, pool, split_of, split_spec, families, seed=seed,
                   max_cycles_per_family=max_cycles_per_family, rounds=rounds, result=result, caps=caps)
        with timed(seconds, "finalize"):
            rows, table = finalize(result, families=families, splits=split_spec, seed=seed, min_cycles=min_cycles,
                                   max_cycles_per_family=max_cycles_per_family, file_names={},
                                   validation_counts=validation_counts_from(validation_from, seed))
    warnings = Counter(instances.warnings) + (captions.warnings if captions else Counter()) + result.warnings
    meta = {"source": "coco", "instances": str(instances_path), "captions": None if captions_path is None
            else str(captions_path), "families": families, "seed": seed,
            "splits": {name: frac for name, frac in split_spec}, "min_cycles": min_cycles,
            "min_cycles_counted": counted_split([n for n, _ in split_spec], validation_from),
            "max_cycles_per_family": max_cycles_per_family, "max_images": max_images, "pool_seed": pool_seed,
            "images_in_pool": int(len(pool)), "rules": rules.as_dict(), "caps": caps.as_dict(), "warnings": dict(sorted(warnings.items())),
            **table}
    with timed(seconds, "write"):
        paths = write_outputs(out_path, rows, result.captions, meta)
    return {**meta, "paths": paths, "cycles_written": len(rows), "seconds": dict(seconds)}
