"""ARO (Yuksekgonul et al. 2023) as published → :class:`~vlaudit.records.SuiteRead`.

Official loader: mertyg/vision-language-models-are-bows @ 81fdd20 : dataset_zoo/aro_datasets.py.

* **VG-Relation** (``visual_genome_relation.json``) and **VG-Attribution** (``visual_genome_attribution.json``):
  a JSON list of records ``{image_path, bbox_x, bbox_y, bbox_w, bbox_h, true_caption, false_caption,
  relation_name | attributes, ...}``. The loader crops the image to ``(x, y, x + w, y + h)`` and offers the
  captions as ``[false_caption, true_caption]`` — that order is kept in :attr:`SuiteItem.texts` (a tie in
  its argmax picks the false caption). The subset is ``relation_name`` (VG-R) or
  ``f"{attributes[0]}_{attributes[1]}"`` (VG-A), the units its ``evaluate_scores`` groups by.
* **COCO-Order / Flickr30k-Order**: the loader builds them in memory from the Karpathy test JSON, one test
  case per caption: ``[pre_caption(c), pre_caption(p(c)) for p in (shuffle_nouns_and_adj,
  shuffle_allbut_nouns_and_adj, shuffle_within_trigrams, shuffle_trigrams)]`` (dataset_zoo/perturbations.py),
  the shuffles seeded once by main_aro.py's ``seed_all(1)``. Given the Karpathy JSON the reader rebuilds them
  the same way (:mod:`.aro_order`: seeded generators in the loader's call order, spaCy ``en_core_web_sm`` tags
  and NLTK tokens, whose versions it records in the notes; without spaCy/NLTK the file is refused with that
  reason). It also reads them materialised: a JSON list of the loader's test cases ``{"image",
  "caption_options": [true, 4 perturbed]}``, or the Hub re-upload's rows (``images, correct_caption,
  hard_text_1..4``).
* The Hub re-uploads of VG-R/VG-A (rows ``image, true_caption, false_caption, relation_name, bbox {x, y, w,
  h}``; VG-A with ``attributes`` where present) are read as users load them (:mod:`.caption_rows`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError, MissingDependencyError
from vlaudit.records import SuiteItem, SuiteRead
from vlaudit.sources.rows import ImageFolder
from vlaudit.sources.suites.aro_order import Tagger, Tokenizer, build_notes, official_tools, order_cases
from vlaudit.sources.suites.caption_rows import crop_of, load_source, looks_like, row_label, suite_image
from vlaudit.sources.suites.common import counts, refuse, text_field
from vlaudit.sources.suites.common import image_path as image_path_of

VG_RELATION = "aro-vg-relation"
VG_ATTRIBUTION = "aro-vg-attribution"
COCO_ORDER = "aro-coco-order"
FLICKR_ORDER = "aro-flickr-order"
_ORDER_ROW_TEXTS = ("correct_caption", "hard_text_1", "hard_text_2", "hard_text_3", "hard_text_4")
_VG_LAYOUT = "a JSON list of {image_path, bbox_x/y/w/h, true_caption, false_caption, %s} (or Hub rows {image, " \
             "true_caption, false_caption, %s, bbox})"
_ORDER_LAYOUT = ('a JSON list of the loader\'s test cases {"image", "caption_options": [true caption, 4 '
                 'perturbed]} (or Hub rows {images, correct_caption, hard_text_1..4})')


def _records(path: Path, suite: str, expected: str, images: ImageFolder | str | Path | None,
             image_field: str) -> tuple[list[Mapping[str, Any]], bool]:
    data, is_rows = load_source(path, images=images, image_field=image_field)
    if not isinstance(data, list) or not data or not all(isinstance(row, Mapping) for row in data):
        raise refuse(path, suite, expected, looks_like(data))
    return data, is_rows


def _read_vg(path: str | Path, suite: str, title: str, subset_field: str, images: ImageFolder | str | Path | None
             ) -> SuiteRead:
    path = Path(path)
    expected = _VG_LAYOUT % (subset_field, subset_field)
    data, is_rows = _records(path, title, expected, images, "image")
    first = data[0]
    other = "attributes" if subset_field == "relation_name" else "relation_name"
    if "true_caption" not in first or "false_caption" not in first or (
            subset_field not in first and (not is_rows or other in first)):
        raise refuse(path, title, expected, looks_like(data))
    items: list[SuiteItem] = []
    missing_subset = 0
    for index, row in enumerate(data):
        record = row_label(is_rows, index)
        true, false = (text_field(row, name, path=path, record=record) for name in ("true_caption",
                                                                                    "false_caption"))
        crop = crop_of(row, path=path, record=record)
        if crop is None and not is_rows:
            raise InputError("missing (the loader crops every image to its bbox)", path=path, record=record,
                             field="bbox_x")
        image = suite_image(row, ("image_path", "image"), path=path, record=record, crop=crop)
        subset = _subset(row, subset_field, path=path, record=record, required=not is_rows)
        missing_subset += subset == ""
        items.append(SuiteItem(suite, str(index), subset, (image,), (false, true), ((0, 1),), record,
                               {key: value for key, value in row.items() if key not in (
                                   "true_caption", "false_caption", "image_path", "image")}))
    notes = ["texts are [false_caption, true_caption], as the official loader offers them (a tie picks false)"]
    if missing_subset:
        notes.append(f"{missing_subset} rows have no '{subset_field}': the macro figure counts only rows that do")
    return SuiteRead(suite, str(path), items, counts(len(data), len(items)), tuple(notes))


def _subset(row: Mapping[str, Any], field: str, *, path: Path, record: str, required: bool) -> str:
    value = row.get(field)
    if value is None and not required:
        return ""
    if field == "relation_name":
        return text_field(row, field, path=path, record=record)
    if not isinstance(value, (list, tuple)) or len(value) < 2 or not all(isinstance(v, str) for v in value[:2]):
        raise InputError("expected a list of two attribute names", path=path, record=record, field=field)
    return f"{value[0]}_{value[1]}"


def read_aro_vg_relation(path: str | Path, *, images: ImageFolder | str | Path | None = None) -> SuiteRead:
    """ARO VG-Relation: one item per record, texts ``(false_caption, true_caption)``, the crop, subset =
    ``relation_name`` (module docstring)."""
    return _read_vg(path, VG_RELATION, "ARO VG-Relation", "relation_name", images)


def read_aro_vg_attribution(path: str | Path, *, images: ImageFolder | str | Path | None = None) -> SuiteRead:
    """ARO VG-Attribution: as VG-Relation, subset = ``f"{attributes[0]}_{attributes[1]}"``."""
    return _read_vg(path, VG_ATTRIBUTION, "ARO VG-Attribution", "attributes", images)


def _rebuilt(path: Path, data: list[Mapping[str, Any]], seed: int, tagger: Tagger | None,
             tokenizer: Tokenizer | None) -> tuple[list[Mapping[str, Any]], tuple[str, ...]]:
    """The loader's test cases from a Karpathy JSON (:mod:`.aro_order`), and the notes saying how."""
    for index, ann in enumerate(data):
        if not isinstance(ann.get("caption"), list) or not all(isinstance(c, str) for c in ann["caption"]):
            raise InputError("expected a list of captions", path=path, record=f"item {index}", field="caption")
        image_path_of(ann.get("image"), path=path, record=f"item {index}", name="image")
    if tagger is None or tokenizer is None:
        try:
            tagger, tokenizer, versions = official_tools()
        except MissingDependencyError as exc:
            raise refuse(path, "ARO Order test-case", _ORDER_LAYOUT,
                         f"a Karpathy caption file, and {exc} (the seeded spaCy/NLTK shuffles of main_aro.py "
                         "seed_all(1) cannot be rebuilt without them: materialise COCO_Order(...).test_cases "
                         "as JSON)") from exc
    else:
        versions = "the tagger and tokenizer given"
    return list(order_cases(data, tagger, tokenizer, seed=seed)), build_notes(seed, versions)


