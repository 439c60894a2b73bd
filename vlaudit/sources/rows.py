"""One row source for every benchmark reader: the benchmark's own file, or a Hugging Face dataset.

:func:`benchmark_rows` yields ``(row_number, record)`` (1-based, dataset order) from any of:

* a JSONL file — the non-empty lines (:func:`vlaudit.files.iter_jsonl`);
* ``hf-dataset:NAME[:CONFIG][@SPLIT]`` where NAME is a Hub dataset id — loaded with
  ``datasets.load_dataset(NAME, CONFIG, split=SPLIT)``, so ``HF_DATASETS_OFFLINE``, ``HF_HOME`` and
  ``HF_DATASETS_CACHE`` apply as they do for the user's own code (offline, only what is cached loads);
* ``hf-dataset:DIR[@SPLIT]`` or plainly ``DIR`` — a folder written by ``Dataset.save_to_disk`` or
  ``DatasetDict.save_to_disk`` (``datasets.load_from_disk``), or a folder of Parquet files;
* ``hf-dataset:FILE.parquet`` or plainly ``FILE.parquet`` — the Parquet export (``Dataset.to_parquet``),
  read with pyarrow (``datasets`` is not needed for it).

A dataset with several splits needs ``@SPLIT``. Rows are numbered as the lines of the JSONL file a dataset
was made from (``Dataset.from_json``), so ids built from line numbers agree between the two. Numeric id
columns are read as text, as from JSONL.

Images. ``datasets.Image`` stores an image as the Arrow struct ``{bytes, path}`` (in memory, on disk and in
Parquet). Each such value becomes the file name ``<sha256 of the bytes>.<format>`` and the bytes are written
once into an :class:`ImageFolder` (skipped when the file is there): equal images get equal names on every
run and machine, so the scoring cache keys stay stable. Give that folder as ``--images`` when scoring.
A cell with empty bytes, or bytes no image reader recognises, is an :class:`InputError` naming the row and
the column (the benchmarks' own loaders decode every image and fail on it too).
A reader whose image field (``image``, ``filename``, ``image_path``) is absent from the rows takes the
dataset's only image column in its place.

Readers of other benchmarks (Winoground, NaturalBench, …) take a source the same way: call
:func:`benchmark_rows` where they would call ``iter_jsonl``, or :func:`is_dataset_source` to branch from a
JSON reader.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, UnidentifiedImageError

from vlaudit.errors import InputError, MissingDependencyError
from vlaudit.files import _ids_as_text, atomic_write, iter_jsonl
from vlaudit.hashing import sha256_bytes
from vlaudit.sources.hub_access import hub_offline, offline_reason, offline_unless_reachable

HF_PREFIX = "hf-dataset:"
IMAGES_ENV = "VLAUDIT_HF_IMAGES"
_PARQUET = (".parquet", ".pq")
_MAGIC = ((b"\x89PNG\r\n\x1a\n", ".png"), (b"\xff\xd8\xff", ".jpg"), (b"GIF87a", ".gif"), (b"GIF89a", ".gif"),
          (b"BM", ".bmp"))
_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".tif", ".tiff")


@dataclass(frozen=True)
class HfSpec:
    """A parsed ``hf-dataset:`` source: a Hub id or local path, its config and its split (None when absent)."""

    name: str
    config: str | None = None
    split: str | None = None

    @property
    def local(self) -> Path | None:
        """The local folder or Parquet file NAME names, or None for a Hub id."""
        path = Path(self.name).expanduser()
        return path if path.exists() else None


def parse_hf_spec(text: str) -> HfSpec:
    """``hf-dataset:NAME[:CONFIG][@SPLIT]`` → :class:`HfSpec` (an existing local path is taken whole first)."""
    rest = text[len(HF_PREFIX):] if text.startswith(HF_PREFIX) else text
    if not rest.strip():
        raise InputError(f"expected {HF_PREFIX}NAME[:CONFIG][@SPLIT]", path=text)
    if Path(rest).expanduser().exists():
        return HfSpec(rest)
    split = None
    if "@" in rest:
        rest, split = rest.rsplit("@", 1)
    if Path(rest).expanduser().exists():
        return HfSpec(rest, None, split or None)
    config = None
    if ":" in rest:
        rest, config = rest.split(":", 1)
    return HfSpec(rest, config or None, split or None)


def is_dataset_source(source: str | Path) -> bool:
    """Whether ``source`` is read as a dataset (``hf-dataset:``, a folder, a Parquet file), not as a file."""
    text = str(source)
    if text.startswith(HF_PREFIX):
        return True
    path = Path(text)
    return path.is_dir() or path.suffix.lower() in _PARQUET


def local_file(source: str | Path, *, reads: str) -> Path:
    """``source`` as the one local file a reader takes (``reads`` says which); a dataset source
    (``hf-dataset:``, a folder) is an :class:`InputError`: the format has no dataset form to read it from."""
    text = str(source)
    if text.startswith(HF_PREFIX) or Path(text).is_dir():
        raise InputError(f"this reader takes {reads}, not a dataset (hf-dataset: or a folder)", path=text)
    return Path(text)


def source_stem(source: str | Path) -> str:
    """A short name for defaults (dataset, split): the file or folder stem, or the Hub id's last part."""
    text = str(source)
    if not text.startswith(HF_PREFIX):
        return Path(text).stem
    spec = parse_hf_spec(text)
    if spec.local is not None:
        return spec.local.stem
    return spec.name.rstrip("/").split("/")[-1] + (f"_{spec.split}" if spec.split else "")


