"""``vca stability`` on a ``vca score-dual`` run: the noise floor of a dual encoder's cosine margins.

The margins are m_c(s) = cos(x_c, s) − max over the group's other statements of cos(x_c, s')
(:mod:`vlaudit.scoring.dual_margins`, VCA §13). The sample, the floor τ, ``stability.json`` and its cache
follow :mod:`vlaudit.scoring.stability` exactly: ``sample`` items drawn by
:func:`~vlaudit.scoring.stability.sample_item_ids` from the run's items with an ``original`` margin, each
with every context of the run; the **unperturbed margin is the run's** (``margins.parquet``), never
recomputed. Under each perturbation (:mod:`vlaudit.backends.dual.perturbations`) the encoder embeds again
the sampled records' context images (the run's rendered ``context_images/``) and the statements of their
groups (a margin needs every member's cosine), so the cost is one embedding per (perturbation, distinct
image or text). The ``text`` context's image side — the mean of the run's original-image embeddings, or
zero — is the run's: re-embedding every original of the run would cost more than the sample, so that
context's |Δ| measures the text tower alone.

Perturbed embeddings are cached in ``OUT/stability-cache/`` (keyed by sha256(perturbation, image hash or
text hash)), one sealed chunk per embedded chunk, under an exclusive lock on OUT: a killed run resumes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from vlaudit.backends.base import PerturbableBackend, description_of, require_protocol
from vlaudit.errors import InputError
from vlaudit.files import read_records, write_result
from vlaudit.hashing import sha256_json, sha256_text
from vlaudit.metrics.vca import noise
from vlaudit.results.vca.checks import PerturbationNoise, StabilityForwards, StabilitySample
from vlaudit.results.vca.outputs import StabilityResult
from vlaudit.results.versioned import record_from_dict, to_json
from vlaudit.scoring.dual_margins import (
    INTERFACE,
    check_groups,
    grouped_items,
    plan_dual,
    statement_of,
    text_context_image,
)
from vlaudit.scoring.features import pair_cosines, read_features
from vlaudit.scoring.run.cache import ChunkCache
from vlaudit.scoring.run.folder import run_lock
from vlaudit.scoring.stability import (
    CACHE_DIR,
    FLOOR_DEFINITION,
    STABILITY_FILE,
    choose_perturbations,
    described_as_recorded,
    floor_estimate,
    gap_flips,
    publish,
    sample_item_ids,
)
from vlaudit.sources.images import ImageStore
from vlaudit.sources.items import BenchmarkItem

#: describe() entries a re-run may change without changing the embeddings' mathematics
_OPERATIONAL = ("batch_size", "device")


def check_same_encoder(backend: Any, manifest: Mapping[str, Any], run_dir: Path) -> None:
    """Refuse (one line) an encoder that describes itself otherwise than the one the run was scored with."""
    recorded = {k: v for k, v in (manifest.get("backend") or {}).items() if k not in _OPERATIONAL}
    now = {k: v for k, v in described_as_recorded(description_of(backend).to_dict(), manifest).items() if k not in _OPERATIONAL}
    if recorded != now:
        differing = sorted(k for k in recorded.keys() | now.keys() if recorded.get(k) != now.get(k))
        raise InputError(f"the run was scored by {manifest.get('spec')!r} with other settings or weights than "
                         f"{backend.spec!r} (differs in {', '.join(differing)})", path=run_dir, field="--model")


def _key(name: str, kind: str, content: str) -> str:
    return sha256_json({"perturbation": name, kind: content})


def run_dual_stability(backend: Any, items: Sequence[BenchmarkItem], manifest: Mapping[str, Any], *,
                       run_dir: str | Path, images_dir: str | Path, out_dir: str | Path, sample: int, seed: int,
                       perturbations: Sequence[str] | None = None, chunk_size: int = 64,
                       on_progress: Callable[[str, int, int], None] | None = None) -> StabilityResult:
    """Measure the noise floor of the dual run in ``run_dir`` (see the module docstring); returns the result."""
    require_protocol(backend, PerturbableBackend)
    run, out = Path(run_dir), Path(out_dir)
    check_same_encoder(backend, manifest, run)
    supported, names = choose_perturbations(backend, perturbations)
    contexts = list(manifest["contexts"])
    items, _ = grouped_items(items)  # the run scored its groups only (score-dual leaves lone items out)
    groups = check_groups(items)
    texts = {item.item_id: statement_of(item, manifest.get("text_field")) for item in items}
    by_id = {item.item_id: item for item in items}
    rows = [r for r in read_records(run / "margins.parquet") if r.get("status") == "ok"]
    run_rows = {(str(r["item_id"]), str(r["context"])): r for r in rows}
    chosen = set(sample_item_ids([i for i, c in run_rows if c == "original"], sample, seed))
    sampled = sorted(k for k in run_rows if k[0] in chosen)
    if any(i not in by_id for i, _ in sampled):
        raise InputError("the run's margins name items that are not in its ITEMS file", path=run / "margins.parquet",
                         field="item_id")
    image_shas = sorted({str(run_rows[k]["image_sha256"]) for k in sampled if k[1] != "text"})
    files = {sha: run / "context_images" / f"{sha}.png" for sha in image_shas}
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        raise InputError(f"the run lacks {len(missing)} rendered context images (first {missing[0]}); rerun its "
                         "vca score-dual command", path=run / "context_images")
    members = {i: [items[j].item_id for j in groups[str(by_id[i].group_id)]] for i in chosen}
    statements = sorted({texts[m] for group in members.values() for m in group})
    no_image = text_context_image(plan_dual(items, ImageStore(images_dir), contexts, int(manifest.get("seed", 0))),
                                  read_features(run / "features"), str(manifest.get("no_image", "mean-image"))) \
        if "text" in contexts else None
    base = {f"{i}\x1f{c}": float(run_rows[(i, c)]["margin"]) for i, c in sampled}
    with run_lock(out):
        cache = ChunkCache(out / CACHE_DIR)
        cache.load()
        scored_now = 0
        perturbation_rows = []
        for name in names:
            scored_now += _embed(backend, name, files, statements, cache, chunk_size, on_progress)

            def margin(key: str, name: str = name) -> float:
                item_id, context = key.split("\x1f")
                group = members[item_id]
                t = np.stack([cache.records[_key(name, "text", sha256_text(texts[m]))]["embedding"] for m in group])
                if context == "text" and no_image is not None:
                    v = np.broadcast_to(no_image, t.shape)
                else:
                    sha = str(run_rows[(item_id, context)]["image_sha256"])
                    v = np.broadcast_to(np.asarray(cache.records[_key(name, "image", sha)]["embedding"]), t.shape)
                cos = pair_cosines(v, t)
                k = group.index(item_id)
                return float(cos[k] - np.delete(cos, k).max())

            perturbation_rows.append(_row(name, supported[name], sampled, base, margin))
        floor, estimate = floor_estimate({row["perturbation"]: np.asarray(row.pop("_abs_deltas"))
                                          for row in perturbation_rows}, where=run / "margins.parquet")
        n_inputs = len(files) + len(statements)
        result = StabilityResult(
            model=str(manifest.get("model") or backend.spec), spec=backend.spec, run=str(run.resolve()),
            sample=StabilitySample(n_items=len(chosen), seed=seed, requested=sample, n_units=n_inputs,
                                   n_records=len(sampled), contexts=list(contexts), interfaces=[INTERFACE],
                                   kind="dual-encoder"),
            perturbations=[record_from_dict(PerturbationNoise, to_json(row), path=out) for row in perturbation_rows],
            noise_floor=floor, floor_definition=FLOOR_DEFINITION, estimate=estimate,
            forwards=StabilityForwards(baseline_from_run_cache=len(sampled), scored_now=scored_now,
                                       total_perturbed=len(names) * n_inputs,
                                       per_sampled_item=len(names) * n_inputs / max(len(chosen), 1),
                                       unit="embedded input (context image or statement)"))
        write_result(out / STABILITY_FILE, result)
    publish(result, out, run)
    return result


def _embed(backend: Any, name: str, files: Mapping[str, Path], statements: Sequence[str], cache: ChunkCache,
           chunk_size: int, on_progress: Callable[[str, int, int], None] | None) -> int:
    """Embed every image and text of perturbation ``name`` not yet in ``cache``; returns how many now."""
    images = [sha for sha in files if _key(name, "image", sha) not in cache.records]
    todo_texts = [t for t in statements if _key(name, "text", sha256_text(t)) not in cache.records]
    total, done = len(images) + len(todo_texts), 0
    if not total:
        return 0
    with backend.perturbed(name) as perturbed:
        for start in range(0, len(images), chunk_size):
            chunk = images[start:start + chunk_size]
            pictures = []
            for sha in chunk:
                with Image.open(files[sha]) as picture:
                    pictures.append(picture.convert("RGB"))
            vectors = perturbed.encode_images(pictures)
            cache.append([{"key": _key(name, "image", sha), "perturbation": name, "image": sha,
                           "embedding": [float(x) for x in vector]} for sha, vector in zip(chunk, vectors, strict=True)])
            done += len(chunk)
            if on_progress:
                on_progress(name, done, total)
        for start in range(0, len(todo_texts), chunk_size):
            part = todo_texts[start:start + chunk_size]
            vectors = perturbed.encode_texts(part)
            cache.append([{"key": _key(name, "text", sha256_text(t)), "perturbation": name, "text": sha256_text(t),
                           "embedding": [float(x) for x in vector]} for t, vector in zip(part, vectors, strict=True)])
            done += len(part)
            if on_progress:
                on_progress(name, done, total)
    return total


def _row(name: str, description: str, sampled: Sequence[tuple[str, str]], base: Mapping[str, float],
         perturbed: Callable[[str], float]) -> dict[str, Any]:
    """Per-context and overall |Δ| statistics and the G_img sign flips of one perturbation."""
    by_context: dict[str, tuple[list[float], list[float]]] = {}
    for item_id, context in sampled:
        key = f"{item_id}\x1f{context}"
        before, after = by_context.setdefault(context, ([], []))
        before.append(base[key])
        after.append(perturbed(key))
    stats = {c: noise.delta_summary(np.asarray(b), np.asarray(a)) for c, (b, a) in sorted(by_context.items())}
    all_before = np.asarray([x for b, _ in by_context.values() for x in b], dtype=np.float64)
    all_after = np.asarray([x for _, a in by_context.values() for x in a], dtype=np.float64)
    flips = gap_flips([(i, INTERFACE, c, f"{i}\x1f{c}") for i, c in sampled], base, perturbed)
    return {"perturbation": name, "description": description, "contexts": stats,
            "all": noise.delta_summary(all_before, all_after), "g_img": flips,
            "_abs_deltas": np.abs(all_after - all_before).tolist()}
