"""The noise-floor capability of the planted yes/no reference models: ``batch-1`` always, τ = 0 its known answer.

A planted model (``ref:scene-vqa-*``, ``ref:scene-mcq-*``) computes each request's margin from that request
alone, in one fixed precision, so re-scoring one request per forward changes nothing: ``vca stability`` under
``batch-1`` must measure τ = 0 exactly, whatever batch size the run used. That is a known answer the stability
tests check, and it lets the compare tutorial's ``vca stability`` step run on the planted models it scores.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from vlaudit.backends.base import BATCH_ONE, attribute_set, unsupported_perturbation

SCORES_ALONE = {BATCH_ONE: "one request per forward (a planted model scores every request alone: tau = 0 is the "
                           "known answer)"}


class ScoresAlone:
    """``perturbations()`` / ``perturbed()`` of a planted yes/no backend (see the module docstring)."""

    spec: str
    batch_size: int

    def perturbations(self) -> dict[str, str]:
        """``batch-1`` at every batch size (the run's own included)."""
        return dict(SCORES_ALONE)

    @contextlib.contextmanager
    def perturbed(self, name: str) -> Iterator[Any]:
        """This backend scoring one request per forward."""
        if name not in SCORES_ALONE:
            raise unsupported_perturbation(self.spec, name, SCORES_ALONE)
        with attribute_set(self, "batch_size", 1):
            yield self
