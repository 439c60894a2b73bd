"""Official-format COCO instances/captions files written for the builder tests, and two mirrored scenes."""

from __future__ import annotations

import json
from pathlib import Path

NAMES = ["person", "dog", "chair", "cup", "car", "cat"]


def coco_files(tmp: Path, images: list[dict], captions: dict[int, list[str]] | None = None,
               names: list[str] = NAMES) -> tuple[Path, Path]:
    """Write an official-format instances/captions pair. ``images``: {w, h, objects: [(name, [x,y,w,h])...]}."""
    cats = [{"supercategory": "x", "id": 10 + k, "name": n} for k, n in enumerate(names)]
    cat_id = {c["name"]: c["id"] for c in cats}
    img_rows, anns, caps = [], [], []
    for k, image in enumerate(images):
        image_id = 100 + k
        img_rows.append({"license": 1, "file_name": f"{image_id:012d}.jpg", "height": image.get("h", 100),
                         "width": image.get("w", 100), "id": image_id})
        for obj in image["objects"]:
            name, box = obj[0], obj[1]
            anns.append({"segmentation": [[0, 0, 1, 1, 1, 0]], "area": box[2] * box[3],
                         "iscrowd": obj[2] if len(obj) > 2 else 0, "image_id": image_id, "bbox": box,
                         "category_id": cat_id[name], "id": 1000 + len(anns)})
        for text in (captions or {}).get(k, []):
            caps.append({"image_id": image_id, "id": 5000 + len(caps), "caption": text})
    instances, captions_path = tmp / "instances_x.json", tmp / "captions_x.json"
    instances.write_text(json.dumps({"info": {}, "licenses": [], "images": img_rows, "annotations": anns,
                                     "categories": cats}))
    captions_path.write_text(json.dumps({"info": {}, "images": img_rows, "annotations": caps}))
    return instances, captions_path


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]



LEFT = {"objects": [("dog", [5, 40, 20, 20]), ("chair", [70, 40, 20, 20])]}   # dog left of chair
RIGHT = {"objects": [("dog", [70, 40, 20, 20]), ("chair", [5, 40, 20, 20])]}  # dog right of chair
