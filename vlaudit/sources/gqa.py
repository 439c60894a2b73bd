"""GQA scene graphs (``*_sceneGraphs.json``), the input of the GQA cycle families (cycle paper §D.3).

Official shape: ``{imageId: {width, height, location?, weather?, objects: {objId: {name, x, y, w, h,
attributes: [..], relations: [{name, object}, ...]}}}}``. Relations may also be given as a dict keyed by
relation id (``{relId: {name, object}}``); both are read. Names and attributes are lower-cased and
whitespace-normalised. Anything missing or mistyped is an :class:`InputError` naming the file, the image
(and object) and the field — among them a relation to an object id absent from the image (a dangling edge
would silently drop a relation the scene asserts) and a box with a negative or non-finite width or height.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from vlaudit.errors import InputError
from vlaudit.files import read_json
from vlaudit.sources.names import norm_name
from vlaudit.sources.rows import local_file


@dataclass(frozen=True)
class GqaObject:
    object_id: str
    name: str
    box: tuple[float, float, float, float]
    attributes: tuple[str, ...]
    relations: tuple[tuple[str, str], ...]  # (relation name, target object id)


@dataclass(frozen=True)
class GqaImage:
    image_id: str
    width: float
    height: float
    objects: dict[str, GqaObject]


@dataclass
class SceneGraphs:
    path: str
    images: dict[str, GqaImage]
    warnings: Counter = field(default_factory=Counter)


def _num(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _relations(path: Path, record: str, raw: object) -> list[tuple[str, str]]:
    if raw is None:
        return []
    if isinstance(raw, dict):
        items = list(raw.values())
    elif isinstance(raw, list):
        items = raw
    else:
        raise InputError("expected a list or a dict of relations", path=path, record=record, field="relations")
    out = []
    for k, rel in enumerate(items):
        if not isinstance(rel, dict) or not isinstance(rel.get("name"), str) or rel.get("object") is None:
            raise InputError(f"relation {k} needs a string 'name' and an 'object' id", path=path, record=record,
                             field="relations")
        out.append((norm_name(rel["name"]), str(rel["object"])))
    return out


def read_gqa_scene_graphs(path: str | Path) -> SceneGraphs:
    """Parse and validate a GQA scene-graph file (``train_sceneGraphs.json``; it has no dataset form)."""
    path = local_file(path, reads="a GQA *_sceneGraphs.json file")
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError("expected a JSON object {imageId: scene graph}", path=path)
    warnings: Counter = Counter()
    images: dict[str, GqaImage] = {}
    for image_id, graph in data.items():
        record = f"image {image_id}"
        if not isinstance(graph, dict):
            raise InputError("scene graph is not a JSON object", path=path, record=record)
        for name in ("width", "height"):
            if not _num(graph.get(name)) or graph[name] <= 0:
                raise InputError(f"expected a positive number, got {graph.get(name)!r}", path=path, record=record,
                                 field=name)
        objects_raw = graph.get("objects")
        if not isinstance(objects_raw, dict):
            raise InputError("expected a dict {objectId: object}", path=path, record=record, field="objects")
        objects: dict[str, GqaObject] = {}
        for object_id, obj in objects_raw.items():
            where = f"image {image_id}, object {object_id}"
            if not isinstance(obj, dict):
                raise InputError("object is not a JSON object", path=path, record=where)
            if not isinstance(obj.get("name"), str) or not obj["name"].strip():
                raise InputError("missing or empty name", path=path, record=where, field="name")
            for name in ("x", "y", "w", "h"):
                if not _num(obj.get(name)) or not math.isfinite(obj[name]):
                    raise InputError(f"expected a number, got {obj.get(name)!r}", path=path, record=where,
                                     field=name)
            for name in ("w", "h"):
                if obj[name] < 0:
                    raise InputError(f"box size must not be negative, got {obj[name]!r}", path=path,
                                     record=where, field=name)
            attributes = obj.get("attributes", [])
            if not isinstance(attributes, list) or not all(isinstance(a, str) for a in attributes):
                raise InputError("expected a list of strings", path=path, record=where, field="attributes")
            objects[str(object_id)] = GqaObject(
                object_id=str(object_id), name=norm_name(obj["name"]),
                box=(float(obj["x"]), float(obj["y"]), float(obj["w"]), float(obj["h"])),
                attributes=tuple(sorted({norm_name(a) for a in attributes if a.strip()})),
                relations=tuple(_relations(path, where, obj.get("relations"))),
            )
        for object_id, obj in objects.items():
            for name, target in obj.relations:
                if target not in objects:
                    raise InputError(f"relation '{name}' points to object '{target}', which is not in the image",
                                     path=path, record=f"image {image_id}, object {object_id}", field="relations")
        images[str(image_id)] = GqaImage(str(image_id), float(graph["width"]), float(graph["height"]), objects)
    if not images:
        raise InputError("no scene graphs in file", path=path)
    return SceneGraphs(path=str(path), images=images, warnings=warnings)
