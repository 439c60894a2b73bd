"""GQA cycle families (cycle paper §D.3) and ``build_gqa_cycles``.

Each image contributes the caption-like facts its scene graph states (predicates in
:mod:`~vlaudit.builders.cycles.gqa_rules`); a block pairs a fact of image 1 with a fact of image 2 and is
kept only when both swapped image–fact pairings are invalid under the graphs. Candidates are first paired
within the same noun (attribute family: "the red car" / "the blue car") or noun pair (binding family), and
the attribute and relation families then fall back to pairing across nouns. Default split: image-disjoint
train/val/test = 60/10/30 (§D.5).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.builders.cycles.common import (
    BuildResult,
    assign_splits,
    finalize,
    generated_caption_id,
    pair_candidates,
    parse_splits,
    rng_for,
    select_families,
    subsample,
    write_outputs,
)
from vlaudit.builders.cycles.gqa_rules import GraphFacts, candidate_facts, fact_text, fact_verdict, noun_key
from vlaudit.sources.gqa import SceneGraphs, parse_scene_graphs

GQA_FAMILIES = ("gqa-attribute", "gqa-relation-object", "gqa-binding")
DEFAULT_GQA_SPLITS = "train=0.6,val=0.1,test=0.3"


def _bucket_key(family: str, fact: dict[str, str]) -> str:
    if family == "gqa-attribute":
        return noun_key(fact["object"])
    return noun_key(fact["subject"]) + "|" + noun_key(fact["object"])


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
            names = {}
            bucket = np.array([names.setdefault(_bucket_key(family, f), len(names)) for f in item_fact])

            def check(i: np.ndarray, j: np.ndarray, family: str = family, img: np.ndarray = img,
                      item_fact: list = item_fact) -> np.ndarray:
                return np.array([
                    fact_verdict(graph_facts(int(img[b])), family, item_fact[a]) == "invalid"
                    and fact_verdict(graph_facts(int(img[a])), family, item_fact[b]) == "invalid"
                    for a, b in zip(i.tolist(), j.tolist(), strict=True)], dtype=bool)

            used = np.zeros(len(image_ids), dtype=bool)
            pairs = pair_candidates(rng, img, bucket, check, rounds=rounds, max_pairs=max_cycles_per_family,
                                    used=used)
            if family != "gqa-binding" and (max_cycles_per_family is None or len(pairs) < max_cycles_per_family):
                pairs += pair_candidates(rng, img, np.zeros(len(img), dtype=np.int64), check, rounds=rounds,
                                         max_pairs=None if max_cycles_per_family is None
                                         else max_cycles_per_family - len(pairs), used=used)
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
                         "fact_1": entries[0][3], "fact_2": entries[1][3]}
                if family == "gqa-relation-object":
                    block["relation_1"], block["relation_2"] = entries[0][3], entries[1][3]
                blocks.append(block)
            result.blocks[(family, split)] = blocks
    return result


def build_gqa_cycles(scene_graphs_path: str | Path, out_path: str | Path, *, families: Sequence[str] | None = None,
                     seed: int = 0, splits: str | Sequence[tuple[str, float]] = DEFAULT_GQA_SPLITS,
                     min_cycles: int = 30, max_cycles_per_family: int | None = None,
                     max_images: int | None = None, rounds: int = 4,
                     image_pattern: str = "{image_id}.jpg") -> dict[str, Any]:
    """Parse a GQA scene-graph file, build the GQA families and write CYCLES + captions + metadata.

    ``image_pattern`` names each image's file from its id (GQA ships ``{image_id}.jpg``; a COCO-style folder
    is ``{image_id:0>12}.jpg``).
    """
    families = select_families(families, GQA_FAMILIES, "GQA")
    split_spec = parse_splits(splits)
    graphs = parse_scene_graphs(scene_graphs_path)
    image_ids = sorted(graphs.images, key=lambda s: (len(s), s))
    pool = subsample(len(image_ids), max_images, seed)
    split_of = assign_splits(len(pool), split_spec, seed)
    result = build_gqa(graphs, image_ids, pool, split_of, split_spec, families, seed=seed,
                       max_cycles_per_family=max_cycles_per_family, rounds=rounds)
    rows, table = finalize(result, families=families, splits=split_spec, seed=seed, min_cycles=min_cycles,
                           max_cycles_per_family=max_cycles_per_family,
                           file_names={i: image_pattern.format(image_id=i) for i in image_ids})
    warnings = Counter(graphs.warnings) + result.warnings
    meta = {"source": "gqa", "scene_graphs": str(scene_graphs_path), "families": families, "seed": seed,
            "splits": {name: frac for name, frac in split_spec}, "min_cycles": min_cycles,
            "max_cycles_per_family": max_cycles_per_family, "max_images": max_images,
            "image_pattern": image_pattern,
            "images_in_pool": int(len(pool)), "rules": {"predicates": "vlaudit.builders.cycles.gqa_rules"},
            "warnings": dict(sorted(warnings.items())), **table}
    paths = write_outputs(out_path, rows, result.captions, meta)
    return {**meta, "paths": paths, "cycles_written": len(rows)}
