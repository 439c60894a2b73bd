"""Math-preserving perturbations of a torch dual encoder: what its noise floor is measured under.

A dual encoder's margin is a difference of cosines of L2-normalised embeddings
(:mod:`vlaudit.scoring.dual_margins`); each perturbation changes how the embeddings are computed, never what
they are mathematically (``vca stability`` on a ``vca score-dual`` run):

* ``batch-1`` — one image or text per forward instead of the run's batch (other rows' padding and kernels);
* ``dtype`` — the other floating dtype of the device (:func:`~vlaudit.backends.torch_perturbations.other_dtype`:
  bfloat16 for a float32 model, float16 for a bfloat16 one on a GPU; a copy of the weights, the run's
  untouched).

The mixin reads ``model``, ``dtype`` and ``batch_size`` of the backend it is mixed into
(:class:`~vlaudit.backends.torch_utils.BatchedDualEncoder`: ``hf-clip:``, ``open_clip:``).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from typing import Any

from vlaudit.backends.base import BATCH_ONE, attribute_set, batch_one, unsupported_perturbation
from vlaudit.backends.torch_perturbations import DTYPE, other_dtype


def _name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


class DualPerturbations:
    """``perturbations()`` / ``perturbed(name)`` of :class:`~vlaudit.backends.base.PerturbableBackend` for a
    torch dual encoder (see the module docstring)."""

    model: Any
    dtype: Any
    device: Any
    batch_size: int

    def perturbations(self) -> dict[str, str]:
        """Name → what changes, for what this encoder supports."""
        out = batch_one(self.batch_size)
        out[DTYPE] = f"{_name(other_dtype(self.dtype, str(self.device)))} instead of {_name(self.dtype)}"
        return out

    @contextlib.contextmanager
    def perturbed(self, name: str) -> Iterator[Any]:
        """This encoder, or a copy of it, changed by perturbation ``name`` (the original is restored)."""
        supported = self.perturbations()
        if name not in supported:
            raise unsupported_perturbation(type(self).__name__, name, supported)
        if name == BATCH_ONE:
            with attribute_set(self, "batch_size", 1):
                yield self
            return
        clone = copy.copy(self)
        clone.dtype = other_dtype(self.dtype, str(self.device))
        clone.model = copy.deepcopy(self.model).to(clone.dtype)
        try:
            yield clone
        finally:
            del clone.model
