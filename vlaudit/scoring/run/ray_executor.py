"""Scale-out of a scoring run on Ray: one model replica per actor, shards spread across actors.

How a run scales (``vlaudit vca score … --executor ray``):

* The driver plans the run exactly as a local run does (same records, same unique queries, same
  deterministic shards = cache chunks). What planning needs from the model — ``describe()``, the run-shape
  decision of :meth:`prepare` and every serialized prompt — comes from the first actor in a few round trips
  (:class:`RemoteBackend`), so the driver never loads the weights.
* Each actor (:class:`ScoringWorker`) loads the model once and scores whole shards with
  :func:`vlaudit.scoring.run.shards.score_tasks`, the function a local run uses; it reads the images from
  ``--images``, which must be visible at the same path on every node (shared storage).
* The driver appends each finished shard to the run's cache as one atomic chunk — the local layout — and
  writes ``margins.parquet`` at the end: byte-identical to a local run with the same dtype, threads and
  shards. A failing shard (an actor that died, an exception) is reported with its id; the others are kept,
  and rerunning the same command scores only the missing shards.

What does not scale out: planning, the cache writes and the report are one machine's (cheap) work.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Self

from PIL import Image

from vlaudit.backends.base import (
    BackendDescription,
    PrefixCacheDecision,
    YesNoBackendBase,
    YesNoRequest,
    YesNoResult,
    decision_of,
    description_of,
    images_per_query,
)
from vlaudit.backends.prompt.letters import item_question
from vlaudit.backends.registry import BackendLoad
from vlaudit.errors import InputError, MissingDependencyError
from vlaudit.scoring.run.shards import Shard, ShardDone, ShardFailure, score_tasks
from vlaudit.sources.images import ImageStore, rgb_image

IN_FLIGHT_PER_WORKER = 2  # one shard running, one queued: an actor never waits for the driver


def import_ray() -> Any:
    """``ray``, or an error that says how to install it."""
    try:
        import ray  # optional extra [ray]: a clear error without it
    except ImportError as exc:
        raise MissingDependencyError("--executor ray needs Ray: pip install 'vlaudit[ray]' "
                                     f"(or pip install 'ray[data]') ({exc})") from None
    return ray


# Environment the actors need to load models the way the driver does (offline flags, caches, import path).
FORWARDED_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HOME", "VLAUDIT_CACHE", "PYTHONPATH")


def ensure_ray(ray: Any, address: str | None) -> None:
    """Join the Ray instance already initialised in this process, or start/connect one at ``address``."""
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {k: v for k, v in os.environ.items() if k in FORWARDED_ENV}})


class ScoringWorker:
    """A Ray actor body: one loaded model; scores shards; answers the planning questions."""

    def __init__(self, load: BackendLoad, threads: int | None) -> None:
        if threads:
            import torch  # in the worker only; the driver may never need torch

            torch.set_num_threads(threads)
        self.backend: Any = load.load()
        self._stores: dict[str, Any] = {}

    def describe(self) -> dict[str, Any]:
        return {"spec": self.backend.spec, "describe": description_of(self.backend),
                "batch_size": self.backend.batch_size, "verbalizer_ids": self.backend.verbalizer_ids,
                "letter_ids": tuple(self.backend.letter_ids),
                "refused_letters": dict(getattr(self.backend, "refused_letters", {})),
                "max_images": images_per_query(self.backend)}

    def prepare(self, items: Sequence[Any], images_dir: str, interfaces: Sequence[str]) -> PrefixCacheDecision | None:
        return decision_of(self.backend.prepare(items, images_dir, list(interfaces)))

    def prompts(self, queries: Sequence[tuple[str, str, int]]) -> list[str]:
        return [self.backend.prompt(*query) for query in queries]

    def score_shard(self, shard: Shard, images_dir: str, seed: int) -> list[dict[str, Any]]:
        store = self._stores.get(images_dir)
        if store is None:
            store = self._stores[images_dir] = ImageStore(images_dir)
        return score_tasks(self.backend, store, shard.tasks, seed)


class RemoteBackend(YesNoBackendBase):
    """The driver's stand-in for the model during planning: answers from the first actor, in bulk; the
    run-shape decision (:meth:`prepare`) runs on every replica so that all of them decide alike. It scores
    nothing itself: the actors score the shards."""

    def __init__(self, executor: RayExecutor, info: dict[str, Any]) -> None:
        self._ray, self._actors = executor.ray, executor.actors
        self.spec = info["spec"]
        self.batch_size = info["batch_size"]
        self.verbalizer_ids = info["verbalizer_ids"]
        self.letter_ids = tuple(info.get("letter_ids", ()))
        self.refused_letters = dict(info.get("refused_letters", {}))
        self.max_images = int(info.get("max_images", 1))  # what the workers' model takes in one query
        self._describe: BackendDescription = info["describe"]
        self._prompts: dict[tuple[str, str, int], str] = {}

    def describe(self) -> BackendDescription:
        return self._describe

    def prepare(self, items: Sequence[Any], images_dir: Any, interfaces: Sequence[str]) -> PrefixCacheDecision | None:
        """Every replica decides (alike: the same items, the same model); the first one's decision is the run's."""
        decisions = self._ray.get([actor.prepare.remote(list(items), str(images_dir), list(interfaces))
                                   for actor in self._actors])
        self._describe = self._ray.get(self._actors[0].describe.remote())["describe"]
        return decision_of(decisions[0]) if decisions else None

    def prefetch_prompts(self, items: Sequence[Any], interfaces: Sequence[str]) -> None:
        # no image, one, and each item's own count (an item with several images: one placeholder per image)
        queries = sorted({(item_question(item, interface), interface, with_image) for item in items
                          for interface in interfaces for with_image in {0, 1, len(item.images)}})
        rendered = self._ray.get(self._actors[0].prompts.remote(queries))
        self._prompts.update(zip(queries, rendered, strict=True))

    def prompt(self, question: str, interface: str, with_image: int) -> str:
        key = (question, interface, with_image)
        if key not in self._prompts:
            self._prompts[key] = self._ray.get(self._actors[0].prompts.remote([key]))[0]
        return self._prompts[key]

    def score(self, requests: Sequence[YesNoRequest]) -> list[YesNoResult]:
        raise NotImplementedError("the Ray actors score the shards; the driver's stand-in only plans")


class _RayActors:
    """``workers`` Ray actors, each holding one model replica loaded by ``load``, and their stop (the Ray instance
    stays up for the caller). ``address``: ``None`` starts a local Ray instance (or joins the one already
    initialised in this process), ``"auto"`` joins the running cluster, ``ray://HOST:PORT`` a remote one.
    ``gpus_per_worker`` and ``cpus_per_worker`` reserve resources per actor; ``threads`` sets torch's CPU
    threads in each actor."""

    def __init__(self, load: BackendLoad, *, workers: int = 1, address: str | None = None,
                 gpus_per_worker: float = 0.0, cpus_per_worker: float = 1.0, threads: int | None = 1) -> None:
        if workers < 1:
            raise InputError("needs at least one worker", field="--workers")
        self.ray = import_ray()
        self.load, self.workers, self.address = load, workers, address
        self.gpus_per_worker, self.cpus_per_worker, self.threads = gpus_per_worker, cpus_per_worker, threads
        self.actors: list[Any] = []

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    def shutdown(self) -> None:
        """Stop the actors (the Ray instance stays up for the caller)."""
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []


class RayExecutor(_RayActors):
    """Run a scoring run's shards on ``workers`` Ray actors, each holding one model replica (the options:
    :class:`_RayActors`)."""

    def describe(self) -> dict[str, Any]:
        return {"executor": "ray", "workers": self.workers, "address": self.address,
                "gpus_per_worker": self.gpus_per_worker, "cpus_per_worker": self.cpus_per_worker,
                "threads_per_worker": self.threads}

    def start(self) -> RemoteBackend:
        """Connect to Ray, start the actors (each loads the model once) and return the planning proxy."""
        ray = self.ray
        ensure_ray(ray, self.address)
        actor_class = ray.remote(num_cpus=self.cpus_per_worker, num_gpus=self.gpus_per_worker,
                                 max_restarts=0)(ScoringWorker)
        self.actors = [actor_class.remote(self.load, self.threads)
                       for _ in range(self.workers)]
        infos = ray.get([actor.describe.remote() for actor in self.actors])  # every replica loaded
        return RemoteBackend(self, infos[0])

    def run(self, shards: Sequence[Shard], *, backend: Any, store: Any, seed: int,
            on_shard_done: ShardDone) -> list[ShardFailure]:
        ray = self.ray
        images_dir = str(Path(store.images_dir).resolve())
        queue = list(shards)
        alive = list(self.actors)
        load = {id(actor): 0 for actor in alive}
        pending: dict[Any, tuple[Any, Shard]] = {}
        failures: list[ShardFailure] = []
        while queue or pending:
            for actor in list(alive):
                while queue and load[id(actor)] < IN_FLIGHT_PER_WORKER:
                    shard = queue.pop(0)
                    pending[actor.score_shard.remote(shard, images_dir, seed)] = (actor, shard)
                    load[id(actor)] += 1
            if not pending:  # every actor died: the rest cannot run now
                failures.extend(ShardFailure(s.shard_id, "no live worker left") for s in queue)
                break
            ready, _ = ray.wait(list(pending), num_returns=1)
            actor, shard = pending.pop(ready[0])
            load[id(actor)] -= 1
            try:
                rows = ray.get(ready[0])
            except ray.exceptions.RayActorError as exc:
                failures.append(ShardFailure(shard.shard_id, f"worker died: {type(exc).__name__}"))
                if actor in alive:
                    alive.remove(actor)
                continue
            except ray.exceptions.RayTaskError as exc:
                failures.append(ShardFailure(shard.shard_id, str(exc.cause if hasattr(exc, "cause") else exc)
                                             .splitlines()[0]))
                continue
            on_shard_done(shard, rows)
        return failures


class FeatureWorker:
    """A Ray actor body for dual encoders: one loaded model; encodes chunks of images (read from shared
    storage) or texts."""

    def __init__(self, load: BackendLoad, threads: int | None) -> None:
        if threads:
            import torch  # in the worker only; the driver may never need torch

            torch.set_num_threads(threads)
        self.backend: Any = load.load()

    def describe(self) -> dict[str, Any]:
        return {"spec": self.backend.spec, "describe": description_of(self.backend),
                "batch_size": self.backend.batch_size}

    def encode_images(self, entries: Sequence[tuple[str, str]]) -> Any:
        images = []
        for image_id, path in entries:
            try:
                with Image.open(path) as image:
                    images.append(rgb_image(image))
            except Exception as exc:  # reported on the driver at the cycles record using the image
                return {"error": (image_id, path, f"{type(exc).__name__}: {exc}")}
        return self.backend.encode_images(images)

    def encode_texts(self, texts: Sequence[str]) -> Any:
        return self.backend.encode_texts(texts)


class FeatureProxy:
    """The driver's stand-in for a dual encoder: what the features manifest records."""

    def __init__(self, info: dict[str, Any]) -> None:
        self.spec = info["spec"]
        self.batch_size = info["batch_size"]
        self._describe: BackendDescription = info["describe"]

    def describe(self) -> BackendDescription:
        return self._describe

    def encode_images(self, images: Sequence[Image.Image]) -> Any:
        raise NotImplementedError("the Ray actors encode the chunks; the driver's stand-in only describes")

    def encode_texts(self, texts: Sequence[str]) -> Any:
        raise NotImplementedError("the Ray actors encode the chunks; the driver's stand-in only describes")


