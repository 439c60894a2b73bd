"""A rerun of a finished scoring run: answered from the run folder, without loading the model.

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

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from vlaudit.backends.registry import parse_spec_or_none
from vlaudit.errors import InputError
from vlaudit.files import read_json, write_result
from vlaudit.hashing import sha256_file
from vlaudit.results.backend_description import PrefixCacheDecision
from vlaudit.results.manifest import git_commit, package_versions
from vlaudit.results.vca import ScoringSummary
from vlaudit.scoring.cache import DamagedChunk, read_chunk
from vlaudit.scoring.manifest import local_weights_identity
from vlaudit.scoring.run_folder import MANIFEST, SUMMARY, RunFolder
from vlaudit.sources.image_paths import confine
from vlaudit.sources.items import BenchmarkItem

RESULT_FILES = ("margins.parquet", "failures.jsonl")


def model_files(spec: str, reference: Mapping[str, Path] | None = None) -> dict[str, Any] | None:
    """What identifies a model's weights without loading it: a local model folder's files
    (:func:`~vlaudit.scoring.manifest.local_weights_identity`) or, for a reference model, ``reference`` (its
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
    for the ordinary path to name, move aside and rescore (:class:`~vlaudit.scoring.cache.ChunkCache`)."""
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
