"""The records a scoring run is cut into — shards of unique queries — and the one function that scores a shard.

A leaf of :mod:`vlaudit.scoring`: the local and the Ray executor (:mod:`vlaudit.scoring.run.executors`,
:mod:`vlaudit.scoring.run.ray_executor`) both import it, and neither imports the other's module through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from vlaudit.backends.base import YesNoRequest
from vlaudit.backends.prompt.letters import LETTER_INTERFACE
from vlaudit.errors import EXIT_INCOMPLETE, VlauditError
from vlaudit.scoring.run.plan import render_images


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
    """The backend requests of ``tasks``: each context image rendered from the item (None for text; an item
    with several images gives the first as ``image`` and the rest, in order, as ``more_images``)."""
    requests = []
    for t in tasks:
        images = render_images(store, t.item, t.context, t.donor, seed)
        requests.append(YesNoRequest(t.key, t.question, images[0] if images else None, t.interface,
                                     n_options=len(t.item.options or ()) if t.interface == LETTER_INTERFACE else 0,
                                     more_images=tuple(images[1:])))
    return requests


def cache_rows(results: Sequence[Any]) -> list[dict[str, Any]]:
    """The cache records of scored results (what ``margins.parquet`` is rebuilt from)."""
    return [_cache_row(r) for r in results]


def _cache_row(r: Any) -> dict[str, Any]:
    # censored words only where there are some: an exact result's record is what it always was
    censored = {"censored": list(r.censored)} if getattr(r, "censored", ()) else {}
    if r.logp_options:  # a letter result: the options' log-probs in place of the yes/no NLLs
        return {"key": r.key, "logp_options": list(r.logp_options), "option_token_ids": list(r.option_token_ids),
                "prompt_hash": r.prompt_hash, "n_prompt_tokens": r.n_prompt_tokens, **censored}
    return {"key": r.key, "nll_yes": r.nll_yes, "nll_no": r.nll_no, "yes_token_id": r.yes_token_id,
            "no_token_id": r.no_token_id, "prompt_hash": r.prompt_hash, "n_prompt_tokens": r.n_prompt_tokens,
            **censored}


def score_tasks(backend: Any, store: Any, tasks: Sequence[UnitTask], seed: int) -> list[dict[str, Any]]:
    """Render and score one shard: the single implementation both executors run."""
    return cache_rows(backend.score(render_requests(store, tasks, seed)))