def default_images_dir() -> Path:
    """Where dataset images go when no folder is given: ``$VLAUDIT_HF_IMAGES``, else the user's cache
    (``$XDG_CACHE_HOME/vlaudit/hf-images``, default ``~/.cache/vlaudit/hf-images``)."""
    if os.environ.get(IMAGES_ENV):
        return Path(os.environ[IMAGES_ENV]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "vlaudit" / "hf-images"


def image_suffix(data: bytes, path: str | None) -> str:
    """The file suffix of encoded image bytes, from their magic number, else from the stored path."""
    for magic, suffix in _MAGIC:
        if data.startswith(magic):
            return suffix
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ".webp"
    stored = Path(path or "").suffix.lower()
    return stored if stored in _IMAGE_SUFFIXES else ".img"


def _checked_suffix(data: bytes, stored: str | None, *, source: str, record: str, field: str) -> str:
    """The suffix of an image cell's bytes; empty bytes or bytes no image reader knows are an InputError.

    The benchmarks' own loaders decode every image (``datasets.Image``, VLMEvalKit's base64 decoding) and fail on
    such a cell, so it is refused here rather than written as a ``.png`` that fails at scoring time."""
    if not data:
        raise InputError("the image cell holds no bytes (an empty image)", path=source, record=record, field=field)
    suffix = image_suffix(data, None)
    if suffix != ".img":
        return suffix
    try:
        with Image.open(io.BytesIO(data)) as image:  # reads the header only
            kind = (image.format or "").lower()
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise InputError(f"the image cell's {len(data)} bytes are not an image ({_head(data)}…)", path=source,
                         record=record, field=field) from exc
    return {"jpeg": ".jpg", "tiff": ".tif"}.get(kind, f".{kind}" if kind else image_suffix(data, stored))


def _head(data: bytes) -> str:
    """The first bytes of a cell as text a terminal shows whole (for the error line)."""
    return repr(data[:12])


class ImageFolder:
    """The content-addressed folder dataset images are written to (``folder=None``: names only, no files)."""

    def __init__(self, folder: str | Path | None) -> None:
        self.folder = None if folder is None else Path(folder)
        self.written = 0
        self.reused = 0  # already in the folder before this build
        self.repeated = 0  # the same image again within this release (POPE asks many questions per image)
        self._seen: set[str] = set()

    def name_for(self, value: dict[str, Any], *, source: str, record: str, field: str) -> str | None:
        """The file name of one ``{bytes, path}`` image value, writing its bytes once; None for no image."""
        data, stored = value.get("bytes"), value.get("path")
        if data is None and stored:
            try:
                data = Path(stored).read_bytes()
            except OSError as exc:
                raise InputError(f"image has no bytes and its path cannot be read ({exc.strerror})", path=source,
                                 record=record, field=field) from exc
        if data is None:
            return None
        name = sha256_bytes(data) + _checked_suffix(data, stored, source=source, record=record, field=field)
        if self.folder is not None:
            target = self.folder / name
            if name in self._seen:
                self.repeated += 1
            elif target.is_file():
                self.reused += 1
            else:
                with atomic_write(target, "wb") as handle:
                    handle.write(data)
                self.written += 1
            self._seen.add(name)
        return name


def _is_image_value(value: object) -> bool:
    return isinstance(value, dict) and set(value) == {"bytes", "path"}


def _image_columns(schema: Any) -> list[str]:
    def holds_image(kind: pa.DataType) -> bool:
        if pa.types.is_struct(kind):
            return {kind.field(i).name for i in range(kind.num_fields)} == {"bytes", "path"}
        if pa.types.is_list(kind) or pa.types.is_large_list(kind):
            return holds_image(kind.value_type)
        return False

    return [field.name for field in schema if holds_image(field.type)]


def _replace_images(value: Any, images: ImageFolder, **where: str) -> Any:
    if _is_image_value(value):
        return images.name_for(value, **where)
    if isinstance(value, list):
        return [_replace_images(v, images, **where) for v in value]
    return value


def _load_datasets() -> Any:
    try:
        import datasets  # optional extra [hf]: a clear error without it
    except ImportError as exc:
        raise MissingDependencyError("reading a Hugging Face dataset needs the 'datasets' package: "
                                     "pip install 'vlaudit[hf]'") from exc
    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    return datasets


def _pick_split(loaded: Any, spec: HfSpec, source: str) -> Any:
    """The Dataset of ``spec.split`` from a DatasetDict (the only one when there is one), or the Dataset."""
    if not hasattr(loaded, "keys"):
        held = getattr(loaded, "split", None)
        if spec.split is not None and held is not None and str(held) != spec.split:
            raise InputError(f"the dataset holds split '{held}', not '{spec.split}'", path=source)
        return loaded
    splits = list(loaded.keys())
    if spec.split is None:
        if len(splits) != 1:
            raise InputError(f"the dataset has splits {splits}; name one as {HF_PREFIX}NAME@SPLIT", path=source)
        return loaded[splits[0]]
    if spec.split not in splits:
        raise InputError(f"no split '{spec.split}'; the dataset has {splits}", path=source)
    return loaded[spec.split]


def _arrow_batches(source: str) -> Iterator[Any]:
    """Arrow record batches of the dataset ``source`` names, in row order."""
    spec = parse_hf_spec(source)
    local = spec.local
    if local is not None and (local.suffix.lower() in _PARQUET or (
            local.is_dir() and not any((local / f).exists() for f in ("state.json", "dataset_dict.json"))
            and any(local.glob("*.parquet")))):
        files = [local] if local.is_file() else sorted(local.glob("*.parquet"))
        for file in files:
            try:
                yield from pq.ParquetFile(file).iter_batches(batch_size=1024)
            except (pa.ArrowException, OSError) as exc:
                raise InputError(f"cannot read Parquet: {exc}", path=file) from exc
        return
    datasets = _load_datasets()
    try:
        if local is not None:
            loaded = datasets.load_from_disk(str(local))
        else:
            if offline_unless_reachable():  # an unreachable hub: the cache only, at once (no retries)
                datasets.config.HF_HUB_OFFLINE = True
            loaded = datasets.load_dataset(spec.name, spec.config, split=spec.split)
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - datasets raises many types; each becomes one line naming the source
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        if local is not None:
            raise InputError(f"cannot load the local dataset folder: {first}", path=source) from exc
        way_out = ""
        if hub_offline():
            way_out = (f" — {offline_reason()}: load it once where the hub is reachable (then HF_HUB_OFFLINE=1), or "
                       f"save it with Dataset.save_to_disk(DIR) and give {HF_PREFIX}DIR (a local folder)")
        raise InputError(f"cannot load the dataset (offline: only a cached one loads): {first}{way_out}",
                         path=source) from exc
    dataset = _pick_split(loaded, spec, source)
    for table in dataset.with_format("arrow").iter(batch_size=1024):
        yield from table.to_batches()


def dataset_rows(source: str | Path, *, images: ImageFolder | None = None, image_field: str | None = None,
                 wanted: Callable[[dict[str, Any]], bool] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(row_number, record)`` of a dataset source (see the module docstring), image columns as file names.

    ``image_field``: the reader's image field; when the rows lack it, the only image column fills it.
    ``wanted``: rows it refuses (a reader excludes them, e.g. SEED-Bench's video questions) keep their rows but
    get no image written: their image columns are None.
    """
    source = str(source)
    images = images if images is not None else ImageFolder(None)
    number = 0
    for batch in _arrow_batches(source):
        image_columns = _image_columns(batch.schema)
        rename = (image_columns[0] if image_field and image_field not in batch.schema.names
                  and len(image_columns) == 1 else None)
        for record in batch.to_pylist():
            number += 1
            keep = wanted is None or wanted(record)
            for column in image_columns:
                record[column] = _replace_images(record[column], images, source=source, record=f"row {number}",
                                                 field=column) if keep else None
            if rename is not None:
                record[image_field] = record.pop(rename)
            yield number, _ids_as_text(record)
    if number == 0:
        raise InputError("the dataset has no rows", path=source)


def benchmark_rows(source: str | Path, *, images: ImageFolder | None = None, image_field: str | None = None
                   ) -> Iterator[tuple[int, dict[str, Any]]]:
    """The one row source of the benchmark readers: a dataset source or else a JSONL file (module docstring)."""
    if is_dataset_source(source):
        return dataset_rows(source, images=images, image_field=image_field)
    return iter_jsonl(source)
