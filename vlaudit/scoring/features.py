"""Dual-encoder features over a cycles table, and the zero-shot cycle scores computed from them.

Inputs (the cycle-construction output contract): each cycles row names two images and two captions by id.
The image file of an id is the row's ``file_name_1`` / ``file_name_2`` (relative to the images folder), or,
when absent, the id itself resolved in the folder (``ID``, ``ID.jpg|.jpeg|.png|.webp|.bmp`` or COCO's
``{ID:012d}.jpg``). Caption text is the row's ``text_1`` / ``text_2``, else the captions table beside the
cycles file (``STEM.captions.jsonl``: ``caption_id`` + ``text`` or ``caption``) or one given explicitly.
Image paths are confined to the images folder.

Features folder (``FEATS_DIR``), written atomically, manifest last (a folder without a manifest is
incomplete):

* ``images.parquet`` — ``image_id`` (string), ``content_hash`` (sha256 of the file bytes),
  ``embedding`` (fixed-size list<float32>[D]);
* ``texts.parquet`` — ``caption_id`` (string), ``content_hash`` (sha256 of the UTF-8 text), ``embedding``;
* ``manifest.json`` — a :class:`~vlaudit.scoring.run.manifest.RunManifest`: schema version, the run spec, and
  its record, a :class:`~vlaudit.results.run_records.FeaturesRunRecord`: the backend's ``describe()``, the
  caller's provenance (inputs), the files and their sha256, counts, dimension.

Deduplication: every id is embedded once, and ids whose content hashes agree share one forward pass (the
same picture stored under two ids, the same caption text under two caption ids). Embeddings are float32
and L2-normalised by the backend, in the model's own way.

Zero-shot score (cycle paper §5, frozen dual encoders): s(u, v) = cos(f(u), g(v)), computed in float64. A
model's logit scale (and SigLIP's bias) is a positive affine map of the cosine, which leaves every cycle
contrast's sign, hence CycleAcc, unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pyarrow as pa
from PIL import Image, UnidentifiedImageError

from vlaudit.backends.base import FeatureBackend, description_of, require_protocol
from vlaudit.errors import InputError
from vlaudit.files import check_folder_target, read_json, read_records, read_table, write_parquet
from vlaudit.hashing import sha256_file, sha256_text
from vlaudit.records import Cycle
from vlaudit.results.columns import FEATURE_IMAGES, FEATURE_TEXTS, SCORES, TableSchema
from vlaudit.results.run_records import FeatureCounts, FeaturesRunRecord
from vlaudit.results.versioned import check_schema_version
from vlaudit.scoring.run.folder import RunFolder
from vlaudit.scoring.run.manifest import MANIFEST_FILE, MANIFEST_SCHEMA_VERSION, RunManifest
from vlaudit.sources.cycle_tables import _id
from vlaudit.sources.image_paths import confine
from vlaudit.sources.images import ImageFailure, rgb_image
from vlaudit.version import __version__

IMAGE_FILE, TEXT_FILE = "images.parquet", "texts.parquet"
_IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".bmp")

Progress = Callable[[str, int, int], None]  # (task name, items done in this step, total items of the task)


@dataclass
class FeatureInputs:
    """What to embed: image id → file, caption id → text (in first-appearance order).

    ``image_records`` names, for each image id, the first cycles row and field that use it, so that an
    image that fails to decode later is reported at its record."""

    images: dict[str, Path] = field(default_factory=dict)
    texts: dict[str, str] = field(default_factory=dict)
    source: Path | None = None
    image_records: dict[str, tuple[str, str]] = field(default_factory=dict)


# ------------------------------------------------------------------------------------------------ inputs


def resolve_image_path(images_dir: Path, image_id: str, file_name: str | None, *, source: str | Path,
                       record: object) -> Path:
    """The file of one image id inside ``images_dir`` (see the module docstring); never outside it."""
    root = images_dir
    if file_name:
        names = [file_name]
        field_name = "file_name"
    else:
        names = [image_id] + [f"{image_id}{suffix}" for suffix in _IMAGE_SUFFIXES]
        if image_id.isdigit():
            names.append(f"{int(image_id):012d}.jpg")
        field_name = "image_id"
    for name in names:
        candidate = confine(root, name)
        if candidate is None:
            raise InputError(f"image path {name!r} escapes the images folder {str(root)!r}",
                             path=source, record=record, field=field_name)
        if candidate.is_file():
            return candidate
    raise InputError(f"image {file_name or image_id!r} not found in {str(root)!r}", path=source, record=record,
                     field=field_name)


def captions_table_path(cycles_path: Path) -> Path:
    """The captions table the cycle builders write beside ``CYCLES.jsonl``: ``CYCLES.captions.jsonl``."""
    stem = cycles_path.name[: -len(cycles_path.suffix)] if cycles_path.suffix else cycles_path.name
    return cycles_path.with_name(f"{stem}.captions.jsonl")


def read_caption_table(path: Path) -> dict[str, str]:
    """caption_id → text from a captions table (``caption_id`` or ``id``; ``text`` or ``caption``)."""
    texts: dict[str, str] = {}
    for index, row in enumerate(read_records(path), start=1):
        key = row.get("caption_id", row.get("id"))
        text = row.get("text", row.get("caption"))
        if key is None:
            raise InputError("missing caption id", path=path, record=f"row {index}", field="caption_id")
        if not isinstance(text, str):
            raise InputError("missing caption text", path=path, record=f"row {index}", field="text")
        texts[_id(key)] = text
    return texts


def collect_inputs(cycles: Sequence[Cycle], cycles_path: Path, images_dir: Path,
                   captions_path: Path | None = None) -> FeatureInputs:
    """Resolve every image file and caption text the cycles use; conflicting definitions are errors."""
    inputs = FeatureInputs(source=cycles_path)
    table: dict[str, str] | None = None
    sidecar = captions_path or captions_table_path(cycles_path)
    for row_number, cycle in enumerate(cycles, start=1):
        record = f"row {row_number} (cycle {cycle.cycle_id})"
        for side, image_id, caption_id in ((1, cycle.image_1, cycle.caption_1), (2, cycle.image_2, cycle.caption_2)):
            file_name = cycle.extra.get(f"file_name_{side}")
            path = resolve_image_path(images_dir, image_id, None if file_name is None else str(file_name),
                                      source=cycles_path, record=record)
            inputs.image_records.setdefault(image_id, (record, f"image_{side}"))
            if inputs.images.setdefault(image_id, path) != path:
                raise InputError(f"image id {image_id!r} names two files: {inputs.images[image_id]} and {path}",
                                 path=cycles_path, record=record, field=f"file_name_{side}")
            text = cycle.extra.get(f"text_{side}")
            if not isinstance(text, str):
                if table is None:
                    if not sidecar.is_file():
                        raise InputError(f"no caption text: the row has no text_{side} and there is no captions "
                                         f"table {str(sidecar)!r}", path=cycles_path, record=record,
                                         field=f"text_{side}")
                    table = read_caption_table(sidecar)
                if caption_id not in table:
                    raise InputError(f"caption id {caption_id!r} is not in the captions table {str(sidecar)!r}",
                                     path=cycles_path, record=record, field=f"caption_{side}")
                text = table[caption_id]
            if inputs.texts.setdefault(caption_id, text) != text:
                raise InputError(f"caption id {caption_id!r} has two different texts", path=cycles_path,
                                 record=record, field=f"text_{side}")
    return inputs


# ------------------------------------------------------------------------------------------------ extraction


def _open_rgb(path: Path, image_id: str, inputs: FeatureInputs) -> Any:
    """The RGB image of ``image_id``; a file that does not decode is an error at the cycles record using it."""
    try:
        with Image.open(path) as image:
            return rgb_image(image)
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError, Image.DecompressionBombError,
            ImageFailure) as exc:
        record, field_name = inputs.image_records.get(image_id, (None, None))
        raise InputError(f"cannot decode image {image_id!r} ({path}): {type(exc).__name__}: {exc}",
                         path=inputs.source, record=record, field=field_name) from exc


def _embedding_table(schema: TableSchema, ids: list[str], hashes: list[str], matrix: np.ndarray) -> Any:
    dim = matrix.shape[1]
    flat = pa.array(np.ascontiguousarray(matrix, dtype=np.float32).reshape(-1), type=pa.float32())
    id_name, hash_name, embedding_name = schema.names
    return pa.table({
        id_name: pa.array(ids, type=pa.string()),
        hash_name: pa.array(hashes, type=pa.string()),
        embedding_name: pa.FixedSizeListArray.from_arrays(flat, dim),
    })


def _encode_unique(keys: list[str], encode_part: Callable[[Sequence[str]], np.ndarray], chunk: int, task: str,
                   progress: Progress | None,
                   encode_parts: Callable[[list[list[str]]], Iterable[np.ndarray]] | None = None
                   ) -> dict[str, np.ndarray]:
    """Embed ``keys`` in chunks of ``chunk`` (the same chunks wherever they run, so the same numbers);
    ``encode_parts`` (a Ray executor) encodes all chunks elsewhere and yields their matrices in order."""
    rows: dict[str, np.ndarray] = {}
    if progress is not None:
        progress(task, 0, len(keys))
    parts = [keys[start:start + chunk] for start in range(0, len(keys), chunk)]
    matrices = encode_parts(parts) if encode_parts is not None else (encode_part(part) for part in parts)
    for part, matrix in zip(parts, matrices, strict=True):
        matrix = np.asarray(matrix, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(part):
            raise ValueError(f"{task}: backend returned shape {matrix.shape} for {len(part)} inputs")
        rows.update(zip(part, matrix, strict=True))
        if progress is not None:
            progress(task, len(part), len(keys))
    return rows


@runtime_checkable
class PreparesImages(Protocol):
    """A dual encoder whose preprocessing can run apart from its forward pass
    (:class:`~vlaudit.backends.torch_utils.BatchedDualEncoder`: ``hf-clip:``, ``open_clip:``)."""

    def prepare_images(self, images: Sequence[Any]) -> Any: ...

    def encode_prepared_images(self, prepared: Any) -> np.ndarray: ...


def write_features(backend: FeatureBackend, inputs: FeatureInputs, out_dir: str | Path, *,
                     provenance: Mapping[str, Any] | None = None, chunk: int | None = None,
                     progress: Progress | None = None, workers: int = 4, executor: Any = None,
                     command: str = "features", arguments: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Embed every image and caption of ``inputs`` once per distinct content; write the features folder.

    ``chunk`` (default: the backend's batch size) is how many distinct items are decoded and handed to the
    backend at a time, which bounds memory. Returns the manifest. Nothing is written (not even the folder)
    until every embedding is computed, so a bad image leaves no half-made features folder behind.
    ``executor``: a :class:`~vlaudit.scoring.run.ray_executor.RayFeatureExecutor` encodes the same chunks on Ray
    actors (``backend`` is then its proxy), giving the same embeddings.
    """
    require_protocol(backend, FeatureBackend)
    started = time.perf_counter()
    out = check_folder_target(out_dir)
    chunk = chunk or int(backend.batch_size)
    image_ids = list(inputs.images)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        image_hashes = list(pool.map(sha256_file, (inputs.images[i] for i in image_ids)))
        id_of_hash: dict[str, str] = {}
        for image_id, digest in zip(image_ids, image_hashes, strict=True):
            id_of_hash.setdefault(digest, image_id)

        def load(keys: Sequence[str]) -> list[Any]:
            ids = [id_of_hash[k] for k in keys]
            return list(pool.map(lambda i: _open_rgb(inputs.images[i], i, inputs), ids))

        def prefetched(parts: list[list[str]]) -> Iterable[np.ndarray]:
            """Decode the next chunk's images, and preprocess them where the backend can do it apart, on a
            helper thread while this chunk's forward pass runs (the same batches, so the same rows)."""
            if not parts:
                return
            apart = backend if isinstance(backend, PreparesImages) else None

            def ready(keys: Sequence[str]) -> Any:
                images = load(keys)
                return images if apart is None else apart.prepare_images(images)

            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="vlaudit-decode") as ahead:
                upcoming = ahead.submit(ready, parts[0])
                for position, _ in enumerate(parts):
                    inputs_now = upcoming.result()
                    if position + 1 < len(parts):
                        upcoming = ahead.submit(ready, parts[position + 1])
                    yield (backend.encode_images(inputs_now) if apart is None
                           else apart.encode_prepared_images(inputs_now))

        remote_images = None if executor is None else (lambda parts: executor.encode_images(
            [[(id_of_hash[k], str(inputs.images[id_of_hash[k]])) for k in part] for part in parts], inputs))
        image_rows = _encode_unique(list(id_of_hash), lambda keys: backend.encode_images(load(keys)), chunk,
                                    "images", progress, remote_images or prefetched)
    caption_ids = list(inputs.texts)
    text_hashes = [sha256_text(inputs.texts[c]) for c in caption_ids]
    text_of_hash: dict[str, str] = {}
    for caption_id, digest in zip(caption_ids, text_hashes, strict=True):
        text_of_hash.setdefault(digest, inputs.texts[caption_id])
    remote_texts = None if executor is None else (
        lambda parts: executor.encode_texts([[text_of_hash[k] for k in part] for part in parts]))
    text_rows = _encode_unique(list(text_of_hash), lambda keys: backend.encode_texts([text_of_hash[k] for k in keys]),
                               chunk, "texts", progress, remote_texts)
    dims = {row.shape[0] for row in (*image_rows.values(), *text_rows.values())}
    if len(dims) > 1:
        raise ValueError(f"image and text embeddings have different dimensions: {sorted(dims)}")
    dim = dims.pop() if dims else 0
    image_matrix = np.stack([image_rows[h] for h in image_hashes]) if image_ids else np.zeros((0, dim), np.float32)
    text_matrix = np.stack([text_rows[h] for h in text_hashes]) if caption_ids else np.zeros((0, dim), np.float32)
    with RunFolder(out).open(outputs=(MANIFEST_FILE, IMAGE_FILE, TEXT_FILE)) as run:
        # a previous run's manifest must not vouch for the new files while they are being replaced
        (out / MANIFEST_FILE).unlink(missing_ok=True)
        write_parquet(out / IMAGE_FILE, _embedding_table(FEATURE_IMAGES, image_ids, image_hashes, image_matrix))
        write_parquet(out / TEXT_FILE, _embedding_table(FEATURE_TEXTS, caption_ids, text_hashes, text_matrix))
        manifest = _manifest(out, backend, provenance, image_ids, caption_ids, image_rows, text_rows, dim,
                             started, command, arguments)
        run.write_manifest(manifest)
    return manifest.to_dict()


