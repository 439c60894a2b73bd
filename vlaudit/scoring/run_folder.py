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
(:func:`vlaudit.scoring.run_parts.operational_names`: the run and executor options, the output folder): they
change how a run is computed, not what it holds, so a rerun may change them freely.

**Lock.** An exclusive ``flock`` on ``FOLDER/.lock`` (released by the OS even on kill -9): two runs never
share a folder. **Partial files.** Opening removes the temporary files a killed writer left (never renamed,
never read) and the previous results, so a run killed before its final write leaves no results at all and the
rerun rebuilds them from the cache.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Protocol

from vlaudit.errors import InputError
from vlaudit.files import check_folder_target, read_json, write_manifest, write_result
from vlaudit.results.manifest import MANIFEST_SCHEMA_VERSION, RunManifest
from vlaudit.results.versioned import VersionedResult, check_schema_version
from vlaudit.scoring.run_parts import operational_names

MANIFEST = "manifest.json"
SUMMARY = "summary.json"
#: the score cache of a cached run (:class:`~vlaudit.scoring.cache.ChunkCache`'s folder)
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
    parts hold, :func:`~vlaudit.scoring.run_parts.operational_names`), the option naming the folder
    (for the refusal's wording) and whether a replacing run reuses the folder's score cache."""

    OPERATIONAL: ClassVar[frozenset[str]]
    FOLDER_OPTION: ClassVar[str]
    CACHED: ClassVar[bool]


def changed_arguments(out_dir: str | Path, arguments: Mapping[str, Any],
                      operational: frozenset[str] = _OPERATIONAL) -> list[str]:
    """``name: old → new`` for each argument of the run already in ``out_dir`` that ``arguments`` changes.

    Empty when the folder holds no run, or one with the same arguments (a resumed or repeated run);
    operational arguments and arguments the old run did not record are not compared. Paths are compared as
    recorded, resolved (:mod:`vlaudit.scoring.run_arguments`), and a file whose content was recorded by its
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

    def has_run(self) -> bool:
        """Whether the folder holds a run (its manifest)."""
        return (self.path / MANIFEST).is_file()

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
