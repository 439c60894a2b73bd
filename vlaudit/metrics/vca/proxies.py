"""Per-item comparison signals computed from the same cached margins as VCA (VCA §15, §16, §18).

All are cached-context *adaptations* of named methods, not reproductions (§16, §18). With p_c = σ(m_c) the
probability of "yes" under context c, d the original decision, r_c = d·m_c and g_c the gold-answer
probability (σ(m_c) for a gold "yes", 1 − σ(m_c) for a gold "no"):

* confidence            σ(|m_o|): the two-way probability of the original decision (§15; ranks as |m_o|)
* VisNec-style          L_t − L_o with L_c = −log g_c: gold-answer loss reduction text-only → original
                        (Dong et al. 2026 without visual-token masking or clustering; uses labels)
* Shortcut Score        S = T − V (Korkut et al. 2026): T = g_t · 1[g_t > ½] (correct-and-confident
                        text-only evidence), V = (g_o − g_t) / (1 − ½) (gold-probability gain, normalized by
                        one minus chance); high S = answerable without the image (§16; uses labels)
* Perceptual Score      correct_o − correct_mismatch per item; its mean is acc(original) − acc(permutation)
                        exactly (Gat et al. 2021; uses labels)
* permutation drop      σ(r_o) − σ(r_x): prediction-aligned probability decrease under the same-split
                        mismatch image x
* FPVG-style            1[decision kept on the relevant-only view] · 1[decision changed on the irrelevant-only
                        view]; IrrE (``irre``) stands in for relevant-only, RelE (``rele``) for irrelevant-only
* sufficiency           σ(r_o) − σ(r_irre) (DeYoung et al. 2020; lower = more sufficient; the table uses −suff)
* comprehensiveness     σ(r_o) − σ(r_rele)
* comp − suff           comprehensiveness − sufficiency = σ(r_irre) − σ(r_rele)
* minimum JS            min over controls of the Jensen–Shannon divergence (nats) between the two-way answer
                        distributions (p_o, 1 − p_o) and (p_c, 1 − p_c): unsigned, label-free (§18)
* Visual Dependence     (acc_o − mean(acc_t, acc_b)) / acc_o: the relative accuracy drop from the original
                        image to the mean text-only/blank accuracy, per run (Fu et al. 2026 adapted, §18). The
                        normalization divides by the original accuracy; with the paper's GSR-COCO numbers it
                        puts the blind accuracy of every model near the 50% its balanced pairs force.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from scipy.special import expit, log_expit

from vlaudit.metrics.vca.support import DEFAULT_CONTROLS, aligned_support, correctness, prediction_direction


def confidence(m_original: np.ndarray) -> np.ndarray:
    """σ(|m_o|), the probability the model gives its own original answer (VCA §15)."""
    return expit(np.abs(np.asarray(m_original, dtype=np.float64)))


def gold_log_prob(margin: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """log g_c: log σ(m_c) for a gold "yes", log σ(−m_c) for a gold "no" (stable for large |m|)."""
    m = np.asarray(margin, dtype=np.float64)
    return log_expit(np.where(np.asarray(labels, dtype=bool), m, -m))


def visnec_style(margins: Mapping[str, np.ndarray], labels: np.ndarray) -> np.ndarray:
    """L_t − L_o = log g_o − log g_t: gold-answer loss reduction from text-only to the original image."""
    return gold_log_prob(margins["original"], labels) - gold_log_prob(margins["text"], labels)


def shortcut_score(margins: Mapping[str, np.ndarray], labels: np.ndarray) -> np.ndarray:
    """S = T − V with T = g_t·1[g_t > ½] and V = (g_o − g_t) / ½ (see the module docstring)."""
    g_t = np.exp(gold_log_prob(margins["text"], labels))
    g_o = np.exp(gold_log_prob(margins["original"], labels))
    return g_t * (g_t > 0.5) - (g_o - g_t) / 0.5


def perceptual_score(margins: Mapping[str, np.ndarray], labels: np.ndarray, context: str = "mismatch") -> np.ndarray:
    """correct_o − correct_c per item (−1, 0 or 1); its mean is acc(original) − acc(c)."""
    correct_o = correctness(prediction_direction(margins["original"]), labels)
    correct_c = correctness(prediction_direction(margins[context]), labels)
    return correct_o.astype(np.float64) - correct_c.astype(np.float64)


def probability_drop(margins: Mapping[str, np.ndarray], context: str) -> np.ndarray:
    """σ(r_o) − σ(r_c) with d fixed by m_o: the decrease of the original decision's probability under c."""
    d = prediction_direction(margins["original"])
    return expit(aligned_support(d, margins["original"])) - expit(aligned_support(d, margins[context]))


def permutation_drop(margins: Mapping[str, np.ndarray]) -> np.ndarray:
    """σ(r_o) − σ(r_mismatch) (VCA §18)."""
    return probability_drop(margins, "mismatch")


def sufficiency(margins: Mapping[str, np.ndarray]) -> np.ndarray:
    """σ(r_o) − σ(r_irre): the relevant-only view (``irre``) as the rationale (lower = more sufficient)."""
    return probability_drop(margins, "irre")


def comprehensiveness(margins: Mapping[str, np.ndarray]) -> np.ndarray:
    """σ(r_o) − σ(r_rele): the rationale (relation region) removed."""
    return probability_drop(margins, "rele")


def fpvg_style(margins: Mapping[str, np.ndarray]) -> np.ndarray:
    """1 where the decision survives ``irre`` (relevant only) and changes under ``rele`` (irrelevant only)."""
    d = prediction_direction(margins["original"])
    kept = prediction_direction(margins["irre"]) == d
    changed = prediction_direction(margins["rele"]) != d
    return (kept & changed).astype(np.float64)


def _binary_js(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Jensen–Shannon divergence (nats) of Bernoulli(p) and Bernoulli(q)."""
    def kl(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(a > 0, a * (np.log(a) - np.log(b)), 0.0)
            return terms + np.where(a < 1, (1 - a) * (np.log1p(-a) - np.log1p(-b)), 0.0)

    mid = (p + q) / 2.0
    return 0.5 * kl(p, mid) + 0.5 * kl(q, mid)


def min_js(margins: Mapping[str, np.ndarray], controls: Sequence[str] = DEFAULT_CONTROLS) -> np.ndarray:
    """min over controls of JS((p_o, 1 − p_o), (p_c, 1 − p_c)) (VCA §18, unsigned)."""
    p_o = expit(np.asarray(margins["original"], dtype=np.float64))
    return np.min(np.stack([_binary_js(p_o, expit(np.asarray(margins[c], dtype=np.float64)))
                            for c in controls]), axis=0)


def visual_dependence(margins: Mapping[str, np.ndarray], labels: np.ndarray,
                      nulls: Sequence[str] = DEFAULT_CONTROLS) -> float:
    """(acc_o − mean_c acc_c) / acc_o over the ``nulls`` contexts (see the module docstring); NaN if acc_o = 0."""
    acc_o = float(correctness(prediction_direction(margins["original"]), labels).mean())
    acc_null = float(np.mean([correctness(prediction_direction(margins[c]), labels).mean() for c in nulls]))
    return (acc_o - acc_null) / acc_o if acc_o > 0 else float("nan")
