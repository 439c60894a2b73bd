"""Is a decision above the noise? The noise floor of a scored run, and likelihood against generation.

:func:`measure_stability` (``vlaudit vca stability``) re-scores a seeded sample of a ``vca score`` (or ``score-dual``) run under
math-preserving perturbations and writes the floor τ to the run's ``stability.json``, which ``vca report``
then reads (:mod:`vlaudit.metrics.vca.noise`). Both functions read the run's manifest for everything the run
was scored with (model, backend options, contexts, interfaces, items, images) and load the same model;
a model whose fingerprint differs from the run's is refused in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TypeAlias

from vlaudit.api.input_records import as_items
from vlaudit.backends.base import (
    ENGINE,
    PERTURBATION_NAMES,
    Backend,
    FeatureBackend,
    YesNoBackend,
    images_per_query,
)
from vlaudit.backends.options import VllmOptions
from vlaudit.backends.registry import BackendLoad
from vlaudit.backends.vllm.engine_twin import check_twin_settings, twin_settings
from vlaudit.errors import InputError, unknown_names
from vlaudit.files import read_json
from vlaudit.results.vca.outputs import GenerateCheckResult, StabilityResult
from vlaudit.results.versioned import JsonValue
from vlaudit.scoring.dual_stability import run_dual_stability
from vlaudit.scoring.generate_check import run_generate_check
from vlaudit.scoring.run.executors import open_features, open_yes_no
from vlaudit.scoring.run.parts import RunOptions
from vlaudit.scoring.run.spec import recorded_model
from vlaudit.scoring.stability import STABILITY_FILE, run_stability
from vlaudit.sources.items import BenchmarkItem, read_items

#: a model to re-score with: a loaded backend, or a spec to load instead of the run's recorded one
ModelArg: TypeAlias = YesNoBackend | FeatureBackend | str | None
#: the run's items when its manifest names no ITEMS file: a path or the records
ItemsArg: TypeAlias = str | Path | Sequence[BenchmarkItem] | None


def _argument(manifest: Mapping[str, JsonValue], name: str) -> JsonValue:
    """One of the run's recorded arguments (None when absent)."""
    arguments = manifest.get("arguments")
    return arguments.get(name) if isinstance(arguments, dict) else None


def read_run_manifest(run: str | Path, *, dual: bool = False) -> dict[str, JsonValue]:
    """The ``manifest.json`` of a ``vca score`` run folder, or with ``dual`` also of a ``vca score-dual`` one
    (one-line error for anything else)."""
    path = Path(run) / "manifest.json"
    accepted = "a vca score or vca score-dual" if dual else "a vca score"
    if not path.is_file():
        raise InputError(f"not {accepted} run folder (no manifest.json)", path=run)
    manifest = read_json(path)
    if not isinstance(manifest, dict):
        raise InputError(f"not {accepted} run (manifest.json is not an object)", path=path)
    command = manifest.get("command")
    if dual and command == "vca score-dual" and isinstance(manifest.get("backend"), dict):
        return manifest
    if command != "vca score" or not isinstance(manifest.get("model_fingerprint_by_interface"), dict):
        raise InputError(f"not {accepted} run (manifest command {command!r})", path=path, field="command")
    return manifest


def run_items(manifest: Mapping[str, JsonValue], items: ItemsArg, run: str | Path) -> list[BenchmarkItem]:
    """The items the run scored: ``items`` when given, else the ITEMS file its manifest names."""
    if items is not None:
        return as_items(items)
    benchmark = _argument(manifest, "benchmark")
    if not benchmark or not isinstance(benchmark, str):
        raise InputError("the run's items were given in memory, not as a file: pass them as items=",
                         path=run, field="benchmark")
    return read_items(benchmark)


def scored_items(items: Sequence[BenchmarkItem], backend: object) -> list[BenchmarkItem]:
    """The items a finished run scored with ``backend``: those with more images than it takes in one query
    were left out of the run (``--skip-multi-image``; without it the run was refused), so they are left out
    here too instead of being shown only their first image."""
    capacity = images_per_query(backend)
    return [item for item in items if len(item.images) <= capacity]


