"""Run specs: one dataclass per command that writes a resumable run or a manifest, shared by the CLI and the API.

``vlaudit vca score`` parses its options into a :class:`ScoreSpec` and calls :func:`vlaudit.score_margins`
with it; a notebook builds the same spec (or passes the same keyword arguments). Likewise
:class:`DualScoreSpec` (``vca score-dual`` / :func:`vlaudit.score_dual_margins`), :class:`FeaturesSpec`
(``features`` / :func:`vlaudit.extract_features`) and :class:`CycleScoreSpec` (``cycles score-mllm`` /
:func:`vlaudit.score_cycles_mllm`). Field names are the CLI's option names.

A spec's :meth:`recorded` form is what the run's manifest stores under ``arguments`` (paths resolved, input
files by a content fingerprint: :mod:`vlaudit.scoring.run_arguments`), and what a rerun into the same folder
is compared on (:meth:`vlaudit.scoring.run_folder.RunFolder.check`): a different spec is refused naming the differing fields, the same spec
resumes, and ``overwrite`` replaces the run deliberately. Fields in a spec's ``OPERATIONAL`` set change how a
run is computed, not what it holds (batch size, device, executor), so a rerun may change them freely.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from vlaudit.backends.dtypes import parse_dtype
from vlaudit.errors import InputError
from vlaudit.hashing import sha256_file
from vlaudit.scoring.run_arguments import resolved_model_spec, resolved_path, score_arguments
from vlaudit.scoring.run_folder import OPERATIONAL_ARGUMENTS

_RAY = ("executor", "address", "workers", "gpus_per_worker", "threads_per_worker")


def _file_sha256(path: str | Path | None) -> str | None:
    """sha256 of a file's bytes (None for no file, or one that does not exist yet: the reader says why)."""
    return sha256_file(path) if path is not None and Path(path).is_file() else None


# the smallest value of each numeric field a spec may hold (the CLI's options declare the same ranges)
_MINIMUM = {"seed": 0, "batch_size": 1, "chunk_size": 1, "workers": 1, "gpus_per_worker": 0.0,
            "threads_per_worker": 1, "min_pixels": 1, "max_pixels": 1}


def check_spec_fields(spec: Any) -> None:
    """The checks no single option can make, shared by every spec (so the API refuses what the CLI refuses):
    each numeric field in its range, a context named once, Ray's options only with the Ray executor, and a
    pixel budget whose minimum is not above its maximum. One :class:`InputError` naming the option."""
    values = {f.name: getattr(spec, f.name) for f in fields(spec)}  # no deep copy of in-memory items
    for name, minimum in _MINIMUM.items():
        value = values.get(name)
        if value is not None and not value >= minimum:  # `not >=`: NaN is refused too
            raise InputError(f"must be at least {minimum}, got {value!r}", field=_option(name))
    contexts = list(values.get("contexts") or ())
    repeated = sorted({c for c in contexts if contexts.count(c) > 1})
    if repeated:
        raise InputError(f"names {', '.join(repeated)} more than once; name each context once", field="--contexts")
    if values.get("executor", "local") != "ray":
        given = [_option(name) for name, default in (("address", None), ("workers", 1), ("gpus_per_worker", 0.0),
                                                     ("threads_per_worker", None))
                 if name in values and values[name] != default]
        if given:
            what = "configures Ray actors" if len(given) == 1 else f"({', '.join(given)}) configure Ray actors"
            raise InputError(f"{what}; add --executor ray, or leave it out", field=given[0])
    low, high = values.get("min_pixels"), values.get("max_pixels")
    if low is not None and high is not None and low > high:
        raise InputError(f"{low} is above --max-pixels {high}", field="--min-pixels")


def _option(name: str) -> str:
    return "--" + name.replace("_", "-")


