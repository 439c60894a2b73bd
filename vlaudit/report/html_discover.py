"""Find what a run folder holds, by scanning it: the report shows whatever is there and skips the rest.

Recognised (by content, not by name, except ``summary.json`` at the top and ``margins.parquet``):

* the demo's ``summary.json`` (today's and the earlier schema with ``cycles.encoders``);
* ``vca report`` output: ``vca.json`` (``{"runs", "settings", …}``) and its ``items.csv`` (rows with ``g_img``);
* ``vca score`` run folders: ``margins.parquet`` and ``manifest.json``; benchmark items tables (``question``);
* ``cycles eval`` JSON (``{"families", "overall" | "tol"}``, or a mapping of names to such results);
* cycles tables (``cycle_id, family, image_1, caption_1, …``) and scores tables (``image_id, caption_id, score``);
* ``generate_check.json`` (``{"checks", "max_new_tokens", …}``, ``vca generate-check``);
* ``factorial.json`` (``{"models", "pooled"}``) and ``known_answers.json`` (rows ``{check, passed, …}``);
* ``compare vca`` output: ``compare.json`` (``{"comparisons", "leaderboard", …}``);
* ``suite eval`` output: ``suite.json`` (``{"suite", "figures", "cycles", "audit", …}``).
* ``vlaudit giveaway`` output: ``giveaway.json`` (``{"benchmarks": [{"lints", "baselines", …}], "resamples"}``).

A ``vca report`` folder also reads the ``margins.parquet`` and ``manifest.json`` of the runs its ``vca.json``
names (``margins_files``), wherever it lies (``reports/X`` beside ``runs/x``); an older one, those of the run
it lies inside.

A file that cannot be read is listed in :attr:`Artifacts.problems` and otherwise ignored.
"""

from __future__ import annotations

import csv
import json
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from vlaudit.errors import InputError
from vlaudit.results.columns import CYCLES, SCORES
from vlaudit.results.cycles import CycleEvaluationResult
from vlaudit.results.manifest import MANIFEST_SCHEMA_VERSION
from vlaudit.results.suites import SuiteResult
from vlaudit.results.vca.outputs import FactorialResult, VcaReportResult
from vlaudit.results.versioned import check_schema_version

SKIP_DIRS = {"cache", "__pycache__", "node_modules", "images"}
MAX_JSON_BYTES = 64 * 2**20
MAX_FILES = 20000
CYCLE_COLUMNS = set(CYCLES.required)
SCORE_COLUMNS = set(SCORES.names)
VCA_ITEM_COLUMNS = {"model", "dataset", "interface", "item_id", "g_img"}
MARGIN_COLUMNS = {"model", "item_id", "context", "margin"}


@dataclass
class Artifacts:
    """Everything found under one run folder (paths absolute; JSON already parsed)."""

    root: Path
    summary: dict[str, Any] | None = None
    vca_reports: list[tuple[Path, VcaReportResult]] = field(default_factory=list)
    vca_items: list[Path] = field(default_factory=list)
    margins: list[Path] = field(default_factory=list)
    manifests: list[tuple[Path, dict[str, Any]]] = field(default_factory=list)
    cycle_evals: list[tuple[Path, str, dict[str, Any]]] = field(default_factory=list)
    cycle_tables: list[Path] = field(default_factory=list)
    score_tables: list[Path] = field(default_factory=list)
    cycle_meta: list[tuple[Path, dict[str, Any]]] = field(default_factory=list)
    benchmarks: list[Path] = field(default_factory=list)
    factorials: list[tuple[Path, dict[str, Any]]] = field(default_factory=list)
    generate_checks: list[tuple[Path, dict[str, Any]]] = field(default_factory=list)
    known_answers: list[dict[str, Any]] = field(default_factory=list)
    comparisons: list[tuple[Path, dict[str, Any]]] = field(default_factory=list)
    suites: list[tuple[Path, SuiteResult]] = field(default_factory=list)
    giveaways: list[tuple[Path, dict[str, Any]]] = field(default_factory=list)
    image_dirs: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def rel(self, path: str | Path) -> str:
        """``path`` relative to the run folder when inside it (for display)."""
        try:
            return str(Path(path).resolve().relative_to(self.root))
        except ValueError:
            return str(path)

    @property
    def empty(self) -> bool:
        return not any([self.summary, self.vca_reports, self.vca_items, self.margins, self.cycle_evals,
                        self.cycle_tables, self.factorials, self.known_answers, self.manifests,
                        self.generate_checks, self.comparisons, self.suites, self.giveaways])


