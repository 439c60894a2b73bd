"""COLA multi-object (Ray et al., 2023): ``data/COLA_multiobjects_matching_benchmark.json`` as published.

Layout (arijitray1993/COLA @ 1fa52fb : README.md, "Multi-objects setting"; read as scripts/eval.py reads it,
``for image_1, caption_1, image_2, caption_2 in multi_obj_data``): a JSON list of 4-lists
``[image1_url, caption1, image2_url, caption2]``; caption k describes image k. The image file is the URL's
basename (``https://cs-people.bu.edu/array/data/vg_gqa_images/2414605.jpg`` → ``2414605.jpg``, a Visual
Genome / GQA id), looked up in the images folder.

One :class:`~vlaudit.records.SuiteItem` per row: ``images = (image1, image2)``, ``texts = (caption1, caption2)``,
``positives = ((0, 0), (1, 1))`` — a native 2×2 block (an exact cycle). ``subset`` is ``"multi-object"`` (the
official figure is one mean over the 210 rows). A What's Up 3-list, a VL-CheckList ``[path, {POS, NEG}]`` file
or any other JSON is refused by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from vlaudit.errors import InputError
from vlaudit.records import SuiteImage, SuiteItem, SuiteRead
from vlaudit.sources.suites.common import counts, image_path, read_layout, shape_of

SUITE = "cola-multi-object"
TITLE = "COLA multi-object"
LAYOUT = "a JSON list of [image1_url, caption1, image2_url, caption2]"
SUBSET = "multi-object"


def looks_like_cola(data: Any) -> bool:
    """Whether a parsed JSON value has COLA multi-object's shape: a list whose first entry is a 4-list of
    strings (what :func:`vlaudit.sources.labelled_pairs.detect_format` refuses by this name)."""
    return (isinstance(data, list) and bool(data) and isinstance(data[0], list) and len(data[0]) == 4
            and all(isinstance(value, str) for value in data[0]))


def url_basename(url: object, *, path: Path, record: str, name: str) -> str:
    """The file name a COLA image URL names: the last segment of its path (``…/2414605.jpg`` → ``2414605.jpg``)."""
    if not isinstance(url, str) or not url.strip():
        raise InputError("missing or empty image URL", path=path, record=record, field=name)
    segment = unquote(urlsplit(url.strip()).path).rstrip("/").rsplit("/", 1)[-1]
    if not segment:
        raise InputError(f"image URL {url!r} names no file", path=path, record=record, field=name)
    return image_path(segment, path=path, record=record, name=name)


def read_cola(path: Path, **options: Any) -> SuiteRead:
    """The items of a COLA multi-object file (see the module docstring); no options."""
    if options:
        raise InputError(f"COLA multi-object takes no options; got {sorted(options)}", path=path)
    path = Path(path)
    data = read_layout(path, looks_like_cola, TITLE, LAYOUT)
    items = []
    for index, entry in enumerate(data):
        record = f"entry {index}"
        if not isinstance(entry, list) or len(entry) != 4:
            raise InputError(f"expected [image1_url, caption1, image2_url, caption2]; found {shape_of([entry])}",
                             path=path, record=record)
        url_1, caption_1, url_2, caption_2 = entry
        images = (SuiteImage(url_basename(url_1, path=path, record=record, name="image1_url")),
                  SuiteImage(url_basename(url_2, path=path, record=record, name="image2_url")))
        texts = []
        for name, caption in (("caption1", caption_1), ("caption2", caption_2)):
            if not isinstance(caption, str) or not caption.strip():
                raise InputError("missing or empty caption", path=path, record=record, field=name)
            texts.append(caption.strip())
        items.append(SuiteItem(suite=SUITE, item_id=str(index), subset=SUBSET, images=images, texts=tuple(texts),
                               positives=((0, 0), (1, 1)), record=record,
                               extra={"image1_url": url_1, "image2_url": url_2}))
    return SuiteRead(suite=SUITE, source=str(path), items=items, counts=counts(len(data), len(items)))
