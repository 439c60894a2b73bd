"""Run specs: one dataclass per command that writes a resumable run or a manifest, shared by the CLI and the API.

``vlaudit vca score`` builds a :class:`ScoreSpec` from its options and calls :func:`vlaudit.score_margins`
with it; a notebook builds the same spec, from its parts or with :meth:`ScoreSpec.of`. Likewise
:class:`DualScoreSpec` (``vca score-dual`` / :func:`vlaudit.score_dual_margins`), :class:`FeaturesSpec`
(``features`` / :func:`vlaudit.extract_features`) and :class:`CycleScoreSpec` (``cycles score-mllm`` /
:func:`vlaudit.score_cycles_mllm`).

A spec is built from parts (:mod:`vlaudit.scoring.run.parts`): its data (the fields of the spec itself), the
model (:class:`~vlaudit.scoring.run.parts.ModelRef`: a spec and its backend's typed options), how the run is
computed (``run``: :class:`~vlaudit.scoring.run.parts.RunOptions`) and where (``executor``:
:class:`~vlaudit.scoring.run.parts.RayOptions`, or None for this process).

A spec's :meth:`recorded` form is what the run's manifest stores under ``arguments`` (flat, names as the CLI
spells its options; paths resolved, input files by a content fingerprint: :mod:`vlaudit.scoring.run.folder`),
and what a rerun into the same folder is compared on (:meth:`vlaudit.scoring.run.folder.RunFolder.check`): a
different spec is refused naming the differing fields, the same spec resumes, and ``overwrite`` replaces the
run deliberately. The fields of the operational parts (RunOptions, RayOptions) and the output folder change
how a run is computed, not what it holds, so a rerun may change them freely.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Union

from vlaudit.backends.base import ANSWER_WORDS
from vlaudit.backends.model_options import model_ref
from vlaudit.backends.options import BackendOptions, option_values
from vlaudit.backends.prompt.letters import LETTER_INTERFACE
from vlaudit.backends.registry import options_classes
from vlaudit.contexts.image_contexts import CONTEXTS
from vlaudit.errors import InputError, unknown_names
from vlaudit.hashing import sha256_file
from vlaudit.scoring.run.folder import (
    BACKEND_DEFAULTS,
    resolved_model_spec,
    resolved_path,
    score_arguments,
)
from vlaudit.scoring.run.parts import ModelRef, RayOptions, RunOptions, executor_recorded, operational_names
from vlaudit.sources.items import BenchmarkItem

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

#: the benchmark of a ``vca score`` run: an ITEMS file, or its rows in memory
BenchmarkInput = Union[Path, str, Sequence[BenchmarkItem], Sequence[Mapping[str, object]], "pa.Table",  # noqa: UP007
                       "pd.DataFrame"]
#: a model's backend options by field name (:func:`vlaudit.backends.model_options.model_ref` checks them)
ModelOptions = Union[Mapping[str, object], None]  # noqa: UP007
#: one recorded argument's value (the manifest is JSON)
Recorded = dict[str, object]

_YESNO_RUN = ("batch_size", "chunk_size", "device", "device_map", "prefix_cache", "strict")
_DUAL_RUN = ("batch_size", "device")


def _file_sha256(path: str | Path | None) -> str | None:
    """sha256 of a file's bytes (None for no file, or one that does not exist yet: the reader says why)."""
    return sha256_file(path) if path is not None and Path(path).is_file() else None


def _check_common(seed: int | None, contexts: Sequence[str], interfaces: Sequence[str] = ()) -> None:
    """The seed and every context and interface name, checked when the spec is built: before any model loads."""
    if seed is not None and not seed >= 0:
        raise InputError(f"must be at least 0, got {seed!r}", field="--seed")
    for error in (unknown_names(contexts, CONTEXTS, what="context", field="--contexts"),
                  unknown_names(interfaces, [*ANSWER_WORDS, LETTER_INTERFACE], what="interface", field="--interface")):
        if error is not None:
            raise error
    repeated = sorted({c for c in contexts if list(contexts).count(c) > 1})
    if repeated:
        raise InputError(f"names {', '.join(repeated)} more than once; name each context once", field="--contexts")


def _settle(spec: object, command: str, used: tuple[str, ...], batch_size: int) -> None:
    """Fill a spec's run part (the command's batch size when none is given), refuse the run fields the command
    has no use for, and keep its paths as paths."""
    run: RunOptions = getattr(spec, "run")  # noqa: B009 (every spec has one)
    run.check_used(used, command)
    if run.batch_size is None:
        object.__setattr__(spec, "run", replace(run, batch_size=batch_size))
    for name in ("images", "out", "cycles", "captions", "template", "run_dir"):
        value = getattr(spec, name, None)
        if isinstance(value, str):
            object.__setattr__(spec, name, Path(value))


