"""``vca stability``: re-score a seeded sample of a run's (item, context) units under math-preserving
perturbations and measure the backend's noise floor τ (:mod:`vlaudit.metrics.vca.noise`).

The run is read from its folder: ``manifest.json`` (contexts, interfaces, seed, the model fingerprint per
interface), the run's score cache and the ITEMS it scored. The sample is ``sample`` items drawn without
replacement with ``numpy.random.default_rng(seed)`` from the run's items that have a scored record, each
with every context and interface of the run. The run is re-planned over *all* its items (mismatch donors
depend on the whole set), so every sampled unit has the run's cache key and its **unperturbed margin is read
from the run's cache**, never recomputed: the cost is exactly one re-scored unit per (perturbation, sampled
unit), in batches of the run's batch size (of 1 under ``batch-1``). The ``engine`` perturbation re-scores with
the same weights in the other engine (``hf:`` ↔ ``vllm:``, :mod:`vlaudit.backends.vllm.engine_twin`).

Perturbed scores are cached in ``OUT/stability-cache/`` (:class:`~vlaudit.scoring.run.cache.ChunkCache`, keyed
by sha256(perturbation, unit key)), one sealed chunk per scored shard, under an exclusive lock on OUT: a
killed run resumes and rescores nothing it finished. ``stability.json`` is written atomically into OUT and
into the run folder, where ``vca report`` reads the floor.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.backends.base import ANSWER_WORDS, PerturbableBackend, description_of, require_protocol
from vlaudit.backends.registry import parse_spec_or_none
from vlaudit.backends.vllm.engine_twin import ENGINE, engine_perturbation, other_engine
from vlaudit.errors import InputError
from vlaudit.files import write_result
from vlaudit.hashing import sha256_json
from vlaudit.metrics.vca import noise, support
from vlaudit.results.vca.checks import (
    FloorBound,
    FloorEstimate,
    PerturbationNoise,
    StabilityForwards,
    StabilitySample,
)
from vlaudit.results.vca.outputs import StabilityResult
from vlaudit.results.versioned import record_from_dict, to_json
from vlaudit.scoring.run.cache import ChunkCache
from vlaudit.scoring.run.folder import resolved_model_spec, run_lock
from vlaudit.scoring.run.manifest import local_weights_identity, model_fingerprint
from vlaudit.scoring.run.plan import Record, Unit, plan_run
from vlaudit.scoring.run.shards import UnitTask, render_requests
from vlaudit.settings import PRIMARY_CONTROLS
from vlaudit.sources.images import ImageStore
from vlaudit.sources.items import BenchmarkItem

STABILITY_FILE = "stability.json"
CACHE_DIR = "stability-cache"
FLOOR_DEFINITION = ("tau = max over perturbations of the order-statistic upper 95% confidence bound of the 0.99 "
                    "quantile of |margin_perturbed - margin_run| over the re-scored units of the sample, each unit "
                    "once (all contexts and interfaces); with fewer units than a bound needs, their maximum")


def floor_estimate(abs_deltas: Mapping[str, np.ndarray], *, where: Path) -> tuple[float, FloorEstimate]:
    """τ and how it was estimated (:func:`vlaudit.metrics.vca.noise.noise_floor_bounds`); a NaN |Δ| is an
    error naming ``where``, and too few units give the estimate its warning."""
    try:
        bounds = noise.noise_floor_bounds(abs_deltas)
    except ValueError as error:
        raise InputError(str(error), path=where, field="margin") from None
    needed = noise.units_for_bound()
    rows = [FloorBound(perturbation=name, n=b.n, order=b.order, value=b.value, coverage=b.coverage,
                       bounded=b.bounded) for name, b in bounds.items()]
    short = [row for row in rows if not row.bounded]
    warning = None
    # the perturbation tau comes from (the largest bound) is the one a warning about tau names
    top = max(rows, key=lambda row: row.value) if rows else None
    others = [f"{row.perturbation} ({row.n})" for row in short if row is not top]
    if top is not None and not top.bounded:
        also = f"; also short of {needed}: {', '.join(others)}" if others else ""
        warning = (f"tau rests on {top.n} re-scored units ({top.perturbation}, which sets it): with fewer than "
                   f"{needed} it is their maximum, which lies above the p99 of |delta margin| only with "
                   f"probability {top.coverage:.0%}, not a {noise.CONFIDENCE_LEVEL:.0%} upper bound{also}; re-run "
                   "with a larger --sample")
    elif top is not None and others:
        warning = (f"tau comes from {top.perturbation} (a {noise.CONFIDENCE_LEVEL:.0%} upper bound on "
                   f"{top.n} units); {', '.join(others)} re-scored fewer than {needed} units, so their maximum "
                   "may understate their own p99; re-run with a larger --sample to bound them too")
    tau = max((row.value for row in rows), default=0.0)
    return tau, FloorEstimate(quantile=noise.FLOOR_QUANTILE, level=noise.CONFIDENCE_LEVEL, n_needed=needed,
                              bounds=rows, warning=warning)


def unique_units(records: Sequence[Record]) -> list[Record]:
    """One record per unit (cache key): two items that share a prompt and image (the ``text`` context of one
    question, say) are one forward, re-scored once, so its |Δ| is one value, not two."""
    seen: set[str] = set()
    out = []
    for record in records:
        if str(record.key) not in seen:
            seen.add(str(record.key))
            out.append(record)
    return out


def described_as_recorded(describe: Mapping[str, Any], manifest: Mapping[str, Any]) -> dict[str, Any]:
    """``describe`` with its ``spec`` spelled as the run recorded it when both name the same model.

    A local folder is named by its resolved path in the manifest's ``arguments`` (``hf:models/m`` ≡
    ``hf:/abs/models/m``), and its weights by their identity, so the path form the user typed when scoring
    (or now) must not make the run's own model "another" one."""
    arguments = manifest.get("arguments") or {}
    recorded = (manifest.get("backend") or {}).get("spec") or manifest.get("spec")
    spec = describe.get("spec")
    if (isinstance(spec, str) and isinstance(recorded, str) and isinstance(arguments.get("model"), str)
            and resolved_model_spec(spec) == resolved_model_spec(arguments["model"])):
        return {**describe, "spec": recorded}
    return dict(describe)


