"""Scores of a compositionality suite's items from any backend: the item's full image×text matrix, nothing more.

Every item k needs ``S_k[i, j] = s(images[i], texts[j])`` (:class:`~vlaudit.metrics.suites.SuiteScores`):
the official metric reads some entries, the exact cycles (:mod:`vlaudit.analysis.suites.cycles`) others. Only
those pairs are scored; pairs shared by items (one image asked about one text in two items) are scored once.

* **Images** — each :class:`~vlaudit.records.SuiteImage` is a file inside the images folder (never outside
  it); a crop (ARO's ``bbox_x/y/w/h``, CREPE's boxes) is materialised once, as a PNG named by the sha256 of the
  source file's bytes and the crop, into the run's ``crops/`` folder (:func:`suite_image_files`), so every
  backend reads plain files and a rerun finds the same names.
* **Dual encoders** (``hf-clip:``, ``open_clip:``, ``ref:`` dual encoders) — every distinct image and text is
  embedded once by :func:`vlaudit.scoring.features.write_features` into a features folder (its manifest
  records the run's arguments; the same run again reads it back instead of loading the model), and
  s(u, v) = cos(f(u), g(v)) in float64 (:func:`~vlaudit.scoring.features.pair_cosines`). Text-to-text
  similarity (``SuiteScores.texts``, SugarCrepe++'s TOT) is the cosine of the two text embeddings.
* **Yes/no MLLMs** — s(u, v) = NLL(" no") − NLL(" yes") for ``query.format(caption=v)`` about image u, one
  :class:`~vlaudit.sources.items.BenchmarkItem` per distinct (image, text) pair scored under the ``original``
  context by :func:`vlaudit.scoring.run.runner.run_scoring` (the chunk cache: a killed run resumes), as
  :mod:`vlaudit.scoring.mllm_cycle_scores` scores cycles. An MLLM has no text encoder: ``texts`` is None.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, UnidentifiedImageError

from vlaudit.backends.base import FeatureBackend, YesNoBackend
from vlaudit.errors import InputError
from vlaudit.files import read_json
from vlaudit.hashing import sha256_file, sha256_text
from vlaudit.metrics.suites import SuiteScores
from vlaudit.records import SuiteItem
from vlaudit.scoring.features import FeatureInputs, pair_cosines, read_features, write_features
from vlaudit.scoring.mllm_cycle_scores import CYCLE_QUERY, INTERFACE, pair_item_id, scores_from_margins
from vlaudit.scoring.run.manifest import MANIFEST_FILE
from vlaudit.scoring.run.runner import run_scoring
from vlaudit.sources.image_paths import confine
from vlaudit.sources.images import ImageFailure, rgb_image
from vlaudit.sources.items import BenchmarkItem

CROPS_DIR, FEATURES_DIR, RUN_DIR = "crops", "features", "run"
SUITE_QUERY = CYCLE_QUERY


def _crop_name(source_sha: str, crop: tuple[float, float, float, float]) -> str:
    return sha256_text(f"{source_sha}#{','.join(f'{v:g}' for v in crop)}")[:32] + ".png"


def materialise_crop(source: Path, crop: tuple[float, float, float, float], folder: Path, *,
                     where: tuple[str | None, str | None, str]) -> Path:
    """The crop ``(x, y, w, h)`` of ``source`` as a PNG in ``folder`` named by content (kept when present).

    The box is rounded to whole pixels and clipped to the picture (as PIL's ``crop`` of the suites' loaders
    does: ARO's ``image.crop((x, y, x + w, y + h))``); a box outside the picture is an error at the item."""
    path, record, field = where
    target = folder / _crop_name(sha256_file(source), crop)
    if target.is_file():
        return target
    try:
        with Image.open(source) as opened:
            picture = rgb_image(opened)
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError, Image.DecompressionBombError,
            ImageFailure) as exc:
        raise InputError(f"cannot decode image {str(source)!r}: {type(exc).__name__}: {exc}", path=path,
                         record=record, field=field) from exc
    x, y, w, h = crop
    box = (max(0, round(x)), max(0, round(y)), min(picture.width, round(x + w)), min(picture.height, round(y + h)))
    if box[2] <= box[0] or box[3] <= box[1]:
        raise InputError(f"crop {list(crop)} lies outside the {picture.width}×{picture.height} image "
                         f"{str(source)!r}", path=path, record=record, field=field)
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.tmp")
    picture.crop(box).save(partial, format="PNG")
    partial.replace(target)
    return target


def suite_image_files(items: Sequence[SuiteItem], images_dir: str | Path, work_dir: str | Path, *,
                      source: str | Path | None = None, materialise_all: bool = False) -> dict[str, Path]:
    """Image key → file for every image of ``items``: the file inside ``images_dir``, or its crop materialised in
    ``work_dir/crops``. With ``materialise_all`` every uncropped image is copied there too (a backend that reads
    one images folder then reads them all from it). A missing file names the item and field."""
    root = Path(images_dir)
    if not root.is_dir():
        raise InputError("images folder not found", path=root, field="--images")
    crops = Path(work_dir) / CROPS_DIR
    files: dict[str, Path] = {}
    for item in items:
        for index, image in enumerate(item.images):
            if image.key in files:
                continue
            where = (None if source is None else str(source), item.record, f"images[{index}]")
            file = confine(root, image.path)
            if file is None:
                raise InputError(f"image path {image.path!r} escapes the images folder {str(root)!r}", path=where[0],
                                 record=item.record, field=where[2])
            if not file.is_file():
                raise InputError(f"image {image.path!r} not found in {str(root)!r}", path=where[0],
                                 record=item.record, field=where[2])
            files[image.key] = (materialise_crop(file, image.crop, crops, where=where) if image.crop is not None
                                else _copied(file, crops) if materialise_all else file)
    return files