def _read_order(path: str | Path, suite: str, title: str, images: ImageFolder | str | Path | None, seed: int,
                tagger: Tagger | None, tokenizer: Tokenizer | None) -> SuiteRead:
    path = Path(path)
    data, is_rows = _records(path, title, _ORDER_LAYOUT, images, "images")
    first = data[0]
    notes: tuple[str, ...] = (
        "read materialised: the true caption first, then the perturbations in the loader's order (nouns/adj "
        "shuffled, all but nouns/adj, within trigrams, trigrams); vlaudit does not re-draw them",)
    if "caption_options" not in first and "correct_caption" not in first:
        kind = looks_like(data)
        if not kind.startswith("a Karpathy"):
            raise refuse(path, title, _ORDER_LAYOUT, kind)
        data, notes = _rebuilt(path, data, seed, tagger, tokenizer)
    items: list[SuiteItem] = []
    for index, row in enumerate(data):
        record = row_label(is_rows, index)
        if "caption_options" in row:
            options = row["caption_options"]
            if not isinstance(options, list) or len(options) < 2:
                raise InputError("expected a list of the true caption and its perturbations", path=path,
                                 record=record, field="caption_options")
            texts = tuple(text_field({"caption_options": text}, "caption_options", path=path, record=record)
                          for text in options)
            image = suite_image(row, ("image", "images"), path=path, record=record)
        else:
            texts = tuple(text_field(row, name, path=path, record=record) for name in _ORDER_ROW_TEXTS)
            image = suite_image(row, ("images", "image"), path=path, record=record)
        items.append(SuiteItem(suite, str(index), "", (image,), texts, ((0, 0),), record))
    return SuiteRead(suite, str(path), items, counts(len(data), len(items)), notes)


def read_aro_coco_order(path: str | Path, *, images: ImageFolder | str | Path | None = None, seed: int = 1,
                        tagger: Tagger | None = None, tokenizer: Tokenizer | None = None) -> SuiteRead:
    """ARO COCO-Order (module docstring): texts = true caption first, then 4 perturbations; a Karpathy JSON
    (``coco_karpathy_test.json``) is rebuilt as the loader builds it (:mod:`.aro_order`), with spaCy/NLTK
    unless ``tagger`` and ``tokenizer`` are given."""
    return _read_order(path, COCO_ORDER, "ARO COCO-Order", images, seed, tagger, tokenizer)


def read_aro_flickr_order(path: str | Path, *, images: ImageFolder | str | Path | None = None, seed: int = 1,
                          tagger: Tagger | None = None, tokenizer: Tokenizer | None = None) -> SuiteRead:
    """ARO Flickr30k-Order: as COCO-Order (``flickr30k_test.json`` for the rebuild)."""
    return _read_order(path, FLICKR_ORDER, "ARO Flickr30k-Order", images, seed, tagger, tokenizer)
