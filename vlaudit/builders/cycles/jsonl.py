"""Cycles from a bring-your-own pairs JSONL (format: :mod:`vlaudit.sources.pairs_jsonl`).

* ``pairs-object``: a caption is valid for an image when every name it mentions is among the image's
  objects, invalid when one is absent (as ``coco-object-coarse``);
* ``pairs-relation``: valid when every triple holds under the box rules over eligible objects, invalid
  when a triple's object is absent or the relation fails over all objects at zero margin (as
  ``coco-box-relation``); a triple whose objects lack boxes is unverifiable.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.builders.cycles.build_steps import (
    DEFAULT_SPLITS,
    BuildResult,
    assign_splits,
    counted_split,
    finalize,
    pair_candidates,
    parse_splits,
    rng_for,
    select_families,
    subsample,
    write_outputs,
)
from vlaudit.builders.cycles.rules import GeometryRules, statement_verdict
from vlaudit.settings import CYCLE_POOL_SEED, MIN_CYCLES
from vlaudit.sources.pairs_jsonl import PairCaption, PairImage, read_pairs_jsonl

JSONL_FAMILIES = ("pairs-object", "pairs-relation")


def object_verdict(image: PairImage, mentions: Sequence[str]) -> str:
    names = {o.name for o in image.objects or ()}
    return "valid" if all(m in names for m in mentions) else "invalid"


def relation_verdict(image: PairImage, triples: Sequence[Sequence[str]], rules: GeometryRules) -> str:
    """'valid' if every triple is valid, 'invalid' if one is invalid, else 'unverifiable'."""
    verdicts = []
    area = (image.width or 0) * (image.height or 0)

    def inst(objs: list) -> list:
        return [(o.box, not o.iscrowd and o.box[2] * o.box[3] >= rules.min_area * area) for o in objs]

    for subject, relation, obj in triples:
        a = [o for o in image.objects or () if o.name == subject]
        b = [o for o in image.objects or () if o.name == obj]
        if a and b and any(o.box is None for o in a + b):
            verdicts.append("unverifiable")
            continue
        verdicts.append(statement_verdict(inst(a), inst(b), relation, image.width or 0, image.height or 0, rules))
    if verdicts and all(v == "valid" for v in verdicts):
        return "valid"
    return "invalid" if "invalid" in verdicts else "unverifiable"


def caption_verdict(family: str, image: PairImage, caption: PairCaption | dict, rules: GeometryRules) -> str:
    mentions: Sequence[str]
    triples: Sequence[Sequence[str]]
    if isinstance(caption, dict):
        mentions, triples = caption.get("mentions", []), [tuple(t) for t in caption.get("triples", [])]
    else:
        mentions, triples = caption.mentions, caption.triples
    if family == "pairs-object":
        return object_verdict(image, mentions)
    return relation_verdict(image, triples, rules)


def build_jsonl_cycles(pairs_path: str | Path, out_path: str | Path, *, families: Sequence[str] | None = None,
                       seed: int = 0, splits: str | Sequence[tuple[str, float]] = DEFAULT_SPLITS,
                       min_cycles: int = MIN_CYCLES, max_cycles_per_family: int | None = None,
                       max_images: int | None = None, pool_seed: int = CYCLE_POOL_SEED, rules: GeometryRules | None = None,
                       rounds: int = 4) -> dict[str, Any]:
    """Build the pairs families from a pairs JSONL and write CYCLES + captions + metadata."""
    rules = rules or GeometryRules()
    families = select_families(families, JSONL_FAMILIES)
    split_spec = parse_splits(splits)
    images, captions = read_pairs_jsonl(pairs_path)
    image_ids = list(images)
    position = {i: k for k, i in enumerate(image_ids)}
    pool = subsample(len(image_ids), max_images, pool_seed)
    split_of = assign_splits(len(pool), split_spec, seed)
    result = BuildResult()
    _warn_unseen_mentions(pairs_path, images, captions, result)
    for split_index, (split, _) in enumerate(split_spec):
        in_split = set(pool[split_of == split_index].tolist())
        for family in families:
            field_name = "mentions" if family == "pairs-object" else "triples"
            items = [c for c in captions if position[c.image_id] in in_split and getattr(c, field_name)
                     and caption_verdict(family, images[c.image_id], c, rules) == "valid"]
            img = np.array([position[c.image_id] for c in items], dtype=np.int64)

            def check(i: np.ndarray, j: np.ndarray, family: str = family, items: list = items) -> np.ndarray:
                return np.array([
                    caption_verdict(family, images[items[b].image_id], items[a], rules) == "invalid"
                    and caption_verdict(family, images[items[a].image_id], items[b], rules) == "invalid"
                    for a, b in zip(i.tolist(), j.tolist(), strict=True)], dtype=bool)

            pairs = pair_candidates(rng_for(seed, family, split), img, np.zeros(len(items), dtype=np.int64), check,
                                    rounds=rounds, max_pairs=max_cycles_per_family) if len(items) >= 2 else []
            blocks = []
            for a, b in pairs:
                c1, c2 = items[a], items[b]
                for c in (c1, c2):
                    result.captions[c.caption_id] = {"caption_id": c.caption_id, "text": c.text,
                                                     "image_id": c.image_id, "source": "pairs"}
                block: dict[str, Any] = {"image_1": c1.image_id, "caption_1": c1.caption_id, "image_2": c2.image_id,
                                         "caption_2": c2.caption_id, "text_1": c1.text, "text_2": c2.text}
                if family == "pairs-object":
                    block.update(categories_1=list(c1.mentions), categories_2=list(c2.mentions))
                else:
                    block.update(triples_1=[list(t) for t in c1.triples], triples_2=[list(t) for t in c2.triples])
                    if len(c1.triples) == 1 and len(c2.triples) == 1:
                        block.update(relation_1=dict(zip(("subject", "relation", "object"), c1.triples[0],
                                                         strict=True)),
                                     relation_2=dict(zip(("subject", "relation", "object"), c2.triples[0],
                                                         strict=True)))
                blocks.append(block)
            result.blocks[(family, split)] = blocks
    rows, table = finalize(result, families=families, splits=split_spec, seed=seed, min_cycles=min_cycles,
                           max_cycles_per_family=max_cycles_per_family,
                           file_names={i: im.file_name for i, im in images.items()})
    meta = {"source": "jsonl", "pairs": str(pairs_path), "families": families, "seed": seed,
            "splits": {name: frac for name, frac in split_spec}, "min_cycles": min_cycles,
            "min_cycles_counted": counted_split([n for n, _ in split_spec]),
            "max_cycles_per_family": max_cycles_per_family, "max_images": max_images, "pool_seed": pool_seed,
            "images_in_pool": int(len(pool)), "rules": rules.as_dict(),
            "warnings": dict(sorted((Counter() + result.warnings).items())), **table}
    paths = write_outputs(out_path, rows, result.captions, meta)
    return {**meta, "paths": paths, "cycles_written": len(rows)}


def _warn_unseen_mentions(path: str | Path, images: dict[str, Any], captions: Sequence[Any], result: BuildResult,
                          *, shown: int = 3) -> None:
    """A caption that mentions an object its own image lacks is no positive of that image (the annotation is
    contradictory, or a name is misspelt): it is left out of ``pairs-object`` as before, but counted in the
    metadata's warnings and named in one warning line rather than dropped without a word."""
    unseen = [(c.caption_id, sorted(set(c.mentions) - {o.name for o in images[c.image_id].objects or ()}))
              for c in captions if c.mentions and images[c.image_id].objects is not None
              and object_verdict(images[c.image_id], c.mentions) != "valid"]
    if not unseen:
        return
    result.warnings["captions naming an object their own image lacks"] += len(unseen)
    named = ", ".join(f"caption {cid} ({', '.join(names)})" for cid, names in unseen[:shown])
    more = f" and {len(unseen) - shown} more" if len(unseen) > shown else ""
    warnings.warn(f"{path}: {len(unseen)} caption(s) name an object their own image lacks, left out of "
                  f"pairs-object: {named}{more}", stacklevel=3)