def open_run_backend(manifest: Mapping[str, object], model: YesNoBackend | FeatureBackend | str | None, *,
                     device: str | None, batch_size: int | None) -> Backend:
    """The run's model loaded with its recorded options (``model``: a loaded backend, or a spec to load
    instead of the recorded one — refused later if its fingerprint differs)."""
    if model is not None and not isinstance(model, str):
        return model
    recorded = manifest.get("arguments")
    arguments: Mapping[str, object] = recorded if isinstance(recorded, dict) else {}
    ref = recorded_model(str(model or arguments.get("model") or manifest["spec"]), arguments)

    def text(name: str) -> str | None:
        value = arguments.get(name)
        return None if value is None else str(value)

    recorded_batch = batch_size or arguments.get("batch_size")
    batch = int(recorded_batch) if isinstance(recorded_batch, (int, float, str)) else None
    run = RunOptions(batch_size=batch, device=device or text("device") or "auto")
    if manifest.get("command") == "vca score-dual":
        return open_features(BackendLoad(ref, run))[0]
    prefix_cache = arguments.get("prefix_cache")
    run = replace(run, batch_size=batch or 8, device_map=text("device_map"),
                  prefix_cache=prefix_cache if isinstance(prefix_cache, bool) else None)
    templates = arguments.get("question_templates")
    interfaces = manifest["interfaces"]
    load = BackendLoad(ref, run, interfaces=tuple(interfaces) if isinstance(interfaces, list) else None,
                       question_templates=templates if isinstance(templates, dict) else None)
    return open_yes_no(load)[0]


def _refuse_other_stability(out: Path, run: Path, spec: str) -> None:
    path = out / STABILITY_FILE
    if not path.is_file() or out.resolve() == run.resolve():
        return
    previous = read_json(path)
    if isinstance(previous, dict) and (previous.get("run"), previous.get("spec")) != (str(run.resolve()), spec):
        raise InputError(f"holds the stability of another run ({previous.get('run')}, {previous.get('spec')}); "
                         "choose another --out", path=out, field="--out")


