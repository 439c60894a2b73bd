"""MMVP-VLM (Tong et al., 2024): the benchmark's ``Questions.csv`` as the official script reads it.

Layout (tsb0601/MMVP @ 7635005 : scripts/evaluate_vlm.py, ``benchmark_model``; README.md "MMVP VLM Benchmark"):
a CSV whose first row is a header (skipped, whatever it says) and whose rows are read positionally as
``qid, type, statement``; **consecutive rows form a pair** (rows 1-2, 3-4, ...; an unpaired last row is left
out, as the script's ``break`` does). Both images of a pair are ``<type of the first row>/<qid>.jpg`` under the
images folder (``MMVP_VLM_Images``), and the model sees ``"a photo of " + statement`` — so that is the text kept in
:attr:`SuiteItem.texts` (the bare statement is in ``extra``).

One :class:`~vlaudit.records.SuiteItem` per pair: ``images = (qid1.jpg, qid2.jpg)``, ``texts = (statement1,
statement2)``; the ground truth is the script's ``gt = "img1" if qid % 2 == 1 else "img2"`` for each statement, so
the published file (odd qid first) gives ``positives = ((0, 0), (1, 1))``, a native 2×2 block. ``subset`` is the
pattern the script scores the pair under: ``CATEGORIES[pair index // 15]`` (it assigns patterns **by position**,
15 pairs each, not from the type column; a 136th pair has no pattern there and is refused). Where the type
column changes inside a block of 15 the read carries a note. The MMVP (MLLM) ``Questions.csv`` (``Index,
Question, Options, Correct Answer``) and other tables are refused by name.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError
from vlaudit.records import SuiteImage, SuiteItem, SuiteRead
from vlaudit.sources.suites.common import counts, image_path, refuse

SUITE = "mmvp-vlm"
TITLE = "MMVP-VLM"
LAYOUT = "Questions.csv: a header, then rows qid, type, statement; consecutive rows form a pair"
PROMPT = "a photo of "
PAIRS_PER_PATTERN = 15
#: the official script's patterns, in its order (tsb0601/MMVP @ 7635005 : scripts/evaluate_vlm.py)
CATEGORIES = ("Orientation and Direction", "Presence of Specific Features", "State and Condition",
              "Quantity and Count", "Positional and Relational Context", "Color and Appearance",
              "Structural Characteristics", "Texts", "Viewpoint and Perspective")


def _rows(path: Path) -> list[list[str]]:
    if not path.is_file():
        raise InputError("file not found" if not path.exists() else "not a file", path=path)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            return [row for row in csv.reader(handle) if row]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"cannot read as CSV: {exc}", path=path) from exc


def read_mmvp(path: Path, **options: Any) -> SuiteRead:
    """The pairs of an MMVP-VLM ``Questions.csv`` (see the module docstring); no options."""
    if options:
        raise InputError(f"MMVP-VLM takes no options; got {sorted(options)}", path=path)
    path = Path(path)
    rows = _rows(path)
    if not rows or len(rows[0]) != 3:
        found = f"a header of {len(rows[0])} columns {rows[0][:5]}" if rows else "an empty file"
        if rows and [name.strip().lower() for name in rows[0][:2]] == ["index", "question"]:
            found += " (the MMVP MLLM benchmark's Questions.csv, not MMVP-VLM's)"
        raise refuse(path, TITLE, LAYOUT, found)
    body = rows[1:]
    items: list[SuiteItem] = []
    notes: list[str] = []
    for start in range(0, len(body) - 1, 2):
        pair = []
        for offset in (0, 1):
            row, record = body[start + offset], f"row {start + offset + 2}"
            if len(row) != 3:
                raise InputError(f"expected 3 columns (qid, type, statement), found {len(row)}", path=path,
                                 record=record)
            qid, kind, statement = (value.strip() for value in row)
            if not qid.isdigit():
                raise InputError(f"question id {qid!r} is not an integer", path=path, record=record, field="qid")
            if not statement:
                raise InputError("missing or empty statement", path=path, record=record, field="statement")
            pair.append((int(qid), kind, statement))
        (qid1, type1, statement1), (qid2, type2, statement2) = pair
        index = start // 2
        if index >= len(CATEGORIES) * PAIRS_PER_PATTERN:
            raise InputError(f"pair {index + 1} has no pattern: the official script scores 9 patterns of 15 pairs",
                             path=path, record=f"row {start + 2}")
        record = f"rows {start + 2}-{start + 3}"
        images = tuple(SuiteImage(image_path(f"{type1}/{qid}.jpg", path=path, record=record, name="type"))
                       for qid in (qid1, qid2))
        truth = tuple(0 if qid % 2 == 1 else 1 for qid in (qid1, qid2))
        items.append(SuiteItem(
            suite=SUITE, item_id=f"{qid1}-{qid2}", subset=CATEGORIES[index // PAIRS_PER_PATTERN], images=images,
            texts=(PROMPT + statement1, PROMPT + statement2), positives=((truth[0], 0), (truth[1], 1)),
            record=record, extra={"type": type1, "type_2": type2, "statements": (statement1, statement2)}))
    blocks: dict[str, set[str]] = {}
    for item in items:
        blocks.setdefault(item.subset, set()).add(str(item.extra["type"]))
    mixed = [name for name, kinds in blocks.items() if len(kinds) > 1]
    if mixed:
        notes.append(f"the type column changes inside the official pattern block(s) {mixed}: the official script "
                     "assigns patterns by position (15 pairs each), as vlaudit does")
    unpaired = len(body) % 2
    if unpaired:
        notes.append(f"row {len(body) + 1} has no second row and is left out, as the official script does")
    return SuiteRead(suite=SUITE, source=str(path), items=items,
                     counts=counts(len(body), 2 * len(items), {"unpaired last row": unpaired}), notes=tuple(notes))