def _manifest(out: Path, backend: FeatureBackend, provenance: Mapping[str, Any] | None, image_ids: Sequence[str],
              caption_ids: Sequence[str], image_rows: Mapping[str, Any], text_rows: Mapping[str, Any], dim: int,
              started: float, command: str, arguments: Mapping[str, Any] | None) -> RunManifest:
    record = FeaturesRunRecord.of(
        model=description_of(backend), provenance=provenance,
        files={"images": IMAGE_FILE, "texts": TEXT_FILE},
        # what the reader checks, so a file copied in from another run or model is never paired with these
        files_sha256={name: sha256_file(out / name) for name in (IMAGE_FILE, TEXT_FILE)},
        dim=dim, counts=FeatureCounts(image_ids=len(image_ids), unique_images=len(image_rows),
                                      caption_ids=len(caption_ids), unique_texts=len(text_rows)),
        vlaudit=__version__, seconds=round(time.perf_counter() - started, 3))
    return RunManifest(command=command, arguments=dict(arguments or {}), record=record)


# ------------------------------------------------------------------------------------------------ reading


@dataclass(frozen=True)
class Features:
    """A features folder in memory: ids and their float32 embedding rows."""

    image_ids: list[str]
    images: np.ndarray
    caption_ids: list[str]
    texts: np.ndarray
    manifest: dict[str, Any]

    def image_index(self) -> dict[str, int]:
        return {key: row for row, key in enumerate(self.image_ids)}

    def caption_index(self) -> dict[str, int]:
        return {key: row for row, key in enumerate(self.caption_ids)}


