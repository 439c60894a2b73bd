"""2×2 benchmarks — Winoground, NaturalBench and a generic blocks JSONL — as rows → :class:`TwoByTwoBlock`.

Every example of these benchmarks is two images and two texts where text k is true of image k and false of
the other image: exactly one counterfactual pairing cycle (cycle paper §2.1), with matched pairs
(image_1, text_1), (image_2, text_2). The readers take *rows* (``(row number, dict)`` pairs, a source name
for errors) apart from opening a file, so any row source — a JSONL file, a Parquet export, a Hugging Face
dataset — feeds the same checks. A bad row is one :class:`InputError` naming source, row and field.

**Winoground** (official ``examples.jsonl``): ``id, caption_0, caption_1, image_0, image_1, tag,
secondary_tag, num_main_preds, collapsed_tag``; image k is ``DIR/{image_k}.png``; caption k describes image
k. The family is ``winoground-{collapsed_tag}`` (Object, Relation, Both in the release).

**NaturalBench** (the Hugging Face release ``BaiqiL/NaturalBench``, whose columns are ``Index, Image_0,
Image_1, Question_0, Image_0_Question_0, Image_1_Question_0, Question_1, Image_0_Question_1,
Image_1_Question_1, Question_Type`` (``Question Type`` in later revisions) ``, Source``): the official
scorer (``get_scores`` in the NaturalBench repository's ``naturalbench_vqa.py``) assumes the answers
``(Image_0_Question_0, Image_1_Question_0, Image_0_Question_1, Image_1_Question_1) = (Yes, No, No, Yes)``;
the mirror ``(No, Yes, Yes, No)`` is accepted with the questions swapped, anything else is an error. Only
``yes_no`` samples are blocks; ``multiple_choice`` samples are skipped and counted, so NaturalBench figures
computed from these blocks are the yes/no subset's, not the official overall figure. ``Image_k`` is a file
name relative to the images folder (or a dict with a ``path``, as a ``datasets`` Image column stores it
undecoded). The family is ``naturalbench-`` + :func:`slug` of ``Source`` (lower-cased and slugged;
``naturalbench`` without one).

**Generic blocks** (any other 2×2 set, e.g. EqBen): ``id, image_1, image_2, text_1, text_2`` with text k true
of image k and false of the other; optional ``tag`` (family ``blocks-{tag}``, else ``blocks``). Optional
``answers: "yes-no"`` marks texts that are yes/no questions scored by a yes/no margin, so ``cycles eval``
reports NaturalBench's metrics for them; the default reports Winoground's (comparisons only).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal, overload

from vlaudit.errors import InputError
from vlaudit.files import iter_jsonl, read_table, table_format
from vlaudit.sources.rows import HF_PREFIX, ImageFolder, dataset_rows

WINOGROUND = "winoground"
NATURALBENCH = "naturalbench"
BLOCKS = "blocks"
BENCHMARKS = (WINOGROUND, NATURALBENCH, BLOCKS)
# Which benchmark's own metrics a block gets: comparisons only (Winoground) or yes/no answers (NaturalBench).
METRIC_KINDS = (WINOGROUND, NATURALBENCH)

WINOGROUND_TAGS = ("tag", "secondary_tag", "num_main_preds", "collapsed_tag")
NATURALBENCH_ANSWERS = ("Image_0_Question_0", "Image_1_Question_0", "Image_0_Question_1", "Image_1_Question_1")
_YES_NO = {"yes": True, "no": False}

Rows = Iterable[tuple[int, Mapping[str, Any]]]


@dataclass(frozen=True)
class TwoByTwoBlock:
    """One benchmark example as a cycle: (image_1, text_1) and (image_2, text_2) are the true pairs."""

    benchmark: str
    metrics: str
    example_id: str
    family: str
    image_1: str
    image_2: str
    text_1: str
    text_2: str
    caption_1: str
    caption_2: str
    record: str
    tags: dict[str, Any] = field(default_factory=dict)


@dataclass
class ParsedBenchmark:
    """The blocks of one benchmark file and what was skipped (reason → count)."""

    blocks: list[TwoByTwoBlock]
    skipped: Counter


def slug(value: str) -> str:
    """A family-name fragment: lower case, runs of other characters as one ``-`` (``"Object"`` → ``object``)."""
    return re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-") or "untagged"


_IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".webp", ".bmp", ".gif", ".tif", ".tiff"}


class _Row:
    """Typed field access on one row; every failure names source, row and field."""

    def __init__(self, row: Mapping[str, Any], source: str, record: str) -> None:
        if not isinstance(row, Mapping):
            raise InputError("each row must be an object", path=source, record=record)
        self.row, self.source, self.record = row, source, record

    def error(self, message: str, name: str | None = None) -> InputError:
        return InputError(message, path=self.source, record=self.record, field=name)

    @overload
    def text(self, name: str, *, required: Literal[True] = True, ids: bool = False) -> str: ...

    @overload
    def text(self, name: str, *, required: bool, ids: bool = False) -> str | None: ...

    def text(self, name: str, *, required: bool = True, ids: bool = False) -> str | None:
        """A non-empty string (an integer too where ``ids``); None for an absent optional field."""
        value = self.row.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            if required:
                raise self.error("missing required field", name)
            return None
        if ids and isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str):
            raise self.error(f"expected text, got {type(value).__name__} {_short(value)}", name)
        return value.strip()

    def image(self, name: str, *, suffix: str = "") -> str:
        """An image file name relative to the images folder: a text value plus ``suffix`` (Winoground's ids
        name ``{id}.png``), or a ``datasets`` Image dict's ``path`` as it is."""
        value = self.row.get(name)
        if isinstance(value, Mapping):
            value = value.get("path")
            if not isinstance(value, str) or not value.strip():
                raise self.error("an image given as an object needs a 'path' (decode the images to files "
                                 "first)", name)
            value = value.strip()
        else:
            value = str(self.text(name))
            if PurePosixPath(value).suffix.lower() not in _IMAGE_SUFFIXES:  # a dataset image is named already
                value += suffix
        parts = PurePosixPath(value.replace("\\", "/"))
        if parts.is_absolute() or ".." in parts.parts or re.match(r"^[A-Za-z]:", value):
            raise self.error(f"image path {value!r} leaves the images folder", name)
        return value

    def tag_value(self, name: str) -> Any:
        """A tag as released (text, number or absent); a list or object is an error."""
        value = self.row.get(name)
        if isinstance(value, bool) or not isinstance(value, (str, int, float, type(None))):
            raise self.error(f"expected a text or number tag, got {type(value).__name__}", name)
        if isinstance(value, float) and value != value:
            raise self.error("NaN is not a tag", name)
        return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _unique(blocks: list[TwoByTwoBlock], source: str) -> list[TwoByTwoBlock]:
    seen: dict[str, str] = {}
    for block in blocks:
        if block.example_id in seen:
            raise InputError(f"example id {block.example_id!r} repeats {seen[block.example_id]}", path=source,
                             record=block.record, field="id")
        seen[block.example_id] = block.record
    return blocks


