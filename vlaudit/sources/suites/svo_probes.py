"""SVO-Probes (Hendricks & Nematzadeh 2021) as published → :class:`~vlaudit.records.SuiteRead`.

Layout (deepmind/svo_probes @ 206219e : svo_probes.csv, README.md): a CSV with the columns ``sentence,
pos_triplet, neg_triplet, subj_neg, verb_neg, obj_neg, pos_image_id, neg_image_id`` (plus ``pos_url,
neg_url`` and a leading unnamed index in some copies). Each row is one sentence with a positive and a negative
image; the three flags say what the negative changes. The official notebook (probing_image_text_models.ipynb)
scores only the rows with exactly one flag set (``subj_neg & ~obj_neg & ~verb_neg``, ...): the reader keeps
those, subset ``subj`` / ``verb`` / ``obj``, and counts the rest as left out. Each item: images
``(pos, neg)`` named ``<image id><image_suffix>`` (the images are downloaded from ``image_urls.txt``; name
them by id), one text, the sentence; positive ``(0, 0)``.
"""

from __future__ import annotations

import csv
from pathlib import Path

from vlaudit.errors import InputError
from vlaudit.records import SuiteImage, SuiteItem, SuiteRead
from vlaudit.sources.suites.common import counts, image_path, refuse

SUITE = "svo-probes"
COLUMNS = ("sentence", "pos_triplet", "neg_triplet", "subj_neg", "verb_neg", "obj_neg", "pos_image_id",
           "neg_image_id")
LEFT_OUT = "not exactly one of subj_neg/verb_neg/obj_neg"
_FLAGS = {"true": True, "1": True, "false": False, "0": False}


def _flag(value: str | None, *, path: Path, record: str, field: str) -> bool:
    flag = _FLAGS.get((value or "").strip().lower())
    if flag is None:
        raise InputError(f"expected True or False, got {value!r}", path=path, record=record, field=field)
    return flag


def _image_id(value: str | None, *, path: Path, record: str, field: str) -> str:
    text = (value or "").strip()
    if text.endswith(".0") and text[:-2].isdigit():  # a pandas float export of an integer id
        text = text[:-2]
    if not text.isdigit():
        raise InputError(f"expected an integer image id, got {value!r}", path=path, record=record, field=field)
    return text


def read_svo_probes(path: str | Path, *, image_suffix: str = ".jpg") -> SuiteRead:
    """The scored rows of ``svo_probes.csv`` (module docstring); ``record`` is ``row N`` (1-based data row) and
    ``item_id`` the 0-based row index (the notebook's ``df.index``)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("file not found", path=path)
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        header = [name for name in (reader.fieldnames or []) if name]
        missing = [name for name in COLUMNS if name not in header]
        if missing:
            raise refuse(path, "SVO-Probes", "a CSV with the columns " + ", ".join(COLUMNS),
                         f"a table with the columns {header[:8]} (no {', '.join(missing[:3])})")
        rows = list(reader)
    items: list[SuiteItem] = []
    dropped = 0
    for index, row in enumerate(rows):
        record = f"row {index + 1}"
        flags = {name: _flag(row.get(f"{name}_neg"), path=path, record=record, field=f"{name}_neg")
                 for name in ("subj", "verb", "obj")}
        if sum(flags.values()) != 1:
            dropped += 1
            continue
        sentence = (row.get("sentence") or "").strip()
        if not sentence:
            raise InputError("missing or empty text", path=path, record=record, field="sentence")
        ids = [_image_id(row.get(field), path=path, record=record, field=field)
               for field in ("pos_image_id", "neg_image_id")]
        images = tuple(SuiteImage(image_path(f"{value}{image_suffix}", path=path, record=record, name=field))
                       for value, field in zip(ids, ("pos_image_id", "neg_image_id"), strict=True))
        subset = next(name for name, on in flags.items() if on)
        items.append(SuiteItem(SUITE, str(index), subset, images, (sentence,), ((0, 0),), record,
                               {"pos_triplet": row.get("pos_triplet"), "neg_triplet": row.get("neg_triplet"),
                                "pos_image_id": ids[0], "neg_image_id": ids[1]}))
    if not items:
        raise InputError("no row has exactly one of subj_neg/verb_neg/obj_neg set", path=path)
    return SuiteRead(SUITE, str(path), items, counts(len(rows), len(items), {LEFT_OUT: dropped}),
                     (f"images are named <image id>{image_suffix} in the images folder",))
