"""BLA (Chen et al. 2023) → :class:`~vlaudit.records.SuiteRead`, from the layout its evaluation code documents.

The release (``annotations/{active_passive,coordination,relative_clause}_captions.json``) is a Dropbox zip
that could not be obtained here; only printed examples are in the repository (shin-ee-chen/BLA @ 812685b :
dataset/demo/*.ipynb). The layout is the one the evaluation code reads (evaluation_models/clip/
test_clip_bla.py, evaluation_models/blip2/bla_utils.py ``read_json_file_as_dict``): a JSON list
``[{"image_id": ..., "caption_group": [{"True1", "True2", "False1", "False2", "predicate"?}, ...]}]``, of
which the code takes ``caption_group[0]`` only; or the test files' object ``{image_id: [True1, True2, False1,
False2]}`` (``preprocess_json_format``). Each item: image ``<image_id>.jpg``, texts ``(True1, True2, False1,
False2)`` in that order (the ranking metric's halves depend on it), positives ``(0, 0), (0, 1)``, subset = the
task (``active_passive`` / ``coordination`` / ``relative_clause`` from the file name, else its stem).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError
from vlaudit.files import read_json
from vlaudit.records import SuiteImage, SuiteItem, SuiteRead
from vlaudit.sources.suites.caption_rows import looks_like
from vlaudit.sources.suites.common import counts, image_path, refuse, text_field

SUITE = "bla"
FIELDS = ("True1", "True2", "False1", "False2")
_EXPECTED = ('a JSON list of {"image_id", "caption_group": [{"True1", "True2", "False1", "False2"}]} (or an '
             "object {image_id: [True1, True2, False1, False2]})")


def _task(path: Path) -> str:
    stem = path.stem
    return stem[: -len("_captions")] if stem.endswith("_captions") else stem


def _groups(data: Any, path: Path) -> list[tuple[str, Mapping[str, Any], int]]:
    """``[(image id, caption group, extra groups)]`` in file order; a look-alike is refused."""
    if isinstance(data, Mapping) and data and all(isinstance(v, list) and len(v) == 4 for v in data.values()):
        return [(str(key), dict(zip(FIELDS, value, strict=True)), 0) for key, value in data.items()]
    if not isinstance(data, list) or not data or not isinstance(data[0], Mapping) or "caption_group" not in data[0]:
        raise refuse(path, "BLA", _EXPECTED, looks_like(data))
    out = []
    for index, record in enumerate(data):
        where = f"item {index}"
        group = record.get("caption_group") if isinstance(record, Mapping) else None
        if not isinstance(group, list) or not group or not isinstance(group[0], Mapping):
            raise InputError("expected a non-empty list of caption groups", path=path, record=where,
                             field="caption_group")
        image_id = record.get("image_id")
        if isinstance(image_id, bool) or not isinstance(image_id, (str, int)) or not str(image_id).strip():
            raise InputError("missing image id", path=path, record=where, field="image_id")
        out.append((str(image_id).strip(), group[0], len(group) - 1))
    return out


def read_bla(path: str | Path, *, task: str | None = None) -> SuiteRead:
    """One item per image (module docstring); ``task`` overrides the subset name taken from the file name."""
    path = Path(path)
    data = read_json(path)
    groups = _groups(data, path)
    subset = task or _task(path)
    items = []
    extra_groups = 0
    for index, (image_id, group, more) in enumerate(groups):
        record = image_id if isinstance(data, Mapping) else f"item {index}"
        texts = tuple(text_field(group, name, path=path, record=record) for name in FIELDS)
        image = SuiteImage(image_path(f"{image_id}.jpg", path=path, record=record, name="image_id"))
        extra = {"predicate": group["predicate"]} if "predicate" in group else {}
        items.append(SuiteItem(SUITE, image_id, subset, (image,), texts, ((0, 0), (0, 1)), record, extra))
        extra_groups += more
    notes = ["read from the layout the evaluation code documents (no release file could be obtained here)"]
    if extra_groups:
        notes.append(f"{extra_groups} caption groups after the first are not read (the code takes "
                     "caption_group[0])")
    return SuiteRead(SUITE, str(path), items, counts(len(groups), len(items)), tuple(notes))
