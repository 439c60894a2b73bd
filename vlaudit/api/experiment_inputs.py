"""Inputs of the cycle-paper experiments, read here so that the analysis reads nothing from disk: one cycles file
per seed + frozen features → :class:`~vlaudit.analysis.cycles.experiment.SeedInputs`.

Features come from a features folder written by ``vlaudit features`` (it must hold every image and caption id
of every seed's cycles) or are extracted here, once for the union of all seeds, with a dual encoder
(:func:`extract_seed_features`). For the OE test the marked captions (``MARKER + text``) are needed too:
extracted here with the same encoder under the ids ``caption_id + MARK_SUFFIX``, or looked up in a second
features folder **by content**: a row whose ``content_hash`` is sha256(MARKER + text) (so any
``vlaudit features`` run that embedded those texts serves, whatever ids it used).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from vlaudit.analysis.cycles.experiment import BUILD_PROVENANCE, SeedInputs
from vlaudit.analysis.cycles.oe import MARK_SUFFIX, caption_texts, marked_text
from vlaudit.backends.base import as_features
from vlaudit.backends.registry import load_backend, require_kind
from vlaudit.builders.cycles.build_steps import sidecar_paths
from vlaudit.errors import InputError
from vlaudit.files import read_json, read_table
from vlaudit.hashing import sha256_text
from vlaudit.records import Cycle
from vlaudit.results.cycle_experiments import SeedBuild
from vlaudit.results.versioned import record_from_dict
from vlaudit.scoring.features import (
    MANIFEST_FILE,
    FeatureInputs,
    collect_inputs,
    read_features,
    write_features,
)
from vlaudit.sources.cycle_tables import read_cycles


def load_seed_inputs(cycles_paths: Mapping[int, str | Path], features_dir: str | Path,
                     test_paths: Mapping[int, str | Path] | None = None) -> dict[int, SeedInputs]:
    """Read each seed's cycles and one features folder; an id without features is an InputError.

    The families a ``cycles build`` withdrew (``unavailable`` in the ``CYCLES.meta.json`` beside the file, when
    there is one) come along, so the experiments report them with the build's counts.

    ``test_paths``: the paper's COCO protocol (§D.5: train/validation from train2017, test from val2017), a
    second cycles file per seed holding that seed's test split: its cycles join the first file's, whose splits
    they must not share, and both builds' metadata are recorded (``build``, ``test_build``). The two builds must
    be of the same seed.
    """
    features = read_features(features_dir)
    out: dict[int, SeedInputs] = {}
    images, captions = set(features.image_ids), set(features.caption_ids)
    for seed, path in cycles_paths.items():
        cycles = read_cycles(path)
        test_path = None if test_paths is None else test_paths.get(seed)
        build, built = _build_of(path)
        test_build, test = None, []
        if test_path is not None:
            test = _test_cycles(cycles, test_path, path)
            test_build, test_built = _build_of(test_path)
            for family, counts in test_built.items():
                built[family] = {**built.get(family, {}), **counts}
            if build is not None and test_build is not None and build.seed != test_build.seed:
                raise InputError(f"the test build is of seed {test_build.seed}, the train/val build of seed "
                                 f"{build.seed}: each seed's two builds must share it (§D.5)", path=test_path,
                                 field="seed")
        for file, part in ((path, cycles), (test_path, test)):
            for cycle in part:
                for image_id, caption_id, _ in cycle.entries():
                    if image_id not in images:
                        raise InputError(f"image id {image_id!r} has no features in {features_dir}", path=file,
                                         record=cycle.cycle_id, field="image_id")
                    if caption_id not in captions:
                        raise InputError(f"caption id {caption_id!r} has no features in {features_dir}", path=file,
                                         record=cycle.cycle_id, field="caption_id")
        cycles = cycles + test
        out[int(seed)] = SeedInputs.from_features(int(seed), cycles, features, source=str(path),
                                                  built_unavailable=built)
        out[int(seed)].build = build
        if test_path is not None:
            out[int(seed)].test_source, out[int(seed)].test_build = str(test_path), test_build
    return out


def _build_of(path: str | Path) -> tuple[SeedBuild | None, dict[str, dict[str, int]]]:
    """What the ``CYCLES.meta.json`` beside ``path`` records (None without one) and the families it withdrew."""
    meta = sidecar_paths(path)[1]
    meta_data = read_json(meta) if meta.exists() else {}
    built = meta_data.get("unavailable", {})
    if not isinstance(built, dict) or not all(isinstance(c, dict) for c in built.values()):
        raise InputError("expected {family: {split: count}}", path=meta, field="unavailable")
    build = record_from_dict(SeedBuild, {key: meta_data.get(key) for key in BUILD_PROVENANCE}, path=meta) \
        if meta.exists() else None
    return build, {str(f): {str(s): int(n) for s, n in c.items()} for f, c in built.items()}


def _test_cycles(cycles: list[Cycle], test_path: str | Path, path: str | Path) -> list[Cycle]:
    """The cycles of a seed's test build, refused when they share a split with its train/val build's."""
    test = read_cycles(test_path)
    shared = sorted(str(s) for s in {c.split for c in test} & {c.split for c in cycles})
    if shared:
        raise InputError(f"split(s) {shared} are in both this test build and the train/val build {path}: give the "
                         "train/val build without them (--splits train=…,val=…)", path=test_path, field="split")
    return test


def extract_seed_features(cycles_paths: Mapping[int, str | Path], images_dir: str | Path, model: str,
                          out_dir: str | Path, *, marked: bool = False,
                          test_paths: Mapping[int, str | Path] | None = None,
                          test_images: str | Path | None = None) -> Path:
    """Embed every image and caption of every seed's cycles once with ``model`` (plus the marked captions);
    ``test_paths``: the seeds' test builds, whose images are under ``test_images`` (default ``images_dir``)."""
    require_kind(model, "features")
    merged = FeatureInputs()
    files = [(path, images_dir) for path in cycles_paths.values()]
    files += [(path, test_images or images_dir) for path in (test_paths or {}).values()]
    for path, folder in files:
        cycles = read_cycles(path)
        part = collect_inputs(cycles, Path(path), Path(folder))
        for key, kind, mine, theirs in [*((k, "image", v, merged.images.get(k)) for k, v in part.images.items()),
                                        *((k, "caption", v, merged.texts.get(k)) for k, v in part.texts.items())]:
            if theirs is not None and theirs != mine:  # two builds (train2017, val2017) that reuse an id
                raise InputError(f"{kind} id {key!r} names {theirs!r} in another cycles file and {mine!r} here: the "
                                 "builds must not share ids", path=path, field=f"{kind}_id")
        merged.images.update(part.images)
        merged.texts.update(part.texts)
        if marked:
            merged.texts.update({k + MARK_SUFFIX: marked_text(t) for k, t in caption_texts(cycles).items()})
    backend = as_features(load_backend(model))
    provenance = {"cycles": {str(s): str(p) for s, p in cycles_paths.items()}, "images_dir": str(images_dir),
                  "oe_marked": marked}
    if test_paths:
        provenance |= {"test_cycles": {str(s): str(p) for s, p in test_paths.items()},
                       "test_images_dir": str(test_images or images_dir)}
    write_features(backend, merged, out_dir, provenance=provenance)
    return Path(out_dir)


