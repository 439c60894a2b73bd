"""Yes/no hallucination benchmarks as released → yes/no ITEMS: POPE, MME, HallusionBench.

* **POPE** — the Hub release ``lmms-lab/POPE`` (split ``test``): ``id, question_id, question, answer
  (yes/no), image_source, image (Image), category (random / popular / adversarial)``; or the authors'
  per-category files ``coco_pope_{category}.json`` (JSON lines ``question_id, image, text, label``), whose
  category is read from the file name. Item id ``pope-{category}-{question_id}``.
* **MME** — ``lmms-lab/MME`` (split ``test``): ``question_id`` (the image's file, e.g.
  ``code_reasoning/0020.png``), ``image, question, answer (Yes/No), category``; or VLMEvalKit's ``MME.tsv``
  (``index, category, image (base64), question, answer, image_path``). MME asks two questions of each image;
  both carry ``extra["image_pair"]`` = ``{category}/{image}``, MME's ``acc+`` unit. Item id
  ``mme-{image_pair}-q{k}``, k the question's place among its image's.
* **HallusionBench** — the authors' ``HallusionBench.json`` (``category`` VD/VS, ``subcategory,
  visual_input`` (``"0"`` = no image), ``set_id, figure_id, sample_note, question_id, question,
  gt_answer_details, gt_answer`` (``"1"`` yes / ``"0"`` no), ``filename``) or ``lmms-lab/HallusionBench``
  (the same columns and ``image``; splits ``image`` and ``non_image``). A question without an image is a
  text-only item (image None, ``extra["visual_input"]`` False), counted apart. Category
  ``{category}/{subcategory}``; ``extra`` keeps ``set_id, figure_id, question_id``.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from vlaudit.sources.benchmarks.release import BenchmarkRead, release_records, split_name, unique_ids
from vlaudit.sources.items import BenchmarkItem, image_clusters, with_clusters
from vlaudit.sources.rows import ImageFolder

POPE_CATEGORIES = ("random", "popular", "adversarial")


def _pope_category_of_file(source: str) -> str | None:
    match = re.search(r"(random|popular|adversarial)", Path(source).stem.lower())
    return match.group(1) if match else None


def read_pope(source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """POPE rows → yes/no items with their ``category`` (random / popular / adversarial)."""
    rows = release_records(source, images)
    split, file_category = split_name(source), _pope_category_of_file(str(source))
    items, records = [], []
    for _, row in rows:
        category = (row.text("category", required=False) or file_category or "").lower()
        if category not in POPE_CATEGORIES:
            raise row.error(f"expected a category {', '.join(POPE_CATEGORIES)} (a column, or in the file "
                            f"name), got {category or 'none'!r}", "category")
        question_id = row.first(("question_id", "id"))
        label = row.yes_no("answer" if row.has("answer") else "label")
        items.append(BenchmarkItem(
            item_id=f"pope-{category}-{question_id}", image=row.image("image"),
            question=str(row.first(("question", "text"))), label=label, dataset="pope", split=split,
            category=category,
            extra={"question_id": question_id, "image_source": row.text("image_source", required=False)}))
        records.append(row.record)
    return BenchmarkRead("pope", unique_ids(image_clusters(items), records, str(source)))


def read_mme(source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """MME rows → yes/no items, each with ``extra["image_pair"]`` shared by the questions of one image."""
    rows = release_records(source, images)
    split = split_name(source)
    items, records = [], []
    asked: Counter[str] = Counter()
    for _, row in rows:
        category = row.required("category")
        image_name = str(row.first(("question_id", "image_path")))
        pair = image_name if image_name.startswith(f"{category}/") else f"{category}/{image_name}"
        asked[pair] += 1
        items.append(BenchmarkItem(
            item_id=f"mme-{pair}-q{asked[pair]}", image=row.image("image"), question=row.required("question"),
            label=row.yes_no("answer"), dataset="mme", split=split, category=category,
            extra={"image_pair": pair}))
        records.append(row.record)
    odd = sorted(pair for pair, n in asked.items() if n != 2)
    notes = [f"{len(odd)} image(s) with other than two questions (MME's acc+ needs both): "
             f"{', '.join(odd[:3])}{' and more' if len(odd) > 3 else ''}"] if odd else []
    clustered = with_clusters(items, "image", lambda item: item.extra["image_pair"])
    return BenchmarkRead("mme", unique_ids(clustered, records, str(source)), notes=notes)


def read_hallusionbench(source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """HallusionBench rows → yes/no items; a question without an image is a text-only item."""
    rows = release_records(source, images)
    split = split_name(source)
    items, records = [], []
    for _, row in rows:
        category, subcategory = row.required("category"), row.required("subcategory")
        visual = row.required("visual_input")
        if visual not in ("0", "1", "2"):
            raise row.error(f"expected visual_input 0, 1 or 2, got {visual!r:.20}", "visual_input")
        ids = {key: row.required(key) for key in ("set_id", "figure_id", "question_id")}
        image = None
        if visual != "0":
            image = row.image("image", required=False) or row.image("filename", required=False)
            if image is None:
                raise row.error(f"visual_input {visual} needs an image (an image or filename field)", "filename")
        items.append(BenchmarkItem(
            item_id=f"hallusionbench-{category}-{subcategory}-{ids['set_id']}-{ids['figure_id']}-"
                    f"{ids['question_id']}",
            image=image, question=row.required("question"), label=row.yes_no("gt_answer"),
            dataset="hallusionbench", split=split, category=f"{category}/{subcategory}",
            extra={**ids, "visual_input": visual != "0", "sample_note": row.text("sample_note", required=False)}))
        records.append(row.record)
    return BenchmarkRead("hallusionbench", unique_ids(image_clusters(items), records, str(source)))
