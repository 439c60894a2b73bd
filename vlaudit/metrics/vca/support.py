"""The support axis: prediction-aligned image gap, Dep, and the accuracy–credit decomposition (VCA §3, §9, §12).

Definitions for one item with margins m_c = NLL(no | c) − NLL(yes | c):

* original prediction   d = +1 if m_o ≥ 0 else −1 (an exact zero maps to "yes", §9)
* aligned support       r_c = d·m_c
* image gap             G_img = r_o − max_{c ∈ controls} r_c, controls = {text, blank} by default (§3)
* dependence            Dep = G_img > tol (strict; fixed before labels are consulted)
* with a gold label     correct = (d = +1) ⇔ (label = yes); D-CC = correct ∧ Dep; C-U = correct ∧ ¬Dep;
                        support-advantaged error = wrong ∧ Dep; credited precision = P(correct | Dep) (§12)
* Strict                the original decides (|m_o| > tol) and every control decides the other way,
                        r_c < −tol (§12)
* decision survival     control c keeps d unless it decides the other way (r_c ≥ −tol)

**Ties** (one convention for every interface, as CycleAcc's ½ credit has it, cycle paper §2.1): a margin with
|m| ≤ tol (:data:`~vlaudit.settings.TIE_TOL`) is no decision. A tied control neither keeps nor reverses d, so it
does not make an item Strict and does not end its decision; a tied gap is no credit. The yes/no reading of an
exact zero as "yes" and the letter reading of it as "the earliest letter" would otherwise disagree on Strict
(``ref:scene-vqa-grounded`` has m_text = 0 on every item: 18 of 144 factorial items were Strict as yes/no and
none as K = 2 letters). Only the original decision d keeps its §9 tie-break (d must point somewhere for r_c to
be defined); :func:`tie_counts` counts the items whose Acc, Dep or Strict a tie decides, which the report
prints beside Strict and warns about.

Run-level rates are means of these per-item events, so C-U = Acc − D-CC holds exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from vlaudit.settings import PRIMARY_CONTROLS, TIE_TOL

DEFAULT_CONTROLS: tuple[str, ...] = PRIMARY_CONTROLS
NEAR_ZERO = (0.01, 0.1)
GAP_QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def prediction_direction(m_original: np.ndarray) -> np.ndarray:
    """d = +1 where m_o ≥ 0 (exact zero → yes), −1 elsewhere; float64 (VCA §3)."""
    m_original = np.asarray(m_original, dtype=np.float64)
    return np.where(m_original >= 0, 1.0, -1.0)


def aligned_support(direction: np.ndarray, margin: np.ndarray) -> np.ndarray:
    """r_c = d·m_c: support for the model's original decision under context c (VCA §3)."""
    return np.asarray(direction, dtype=np.float64) * np.asarray(margin, dtype=np.float64)


def image_gap(
    margins: Mapping[str, np.ndarray],
    controls: Sequence[str] = DEFAULT_CONTROLS,
    *,
    original: np.ndarray | None = None,
) -> np.ndarray:
    """G_img = r_o − max_{c ∈ controls} r_c with d fixed by ``margins['original']`` (VCA §3).

    ``original`` replaces m_o in r_o while d stays fixed — the permutation calibration of §18 passes the
    mismatch margin here.
    """
    if not controls:
        raise ValueError("at least one control context is needed")
    d = prediction_direction(margins["original"])
    r_o = aligned_support(d, margins["original"] if original is None else original)
    r_max = np.max(np.stack([aligned_support(d, margins[c]) for c in controls]), axis=0)
    return r_o - r_max


def dependence(gap: np.ndarray, tol: float = TIE_TOL) -> np.ndarray:
    """Dep = G_img > tol (boolean; a tied gap, |G_img| ≤ tol, is not credited)."""
    return np.asarray(gap, dtype=np.float64) > tol


def keeps_decision(direction: np.ndarray, margin: np.ndarray, tol: float = TIE_TOL) -> np.ndarray:
    """A context keeps the decision d unless it decides the other way: d·m_c ≥ −tol (a tie keeps it)."""
    return aligned_support(direction, margin) >= -tol


