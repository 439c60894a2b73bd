"""Multiple-choice benchmarks as released → lettered ITEMS: MMStar, MMBench, SEED-Bench, ScienceQA.

Options are kept as stored, in order, lettered A, B, ...; the label is the gold letter.

* **MMStar** — the Hub release ``Lin-Chen/MMStar`` (``mmstar.parquet``, split ``val``): ``index, question,
  image (Image), answer (letter), category, l2_category, meta_info``, the options inside the question as
  ``"...\\nOptions: A: ..., B: ..., C: ..., D: ..."`` (split off here: the question keeps the text before
  ``Options:``); or ``MMStar.tsv`` (VLMEvalKit: options in columns ``A``–``D``, base64 ``image``).
* **MMBench** — ``lmms-lab/MMBench`` (configs ``en``, ``cn``, ``cc``; splits ``dev``, ``test``): ``index,
  question, hint, answer, A, B, C, D, (E), category, image, source, L2-category, comment, split``; or the
  OpenCompass/VLMEvalKit TSV (``MMBench_DEV_EN.tsv`` …: ``index, question, hint, A … D, answer, category,
  l2-category, image`` (base64), ``source, split``). Empty option cells (``nan``) end the options; the test
  split has no answers (label null). ``extra["source_index"]`` is the release's ``index``.
* **SEED-Bench** (image part) — ``lmms-lab/SEED-Bench`` (split ``test``): ``answer, choice_a … choice_d,
  data_id, data_type, question, question_id, question_type_id, image`` (a list of Images); or the authors'
  ``SEED-Bench.json`` (``{"questions": [...]}``, the image file ``data_id``). Video questions
  (``data_type`` video, dimensions 10–12) are excluded. Category: the evaluation dimension.
* **ScienceQA** (items with an image, ScienceQA-IMG) — ``derek-thomas/ScienceQA``: ``image, question,
  choices, answer`` (0-based index), ``hint, task, grade, subject, topic, category, skill, lecture,
  solution``; or the authors' ``problems.json`` (id → problem, image ``{split}/{id}/{image}``). Items
  without an image are excluded. Category ``subject``, ``extra["l2_category"]`` ``topic``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from vlaudit.sources.benchmarks.release import BenchmarkRead, Row, release_rows, split_name, unique_ids
from vlaudit.sources.items import BenchmarkItem
from vlaudit.sources.rows import ImageFolder

#: SEED-Bench's evaluation dimensions by ``question_type_id`` (its DATASET.md); 10–12 are the video part
SEED_DIMENSIONS = {1: "Scene Understanding", 2: "Instance Identity", 3: "Instance Attributes",
                   4: "Instance Location", 5: "Instances Counting", 6: "Spatial Relation",
                   7: "Instance Interaction", 8: "Visual Reasoning", 9: "Text Understanding",
                   10: "Action Recognition", 11: "Action Prediction", 12: "Procedure Understanding"}
SEED_IMAGE_DIMENSIONS = range(1, 10)
_EMBEDDED_OPTION = "Options:"


def _images(images: ImageFolder | None) -> ImageFolder:
    return images if images is not None else ImageFolder(None)


def embedded_options(row: Row, name: str = "question") -> tuple[str, tuple[str, ...]]:
    """MMStar's ``"question\\nOptions: A: x, B: y, ..."`` → ``(question, (x, y, ...))``."""
    text = row.required(name)
    at = text.rfind(_EMBEDDED_OPTION)
    if at < 0:
        raise row.error("no 'Options:' in the question (MMStar lists the options there)", name)
    body = text[at + len(_EMBEDDED_OPTION):]
    starts = []
    position = 0
    for k, letter in enumerate("ABCDEFGHIJ"):
        pattern = rf"^\s*{letter}:\s*" if k == 0 else rf"(?:,\s*|\s+){letter}:\s*"
        match = re.compile(pattern).search(body, position)
        if match is None:
            break
        starts.append(match)
        position = match.end()
    if len(starts) < 2:
        raise row.error("the question's 'Options:' list has fewer than two lettered options", name)
    options = [body[match.end():(starts[k + 1].start() if k + 1 < len(starts) else len(body))].strip()
               for k, match in enumerate(starts)]
    return text[:at].rstrip(), row.checked_options(options, name)


