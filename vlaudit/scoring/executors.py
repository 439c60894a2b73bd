"""Who runs the forward passes of a scoring run: this process (:class:`LocalExecutor`) or Ray actors
(:mod:`vlaudit.scoring.ray_executor`). Both score the same *shards* — the runner's deterministic cache chunks —
with the same function, :func:`score_tasks`, so a shard's batches, and hence its margins, do not depend on
where it ran. The runner appends each finished shard to the cache as one atomic chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from vlaudit.backends.base import YesNoRequest
from vlaudit.errors import EXIT_INCOMPLETE, VlauditError


@dataclass(frozen=True)
class UnitTask:
    """What a worker needs to score one unique query (picklable; no back-references to records)."""

    key: str
    question: str
    interface: str
    item: Any  # BenchmarkItem
    context: str
    donor: str | None

    @classmethod
    def of(cls, unit: Any) -> UnitTask:
        return cls(unit.key, unit.question, unit.interface, unit.item, unit.context, unit.donor)


@dataclass(frozen=True)
class Shard:
    """One cache chunk to score: its index in the run's deterministic chunk list and its tasks."""

    index: int
    tasks: tuple[UnitTask, ...]

    @property
    def shard_id(self) -> str:
        return f"shard {self.index} (first key {self.tasks[0].key[:12]})"


@dataclass(frozen=True)
class ShardFailure:
    """A shard that did not finish, and why; its records stay unscored until a rerun."""

    shard_id: str
    error: str


class IncompleteRunError(VlauditError):
    """Some shards failed: every finished shard is in the cache; rerunning the same command scores the rest."""

    exit_code = EXIT_INCOMPLETE


ShardDone = Callable[[Shard, list[dict[str, Any]]], None]


def render_requests(store: Any, tasks: Sequence[UnitTask], seed: int) -> list[YesNoRequest]:
    """The backend requests of ``tasks``: each context image rendered from the item (None for text)."""
    from vlaudit.scoring.plan import render

    return [YesNoRequest(t.key, t.question, render(store, t.item, t.context, t.donor, seed), t.interface)
            for t in tasks]


def cache_rows(results: Sequence[Any]) -> list[dict[str, Any]]:
    """The cache records of scored results (what ``margins.parquet`` is rebuilt from)."""
    return [{"key": r.key, "nll_yes": r.nll_yes, "nll_no": r.nll_no, "yes_token_id": r.yes_token_id,
             "no_token_id": r.no_token_id, "prompt_hash": r.prompt_hash, "n_prompt_tokens": r.n_prompt_tokens}
            for r in results]


def score_tasks(backend: Any, store: Any, tasks: Sequence[UnitTask], seed: int) -> list[dict[str, Any]]:
    """Render and score one shard: the single implementation both executors run."""
    return cache_rows(backend.score(render_requests(store, tasks, seed)))


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


def open_backend(spec: str, load_options: dict[str, Any], *, executor: str = "local", features: bool = False,
                 workers: int = 1, address: str | None = None, gpus_per_worker: float = 0.0,
                 threads: int | None = None) -> tuple[Any, Any]:
    """``(backend, ray_executor)`` for ``--executor local|ray``: the loaded model and None, or Ray actors that
    each loaded it (``features``: dual encoders, else yes/no models) and their planning proxy as the backend."""
    if executor == "local":
        from vlaudit.backends.registry import load_backend

        return load_backend(spec, **load_options), None
    from vlaudit.scoring.ray_executor import RayExecutor, RayFeatureExecutor

    kind = RayFeatureExecutor if features else RayExecutor
    ray_executor = kind(spec, load_options, workers=workers, address=address, gpus_per_worker=gpus_per_worker,
                        threads=threads)
    return ray_executor.start(), ray_executor