def _extra_options(options: BackendOptions, recorded: Sequence[str]) -> Recorded:
    """The options a command's manifest has no place of its own for, when set (recorded by name after the
    others, so a run that sets none records what it always did)."""
    defaults = {f.name: f.default for f in fields(options)}
    return {k: v for k, v in option_values(options).items() if k not in recorded and v != defaults[k]}


def _dtype(options: BackendOptions) -> str:
    """The options' dtype as a manifest records it (``auto`` for a served model: the server chose it)."""
    return str(getattr(options, "dtype", "auto"))


def _revision(options: BackendOptions) -> str | None:
    return getattr(options, "revision", None)


@dataclass(frozen=True)
class ScoreSpec:
    """``vca score`` / :func:`vlaudit.score_margins`: yes/no margins under matched contexts (VCA §3, §9, §11).

    ``benchmark`` is the ITEMS file, or (API) the rows in memory: a DataFrame, pyarrow Table or row list.
    ``circular``: CircularEval, every option rotation of each multiple-choice item is scored (its rotations
    are the items recorded, so a run with and one without differ in ``items_sha256``). ``skip_multi_image``:
    leave out the items with more images than the model takes in one query, with a warning (without it such
    items refuse the run before the model loads; the items left are the ones recorded)."""

    FOLDER_OPTION: ClassVar[str] = "--out"  # the option naming the run folder, in a refusal
    CACHED: ClassVar[bool] = True  # a replacing run reuses the folder's score cache
    COMMAND: ClassVar[str] = "vca score"
    OPERATIONAL: ClassVar[frozenset[str]] = operational_names()

    model: ModelRef
    benchmark: BenchmarkInput
    images: Path
    out: Path
    contexts: tuple[str, ...] = ("original", "text", "blank")
    interfaces: tuple[str, ...] = ("yesno",)
    seed: int = 0
    model_name: str | None = None
    template: Path | None = None
    circular: bool = False
    skip_multi_image: bool = False
    run: RunOptions = RunOptions()
    executor: RayOptions | None = None

    def __post_init__(self) -> None:
        _check_common(self.seed, self.contexts, self.interfaces)
        _settle(self, self.COMMAND, _YESNO_RUN, 8)

    @classmethod
    def of(cls, *, model: str | ModelRef, benchmark: BenchmarkInput, images: str | Path, out: str | Path,
           contexts: Sequence[str] = ("original", "text", "blank"), interfaces: Sequence[str] = ("yesno",),
           seed: int = 0, model_name: str | None = None, template: str | Path | None = None,
           circular: bool = False, skip_multi_image: bool = False, options: ModelOptions = None,
           run: RunOptions | None = None, executor: RayOptions | None = None) -> ScoreSpec:
        """The spec from its parts: the model (a :class:`~vlaudit.scoring.run.parts.ModelRef`, or a spec string
        and its backend's ``options`` by name, checked as ``-o`` is: :func:`vlaudit.model_ref`), the data, and
        how (``run``) and where (``executor``) it is computed."""
        return cls(model=model_ref(model, options), benchmark=benchmark, images=Path(images), out=Path(out),
                   contexts=tuple(contexts), interfaces=tuple(interfaces), seed=seed, model_name=model_name,
                   template=None if template is None else Path(template), circular=circular,
                   skip_multi_image=skip_multi_image, run=run or RunOptions(), executor=executor)

    def benchmark_path(self) -> Path | None:
        return Path(self.benchmark) if isinstance(self.benchmark, (str, Path)) else None

    def backend_arguments(self) -> Recorded:
        """The options that reach the backend loader, as the manifest records them (in the CLI's order)."""
        given = {**option_values(self.model.backend_options), "device": self.run.device,
                 "device_map": self.run.device_map, "prefix_cache": self.run.prefix_cache}
        return {k: given.get(k, BACKEND_DEFAULTS[k]) for k in BACKEND_DEFAULTS}

    def recorded(self, items: Sequence[BenchmarkItem], question_templates: Mapping[str, str] | None = None
                 ) -> Recorded:
        """The manifest's ``arguments`` (``items``: the rows read; ``question_templates``: ``template`` read)."""
        assert self.run.batch_size is not None  # settled in __post_init__
        ray = self.executor or RayOptions()
        options = self.model.backend_options
        # a backend's own flags beyond the HF ones (an endpoint's), always recorded by name: compared on a
        # rerun, unless operational (OPERATIONAL); an in-process model has none
        own = {f.name: list(value) if isinstance(value := getattr(options, f.name), tuple) else value
               for f in fields(options) if f.metadata.get("flag") and f.name not in BACKEND_DEFAULTS}
        backend: dict[str, Any] = {**self.backend_arguments(), **_extra_options(options, (*BACKEND_DEFAULTS, *own))}
        return {"command": self.COMMAND, **own, **score_arguments(
            model=self.model.spec, items=items, benchmark=self.benchmark_path(), images=self.images, out=self.out,
            contexts=self.contexts, interfaces=self.interfaces, seed=self.seed, batch_size=self.run.batch_size,
            chunk_size=self.run.chunk_size, strict=self.run.strict, model_name=self.model_name,
            template=self.template, question_templates=question_templates,
            executor="local" if self.executor is None else "ray", address=ray.address, workers=ray.workers,
            gpus_per_worker=ray.gpus_per_worker, threads_per_worker=ray.threads_per_worker, **backend)}