def _block(row: _Row, *, benchmark: str, metrics: str, example_id: str, family: str, images: tuple[str, str],
           texts: tuple[str, str], fields: tuple[str, str, str, str], tags: dict[str, Any]) -> TwoByTwoBlock:
    """Check the two images and two texts differ (a cycle needs both) and build the block."""
    if images[0] == images[1]:
        raise row.error("the two images are the same file; a 2×2 block needs two images", fields[1])
    if texts[0] == texts[1]:
        raise row.error("the two texts are the same; a 2×2 block needs two texts", fields[3])
    prefix = f"{benchmark}-{example_id}"
    return TwoByTwoBlock(benchmark=benchmark, metrics=metrics, example_id=example_id, family=family,
                         image_1=images[0], image_2=images[1], text_1=texts[0], text_2=texts[1],
                         caption_1=f"{prefix}-t1", caption_2=f"{prefix}-t2", record=row.record, tags=tags)


def winoground_blocks(rows: Rows, *, source: str, noun: str = "line") -> ParsedBenchmark:
    """Winoground rows (official ``examples.jsonl``) → one block per example (see the module docstring)."""
    blocks = []
    for number, raw in rows:
        row = _Row(raw, source, f"{noun} {number}")
        example_id = row.text("id", ids=True)
        images = (row.image("image_0", suffix=".png"), row.image("image_1", suffix=".png"))
        texts = (row.text("caption_0"), row.text("caption_1"))
        tags = {name: row.tag_value(name) for name in WINOGROUND_TAGS if name in row.row}
        collapsed = tags.get("collapsed_tag")
        family = f"{WINOGROUND}-{slug(str(collapsed))}" if collapsed not in (None, "") else WINOGROUND
        blocks.append(_block(row, benchmark=WINOGROUND, metrics=WINOGROUND, example_id=str(example_id),
                             family=family, images=images, texts=texts,
                             fields=("image_0", "image_1", "caption_0", "caption_1"), tags=tags))
    return ParsedBenchmark(_unique(blocks, source), Counter())