def measure_stability(run: str | Path, *, out: str | Path | None = None, sample: int = 200, seed: int = 0,
                      perturbations: Sequence[str] | None = None, model: ModelArg = None, items: ItemsArg = None,
                      device: str | None = None, batch_size: int | None = None, chunk_size: int = 64,
                      on_progress: Callable[[str, int, int], None] | None = None,
                      engine: VllmOptions | None = None, engine_run: RunOptions | None = None) -> StabilityResult:
    """The backend's noise floor τ on the ``vca score`` or ``vca score-dual`` run in ``run`` (VCA §3 decisions).

    Re-scores ``sample`` seeded items (all their contexts and interfaces) under every math-preserving
    perturbation the backend supports (or ``perturbations``); the unperturbed margins are the run's own,
    read from its cache. A dual-encoder run re-embeds the sample's context images and statements instead
    (:mod:`vlaudit.scoring.dual_stability`: ``batch-1`` and ``dtype``). Writes ``stability.json`` into ``out`` (default: the run folder) and the run folder,
    where ``vca report`` reads τ. Resumable: perturbed scores are cached in ``OUT/stability-cache``.

    Args:
        run: the run folder.
        out: the output folder (default: the run folder).
        sample: items to re-score.
        seed: the sample's seed.
        perturbations: names (``batch-1``, ``padding-right``, ``dtype``, ``attention``, ``prefix-cache``,
            ``engine``: hf: vs vllm: on the same weights, measured only when named;
            a dual encoder: ``batch-1``, ``dtype``).
        model: a loaded backend or a model spec (default: the run's).
        items: the run's items when its manifest names no ITEMS file.
        device: where the model runs (default: as recorded).
        batch_size: the run's batch size (default: as recorded).
        chunk_size: units per cache chunk.
        on_progress: ``on_progress(perturbation, done, total)`` after every scored chunk.
        engine: the vLLM engine settings of the second engine of an ``hf:`` run under ``engine``: the fields
            :class:`~vlaudit.VllmOptions` adds to :class:`~vlaudit.HfOptions` (``tensor_parallel_size``,
            ``max_model_len``, ``enforce_eager``, ...; default: vLLM's); its model fields are the run's own
            (refused when set).
        engine_run: the placement of the second engine of a ``vllm:`` run under ``engine``: its
            ``device_map`` (default: ``auto`` when the run spans several GPUs, else one device; the other
            fields are the run's, refused when set).

    Under ``engine`` the run's own model, when loaded here (``model`` None or a spec), is freed before the
    second engine loads (:func:`vlaudit.backends.vllm.engine_twin.release_engine`); a backend passed in is kept.
    """
    if sample < 1:
        raise InputError(f"the sample must be at least one item, not {sample}", field="--sample")
    typo = unknown_names(perturbations or (), PERTURBATION_NAMES, what="perturbation", field="--perturbations")
    if typo is not None:  # before the model loads
        raise typo
    run_dir = Path(run)
    manifest = read_run_manifest(run_dir, dual=True)
    out_dir = Path(out) if out is not None else run_dir
    item_list = run_items(manifest, items, run_dir)
    images = _argument(manifest, "images")
    if not images or not isinstance(images, str):
        raise InputError("the run's manifest names no images folder", path=run_dir, field="images")
    settings = twin_settings(engine, engine_run)
    if ENGINE in (perturbations or ()):  # a setting the second engine does not take: refused before any load
        check_twin_settings(str(model if isinstance(model, str) else getattr(model, "spec", None)
                                or manifest.get("spec") or ""), settings)
    backend = open_run_backend(manifest, model, device=device, batch_size=batch_size)
    _refuse_other_stability(out_dir, run_dir, backend.spec)
    if manifest["command"] == "vca score-dual":
        return run_dual_stability(backend, scored_items(item_list, backend), manifest, run_dir=run_dir,
                                  images_dir=images, out_dir=out_dir, sample=sample, seed=seed,
                                  perturbations=perturbations, chunk_size=chunk_size, on_progress=on_progress)
    return run_stability(backend, scored_items(item_list, backend), manifest, run_dir=run_dir, images_dir=images,
                         out_dir=out_dir, sample=sample, seed=seed, perturbations=perturbations,
                         chunk_size=chunk_size, on_progress=on_progress, engine=settings,
                         release_first=model is None or isinstance(model, str))


def generate_check(run: str | Path, *, out: str | Path | None = None, sample: int | None = 200, seed: int = 0,
                   max_new_tokens: int = 8, model: ModelArg = None, items: ItemsArg = None, device: str | None = None,
                   batch_size: int | None = None, chunk_size: int = 64,
                   on_progress: Callable[[str, int, int], None] | None = None) -> GenerateCheckResult:
    """Likelihood against generation on the ``vca score`` run in ``run``: greedy decoding under the run's
    prompt, with and without the "Answer:" scoring prefix, for ``sample`` seeded items (None: every item)
    and all their contexts; the first answer word is parsed with the interface's answer words and compared
    with the margin's decision (VCA §3: yes iff m_o ≥ 0).

    Writes ``generate_check.json`` (per context, interface and prompt form: agreement, confusion table,
    unparseable rate, disagreements) and ``generations.jsonl`` (every raw text) into ``out`` (default: the
    run folder), ``generate_check.json`` also into the run folder. Resumable (``OUT/generate-cache``).
    """
    if sample is not None and sample < 1:
        raise InputError(f"the sample must be at least one item, not {sample}", field="--sample")
    if max_new_tokens < 1:
        raise InputError(f"max_new_tokens must be at least 1, not {max_new_tokens}", field="--max-new-tokens")
    run_dir = Path(run)
    manifest = read_run_manifest(run_dir)
    item_list = run_items(manifest, items, run_dir)
    images = _argument(manifest, "images")
    if not images or not isinstance(images, str):
        raise InputError("the run's manifest names no images folder", path=run_dir, field="images")
    backend = open_run_backend(manifest, model, device=device, batch_size=batch_size)
    return run_generate_check(backend, scored_items(item_list, backend), manifest, run_dir=run_dir, images_dir=images,
                              out_dir=Path(out) if out is not None else run_dir, sample=sample, seed=seed,
                              max_new_tokens=max_new_tokens, chunk_size=chunk_size, on_progress=on_progress)
