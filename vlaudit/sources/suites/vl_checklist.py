"""VL-CheckList (Zhao et al., 2022): a ``data/<Type>/<corpus>/<name>.json`` file, with its corpus YAML.

Layout (om-ai-lab/VL-CheckList @ 6f8d6a3 : vl_checklist/data_loader.py, ``load_itc_samples``): a JSON list of
``[image_rel_path, {"POS": [...], "NEG": [...]}]``; the corpus YAML ``corpus/v1/<Type>/<corpus>.yaml`` gives the
file (``ANNO_PATH``), the image root (``IMG_ROOT``, joined before the relative path: ``os.path.join(IMG_ROOT,
path)``) and ``TYPE: "TUPLE_JSON"``. Pass the YAML as ``corpus=`` and the images are ``IMG_ROOT/path`` under the
images folder (the folder the official code runs in); without it, ``path`` as written.

One :class:`~vlaudit.records.SuiteItem` per entry: ``images = (path,)``, ``texts = (*POS, *NEG)`` in that order,
``positives`` = image 0 with every POS text (the itc metric uses ``POS[0]`` and ``NEG[0]``). ``subset`` is the
file's place in ``data/`` (``Relation/vg/spatial``; from ``ANNO_PATH`` when a YAML is given, else from the path,
where ``Relation__vg__spatial.json`` stands for ``Relation/vg/spatial.json``). The official loader drops entries
whose image file is missing (``if os.path.exists(path)``): the pipeline scores only the items whose images it
finds, and the metric's first-1,000 rule counts over those. Any other JSON (a COLA 4-list, a What's Up 3-list)
is refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from vlaudit.errors import InputError
from vlaudit.records import SuiteImage, SuiteItem, SuiteRead
from vlaudit.sources.suites.common import counts, image_path, read_layout

SUITE = "vl-checklist"
TITLE = "VL-CheckList"
LAYOUT = 'a JSON list of [image_rel_path, {"POS": [...], "NEG": [...]}] (with its corpus YAML for the image root)'
_YAML_KEYS = ("ANNO_PATH", "IMG_ROOT", "TYPE")
_TYPES = ("Attribute", "Object", "Relation")  # the top-level folders of data/


def looks_like_vl_checklist(data: Any) -> bool:
    """Whether a parsed JSON value has VL-CheckList's shape: a list whose first entry is
    ``[image_rel_path, {"POS": [...], "NEG": [...]}]``."""
    return (isinstance(data, list) and bool(data) and isinstance(data[0], list) and len(data[0]) == 2
            and isinstance(data[0][0], str) and isinstance(data[0][1], Mapping)
            and {"POS", "NEG"} <= set(data[0][1]))


def read_corpus_yaml(path: Path) -> dict[str, str]:
    """A corpus YAML (flat ``KEY: "value"`` lines, as every ``corpus/v1`` file is) → its ``ANNO_PATH``,
    ``IMG_ROOT`` and ``TYPE``; anything else is one :class:`InputError` naming the file and line."""
    if not path.is_file():
        raise InputError("corpus YAML not found" if not path.exists() else "not a file", path=path)
    values: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        text = line.split(" #", 1)[0].strip()
        if not text or text.startswith("#"):
            continue
        key, colon, value = text.partition(":")
        value = value.strip()
        if not colon or not key.strip().isidentifier():
            raise InputError("expected KEY: value (a VL-CheckList corpus YAML)", path=path, record=f"line {number}")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[key.strip()] = value
    missing = [key for key in _YAML_KEYS if key not in values]
    if missing:
        raise InputError(f"not a VL-CheckList corpus YAML: missing {missing}", path=path)
    if values["TYPE"] != "TUPLE_JSON":
        raise InputError(f"TYPE {values['TYPE']!r}: the reader knows TUPLE_JSON", path=path, field="TYPE")
    return values


def _data_place(path: Path) -> str:
    """``Relation/vg/spatial`` from ``…/data/Relation/vg/spatial.json`` or ``Relation__vg__spatial.json``: the
    path from its top-level type (Attribute, Object, Relation) on, without ``.json``."""
    parts = PurePosixPath(str(path).replace("\\", "/")).with_suffix("").parts
    parts = (*parts[:-1], *parts[-1].split("__"))
    starts = [k for k, part in enumerate(parts) if part in _TYPES]
    return "/".join(parts[starts[-1]:]) if starts else parts[-1]


def read_vl_checklist(path: Path, *, corpus: str | Path | None = None, **options: Any) -> SuiteRead:
    """The items of a VL-CheckList file (see the module docstring); ``corpus``: its corpus YAML."""
    if options:
        raise InputError(f"VL-CheckList takes only corpus=; got {sorted(options)}", path=path)
    path = Path(path)
    data = read_layout(path, looks_like_vl_checklist, TITLE, LAYOUT)
    root, subset, notes = "", _data_place(path), []
    if corpus is not None:
        config = read_corpus_yaml(Path(corpus))
        named = _data_place(Path(config["ANNO_PATH"]))
        if named != subset:
            raise InputError(f"the corpus YAML's ANNO_PATH {config['ANNO_PATH']!r} is not this file ({subset})",
                             path=corpus, field="ANNO_PATH")
        root = image_path(config["IMG_ROOT"], path=corpus, record="IMG_ROOT", name="IMG_ROOT").rstrip("/")
        notes.append(f"images under IMG_ROOT {config['IMG_ROOT']!r} (corpus YAML {Path(corpus).name})")
    items = []
    checked: dict[str, str] = {}
    for index, entry in enumerate(data):
        record = f"entry {index}"
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], Mapping)):
            raise InputError('expected [image_rel_path, {"POS": [...], "NEG": [...]}]', path=path, record=record)
        relative = checked.get(entry[0]) if isinstance(entry[0], str) else None
        if relative is None:  # checked once per image: 30,650 entries name 8,686 images (Relation/vg/spatial)
            relative = checked[entry[0]] = image_path(entry[0], path=path, record=record, name="image_rel_path")
        texts: dict[str, list[str]] = {}
        for name in ("POS", "NEG"):
            value = entry[1].get(name)
            if not isinstance(value, list) or not value:
                raise InputError("expected a non-empty list of texts", path=path, record=record, field=name)
            for k, text in enumerate(value):
                if not isinstance(text, str) or not text.strip():
                    raise InputError("missing or empty text", path=path, record=record, field=f"{name}[{k}]")
            texts[name] = [text.strip() for text in value]
        image = SuiteImage(f"{root}/{relative}" if root else relative)
        items.append(SuiteItem(suite=SUITE, item_id=str(index), subset=subset, images=(image,),
                               texts=(*texts["POS"], *texts["NEG"]),
                               positives=tuple((0, j) for j in range(len(texts["POS"]))), record=record,
                               extra={"image_rel_path": entry[0]}, direction="i2t"))
    return SuiteRead(suite=SUITE, source=str(path), items=items, counts=counts(len(data), len(items)),
                     notes=tuple(notes))