def _columns(path: Path) -> set[str]:
    """Column names of a JSONL, CSV or Parquet table from its first record / header only."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return set(pq.read_schema(path).names)
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        first = handle.readline()
    if suffix == ".jsonl":
        row = json.loads(first) if first.strip() else {}
        return set(row) if isinstance(row, dict) else set()
    return {c.strip() for c in next(csv.reader([first]), [])}


def _is_eval(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("families"), dict) and ("overall" in obj or "tol" in obj)


def _classify_json(art: Artifacts, path: Path, obj: Any) -> None:
    if isinstance(obj, list):
        if obj and all(isinstance(r, dict) and "check" in r and "passed" in r for r in obj):
            art.known_answers.extend(obj)
        return
    if not isinstance(obj, dict):
        return
    if isinstance(obj.get("comparisons"), list) and isinstance(obj.get("leaderboard"), list):
        art.comparisons.append((path, obj))
    elif isinstance(obj.get("suite"), str) and isinstance(obj.get("figures"), list) and "audit" in obj:
        art.suites.append((path, SuiteResult.from_dict(obj, path=path)))
    elif isinstance(obj.get("benchmarks"), list) and "resamples" in obj and all(
            isinstance(b, dict) and "lints" in b for b in obj["benchmarks"]):
        art.giveaways.append((path, obj))
    elif isinstance(obj.get("runs"), list) and "settings" in obj:
        art.vca_reports.append((path, VcaReportResult.from_dict(obj, path=path)))
    elif isinstance(obj.get("checks"), list) and "max_new_tokens" in obj:
        art.generate_checks.append((path, obj))
    elif isinstance(obj.get("models"), list) and "pooled" in obj:
        check_schema_version(obj, FactorialResult.schema_version, path=path, what="a factorial result")
        art.factorials.append((path, obj))
    elif _is_eval(obj):
        check_schema_version(obj, CycleEvaluationResult.schema_version, path=path, what="a cycles evaluation")
        art.cycle_evals.append((path, str(obj.get("name") or Path(str(obj.get("scores") or path)).stem), obj))
    elif (named := {k: v for k, v in obj.items() if k != "schema_version"}) and all(map(_is_eval, named.values())):
        art.cycle_evals.extend((path, str(name), result) for name, result in named.items())
    elif path.name.endswith(".meta.json") and "families" in obj:
        art.cycle_meta.append((path, obj))
    elif path.name == "manifest.json" and any(k in obj for k in ("model", "backend", "packages", "git_commit")):
        check_schema_version(obj, MANIFEST_SCHEMA_VERSION, path=path, what="a run manifest", oldest=0)
        art.manifests.append((path, obj))
    elif isinstance(obj.get("known_answers"), list) and path.name != "summary.json":
        _classify_json(art, path, obj["known_answers"])


def _classify_table(art: Artifacts, path: Path) -> None:
    columns = _columns(path)
    if path.name == "margins.parquet" or MARGIN_COLUMNS <= columns:
        art.margins.append(path)
    elif CYCLE_COLUMNS <= columns:
        art.cycle_tables.append(path)
    elif SCORE_COLUMNS <= columns:
        art.score_tables.append(path)
    elif VCA_ITEM_COLUMNS <= columns:
        art.vca_items.append(path)
    elif {"item_id", "question"} <= columns:
        art.benchmarks.append(path)


def _enclosing_run(art: Artifacts) -> None:
    """A ``vca report`` folder's scoring runs: the margins files its ``vca.json`` records (``margins_files``,
    wherever the report folder lies: ``reports/X`` beside ``runs/x``), or, for a file written before they were
    recorded, the run the folder lies inside (``vca report RUN/margins.parquet --out RUN/report``). Their
    margins and manifests are read too, so that the galleries show each item's question, image and scores."""
    recorded = [Path(p) for _, report in art.vca_reports for p in report.margins_files]
    parent = art.root.parent
    if not recorded and not art.margins and art.vca_reports and (parent / "margins.parquet").is_file():
        recorded = [parent / "margins.parquet"]
    known = {p.resolve() for p in art.margins}
    for margins in dict.fromkeys(recorded):
        if not margins.is_file() or margins.resolve() in known:
            continue
        art.margins.append(margins)
        known.add(margins.resolve())
        manifest = margins.parent / "manifest.json"
        if manifest.is_file() and manifest not in {p for p, _ in art.manifests}:
            try:
                _classify_json(art, manifest, json.loads(manifest.read_text(encoding="utf-8")))
            except Exception as exc:  # noqa: BLE001  (one unreadable file never blocks the report)
                art.problems.append(f"{manifest}: {type(exc).__name__}: {exc}")


