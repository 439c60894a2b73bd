"""The compared decisions inside each model's noise floor, and the noise band of a paired difference (VCA §3
decisions; the floor of ``vca stability``, :mod:`vlaudit.metrics.vca.noise`).

Each model's floor τ comes from the ``stability.json`` beside its margins, read with its runs
(:func:`vlaudit.sources.noise_floor.read_floors`). On the compared items a decision is inside the noise
when |m_o| ≤ τ, a credit when |G_img| ≤ 2τ. The noise band of A − B for the binary per-item metrics (Acc,
Dep, D-CC) is the range the difference takes with every flagged decision and credit of both models set both
ways: each model's value moves independently within its own band, so the band is
[low_A − high_B, high_A − low_B]. At τ = 0 nothing is flagged and the band is the point difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vlaudit.analysis.vca.noise_report import NOT_MEASURED
from vlaudit.analysis.vca.report import RunEvents
from vlaudit.metrics.vca.noise import noise_band, noise_flags
from vlaudit.results.compare import NoiseFloor, NoNoiseFloor
from vlaudit.results.versioned import Interval
from vlaudit.sources import noise_floor

BAND_METRICS = ("acc", "dep", "dcc")


@dataclass(frozen=True)
class ModelNoise:
    """One model's floor on the compared items: τ (None when not measured) and the per-item flags."""

    tau: float | None
    source: str | None
    decision: np.ndarray | None
    credit: np.ndarray | None

    @property
    def measured(self) -> bool:
        return self.tau is not None


def model_noise(ev: RunEvents, floor: noise_floor.NoiseFloor | None) -> ModelNoise:
    """The flags of the run behind ``ev`` under its floor (τ and its file, read with the run,
    :func:`vlaudit.sources.noise_floor.read_floors`; None when it has none)."""
    if floor is None:
        return ModelNoise(None, None, None, None)
    tau, source = floor
    decision, credit = noise_flags(ev.run.margins["original"], ev.gap, tau)
    return ModelNoise(tau, source, decision, credit)


def noise_entry(noise: ModelNoise, ev: RunEvents) -> NoiseFloor | NoNoiseFloor:
    """The ``noise`` object of one model and (dataset, interface) of ``compare.json``."""
    if noise.tau is None or noise.source is None or noise.decision is None or noise.credit is None:
        return NoNoiseFloor(note=NOT_MEASURED)
    ids = ev.run.item_ids.astype(str)
    return NoiseFloor(tau=noise.tau, source=noise.source, n_items=int(ids.size),
                      n_decision=int(noise.decision.sum()), n_credit=int(noise.credit.sum()),
                      decision_items=sorted(ids[noise.decision].tolist()),
                      credit_items=sorted(ids[noise.credit].tolist()))


def difference_bands(events: Sequence[RunEvents], noises: Sequence[ModelNoise], a: int, b: int,
                     mask: np.ndarray) -> dict[str, Interval | None] | None:
    """[min, max] of A − B for Acc, Dep and D-CC over the records in ``mask`` (see the module docstring);
    None when either model has no floor."""
    bands = []
    for k in (a, b):
        noise, ev = noises[k], events[k]
        if noise.decision is None or noise.credit is None:
            return None
        correct = None if ev.correct is None else ev.correct[mask]
        bands.append(noise_band(correct, ev.dep[mask], noise.decision[mask], noise.credit[mask]))
    out: dict[str, Interval | None] = {}
    for metric in BAND_METRICS:
        band_a, band_b = bands[0][metric], bands[1][metric]
        out[metric] = None if band_a is None or band_b is None else (band_a[0] - band_b[1], band_a[1] - band_b[0])
    return out