@dataclass(frozen=True)
class ScoreSpec:
    """``vca score`` / :func:`vlaudit.score_margins`: yes/no margins under matched contexts (VCA §3, §9, §11).

    ``benchmark`` is the ITEMS file, or (API) the rows in memory: a DataFrame, pyarrow Table or row list.
    ``backend_options`` passes further keywords to the backend loader (API only; recorded by their text).
    """

    FOLDER_OPTION: ClassVar[str] = "--out"  # the option naming the run folder, in a refusal
    CACHED: ClassVar[bool] = True  # a replacing run reuses the folder's score cache
    COMMAND: ClassVar[str] = "vca score"
    OPERATIONAL: ClassVar[frozenset[str]] = OPERATIONAL_ARGUMENTS

    model: str
    benchmark: Any
    images: Path
    out: Path
    contexts: tuple[str, ...] = ("original", "text", "blank")
    interfaces: tuple[str, ...] = ("yesno",)
    seed: int = 0
    batch_size: int = 8
    chunk_size: int = 64
    strict: bool = False
    model_name: str | None = None
    template: Path | None = None
    dtype: str = "auto"
    device: str = "auto"
    device_map: str | None = None
    revision: str | None = None
    min_pixels: int | None = None
    max_pixels: int | None = None
    trust_remote_code: bool = False
    prefix_cache: bool | None = None
    system: str | None = None
    executor: str = "local"
    address: str | None = None
    workers: int = 1
    gpus_per_worker: float = 0.0
    threads_per_worker: int | None = None
    backend_options: Mapping[str, Any] = field(default_factory=dict)
    #: CircularEval: score every option rotation of each multiple-choice item (its rotations are the items
    #: recorded, so a run with and one without differ in ``items_sha256``)
    circular: bool = False

    def __post_init__(self) -> None:
        # one spelling per dtype (fp32 and float32 are the same run), checked before anything loads
        object.__setattr__(self, "dtype", parse_dtype(self.dtype))
        check_spec_fields(self)

    def benchmark_path(self) -> Path | None:
        return Path(self.benchmark) if isinstance(self.benchmark, (str, Path)) else None

    def backend_arguments(self) -> dict[str, Any]:
        """The options that reach the backend loader, as the manifest records them."""
        return {"dtype": self.dtype, "device": self.device, "device_map": self.device_map,
                "revision": self.revision, "min_pixels": self.min_pixels, "max_pixels": self.max_pixels,
                "trust_remote_code": self.trust_remote_code, "prefix_cache": self.prefix_cache,
                "system": self.system}

    def recorded(self, items: Sequence[Any], question_templates: Any = None) -> dict[str, Any]:
        """The manifest's ``arguments`` (``items``: the rows read; ``question_templates``: ``template`` read)."""
        return {"command": self.COMMAND, **score_arguments(
            model=self.model, items=items, benchmark=self.benchmark_path(), images=self.images, out=self.out,
            contexts=self.contexts, interfaces=self.interfaces, seed=self.seed, batch_size=self.batch_size,
            chunk_size=self.chunk_size, strict=self.strict, model_name=self.model_name, template=self.template,
            question_templates=question_templates, **{k: getattr(self, k) for k in _RAY},
            **self.backend_arguments(), **self.backend_options)}

    def load_options(self, question_templates: Any = None) -> dict[str, Any]:
        """Keywords of the backend loader (:func:`vlaudit.backends.registry.load_backend`)."""
        options = {**self.backend_arguments(), "batch_size": self.batch_size,
                   "interfaces": list(self.interfaces), **self.backend_options}
        if question_templates is not None:
            options["question_templates"] = question_templates
        return options


@dataclass(frozen=True)
class DualScoreSpec:
    """``vca score-dual`` / :func:`vlaudit.score_dual_margins`: cosine-decision margins of a dual encoder."""

    FOLDER_OPTION: ClassVar[str] = "--out"  # the option naming the run folder, in a refusal
    CACHED: ClassVar[bool] = False  # no score cache: a replacing run computes everything again
    COMMAND: ClassVar[str] = "vca score-dual"
    OPERATIONAL: ClassVar[frozenset[str]] = frozenset({"out", "batch_size", "device"})

    model: str
    benchmark: Path
    images: Path
    out: Path
    contexts: tuple[str, ...] = ("original", "text", "blank", "mean", "mismatch")
    no_image: str = "mean-image"
    text_field: str | None = None
    batch_size: int = 32
    seed: int = 0
    device: str = "auto"
    dtype: str = "auto"
    model_name: str | None = None

    def __post_init__(self) -> None:
        # one spelling per dtype (fp32 and float32 are the same run), checked before anything loads
        object.__setattr__(self, "dtype", parse_dtype(self.dtype))
        check_spec_fields(self)

    def recorded(self) -> dict[str, Any]:
        fields = asdict(self)
        return {"command": self.COMMAND, **fields, "model": resolved_model_spec(self.model),
                "benchmark": resolved_path(self.benchmark), "benchmark_sha256": _file_sha256(self.benchmark),
                "images": resolved_path(self.images), "out": resolved_path(self.out),
                "contexts": list(self.contexts)}