def _copied(file: Path, folder: Path) -> Path:
    target = folder / (sha256_file(file)[:32] + file.suffix.lower())
    if not target.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.tmp")
        shutil.copyfile(file, partial)
        partial.replace(target)
    return target


def has_crops(items: Sequence[SuiteItem]) -> bool:
    return any(image.crop is not None for item in items for image in item.images)


def _texts(items: Sequence[SuiteItem]) -> list[str]:
    return list(dict.fromkeys(text for item in items for text in item.texts))


# ------------------------------------------------------------------------------------------------ dual encoders


def finished_features(folder: Path, arguments: Mapping[str, Any], operational: frozenset[str] = frozenset()) -> bool:
    """A features folder that holds this run's embeddings already: its manifest records ``arguments`` (the
    ``operational`` ones — batch size, device — aside)."""
    manifest = folder / MANIFEST_FILE
    if not manifest.is_file():
        return False
    recorded = read_json(manifest)
    previous = recorded.get("arguments") if isinstance(recorded, dict) else None
    if not isinstance(previous, dict):
        return False
    return ({k: v for k, v in previous.items() if k not in operational}
            == {k: v for k, v in arguments.items() if k not in operational})


def dual_suite_scores(load: Callable[[], FeatureBackend], items: Sequence[SuiteItem], files: Mapping[str, Path],
                      folder: str | Path, *, arguments: Mapping[str, Any], text_similarity: bool = False,
                      source: str | Path | None = None, operational: frozenset[str] = frozenset()
                      ) -> tuple[SuiteScores, bool]:
    """Cosine scores of every item's image×text matrix (module docstring) and whether the model ran now.

    ``load()`` loads the dual encoder only when ``folder`` does not hold this run's features already."""
    folder = Path(folder)
    ran = not finished_features(folder, arguments, operational)
    if ran:
        inputs = FeatureInputs(images=dict(files), texts={text: text for text in _texts(items)},
                               source=None if source is None else Path(source))
        for item in items:
            for index, image in enumerate(item.images):
                inputs.image_records.setdefault(image.key, (item.record, f"images[{index}]"))
        write_features(load(), inputs, folder, provenance={"suite_file": None if source is None else str(source)},
                       command=str(arguments.get("command", "suite eval")), arguments=arguments)
    features = read_features(folder)
    image_row, text_row = features.image_index(), features.caption_index()
    pairs, texts = [], []
    for item in items:
        rows = np.array([image_row[image.key] for image in item.images])
        cols = np.array([text_row[text] for text in item.texts])
        left = np.repeat(rows, len(cols))
        right = np.tile(cols, len(rows))
        pairs.append(pair_cosines(features.images[left], features.texts[right]).reshape(len(rows), len(cols)))
        if text_similarity:
            t_left, t_right = np.repeat(cols, len(cols)), np.tile(cols, len(cols))
            texts.append(pair_cosines(features.texts[t_left], features.texts[t_right]).reshape(len(cols), len(cols)))
    return SuiteScores(pairs=pairs, texts=texts if text_similarity else None), ran


# ------------------------------------------------------------------------------------------------ yes/no MLLMs


def _relative(file: Path, folder: Path) -> str:
    """``file`` relative to ``folder``: lexically (the file was joined onto it), else after resolving links."""
    try:
        return file.relative_to(folder).as_posix()
    except ValueError:
        return file.resolve().relative_to(folder.resolve()).as_posix()


def yes_no_pair_items(items: Sequence[SuiteItem], files: Mapping[str, Path], images_dir: Path, *,
                      query: str = SUITE_QUERY, dataset: str = "suite") -> list[BenchmarkItem]:
    """One yes/no item per distinct (image key, text) pair of the items' matrices, in first-appearance order;
    the image as a path relative to ``images_dir`` (every file of ``files`` lies inside it)."""
    out: dict[tuple[str, str], BenchmarkItem] = {}
    for item in items:
        for image in item.images:
            relative = _relative(files[image.key], images_dir)
            for text in item.texts:
                if (image.key, text) not in out:
                    out[(image.key, text)] = BenchmarkItem(
                        item_id=pair_item_id(image.key, text), image=relative, question=query.format(caption=text),
                        dataset=dataset, extra={"image_id": image.key, "caption_id": text})
    return list(out.values())


def yes_no_suite_scores(backend: YesNoBackend, items: Sequence[SuiteItem], queries: Sequence[BenchmarkItem],
                        images_dir: Path, folder: str | Path, *, arguments: Mapping[str, Any], chunk_size: int,
                        executor: Any = None, source: str | Path | None = None) -> tuple[SuiteScores, dict[str, Any]]:
    """The yes/no margin of every pair in ``queries`` (:func:`yes_no_pair_items`) through the cached runner, as
    item matrices; returns the scores and the run's summary."""
    folder = Path(folder)
    summary = run_scoring(backend, queries, images_dir=images_dir, out_dir=folder, contexts=["original"],
                          interfaces=[INTERFACE], strict=True, chunk_size=chunk_size, arguments=dict(arguments),
                          executor=executor, command=str(arguments.get("command", "suite eval")))
    rows = scores_from_margins(folder / "margins.parquet", queries, source=source)
    score = {(str(r["image_id"]), str(r["caption_id"])): float(r["score"]) for r in rows}
    pairs = [np.array([[score[(image.key, text)] for text in item.texts] for image in item.images], dtype=np.float64)
             for item in items]
    return SuiteScores(pairs=pairs, texts=None), summary

