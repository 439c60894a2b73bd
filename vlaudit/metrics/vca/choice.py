"""The audit over K answer options: VCA §3's definitions with the option letters as the answer set.

For one item with options k = 1..K and ℓ_c(k) = log p(letter k | prompt, context c), every letter read from
one forward pass per context (:mod:`vlaudit.backends.prompt.letters`):

* original prediction   d = argmax_k ℓ_o(k); a tie goes to the earliest letter (at K = 2 with A = yes this is
                        the yes/no rule "an exact zero maps to yes", VCA §9)
* aligned support       r_c = ℓ_c(d) − max_{k ≠ d} ℓ_c(k)  (VCA §3; at K = 2, r_c = d·m_c exactly)
* image gap             G_img = r_o − max_{c ∈ controls} r_c;  Dep = G_img > 0 (VCA §3)
* with a gold letter    correct = (d = gold); D-CC = correct ∧ Dep; C-U = correct ∧ ¬Dep = Acc − D-CC (§12)
* Strict                every control's support is negative: each control moves the answer off d (§12)
* decision survival     among Dep items, control c keeps d when r_c ≥ 0 (§12)
* permutation           Dep_perm = r_mismatch − max_c r_c > 0 with d fixed (§18)

:func:`vlaudit.analysis.vca.choice_run.aligned_run` gives a letter run the margins r_c (so its original decision reads as "+1" and every
quantity of :mod:`vlaudit.metrics.vca.support` — G_img, Dep, Strict, survival, the permutation calibration,
the bootstrap — is computed by the same code as for yes/no) and the labels "d = gold". At K = 2 every number
then equals the yes/no audit's, except where a control's two log-probs tie exactly while d is the second
letter (the yes/no rule reads that tie as "yes", here the decision is kept); the strata are by letter.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.metrics.vca import support


def predicted_option(logp: np.ndarray) -> np.ndarray:
    """d = argmax_k ℓ_o(k) per row (earliest letter on ties; NaN entries, beyond an item's K, never win)."""
    values = np.where(np.isnan(logp), -np.inf, np.asarray(logp, dtype=np.float64))
    return np.argmax(values, axis=1)


def option_support(logp: np.ndarray, d: np.ndarray) -> np.ndarray:
    """r_c = ℓ_c(d) − max_{k ≠ d} ℓ_c(k) per row (VCA §3); NaN where the row has no log-probs."""
    values = np.where(np.isnan(logp), -np.inf, np.asarray(logp, dtype=np.float64))
    rows = np.arange(values.shape[0])
    chosen = values[rows, d]
    others = values.copy()
    others[rows, d] = -np.inf
    r = chosen - others.max(axis=1)
    return np.where(np.isnan(logp).all(axis=1), np.nan, r)


def letter_strata(letters: Sequence[str], predicted: np.ndarray, gold: np.ndarray | None, dep: np.ndarray,
                  correct: np.ndarray | None, strict: np.ndarray) -> dict[str, dict[str, dict[str, float | None]]]:
    """Rates within predicted-letter strata and (with ``gold`` option indices) gold-letter strata, one per
    letter of the run (VCA §12's prediction and gold strata with the letters as the answers)."""
    by = {"prediction": np.asarray(predicted)}
    if gold is not None:
        by["gold"] = np.asarray(gold)
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for name, index in by.items():
        out[name] = {}
        for k, letter in enumerate(letters):
            mask = index == k
            row = support.decomposition(dep[mask], None if correct is None else correct[mask])
            row["strict"] = float(strict[mask].mean()) if mask.any() else float("nan")
            out[name][letter] = {key: row[key] for key in ("n", "acc", "dep", "dcc", "cu", "strict")}
    return out


def balanced_letters(strata: dict[str, dict[str, float | None]]) -> dict[str, float]:
    """Equal-weight average over the letter strata: acc, dcc, cu = balanced acc − balanced dcc, dep (§12)."""
    def avg(key: str) -> float:
        values = [v for s in strata.values() if (v := s[key]) is not None]
        if len(values) < len(strata):
            return float("nan")
        return float(np.mean(values))

    acc, dcc = avg("acc"), avg("dcc")
    return {"acc": acc, "dcc": dcc, "cu": acc - dcc, "dep": avg("dep")}
