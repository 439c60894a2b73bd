"""The records of a run's decision checks: the backend's noise floor under math-preserving perturbations
(``stability.json``) and likelihood against generation (``generate_check.json``), VCA §3 decisions."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DeltaSummary:
    """|Δ margin| under a perturbation: n, median, p99 and max (None with no record) and the margins whose
    sign (the answer, VCA §3) changed."""

    n: int
    median: float | None
    p99: float | None
    max: float | None
    sign_flips: int


@dataclass(frozen=True)
class GapFlips:
    """Items with original and the headline controls whose Dep = [G_img > 0] changed under a perturbation."""

    n: int
    controls: list[str]
    sign_flips: int


@dataclass(frozen=True)
class PerturbationNoise:
    """One math-preserving perturbation's |Δ margin| per context and over every record, and its G_img sign
    flips."""

    perturbation: str
    description: str
    contexts: dict[str, DeltaSummary]
    all: DeltaSummary
    g_img: GapFlips


@dataclass(frozen=True)
class FloorBound:
    """One perturbation's upper confidence bound of the p99 of |Δ margin|: its ``n`` units (each counted once),
    the ``order`` of the order statistic taken, the bound's ``value``, its ``coverage`` P(value ≥ true p99) and
    whether that reaches the level (False: too few units, the value is their maximum)."""

    perturbation: str
    n: int
    order: int
    value: float
    coverage: float
    bounded: bool


@dataclass(frozen=True)
class FloorEstimate:
    """How τ was estimated: the ``quantile`` (0.99) bounded at ``level`` from order statistics, the fewest units
    ``n_needed`` for such a bound to exist, each perturbation's bound, and a ``warning`` when τ is not the
    bound it is called (too few units)."""

    quantile: float
    level: float
    n_needed: int
    bounds: list[FloorBound]
    warning: str | None


@dataclass(frozen=True)
class Disagreement:
    """A decision the generated answer contradicts: the margin, both answers and the raw generated text."""

    item_id: str
    margin: float | None
    margin_answer: str | None
    generated_answer: str | None
    text: str


@dataclass(frozen=True)
class GenerationCheck:
    """Per context, interface and prompt form: agreement of the margin's decision with the greedily generated
    answer (None when nothing parsed), the unparseable rate, the confusion counts
    ``confusion[margin answer][generated answer or "unparseable"]`` and the disagreements."""

    context: str
    interface: str
    prompt: str
    n: int
    n_parsed: int
    agreement: float | None
    unparseable_rate: float | None
    confusion: dict[str, dict[str, int]]
    disagreements: list[Disagreement]


@dataclass(frozen=True)
class CheckSample:
    """The items a run check re-scored: ``n_items`` drawn with ``seed`` (``requested``; None: every item), the
    scoring units and the records (item × context × interface) they cover."""

    n_items: int
    seed: int
    requested: int | None
    n_units: int
    n_records: int


@dataclass(frozen=True)
class StabilitySample(CheckSample):
    """The sample of ``vca stability``: its contexts and interfaces, and ``kind`` (``dual-encoder`` for a
    dual-encoder run, None for a yes/no model's)."""

    contexts: list[str]
    interfaces: list[str]
    kind: str | None = None


@dataclass(frozen=True)
class StabilityForwards:
    """The forwards of ``vca stability``: the baseline read from the run's cache, those scored now (0 on a
    resumed run), every perturbed forward and their number per sampled item; ``unit`` what one forward is
    (a dual-encoder run embeds one input; None: a yes/no model's scoring unit)."""

    baseline_from_run_cache: int
    scored_now: int
    total_perturbed: int
    per_sampled_item: float
    unit: str | None = None


@dataclass(frozen=True)
class GenerateSample(CheckSample):
    """The sample of ``vca generate-check`` and how many generations were decoded now (0 on a resumed run)."""

    generated_now: int
