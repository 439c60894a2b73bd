"""SugarCrepe (Hsieh et al. 2023) JSON files → labelled pairs.

Format (``data/{add_att,add_obj,replace_att,replace_obj,replace_rel,swap_att,swap_obj}.json``): a JSON object
``{"0": {"filename": "000000565045.jpg", "caption": TRUE, "negative_caption": FALSE}, ...}``; images are COCO
val2017. Each entry gives one positive (filename, caption) and one negative (filename, negative_caption).
Captions have no ids, so the caption key is the text.
"""

from __future__ import annotations

from pathlib import Path

from vlaudit.errors import InputError
from vlaudit.files import read_json
from vlaudit.records import LabelledPair
from vlaudit.sources.rows import ImageFolder, dataset_rows, is_dataset_source


def read_sugarcrepe(path: str | Path, *, images: ImageFolder | None = None, warnings: list[str] | None = None
                    ) -> list[LabelledPair]:
    """Two labelled pairs per entry: (filename, caption, 1) and (filename, negative_caption, 0).

    An entry whose negative caption equals its caption (whitespace aside) is left out with a one-line message
    appended to ``warnings``; without a ``warnings`` list it is an :class:`InputError`.

    A dataset source (:mod:`vlaudit.sources.rows`) gives one entry per row (keys ``"0"``, ``"1"``, … in row
    order) with the columns ``filename`` (or an image column), ``caption`` and ``negative_caption``."""
    path = Path(path)
    if is_dataset_source(path):
        data = {str(number - 1): row for number, row in dataset_rows(path, images=images, image_field="filename")}
    else:
        data = read_json(path)
    refuse_sugarcrepe_pp(data, path)
    if not isinstance(data, dict) or not data:
        raise InputError('expected a non-empty JSON object {"0": {filename, caption, negative_caption}, ...}',
                         path=path)
    pairs = []
    skipped: list[str] = []
    for key, entry in data.items():
        if not isinstance(entry, dict):
            raise InputError("expected an object", path=path, record=f"entry {key}")
        for field in ("filename", "caption", "negative_caption"):
            if not isinstance(entry.get(field), str) or not entry[field].strip():
                raise InputError("missing or empty", path=path, record=f"entry {key}", field=field)
        if " ".join(entry["negative_caption"].split()) == " ".join(entry["caption"].split()):
            skipped.append(str(key))
            continue
        image = entry["filename"]
        pairs.append(LabelledPair(image, entry["caption"], 1, entry["caption"]))
        pairs.append(LabelledPair(image, entry["negative_caption"], 0, entry["negative_caption"]))
    if skipped:
        shown = ", ".join(skipped[:3]) + (f" and {len(skipped) - 3} more" if len(skipped) > 3 else "")
        message = (f"{path}: entry {shown}: field 'negative_caption' equals 'caption' (a pair cannot be both "
                   f"positive and negative); {len(skipped)} entr{'y' if len(skipped) == 1 else 'ies'} left out")
        if warnings is None:
            raise InputError(message)
        warnings.append(message)
    if not pairs:
        raise InputError("no entry left with a negative caption unlike its caption", path=path)
    return pairs


def refuse_sugarcrepe_pp(data: object, path: str | Path) -> None:
    """A SugarCrepe++ file (entries with ``caption2``, Sri-Harsha/scpp data/*.json) is refused by name: read as
    SugarCrepe it would silently drop the second positive caption."""
    entries = data.values() if isinstance(data, dict) else data if isinstance(data, list) else ()
    for entry in entries:
        if isinstance(entry, dict) and "caption2" in entry:
            raise InputError("not a SugarCrepe file: this is a SugarCrepe++ file (caption, caption2, "
                             "negative_caption); read it as the suite 'sugarcrepe-pp', which keeps caption2",
                             path=path)
        break


def is_sugarcrepe(data: object) -> bool:
    """Whether parsed JSON has the SugarCrepe shape (first entry has filename/caption/negative_caption)."""
    if not isinstance(data, dict) or not data:
        return False
    first = next(iter(data.values()))
    return isinstance(first, dict) and {"filename", "caption", "negative_caption"} <= set(first)
