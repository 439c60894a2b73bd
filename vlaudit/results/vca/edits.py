"""The record of one row of ``edits analyze``'s outcome table (``summary.json``, VCA §15, §17 Table 8, §19).

Rates are percent of the model's accepted-edit records in the stratum; a stratum without records has no rate,
so its rate, the differences that use it and their intervals are :class:`~vlaudit.results.missing.Missing`
with the reason (None only in a file written before reasons were recorded).
"""

from __future__ import annotations

from dataclasses import dataclass

from vlaudit.results.missing import Missing

#: a percent that an empty stratum leaves not computable
Percent = float | Missing | None


@dataclass(frozen=True)
class EditStratumRow:
    """One model (or ``Macro``, the mean over models) of the edited outcomes: over its ``n`` accepted edits the
    relation-only (``rel``), flip+visibility (``flip_vis``) and strict success rates; flip+visibility in each
    source audit stratum (Rel_o, Joint, C-U, D-CC) with the stratum's n; the Joint enrichment
    (``joint_minus_overall``, ``delta_pair_d`` = Joint − Rel_o) and relation-only success within Joint, each
    difference with its edit-cluster percentile interval (``_lo``, ``_hi``; percentage points, VCA §19)."""

    model: str
    n: int
    rel: Percent
    flip_vis: Percent
    strict: Percent
    n_rel_o: int
    rel_o: Percent
    n_joint: int
    joint: Percent
    joint_minus_overall: Percent
    delta_pair_d: Percent
    rel_joint: Percent
    rel_joint_minus_overall: Percent
    n_cu: int
    cu: Percent
    n_dcc: int
    dcc: Percent
    joint_minus_overall_lo: Percent
    joint_minus_overall_hi: Percent
    delta_pair_d_lo: Percent
    delta_pair_d_hi: Percent
    rel_joint_lo: Percent
    rel_joint_hi: Percent
    rel_joint_minus_overall_lo: Percent
    rel_joint_minus_overall_hi: Percent
