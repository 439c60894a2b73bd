"""Today's pair, 2×2 and cycle sources as :class:`~vlaudit.records.SuiteItem` records (what the giveaway lints read).

Every benchmark vlaudit reads becomes one list of items: an item is its images, its candidate texts in the
source's order and the true (image index, text index) pairs; every other pair of the item is a negative.

* labelled pairs (:func:`pair_items`, any :data:`vlaudit.sources.labelled_pairs.FORMATS` but ``cycles``): one
  item per *entry* where the file has entries — SugarCrepe's ``{filename, caption, negative_caption}`` (texts
  ``[caption, negative_caption]``), What's Up Controlled-A/B (its ``caption_options``, option 0 true),
  What's Up COCO-Spatial (``[true, false]``) — and one item per *image* for a pair table (its texts in row
  order, the label-1 ones positive);
* 2×2 blocks (:func:`block_items`; Winoground, NaturalBench, generic blocks): two images, two texts,
  positives (0, 0) and (1, 1);
* cycles (:func:`cycle_items`): the same, from a cycles file (the text is ``text_1``/``text_2`` where the file
  has them, else the caption id);
* VL-CheckList (:func:`vl_checklist_items`): the release's ``[image_rel_path, {"POS": [...], "NEG": [...]}]``
  items (om-ai-lab/VL-CheckList @ 6f8d6a3 : data/Relation/vg/spatial.json), one image, texts POS then NEG.

``extra["caption_keys"]`` holds each text's caption key (its id, or the text where the source has no ids), the
key a scores table joins on. SugarCrepe's and What's Up's entries whose negative repeats the positive are kept
here (the lints flag them; the pair readers leave them out).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from vlaudit.errors import InputError
from vlaudit.files import read_json
from vlaudit.records import Cycle, LabelledPair, SuiteImage, SuiteItem
from vlaudit.sources.cycle_tables import read_cycles, read_scores
from vlaudit.sources.labelled_pairs import detect_format, read_labelled_pairs
from vlaudit.sources.sugarcrepe import is_sugarcrepe
from vlaudit.sources.suites.common import refuse, shape_of
from vlaudit.sources.two_by_two import TwoByTwoBlock


def _item(suite: str, item_id: str, subset: str, images: Sequence[str], texts: Sequence[str],
          positives: Sequence[tuple[int, int]], record: str, keys: Sequence[str] | None = None) -> SuiteItem:
    return SuiteItem(suite=suite, item_id=item_id, subset=subset, images=tuple(SuiteImage(p) for p in images),
                     texts=tuple(texts), positives=tuple(positives), record=record,
                     extra={"caption_keys": tuple(keys if keys is not None else texts)})


def _text(entry: dict, name: str, path: Path, record: str) -> str:
    value = entry.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InputError("missing or empty text", path=path, record=record, field=name)
    return value


def sugarcrepe_items(path: str | Path) -> list[SuiteItem]:
    """One item per SugarCrepe entry: image ``filename``, texts ``[caption, negative_caption]``, positive (0, 0);
    the subset is the file's stem (``swap_obj``), as SugarCrepe reports one accuracy per file."""
    path = Path(path)
    data = read_json(path)
    if not is_sugarcrepe(data):
        raise refuse(path, "SugarCrepe", '{"0": {filename, caption, negative_caption}, ...}', shape_of(data))
    items = []
    for key, entry in data.items():
        record = f"entry {key}"
        if not isinstance(entry, dict):
            raise InputError("expected an object", path=path, record=record)
        image = _text(entry, "filename", path, record)
        texts = (_text(entry, "caption", path, record), _text(entry, "negative_caption", path, record))
        items.append(_item("sugarcrepe", str(key), path.stem, [image], texts, [(0, 0)], record))
    return items


def _grouped_pairs(suite: str, subset: str, pairs: Sequence[LabelledPair], path: Path) -> list[SuiteItem]:
    """One item per image of a pair table: its captions in first-seen order, the label-1 ones positive."""
    by_image: dict[str, list[LabelledPair]] = {}
    for pair in pairs:
        by_image.setdefault(pair.image_id, []).append(pair)
    items = []
    for image, rows in by_image.items():
        keys: list[str] = []
        texts: list[str] = []
        positives: set[int] = set()
        for pair in rows:
            if pair.text is None:
                raise InputError("the text lints need each caption's text (a caption or text column)", path=path,
                                 record=f"image {image}", field="caption")
            if pair.caption not in keys:
                keys.append(pair.caption)
                texts.append(pair.text)
            if pair.label:
                positives.add(keys.index(pair.caption))
        items.append(_item(suite, image, subset, [image], texts, [(0, j) for j in sorted(positives)],
                           f"image {image}", keys))
    return items