def _question_type(row: _Row) -> str:
    for name in ("Question_Type", "Question Type"):
        if row.row.get(name) is not None:
            return str(row.text(name)).lower().replace("-", "_").replace(" ", "_")
    return "yes_no"


# the build summary and console say it outright: the official overall figure also counts these samples
MULTIPLE_CHOICE_SKIPPED = ("multiple-choice samples (only yes/no samples are 2×2 blocks; NaturalBench figures "
                           "here are the yes/no subset's)")


def naturalbench_blocks(rows: Rows, *, source: str, noun: str = "line") -> ParsedBenchmark:
    """NaturalBench rows → one block per yes/no sample (multiple-choice samples are skipped and counted)."""
    blocks: list[TwoByTwoBlock] = []
    skipped: Counter[str] = Counter()
    for number, raw in rows:
        row = _Row(raw, source, f"{noun} {number}")
        kind = _question_type(row)
        if kind == "multiple_choice":
            skipped[MULTIPLE_CHOICE_SKIPPED] += 1
            continue
        if kind != "yes_no":
            raise row.error(f"unknown question type {kind!r}; expected yes_no or multiple_choice", "Question_Type")
        example_id = row.text("Index", ids=True, required=False) or str(number)
        images = (row.image("Image_0"), row.image("Image_1"))
        questions = (row.text("Question_0"), row.text("Question_1"))
        answers = []
        for name in NATURALBENCH_ANSWERS:
            answer = str(row.text(name)).lower().rstrip(".")
            if answer not in _YES_NO:
                raise row.error(f"expected Yes or No, got {_short(row.row.get(name))}", name)
            answers.append(_YES_NO[answer])
        if answers == [True, False, False, True]:
            texts = questions
        elif answers == [False, True, True, False]:
            texts = questions[::-1]  # Question_1 is the one true of Image_0
        else:
            shown = ", ".join("Yes" if a else "No" for a in answers)
            raise row.error(f"answers ({shown}) are not a 2×2 block: each question must be Yes on one image "
                            "and No on the other, opposite to the other question", "Image_1_Question_0")
        source_tag = row.tag_value("Source")
        family = f"{NATURALBENCH}-{slug(str(source_tag))}" if source_tag not in (None, "") else NATURALBENCH
        blocks.append(_block(row, benchmark=NATURALBENCH, metrics=NATURALBENCH, example_id=example_id,
                             family=family, images=images, texts=texts,
                             fields=("Image_0", "Image_1", "Question_0", "Question_1"),
                             tags={"Source": source_tag, "Question_Type": kind,
                                   "questions_swapped": answers[0] is False}))
    return ParsedBenchmark(_unique(blocks, source), skipped)


