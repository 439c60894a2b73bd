"""Visual Credit Audit quantities over cached yes/no margins (VCA §3, §9, §12, §13, §18).

Pure float64 functions: :mod:`.support` (image gap, Dep, D-CC/C-U, taxonomy, strata, survival, gap
distribution), :mod:`.permutation` (matched image-permutation calibration), :mod:`.relation` (same-image
true/false groups: H_c, G_int, Rel_c, PairCredit, PairD, Joint) and :mod:`.robustness` (answer-interface
ensemble, pair-centred differencing, alternate control sets, control-aggregation variants).
"""

from vlaudit.metrics.vca.support import DEFAULT_CONTROLS

__all__ = ["DEFAULT_CONTROLS"]