def read_mmstar(source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """MMStar rows → lettered items (category and l2_category as released)."""
    rows, noun = release_rows(source, _images(images))
    name, split = str(source), split_name(source)
    items, records = [], []
    for number, raw in rows:
        row = Row(raw, name, f"{noun} {number}")
        if row.has("A"):
            question, options = row.required("question"), row.lettered_options()
        else:
            question, options = embedded_options(row)
        index = row.required("index")
        items.append(BenchmarkItem(
            item_id=f"mmstar-{index}", image=row.image("image"), question=question,
            label=row.gold_letter("answer", options), dataset="mmstar", split=split, options=options,
            category=row.text("category", required=False),
            extra={"l2_category": row.first(("l2_category", "l2-category"), required=False),
                   "source_index": index}))
        records.append(row.record)
    return BenchmarkRead("mmstar", unique_ids(items, records, name))


def read_mmbench(source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """MMBench rows (Hub release or VLMEvalKit TSV) → lettered items with hint, category and l2_category."""
    rows, noun = release_rows(source, _images(images))
    name, split = str(source), split_name(source)
    items, records = [], []
    for number, raw in rows:
        row = Row(raw, name, f"{noun} {number}")
        options = row.lettered_options()
        index = row.required("index")
        items.append(BenchmarkItem(
            item_id=f"mmbench-{index}", image=row.image("image"), question=row.required("question"),
            label=row.gold_letter("answer", options), dataset="mmbench", split=split, options=options,
            hint=row.text("hint", required=False), category=row.text("category", required=False),
            extra={"l2_category": row.first(("L2-category", "l2-category", "l2_category"), required=False),
                   "source_index": index, "source": row.text("source", required=False)}))
        records.append(row.record)
    return BenchmarkRead("mmbench", unique_ids(items, records, name))


def _seed_dimension(row: Row) -> int:
    text = row.required("question_type_id")
    if not re.fullmatch(r"[0-9]{1,3}", text) or int(text) not in SEED_DIMENSIONS:
        raise row.error(f"expected a question_type_id 1 to 12, got {text!r:.20}", "question_type_id")
    return int(text)


def _seed_image_question(record: dict[str, Any]) -> bool:
    return str(record.get("data_type") or "image").strip().lower() == "image"


def read_seed_bench(source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """SEED-Bench rows → lettered items of the image part (video questions excluded, their frames unwritten)."""
    rows, noun = release_rows(source, _images(images), wanted=_seed_image_question)
    name, split = str(source), split_name(source)
    read = BenchmarkRead("seed-bench", [])
    records = []
    for number, raw in rows:
        row = Row(raw, name, f"{noun} {number}")
        dimension = _seed_dimension(row)
        data_type = (row.text("data_type", required=False) or "image").lower()
        if data_type != "image" or dimension not in SEED_IMAGE_DIMENSIONS:
            read.excluded.append({"record": row.record, "reason": "video question (the image part is read)"})
            continue
        options = row.checked_options([row.required(f"choice_{letter}") for letter in "abcd"], "choice_a")
        image = row.image("image", required=False) or row.image("data_id")
        question_id = row.required("question_id")
        read.items.append(BenchmarkItem(
            item_id=f"seed-bench-{question_id}", image=image, question=row.required("question"),
            label=row.gold_letter("answer", options), dataset="seed-bench", split=split, options=options,
            category=SEED_DIMENSIONS[dimension], extra={"question_id": question_id}))
        records.append(row.record)
    unique_ids(read.items, records, name)
    return read


def _scienceqa_image(row: Row) -> str | None:
    image = row.image("image", required=False)
    if image is None or not row.has("split") or "/" in image:
        return image
    # the authors' problems.json names the file inside images/{split}/{id}/
    return row.relative_path(f"{row.required('split')}/{row.required('id')}/{image}", "image")


def read_scienceqa(source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """ScienceQA rows → lettered items with an image (ScienceQA-IMG); the others are excluded."""
    rows, noun = release_rows(source, _images(images))
    name, split = str(source), split_name(source)
    read = BenchmarkRead("scienceqa", [])
    records = []
    for number, raw in rows:
        row = Row(raw, name, f"{noun} {number}")
        options = row.option_list("choices")
        label = row.index_letter("answer", options)
        image = _scienceqa_image(row)
        if image is None:
            read.excluded.append({"record": row.record, "reason": "no image (ScienceQA-IMG is the items with one)"})
            continue
        item_id = row.text("id", required=False) or f"{split}-{number:05d}"
        read.items.append(BenchmarkItem(
            item_id=f"scienceqa-{item_id}", image=image, question=row.required("question"), label=label,
            dataset="scienceqa", split=split, options=options, hint=row.text("hint", required=False),
            category=row.text("subject", required=False),
            extra={"l2_category": row.text("topic", required=False), "grade": row.text("grade", required=False),
                   "skill": row.text("skill", required=False)}))
        records.append(row.record)
    unique_ids(read.items, records, name)
    return read
