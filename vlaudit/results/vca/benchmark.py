"""The benchmarks' own figures of one VCA run (``vca.json`` ``runs[].benchmark``), as each benchmark's official
scorer computes them, beside the audit: :class:`BenchmarkFigures`, one optional record per benchmark.

A benchmark's record is present only on that benchmark's runs and only when the run holds what it needs
(labels, a ``text`` context, the reader's metadata columns); an absent one is left out of the JSON, as
before. Fractions are in [0, 1]. A ratio that cannot be computed (0/0: no "yes" prediction, no image with
both MME questions) is ``Missing(reason)``. Definitions: :mod:`vlaudit.metrics.vca.benchmark_figures`;
computed by :mod:`vlaudit.analysis.vca.benchmark`.

:func:`upgrade_benchmark` reads the section as older vlaudits wrote it (MME as one list of rows,
CircularEval without its dropped and incomplete questions) into today's shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from vlaudit.results.missing import Missing
from vlaudit.results.versioned import omitted_when_none, reason_key

Figure = float | Missing
#: a section or figure a file written by an older vlaudit does not hold
OLDER = "not in this file (an older vlaudit)"


@dataclass(frozen=True)
class BlindGain:
    """vlaudit's own Acc with the image (``acc_image``) and under the ``text`` context (``acc_text``), and their
    difference ``mg`` (MMStar §4's multimodal gain, on a run of any other labelled benchmark)."""

    acc_image: float
    acc_text: float
    mg: float


@dataclass(frozen=True, kw_only=True)
class MmstarGain:
    """MMStar §4 (``MMStar_eval`` in VLMEvalKit): S_v ``acc_image``, S_wv ``acc_text`` (the ``text`` context),
    MG = S_v − S_wv; with the base LLM ``llm`` named (``--base-llm``), S_t ``acc_llm`` its accuracy on the
    LVLM's items and ML = max(0, S_wv − S_t), else ``ml`` is Missing saying why (written as ``ml_reason``,
    the file's shape since ML was added)."""

    acc_image: float
    acc_text: float
    mg: float
    llm: str | None = field(default=None, metadata=omitted_when_none())
    acc_llm: float | None = field(default=None, metadata=omitted_when_none())
    ml: Figure = field(default=Missing("no base LLM named (--base-llm)"), metadata=reason_key("ml_reason"))


@dataclass(frozen=True)
class CategoryCredit:
    """The audit within one benchmark ``category`` (VCA §12): its ``n`` items, Dep, and with labels Acc,
    D-CC and C-U = Acc − D-CC."""

    category: str
    n: int
    dep: float
    acc: Figure = Missing("no labels")
    dcc: Figure = Missing("no labels")
    cu: Figure = Missing("no labels")


@dataclass(frozen=True)
class MmstarAxis:
    """MMStar's accuracy within a core ``category`` (``l2_category`` None) or one of its l2 axes
    (``MMStar_eval``): correct / ``n`` questions scored."""

    category: str
    l2_category: str | None
    n: int
    acc: float


@dataclass(frozen=True)
class YesNoFigures:
    """POPE's figures over the ``category`` (``all`` or random/popular/adversarial; the official
    ``evaluate.py``, positive = "yes"): accuracy, precision, recall, F1 and the yes-ratio over ``n``
    questions."""

    category: str
    n: int
    accuracy: Figure
    precision: Figure
    recall: Figure
    f1: Figure
    yes_ratio: Figure


@dataclass(frozen=True)
class MmeSubtask:
    """One MME subtask (``eval_tool/calculation.py``): ``n`` questions, ``n_pairs`` images with both
    questions, acc (per question), acc+ (per image: both correct) and score = 100·(acc + acc+)."""

    category: str
    n: int
    n_pairs: int
    acc: Figure
    acc_plus: Figure
    score: Figure


@dataclass(frozen=True)
class MmeTotal:
    """MME's Perception or Cognition ``total``: the sum of the scores of its ``subtasks`` present out of
    ``of`` (10 / 4), ``max`` 200 per subtask."""

    total: str
    score: float
    subtasks: int
    of: int
    max: float


@dataclass(frozen=True)
class MmeFigures:
    """MME's subtasks, its official totals, and vlaudit's own ``pooled`` row over every question (MME pools
    nothing)."""

    subtasks: list[MmeSubtask]
    totals: list[MmeTotal] | Missing
    pooled: MmeSubtask


@dataclass(frozen=True)
class HallusionRow:
    """HallusionBench's accuracies over one ``split`` (``level`` overall, category VD/VS or subcategory;
    VLMEvalKit ``Hallusion_rating``, the authors' ``evaluation.py``): aAcc per question, fAcc per figure
    (every question of it correct), qAcc per question (correct on every figure it is asked of)."""

    split: str
    level: str
    n: int
    n_figures: int
    n_questions: int
    aacc: Figure
    facc: Figure
    qacc: Figure


@dataclass(frozen=True)
class RotationFigures:
    """Acc and D-CC of the ``n`` rows of one CircularEval ``rotation``."""

    rotation: int
    n: int
    acc: float
    dcc: float


@dataclass(frozen=True)
class IncompleteQuestion:
    """A CircularEval question (``circular_id``) holding only ``rotations`` of its ``of``."""

    circular_id: str
    rotations: list[int]
    of: int


@dataclass(frozen=True)
class CircularCategory:
    """CircularEval accuracy over the ``n_items`` questions of one ``category`` (``report_acc``)."""

    category: str
    n_items: int
    circular_acc: Figure


@dataclass(frozen=True, kw_only=True)
class CircularFigures:
    """MMBench CircularEval as VLMEvalKit's ``mcq_circular_eval`` counts it: ``n_items`` questions kept (with a
    rotation-0 row), ``dropped`` those without one, ``incomplete`` those short of some rotations (counted over
    those they have), the circular accuracy, vlaudit's "credited in every rotation" (correct ∧ Dep, VCA §3),
    per rotation and per category (None without categories)."""

    n_items: int
    n_dropped: int | Missing
    dropped: list[str] | Missing
    n_incomplete: int | Missing
    incomplete: list[IncompleteQuestion] | Missing
    circular_acc: Figure
    credited_every_rotation: Figure
    per_rotation: list[RotationFigures]
    per_category: list[CircularCategory] | None = field(default=None, metadata=omitted_when_none())


@dataclass(frozen=True, kw_only=True)
class BenchmarkFigures:
    """Every benchmark figure one run supports (see the module docstring); a section the run lacks is None
    and left out of the JSON. ``mmstar`` on MMStar runs, ``blind`` on other labelled runs with a ``text``
    context; ``categories`` on runs with a ``category`` column."""

    mmstar: MmstarGain | None = field(default=None, metadata=omitted_when_none())
    blind: BlindGain | None = field(default=None, metadata=omitted_when_none())
    categories: list[CategoryCredit] | None = field(default=None, metadata=omitted_when_none())
    mmstar_axes: list[MmstarAxis] | None = field(default=None, metadata=omitted_when_none())
    pope: list[YesNoFigures] | None = field(default=None, metadata=omitted_when_none())
    mme: MmeFigures | None = field(default=None, metadata=omitted_when_none())
    hallusionbench: list[HallusionRow] | None = field(default=None, metadata=omitted_when_none())
    circular: CircularFigures | None = field(default=None, metadata=omitted_when_none())


#: vlaudit's name for MME's pooled row (MME pools nothing; its totals are sums)
POOLED = "pooled (vlaudit)"
_CIRCULAR_ADDED = ("n_dropped", "dropped", "n_incomplete", "incomplete")


def upgrade_benchmark(section: object) -> object:
    """A run's ``benchmark`` section as this vlaudit writes it: MME's single list of rows (its ``all`` row the
    pooled one, no totals) and CircularEval's keys added since read as Missing; a current section unchanged."""
    if not isinstance(section, Mapping):
        return section
    out = dict(section)
    mme, circular = out.get("mme"), out.get("circular")
    if isinstance(mme, list):
        rows = [r for r in mme if isinstance(r, Mapping)]
        pooled = next((dict(r) | {"category": POOLED} for r in rows if r.get("category") == "all"), None)
        out["mme"] = {"subtasks": [r for r in rows if r.get("category") != "all"], "totals": {"missing": OLDER},
                      "pooled": pooled}
    if isinstance(circular, Mapping):
        out["circular"] = {k: {"missing": OLDER} for k in _CIRCULAR_ADDED} | dict(circular)
    return out
