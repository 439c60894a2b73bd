"""The runs that load a model and write a run folder, one function per command; the CLI calls exactly these.

Each function takes a run spec (:mod:`vlaudit.scoring.run_spec`) or the same fields as keyword arguments,
checks the folder before any model loads (a run with another spec is refused naming the differing fields;
the same spec resumes; ``overwrite=True`` replaces it, as ``--overwrite`` does), and records the full spec in
the run's manifest (:class:`~vlaudit.scoring.manifest.RunManifest`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vlaudit.api._inputs import as_items
from vlaudit.api.vca import Margins
from vlaudit.backends.base import INTERFACES
from vlaudit.backends.letters import LETTER_INTERFACE
from vlaudit.backends.registry import require_kind
from vlaudit.backends.verbalizers import read_question_templates
from vlaudit.builders.circular import circular_items
from vlaudit.contexts.image_contexts import CONTEXTS
from vlaudit.errors import InputError
from vlaudit.files import write_table
from vlaudit.results.cycles import MllmCycleScores
from vlaudit.scoring.dual_margins import score_dual
from vlaudit.scoring.executors import open_backend
from vlaudit.scoring.features import collect_inputs, read_features, write_features
from vlaudit.scoring.mllm_cycle_scores import (
    CYCLE_QUERY,
    INTERFACE,
    check_query,
    cycle_pair_items,
    scores_from_margins,
)
from vlaudit.scoring.run_folder import RunFolder
from vlaudit.scoring.run_spec import CycleScoreSpec, DualScoreSpec, FeaturesSpec, ScoreSpec
from vlaudit.scoring.runner import run_scoring
from vlaudit.sources.cycle_tables import read_cycles
from vlaudit.sources.items import read_items


def _spec(kind: Any, first: Any, given: dict[str, Any], extra: str | None = None) -> Any:
    """``first`` when it already is a spec of ``kind``; else one built from the keyword arguments (those that
    are not fields go to ``extra`` when the spec has such a field, else they are an error)."""
    if isinstance(first, kind):
        return first
    names = {f.name for f in dataclasses.fields(kind)}
    unknown = {k: v for k, v in given.items() if k not in names}
    if unknown and extra is None:
        raise InputError(f"unknown argument(s) {sorted(unknown)} for {kind.COMMAND}", field=sorted(unknown)[0])
    fields = {k: v for k, v in given.items() if k in names}
    return kind(**fields, **({extra: unknown} if extra else {}))


def _check_names(name: str, given: Sequence[str], known: Any) -> None:
    unknown = [value for value in given if value not in known]
    if unknown or not given:
        raise InputError(f"unknown or empty {name} {unknown or list(given)}; available: {', '.join(known)}",
                         field=name)


def score_margins(model: Any, items: Any = None, *, overwrite: bool = False,
                  on_plan: Callable[[int, int], None] | None = None,
                  on_progress: Callable[[int], None] | None = None,
                  on_warning: Callable[[str], None] | None = None, **options: Any) -> Margins:
    """Literal yes/no margins m = NLL(no) − NLL(yes) of every item under each context (VCA §3, §9, §11).

    ``score_margins(ScoreSpec(...))``, or ``score_margins(model, items, images=..., out=..., **fields)`` with
    the fields of :class:`~vlaudit.scoring.run_spec.ScoreSpec` (``contexts``, ``interfaces``, ``seed``,
    ``batch_size``, ``chunk_size``, ``dtype``, ``device``, ...; other keywords pass to the backend loader).

    Args:
        model: a spec, a model spec string (``hf:…``, ``ref:…``) or a loaded yes/no backend.
        items: an ITEMS file, DataFrame, pyarrow Table, list of rows or of ``BenchmarkItem``.
        overwrite: replace the results of a run with another spec in ``out`` (as ``--overwrite``).
        on_plan, on_progress, on_warning: progress hooks (see :func:`vlaudit.scoring.runner.run_scoring`).

    The run folder is resumable: the same call after an interruption continues from its cache, and
    ``vlaudit vca score`` with the same arguments writes the same files.
    """
    loaded = None if isinstance(model, (str, ScoreSpec)) else model
    spec = _spec(ScoreSpec, model, {"model": model if loaded is None else loaded.spec, "benchmark": items,
                                    **options}, extra="backend_options")
    _check_names("contexts", spec.contexts, CONTEXTS)
    _check_names("interface", spec.interfaces, (*INTERFACES, LETTER_INTERFACE))
    if loaded is None:
        require_kind(spec.model, "yesno")
    templates = None if spec.template is None else read_question_templates(spec.template)
    item_list = as_items(spec.benchmark)
    if spec.circular:
        item_list = circular_items(item_list)
    recorded = spec.recorded(item_list, templates)
    RunFolder(spec.out).check(spec, recorded, overwrite=overwrite)
    backend, executor = (loaded, None) if loaded is not None else open_backend(
        spec.model, spec.load_options(templates), executor=spec.executor, workers=spec.workers,
        address=spec.address, gpus_per_worker=spec.gpus_per_worker, threads=spec.threads_per_worker)
    try:
        summary = run_scoring(backend, item_list, images_dir=spec.images, out_dir=spec.out,
                              contexts=list(spec.contexts), interfaces=list(spec.interfaces), seed=spec.seed,
                              strict=spec.strict, model_name=spec.model_name, chunk_size=spec.chunk_size,
                              arguments=recorded, on_plan=on_plan, on_progress=on_progress,
                              on_warning=on_warning, executor=executor)
        decision = backend.describe().get("prefix_cache_decision")  # as manifest.json records it
    finally:
        if executor is not None:
            executor.shutdown()
    return Margins(Path(spec.out) / "margins.parquet", summary, prefix_cache=decision)


def score_dual_margins(model: Any, benchmark: Any = None, *, overwrite: bool = False, **options: Any) -> Margins:
    """VCA context margins of a dual encoder: m_c(s) = cos(x_c, s) − max over the group's other statements.

    ``score_dual_margins(DualScoreSpec(...))`` or ``score_dual_margins(model, benchmark, images=..., out=...,
    **fields)`` (:class:`~vlaudit.scoring.run_spec.DualScoreSpec`); the margins feed :func:`vlaudit.vca_report`.
    """
    spec = _spec(DualScoreSpec, model, {"model": model, "benchmark": benchmark, **options})
    require_kind(spec.model, "features")
    items = read_items(spec.benchmark)
    recorded = spec.recorded()
    RunFolder(spec.out).check(spec, recorded, overwrite=overwrite)
    backend, _ = open_backend(spec.model, {"batch_size": spec.batch_size, "device": spec.device,
                                           "dtype": spec.dtype})
    summary = score_dual(backend, items, images_dir=spec.images, out_dir=spec.out, contexts=list(spec.contexts),
                         no_image=spec.no_image, text_field=spec.text_field, seed=spec.seed,
                         model_name=spec.model_name, arguments=recorded, source=spec.benchmark)
    return Margins(Path(spec.out) / "margins.parquet", summary)


def extract_features(model: Any, cycles: Any = None, *, overwrite: bool = False,
                     progress: Callable[[str, int, int], None] | None = None, **options: Any) -> Any:
    """Embed every image and caption of a cycles file once with a dual encoder; write and return the features.

    ``extract_features(FeaturesSpec(...))`` or ``extract_features(model, cycles, images=..., out=...,
    **fields)`` (:class:`~vlaudit.scoring.run_spec.FeaturesSpec`); ``model`` may also be a loaded dual
    encoder. ``progress(task, done, total)`` hears of each embedded chunk.
    """
    loaded = None if isinstance(model, (str, FeaturesSpec)) else model
    spec = _spec(FeaturesSpec, model, {"model": model if loaded is None else loaded.spec, "cycles": cycles,
                                       **options})
    if loaded is None:
        require_kind(spec.model, "features")
    cycle_list = read_cycles(spec.cycles)
    inputs = collect_inputs(cycle_list, Path(spec.cycles), Path(spec.images),
                            None if spec.captions is None else Path(spec.captions))
    recorded = spec.recorded()
    RunFolder(spec.out).check(spec, recorded, overwrite=overwrite)
    backend, executor = (loaded, None) if loaded is not None else open_backend(
        spec.model, spec.load_options(), executor=spec.executor, features=True, workers=spec.workers,
        address=spec.address, gpus_per_worker=spec.gpus_per_worker, threads=spec.threads_per_worker)
    provenance = {"cycles": str(spec.cycles), "images_dir": str(spec.images),
                  "captions": None if spec.captions is None else str(spec.captions)}
    try:
        write_features(backend, inputs, spec.out, provenance=provenance, progress=progress, executor=executor,
                       command=spec.COMMAND, arguments=recorded)
    finally:
        if executor is not None:
            executor.shutdown()
    return read_features(spec.out)


def score_cycles_mllm(model: Any, cycles: Any = None, *, overwrite: bool = False,
                      **options: Any) -> MllmCycleScores:
    """Cycle scores of a generative MLLM: s(image, caption) = NLL(no) − NLL(yes) of a fixed yes/no query.

    ``score_cycles_mllm(CycleScoreSpec(...))`` or ``score_cycles_mllm(model, cycles, images=..., out=...,
    **fields)`` (:class:`~vlaudit.scoring.run_spec.CycleScoreSpec`). Writes the scores table ``out`` (the
    ``cycles eval`` scores format) and the run folder (``run_dir``, default ``OUT.run``; resumable).

    Returns the typed :class:`~vlaudit.results.cycles.MllmCycleScores` (``result["rows"]``: the score rows,
    ``["summary"]``: the run's summary, ``["n_cycles"]``, ``["run_dir"]``: the run folder as text).
    """
    spec = _spec(CycleScoreSpec, model, {"model": model, "cycles": cycles, **options})
    query = check_query(CYCLE_QUERY if spec.query is None else spec.query)
    if not Path(spec.images).is_dir():
        raise InputError("images folder not found", path=spec.images, field="--images")
    require_kind(spec.model, "yesno")
    cycles_path = Path(spec.cycles)
    cycle_list = read_cycles(cycles_path)
    inputs = collect_inputs(cycle_list, cycles_path, Path(spec.images),
                            None if spec.captions is None else Path(spec.captions))
    items = cycle_pair_items(cycle_list, inputs, Path(spec.images), query=query, dataset=cycles_path.stem)
    run = spec.run_folder()
    recorded = spec.recorded(query)
    RunFolder(run).check(spec, recorded, overwrite=overwrite)
    backend, executor = open_backend(spec.model, {**spec.load_options(), "interfaces": [INTERFACE]},
                                     executor=spec.executor, workers=spec.workers, address=spec.address,
                                     gpus_per_worker=spec.gpus_per_worker, threads=spec.threads_per_worker)
    try:
        summary = run_scoring(backend, items, images_dir=spec.images, out_dir=run, contexts=["original"],
                              interfaces=[INTERFACE], strict=True, chunk_size=spec.chunk_size, arguments=recorded,
                              executor=executor, command=spec.COMMAND)
    finally:
        if executor is not None:
            executor.shutdown()
    rows = scores_from_margins(run / "margins.parquet", items, source=cycles_path)
    write_table(spec.out, rows)
    return MllmCycleScores(rows=rows, summary=summary, n_cycles=len(cycle_list), run_dir=str(run))
