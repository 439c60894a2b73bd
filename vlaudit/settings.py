"""The papers' settings, in one place: option defaults and API signatures read these names.

A leaf module (imports nothing from vlaudit). Each constant cites the section that states it; where vlaudit
departs from a paper on purpose, the comment says so and why. "cycle" = the counterfactual pairing cycles paper
(``001_…``, appendix §D/§E), "VCA" = the Visual Credit Audit paper (``002_…``).
"""

from __future__ import annotations

# --- shared ------------------------------------------------------------------------------------------------
BOOTSTRAP_RESAMPLES = 5000  # VCA §19 (paired, clustered percentile bootstrap); cycle §D.5 uses the same count
BOOTSTRAP_SEED = 20260719  # VCA §19

# --- cycle paper ---------------------------------------------------------------------------------------------
MIN_CYCLES = 30  # cycle §D.5: a family with fewer validation cycles is reported unavailable
CYCLE_TIE_TOL = 1e-9  # |Δ| ≤ tol counts as a tie (credit ½)

# --- VCA paper -----------------------------------------------------------------------------------------------
VSR_INVERSE_GROUPS = 504  # VCA §18 "Surface-Form Robustness": same-image inverse groups on VSR random_test
VSR_INVERSE_EXCLUDED = 35  # VCA §18: candidates "without structured entities", excluded before scoring
HL_RESAMPLES = 2000  # VCA §19: "semantic H–L intervals use 2,000" (vca validity's high-minus-low tertile CIs)