def check_same_model(backend: Any, manifest: Mapping[str, Any], interfaces: Sequence[str], run_dir: Path) -> None:
    """Refuse (one line) a backend whose fingerprint differs from the one the run was scored with."""
    describe = described_as_recorded(description_of(backend).to_dict(), manifest)
    parsed = parse_spec_or_none(backend.spec)  # a test double's spec names no registered prefix
    weights = None if parsed is None else local_weights_identity(parsed.name)
    recorded = manifest.get("model_fingerprint_by_interface") or {}
    for interface in interfaces:
        if recorded.get(interface) != model_fingerprint(describe, weights, interface):
            raise InputError(f"the run was scored by {manifest.get('spec')!r} with other settings or weights than "
                             f"{backend.spec!r} (model fingerprint differs for interface {interface!r})",
                             path=run_dir, field="--model")


def sample_item_ids(item_ids: Sequence[str], n: int, seed: int) -> list[str]:
    """``n`` of ``item_ids`` (all when fewer), drawn without replacement by ``default_rng(seed)``; sorted."""
    pool = sorted(set(item_ids))
    if n >= len(pool):
        return pool
    chosen = np.random.default_rng(seed).choice(len(pool), size=n, replace=False)
    return sorted(pool[int(i)] for i in chosen)


def plan_sample(backend: Any, items: Sequence[BenchmarkItem], manifest: Mapping[str, Any], store: ImageStore,
                run: Path, sample: int, seed: int) -> tuple[set[str], list[Record], list[Unit], dict[str, Any]]:
    """(sampled item ids, their ok records, their units, each unit's record in the run's cache): the run
    re-planned over all its items so that every unit has the run's cache key."""
    records, units = plan_run(items, store, list(manifest["contexts"]), list(manifest["interfaces"]),
                              int(manifest.get("seed", 0)), manifest["model_fingerprint_by_interface"],
                              backend.prompt)
    ok = [r for r in records if r.status == "ok"]
    chosen = set(sample_item_ids([r.item.item_id for r in ok], sample, seed))
    sampled = [r for r in ok if r.item.item_id in chosen]
    keys = {r.key for r in sampled}
    sampled_units = [u for u in units if u.key in keys]
    baseline = ChunkCache(run / "cache").load()
    missing = [u.key for u in sampled_units if u.key not in baseline]
    if missing:
        raise InputError(f"the run's cache lacks {len(missing)} of the {len(sampled_units)} sampled units; rerun "
                         "the run's vca score command to complete it", path=run / "cache")
    return chosen, sampled, sampled_units, {u.key: baseline[u.key] for u in sampled_units}


def top_option(hit: Mapping[str, Any]) -> int | None:
    """The chosen option's index of a letter-interface cache record (argmax log p), None for yes/no."""
    logps = hit.get("logp_options")
    return int(np.argmax(logps)) if logps else None


