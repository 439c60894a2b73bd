"""What's Up (Kamath et al. 2023) annotation files → typed rows, and the spatial caption parser.

* COCO-Spatial ``coco_qa_two_obj.json`` / ``coco_qa_one_obj.json``: a JSON list of
  ``[image_id (int), true_caption, false_caption]``; the image is ``val2017/{image_id:012d}.jpg``; captions look
  like ``"A photo of a dining table to the left of a refrigerator"``; the false caption uses the opposite
  preposition. Option 0 is the true caption, option 1 the false one.
* Controlled-A/B ``controlled_images_dataset.json``: a list of ``{image_path, caption_options}``; the first
  option is the true one (``"A beer bottle on a armchair"``, then *under*, *to the left of*, *to the right of*).

:func:`parse_spatial_caption` splits a caption into subject, relation and object. It never guesses: a caption
with no known relation phrase, or one that splits two different ways (e.g. two relation words), is returned as
unparsable with the reason, and callers report it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError
from vlaudit.files import read_json
from vlaudit.sources.names import norm_name, norm_text
from vlaudit.sources.rows import ImageFolder, dataset_rows, is_dataset_source

#: relation phrase as written → canonical relation (longest phrases first so the regex prefers them)
RELATION_PHRASES: dict[str, str] = {
    "to the left of": "left of", "on the left of": "left of", "at the left of": "left of", "left of": "left of",
    "to the right of": "right of", "on the right of": "right of", "at the right of": "right of",
    "right of": "right of",
    "in front of": "in front of", "behind": "behind",
    "on top of": "on", "above": "above", "over": "above", "below": "below", "beneath": "below",
    "under": "under", "on": "on",
}
_ALTS = "|".join(re.escape(p) for p in sorted(RELATION_PHRASES, key=len, reverse=True))
_PREFIX = r"^(?:an? (?:photo|picture|image) of )?(?:an? |the )?"
_LAZY = re.compile(_PREFIX + r"(?P<s>.+?) (?P<rel>" + _ALTS + r") (?:an? |the )(?P<o>.+?)[\s.]*$", re.IGNORECASE)
_GREEDY = re.compile(_PREFIX + r"(?P<s>.+) (?P<rel>" + _ALTS + r") (?:an? |the )(?P<o>.+?)[\s.]*$", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedCaption:
    """A caption split into subject, canonical relation, the relation phrase as written, and object."""

    subject: str
    relation: str
    phrase: str
    object: str


def parse_spatial_caption(caption: str) -> tuple[ParsedCaption | None, str | None]:
    """``(parsed, None)`` or ``(None, reason)``. See the module docstring for the no-guessing rule."""
    text = norm_text(str(caption))
    lazy = _LAZY.match(text)
    if lazy is None:
        return None, "no known relation phrase between two noun phrases"
    greedy = _GREEDY.match(text)
    first = (RELATION_PHRASES[lazy.group("rel").lower()], lazy.group("o").lower())
    # The greedy split finds the rightmost relation phrase; "to the left of" also contains "left of", so the
    # two splits agree when they give the same canonical relation and object.
    if greedy is not None and (RELATION_PHRASES[greedy.group("rel").lower()], greedy.group("o").lower()) != first:
        return None, (f"ambiguous: splits as '{lazy.group('rel')}' and as '{greedy.group('rel')}'")
    return ParsedCaption(subject=lazy.group("s").strip(), relation=first[0], phrase=lazy.group("rel").lower(),
                         object=lazy.group("o").strip()), None


@dataclass(frozen=True)
class TwoObjRow:
    """One COCO-Spatial row: image id and its true/false caption pair (option ids 0 and 1)."""

    index: int
    image_id: int
    true_caption: str
    false_caption: str

    @property
    def image(self) -> str:
        return f"val2017/{self.image_id:012d}.jpg"


def _entries(path: Path, entry: str, dataset_entries: Callable[[], list[Any]]) -> list[Any]:
    """The entries of a What's Up file: its JSON list, or (a dataset source) its rows as ``dataset_entries``
    reads them; anything but a list is an :class:`InputError` naming the ``entry`` layout expected."""
    data = dataset_entries() if is_dataset_source(path) else read_json(path)
    if not isinstance(data, list):
        raise InputError(f"expected a JSON list of {entry}", path=path)
    return data


def read_whatsup_spatial(path: str | Path) -> list[TwoObjRow]:
    """Read ``coco_qa_two_obj.json`` (or ``coco_qa_one_obj.json``): ``[[image_id, true, false], ...]``.

    A dataset source (:mod:`vlaudit.sources.rows`) gives one row per entry with the columns
    ``image_id, true_caption, false_caption``."""
    path = Path(path)
    data = _entries(path, "[image_id, true_caption, false_caption]", lambda: [
        [row.get("image_id"), row.get("true_caption"), row.get("false_caption")] for _, row in dataset_rows(path)])
    rows = []
    for index, entry in enumerate(data):
        if not isinstance(entry, list) or len(entry) != 3:
            raise InputError("expected [image_id, true_caption, false_caption]", path=path, record=f"entry {index}")
        image_id, true_caption, false_caption = entry
        # int(3.7) and int(True) would quietly name another image
        if isinstance(image_id, str) and image_id.strip().isdigit():
            image_id = int(image_id)
        if not isinstance(image_id, int) or isinstance(image_id, bool):
            raise InputError(f"image id {image_id!r} is not an integer", path=path, record=f"entry {index}",
                             field="image_id")
        for name, value in (("true_caption", true_caption), ("false_caption", false_caption)):
            if not isinstance(value, str) or not value.strip():
                raise InputError("caption must be a non-empty string", path=path, record=f"entry {index}",
                                 field=name)
        if same_caption(true_caption, false_caption):
            raise InputError("the false caption is the true caption: the entry states and denies one statement",
                             path=path, record=f"entry {index}", field="false_caption")
        rows.append(TwoObjRow(index=index, image_id=image_id, true_caption=true_caption,
                              false_caption=false_caption))
    if not rows:
        raise InputError("no entries", path=path)
    return rows


@dataclass(frozen=True)
class ControlledRow:
    """One Controlled-A/B entry: image path and its caption options (option 0 is true)."""

    index: int
    image_path: str
    caption_options: tuple[str, ...]


def read_whatsup_controlled(path: str | Path, *, images: ImageFolder | None = None) -> list[ControlledRow]:
    """Read ``controlled_images_dataset.json`` (What's Up Controlled-A/B), or a dataset source with the
    columns ``image_path`` (or an image column) and ``caption_options`` (:mod:`vlaudit.sources.rows`)."""
    path = Path(path)
    data = _entries(path, "{image_path, caption_options}", lambda: [
        row for _, row in dataset_rows(path, images=images, image_field="image_path")])
    rows = []
    for index, entry in enumerate(data):
        if not isinstance(entry, dict):
            raise InputError("expected an object", path=path, record=f"entry {index}")
        image_path = entry.get("image_path")
        options = entry.get("caption_options")
        if not isinstance(image_path, str) or not image_path:
            raise InputError("missing image path", path=path, record=f"entry {index}", field="image_path")
        if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) for o in options):
            raise InputError("expected at least two caption strings", path=path, record=f"entry {index}",
                             field="caption_options")
        repeated = [k for k, option in enumerate(options[1:], start=1) if same_caption(option, options[0])]
        if repeated:
            raise InputError(f"option {repeated[0]} (false) is option 0, the true caption: the entry states and "
                             "denies one statement", path=path, record=f"entry {index}", field="caption_options")
        rows.append(ControlledRow(index=index, image_path=image_path, caption_options=tuple(options)))
    if not rows:
        raise InputError("no entries", path=path)
    return rows


def same_caption(a: str, b: str) -> bool:
    """Two captions that say the same thing as written: equal in one normal form, case and spacing aside."""
    return norm_name(a).rstrip(".") == norm_name(b).rstrip(".")


def repeated_entries(rows: Sequence[TwoObjRow] | Sequence[ControlledRow], *, shown: int = 3) -> list[str]:
    """One warning line naming the entries that repeat an earlier entry's image and captions (none if none)."""
    keys = [(r.image_id, norm_name(r.true_caption), norm_name(r.false_caption)) if isinstance(r, TwoObjRow)
            else (r.image_path, *map(norm_name, r.caption_options)) for r in rows]
    first: dict[tuple[object, ...], int] = {}
    repeats = []
    for index, key in zip((r.index for r in rows), keys, strict=True):
        if key in first:
            repeats.append((index, first[key]))
        else:
            first[key] = index
    if not repeats:
        return []
    named = ", ".join(f"entry {k} repeats entry {j}" for k, j in repeats[:shown])
    more = f" and {len(repeats) - shown} more" if len(repeats) > shown else ""
    return [f"{len(repeats)} duplicate entr{'y' if len(repeats) == 1 else 'ies'} (same image and captions), "
            f"each counted as a group: {named}{more}"]
