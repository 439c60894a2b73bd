"""GQA cycle families (cycle paper §D.3) and ``build_gqa_cycles``.

Each image contributes the caption-like facts its scene graph states (predicates in
:mod:`~vlaudit.builders.cycles.gqa_rules`); a block pairs a fact of image 1 with a fact of image 2 and is
kept only when both swapped image–fact pairings are invalid under the graphs. Every block records why each
swap is invalid (``swap_12_reason`` for image 1 with caption 2, ``swap_21_reason`` for image 2 with caption
1: ``attribute-mismatch``, ``relation-false`` or ``noun-absent``), and each family measures what it is named
for:

* ``gqa-attribute``: the same noun with different attributes ("the red car" / "the blue car"); both swaps
  fail by attribute mismatch.
* ``gqa-relation-object``: the same noun pair with exclusive relations ("the car to the left of the bus" /
  "the car to the right of the bus"); both swaps are false relations between nouns that are both present.
* ``gqa-binding``: attribute-binding swaps only — the same two nouns in the same relation with the two
  attributes exchanged between the objects ("the red cup to the left of the blue plate" / "the blue cup to
  the left of the red plate", :func:`~vlaudit.builders.cycles.gqa_rules.is_binding_swap`); both swaps fail by
  attribute mismatch. Rare on real scene graphs: the paper gets 18–19 validation cycles per seed and reports
  the family unavailable (§D.3, below the §D.5 minimum), as the build does here.
* ``gqa-attribute-cross-noun`` / ``gqa-relation-cross-noun`` — **not in the paper**, built only on request
  (``extra_families``; ``--extra-families``) and labelled "not in the paper" wherever printed: the same fact
  types across different nouns ("the black cat" / "the yellow dog"); typically a swap fails because the noun
  is absent, so these are object-presence cycles.

Default split: image-disjoint train/val/test = 60/10/30 (§D.5).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.builders.cycles.build_steps import (
    BuildResult,
    assign_splits,
    counted_split,
    finalize,
    generated_caption_id,
    pair_candidates,
    parse_splits,
    rng_for,
    select_families,
    subsample,
    write_outputs,
)
from vlaudit.builders.cycles.gqa_rules import (
    OWN_REASON,
    REASONS,
    GraphFacts,
    candidate_facts,
    fact_bucket,
    fact_nouns,
    fact_status,
    fact_text,
    is_binding_swap,
)
from vlaudit.settings import CYCLE_POOL_SEED, MIN_CYCLES, NOT_IN_PAPER_FAMILIES
from vlaudit.sources.gqa import SceneGraphs, read_gqa_scene_graphs

GQA_PAPER_FAMILIES = ("gqa-attribute", "gqa-relation-object", "gqa-binding")  # §D.3: the paper's GQA families
GQA_EXTRA_FAMILIES = NOT_IN_PAPER_FAMILIES  # vlaudit's object-presence families across nouns
GQA_FAMILIES = (*GQA_PAPER_FAMILIES, *GQA_EXTRA_FAMILIES)
DEFAULT_GQA_SPLITS = "train=0.6,val=0.1,test=0.3"
DEFAULT_GQA_IMAGE_PATTERN = "{image_id}.jpg"


def _swap_ok(family: str, status: str) -> bool:
    """A swap belongs to ``family`` when it is invalid by the family's own predicate (any reason for the
    cross-noun families)."""
    return status in REASONS and OWN_REASON.get(family, status) == status


def build_gqa(graphs: SceneGraphs, image_ids: list[str], pool: np.ndarray, split_of: np.ndarray,
              splits: Sequence[tuple[str, float]], families: Sequence[str], *, seed: int,
              max_cycles_per_family: int | None, rounds: int = 4) -> BuildResult:
    """Blocks of every requested family in every split."""
    result = BuildResult()
    facts = {}

    def graph_facts(k: int) -> GraphFacts:
        if k not in facts:
            facts[k] = GraphFacts(graphs.images[image_ids[k]])
        return facts[k]

    for split_index, (split, _) in enumerate(splits):
        images = np.sort(pool[split_of == split_index]).tolist()
        for family in families:
            rng = rng_for(seed, family, split)
            item_image: list[int] = []
            item_fact: list[dict[str, str]] = []
            for k in images:
                for fact in candidate_facts(graphs.images[image_ids[k]], family):
                    item_image.append(k)
                    item_fact.append(fact)
            if len(item_fact) < 2:
                result.blocks[(family, split)] = []
                continue
            img = np.array(item_image, dtype=np.int64)
            names: dict[tuple[str, ...], int] = {}
            nouns = np.array([names.setdefault(fact_nouns(family, f), len(names)) for f in item_fact])
            buckets: dict[tuple[str, ...], int] = {}
            bucket_of = np.array([buckets.setdefault(fact_bucket(family, f), len(buckets)) for f in item_fact])
            cross = family.endswith("-cross-noun")
            binding = family == "gqa-binding"

            def check(i: np.ndarray, j: np.ndarray, family: str = family, img: np.ndarray = img,
                      item_fact: list = item_fact, nouns: np.ndarray = nouns, cross: bool = cross,
                      binding: bool = binding) -> np.ndarray:
                return np.array([
                    (nouns[a] != nouns[b]) == cross
                    and (not binding or is_binding_swap(item_fact[a], item_fact[b]))
                    and _swap_ok(family, fact_status(graph_facts(int(img[b])), family, item_fact[a]))
                    and _swap_ok(family, fact_status(graph_facts(int(img[a])), family, item_fact[b]))
                    for a, b in zip(i.tolist(), j.tolist(), strict=True)], dtype=bool)

            # named families pair within a bucket (nouns; binding: nouns, relation, attribute pair); cross-noun
            # ones across buckets (one bucket, checked)
            bucket = np.zeros(len(img), dtype=np.int64) if cross else bucket_of
            pairs = pair_candidates(rng, img, bucket, check, rounds=rounds, max_pairs=max_cycles_per_family)
            blocks = []
            for a, b in pairs:
                entries = []
                for item in (a, b):
                    text = fact_text(family, item_fact[item])
                    cid = generated_caption_id(text)
                    result.captions.setdefault(cid, {"caption_id": cid, "text": text, "image_id": None,
                                                     "source": "generated", "family": family,
                                                     "fact": item_fact[item]})
                    entries.append((image_ids[int(img[item])], cid, text, item_fact[item]))
                block = {"image_1": entries[0][0], "caption_1": entries[0][1], "image_2": entries[1][0],
                         "caption_2": entries[1][1], "text_1": entries[0][2], "text_2": entries[1][2],
                         "fact_1": entries[0][3], "fact_2": entries[1][3],
                         "swap_12_reason": fact_status(graph_facts(int(img[a])), family, item_fact[b]),
                         "swap_21_reason": fact_status(graph_facts(int(img[b])), family, item_fact[a])}
                if family in ("gqa-relation-object", "gqa-relation-cross-noun"):
                    block["relation_1"], block["relation_2"] = entries[0][3], entries[1][3]
                blocks.append(block)
            result.blocks[(family, split)] = blocks
    return result


def build_gqa_cycles(scene_graphs_path: str | Path, out_path: str | Path, *, families: Sequence[str] | None = None,
                     seed: int = 0, splits: str | Sequence[tuple[str, float]] = DEFAULT_GQA_SPLITS,
                     min_cycles: int = MIN_CYCLES, max_cycles_per_family: int | None = None,
                     max_images: int | None = None, pool_seed: int = CYCLE_POOL_SEED, rounds: int = 4,
                     image_pattern: str = DEFAULT_GQA_IMAGE_PATTERN, extra_families: bool = False) -> dict[str, Any]:
    """Parse a GQA scene-graph file, build the GQA families and write CYCLES + captions + metadata.

    Without ``families``, the paper's families only (:data:`GQA_PAPER_FAMILIES`, §D.3); ``extra_families`` adds
    the cross-noun families, which the paper does not have (as does naming them in ``families``); those built
    are listed under ``not_in_paper`` in the metadata.

    ``image_pattern`` names each image's file from its id (GQA ships ``{image_id}.jpg``; a COCO-style folder
    is ``{image_id:0>12}.jpg``).
    """
    if not families:  # a family named in ``families`` is a request too
        families = GQA_FAMILIES if extra_families else GQA_PAPER_FAMILIES
    families = select_families(families, GQA_FAMILIES, "GQA")
    split_spec = parse_splits(splits)
    graphs = read_gqa_scene_graphs(scene_graphs_path)
    image_ids = sorted(graphs.images, key=lambda s: (len(s), s))
    pool = subsample(len(image_ids), max_images, pool_seed)
    split_of = assign_splits(len(pool), split_spec, seed)
    result = build_gqa(graphs, image_ids, pool, split_of, split_spec, families, seed=seed,
                       max_cycles_per_family=max_cycles_per_family, rounds=rounds)
    rows, table = finalize(result, families=families, splits=split_spec, seed=seed, min_cycles=min_cycles,
                           max_cycles_per_family=max_cycles_per_family,
                           file_names={i: image_pattern.format(image_id=i) for i in image_ids})
    warnings = Counter(graphs.warnings) + result.warnings
    reasons: dict[str, Counter] = {family: Counter() for family in table["counts"]}
    for row in rows:
        reasons[row["family"]].update((row["swap_12_reason"], row["swap_21_reason"]))
    meta = {"source": "gqa", "scene_graphs": str(scene_graphs_path), "families": families, "seed": seed,
            "splits": {name: frac for name, frac in split_spec}, "min_cycles": min_cycles,
            "min_cycles_counted": counted_split([n for n, _ in split_spec]),
            "max_cycles_per_family": max_cycles_per_family, "max_images": max_images, "pool_seed": pool_seed,
            "image_pattern": image_pattern, "not_in_paper": [f for f in families if f in GQA_EXTRA_FAMILIES],
            "images_in_pool": int(len(pool)), "rules": {"predicates": "vlaudit.builders.cycles.gqa_rules"},
            "warnings": dict(sorted(warnings.items())), **table,
            "swap_reasons": {family: {r: counts[r] for r in REASONS if counts[r]} for family, counts in reasons.items()}}
    paths = write_outputs(out_path, rows, result.captions, meta)
    return {**meta, "paths": paths, "cycles_written": len(rows)}