def answer_margin(hit: Mapping[str, Any], top: int | None = None) -> float:
    """The decision margin of a cache record: m = NLL(no) − NLL(yes) for yes/no (VCA §3); for the letter
    interface log p(option ``top``) − the largest other log p, ``top`` the run's chosen option (default: this
    record's), so that m < 0 exactly when another option overtakes the run's choice."""
    logps = hit.get("logp_options")
    if not logps:
        return float(hit["nll_no"]) - float(hit["nll_yes"])
    values = np.asarray(logps, dtype=np.float64)
    chosen = int(np.argmax(values)) if top is None else top
    return float(values[chosen] - np.delete(values, chosen).max()) if values.size > 1 else 0.0


def choose_perturbations(backend: Any, perturbations: Sequence[str] | None) -> tuple[dict[str, str], list[str]]:
    """(what ``backend`` supports, the names to measure: ``perturbations`` or all); one line for others.

    ``engine`` (:mod:`vlaudit.backends.vllm.engine_twin`: the other engine on the same weights) loads a second
    model, so "all" leaves it out unless it is the only one the backend has."""
    supported = {**backend.perturbations(), **engine_perturbation(backend)}
    default = [n for n in supported if n != ENGINE] or list(supported)
    names = default if perturbations is None else list(perturbations)
    if not supported:
        raise InputError(f"{backend.spec} supports no perturbation (it scores each unit alone, in one fixed "
                         "precision), so it has no numerical noise to measure", field="--perturbations")
    unknown = [n for n in names if n not in supported]
    if unknown or not names:
        raise InputError(f"{backend.spec} supports the perturbations {', '.join(supported)}; asked "
                         f"{', '.join(unknown or names) or 'none'}", field="--perturbations")
    return supported, names


def _perturbed_key(name: str, unit_key: str) -> str:
    return sha256_json({"perturbation": name, "unit": unit_key})


def run_stability(backend: Any, items: Sequence[BenchmarkItem], manifest: Mapping[str, Any], *, run_dir: str | Path,
                  images_dir: str | Path, out_dir: str | Path, sample: int, seed: int,
                  perturbations: Sequence[str] | None = None, chunk_size: int = 64,
                  on_progress: Callable[[str, int, int], None] | None = None,
                  engine: Mapping[str, Any] | None = None, release_first: bool = False) -> StabilityResult:
    """Measure the noise floor of the run in ``run_dir`` (see the module docstring); returns the result.

    ``perturbations``: names from ``backend.perturbations()`` (default: all it supports).
    ``on_progress(perturbation, done, total)`` hears of every scored shard. ``engine``: the second engine's
    settings (:func:`vlaudit.backends.vllm.engine_twin.twin_load`); ``release_first``: free ``backend`` before the
    second engine loads (``engine`` is then measured last, and ``backend`` scores no more)."""
    require_protocol(backend, PerturbableBackend)
    run, out = Path(run_dir), Path(out_dir)
    contexts, interfaces = list(manifest["contexts"]), list(manifest["interfaces"])
    backend.prepare(items, images_dir, interfaces)
    check_same_model(backend, manifest, interfaces, run)
    supported, names = choose_perturbations(backend, perturbations)
    store = ImageStore(images_dir)
    chosen, sampled, sampled_units, base_hits = plan_sample(backend, items, manifest, store, run, sample, seed)
    base = {key: answer_margin(hit) for key, hit in base_hits.items()}
    tops = {key: top_option(hit) for key, hit in base_hits.items()}
    with run_lock(out):
        cache = ChunkCache(out / CACHE_DIR)
        cache.load()
        scored_now = _score_perturbations(backend, names, sampled_units, cache, store, int(manifest.get("seed", 0)),
                                          chunk_size, on_progress, engine=engine, release_first=release_first)
        rows = [_perturbation_row(name, supported[name], sampled, base, tops, cache) for name in names]
        floor, estimate = floor_estimate({row["perturbation"]: np.asarray(row.pop("_abs_deltas")) for row in rows},
                                         where=run / "cache")
        result = StabilityResult(
            model=str(manifest.get("model") or backend.spec), spec=backend.spec, run=str(run.resolve()),
            sample=StabilitySample(n_items=len(chosen), seed=seed, requested=sample, n_units=len(sampled_units),
                                   n_records=len(sampled), contexts=list(contexts), interfaces=list(interfaces)),
            perturbations=[record_from_dict(PerturbationNoise, to_json(row), path=out) for row in rows],
            noise_floor=floor, floor_definition=FLOOR_DEFINITION, estimate=estimate,
            forwards=StabilityForwards(baseline_from_run_cache=len(sampled_units), scored_now=scored_now,
                                       total_perturbed=len(names) * len(sampled_units),
                                       per_sampled_item=len(names) * len(sampled_units) / max(len(chosen), 1)))
        write_result(out / STABILITY_FILE, result)
    publish(result, out, run)
    return result


