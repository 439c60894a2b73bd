"""SPEC (Peng et al., CVPR 2024): a subset's ``image2text.json`` / ``text2image.json``, as its loader reads them.

Layout (wjpoom/SPEC @ ad982a4 : spec/dataset.py, ``Image2TextDataset`` / ``Text2ImageDataset``): each file is a
JSON list of ``{"query", "keys", "label"}``. In ``image2text.json`` the query is an image (relative to the subset
folder), the keys its K candidate texts and ``label`` the index of the true one; in ``text2image.json`` the query
is a text, the keys K candidate images. The six subsets (``absolute_size``, ``relative_size``,
``absolute_spatial``, ``relative_spatial``, ``existence``, ``count``) are folders of the data root.

**Representation (K×K groups).** A SPEC test case is K images and K texts that correspond one to one, written
as K samples that share one candidate list. The reader groups a file's samples by their exact candidate list
(``keys``, in order): where a group's labels are each of ``0..K-1`` once (the test case is whole), it is **one K×K
item** — for ``image2text.json`` the images are the queries ordered by label and the texts are the keys in their
own order; for ``text2image.json`` the texts are the queries ordered by label and the images the keys — so the
positives are the diagonal ``(j, j)`` and every 2×2 minor is an exact cycle. Each query's row (i2t) or column
(t2i) of the item is exactly its official sample: the same candidates in the same order (the tie rule
depends on it). A sample whose group is not whole is an item of its own (1×K or K×1, ``positives = ((0, label),)``
or ``((label, 0),)``). :attr:`SuiteItem.direction` is ``"i2t"`` or ``"t2i"``: both files describe the same test
cases, so a cycle count takes one direction. ``subset`` is the subset folder's name.

``path`` is one file (images relative to its folder), a subset folder (both files) or the data root (every subset
folder in it; images relative to the root, ``<subset>/<query>``). Anything else is refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vlaudit.errors import InputError
from vlaudit.files import read_json
from vlaudit.records import SuiteImage, SuiteItem, SuiteRead
from vlaudit.sources.suites.common import counts, image_path, refuse, shape_of

SUITE = "spec"
TITLE = "SPEC"
LAYOUT = 'image2text.json / text2image.json: a JSON list of {"query", "keys": [K candidates], "label"}'
FILES = {"image2text.json": "i2t", "text2image.json": "t2i"}


def _samples(path: Path, direction: str) -> list[tuple[str, tuple[str, ...], int, str]]:
    """(query, keys, label, record) of every sample of one file, checked."""
    data = read_json(path)
    if not (isinstance(data, list) and data and isinstance(data[0], Mapping)
            and {"query", "keys", "label"} <= set(data[0])):
        raise refuse(path, TITLE, LAYOUT, shape_of(data))
    image_query = direction == "i2t"
    out = []
    for index, sample in enumerate(data):
        record = f"sample {index}"
        if not isinstance(sample, Mapping):
            raise InputError('expected {"query", "keys", "label"}', path=path, record=record)
        query, keys, label = sample.get("query"), sample.get("keys"), sample.get("label")
        if not isinstance(keys, list) or len(keys) < 2:
            raise InputError("expected a list of at least 2 candidates", path=path, record=record, field="keys")
        if not isinstance(label, int) or isinstance(label, bool) or not 0 <= label < len(keys):
            raise InputError(f"label {label!r} is not an index of the {len(keys)} candidates", path=path,
                             record=record, field="label")
        if image_query:
            query = image_path(query, path=path, record=record, name="query")
        elif not isinstance(query, str) or not query.strip():
            raise InputError("missing or empty text", path=path, record=record, field="query")
        checked = []
        for k, key in enumerate(keys):
            if image_query:
                if not isinstance(key, str) or not key.strip():
                    raise InputError("missing or empty text", path=path, record=record, field=f"keys[{k}]")
                checked.append(key.strip())
            else:
                checked.append(image_path(key, path=path, record=record, name=f"keys[{k}]"))
        out.append((query.strip() if not image_query else query, tuple(checked), label, record))
    return out


def _items(path: Path, direction: str, subset: str, prefix: str) -> tuple[list[SuiteItem], int, int]:
    """The file's items (K×K groups where whole, else one per sample), its sample count, its whole groups."""
    samples = _samples(path, direction)
    groups: dict[tuple[str, ...], list[tuple[str, tuple[str, ...], int, str]]] = {}
    for sample in samples:
        groups.setdefault(sample[1], []).append(sample)
    items, whole = [], 0
    name = path.name

    def image(value: str) -> SuiteImage:
        return SuiteImage(f"{prefix}{value}")

    for number, (keys, group) in enumerate(groups.items()):
        labels = sorted(label for _, _, label, _ in group)
        if labels == list(range(len(keys))) and len({query for query, _, _, _ in group}) == len(keys):
            whole += 1
            queries = tuple(query for query, _, _, _ in sorted(group, key=lambda sample: sample[2]))
            records = ", ".join(record for _, _, _, record in group)
            images, texts = ((tuple(image(q) for q in queries), keys) if direction == "i2t"
                             else (tuple(image(k) for k in keys), queries))
            items.append(SuiteItem(suite=SUITE, item_id=f"{subset}/{direction}/{number}", subset=subset,
                                   images=images, texts=texts, positives=tuple((j, j) for j in range(len(keys))),
                                   record=f"{name} {records}", extra={"file": name}, direction=direction))
            continue
        for query, _, label, record in group:
            if direction == "i2t":
                images, texts, positives = (image(query),), keys, ((0, label),)
            else:
                images, texts, positives = tuple(image(k) for k in keys), (query,), ((label, 0),)
            items.append(SuiteItem(suite=SUITE, item_id=f"{subset}/{direction}/{number}/{record.split()[-1]}",
                                   subset=subset, images=images, texts=texts, positives=positives,
                                   record=f"{name} {record}", extra={"file": name}, direction=direction))
    return items, len(samples), whole


def read_spec(path: Path, **options: Any) -> SuiteRead:
    """The items of a SPEC file, subset folder or data root (see the module docstring); no options."""
    if options:
        raise InputError(f"SPEC takes no options; got {sorted(options)}", path=path)
    path = Path(path)
    if path.is_file():
        if path.name not in FILES:
            data = read_json(path)
            raise refuse(path, TITLE, LAYOUT, f"a file named {path.name!r} ({shape_of(data)})")
        files = [(path, path.parent.name, "")]
    elif path.is_dir():
        here = [(path / name, path.name, "") for name in FILES if (path / name).is_file()]
        below = [(folder / name, folder.name, f"{folder.name}/") for folder in sorted(path.iterdir())
                 if folder.is_dir() for name in FILES if (folder / name).is_file()]
        files = here or below
        if not files:
            raise InputError("no image2text.json or text2image.json in the folder or its subset folders", path=path)
    else:
        raise InputError("file not found", path=path)
    items: list[SuiteItem] = []
    read = whole = 0
    for file, subset, prefix in files:
        file_items, file_read, file_whole = _items(file, FILES[file.name], subset, prefix)
        items += file_items
        read += file_read
        whole += file_whole
    singles = sum(1 for item in items if len(item.positives) == 1)
    notes = (f"{whole} whole K×K test cases (one item each), {singles} sample(s) of partial groups (an item each) "
             f"from {len(files)} file(s)",)
    return SuiteRead(suite=SUITE, source=str(path), items=items, counts=counts(read, read), notes=notes)
