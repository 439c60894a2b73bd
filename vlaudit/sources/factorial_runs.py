"""The inputs of the 3×3 evidence-source factorial (VCA §10, ``vlaudit vca factorial``): the margins of one
``vca score`` run per model and the factorial ITEMS they scored."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vlaudit.errors import InputError
from vlaudit.files import read_json
from vlaudit.sources.items import BenchmarkItem, read_items
from vlaudit.sources.margins import MarginRun, read_margins


@dataclass(frozen=True)
class FactorialInputs:
    """The runs (sorted by model, dataset) that score the factorial items, each run's margins file, the items
    and where they were read from."""

    runs: list[MarginRun]
    items: list[BenchmarkItem]
    items_path: Path
    run_paths: list[Path]
    margins_label: str


def select_runs(runs: Sequence[MarginRun], items: Sequence[BenchmarkItem],
                interface: str = "yesno") -> list[MarginRun]:
    """The runs of ``interface`` that score the factorial items (by dataset name, else by shared item ids)."""
    datasets = {i.dataset for i in items if i.dataset}
    ids = {i.item_id for i in items}
    chosen = [r for r in runs if r.interface == interface and r.dataset in datasets]
    if not chosen:
        chosen = [r for r in runs if r.interface == interface and ids & {str(x) for x in r.item_ids}]
    return sorted(chosen, key=lambda r: (r.model, r.dataset))


def resolve_items(run_dir: Path, items: Path | None) -> Path:
    """``--items`` if given, else the benchmark named in RUN_DIR/manifest.json, else RUN_DIR/items.jsonl."""
    if items is not None:
        return items
    manifest = run_dir / "manifest.json"
    if manifest.is_file():
        data = read_json(manifest)
        args = data.get("arguments") if isinstance(data.get("arguments"), dict) else {}
        for key in ("benchmark", "items"):
            value = data.get(key) or args.get(key)
            if isinstance(value, str) and Path(value).is_file():
                return Path(value)
    fallback = run_dir / "items.jsonl"
    if fallback.is_file():
        return fallback
    raise InputError("cannot find the factorial items: pass --items DIR/items.jsonl", path=run_dir)


def _run_paths(run_dir: str | Path | Sequence[str | Path]) -> list[Path]:
    paths = [Path(run_dir)] if isinstance(run_dir, (str, Path)) else [Path(p) for p in run_dir]
    if not paths:
        raise InputError("no run folder or margins file given", field="RUN_DIR")
    for path in paths:
        if not path.exists():
            raise InputError("run folder or margins file not found", path=path)
    return paths


def read_factorial_inputs(run_dir: str | Path | Sequence[str | Path], *, items: str | Path | None = None,
                          margins: str | Path | None = None, interface: str = "yesno") -> FactorialInputs:
    """Read the margins of one or several runs and the items.

    ``run_dir`` is a scoring run folder (its ``margins.parquet``) or a margins file, or a list of them: one
    ``vlaudit vca score`` run per model. The items come from ``items``, else from the first run's manifest.
    A (model, dataset, interface) run found in two inputs is an error.
    """
    run_paths = _run_paths(run_dir)
    if margins is not None and len(run_paths) > 1:
        raise InputError("--margins applies to a single RUN_DIR", path=margins, field="margins")
    margin_paths = [Path(margins)] if margins is not None else [
        path if path.is_file() else path / "margins.parquet" for path in run_paths]
    first = run_paths[0]
    items_path = resolve_items(first if first.is_dir() else first.parent, None if items is None else Path(items))
    item_list = read_items(items_path)
    runs: list[MarginRun] = []
    origin: dict[tuple[str, str, str], Path] = {}
    for path in margin_paths:
        for run in select_runs(read_margins(path), item_list, interface):
            key = (str(run.model), str(run.dataset), str(run.interface))
            if key in origin:
                raise InputError(f"run {key[0]}/{key[1]}/{key[2]} is also in {origin[key]}", path=path,
                                 field="model")
            origin[key] = path
            runs.append(run)
    if not runs:
        raise InputError(f"no '{interface}' run scores the factorial items of {items_path}",
                         path=", ".join(map(str, margin_paths)))
    runs.sort(key=lambda r: (r.model, r.dataset))
    paths = [origin[(str(r.model), str(r.dataset), str(r.interface))] for r in runs]
    label = str(margin_paths[0]) if len(margin_paths) == 1 else ", ".join(map(str, margin_paths))
    return FactorialInputs(runs=runs, items=item_list, items_path=items_path, run_paths=paths, margins_label=label)