def publish(result: StabilityResult, out: Path, run: Path) -> None:
    """Copy ``stability.json`` from ``out`` into the run folder (where ``vca report`` reads τ), atomically."""
    if out.resolve() != run.resolve():
        with run_lock(run):
            write_result(run / STABILITY_FILE, result)


def _score_perturbations(backend: Any, names: Sequence[str], units: Sequence[Unit], cache: ChunkCache, store: Any,
                         seed: int, chunk_size: int, on_progress: Callable[[str, int, int], None] | None, *,
                         engine: Mapping[str, Any] | None = None, release_first: bool = False) -> int:
    """Score every (perturbation, unit) not yet in ``cache``, one sealed chunk per shard; returns how many.
    The ``engine`` perturbation goes last: with ``release_first`` the run's backend is freed before the second
    engine loads."""
    scored = 0
    ordered = sorted(units, key=lambda u: (u.image_sha256 or "", u.key))  # one image's units together
    for name in sorted(names, key=lambda n: n == ENGINE):  # stable: the others in their order, engine last
        todo = [u for u in ordered if _perturbed_key(name, u.key) not in cache.records]
        if not todo:
            continue
        with (other_engine(backend, engine, release_first=release_first) if name == ENGINE
              else backend.perturbed(name)) as perturbed:
            for start in range(0, len(todo), chunk_size):
                chunk = todo[start:start + chunk_size]
                results = perturbed.score(render_requests(store, [UnitTask.of(u) for u in chunk], seed))
                cache.append([{"key": _perturbed_key(name, r.key), "unit": r.key, "perturbation": name,
                               "nll_yes": r.nll_yes, "nll_no": r.nll_no,
                               **({"logp_options": list(r.logp_options)} if r.logp_options else {})}
                              for r in results])
                scored += len(chunk)
                if on_progress:
                    on_progress(name, start + len(chunk), len(todo))
    return scored


def _perturbation_row(name: str, description: str, records: Sequence[Record], base: Mapping[str, float],
                      tops: Mapping[str, int | None], cache: ChunkCache) -> dict[str, Any]:
    """Per-context and overall |Δ| statistics and the G_img sign flips of one perturbation."""
    def perturbed(key: str) -> float:
        return answer_margin(cache.records[_perturbed_key(name, key)], tops[key])

    by_context: dict[str, tuple[list[float], list[float]]] = {}
    for record in unique_units(records):
        key = str(record.key)
        before, after = by_context.setdefault(record.context, ([], []))
        before.append(base[key])
        after.append(perturbed(key))
    contexts = {c: noise.delta_summary(np.asarray(b), np.asarray(a)) for c, (b, a) in sorted(by_context.items())}
    all_before = np.concatenate([np.asarray(b) for b, _ in by_context.values()]) if by_context else np.zeros(0)
    all_after = np.concatenate([np.asarray(a) for _, a in by_context.values()]) if by_context else np.zeros(0)
    return {"perturbation": name, "description": description, "contexts": contexts,
            "all": noise.delta_summary(all_before, all_after),
            "g_img": gap_flips([(r.item.item_id, r.interface, r.context, str(r.key)) for r in records], base,
                               perturbed),
            "_abs_deltas": np.abs(all_after - all_before).tolist()}


def gap_flips(records: Sequence[tuple[str, str, str, str]], base: Mapping[str, float],
              perturbed: Callable[[str], float]) -> dict[str, Any]:
    """Items (per interface) with original and the headline controls whose Dep = [G_img > 0] changes sign;
    ``records``: (item id, interface, context, margin key) of every re-scored record."""
    by_item: dict[tuple[str, str], dict[str, str]] = {}
    for item_id, interface, context, key in records:
        by_item.setdefault((item_id, interface), {})[context] = key
    needed = ("original", *PRIMARY_CONTROLS)
    complete = [contexts for (_, interface), contexts in by_item.items()
                if interface in ANSWER_WORDS and all(c in contexts for c in needed)]  # yes/no interfaces
    if not complete:
        return {"n": 0, "controls": list(PRIMARY_CONTROLS), "sign_flips": 0}
    before = {c: np.array([base[k[c]] for k in complete]) for c in needed}
    after = {c: np.array([perturbed(k[c]) for k in complete]) for c in needed}
    flips = support.dependence(support.image_gap(before, PRIMARY_CONTROLS)) != \
        support.dependence(support.image_gap(after, PRIMARY_CONTROLS))
    return {"n": len(complete), "controls": list(PRIMARY_CONTROLS), "sign_flips": int(flips.sum())}