def _read_embeddings(path: Path, schema: TableSchema) -> tuple[list[str], np.ndarray]:
    id_name = schema.names[0]
    table = read_table(path, required=schema.required)
    column = table.column("embedding").combine_chunks()
    dim = getattr(column.type, "list_size", None)
    if dim is None:
        raise InputError("embedding must be a fixed-size list of float32", path=path, field="embedding")
    matrix = column.values.to_numpy(zero_copy_only=False).astype(np.float32, copy=False).reshape(-1, dim)
    return [str(v) for v in table.column(id_name).to_pylist()], matrix


def read_features(feats_dir: str | Path) -> Features:
    """Read a features folder written by :func:`write_features` (a folder with no manifest is an error)."""
    folder = Path(feats_dir)
    manifest_path = folder / MANIFEST_FILE
    if not manifest_path.is_file():
        raise InputError("not a complete features folder (no manifest.json); run `vlaudit features`", path=folder)
    manifest = read_json(manifest_path)
    if not isinstance(manifest, dict):
        raise InputError("manifest.json is not a JSON object; run `vlaudit features`", path=manifest_path)
    # a folder written by a newer vlaudit is refused, as the run-folder reader does: its fields may mean otherwise
    check_schema_version(manifest, MANIFEST_SCHEMA_VERSION, path=manifest_path, what="a features manifest", oldest=0)
    files = manifest.get("files")
    if not isinstance(files, dict) or not all(isinstance(files.get(k), str) for k in ("images", "texts")):
        raise InputError("no 'files' naming the images and texts tables; run `vlaudit features`",
                         path=manifest_path, field="files")
    digests = manifest.get("files_sha256") or {}
    for name in (files["images"], files["texts"]):
        if name in digests and (folder / name).is_file() and sha256_file(folder / name) != digests[name]:
            raise InputError(f"{name} is not the file this run wrote (its sha256 differs from manifest.json's): "
                             "copied from another run or model? rerun `vlaudit features --overwrite`", path=folder)
    image_ids, images = _read_embeddings(folder / files["images"], FEATURE_IMAGES)
    caption_ids, texts = _read_embeddings(folder / files["texts"], FEATURE_TEXTS)
    dim = manifest.get("dim")
    for name, matrix in ((files["images"], images), (files["texts"], texts)):
        if isinstance(dim, int) and matrix.shape[1] != dim:
            raise InputError(f"embeddings of dimension {matrix.shape[1]}, but manifest.json records {dim}: the file "
                             "comes from another model; rerun `vlaudit features --overwrite`", path=folder / name,
                             field="embedding")
    return Features(image_ids, images, caption_ids, texts, manifest)