@dataclass(frozen=True)
class DualScoreSpec:
    """``vca score-dual`` / :func:`vlaudit.score_dual_margins`: cosine-decision margins of a dual encoder."""

    FOLDER_OPTION: ClassVar[str] = "--out"  # the option naming the run folder, in a refusal
    CACHED: ClassVar[bool] = False  # no score cache: a replacing run computes everything again
    COMMAND: ClassVar[str] = "vca score-dual"
    OPERATIONAL: ClassVar[frozenset[str]] = operational_names()

    model: ModelRef
    benchmark: Path
    images: Path
    out: Path
    contexts: tuple[str, ...] = ("original", "text", "blank", "mean", "mismatch")
    no_image: str = "mean-image"
    text_field: str | None = None
    seed: int = 0
    model_name: str | None = None
    run: RunOptions = RunOptions()

    def __post_init__(self) -> None:
        _check_common(self.seed, self.contexts)
        _settle(self, self.COMMAND, _DUAL_RUN, 32)
        object.__setattr__(self, "benchmark", Path(self.benchmark))

    @classmethod
    def of(cls, *, model: str | ModelRef, benchmark: str | Path, images: str | Path, out: str | Path,
           contexts: Sequence[str] = ("original", "text", "blank", "mean", "mismatch"), no_image: str = "mean-image",
           text_field: str | None = None, seed: int = 0, model_name: str | None = None,
           options: ModelOptions = None, run: RunOptions | None = None) -> DualScoreSpec:
        """The spec from its parts (the model's ``options`` by name, as :meth:`ScoreSpec.of`)."""
        return cls(model=model_ref(model, options), benchmark=Path(benchmark), images=Path(images),
                   out=Path(out), contexts=tuple(contexts), no_image=no_image, text_field=text_field, seed=seed,
                   model_name=model_name, run=run or RunOptions())

    def recorded(self) -> Recorded:
        options = self.model.backend_options
        return {"command": self.COMMAND, "model": resolved_model_spec(self.model.spec),
                "benchmark": resolved_path(self.benchmark), "images": resolved_path(self.images),
                "out": resolved_path(self.out), "contexts": list(self.contexts), "no_image": self.no_image,
                "text_field": self.text_field, "batch_size": self.run.batch_size, "seed": self.seed,
                "device": self.run.device, "dtype": _dtype(options), "model_name": self.model_name,
                "benchmark_sha256": _file_sha256(self.benchmark), **_extra_options(options, ("dtype",))}


@dataclass(frozen=True)
class FeaturesSpec:
    """``features`` / :func:`vlaudit.extract_features`: dual-encoder embeddings of a cycles table's inputs."""

    FOLDER_OPTION: ClassVar[str] = "--out"  # the option naming the run folder, in a refusal
    CACHED: ClassVar[bool] = False  # no score cache: a replacing run computes everything again
    COMMAND: ClassVar[str] = "features"
    OPERATIONAL: ClassVar[frozenset[str]] = operational_names()

    model: ModelRef
    cycles: Path
    images: Path
    out: Path
    captions: Path | None = None
    run: RunOptions = RunOptions()
    executor: RayOptions | None = None

    def __post_init__(self) -> None:
        _settle(self, self.COMMAND, _DUAL_RUN, 32)

    @classmethod
    def of(cls, *, model: str | ModelRef, cycles: str | Path, images: str | Path, out: str | Path,
           captions: str | Path | None = None, options: ModelOptions = None, run: RunOptions | None = None,
           executor: RayOptions | None = None) -> FeaturesSpec:
        """The spec from its parts (the model's ``options`` by name, as :meth:`ScoreSpec.of`)."""
        return cls(model=model_ref(model, options), cycles=Path(cycles), images=Path(images), out=Path(out),
                   captions=None if captions is None else Path(captions), run=run or RunOptions(),
                   executor=executor)

    def recorded(self) -> Recorded:
        options = self.model.backend_options
        return {"command": self.COMMAND, "model": resolved_model_spec(self.model.spec),
                "cycles": resolved_path(self.cycles), "images": resolved_path(self.images),
                "out": resolved_path(self.out), "captions": resolved_path(self.captions),
                "batch_size": self.run.batch_size, "device": self.run.device, "dtype": _dtype(options),
                "revision": _revision(options), **executor_recorded(self.executor),
                "cycles_sha256": _file_sha256(self.cycles), "captions_sha256": _file_sha256(self.captions),
                **_extra_options(options, ("dtype", "revision"))}