def generic_blocks(rows: Rows, *, source: str, noun: str = "line") -> ParsedBenchmark:
    """Generic 2×2 blocks JSONL rows → blocks (see the module docstring for the format)."""
    blocks = []
    for number, raw in rows:
        row = _Row(raw, source, f"{noun} {number}")
        example_id = row.text("id", ids=True)
        images = (row.image("image_1"), row.image("image_2"))
        texts = (row.text("text_1"), row.text("text_2"))
        tag = row.tag_value("tag")
        answers = row.text("answers", required=False) or "compare"
        if answers not in ("compare", "yes-no"):
            raise row.error(f"unknown answers {answers!r}; use compare (default) or yes-no", "answers")
        family = f"{BLOCKS}-{slug(str(tag))}" if tag not in (None, "") else BLOCKS
        blocks.append(_block(row, benchmark=BLOCKS, metrics=NATURALBENCH if answers == "yes-no" else WINOGROUND,
                             example_id=str(example_id), family=family, images=images,
                             texts=texts, fields=("image_1", "image_2", "text_1", "text_2"),
                             tags={} if tag is None else {"tag": tag}))
    return ParsedBenchmark(_unique(blocks, source), Counter())


BLOCKS_OF = {WINOGROUND: winoground_blocks, NATURALBENCH: naturalbench_blocks, BLOCKS: generic_blocks}


def file_rows(path: str | Path, images: ImageFolder | str | Path | None = None
              ) -> tuple[Iterator[tuple[int, dict[str, Any]]], str]:
    """The rows of a JSONL (numbered by line) or Parquet file (numbered by row), or of a Hugging Face dataset
    (``hf-dataset:…``, a ``save_to_disk`` folder), and that noun. A dataset's image columns are written once,
    content-addressed, into ``images`` (:func:`vlaudit.sources.rows.dataset_rows`)."""
    if str(path).startswith(HF_PREFIX) or Path(path).is_dir():
        folder = images if isinstance(images, ImageFolder) else ImageFolder(images)
        return dataset_rows(path, images=folder), "row"
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found" if not path.exists() else "not a file", path=path)
    fmt = table_format(path)
    if fmt == "parquet":
        return enumerate(read_table(path).to_pylist(), start=1), "row"
    if fmt != "jsonl":
        raise InputError(f"a 2×2 benchmark is read from JSONL or Parquet, not {fmt.upper()}", path=path)
    return iter_jsonl(path), "line"


def read_two_by_two(benchmark: str, path: str | Path, images: ImageFolder | str | Path | None = None
                    ) -> ParsedBenchmark:
    """Read a Winoground, NaturalBench or generic blocks file (JSONL or Parquet) or Hugging Face dataset (its
    images written into ``images``); an empty one is an error."""
    if benchmark not in BLOCKS_OF:
        raise InputError(f"unknown 2×2 benchmark {benchmark!r}; choose from {list(BENCHMARKS)}", field="benchmark")
    rows, noun = file_rows(path, images)
    parsed = BLOCKS_OF[benchmark](rows, source=str(path), noun=noun)
    if not parsed.blocks:
        raise InputError(f"no {benchmark} blocks in the file" + (f" (skipped: {dict(parsed.skipped)})"
                                                                 if parsed.skipped else ""), path=path)
    return parsed


def read_winoground(source: str | Path, *, images: ImageFolder | None = None) -> ParsedBenchmark:
    """Winoground's ``examples.jsonl`` (or its dataset) as 2×2 blocks."""
    return read_two_by_two(WINOGROUND, source, images)


def read_naturalbench(source: str | Path, *, images: ImageFolder | None = None) -> ParsedBenchmark:
    """NaturalBench (``BaiqiL/NaturalBench``: a dataset, or its Parquet / JSONL export) as 2×2 blocks."""
    return read_two_by_two(NATURALBENCH, source, images)


def read_blocks(source: str | Path, *, images: ImageFolder | None = None) -> ParsedBenchmark:
    """A generic 2×2 blocks JSONL (``id, image_1, image_2, text_1, text_2``; e.g. EqBen) as 2×2 blocks."""
    return read_two_by_two(BLOCKS, source, images)