# ------------------------------------------------------------------------------------------------ zero-shot


def cosine_rows(features: Features, cycles: Iterable[Cycle], *, source: str | Path | None = None
                ) -> list[dict[str, Any]]:
    """Rows ``image_id, caption_id, score`` with score = cos(image, caption) in float64, one per distinct pair
    the cycles use (matched pairs and swaps), in first-appearance order."""
    image_index, caption_index = features.image_index(), features.caption_index()
    pairs: dict[tuple[str, str], None] = {}
    for cycle in cycles:
        for image_id, caption_id, _ in cycle.entries():
            if image_id not in image_index:
                raise InputError(f"image id {image_id!r} has no features", path=source,
                                 record=f"cycle {cycle.cycle_id}", field="image_id")
            if caption_id not in caption_index:
                raise InputError(f"caption id {caption_id!r} has no features", path=source,
                                 record=f"cycle {cycle.cycle_id}", field="caption_id")
            pairs[(image_id, caption_id)] = None
    if not pairs:
        return []
    keys = list(pairs)
    scores = pair_cosines(features.images[[image_index[u] for u, _ in keys]],
                          features.texts[[caption_index[v] for _, v in keys]])
    return [dict(zip(SCORES.names, (u, v, float(s)), strict=True)) for (u, v), s in zip(keys, scores, strict=True)]


def pair_cosines(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Row-wise cosine of two matrices in float64 (0 where a row has zero norm): the zero-shot score."""
    left, right = np.asarray(left, dtype=np.float64), np.asarray(right, dtype=np.float64)
    norms = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
    return np.einsum("ij,ij->i", left, right) / np.where(norms > 0, norms, 1.0)
