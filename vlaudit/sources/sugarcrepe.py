"""SugarCrepe (Hsieh et al. 2023) JSON files → labelled pairs.

Format (``data/{add_att,add_obj,replace_att,replace_obj,replace_rel,swap_att,swap_obj}.json``): a JSON object
``{"0": {"filename": "000000565045.jpg", "caption": TRUE, "negative_caption": FALSE}, ...}``; images are COCO
val2017. Each entry gives one positive (filename, caption) and one negative (filename, negative_caption).
Captions have no ids, so the caption key is the text.
"""

from __future__ import annotations

from pathlib import Path

from vlaudit.errors import InputError
from vlaudit.records import LabelledPair
from vlaudit.tables import read_json


def read_sugarcrepe(path: str | Path) -> list[LabelledPair]:
    """Two labelled pairs per entry: (filename, caption, 1) and (filename, negative_caption, 0)."""
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, dict) or not data:
        raise InputError('expected a non-empty JSON object {"0": {filename, caption, negative_caption}, ...}',
                         path=path)
    pairs = []
    for key, entry in data.items():
        if not isinstance(entry, dict):
            raise InputError("expected an object", path=path, record=f"entry {key}")
        for field in ("filename", "caption", "negative_caption"):
            if not isinstance(entry.get(field), str) or not entry[field].strip():
                raise InputError("missing or empty", path=path, record=f"entry {key}", field=field)
        image = entry["filename"]
        pairs.append(LabelledPair(image, entry["caption"], 1, entry["caption"]))
        pairs.append(LabelledPair(image, entry["negative_caption"], 0, entry["negative_caption"]))
    return pairs


def is_sugarcrepe(data: object) -> bool:
    """Whether parsed JSON has the SugarCrepe shape (first entry has filename/caption/negative_caption)."""
    if not isinstance(data, dict) or not data:
        return False
    first = next(iter(data.values()))
    return isinstance(first, dict) and {"filename", "caption", "negative_caption"} <= set(first)