def correctness(direction: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """correct = (d = +1) ⇔ (gold = yes); ``labels`` is True for a gold "yes"."""
    return (np.asarray(direction) > 0) == np.asarray(labels, dtype=bool)


def strict_isolation(margins: Mapping[str, np.ndarray], controls: Sequence[str] = DEFAULT_CONTROLS,
                     tol: float = TIE_TOL) -> np.ndarray:
    """Strict: the original decides (|m_o| > tol) and every control decides the opposite (d·m_c < −tol)
    (VCA §12; implies Dep). A tie is no decision (module docstring)."""
    d = prediction_direction(margins["original"])
    decided = np.abs(np.asarray(margins["original"], dtype=np.float64)) > tol
    return decided & np.all(np.stack([~keeps_decision(d, margins[c], tol) for c in controls]), axis=0)


def tie_counts(margins: Mapping[str, np.ndarray], gap: np.ndarray, controls: Sequence[str] = DEFAULT_CONTROLS,
               tol: float = TIE_TOL) -> dict[str, int]:
    """How many items' Acc, Dep and Strict a tie decides (the value changes when the ties are read the other
    way): ``acc`` items with a tied original (d is the §9 tie-break), ``dep`` items with a tied gap, ``strict``
    items that would be Strict were every tie read as a decision against d."""
    d = prediction_direction(margins["original"])
    would = np.all(np.stack([aligned_support(d, margins[c]) <= tol for c in controls]), axis=0)
    strict = strict_isolation(margins, controls, tol)
    return {"acc": int((np.abs(np.asarray(margins["original"], dtype=np.float64)) <= tol).sum()),
            "dep": int((np.abs(np.asarray(gap, dtype=np.float64)) <= tol).sum()),
            "strict": int((would & ~strict).sum())}


def decomposition(dep: np.ndarray, correct: np.ndarray | None) -> dict[str, float | None]:
    """Run-level rates: dep always; with labels acc, dcc, cu (= acc − dcc), wrong_dep, wrong_nodep and
    credited_precision = D-CC / Dep (VCA §12, the four-cell taxonomy). Empty input gives NaNs."""
    dep = np.asarray(dep, dtype=bool)
    nan = float("nan")
    out: dict[str, float | None] = {"n": int(dep.size), "dep": float(dep.mean()) if dep.size else nan}
    if correct is None:
        return out | {"acc": None, "dcc": None, "cu": None, "wrong_dep": None, "wrong_nodep": None,
                      "credited_precision": None}
    correct = np.asarray(correct, dtype=bool)
    if dep.size == 0:
        return out | dict.fromkeys(("acc", "dcc", "cu", "wrong_dep", "wrong_nodep", "credited_precision"), nan)
    dcc = float((correct & dep).mean())
    return out | {
        "acc": float(correct.mean()),
        "dcc": dcc,
        "cu": float((correct & ~dep).mean()),
        "wrong_dep": float((~correct & dep).mean()),
        "wrong_nodep": float((~correct & ~dep).mean()),
        "credited_precision": float((correct & dep).sum() / dep.sum()) if dep.any() else nan,
    }


def stratified(
    direction: np.ndarray,
    dep: np.ndarray,
    correct: np.ndarray | None,
    strict: np.ndarray,
    labels: np.ndarray | None,
) -> dict[str, dict[str, dict[str, float | None]]]:
    """Rates within original-prediction strata and (with labels) gold-answer strata (VCA §12).

    Each stratum holds n, acc, dep, dcc, cu and strict (strict isolation rate within the stratum).
    """
    direction = np.asarray(direction)
    by = {"prediction": {"yes": direction > 0, "no": direction < 0}}
    if labels is not None:
        labels = np.asarray(labels, dtype=bool)
        by["gold"] = {"yes": labels, "no": ~labels}
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for name, strata in by.items():
        out[name] = {}
        for stratum, mask in strata.items():
            row = decomposition(dep[mask], None if correct is None else correct[mask])
            row["strict"] = float(strict[mask].mean()) if mask.any() else float("nan")
            out[name][stratum] = {k: row[k] for k in ("n", "acc", "dep", "dcc", "cu", "strict")}
    return out


def balanced(strata: Mapping[str, Mapping[str, float | None]]) -> dict[str, float]:
    """Equal-weight average of the yes and no strata: acc, dcc and cu = balanced acc − balanced dcc (§12)."""
    def avg(key: str) -> float:
        values = [v for s in ("yes", "no") if (v := strata[s][key]) is not None]
        if len(values) < 2:  # a stratum without labels has no rate
            return float("nan")
        return float(np.mean(values))

    acc, dcc = avg("acc"), avg("dcc")
    return {"acc": acc, "dcc": dcc, "cu": acc - dcc, "dep": avg("dep")}


def decision_survival(
    margins: Mapping[str, np.ndarray], dep: np.ndarray, controls: Sequence[str] = DEFAULT_CONTROLS
) -> dict[str, float]:
    """Among credited items (Dep), the share whose decision each control preserves (VCA §12; a tied control
    preserves it, :func:`keeps_decision`).

    Keys: ``n_dep``, ``<control>_same`` per control, ``both_same`` (no control changes the answer; "both" for the default two controls) and
    ``any_changes`` = 1 − both_same.
    """
    dep = np.asarray(dep, dtype=bool)
    d = prediction_direction(margins["original"])[dep]
    same = {c: keeps_decision(d, np.asarray(margins[c])[dep]) for c in controls}
    n = int(dep.sum())
    out: dict[str, float] = {"n_dep": n}
    nan = float("nan")
    for c, s in same.items():
        out[f"{c}_same"] = float(s.mean()) if n else nan
    both_same = np.all(np.stack(list(same.values())), axis=0) if n else np.zeros(0, dtype=bool)
    out["both_same"] = float(both_same.mean()) if n else nan
    out["any_changes"] = 1.0 - out["both_same"] if n else nan
    return out


def gap_summary(gap: np.ndarray) -> dict[str, float]:
    """Raw-gap distribution before thresholding: mean, quantiles, min/max, near-zero mass (VCA §12)."""
    gap = np.asarray(gap, dtype=np.float64)
    out = {"mean": float(gap.mean()), "min": float(gap.min()), "max": float(gap.max())}
    for q, v in zip(GAP_QUANTILES, np.quantile(gap, GAP_QUANTILES), strict=True):
        out[f"q{int(round(q * 100)):02d}"] = float(v)
    for eps in NEAR_ZERO:
        out[f"near_zero_{eps:g}"] = float((np.abs(gap) <= eps).mean())
    return out
