"""The runs that load a model and write a run folder, one function per command; the CLI calls exactly these.

Each function takes a run spec (:mod:`vlaudit.scoring.run.spec`: built from its parts, or with the spec's
``of`` classmethod from the command's flat options), checks the folder before any model loads (a run with another spec is refused naming the differing fields;
the same spec resumes; ``overwrite=True`` replaces it, as ``--overwrite`` does), and records the full spec in
the run's manifest (:class:`~vlaudit.scoring.run.manifest.RunManifest`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from vlaudit.analysis.vca.choice_run import aligned_run
from vlaudit.analysis.vca.no_answer import no_answer_warning
from vlaudit.api.input_records import as_items
from vlaudit.api.margins import Margins
from vlaudit.backends.base import INTERFACES, FeatureBackend, YesNoBackend, images_per_query
from vlaudit.backends.prompt.letters import LETTER_INTERFACE
from vlaudit.backends.prompt.verbalizers import read_question_templates
from vlaudit.backends.registry import BackendLoad, ModelRef, max_images_of, require_kind
from vlaudit.builders.circular import circular_items
from vlaudit.contexts.image_contexts import CONTEXTS
from vlaudit.errors import InputError
from vlaudit.files import write_table
from vlaudit.reference.catalogue import TRAINED_MODELS
from vlaudit.results.cycles import MllmCycleScores
from vlaudit.results.vca.outputs import DualScoringSummary, ScoringSummary
from vlaudit.scoring.dual_margins import grouped_items, score_dual
from vlaudit.scoring.features import Features, collect_inputs, read_features, write_features
from vlaudit.scoring.mllm_cycle_scores import (
    CYCLE_QUERY,
    INTERFACE,
    check_query,
    cycle_pair_items,
    scores_from_margins,
)
from vlaudit.scoring.run.executors import features_executor, open_features, yes_no_executor
from vlaudit.scoring.run.folder import (
    RunFolder,
    finished_summary,
    model_files,
    resolved_model_spec,
    run_decision,
)
from vlaudit.scoring.run.image_check import check_run_images
from vlaudit.scoring.run.runner import check_yes_no_items, run_scoring, too_many_images
from vlaudit.scoring.run.spec import CycleScoreSpec, DualScoreSpec, FeaturesSpec, ScoreSpec
from vlaudit.sources.cycle_tables import read_cycles
from vlaudit.sources.items import BenchmarkItem, read_items
from vlaudit.sources.margins import read_margins


def _check_names(name: str, given: Sequence[str], known: Sequence[str] | dict[str, object]) -> None:
    unknown = [value for value in given if value not in known]
    if unknown or not given:
        raise InputError(f"unknown or empty {name} {unknown or list(given)}; available: {', '.join(known)}",
                         field=name)


def _model_files(model: ModelRef) -> Mapping[str, object] | None:
    """What identifies ``model`` without loading it (:func:`~vlaudit.scoring.run.folder.model_files`): a
    planted reference by its shipped files, unless it also reads scenes the user gives."""
    if model.prefix == "ref":
        entry = TRAINED_MODELS.get(model.name)
        return None if entry is None or entry.reads_scenes else model_files(model.spec, entry.files(model.name))
    return model_files(resolved_model_spec(model.spec))


def score_margins(spec: ScoreSpec, *, backend: YesNoBackend | None = None, overwrite: bool = False,
                  on_plan: Callable[[int, int], None] | None = None,
                  on_progress: Callable[[int], None] | None = None,
                  on_warning: Callable[[str], None] | None = None,
                  min_coverage: float | None = None) -> Margins:
    """Literal yes/no margins m = NLL(no) − NLL(yes) of every item under each context (VCA §3, §9, §11).

    Args:
        spec: the run: ``ScoreSpec(model=ModelRef(...), benchmark=..., images=..., out=...)`` or
            ``ScoreSpec.of(model="hf:…", options={"dtype": "bf16"}, benchmark=..., images=..., out=..., run=RunOptions(...))``.
        backend: a yes/no backend already loaded (then ``spec.model`` names it in the manifest and is not
            loaded again).
        overwrite: replace the results of a run with another spec in ``out`` (as ``--overwrite``).
        on_plan, on_progress, on_warning: progress hooks (see :func:`vlaudit.scoring.run.runner.run_scoring`).
        min_coverage: refuse the run before the model loads when fewer of the items' images can be used
            (``vca score --min-coverage``, default there :data:`vlaudit.settings.MIN_COVERAGE`); None: refuse
            only a run where none can. Either way the result's ``summary.coverage`` says how many of the
            records asked were scored (:mod:`vlaudit.results.vca.coverage`).

    The run folder is resumable: the same call after an interruption continues from its cache, and
    ``vlaudit vca score`` with the same arguments writes the same files.
    """
    _check_names("contexts", spec.contexts, CONTEXTS)
    _check_names("interface", spec.interfaces, (*INTERFACES, LETTER_INTERFACE))
    if backend is None:
        require_kind(spec.model.spec, "yesno")
    templates = None if spec.template is None else read_question_templates(spec.template)
    item_list = as_items(spec.benchmark)
    item_list = fitting_items(item_list, _capacity(spec, item_list, backend), spec.model.spec,
                              skip=spec.skip_multi_image, warn=on_warning or _warn)
    check_yes_no_items(item_list, spec.interfaces)
    if spec.circular:
        item_list = circular_items(item_list)
    recorded = spec.recorded(item_list, templates)
    RunFolder(spec.out).check(spec, recorded, overwrite=overwrite)
    files = None if backend is not None else _model_files(spec.model)
    rerun = None if overwrite else finished_summary(spec.out, recorded, item_list, spec.images, files)
    if rerun is not None:  # a finished run answers this rerun: the model is not loaded
        summary_now, decision = rerun
        if on_plan:
            on_plan(summary_now.n_unique_units, summary_now.n_unique_units)
        path = Path(spec.out) / "margins.parquet"
        return Margins(path, summary_now, prefix_cache=decision, warnings=no_answer_warnings(path))
    check_run_images(item_list, spec.images, contexts=spec.contexts, interfaces=spec.interfaces,
                     model=spec.model_name or spec.model.spec, out=spec.out, strict=spec.run.strict,
                     min_coverage=min_coverage)  # seconds, before any model loads
    load = BackendLoad(spec.model, spec.run, interfaces=spec.interfaces, question_templates=templates)
    with yes_no_executor(load, spec.executor, backend=backend) as (loaded, executor):
        summary = run_scoring(loaded, item_list, images_dir=spec.images, out_dir=spec.out,
                              contexts=list(spec.contexts), interfaces=list(spec.interfaces), seed=spec.seed,
                              strict=spec.run.strict, model_name=spec.model_name, chunk_size=spec.run.chunk_size,
                              arguments=recorded, on_plan=on_plan, on_progress=on_progress,
                              on_warning=on_warning, executor=executor, model_files=files)
    decision = run_decision(spec.out)  # as manifest.json records it: what the backend's prepare() returned
    path = Path(spec.out) / "margins.parquet"
    return Margins(path, ScoringSummary.from_dict(summary), prefix_cache=decision, warnings=no_answer_warnings(path))


def no_answer_warnings(path: Path) -> list[str]:
    """One line per run of the margins table ``path`` that gave no answer (a planted model on items it was not
    built for, a broken prompt): :func:`~vlaudit.analysis.vca.no_answer.no_answer_warning`. Margins the
    report would refuse (e.g. a relation group without its false statement) are for ``vca report`` to name:
    scoring them succeeded, so nothing is said here."""
    try:
        runs = read_margins(path)
    except InputError:
        return []
    return [line for run in runs if (line := no_answer_warning(aligned_run(run))) is not None]


def fitting_items(items: Sequence[BenchmarkItem], capacity: int, model: str, *, skip: bool,
                  warn: Callable[[str], None]) -> list[BenchmarkItem]:
    """The items ``model`` can be given whole, ``capacity`` images per query (MMMU's ``image_1`` …
    ``image_7``, in :attr:`~vlaudit.sources.items.BenchmarkItem.images`).

    An item with more images refuses the run in one line naming the model and the count
    (:func:`~vlaudit.scoring.run.runner.too_many_images`), before any model loads: scoring ``image_1`` alone would
    ask another question than the benchmark's. With ``skip`` (``--skip-multi-image``) such items are left out
    with a warning, and a benchmark of only such items is refused."""
    refused = too_many_images(items, capacity, model)
    if refused is None:
        return list(items)
    if not skip:
        raise refused
    kept = [item for item in items if len(item.images) <= capacity]
    first = next(item for item in items if len(item.images) > capacity)
    message = (f"{len(items) - len(kept)} item(s) with several images left out (e.g. {first.item_id}: "
               f"{len(first.images)} images): {model} takes {capacity} per query (--skip-multi-image)")
    if not kept:
        raise InputError(f"every item has several images; {message}", field="benchmark")
    warn(message)
    return kept


def _capacity(spec: ScoreSpec, items: Sequence[BenchmarkItem], backend: YesNoBackend | None) -> int:
    """How many images one query of the run's model holds: the loaded ``backend``'s, or read from the model's
    config before any weights load (only when some item has several images)."""
    if backend is not None:
        return images_per_query(backend)
    return max_images_of(spec.model) if any(len(item.images) > 1 for item in items) else 1


def _warn(message: str) -> None:
    warnings.warn(message, stacklevel=3)


def score_dual_margins(spec: DualScoreSpec, *, overwrite: bool = False) -> Margins:
    """VCA context margins of a dual encoder: m_c(s) = cos(x_c, s) − max over the group's other statements.

    ``spec``: ``DualScoreSpec(model=ModelRef(...), benchmark=..., images=..., out=...)`` or
    ``DualScoreSpec.of(model="open_clip:…", ...)``; the margins feed :func:`vlaudit.vca_report`.
    """
    require_kind(spec.model.spec, "features")
    items = read_items(spec.benchmark)
    refused = too_many_images(items, 1, spec.model.spec,  # a dual encoder embeds one image per statement
                              "a dual encoder scores one image; leave those items out of the ITEMS file")
    if refused is not None:
        raise refused
    items, left_out = grouped_items(items, spec.benchmark)
    recorded = spec.recorded()
    RunFolder(spec.out).check(spec, recorded, overwrite=overwrite)
    backend, _ = open_features(BackendLoad(spec.model, spec.run))
    summary = score_dual(backend, items, images_dir=spec.images, out_dir=spec.out, contexts=list(spec.contexts),
                         no_image=spec.no_image, text_field=spec.text_field, seed=spec.seed,
                         model_name=spec.model_name, arguments=recorded, source=spec.benchmark)
    return Margins(Path(spec.out) / "margins.parquet", DualScoringSummary.from_dict(summary),
                   warnings=[] if left_out is None else [left_out])


def extract_features(spec: FeaturesSpec, *, backend: FeatureBackend | None = None, overwrite: bool = False,
                     progress: Callable[[str, int, int], None] | None = None) -> Features:
    """Embed every image and caption of a cycles file once with a dual encoder; write and return the features.

    ``spec``: ``FeaturesSpec(model=ModelRef(...), cycles=..., images=..., out=...)`` or
    ``FeaturesSpec.of(model="hf-clip:…", ...)``; ``backend``: a dual encoder already loaded (``spec.model``
    then names it). ``progress(task, done, total)`` hears of each embedded chunk.
    """
    if backend is None:
        require_kind(spec.model.spec, "features")
    cycle_list = read_cycles(spec.cycles)
    inputs = collect_inputs(cycle_list, Path(spec.cycles), Path(spec.images),
                            None if spec.captions is None else Path(spec.captions))
    recorded = spec.recorded()
    RunFolder(spec.out).check(spec, recorded, overwrite=overwrite)
    provenance = {"cycles": str(spec.cycles), "images_dir": str(spec.images),
                  "captions": None if spec.captions is None else str(spec.captions)}
    with features_executor(BackendLoad(spec.model, spec.run), spec.executor, backend=backend) as (loaded, executor):
        write_features(loaded, inputs, spec.out, provenance=provenance, progress=progress, executor=executor,
                       command=spec.COMMAND, arguments=recorded)
    return read_features(spec.out)


def score_cycles_mllm(spec: CycleScoreSpec, *, overwrite: bool = False) -> MllmCycleScores:
    """Cycle scores of a generative MLLM: s(image, caption) = NLL(no) − NLL(yes) of a fixed yes/no query.

    ``spec``: ``CycleScoreSpec(model=ModelRef(...), cycles=..., images=..., out=...)`` or
    ``CycleScoreSpec.of(model="hf:…", ...)``. Writes the scores table ``out`` (the ``cycles eval`` scores
    format) and the run folder (``run_dir``, default ``OUT.run``; resumable).

    Returns the typed :class:`~vlaudit.results.cycles.MllmCycleScores` (``rows``: the score rows,
    ``summary``: the run's summary, ``n_cycles``, ``run_dir``: the run folder as text).
    """
    query = check_query(CYCLE_QUERY if spec.query is None else spec.query)
    if not Path(spec.images).is_dir():
        raise InputError("images folder not found", path=spec.images, field="--images")
    require_kind(spec.model.spec, "yesno")
    cycles_path = Path(spec.cycles)
    cycle_list = read_cycles(cycles_path)
    inputs = collect_inputs(cycle_list, cycles_path, Path(spec.images),
                            None if spec.captions is None else Path(spec.captions))
    items = cycle_pair_items(cycle_list, inputs, Path(spec.images), query=query, dataset=cycles_path.stem)
    run = spec.run_folder()
    recorded = spec.recorded(query)
    RunFolder(run).check(spec, recorded, overwrite=overwrite)
    load = BackendLoad(spec.model, spec.run, interfaces=(INTERFACE,))
    with yes_no_executor(load, spec.executor) as (backend, executor):
        summary = run_scoring(backend, items, images_dir=spec.images, out_dir=run, contexts=["original"],
                              interfaces=[INTERFACE], strict=True, chunk_size=spec.run.chunk_size,
                              arguments=recorded, executor=executor, command=spec.COMMAND)
    rows = scores_from_margins(run / "margins.parquet", items, source=cycles_path)
    write_table(spec.out, rows)
    return MllmCycleScores(rows=rows, summary=ScoringSummary.from_dict(summary), n_cycles=len(cycle_list), run_dir=str(run))