@dataclass(frozen=True)
class CycleScoreSpec:
    """``cycles score-mllm`` / :func:`vlaudit.score_cycles_mllm`: cycle scores of a generative MLLM as the
    yes/no margin of a fixed query. The run (cache, margins, manifest) lives in :meth:`run_folder`."""

    FOLDER_OPTION: ClassVar[str] = "--run-dir"  # the option naming the run folder, in a refusal
    CACHED: ClassVar[bool] = True  # a replacing run reuses the folder's score cache
    COMMAND: ClassVar[str] = "cycles score-mllm"
    OPERATIONAL: ClassVar[frozenset[str]] = operational_names(("out", "run_dir"))

    model: ModelRef
    cycles: Path
    images: Path
    out: Path
    captions: Path | None = None
    run_dir: Path | None = None
    query: str | None = None
    run: RunOptions = RunOptions()
    executor: RayOptions | None = None

    def __post_init__(self) -> None:
        _settle(self, self.COMMAND, ("batch_size", "chunk_size", "device"), 8)

    @classmethod
    def of(cls, *, model: str | ModelRef, cycles: str | Path, images: str | Path, out: str | Path,
           captions: str | Path | None = None, run_dir: str | Path | None = None, query: str | None = None,
           options: ModelOptions = None, run: RunOptions | None = None, executor: RayOptions | None = None
           ) -> CycleScoreSpec:
        """The spec from its parts (the model's ``options`` by name, as :meth:`ScoreSpec.of`)."""
        return cls(model=model_ref(model, options), cycles=Path(cycles), images=Path(images), out=Path(out),
                   captions=None if captions is None else Path(captions),
                   run_dir=None if run_dir is None else Path(run_dir), query=query, run=run or RunOptions(),
                   executor=executor)

    def run_folder(self) -> Path:
        """``--run-dir``, or ``OUT.run`` beside the scores table."""
        return Path(self.run_dir) if self.run_dir is not None else Path(self.out).with_name(Path(self.out).name + ".run")

    def recorded(self, query: str) -> Recorded:
        """The manifest's ``arguments`` (``query``: the checked query, the default filled in)."""
        options = self.model.backend_options
        pixels = {"min_pixels": None, "max_pixels": None} | {
            k: v for k, v in option_values(options).items() if k in ("min_pixels", "max_pixels")}
        return {"command": self.COMMAND, "model": resolved_model_spec(self.model.spec),
                "cycles": resolved_path(self.cycles), "images": resolved_path(self.images),
                "out": resolved_path(self.out), "captions": resolved_path(self.captions),
                "run_dir": resolved_path(self.run_folder()), "query": query, "batch_size": self.run.batch_size,
                "dtype": _dtype(options), "device": self.run.device, "revision": _revision(options), **pixels,
                "chunk_size": self.run.chunk_size, **executor_recorded(self.executor),
                "cycles_sha256": _file_sha256(self.cycles), "captions_sha256": _file_sha256(self.captions),
                **_extra_options(options, ("dtype", "revision", "min_pixels", "max_pixels"))}


def recorded_model(spec: str, arguments: Mapping[str, object]) -> ModelRef:
    """The model a run's manifest ``arguments`` record, with the options it was loaded with: the first options
    class of ``spec``'s backend that holds every recorded option (``other_backend_options`` included)."""
    other = arguments.get("other_backend_options")
    given = {**arguments, **(other if isinstance(other, dict) else {})}
    for kind in options_classes(spec):
        names = {f.name for f in fields(kind)}
        if isinstance(other, dict) and not set(other) <= names:
            continue
        values = {k: v for k, v in given.items() if k in names}
        return ModelRef(spec, kind(**values))  # JSON values: each options class checks its own
    raise InputError(f"the run recorded backend options {sorted(other) if isinstance(other, dict) else []} that "
                     f"{spec!r} does not take",
                     field="other_backend_options")
