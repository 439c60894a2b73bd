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

# --- 2×2 benchmarks as exact cycles (Winoground, NaturalBench, generic blocks) ---------------------------------
TWO_BY_TWO_SPLIT = "test"  # these benchmarks are test sets: one split, never divided
# Winoground (Thrush et al. 2022, "Metrics") counts a comparison as won only when strictly greater (`>`): a tie
# loses, and vlaudit reports how many examples lost by a tie.
# NaturalBench (Li et al. 2024): a yes/no score s(image, question) = log P(yes) − log P(no) (what `cycles
# score-mllm` writes) answers Yes iff s > threshold; 0 is the model's own argmax between Yes and No.
NATURALBENCH_YES_THRESHOLD = 0.0
# `cycles score-mllm --query` for NaturalBench: the question itself. The yes/no interface already appends its
# answer instruction ("Answer yes or no."), which plays the role of the release's suffix "Please answer Yes or
# No." (`SUFFIX_FOR_VQA` in its example.py); adding that suffix too would ask twice.
NATURALBENCH_QUERY = "{caption}"
