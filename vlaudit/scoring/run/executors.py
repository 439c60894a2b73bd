"""Who runs the forward passes of a scoring run: this process (:class:`LocalExecutor`) or Ray actors
(:mod:`vlaudit.scoring.run.ray_executor`). Both score the same *shards* — the runner's deterministic cache chunks —
with the same function, :func:`vlaudit.scoring.run.shards.score_tasks`, so a shard's batches, and hence its margins, do not depend on
where it ran. The runner appends each finished shard to the cache as one atomic chunk.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from vlaudit.backends.base import FeatureBackend, YesNoBackend, as_features, as_yes_no, finished_results
from vlaudit.backends.registry import BackendLoad
from vlaudit.scoring.run.parts import RayOptions
from vlaudit.scoring.run.ray_executor import RayExecutor, RayFeatureExecutor
from vlaudit.scoring.run.shards import Shard, ShardDone, ShardFailure, cache_rows, render_requests


class LocalExecutor:
    """Scores shards in this process, in order; the next shard's context images are rendered on a helper
    thread while the current shard's forward passes run (torch releases the GIL), so image decoding and
    rendering leave the forward path."""

    def __init__(self, prefetch: bool = True) -> None:
        self.prefetch = prefetch

    def describe(self) -> dict[str, Any]:
        return {"executor": "local", "prefetch": self.prefetch}

    def run(self, shards: Sequence[Shard], *, backend: Any, store: Any, seed: int,
            on_shard_done: ShardDone) -> list[ShardFailure]:
        if not shards:
            return []
        if not self.prefetch:
            for shard in shards:
                _score_shard(backend, shard, render_requests(store, shard.tasks, seed), on_shard_done)
            return []
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="vlaudit-render") as pool:
            upcoming = pool.submit(render_requests, store, shards[0].tasks, seed)
            for position, shard in enumerate(shards):
                requests = upcoming.result()
                if position + 1 < len(shards):
                    upcoming = pool.submit(render_requests, store, shards[position + 1].tasks, seed)
                _score_shard(backend, shard, requests, on_shard_done)
        return []


def _score_shard(backend: Any, shard: Shard, requests: Sequence[Any], on_shard_done: ShardDone) -> None:
    """Score one shard and record it; a backend whose requests stand alone (``openai:``) may fail with some of
    them finished (:func:`~vlaudit.backends.base.finished_results`): those are recorded, as a smaller chunk,
    before the error goes on, so a rerun makes progress however often a rate limit stops it."""
    try:
        results = backend.score(requests)
    except BaseException as exc:
        finished = finished_results(exc)
        if finished:
            keys = {r.key for r in finished}
            on_shard_done(Shard(shard.index, tuple(t for t in shard.tasks if t.key in keys)), cache_rows(finished))
        raise
    on_shard_done(shard, cache_rows(results))


def open_yes_no(load: BackendLoad, executor: RayOptions | None = None) -> tuple[YesNoBackend, RayExecutor | None]:
    """``(backend, ray_executor)``: the yes/no model ``load`` names loaded here and None (``executor`` None),
    or Ray actors that each loaded it and their planning proxy as the backend."""
    if executor is None:
        return as_yes_no(load.load()), None
    ray_executor = RayExecutor(load, workers=executor.workers, address=executor.address,
                               gpus_per_worker=executor.gpus_per_worker, threads=executor.threads_per_worker)
    return ray_executor.start(), ray_executor


def open_features(load: BackendLoad, executor: RayOptions | None = None
                  ) -> tuple[FeatureBackend, RayFeatureExecutor | None]:
    """``(backend, ray_executor)`` for a dual encoder, as :func:`open_yes_no` for a yes/no model."""
    if executor is None:
        return as_features(load.load()), None
    ray_executor = RayFeatureExecutor(load, workers=executor.workers, address=executor.address,
                                      gpus_per_worker=executor.gpus_per_worker,
                                      threads=executor.threads_per_worker)
    return ray_executor.start(), ray_executor


@contextlib.contextmanager
def yes_no_executor(load: BackendLoad, executor: RayOptions | None = None, *, backend: YesNoBackend | None = None
                    ) -> Iterator[tuple[YesNoBackend, RayExecutor | None]]:
    """``with yes_no_executor(load, ray) as (backend, ray_executor):`` the model of :func:`open_yes_no` (or
    ``backend``, already loaded), its Ray actors shut down on leaving, however the block ends."""
    loaded, ray_executor = (backend, None) if backend is not None else open_yes_no(load, executor)
    with ray_executor if ray_executor is not None else contextlib.nullcontext():
        yield loaded, ray_executor


@contextlib.contextmanager
def features_executor(load: BackendLoad, executor: RayOptions | None = None, *,
                      backend: FeatureBackend | None = None
                      ) -> Iterator[tuple[FeatureBackend, RayFeatureExecutor | None]]:
    """As :func:`yes_no_executor`, for a dual encoder (:func:`open_features`)."""
    loaded, ray_executor = (backend, None) if backend is not None else open_features(load, executor)
    with ray_executor if ray_executor is not None else contextlib.nullcontext():
        yield loaded, ray_executor
