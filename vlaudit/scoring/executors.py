"""Who runs the forward passes of a scoring run: this process (:class:`LocalExecutor`) or Ray actors
(:mod:`vlaudit.scoring.ray_executor`). Both score the same *shards* — the runner's deterministic cache chunks —
with the same function, :func:`vlaudit.scoring.shards.score_tasks`, so a shard's batches, and hence its margins, do not depend on
where it ran. The runner appends each finished shard to the cache as one atomic chunk.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from vlaudit.backends.base import Backend
from vlaudit.backends.registry import BackendLoad
from vlaudit.scoring.ray_executor import RayExecutor, RayFeatureExecutor
from vlaudit.scoring.run_parts import RayOptions
from vlaudit.scoring.shards import Shard, ShardDone, ShardFailure, cache_rows, render_requests


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
                on_shard_done(shard, cache_rows(backend.score(render_requests(store, shard.tasks, seed))))
            return []
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="vlaudit-render") as pool:
            upcoming = pool.submit(render_requests, store, shards[0].tasks, seed)
            for position, shard in enumerate(shards):
                requests = upcoming.result()
                if position + 1 < len(shards):
                    upcoming = pool.submit(render_requests, store, shards[position + 1].tasks, seed)
                on_shard_done(shard, cache_rows(backend.score(requests)))
        return []


def open_backend(load: BackendLoad, executor: RayOptions | None = None, *, features: bool = False
                 ) -> tuple[Backend, RayExecutor | RayFeatureExecutor | None]:
    """``(backend, ray_executor)``: the model ``load`` names loaded here and None (``executor`` None), or Ray
    actors that each loaded it (``features``: dual encoders, else yes/no models) and their planning proxy as
    the backend."""
    if executor is None:
        return load.load(), None
    kind = RayFeatureExecutor if features else RayExecutor
    ray_executor = kind(load, workers=executor.workers, address=executor.address,
                        gpus_per_worker=executor.gpus_per_worker, threads=executor.threads_per_worker)
    proxy: Backend = ray_executor.start()
    return proxy, ray_executor
