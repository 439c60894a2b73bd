"""The inputs of a model comparison, read from disk: each model's margins runs, the questions of its ITEMS file,
its failed items and the noise floor of each run (:func:`vlaudit.sources.noise_floor.read_floors`).

An input is a ``vca score`` run folder (``margins.parquet``, ``manifest.json``, ``failures.jsonl``,
``stability.json`` from ``vca stability``), a ``vca report`` folder written inside one (``RUN/report``: the
margins are its parent's), or a MARGINS file. The questions come from the ITEMS file the run's manifest names,
when that file is there. A ``vca report`` folder away from its run is refused in one line: its ``items.csv``
holds the report's per-item events, not the per-context margins every compared metric is computed from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from vlaudit.errors import InputError
from vlaudit.files import iter_jsonl, read_json
from vlaudit.sources.items import BenchmarkItem, read_items
from vlaudit.sources.margins import MarginRun, read_margins
from vlaudit.sources.noise_floor import NoiseFloor, read_floors

MARGINS_FILE = "margins.parquet"
REPORT_FILE = "vca.json"
REPORT_ITEMS_FILE = "items.csv"


@dataclass(frozen=True)
class ModelRuns:
    """The runs of one input: its margins runs, where they came from, questions and failed items by
    (dataset, item id), and the noise floor of each run that has one, by run key (model, dataset, interface)."""

    source: str
    runs: tuple[MarginRun, ...]
    questions: Mapping[tuple[str, str], str] = field(default_factory=dict)
    #: (dataset, item id) → the option texts in order, for the multiple-choice items of the ITEMS file
    options: Mapping[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    failed: Mapping[tuple[str, str], str] = field(default_factory=dict)
    floors: Mapping[tuple[str, str, str], NoiseFloor] = field(default_factory=dict)


def _standalone_report(folder: Path) -> InputError | None:
    """The error for a ``vca report`` folder outside its run: its ``items.csv`` holds per-item events
    (correct, Dep, D-CC, G_img under the report's controls) but not the per-context margins a comparison
    re-derives every metric from (Strict, the mismatch and relation axes, the noise flags on m_o, another
    control set), nor the image fingerprint the item matching checks."""
    items = folder / REPORT_ITEMS_FILE
    if not (folder / REPORT_FILE).is_file() and not items.is_file():
        return None
    held = (f"its {REPORT_ITEMS_FILE} holds the report's per-item events (correct, dep, dcc, g_img)"
            if items.is_file() else f"it has no {REPORT_ITEMS_FILE}")
    return InputError(f"a vca report folder outside its run: {held}, not the per-context margins and image "
                      f"fingerprint (source_sha256) a paired comparison needs; pass the vca score run folder "
                      f"(with {MARGINS_FILE}) instead", path=folder)


def margins_path(path: str | Path) -> Path:
    """The MARGINS file an input names (see the module docstring); an InputError when it names none."""
    path = Path(path)
    if path.is_file():
        return path
    for candidate in (path / MARGINS_FILE, path.parent / MARGINS_FILE):
        if path.is_dir() and candidate.is_file():
            return candidate
    standalone = _standalone_report(path) if path.is_dir() else None
    if standalone is not None:
        raise standalone
    raise InputError(f"not a vca score run folder, a report folder inside one or a MARGINS file (no "
                     f"{MARGINS_FILE} in it or its parent)", path=path)


def _items(folder: Path) -> list[BenchmarkItem]:
    """The items of the ITEMS file the run's manifest names (none when it names none, or it is gone)."""
    manifest = folder / "manifest.json"
    if not manifest.is_file():
        return []
    arguments = read_json(manifest).get("arguments")
    benchmark = arguments.get("benchmark") if isinstance(arguments, Mapping) else None
    if not isinstance(benchmark, str) or not Path(benchmark).is_file():
        return []
    return read_items(benchmark)


def _failed(folder: Path) -> dict[tuple[str, str], str]:
    path = folder / "failures.jsonl"
    if not path.is_file():
        return {}
    out: dict[tuple[str, str], str] = {}
    for _, row in iter_jsonl(path):
        if row.get("status") == "failed" and row.get("context") == "original":
            out[(str(row.get("dataset") or ""), str(row.get("item_id")))] = "failed image"
    return out


def read_model_runs(path: str | Path) -> ModelRuns:
    """Read one input (see the module docstring)."""
    margins = margins_path(path)
    folder = margins.parent
    runs = tuple(read_margins(margins))
    items = _items(folder)
    return ModelRuns(source=str(path), runs=runs,
                     questions={(item.dataset or "", item.item_id): item.question for item in items},
                     options={(item.dataset or "", item.item_id): tuple(item.options) for item in items
                              if item.options},
                     failed=_failed(folder), floors=read_floors(runs))