class RayFeatureExecutor(_RayActors):
    """``vlaudit features --executor ray``: the chunks of distinct images and texts encoded on ``workers``
    actors (one model replica each), results gathered in chunk order — the same embeddings as a local run
    with the same batch size and threads. Images are read by the actors from shared storage."""

    def start(self) -> FeatureProxy:
        ensure_ray(self.ray, self.address)
        actor_class = self.ray.remote(num_cpus=self.cpus_per_worker, num_gpus=self.gpus_per_worker)(FeatureWorker)
        self.actors = [actor_class.remote(self.load, self.threads) for _ in range(self.workers)]
        return FeatureProxy(self.ray.get([actor.describe.remote() for actor in self.actors])[0])

    def _map(self, method: str, payloads: Sequence[Any]) -> Iterator[Any]:
        refs = [getattr(self.actors[i % len(self.actors)], method).remote(payload)
                for i, payload in enumerate(payloads)]
        for ref in refs:  # in chunk order, so progress and assembly follow the local order
            yield self.ray.get(ref)

    def encode_images(self, payloads: Sequence[Sequence[tuple[str, str]]], inputs: Any) -> Iterator[Any]:
        for result in self._map("encode_images", payloads):
            if isinstance(result, dict) and "error" in result:
                image_id, path, detail = result["error"]
                record, field_name = inputs.image_records.get(image_id, (None, None))
                raise InputError(f"cannot decode image {image_id!r} ({path}): {detail}", path=inputs.source,
                                 record=record, field=field_name)
            yield result

    def encode_texts(self, payloads: Sequence[Sequence[str]]) -> Iterator[Any]:
        yield from self._map("encode_texts", payloads)