def add_marked_features(inputs: SeedInputs, marked_dir: str | Path | None = None) -> SeedInputs:
    """``inputs`` with the marked-caption rows under ``caption_id + MARK_SUFFIX``.

    Without ``marked_dir`` they must already be in the features (as :func:`extract_seed_features` writes them);
    with it, each is the row of ``marked_dir`` whose content hash is sha256(MARKER + text).
    """
    texts = caption_texts(inputs.cycles)
    if marked_dir is None:
        missing = [k for k in texts if k + MARK_SUFFIX not in inputs.caption_row]
        if missing:
            raise InputError(f"no marked-caption features for {len(missing)} captions (e.g. {missing[0]!r}); give "
                             "--marked-features or --model", path=inputs.source, field="marked features")
        return inputs
    by_hash = _rows_by_hash(Path(marked_dir))
    extra: dict[str, NDArray[np.float32]] = {}
    for caption_id, text in texts.items():
        row = by_hash.get(sha256_text(marked_text(text)))
        if row is None:
            raise InputError(f"no embedding of the marked caption {marked_text(text)!r} (caption {caption_id!r})",
                             path=marked_dir, field="content_hash")
        extra[caption_id + MARK_SUFFIX] = row
    if extra and next(iter(extra.values())).shape[0] != inputs.y.shape[1]:
        raise InputError("marked features have another dimension than the caption features", path=marked_dir)
    return inputs.with_texts(extra)


def _rows_by_hash(folder: Path) -> dict[str, NDArray[np.float32]]:
    features = read_features(folder)
    manifest = read_json(folder / MANIFEST_FILE)
    hashes = read_table(folder / manifest["files"]["texts"], required=("content_hash",)).column("content_hash")
    return {str(h): features.texts[k] for k, h in enumerate(hashes.to_pylist())}
