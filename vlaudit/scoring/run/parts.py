"""The parts a run spec is built from: which model (:class:`ModelRef`: a spec and its backend's typed
options), how the run is computed (:class:`RunOptions`) and where (:class:`RayOptions`, or None for this
process).

Whether a field may change between reruns into one folder follows from the part that holds it: the fields of
an *operational* part (:data:`OPERATIONAL_PARTS`: RunOptions, RayOptions — and the output folder itself)
change how a run is computed, not what it holds, so a rerun may change them freely; every other field (the
data, the model and its options) is compared, and a rerun that changes one is refused naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Literal

from vlaudit.backends.options import RunOptions, at_least, operational_option_names
from vlaudit.backends.registry import ModelRef
from vlaudit.errors import InputError

__all__ = ["OPERATIONAL_PARTS", "ModelRef", "RayOptions", "RunOptions", "executor_recorded", "operational_names"]


@dataclass(frozen=True)
class RayOptions:
    """Score on Ray actors, one model replica each (``pip install 'vlaudit[ray]'``); a spec's ``executor=None``
    scores in this process. ``address``: None starts a local Ray instance, ``auto`` joins the running cluster,
    ``ray://HOST:PORT`` a remote one."""

    address: str | None = field(default=None, metadata={
        "flag": "--address", "help": "Ray cluster to join: auto or ray://HOST:PORT (default: start a local Ray "
                                     "instance)."})
    workers: int = field(default=1, metadata={"flag": "--workers", "min": 1, "help": "Ray actors (model replicas)."})
    gpus_per_worker: float = field(default=0.0, metadata={"flag": "--gpus-per-worker", "min": 0.0,
                                                          "help": "GPUs reserved per Ray actor."})
    threads_per_worker: int | None = field(default=None, metadata={
        "flag": "--threads-per-worker", "min": 1, "help": "torch CPU threads per Ray actor (default: torch's own)."})

    def __post_init__(self) -> None:
        at_least("--workers", self.workers, 1)
        at_least("--gpus-per-worker", self.gpus_per_worker, 0.0)
        at_least("--threads-per-worker", self.threads_per_worker, 1)

    @classmethod
    def chosen(cls, executor: Literal["local", "ray"] | str, *, address: str | None = None, workers: int = 1,
               gpus_per_worker: float = 0.0, threads_per_worker: int | None = None) -> RayOptions | None:
        """The executor part of ``--executor local|ray`` and its options: None for local, where any Ray option
        given is refused (it would be silently unused)."""
        if executor not in ("local", "ray"):
            raise InputError(f"unknown executor {executor!r}; use local or ray", field="--executor")
        ray = cls(address=address, workers=workers, gpus_per_worker=gpus_per_worker,
                  threads_per_worker=threads_per_worker)
        if executor == "ray":
            return ray
        given = [str(f.metadata["flag"]) for f in fields(cls) if getattr(ray, f.name) != f.default]
        if given:
            what = "configures Ray actors" if len(given) == 1 else f"({', '.join(given)}) configure Ray actors"
            raise InputError(f"{what}; add --executor ray, or leave it out", field=given[0])
        return None

    def recorded(self) -> dict[str, str | int | float | None]:
        return {"executor": "ray", "address": self.address, "workers": self.workers,
                "gpus_per_worker": self.gpus_per_worker, "threads_per_worker": self.threads_per_worker}


def executor_recorded(executor: RayOptions | None) -> dict[str, str | int | float | None]:
    """The executor fields as a manifest records them (``executor: local`` and Ray's defaults for None)."""
    return (executor or RayOptions()).recorded() | ({} if executor is not None else {"executor": "local"})


#: the parts whose fields a rerun may change (every other field of a spec is compared)
OPERATIONAL_PARTS: tuple[type, ...] = (RunOptions, RayOptions)


def operational_names(folders: tuple[str, ...] = ("out",)) -> frozenset[str]:
    """The recorded argument names a rerun may change: the fields of :data:`OPERATIONAL_PARTS`, the executor
    they are chosen by, the backend options marked operational (an endpoint's replicas, concurrency,
    retries, ...) and the spec's ``folders`` (the run's own output)."""
    return frozenset({*folders, "executor", *(f.name for part in OPERATIONAL_PARTS for f in fields(part)),
                      *operational_option_names()})
