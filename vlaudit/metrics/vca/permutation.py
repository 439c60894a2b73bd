"""Matched image-permutation calibration (VCA §18).

The original decision d = sign(m_o) and the correctness label stay fixed; only the original-image margin is
replaced by the cached same-split ``mismatch`` margin under the same controls:

* Dep_perm   = d·m_mismatch − max_{c ∈ controls} r_c > 0
* D-CC_perm  = correct ∧ Dep_perm;  C-U_perm = correct ∧ ¬Dep_perm
* Δ_DCC^perm = D-CC − D-CC_perm, and because accuracy is fixed, C-U_perm − C-U = Δ_DCC^perm exactly
* correct original-only credit = correct ∧ Dep ∧ ¬Dep_perm; permutation-only = correct ∧ ¬Dep ∧ Dep_perm
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from vlaudit.metrics.vca.support import DEFAULT_CONTROLS, dependence, image_gap


def permutation_dependence(
    margins: Mapping[str, np.ndarray], controls: Sequence[str] = DEFAULT_CONTROLS, *, context: str = "mismatch"
) -> np.ndarray:
    """Dep_perm: the image gap with m_o replaced by the ``context`` margin, d fixed (VCA §18)."""
    return dependence(image_gap(margins, controls, original=margins[context]))


def permutation_summary(dep: np.ndarray, dep_perm: np.ndarray,
                        correct: np.ndarray | None) -> dict[str, float | None]:
    """dep_perm always; with labels dcc, dcc_perm, delta_dcc, cu_perm, orig_only and perm_only shares."""
    dep = np.asarray(dep, dtype=bool)
    dep_perm = np.asarray(dep_perm, dtype=bool)
    out: dict[str, float | None] = {"dep_perm": float(dep_perm.mean())}
    if correct is None:
        return out | dict.fromkeys(("dcc_perm", "delta_dcc", "cu_perm", "orig_only", "perm_only"))
    correct = np.asarray(correct, dtype=bool)
    dcc = float((correct & dep).mean())
    dcc_perm = float((correct & dep_perm).mean())
    return out | {
        "dcc_perm": dcc_perm,
        "delta_dcc": dcc - dcc_perm,
        "cu_perm": float((correct & ~dep_perm).mean()),
        "orig_only": float((correct & dep & ~dep_perm).mean()),
        "perm_only": float((correct & ~dep & dep_perm).mean()),
    }
