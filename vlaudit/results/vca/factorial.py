"""The records of the 3×3 evidence-source factorial (``factorial.json``, VCA §10 Tables 5–8): per model and
pooled over models. A proportion over an empty denominator is None, and so is its interval."""

from __future__ import annotations

from dataclasses import dataclass

from vlaudit.results.missing import Missing
from vlaudit.results.versioned import Interval


@dataclass(frozen=True)
class SourceEffect:
    """A conditional source effect (Δ_V(t), Δ_T(v) or the interaction, VCA §10 Table 7): mean over stems with
    its stem-bootstrap interval and the share of stems where it is positive."""

    mean: float | None
    ci: Interval | None
    positive_share: float | None


@dataclass(frozen=True)
class NeutralExcess:
    """s·(m(s, s) − m(∅, s)) over the C-U decisions: mean and median (None without C-U)."""

    cu_mean_excess: float | None
    cu_median_excess: float | None


@dataclass(frozen=True)
class NestedValidation:
    """The nested source-only validation (VCA §10 Table 8): the image-source cells (±, ∅) against the
    text-source cells (∅, ±). Credit's TPR on image-source and FPR on text-source cells (all and on correct
    decisions), and the AUROC of G_img and of the confidence |m| for telling them apart. ``Missing(reason)``
    where the rate or AUROC has no decisions (no correct decision of a source, or one source only); a file
    written before says ``null`` there, read as Missing with no reason recorded."""

    n_image: int
    n_text: int
    image_tpr: float | Missing
    text_fpr: float | Missing
    n_correct_image: int
    n_correct_text: int
    image_tpr_correct: float | Missing
    text_fpr_correct: float | Missing
    auroc_vca_correct: float | Missing
    auroc_confidence_correct: float | Missing
    auroc_vca_all: float | Missing


@dataclass(frozen=True)
class FactorialModel:
    """One model's factorial (VCA §10 Tables 5–8): agreement-decision counts, the conditional proportions with
    Wilson intervals (None when the denominator is empty), the C-U response magnitudes, the neutral-control
    excess, the source effects, the nested source-only validation and the control-reuse check."""

    model: str
    dataset: str
    interface: str
    stems: int
    agreement_decisions: int
    correct: int
    correct_responsive: int
    cu: int
    cu_flip: int
    cu_neutral_exceed: int
    cu_nonresponsive: int
    cu_responsive: int
    cu_rate: float | None
    cu_rate_ci: Interval | None
    responsive_rate: float | None
    responsive_rate_ci: Interval | None
    neutral_exceed_rate: float | None
    neutral_exceed_rate_ci: Interval | None
    flip_rate: float | None
    flip_rate_ci: Interval | None
    responsive_mass: float | None
    responsive_mass_ci: Interval | None
    nonresponsive_mass: float | None
    nonresponsive_mass_ci: Interval | None
    responsive_rate_all_correct: float | None
    responsive_rate_all_correct_ci: Interval | None
    #: the share of C-U decisions whose response exceeds each magnitude
    cu_response_exceeds: dict[str, float | None]
    neutral: NeutralExcess
    effects: dict[str, SourceEffect]
    #: image-source against text-source cells: credit TPR/FPR and the source AUROCs (Table 8)
    nested: NestedValidation
    control_reuse_max_abs_diff: float | None


@dataclass(frozen=True)
class FactorialPooled:
    """The factorial pooled over models (micro rates with stem-resample intervals) and the macro means."""

    correct: int
    correct_responsive: int
    cu: int
    cu_flip: int
    cu_neutral_exceed: int
    cu_nonresponsive: int
    cu_responsive: int
    cu_rate: float | None
    cu_rate_ci: Interval | None
    cu_rate_macro: float | None
    responsive_rate: float | None
    responsive_rate_ci: Interval | None
    responsive_rate_macro: float | None
    neutral_exceed_rate: float | None
    neutral_exceed_rate_ci: Interval | None
    neutral_exceed_rate_macro: float | None
    flip_rate: float | None
    flip_rate_ci: Interval | None
    flip_rate_macro: float | None
    responsive_mass: float | None
    responsive_mass_ci: Interval | None
    responsive_mass_macro: float | None
    nonresponsive_mass: float | None
    nonresponsive_mass_ci: Interval | None
    nonresponsive_mass_macro: float | None
    responsive_rate_all_correct: float | None
    responsive_rate_all_correct_ci: Interval | None
    responsive_rate_all_correct_macro: float | None
