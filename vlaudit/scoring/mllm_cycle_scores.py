"""Cycle scores s(image, caption) of a generative MLLM: the literal yes/no margin of a fixed query (beyond the papers).

The cycle audit needs one real score per (image, caption) pair; a dual encoder gives a cosine
(:mod:`vlaudit.scoring.features`). A multimodal chat LLM gives

    s(u, v) = m = NLL(" no") − NLL(" yes")   for the question ``CYCLE_QUERY.format(caption=text(v))``

about image u, read exactly as ``vlaudit vca score`` reads a yes/no item (VCA §9 answer interface, the
family's chat template, one forward pass). Each distinct pair a cycles table uses becomes one
:class:`~vlaudit.sources.items.BenchmarkItem` (image = the cycle image file, question = the query with the
caption inserted) scored under the ``original`` context by :func:`vlaudit.scoring.run.runner.run_scoring`: the
same chunk cache (a rerun resumes), dedup of identical (prompt, image) queries, and — for the Qwen-VL families
— one shared image prefix for all the captions asked about one image.

The cycle contrast Δ = s(u₁,v₁) + s(u₂,v₂) − s(u₁,v₂) − s(u₂,v₁) cancels every additive part a(u) + b(v) of
the margin (cycle paper Proposition 1), so an MLLM whose answer is an image-only prior plus a caption-only
prior scores CycleAcc exactly ½, as a dual encoder's image-only plus text-only shortcut does: one audit, one ½.
"""

from __future__ import annotations

import json
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from vlaudit.errors import InputError
from vlaudit.records import Cycle
from vlaudit.results.columns import SCORES
from vlaudit.scoring.features import FeatureInputs
from vlaudit.sources.items import BenchmarkItem

CYCLE_QUERY = 'Does the caption "{caption}" describe the image?'
INTERFACE = "yesno"


def check_query(query: str) -> str:
    """The query must hold exactly one ``{caption}`` field and nothing else to format."""
    fields = [name for _, name, _, _ in string.Formatter().parse(query) if name is not None]
    if fields != ["caption"]:
        raise InputError(f"the query needs exactly one {{caption}} field and no other; got fields {fields}",
                         field="--query")
    return query


def pair_item_id(image_id: str, caption_id: str) -> str:
    """A readable, collision-free item id of one (image, caption) pair: ``["IMAGE", "CAPTION"]``."""
    return json.dumps([image_id, caption_id], ensure_ascii=False)


def cycle_pair_items(cycles: Sequence[Cycle], inputs: FeatureInputs, images_dir: str | Path, *,
                     query: str = CYCLE_QUERY, dataset: str = "cycles") -> list[BenchmarkItem]:
    """One yes/no item per distinct (image_id, caption_id) pair the cycles use (matched pairs and swaps),
    in first-appearance order; ``inputs`` from :func:`vlaudit.scoring.features.collect_inputs`."""
    root = Path(images_dir)
    items: dict[tuple[str, str], BenchmarkItem] = {}
    for cycle in cycles:
        for image_id, caption_id, _ in cycle.entries():
            if (image_id, caption_id) in items:
                continue
            relative = Path(inputs.images[image_id]).relative_to(root).as_posix()
            items[(image_id, caption_id)] = BenchmarkItem(
                item_id=pair_item_id(image_id, caption_id), image=relative,
                question=query.format(caption=inputs.texts[caption_id]), dataset=dataset,
                extra={"image_id": image_id, "caption_id": caption_id})
    return list(items.values())


def scores_from_margins(margins_path: str | Path, items: Sequence[BenchmarkItem], *,
                        source: str | Path | None = None) -> list[dict[str, Any]]:
    """Rows ``image_id, caption_id, score`` (score = the float64 margin of the ``original`` row), in item order.

    A pair without a scored margin (its image failed; see the run's ``failures.jsonl``) is an error: a
    cycle needs all four of its scores."""
    table = pq.read_table(margins_path, columns=["item_id", "context", "margin"])
    margin_of = {item_id: margin for item_id, context, margin in zip(
        table.column("item_id").to_pylist(), table.column("context").to_pylist(),
        table.column("margin").to_pylist(), strict=True) if context == "original"}
    rows = []
    for item in items:
        if item.item_id not in margin_of:
            raise InputError(f"pair {item.item_id} has no score (its image failed; see failures.jsonl beside "
                             f"{str(margins_path)!r})", path=source, record=item.item_id, field="image")
        rows.append(dict(zip(SCORES.names, (item.extra["image_id"], item.extra["caption_id"],
                                            float(margin_of[item.item_id])), strict=True)))
    return rows
