"""The Visual Credit Audit from a notebook: score margins, report credit, analyse the factorial (VCA §3–§13)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from vlaudit.analysis.vca.factorial import csv_rows, run_factorial_analysis
from vlaudit.analysis.vca.report import ReportSettings, compute_report
from vlaudit.api._inputs import as_items, as_margin_runs
from vlaudit.api.results import Result, with_interval
from vlaudit.backends.registry import load_backend
from vlaudit.report.vca_tables import write_report_files
from vlaudit.scoring.run_arguments import score_arguments
from vlaudit.scoring.runner import refuse_other_run, run_scoring
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    CONFIDENCE_LEVEL,
    FACTORIAL_BOOTSTRAP_SEED,
    PRIMARY_CONTROLS,
)

HEADLINE = ("acc", "dep", "dcc", "cu")


@dataclass
class Margins:
    """A scoring run folder: ``path`` is its ``margins.parquet``; ``summary`` the run's counts."""

    path: Path
    summary: dict[str, Any]

    def to_frame(self) -> Any:
        """The margins as a pandas DataFrame (schema: :mod:`vlaudit.sources.margins`)."""
        return pq.read_table(self.path).to_pandas()


def score_margins(model: Any, items: Any, *, images: str | Path, out: str | Path,
                  contexts: Sequence[str] = ("original", "text", "blank"), interfaces: Sequence[str] = ("yesno",),
                  seed: int = 0, batch_size: int = 8, chunk_size: int = 64, overwrite: bool = False,
                  **backend_options: Any) -> Margins:
    """Literal yes/no margins m = NLL(no) − NLL(yes) of every item under each context (VCA §3, §9, §11).

    Args:
        model: a model spec (``hf:…``, ``ref:…``) or a loaded yes/no backend.
        items: an ITEMS file, DataFrame, pyarrow Table, list of rows or of ``BenchmarkItem``.
        images: the folder the items' image paths are relative to.
        out: the run folder (resumable: the same call after an interruption continues from its cache).
        contexts: from ``original, text, blank, mean, mismatch, rele, irre`` (VCA Table 10).
        interfaces: ``yesno`` and/or ``truefalse``.
        seed: seed of the mismatch derangement.
        batch_size: sequences per forward pass (a spec's backend only).
        chunk_size: unique queries per atomic cache chunk.
        overwrite: replace the results of a run with other arguments in ``out`` (as ``--overwrite``).
        **backend_options: passed to the backend loader (``dtype``, ``device``, ...).

    The manifest records the arguments ``vlaudit vca score`` records for the same run, and a folder holding
    a run with other arguments (from either) is refused with the same :class:`~vlaudit.errors.InputError`.
    """
    item_list = as_items(items)
    spec = model if isinstance(model, str) else model.spec
    arguments = score_arguments(model=spec, items=item_list,
                                benchmark=items if isinstance(items, (str, Path)) else None, images=images,
                                out=out, contexts=contexts, interfaces=interfaces, seed=seed,
                                batch_size=batch_size, chunk_size=chunk_size, **backend_options)
    if not overwrite:
        refuse_other_run(out, arguments)
    backend = load_backend(model, batch_size=batch_size, **backend_options) if isinstance(model, str) else model
    summary = run_scoring(backend, item_list, images_dir=images, out_dir=out, contexts=list(contexts),
                          interfaces=list(interfaces), seed=seed, chunk_size=chunk_size, arguments=arguments)
    return Margins(Path(out) / "margins.parquet", summary)


class VcaResult(Result):
    """The VCA report — ``rows``: model, dataset, interface, n, Acc, Dep, D-CC, C-U (+ intervals);
    ``data``: everything ``vca.json`` holds; ``report``: the full report object (items, groups, gaps)."""

    report: Any = None


def _headline(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for run in runs:
        row = {"model": run["model"], "dataset": run["dataset"], "interface": run["interface"], "n": run["n"]}
        for name in HEADLINE:
            row[name] = run[name]
            with_interval(row, name, run["ci"].get(name))
        rows.append(row)
    return rows


def vca_report(margins: Any, *, controls: Sequence[str] = PRIMARY_CONTROLS, n_resamples: int = BOOTSTRAP_RESAMPLES,
               seed: int = BOOTSTRAP_SEED, level: float = CONFIDENCE_LEVEL) -> VcaResult:
    """Visual Credit Audit of cached margins (VCA §3): Acc, Dep, D-CC, C-U = Acc − D-CC with paired bootstrap
    intervals per (model, dataset, interface), plus the permutation, relation and robustness axes.

    Args:
        margins: a margins file, DataFrame, pyarrow Table, list of rows, or :func:`score_margins`' result.
        controls: the headline control contexts of G_img = r_o − max_c r_c.
        n_resamples: paired (group-clustered) bootstrap resamples.
        seed: bootstrap seed.
        level: confidence level of every interval.

    ``.save(dir)`` writes exactly what ``vlaudit vca report`` writes.
    """
    report = compute_report(as_margin_runs(margins), ReportSettings(controls=tuple(controls),
                                                                    n_resamples=n_resamples, seed=seed, level=level))
    result = VcaResult(report.to_json(), _headline(report.runs), title="Visual Credit Audit",
                       interval_columns=HEADLINE,
                       writer=lambda out, res: write_report_files(out, res.report))
    result.report = report
    return result


def factorial(runs: Any, *, out: str | Path, items: str | Path | None = None, interface: str = "yesno",
              n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = FACTORIAL_BOOTSTRAP_SEED) -> Result:
    """The 3×3 evidence-source factorial (VCA §10): C-U, responsiveness, answer flips and source effects.

    ``runs`` is one scoring run folder or margins file per model (or a list of them); ``items`` the factorial
    ITEMS (default: from the first run's manifest). Writes ``factorial.json`` and two CSV files into ``out``.
    """
    paths = [runs] if isinstance(runs, (str, Path)) else list(runs)
    data = run_factorial_analysis(paths, items=items, out_dir=out, interface=interface, n_resamples=n_resamples,
                                  seed=seed)
    return Result(data, csv_rows(data)[0], title="Evidence-source factorial")
