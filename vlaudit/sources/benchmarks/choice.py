"""Multiple-choice benchmarks as released → lettered ITEMS: MMStar, MMBench, SEED-Bench, ScienceQA.

Options are kept as stored, in order, lettered A, B, ...; the label is the gold letter.

* **MMStar** — the Hub release ``Lin-Chen/MMStar`` (``mmstar.parquet``, split ``val``): ``index, question,
  image (Image), answer (letter), category, l2_category, meta_info``, the options inside the question as
  ``"...\\nOptions: A: ..., B: ..., C: ..., D: ..."`` or, in the 346 questions taken from MathVista and MMMU,
  ``"...\\nChoices:\\n(A) ...\\n(B) ..."``, or in 7 MathVista questions ``"...\\n(A) ...\\n(B) ..."`` with neither
  header (split off here: the question keeps the text before ``Options:`` / ``Choices:`` / ``(A)``; the
  headerless rows are counted in a note); or ``MMStar.tsv`` (VLMEvalKit: options in columns ``A``–``D``, base64 ``image``).
* **MMBench** — ``lmms-lab/MMBench`` (configs ``en``, ``cn``, ``cc``; splits ``dev``, ``test``): ``index,
  question, hint, answer, A, B, C, D, (E), category, image, source, L2-category, comment, split``; or the
  OpenCompass/VLMEvalKit TSV (``MMBench_DEV_EN.tsv`` …: ``index, question, hint, A … D, answer, category,
  l2-category, image`` (base64), ``source, split``). The options are the letter columns with a value, as
  VLMEvalKit reads them (an empty middle one skipped, the rest lettered on); the test split has no answers
  (label null). ``extra["source_index"]`` is the release's ``index``. The published CircularEval copies
  (index + k·10⁶, options rotated) carry ``circular_id`` and ``rotation`` (:func:`circular_groups`).
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
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from vlaudit.sources.benchmarks.release import (
    PANDAS_NA_TEXT,
    BenchmarkRead,
    Row,
    release_records,
    split_name,
    unique_ids,
)
from vlaudit.sources.items import BenchmarkItem
from vlaudit.sources.rows import ImageFolder

#: SEED-Bench's evaluation dimensions by ``question_type_id`` (its DATASET.md); 10–12 are the video part
SEED_DIMENSIONS = {1: "Scene Understanding", 2: "Instance Identity", 3: "Instance Attributes",
                   4: "Instance Location", 5: "Instances Counting", 6: "Spatial Relation",
                   7: "Instance Interaction", 8: "Visual Reasoning", 9: "Text Understanding",
                   10: "Action Recognition", 11: "Action Prediction", 12: "Procedure Understanding"}
SEED_IMAGE_DIMENSIONS = range(1, 10)
_EMBEDDED_OPTION = "Options:"
_EMBEDDED_CHOICES = "Choices:"
#: what may precede a bare ``(A)``/``(B)`` option of a question without a header: a line start, else a space
_BARE_OPTION_SEPARATORS = (r"(?:^|\n)[ \t]*", r"(?:^|\s)")
#: MMBench's published CircularEval copy k of question i has index i + k·10⁶ (VLMEvalKit: ``index % 1e6``)
CIRCULAR_OFFSET = 1_000_000


def embedded_options(row: Row, name: str = "question") -> tuple[str, tuple[str, ...]]:
    """MMStar's options inside the question, in either of its two layouts → ``(question, options)``:
    ``"question\\nOptions: A: x, B: y, ..."`` (most rows) or MathVista's ``"...\\nChoices:\\n(A) x\\n(B) y"`` (346
    of the 1,500). The question keeps the text before ``Options:`` / ``Choices:``."""
    text = row.required(name)
    at_options, at_choices = text.rfind(_EMBEDDED_OPTION), text.rfind(_EMBEDDED_CHOICES)
    if at_options < 0 and at_choices < 0:
        return _headerless_options(row, text, name)
    if at_choices > at_options:
        at, body = at_choices, text[at_choices + len(_EMBEDDED_CHOICES):]
        starts = _option_starts(body, lambda k, letter: [rf"(?:^|\n)\s*\({letter}\)\s*"])
    else:
        at, body = at_options, text[at_options + len(_EMBEDDED_OPTION):]
        # "B: " inside an option's text is not a separator when the published ", B: " follows
        starts = _option_starts(body, lambda k, letter: [rf"^\s*{letter}:\s*"] if k == 0
                                else [rf",\s*{letter}:\s*", rf"\s+{letter}:\s*"])
    if len(starts) < 2:
        raise row.error("the question's option list has fewer than two lettered options", name)
    options = [body[match.end():(starts[k + 1].start() if k + 1 < len(starts) else len(body))].strip()
               for k, match in enumerate(starts)]
    return text[:at].rstrip(), row.checked_options(options, name)


def _headerless_options(row: Row, text: str, name: str) -> tuple[str, tuple[str, ...]]:
    """MathVista's ``(A) x`` options written with neither ``Options:`` nor ``Choices:`` before them (7 of MMStar's
    1,500 questions): the list starts at the last ``(A)`` that opens a line (else the last one after a space)
    and is followed by ``(B)``; the question keeps the text before it."""
    for separator in _BARE_OPTION_SEPARATORS:
        def pattern(k: int, letter: str, separator: str = separator) -> list[str]:
            return [rf"{separator}\({letter}\)\s*"]

        for match in reversed(list(re.finditer(rf"{separator}\(A\)", text))):
            body = text[match.start():]
            starts = _option_starts(body, pattern)
            if len(starts) >= 2:
                options = [body[m.end():(starts[k + 1].start() if k + 1 < len(starts) else len(body))].strip()
                           for k, m in enumerate(starts)]
                return text[:match.start()].rstrip(), row.checked_options(options, name)
    raise row.error("no 'Options:', 'Choices:' or '(A) … (B) …' option list in the question (MMStar lists the "
                    "options there)", name)


def _option_starts(body: str, patterns: Callable[[int, str], list[str]]) -> list[re.Match[str]]:
    """Where each lettered option starts, A first, each letter searched after the previous one (the first
    of ``patterns(k, letter)`` that matches wins)."""
    starts: list[re.Match[str]] = []
    position = 0
    for k, letter in enumerate("ABCDEFGHIJ"):
        match = next((m for p in patterns(k, letter) if (m := re.compile(p).search(body, position))), None)
        if match is None:
            break
        starts.append(match)
        position = match.end()
    return starts


def read_mmstar(source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """MMStar rows → lettered items (category and l2_category as released)."""
    rows = release_records(source, images)
    split = split_name(source)
    items, records, headerless = [], [], []
    for _, row in rows:
        columns = None
        if row.has("A"):
            question, (options, columns) = row.required("question"), row.column_options()
        else:
            question, options = embedded_options(row)
            if not any(header in row.required("question") for header in (_EMBEDDED_OPTION, _EMBEDDED_CHOICES)):
                headerless.append(row.record)
        index = row.required("index")
        items.append(BenchmarkItem(
            item_id=f"mmstar-{index}", image=row.image("image"), question=question,
            label=row.gold_letter("answer", options, columns=columns), dataset="mmstar", split=split, options=options,
            category=row.text("category", required=False),
            extra={"l2_category": row.first(("l2_category", "l2-category"), required=False),
                   "source_index": index}))
        records.append(row.record)
    notes = [f"{len(headerless)} question(s) list their options as '(A) …' with neither 'Options:' nor 'Choices:' "
             f"(MathVista's layout; e.g. {headerless[0]}); read as lettered options"] if headerless else []
    return BenchmarkRead("mmstar", unique_ids(items, records, str(source)), notes=notes)


def read_mmbench(source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """MMBench rows (Hub release or VLMEvalKit TSV) → lettered items with hint, category and l2_category; the
    published CircularEval copies (index + k·10⁶) grouped with their question (:func:`circular_groups`)."""
    rows = release_records(source, images)
    split = split_name(source)
    items, records, notes, relabelled = [], [], [], []
    for _, row in rows:
        options, columns = row.column_options()
        if list(columns) != list(columns.values()):
            relabelled.append(f"{row.record}: options {', '.join(columns)} (an empty option between them) are lettered "
                         f"{', '.join(columns.values())} here, the gold answer with them")
        missing = [letter for letter in columns if str(row.raw.get(letter)).strip() in PANDAS_NA_TEXT]
        if missing:
            notes.append(f"{row.record}: option {', '.join(missing)} reads 'None'/'NA', which pandas (VLMEvalKit) "
                         f"reads as no option; kept here as the option's text")
        index = row.required("index")
        items.append(BenchmarkItem(
            item_id=f"mmbench-{index}", image=row.image("image"), question=row.required("question"),
            label=row.gold_letter("answer", options, columns=columns), dataset="mmbench", split=split,
            options=options, hint=row.text("hint", required=False), category=row.text("category", required=False),
            extra={"l2_category": row.first(("L2-category", "l2-category", "l2_category"), required=False),
                   "source_index": index, "source": row.text("source", required=False)}))
        records.append(row.record)
    items, circular_notes, circular_warnings = circular_groups(unique_ids(items, records, str(source)))
    return BenchmarkRead("mmbench", items, notes=_first_five(notes) + circular_notes,
                         warnings=_first_five(relabelled) + circular_warnings)


def _first_five(lines: list[str]) -> list[str]:
    return lines[:5] + ([f"... and {len(lines) - 5} more such rows"] if len(lines) > 5 else [])


def _rotation(copy: tuple[str, ...], main: tuple[str, ...]) -> int | None:
    """j with ``copy[i] == main[(i + j) % K]`` (the rotation :mod:`vlaudit.builders.circular` writes), or None."""
    k = len(main)
    turns = [j for j in range(k) if len(copy) == k and all(copy[i] == main[(i + j) % k] for i in range(k))]
    return turns[0] if turns else None


def circular_groups(items: list[BenchmarkItem]) -> tuple[list[BenchmarkItem], list[str], list[str]]:
    """MMBench's published CircularEval copies grouped as VLMEvalKit's ``mcq_circular_eval`` groups them.

    A release that holds copies (an ``index`` ≥ 10⁶) gives every row ``circular_id`` = ``mmbench-{index mod
    10⁶}`` and ``rotation`` = how far its options are rotated from the row whose index is that group's
    (0 for that row itself; None where the options are no rotation of it, or that row is missing — VLMEvalKit
    then drops the question from CircularEval, and so does the report). Without copies items are unchanged
    (``vca score --circular`` then writes the rotations). Returns the items, the notes and the warnings
    (rotations missing or unread: CircularEval then scores fewer questions than the release holds)."""
    indexes = {item.item_id: _integer(item.extra.get("source_index")) for item in items}
    if not any(index is not None and index >= CIRCULAR_OFFSET for index in indexes.values()):
        return items, [], []
    main = {index: item for item in items if (index := indexes[item.item_id]) is not None and index < CIRCULAR_OFFSET}
    out, orphans, unread = [], set(), 0
    for item in items:
        index = indexes[item.item_id]
        if index is None:
            out.append(item)
            continue
        group = main.get(index % CIRCULAR_OFFSET)
        rotation = None if group is None else _rotation(item.options or (), group.options or ())
        if group is None:
            orphans.add(index % CIRCULAR_OFFSET)
        elif rotation is None:
            unread += 1
        out.append(replace(item, extra={**item.extra, "circular_id": f"mmbench-{index % CIRCULAR_OFFSET}",
                                         "rotation": rotation}))
    notes = [f"CircularEval: {len(main)} questions with their published copies (index + k·10⁶)"]
    warnings = []
    if orphans:
        warnings.append(f"CircularEval: {len(orphans)} question(s) have copies but no row of their own "
                     f"(e.g. index {min(orphans)}); VLMEvalKit leaves them out of CircularEval, and so does the report")
    if unread:
        warnings.append(f"CircularEval: {unread} copies whose options are no rotation of their question's; they "
                        f"count in its group, not in a rotation's row")
    return out, notes, warnings


def _integer(value: object) -> int | None:
    text = str(value).strip() if value is not None else ""
    return int(text) if re.fullmatch(r"[0-9]{1,12}", text) else None


def _seed_dimension(row: Row) -> int:
    text = row.required("question_type_id")
    if not re.fullmatch(r"[0-9]{1,3}", text) or int(text) not in SEED_DIMENSIONS:
        raise row.error(f"expected a question_type_id 1 to 12, got {text!r:.20}", "question_type_id")
    return int(text)


def _seed_image_question(record: dict[str, Any]) -> bool:
    return str(record.get("data_type") or "image").strip().lower() == "image"


def read_seed_bench(source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """SEED-Bench rows → lettered items of the image part (video questions excluded, their frames unwritten)."""
    rows = release_records(source, images, wanted=_seed_image_question)
    split = split_name(source)
    read = BenchmarkRead("seed-bench", [])
    records = []
    for _, row in rows:
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
    unique_ids(read.items, records, str(source))
    return read


def _scienceqa_image(row: Row) -> str | None:
    image = row.image("image", required=False)
    if image is None or not row.has("split") or "/" in image:
        return image
    # the authors' problems.json names the file inside images/{split}/{id}/
    return row.relative_path(f"{row.required('split')}/{row.required('id')}/{image}", "image")


def read_scienceqa(source: str | Path, *, images: ImageFolder | None = None) -> BenchmarkRead:
    """ScienceQA rows → lettered items with an image (ScienceQA-IMG); the others are excluded."""
    rows = release_records(source, images)
    split = split_name(source)
    read = BenchmarkRead("scienceqa", [])
    records = []
    for number, row in rows:
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
    unique_ids(read.items, records, str(source))
    return read