@dataclass(frozen=True)
class FeaturesSpec:
    """``features`` / :func:`vlaudit.extract_features`: dual-encoder embeddings of a cycles table's inputs."""

    FOLDER_OPTION: ClassVar[str] = "--out"  # the option naming the run folder, in a refusal
    CACHED: ClassVar[bool] = False  # no score cache: a replacing run computes everything again
    COMMAND: ClassVar[str] = "features"
    OPERATIONAL: ClassVar[frozenset[str]] = frozenset({"out", "batch_size", "device", *_RAY})

    model: str
    cycles: Path
    images: Path
    out: Path
    captions: Path | None = None
    batch_size: int = 32
    device: str = "auto"
    dtype: str = "auto"
    revision: str | None = None
    executor: str = "local"
    address: str | None = None
    workers: int = 1
    gpus_per_worker: float = 0.0
    threads_per_worker: int | None = None

    def __post_init__(self) -> None:
        # one spelling per dtype (fp32 and float32 are the same run), checked before anything loads
        object.__setattr__(self, "dtype", parse_dtype(self.dtype))
        check_spec_fields(self)

    def recorded(self) -> dict[str, Any]:
        return {"command": self.COMMAND, **asdict(self), "model": resolved_model_spec(self.model),
                "cycles": resolved_path(self.cycles), "cycles_sha256": _file_sha256(self.cycles),
                "images": resolved_path(self.images), "out": resolved_path(self.out),
                "captions": resolved_path(self.captions), "captions_sha256": _file_sha256(self.captions)}

    def load_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {"batch_size": self.batch_size, "device": self.device, "dtype": self.dtype}
        if self.revision is not None:
            options["revision"] = self.revision
        return options


@dataclass(frozen=True)
class CycleScoreSpec:
    """``cycles score-mllm`` / :func:`vlaudit.score_cycles_mllm`: cycle scores of a generative MLLM as the
    yes/no margin of a fixed query. The run (cache, margins, manifest) lives in :meth:`run_folder`."""

    FOLDER_OPTION: ClassVar[str] = "--run-dir"  # the option naming the run folder, in a refusal
    CACHED: ClassVar[bool] = True  # a replacing run reuses the folder's score cache
    COMMAND: ClassVar[str] = "cycles score-mllm"
    OPERATIONAL: ClassVar[frozenset[str]] = frozenset({"out", "run_dir", "batch_size", "device", "chunk_size",
                                                       *_RAY})

    model: str
    cycles: Path
    images: Path
    out: Path
    captions: Path | None = None
    run_dir: Path | None = None
    query: str | None = None
    batch_size: int = 8
    dtype: str = "auto"
    device: str = "auto"
    revision: str | None = None
    min_pixels: int | None = None
    max_pixels: int | None = None
    chunk_size: int = 64
    executor: str = "local"
    address: str | None = None
    workers: int = 1
    gpus_per_worker: float = 0.0
    threads_per_worker: int | None = None

    def __post_init__(self) -> None:
        # one spelling per dtype (fp32 and float32 are the same run), checked before anything loads
        object.__setattr__(self, "dtype", parse_dtype(self.dtype))
        check_spec_fields(self)

    def run_folder(self) -> Path:
        """``--run-dir``, or ``OUT.run`` beside the scores table."""
        return Path(self.run_dir) if self.run_dir is not None else Path(self.out).with_name(Path(self.out).name + ".run")

    def recorded(self, query: str) -> dict[str, Any]:
        """The manifest's ``arguments`` (``query``: the checked query, the default filled in)."""
        return {"command": self.COMMAND, **asdict(self), "model": resolved_model_spec(self.model),
                "cycles": resolved_path(self.cycles), "cycles_sha256": _file_sha256(self.cycles),
                "images": resolved_path(self.images), "out": resolved_path(self.out),
                "captions": resolved_path(self.captions), "captions_sha256": _file_sha256(self.captions),
                "run_dir": resolved_path(self.run_folder()), "query": query}

    def load_options(self) -> dict[str, Any]:
        return {"dtype": self.dtype, "device": self.device, "batch_size": self.batch_size, "revision": self.revision,
                "min_pixels": self.min_pixels, "max_pixels": self.max_pixels}
