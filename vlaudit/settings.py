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
FACTORIAL_STEMS = 50  # VCA §10: 50 stems per relation (left, right, above, below) → 200 groups
FACTORIAL_SEED = 20260724  # VCA §10: deterministic object identities and layouts of the factorial scenes
EDIT_MIN_GAP = 0.05  # VCA §17: post-swap centre gap ≥ 0.05 of the image extent
EDIT_MAX_IOU = 0.20  # VCA §17: IoU of the two new boxes ≤ 0.20
EDIT_PAD_PX = 4  # VCA §17: source patches removed with 4-pixel padding
EDIT_INPAINT_RADIUS = 3  # VCA §17: Telea inpainting radius 3
EDIT_FEATHER_PX = 3  # VCA §17: patches pasted with a 3-pixel feather
EDIT_REPEAT_FRACTION = 0.10  # VCA §17: 10% repeated items measure within-annotator consistency
FILTER_PRIMARY_COVERAGE = 50.0  # VCA §16: the primary leave-one-model-out coverage (percent)
