"""VCA margins for dual encoders (CLIP, SigLIP, open_clip): a cosine decision score per context (beyond VCA).

A dual encoder has no yes/no verbalizers, so the VCA decision is defined within a same-image true/false
statement group (VCA §13): statement s of group S answers "yes" under context c when it is the group's best
match for the context image,

    m_c(s) = cos(f(x_c), g(s)) − max_{s' ∈ S, s' ≠ s} cos(f(x_c), g(s'))

(x_c the context image, f/g the image/text towers, cosine in float64). For a true/false pair this is
cos(x_c, s) − cos(x_c, s') = (1/τ)·log-odds of the model's two-way zero-shot choice up to its logit scale τ⁻¹,
so the sign — the decision — is scale-free. Every other VCA quantity is computed from these margins exactly
as for an MLLM (``vlaudit vca report``): d = sign m_o, r_c = d·m_c, G_img = r_o − max_c r_c, Dep, D-CC, C-U,
Strict T/B, permutation calibration with ``mismatch``, Rel_o / PairCredit / Joint on the groups.

Contexts: ``original``, ``blank``, ``mean``, ``mismatch`` (and any other image context of
:mod:`vlaudit.contexts.image_contexts`) are rendered exactly as for ``vca score`` and embedded by the image
tower. ``text`` ("no image") has no image to embed; it is defined by ``NO_IMAGE``:

* ``mean-image`` (default): the mean of the L2-normalised embeddings of the run's distinct original images —
  the text prior of a dual encoder: which statement of the group fits an average image of the benchmark best;
* ``zero``: the zero vector; every cosine is 0, so m_t ≡ 0 and r_t = 0 (G_img = r_o − max(0, other r_c)).

What does not carry over: the answer interfaces (one ``yesno`` decision; there is no True/False prompt, so the
interface ensemble and pair-centred cross-interface stability are empty), ungrouped items (a lone statement
needs a threshold; they are left out with a counted warning, :func:`grouped_items`), and the probability-max aggregation p = σ(r), which reads the margin as
log-odds and so depends on the unused logit scale (its binary events still agree with r_o − max).

The statement text is the item's question with the fixed ITEMS wrapper
(:data:`vlaudit.builders.benchmark_items.QUESTION_TEMPLATE`) removed, or a named column of the ITEMS table.
Context images are embedded through :func:`vlaudit.scoring.features.write_features` (the run folder keeps
``features/`` and the rendered ``context_images/``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from vlaudit.backends.base import description_of
from vlaudit.builders.benchmark_items import QUESTION_TEMPLATE
from vlaudit.contexts.image_contexts import CONTEXTS, context_parameters
from vlaudit.errors import InputError
from vlaudit.files import write_jsonl, write_parquet
from vlaudit.hashing import sha256_text
from vlaudit.results.run_records import DualScoringRunRecord
from vlaudit.results.vca.outputs import DualScoringSummary
from vlaudit.scoring.features import FeatureInputs, pair_cosines, read_features, write_features
from vlaudit.scoring.run.folder import RunFolder
from vlaudit.scoring.run.manifest import RunManifest
from vlaudit.scoring.run.plan import Record, plan_run, render
from vlaudit.scoring.run.runner import margins_schema
from vlaudit.sources.images import ImageStore
from vlaudit.sources.items import BenchmarkItem

NO_IMAGE = ("mean-image", "zero")
INTERFACE = "yesno"


def statement_of(item: BenchmarkItem, text_field: str | None = None) -> str:
    """The text the text tower embeds: ``text_field`` of the item, or its question without the ITEMS wrapper."""
    if text_field:
        value = item.extra.get(text_field)
        if not isinstance(value, str) or not value:
            raise InputError("missing text", record=item.item_id, field=text_field)
        return value
    head, _, tail = QUESTION_TEMPLATE.partition("{statement}")
    match = re.fullmatch(re.escape(head) + "(.*)" + re.escape(tail), item.question, flags=re.DOTALL)
    return match.group(1) if match else item.question


def grouped_items(items: Sequence[BenchmarkItem], source: str | Path | None = None
                  ) -> tuple[list[BenchmarkItem], str | None]:
    """The items a dual encoder can decide — those in a statement group — and a warning counting the lone
    items left out (None when there are none). A benchmark that mixes groups with lone yes/no questions (the
    demo's items, a VSR file beside GSR groups) is scored on its groups, as a reader of it expects, rather than
    refused whole; a file with no group at all is an :class:`InputError`."""
    kept = [item for item in items if item.group_id is not None]
    lone = [item.item_id for item in items if item.group_id is None]
    if not kept:
        check_groups(items, source)  # raises, naming the first lone item
    if not lone:
        return kept, None
    return kept, (f"{len(lone)} of {len(items)} item(s) have no group_id and are left out (e.g. {lone[0]}): a "
                  f"dual-encoder decision is defined within a true/false statement group; {len(kept)} grouped "
                  "item(s) are scored")


def check_groups(items: Sequence[BenchmarkItem], source: str | Path | None = None) -> dict[str, list[int]]:
    """group_id → member indices; every item needs a group of ≥ 2 statements sharing one image."""
    groups: dict[str, list[int]] = {}
    for index, item in enumerate(items):
        if item.group_id is None:
            raise InputError("a dual-encoder decision is defined within a true/false statement group; this item "
                             "has no group_id", path=source, record=item.item_id, field="group_id")
        groups.setdefault(item.group_id, []).append(index)
    for group, members in groups.items():
        if len(members) < 2:
            raise InputError(f"group {group!r} has a single statement", path=source,
                             record=items[members[0]].item_id, field="group_id")
        if len({items[i].image for i in members}) != 1:
            raise InputError(f"the statements of group {group!r} name different images", path=source,
                             record=items[members[0]].item_id, field="image")
    return groups


def group_margins(cosines: np.ndarray) -> np.ndarray:
    """m(s) = cos(s) − max over the group's other statements (float64; see the module docstring)."""
    cosines = np.asarray(cosines, dtype=np.float64)
    out = np.empty_like(cosines)
    for k in range(cosines.size):
        out[k] = cosines[k] - np.delete(cosines, k).max()
    return out


def text_context_image(records: Sequence[Any], feats: Any, no_image: str) -> np.ndarray:
    """The image-side vector of the ``text`` context (``NO_IMAGE``, see the module docstring), float64."""
    originals = sorted({r.image_sha256 for r in records
                        if r.context == "original" and r.status == "ok" and r.image_sha256 is not None})
    if no_image == "zero" or not originals:
        return np.zeros(feats.images.shape[1], dtype=np.float64)
    row = feats.image_index()
    return np.asarray(feats.images[[row[s] for s in originals]], dtype=np.float64).mean(axis=0)


def plan_dual(items: Sequence[BenchmarkItem], store: ImageStore, contexts: Sequence[str], seed: int) -> list[Record]:
    """The records of a dual run, planned exactly as by ``vca score`` (one ``yesno`` decision, no prompt)."""
    records, _ = plan_run(items, store, contexts, [INTERFACE], seed, "dual", lambda q, i, w: q)
    return records


def score_dual(backend: Any, items: Sequence[BenchmarkItem], *, images_dir: str | Path, out_dir: str | Path,
               contexts: Sequence[str], no_image: str = "mean-image", text_field: str | None = None,
               seed: int = 0, model_name: str | None = None, arguments: dict[str, Any] | None = None,
               source: str | Path | None = None) -> dict[str, Any]:
    """Write RUN_DIR/margins.parquet (MARGINS schema + ``cosine``), failures.jsonl, manifest.json, summary.json.

    Records are planned exactly as by ``vca score`` (:func:`vlaudit.scoring.run.plan.plan_run`: same contexts,
    donors, skips and failures); a (group, context) in which any member is not ``ok`` is skipped for every
    member, since its margins need all the group's cosines."""
    if no_image not in NO_IMAGE:
        raise InputError(f"unknown --no-image {no_image!r}; available: {', '.join(NO_IMAGE)}", field="no_image")
    unknown = [c for c in contexts if c not in CONTEXTS]
    if unknown or "original" not in contexts:
        raise InputError(f"contexts must include 'original' and come from {', '.join(CONTEXTS)}; got {unknown}",
                         field="contexts")
    groups = check_groups(items, source)
    out = Path(out_dir)
    model = model_name or backend.spec
    store = ImageStore(images_dir)
    records = plan_dual(items, store, contexts, seed)
    by_key = {(r.item.item_id, r.context): r for r in records}
    texts = {item.item_id: statement_of(item, text_field) for item in items}
    with RunFolder(out).open(outputs=("margins.parquet", "failures.jsonl", "summary.json")) as run:
        rendered = out / "context_images"
        rendered.mkdir(parents=True, exist_ok=True)
        inputs = FeatureInputs()
        for record in records:
            if (record.status != "ok" or record.context == "text" or record.image_sha256 is None
                    or record.image_sha256 in inputs.images):
                continue
            path = rendered / f"{record.image_sha256}.png"
            if not path.is_file():
                image = render(store, record.item, record.context, record.donor_image, seed)
                image.save(path.with_suffix(".tmp.png"))
                path.with_suffix(".tmp.png").replace(path)
            inputs.images[record.image_sha256] = path
        for text in texts.values():
            inputs.texts.setdefault(sha256_text(text), text)
        write_features(backend, inputs, out / "features", provenance={"benchmark": str(source),
                                                                        "images_dir": str(images_dir)})
        feats = read_features(out / "features")
        image_row, text_row = feats.image_index(), feats.caption_index()
        no_image_vector = text_context_image(records, feats, no_image)
        rows, problems = [], []
        for group, members in sorted(groups.items()):
            group_items = [items[i] for i in members]
            for context in contexts:
                recs = [by_key[(item.item_id, context)] for item in group_items]
                bad = [r for r in recs if r.status != "ok"]
                if bad:
                    reason = f"{bad[0].status} in group {group!r}: {bad[0].error}"
                    problems += [_problem(r, model, r.error if r.status != "ok" else reason) for r in recs]
                    continue
                t = feats.texts[[text_row[sha256_text(texts[item.item_id])] for item in group_items]]
                if context == "text":
                    v = np.broadcast_to(no_image_vector, t.shape)
                else:
                    # a record with an image context that scored ok has its image's hash
                    v = feats.images[[image_row[r.image_sha256] for r in recs]]  # type: ignore[index]
                cos = pair_cosines(v, t)
                for record, c, m in zip(recs, cos, group_margins(cos), strict=True):
                    rows.append(_row(record, model, texts[record.item.item_id], float(c), float(m)))
        rows.sort(key=lambda r: (r["dataset"], r["item_id"], r["context"], r["interface"]))
        schema = margins_schema().append(pa.field("cosine", pa.float64()))
        write_parquet(out / "margins.parquet", pa.Table.from_pylist(rows, schema=schema))
        problems.sort(key=lambda r: (r["dataset"], r["item_id"], r["context"]))
        write_jsonl(out / "failures.jsonl", problems)
        described = DualScoringRunRecord.of(
            model=model, spec=backend.spec, backend=description_of(backend), no_image=no_image,
            text_field=text_field, contexts=contexts, interfaces=[INTERFACE], context_parameters=context_parameters(),
            seed=seed, n_items=len(items), n_groups=len(groups))
        run.write_manifest(RunManifest(command="vca score-dual", arguments=dict(arguments or {}), record=described))
        summary = {"model": model, "n_items": len(items), "n_groups": len(groups), "n_scored_rows": len(rows),
                   "n_not_scored": len(problems), "n_distinct_images": len(inputs.images),
                   "n_distinct_texts": len(inputs.texts),
                   "contexts": {c: sum(1 for r in rows if r["context"] == c) for c in contexts}}
        run.write_summary(DualScoringSummary.from_dict(summary))
    return summary


def _base(record: Any, model: str) -> dict[str, Any]:
    item = record.item
    return {"model": model, "dataset": item.dataset or "", "item_id": item.item_id, "context": record.context,
            "interface": INTERFACE, "label": item.label, "group_id": item.group_id, "statement": item.statement,
            "relation": None if item.relation is None else str(item.relation),
            "subject": None if item.subject is None else str(item.subject),
            "object": None if item.object is None else str(item.object), "split": item.split,
            "donor_image": record.donor_image, "source_sha256": record.source_sha256}


def _row(record: Any, model: str, text: str, cosine: float, margin: float) -> dict[str, Any]:
    return {**_base(record, model), "nll_yes": None, "nll_no": None, "margin": margin, "cosine": cosine,
            "prompt_hash": sha256_text(text), "yes_token_id": None, "no_token_id": None, "n_prompt_tokens": None,
            "image_sha256": record.image_sha256, "status": "ok", "error": None}


def _problem(record: Any, model: str, error: str | None) -> dict[str, Any]:
    return {**_base(record, model), "status": record.status if record.status != "ok" else "skipped",
            "error": error}
