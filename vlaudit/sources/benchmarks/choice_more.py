"""Multiple-choice benchmarks as released → lettered ITEMS: MMMU, CV-Bench, AI2D.

* **MMMU** — ``MMMU/MMMU`` (one config per subject; splits ``dev``, ``validation``, ``test``): ``id``
  (``{split}_{Subject}_{n}``), ``question, options`` (a Python list *as text*, e.g. ``"['1', '2']"``, read
  with ``ast.literal_eval`` as lmms-eval does), ``explanation, image_1 … image_7`` (Images, unused ones null),
  ``img_type, answer`` (a letter; ``?`` in the test split), ``topic_difficulty, question_type``
  (``multiple-choice`` / ``open``), ``subfield``. Open questions are excluded. ``image`` is the first image,
  ``extra["images"]`` all of them in order. Category: the subject; ``extra["l2_category"]`` the subfield.
* **CV-Bench** — ``nyu-visionx/CV-Bench`` (configs ``2D``, ``3D``; split ``test``): ``idx, type`` (2D/3D),
  ``task`` (Count, Relation, Depth, Distance), ``image, question, choices, answer`` (``"(A)"``), ``prompt,
  filename, source, source_dataset, source_filename, target_class, target_size, bbox``. Category ``task``,
  ``extra["l2_category"]`` ``type``.
* **AI2D** — ``lmms-lab/ai2d`` (split ``test``): ``question, options`` (a list), ``answer`` (the gold option's
  0-based index as text), ``image``. No id column: item ids are the row numbers.
"""

from __future__ import annotations

import re
from pathlib import Path

from vlaudit.sources.benchmarks.release import (
    BenchmarkRead,
    Row,
    items_per_row,
    release_records,
    split_name,
    unique_ids,
)
from vlaudit.sources.items import BenchmarkItem
from vlaudit.sources.rows import ImageFolder

MMMU_IMAGE_COLUMNS = tuple(f"image_{k}" for k in range(1, 8))
MMMU_HIDDEN_ANSWER = "?"  # the test split's answers are withheld
_MMMU_ID = re.compile(r"(?:dev|validation|test)_(.+)_\d+")


def read_mmmu(source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """MMMU rows → lettered multiple-choice items with all their images (open questions excluded)."""
    rows = release_records(source, images, wanted=lambda record: record.get("question_type") != "open")
    split = split_name(source)
    read = BenchmarkRead("mmmu", [])
    records = []
    for _, row in rows:
        kind = row.required("question_type")
        if kind == "open":
            read.excluded.append({"record": row.record, "reason": "open question (no options)"})
            continue
        if kind != "multiple-choice":
            raise row.error(f"expected question_type multiple-choice or open, got {kind!r:.30}", "question_type")
        pictures = [image for column in MMMU_IMAGE_COLUMNS
                    if (image := row.image(column, required=False)) is not None]
        if not pictures:
            read.excluded.append({"record": row.record, "reason": "no image"})
            continue
        options = row.option_list("options")
        item_id = row.required("id")
        match = _MMMU_ID.fullmatch(item_id)
        read.items.append(BenchmarkItem(
            item_id=f"mmmu-{item_id}", image=pictures[0], question=row.required("question"),
            label=row.gold_letter("answer", options, unknown=(MMMU_HIDDEN_ANSWER,)), dataset="mmmu", split=split,
            options=options, category=match.group(1) if match else None,
            extra={"l2_category": row.text("subfield", required=False), "images": pictures,
                   "img_type": row.text("img_type", required=False),
                   "topic_difficulty": row.text("topic_difficulty", required=False)}))
        records.append(row.record)
    unique_ids(read.items, records, str(source))
    return read


def read_cv_bench(source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """CV-Bench rows → lettered items (category the task, l2_category 2D/3D)."""
    return BenchmarkRead("cv-bench", items_per_row(source, images, _cv_bench_item))


def _cv_bench_item(number: int, row: Row, split: str) -> BenchmarkItem:
    options = row.option_list("choices")
    index = row.required("idx")
    kind = row.text("type", required=False)
    return BenchmarkItem(
        item_id=f"cv-bench-{kind + '-' if kind else ''}{index}",
        image=row.image("image", required=False) or row.image("filename"),
        question=row.required("question"), label=row.gold_letter("answer", options), dataset="cv-bench",
        split=split, options=options, category=row.text("task", required=False),
        extra={"l2_category": kind, "source": row.text("source", required=False)})


def read_ai2d(source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """AI2D rows → lettered items (the answer is the gold option's index)."""
    return BenchmarkRead("ai2d", items_per_row(source, images, _ai2d_item))


def _ai2d_item(number: int, row: Row, split: str) -> BenchmarkItem:
    options = row.option_list("options")
    return BenchmarkItem(
        item_id=f"ai2d-{split}-{number:05d}", image=row.image("image"), question=row.required("question"),
        label=row.index_letter("answer", options), dataset="ai2d", split=split, options=options)