def pair_items(path: str | Path, fmt: str = "auto", *, warnings: list[str] | None = None) -> tuple[str, list[SuiteItem]]:
    """(format, items) of a labelled pairs file (see the module docstring); ``cycles`` goes to :func:`cycle_items`."""
    path = Path(path)
    fmt = detect_format(path) if fmt == "auto" else fmt
    if fmt == "sugarcrepe" and path.suffix.lower() == ".json":
        return fmt, sugarcrepe_items(path)
    if fmt == "cycles":
        return fmt, cycle_items(read_cycles(path))
    if fmt in ("whatsup-controlled", "whatsup-spatial") and path.suffix.lower() == ".json":
        return fmt, whatsup_items(path, fmt)
    fmt, pairs = read_labelled_pairs(path, fmt, warnings=warnings)
    return fmt, _grouped_pairs(fmt, path.stem, pairs, path)


def whatsup_items(path: Path, fmt: str) -> list[SuiteItem]:
    """What's Up entries as items: Controlled-A/B ``{image_path, caption_options}`` (option 0 true) or
    COCO-Spatial ``[image_id, true, false]`` (image ``val2017/{id:012d}.jpg``)."""
    data = read_json(path)
    if not isinstance(data, list) or not data:
        raise refuse(path, "What's Up", "a non-empty JSON list", shape_of(data))
    items = []
    for index, entry in enumerate(data):
        record = f"entry {index}"
        if fmt == "whatsup-controlled":
            if not isinstance(entry, dict):
                raise InputError("expected an object", path=path, record=record)
            options = entry.get("caption_options")
            if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) for o in options):
                raise InputError("expected at least two caption strings", path=path, record=record,
                                 field="caption_options")
            image = _text(entry, "image_path", path, record)
            items.append(_item(fmt, str(index), path.stem, [image], options, [(0, 0)], record))
        else:
            if not isinstance(entry, list) or len(entry) != 3 or not all(isinstance(t, str) for t in entry[1:]):
                raise InputError("expected [image_id, true_caption, false_caption]", path=path, record=record)
            image_id = entry[0]
            image = f"val2017/{int(image_id):012d}.jpg" if str(image_id).isdigit() else str(image_id)
            items.append(_item(fmt, str(index), path.stem, [image], entry[1:], [(0, 0)], record))
    return items


def block_items(blocks: Sequence[TwoByTwoBlock]) -> list[SuiteItem]:
    """2×2 blocks as items: images (image_1, image_2), texts (text_1, text_2), positives (0, 0), (1, 1)."""
    return [_item(block.benchmark, block.example_id, block.family, [block.image_1, block.image_2],
                  [block.text_1, block.text_2], [(0, 0), (1, 1)], block.record, [block.caption_1, block.caption_2])
            for block in blocks]


def cycle_items(cycles: Sequence[Cycle]) -> list[SuiteItem]:
    """Cycles as items (2 images, 2 texts, positives (0, 0), (1, 1)); a text is ``text_k`` or the caption id."""
    items = []
    for cycle in cycles:
        given = [cycle.extra.get("text_1"), cycle.extra.get("text_2")]
        keys = [cycle.caption_1, cycle.caption_2]
        texts = [text if isinstance(text, str) and text.strip() else key for text, key in zip(given, keys, strict=True)]
        items.append(_item("cycles", cycle.cycle_id, cycle.family, [cycle.image_1, cycle.image_2], texts,
                           [(0, 0), (1, 1)], f"cycle {cycle.cycle_id}", keys))
    return items


def vl_checklist_items(path: str | Path) -> list[SuiteItem]:
    """VL-CheckList's ``[[image_rel_path, {"POS": [...], "NEG": [...]}], ...]``: one item per entry, texts POS
    then NEG, every POS text positive; the subset is the file's stem."""
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, list) or not data or not isinstance(data[0], list) or len(data[0]) != 2:
        raise refuse(path, "VL-CheckList", 'a JSON list of [image_rel_path, {"POS": [...], "NEG": [...]}]',
                     shape_of(data))
    items = []
    for index, entry in enumerate(data):
        record = f"item {index}"
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                and isinstance(entry[1], dict)):
            raise InputError("expected [image_rel_path, {POS, NEG}]", path=path, record=record)
        texts = []
        for side in ("POS", "NEG"):
            values = entry[1].get(side)
            if not isinstance(values, list) or not values or not all(isinstance(v, str) and v.strip()
                                                                     for v in values):
                raise InputError("expected a non-empty list of texts", path=path, record=record, field=side)
            texts.append(values)
        positives = [(0, j) for j in range(len(texts[0]))]
        items.append(_item("vl-checklist", str(index), path.stem, [entry[0]], texts[0] + texts[1], positives,
                           record))
    return items


def pair_scores(items: Sequence[SuiteItem], path: str | Path) -> np.ndarray:
    """A scores table (image_id, caption_id, score; :mod:`vlaudit.sources.cycle_tables`) as per-pair scores in
    the items' order; the caption id is the source's caption key (the text where it has no ids)."""
    lookup = read_scores(path)
    flat: list[float] = []
    for item in items:
        keys = item.extra.get("caption_keys", item.texts)
        for image in item.images:
            for key in keys:
                score = lookup.get((image.key, str(key)))
                if score is None:
                    raise InputError(f"no score for image {image.key!r} and caption {key!r} (item {item.item_id})",
                                     path=path, field="score")
                flat.append(score)
    return np.asarray(flat, dtype=np.float64)