def discover(run_dir: str | Path) -> Artifacts:
    """Scan ``run_dir`` (not into cache or image folders, which are only remembered) and classify files."""
    root = Path(run_dir).resolve()
    art = Artifacts(root=root)
    seen = 0
    for folder, dirs, files in os.walk(root):
        base = Path(folder)
        keep = []
        for name in sorted(dirs):
            if name == "images":
                art.image_dirs.append(base / name)
            if name not in SKIP_DIRS and not name.startswith("."):
                keep.append(name)
        dirs[:] = keep
        for name in sorted(files):
            seen += 1
            if seen > MAX_FILES:
                art.problems.append(f"stopped scanning after {MAX_FILES} files")
                return art
            path = base / name
            suffix = path.suffix.lower()
            try:
                if suffix == ".json":
                    if path.stat().st_size > MAX_JSON_BYTES:
                        continue
                    obj = json.loads(path.read_text(encoding="utf-8"))
                    if path.parent == root and name == "summary.json" and isinstance(obj, dict):
                        art.summary = obj
                        if isinstance(obj.get("known_answers"), list):
                            art.known_answers.extend(r for r in obj["known_answers"] if isinstance(r, dict))
                    else:
                        _classify_json(art, path, obj)
                elif suffix in (".jsonl", ".csv", ".parquet"):
                    _classify_table(art, path)
            except InputError as exc:  # a file vlaudit wrote but cannot read as such (a future schema_version)
                art.problems.append(str(exc))
                warnings.warn(f"{exc}; left out of the report", stacklevel=2)
            except Exception as exc:  # noqa: BLE001  (one unreadable file never blocks the report)
                art.problems.append(f"{art.rel(path)}: {type(exc).__name__}: {exc}")
    _enclosing_run(art)
    for _, manifest in art.manifests:
        args = manifest["arguments"] if isinstance(manifest.get("arguments"), dict) else {}
        images = args.get("images")
        if isinstance(images, str) and Path(images).is_dir():
            art.image_dirs.append(Path(images))
        bench = args.get("benchmark")
        if isinstance(bench, str) and Path(bench).is_file() and Path(bench) not in art.benchmarks:
            art.benchmarks.append(Path(bench))
    for path, meta in art.cycle_meta:
        for key in ("instances", "scene_graphs", "captions", "images"):
            value = meta.get(key)
            if isinstance(value, str):
                parent = Path(value) if key == "images" else Path(value).parent
                art.image_dirs.extend(d for d in (parent / "images", parent) if d.is_dir())
        art.image_dirs.append(path.parent)
    return art
