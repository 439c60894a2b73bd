"""The compositionality suites from a notebook: list them, read a file as published, evaluate a model on it.

:func:`evaluate_suite` is ``vlaudit suite eval``: read the suite file with the suite's own reader, score every
item's image×text matrix with the model (a dual encoder's cosine, an MLLM's yes/no margin; cached, resumable:
:mod:`vlaudit.scoring.suite_scores`), then compute the suite's official figures (its tie rule, its aggregation),
exact CycleAcc over the cycles the items hold, and the marginal audit of its negatives
(:mod:`vlaudit.analysis.suites.evaluate`). It writes ``OUT/suite.json`` (the :class:`SuiteResult`),
``OUT/suite.csv`` (its flat rows) and ``OUT/scores.parquet`` (one row per scored entry) and returns the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pyarrow as pa

from vlaudit.analysis.stats_options import StatsOptions, spreads_stats
from vlaudit.analysis.suites.evaluate import evaluate_items, read_items
from vlaudit.analysis.suites.registry import SUITES, suite_named
from vlaudit.backends.base import FeatureBackend, YesNoBackend
from vlaudit.backends.registry import BackendLoad
from vlaudit.errors import InputError
from vlaudit.files import read_json, write_result, write_table
from vlaudit.metrics.suites import SuiteScores
from vlaudit.records import SuiteRead
from vlaudit.report.suites import suite_csv_rows
from vlaudit.results.suites import SuiteResult
from vlaudit.scoring.mllm_cycle_scores import INTERFACE, check_query
from vlaudit.scoring.run.executors import open_features, yes_no_executor
from vlaudit.scoring.run.folder import RunFolder
from vlaudit.scoring.run.parts import ModelRef, RunOptions
from vlaudit.scoring.suite_scores import (
    CROPS_DIR,
    SUITE_QUERY,
    dual_suite_scores,
    has_crops,
    suite_image_files,
    yes_no_pair_items,
    yes_no_suite_scores,
)
from vlaudit.scoring.suite_spec import SuiteEvalSpec, model_ref
from vlaudit.settings import BOOTSTRAP_RESAMPLES, CYCLE_BOOTSTRAP_SEED, CYCLE_TIE_TOL

RESULT_FILE, CSV_FILE, SCORES_FILE = "suite.json", "suite.csv", "scores.parquet"


def suites() -> list[dict[str, str]]:
    """Every registered suite: ``name``, ``title``, ``layout``, ``metric``, ``tie_rule``, ``official`` (repo @
    commit : path), ``directions`` (``i2t``, ``t2i`` or ``both``) and ``options`` (reader keywords)."""
    return [{"name": s.name, "title": s.title, "layout": s.layout, "metric": s.metric, "tie_rule": s.tie_rule,
             "official": s.official, "directions": s.directions,
             "options": ", ".join(f"{k}: {v}" for k, v in s.options)} for s in SUITES.values()]


def read_suite(suite: str, path: str | Path, options: Mapping[str, object] | None = None) -> SuiteRead:
    """Read ``path`` as suite ``suite`` publishes it (its registered reader; ``options`` its reader keywords,
    ``vlaudit suite list`` names them): the items, and how many records were read, kept and left out (why)."""
    return read_items(suite_named(suite), path, options)


@spreads_stats(resamples="n_resamples", seed="seed")
def evaluate_suite(suite: str, path: str | Path, *, images: str | Path, model: str | ModelRef, out: str | Path,
                   query: str | None = None, options: Mapping[str, object] | None = None, dtype: str = "auto",
                   batch_size: int | None = None, chunk_size: int = 64, device: str = "auto",
                   tol: float = CYCLE_TIE_TOL, n_resamples: int = BOOTSTRAP_RESAMPLES,
                   seed: int = CYCLE_BOOTSTRAP_SEED, across: bool = True, overwrite: bool = False,
                   backend: FeatureBackend | YesNoBackend | None = None,
                   stats: StatsOptions | None = None) -> SuiteResult:
    """Score ``model`` on suite ``suite`` read from ``path`` and write ``out`` (module docstring).

    Args:
        suite: a registered name (:func:`suites`).
        path: the suite file as published.
        images: the folder the suite's image paths are relative to.
        model: a dual encoder (``hf-clip:``, ``open_clip:``, ``ref:scene-clip-bag``, ...) or a yes/no MLLM
            (``hf:``, ``vllm:``, ``ref:tiny-qwen2-vl``, ...), or a ModelRef with its options.
        out: the output folder (``suite.json``, ``suite.csv``, ``scores.parquet``, the score run).
        query: an MLLM's question, one ``{caption}`` field (default: ``Does the caption "{caption}" describe
            the image?``); a dual encoder takes none.
        options: the suite reader's keywords (``vlaudit suite list`` names them).
        dtype, batch_size, chunk_size, device: how the model runs (a rerun may change them).
        tol, n_resamples, seed: CycleAcc's tie tolerance on the float64 contrast, bootstrap resamples and seed.
        across: also count the cycles two items complete (pair suites).
        overwrite: replace a run with other arguments in ``out`` (an MLLM's score cache is kept and reused).
        backend: the model already loaded (``model`` then names it in the manifest).
        stats: ``n_resamples`` and ``seed`` as one :class:`~vlaudit.StatsOptions` record instead (its fields,
            defaults included, replace them: its seed is VCA §19's unless given; giving both is refused).

    Returns:
        The :class:`~vlaudit.results.suites.SuiteResult` written to ``out/suite.json``. The same call again
        reads the finished scores back (an interrupted MLLM run resumes from its cache).
    """
    entry = suite_named(suite)
    reader_options = dict(options or {})
    spec = SuiteEvalSpec(suite=entry.name, file=Path(path), images=Path(images), out=Path(out),
                         model=model_ref(model, dtype), query=query, options=reader_options,
                         run=RunOptions(batch_size=batch_size, chunk_size=chunk_size, device=device))
    if spec.kind == "features" and query is not None:
        raise InputError("a dual encoder scores the caption itself; --query is for yes/no MLLMs", field="--query")
    checked = None if spec.kind == "features" else check_query(SUITE_QUERY if query is None else query)
    read = read_items(entry, spec.file, reader_options)
    if not read.items:
        raise InputError(f"no item of the {entry.name} file is left to score (counts: {dict(read.counts)})",
                         path=spec.file)
    recorded = spec.recorded(checked)
    folder = spec.run_folder()
    RunFolder(folder).check(spec, recorded, overwrite=overwrite)
    run = RunOptions(batch_size=spec.batch_size(), chunk_size=chunk_size, device=device)
    if spec.kind == "features":
        files = suite_image_files(read.items, spec.images, spec.out, source=spec.file)

        def load() -> FeatureBackend:
            if backend is not None:
                return backend  # type: ignore[return-value]  # spec.kind == "features": a dual encoder
            return open_features(BackendLoad(spec.model, run))[0]

        scores, _ = dual_suite_scores(load, read.items, files, folder, arguments=recorded,
                                      text_similarity=entry.text_similarity, source=spec.file,
                                      operational=spec.OPERATIONAL)
    else:
        scores = _yes_no(spec, read, run, recorded, checked or SUITE_QUERY, backend)
    evaluation = evaluate_items(entry, read, scores, tol=tol, n_resamples=n_resamples, seed=seed, across=across)
    result = SuiteResult(
        suite=entry.name, title=entry.title, file=str(spec.file), images=str(spec.images), model=spec.model.spec,
        kind=spec.kind, query=checked, metric=entry.metric, tie_rule=entry.tie_rule, official=entry.official,
        counts=dict(read.counts), notes=list(read.notes), n_items=len(read.items), figures=evaluation.figures,
        cycles=evaluation.cycles, audit=evaluation.audit, tol=tol, n_resamples=n_resamples, seed=seed,
        warnings=evaluation.warnings)
    save_suite_result(spec.out, result, read, scores)
    return result


def _yes_no(spec: SuiteEvalSpec, read: SuiteRead, run: RunOptions, recorded: Mapping[str, object], query: str,
            backend: FeatureBackend | YesNoBackend | None) -> SuiteScores:
    crops = has_crops(read.items)
    files = suite_image_files(read.items, spec.images, spec.out, source=spec.file, materialise_all=crops)
    images_dir = spec.out / CROPS_DIR if crops else spec.images
    queries = yes_no_pair_items(read.items, files, images_dir, query=query, dataset=spec.suite)
    load = BackendLoad(spec.model, run, interfaces=(INTERFACE,))
    given = backend if isinstance(backend, YesNoBackend) else None
    with yes_no_executor(load, None, backend=given) as (loaded, executor):
        scores, _ = yes_no_suite_scores(loaded, read.items, queries, images_dir, spec.run_folder(),
                                        arguments=recorded, chunk_size=run.chunk_size, executor=executor,
                                        source=spec.file)
    return scores


def save_suite_result(out: str | Path, result: SuiteResult, read: SuiteRead, scores: SuiteScores) -> list[Path]:
    """Write ``suite.json``, ``suite.csv`` and ``scores.parquet`` (item_id, subset, image, text, label, score)."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"item_id": item.item_id, "subset": item.subset, "image_index": i, "text_index": j,
             "image": item.images[i].key, "text": item.texts[j], "label": label, "score": float(matrix[i, j])}
            for item, matrix in zip(read.items, scores.pairs, strict=True) for i, j, label in item.pairs()]
    table = pa.table({name: [row[name] for row in rows] for name in (
        "item_id", "subset", "image_index", "text_index", "image", "text", "label", "score")})
    return [write_table(folder / SCORES_FILE, table), write_table(folder / CSV_FILE, suite_csv_rows(result)),
            write_result(folder / RESULT_FILE, result)]


def load_suite_result(path: str | Path) -> SuiteResult:
    """Read a ``suite.json`` (or the folder holding one) back as the typed result."""
    file = Path(path)
    if file.is_dir():
        file = file / RESULT_FILE
    return SuiteResult.from_dict(read_json(file), path=file)
