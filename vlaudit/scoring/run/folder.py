"""A run folder's life, in one place: refuse or resume, lock, clean partial files, write the manifest and summary.

Every command that writes a resumable run (``vca score``, ``vca score-dual``, ``cycles score-mllm``,
``features``) goes through :class:`RunFolder`::

    folder = RunFolder(out)
    folder.check(spec, recorded, overwrite=overwrite)   # before any model loads: refuse another run's folder
    ...                                                 # load the model, plan the run
    with folder.open(outputs=RESULT_FILES) as run:      # lock; temporary and previous result files removed
        run.write_manifest(manifest)
        ...                                             # score (the cache survives), write the results
        run.write_summary(summary)                      # last: a summary marks a finished run

**Refuse or resume.** A folder holding a run whose recorded arguments differ from the new spec's is refused
with one line naming the differing fields (:func:`changed_arguments`), unless ``overwrite``; the same spec
resumes from the folder's cache. A folder whose run never scored a record (a manifest, no summary, no cache
chunk: the engine crashed at its first forward, the server refused the first request) holds nothing to protect:
a corrected rerun with other arguments replaces it without ``overwrite``. A spec's ``OPERATIONAL`` names follow from its parts
(:func:`vlaudit.scoring.run.parts.operational_names`: the run and executor options, the output folder): they
change how a run is computed, not what it holds, so a rerun may change them freely.

**Lock.** An exclusive ``flock`` on ``FOLDER/.lock`` (released by the OS even on kill -9): two runs never
share a folder. **Partial files.** Opening removes the temporary files a killed writer left (never renamed,
never read) and the previous results, so a run killed before its final write leaves no results at all and the
rerun rebuilds them from the cache.

The arguments a ``vca score`` run records in its manifest, built the same way by the CLI and the API.

A rerun into a folder that holds a run is compared with that run by what its arguments *mean*, not how they
were spelled (:func:`vlaudit.scoring.run.folder.changed_arguments`): paths are recorded resolved (``items.jsonl``
given from its folder and ``/abs/items.jsonl`` are one argument), and the items are recorded by a content
fingerprint, so an ITEMS file edited in place is a different run while the same rows given as a file, a
DataFrame or a list are the same run. ``vlaudit vca score`` and :func:`vlaudit.score_margins` both call
:func:`score_arguments`, so a run of one into a folder holding a run of the other with other arguments is
refused.

A rerun of a finished scoring run: answered from the run folder, without loading the model.

``vca score`` with the same arguments into a folder that holds a finished run (its ``summary.json``) would
score nothing: every record is in the cache, and the margins it would write are the ones already there. The
model is then not loaded at all (the slowest part of a cached rerun is importing and loading it) when the run
folder shows that nothing changed since: the same recorded arguments (items by content), every item's image
file with the sha256 ``margins.parquet`` recorded, the same package versions and vlaudit commit, and the same
model files (:func:`model_files` recorded in the manifest; a model whose files cannot be identified without
loading it, e.g. a hub id, always takes the ordinary path). A run with failed records (an image that may
have been fixed since) or a damaged cache chunk takes the ordinary path too, which names the chunk and
rescores what it must.

What the rerun writes is what the ordinary path writes when every unit comes from the cache: the summary
with ``n_units_from_cache`` = ``n_unique_units`` and nothing scored now; the margins are left as they are.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol

import pyarrow.parquet as pq

from vlaudit.backends.registry import parse_spec_or_none
from vlaudit.errors import InputError
from vlaudit.files import check_folder_target, read_json, write_manifest, write_result
from vlaudit.hashing import sha256_file, sha256_json
from vlaudit.results.backend_description import PrefixCacheDecision
from vlaudit.results.manifest import MANIFEST_SCHEMA_VERSION, RunManifest, git_commit, package_versions
from vlaudit.results.vca.outputs import ScoringSummary
from vlaudit.results.versioned import VersionedResult, check_schema_version
from vlaudit.scoring.run.cache import DamagedChunk, read_chunk
from vlaudit.scoring.run.manifest import local_weights_identity
from vlaudit.scoring.run.parts import operational_names
from vlaudit.sources.image_paths import confine
from vlaudit.sources.items import BenchmarkItem

MANIFEST = "manifest.json"
SUMMARY = "summary.json"
#: the score cache of a cached run (:class:`~vlaudit.scoring.run.cache.ChunkCache`'s folder)
CACHE = "cache"
# what a run that never scored a record leaves in its folder: its manifest, its lock, an empty cache
_UNSCORED_ENTRIES = frozenset({MANIFEST, ".lock", CACHE})

_OPERATIONAL = operational_names()  # a `vca score` run's (the default of the functions below)
_UNORDERED_ARGUMENTS = frozenset({"contexts", "interface"})  # rows are sorted: their order changes nothing
# A file argument whose content is recorded beside it: compared by that content when both runs recorded it
# (the same items read from another path, or given as rows by the API, are the same run).
_COMPARED_BY_CONTENT = {"benchmark": "items_sha256", "template": "question_templates",
                        "cycles": "cycles_sha256", "captions": "captions_sha256"}


class RunSpec(Protocol):
    """What a run spec tells its folder: which recorded fields may change between reruns (those its operational
    parts hold, :func:`~vlaudit.scoring.run.parts.operational_names`), the option naming the folder
    (for the refusal's wording) and whether a replacing run reuses the folder's score cache."""

    OPERATIONAL: ClassVar[frozenset[str]]
    FOLDER_OPTION: ClassVar[str]
    CACHED: ClassVar[bool]


def changed_arguments(out_dir: str | Path, arguments: Mapping[str, Any],
                      operational: frozenset[str] = _OPERATIONAL) -> list[str]:
    """``name: old → new`` for each argument of the run already in ``out_dir`` that ``arguments`` changes.

    Empty when the folder holds no run, or one with the same arguments (a resumed or repeated run);
    operational arguments and arguments the old run did not record are not compared. Paths are compared as
    recorded, resolved (:mod:`vlaudit.scoring.run.folder`), and a file whose content was recorded by its
    content."""
    path = Path(out_dir) / MANIFEST
    if not path.is_file():
        return []
    try:
        manifest = read_json(path)
        previous = manifest.get("arguments") or {}
    except (InputError, AttributeError):
        return ["manifest.json (unreadable)"]
    # a run folder written by a newer vlaudit is refused before anything is compared or scored
    check_schema_version(manifest, MANIFEST_SCHEMA_VERSION, path=path, what="a run manifest", oldest=0)

    def canonical(name: str, value: Any) -> Any:
        return sorted(value) if name in _UNORDERED_ARGUMENTS and isinstance(value, list) else value

    def shown(name: str, value: Any) -> str:
        return f"{value[:12]}…" if name.endswith("_sha256") and isinstance(value, str) else repr(value)

    def by_content(name: str) -> bool:
        field = _COMPARED_BY_CONTENT.get(name)
        return field is not None and field in previous and field in arguments

    return [f"{name}: {shown(name, previous[name])} → {shown(name, value)}" for name, value in arguments.items()
            if name in previous and name not in operational and not by_content(name)
            and canonical(name, previous[name]) != canonical(name, value)]


def refuse_other_run(out_dir: str | Path, arguments: Mapping[str, Any],
                     operational: frozenset[str] = _OPERATIONAL, *, field: str = "--out",
                     cached: bool = True) -> None:
    """Raise an :class:`InputError` naming the differing arguments when ``out_dir`` holds a run with others.

    ``field`` names the option that chose the folder; ``cached``: the run keeps a score cache that a replacing
    run reuses."""
    changed = changed_arguments(out_dir, arguments, operational)
    if changed:
        kept = " (the score cache is kept and reused)" if cached else ""
        raise InputError(f"holds a run with other arguments ({'; '.join(changed)}); give --overwrite to replace "
                         f"its results{kept} or choose another {field}", path=out_dir, field=field)


@contextlib.contextmanager
def run_lock(out: Path) -> Iterator[None]:
    """An exclusive lock on a run folder (released by the OS even on kill -9): two runs never share a cache.

    The lock file ``.lock`` is removed on every exit path of the ``with`` block. Because a run that ends
    removes it, a run that opened the old file just before may lock an unlinked file: it then retries on
    the path's current file, so two live runs never both hold "the" lock.
    """
    check_folder_target(out).mkdir(parents=True, exist_ok=True)
    path = out / ".lock"
    while True:
        handle = open(path, "a+")  # noqa: SIM115 (held across the yield, closed below)
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            handle.close()
            raise InputError("another vca score run is using this directory", path=out) from exc
        try:
            same = os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        handle.close()  # a finishing run removed the file we locked: lock the new one
    try:
        yield
    finally:
        path.unlink(missing_ok=True)  # removed while still held, so no other run can lock it in between
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        handle.close()


class OpenRun:
    """A locked run folder: the one writer of its manifest and typed summary."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def write_manifest(self, manifest: RunManifest) -> Path:
        """``manifest.json``: what the run is (command, recorded arguments, model record), atomically."""
        return write_manifest(self.path, manifest)

    def write_summary(self, summary: VersionedResult) -> Path:
        """``summary.json``, the typed summary, written last: it marks a finished run."""
        return write_result(self.path / SUMMARY, summary)


class RunFolder:
    """The folder of one resumable run (see the module docstring for its life)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def check(self, spec: RunSpec, recorded: Mapping[str, Any], *, overwrite: bool = False) -> None:
        """Refuse (one-line :class:`~vlaudit.errors.InputError` naming the differing fields) a run of ``spec``
        into this folder when it holds a run with another spec; nothing when it holds none, the same spec, or
        ``overwrite`` is given, or the folder's run never scored a record (:meth:`scored_nothing`). Call it
        before any model loads."""
        if overwrite:
            return
        if spec.CACHED and self.scored_nothing():
            changed_arguments(self.path, recorded, spec.OPERATIONAL)  # a later vlaudit's manifest is still refused
            return
        refuse_other_run(self.path, recorded, operational=spec.OPERATIONAL, field=spec.FOLDER_OPTION,
                         cached=spec.CACHED)

    def scored_nothing(self) -> bool:
        """Whether the folder's run (if any) never scored a record: no summary and no score-cache chunk, sealed
        or damaged (a chunk is written only once its records are scored)."""
        cache = self.path / CACHE
        if (self.path / SUMMARY).exists() or (cache.is_dir() and any(cache.glob("chunk-*.jsonl"))):
            return False
        # any other result in the folder (a suite's features and suite.json, a report) is something to protect
        return all(entry.name in _UNSCORED_ENTRIES for entry in self.path.iterdir()) if self.path.is_dir() else True

    def lock(self) -> contextlib.AbstractContextManager[None]:
        """The folder's lock alone (no files removed)."""
        return run_lock(self.path)

    @contextlib.contextmanager
    def open(self, spec: RunSpec | None = None, recorded: Mapping[str, Any] | None = None, *,
             overwrite: bool = False, outputs: Sequence[str] = ()) -> Iterator[OpenRun]:
        """Lock the folder and start a run in it: with ``spec`` (and its ``recorded`` arguments) refuse another
        run's folder first (:meth:`check`); then remove the temporary files of ``outputs`` a killed writer left
        and the previous results among ``outputs`` (every one but the manifest, which the new run replaces)."""
        if spec is not None:
            self.check(spec, recorded or {}, overwrite=overwrite)
        with run_lock(self.path):
            for name in outputs:
                for partial in self.path.glob(f".{name}.*.tmp"):
                    partial.unlink(missing_ok=True)
                if name != MANIFEST:
                    (self.path / name).unlink(missing_ok=True)
            yield OpenRun(self.path)


# The CLI's defaults of the options that reach the backend loader; the API records the same for an option
# it was not given, so that a default run of either front door records the same arguments.
BACKEND_DEFAULTS: dict[str, Any] = {"dtype": "auto", "device": "auto", "device_map": None, "revision": None,
                                    "min_pixels": None, "max_pixels": None, "trust_remote_code": False,
                                    "prefix_cache": None, "system": None}


def resolved_path(path: str | Path | None) -> str | None:
    """The absolute path with ``~``, ``..`` and symbolic links resolved (None stays None)."""
    return None if path is None else str(Path(path).expanduser().resolve())


def resolved_model_spec(spec: str) -> str:
    """``PREFIX:NAME`` with NAME resolved when it is a local path (``hf:./m`` ≡ ``hf:/abs/m``); hub ids and
    reference names are left as given."""
    parsed = parse_spec_or_none(spec)
    if parsed is not None and Path(parsed.name).expanduser().exists():
        return f"{parsed.prefix}:{resolved_path(parsed.name)}"
    return spec


def items_fingerprint(items: Sequence[Any]) -> str:
    """sha256 of the items' rows (:meth:`BenchmarkItem.to_row`, in order): what the run scores."""
    return sha256_json([item.to_row() for item in items])


def score_arguments(*, model: str, items: Sequence[Any], benchmark: str | Path | None, images: str | Path,
                    out: str | Path, contexts: Sequence[str], interfaces: Sequence[str], seed: int,
                    batch_size: int = 8, chunk_size: int = 64, strict: bool = False,
                    model_name: str | None = None, template: str | Path | None = None,
                    question_templates: Any = None, executor: str = "local", address: str | None = None,
                    workers: int = 1, gpus_per_worker: float = 0.0, threads_per_worker: int | None = None,
                    **backend_options: Any) -> dict[str, Any]:
    """The manifest's ``arguments`` of a scoring run (names as the CLI spells its options).

    ``benchmark`` is the ITEMS file when there is one (None for rows given in memory); ``items_sha256`` (the
    items' content) is what a rerun is compared on. Backend options not given take the CLI's defaults.
    """
    unknown = sorted(set(backend_options) - set(BACKEND_DEFAULTS))
    options = {**BACKEND_DEFAULTS, **{k: v for k, v in backend_options.items() if k in BACKEND_DEFAULTS}}
    return {"model": resolved_model_spec(model), "benchmark": resolved_path(benchmark),
            "items_sha256": items_fingerprint(items), "images": resolved_path(images), "out": resolved_path(out),
            "contexts": list(contexts), "interface": list(interfaces), "batch_size": batch_size, "seed": seed,
            "strict": strict, **options, "model_name": model_name, "chunk_size": chunk_size,
            "executor": executor, "address": address, "workers": workers, "gpus_per_worker": gpus_per_worker,
            "threads_per_worker": threads_per_worker, "template": resolved_path(template),
            "question_templates": question_templates,
            **({"other_backend_options": {k: _plain(backend_options[k]) for k in unknown}} if unknown else {})}


def _plain(value: Any) -> Any:
    """A JSON value as is; anything else (a torch dtype, an object) by its text."""
    return value if value is None or isinstance(value, (str, int, float, bool, list, dict)) else str(value)


RESULT_FILES = ("margins.parquet", "failures.jsonl")


def model_files(spec: str, reference: Mapping[str, Path] | None = None) -> dict[str, Any] | None:
    """What identifies a model's weights without loading it: a local model folder's files
    (:func:`~vlaudit.scoring.run.manifest.local_weights_identity`) or, for a reference model, ``reference`` (its
    shipped files by name); None when they cannot be known without loading the model (a hub id)."""
    if reference is not None:
        return {"reference": {name: sha256_file(path) for name, path in sorted(reference.items())}}
    parsed = parse_spec_or_none(spec)
    identity = local_weights_identity(parsed.name) if parsed is not None and parsed.prefix == "hf" else None
    return None if identity is None else {"local": identity}


def finished_summary(out: str | Path, recorded: Mapping[str, Any], items: Sequence[BenchmarkItem],
                     images: str | Path, files: Mapping[str, Any] | None
                     ) -> tuple[ScoringSummary, PrefixCacheDecision | None] | None:
    """(the summary a rerun writes, the run's recorded prefix-cache decision) when the finished run in ``out``
    answers the rerun (module docstring), the summary written into ``out``; None when the ordinary path must
    run (then nothing is touched)."""
    folder = Path(out)
    if files is None or not all((folder / name).is_file() for name in (MANIFEST, SUMMARY, *RESULT_FILES)):
        return None
    try:
        manifest = read_json(folder / MANIFEST)
        summary = ScoringSummary.from_dict(read_json(folder / SUMMARY), path=folder / SUMMARY)
    except (InputError, AttributeError, TypeError):
        return None
    previous = manifest.get("arguments") if isinstance(manifest, dict) else None
    if (not isinstance(previous, dict) or manifest.get("model_files") != files
            or any(name not in previous for name in recorded)
            or manifest.get("packages") != package_versions() or manifest.get("git_commit") != git_commit()
            or summary.n_failed or summary.damaged_cache_chunks or summary.n_items != len(items)
            or not _cache_whole(folder / "cache", summary.n_unique_units)
            or not _images_unchanged(folder / "margins.parquet", items, Path(images))):
        return None
    rerun = ScoringSummary.from_dict({**summary.to_dict(), "n_units_from_cache": summary.n_unique_units,
                                      "n_units_scored_now": 0, "seconds": 0.0, "units_per_second": None,
                                      "records_per_second": None})
    with RunFolder(folder).lock():
        write_result(folder / SUMMARY, rerun)
    return rerun, recorded_decision(manifest)


def recorded_decision(manifest: object) -> PrefixCacheDecision | None:
    """The prefix-cache decision a run's manifest records (its ``prefix_cache``, as the backend's ``prepare()``
    returned it); None when it records none, or one this vlaudit cannot read (the decision is only reported)."""
    decision = manifest.get("prefix_cache") if isinstance(manifest, Mapping) else None
    if decision is None:
        return None
    try:
        return PrefixCacheDecision.from_dict(decision)
    except InputError:
        return None


def run_decision(out: str | Path) -> PrefixCacheDecision | None:
    """:func:`recorded_decision` of the run in folder ``out`` (None when it holds no readable manifest)."""
    try:
        return recorded_decision(read_json(Path(out) / MANIFEST))
    except (InputError, OSError):
        return None


def _cache_whole(directory: Path, n_units: int) -> bool:
    """Every chunk of the score cache sealed and whole, holding at least the run's units: a damaged chunk is
    for the ordinary path to name, move aside and rescore (:class:`~vlaudit.scoring.run.cache.ChunkCache`)."""
    keys: set[str] = set()
    for path in sorted(directory.glob("chunk-*.jsonl")) if directory.is_dir() else []:
        try:
            keys.update(row["key"] for row in read_chunk(path))
        except (DamagedChunk, OSError):
            return False
    return len(keys) >= n_units


def _images_unchanged(margins: Path, items: Sequence[BenchmarkItem], images: Path) -> bool:
    """Every item with an image has rows in ``margins`` whose ``source_sha256`` is its file's sha256 now."""
    try:
        table = pq.read_table(margins, columns=["item_id", "source_sha256"])
    except Exception:  # noqa: BLE001  (an unreadable table: the ordinary path rebuilds it)
        return False
    recorded: dict[str, str | None] = dict(zip(table.column("item_id").to_pylist(),
                                               table.column("source_sha256").to_pylist(), strict=True))
    hashes: dict[str, str] = {}
    for item in items:
        if item.image is None:
            continue
        if item.item_id not in recorded:
            return False
        path = confine(images, item.image)
        if path is None or not path.is_file():
            return False
        if item.image not in hashes:
            hashes[item.image] = sha256_file(path)
        if recorded[item.item_id] != hashes[item.image]:
            return False
    return True
