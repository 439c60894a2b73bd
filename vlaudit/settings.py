"""The papers' settings, in one place: option defaults and API signatures read these names.

A leaf module (imports nothing from vlaudit). Each constant cites the section that states it; where vlaudit
departs from a paper on purpose, the comment says so and why. "cycle" = the counterfactual pairing cycles paper
(``001_…``, appendix §D/§E), "VCA" = the Visual Credit Audit paper (``002_…``).
"""

from __future__ import annotations

# --- shared ------------------------------------------------------------------------------------------------
BOOTSTRAP_RESAMPLES = 5000  # VCA §19 (paired, clustered percentile bootstrap); cycle §D.5 uses the same count
BOOTSTRAP_SEED = 20260719  # VCA §19
CONFIDENCE_LEVEL = 0.95  # VCA §19: two-sided 95% intervals

# --- cycle paper ---------------------------------------------------------------------------------------------
MIN_CYCLES = 30  # cycle §D.5: a family with fewer validation cycles is reported unavailable
CYCLE_TIE_TOL = 1e-9  # |Δ| ≤ tol counts as a tie (credit ½)
CYCLE_SEEDS = (0, 1, 2)  # cycle §E.3 / §D.5: three independently constructed cycle splits and runs
# Not a paper setting (the cycle paper states no bootstrap seed): the seed of the cycle metrics' bootstrap.
CYCLE_BOOTSTRAP_SEED = 0
# Descriptive per-seed intervals of the cycle experiments (the headline is mean ± sd over CYCLE_SEEDS), so
# fewer resamples than BOOTSTRAP_RESAMPLES; not a paper setting.
CYCLE_EXPERIMENT_RESAMPLES = 1000
RANK_SWEEP = (1, 2, 4, 8, 16, 32, 64)  # cycle §5 / Table 3: ranks of the low-rank bilinear probe sweep
SYNTHETIC_RANKS = (1, 2, 4, 8, 16)  # cycle §5.1 / Table 1: ranks of the synthetic rank control

# Probe optimisation per probe kind (AdamW). One place: ExperimentConfig, the CLI options and the run's JSON
# ("probe_settings") read these names.
PROBE_BATCH_SIZE = 512  # cycle §E.3
PROBE_WEIGHT_DECAY = 1e-4  # cycle §E.3
PROBE_EPOCHS = 8  # cycle §E.3: the OE experiment (Cycle OE, Shortcut OE) and the interaction probes
PROBE_LR = 1e-3  # cycle §E.3
PROBE_RANK = 64  # cycle §E.3 / §5: rank of the low-rank bilinear probe
ADDITIVE_PROBE_EPOCHS = 5  # cycle §E.4: the additive audit probes a(x) + b(y); §E.4 states no other lr (§E.3's)
SHORTCUT_PROBE_EPOCHS = 50  # cycle §E.4: the text-only and image-only shortcut probes
SHORTCUT_PROBE_LR = 1e-2  # cycle §E.4
SYNTHETIC_RANK_EPOCHS = 40  # cycle §E.5: the synthetic rank control; AUROC peaks at rank 8 (Table 1)
# Not a paper setting: the paper's batch of 512 gives one optimiser step per epoch on a few hundred cycles, so
# a probe on a small training set would barely move. vlaudit shrinks the batch (same epochs) until a probe
# takes at least this many steps (said in the output; the paper's scale — thousands of cycles — is untouched).
MIN_OPTIMISER_STEPS = 50
SYNTHETIC_RANK_PEAK = {1: 0.6725, 8: 0.7658, 16: 0.7575}  # cycle §5.1, Table 1: AUROC by rank (peak at 8)
GQA_BINDING_VALIDATION_CYCLES = (18, 19)  # cycle §D.3 / Table 2: per seed, below MIN_CYCLES → unavailable

# --- VCA paper -----------------------------------------------------------------------------------------------
PRIMARY_CONTROLS = ("text", "blank")  # VCA §3: the text-only and blank controls of the primary dependence audit
VSR_INVERSE_GROUPS = 504  # VCA §18 "Surface-Form Robustness": same-image inverse groups on VSR random_test
VSR_INVERSE_EXCLUDED = 35  # VCA §18: candidates "without structured entities", excluded before scoring
HL_RESAMPLES = 2000  # VCA §19: "semantic H–L intervals use 2,000" (vca validity's high-minus-low tertile CIs)
FACTORIAL_STEMS = 50  # VCA §10: 50 stems per relation (left, right, above, below) → 200 groups
FACTORIAL_SEED = 20260724  # VCA §10: deterministic object identities and layouts of the factorial scenes
# VCA §19: "Pooled intervals use 5,000 resamples of procedural stem ids with seed 20260724" (the same seed).
FACTORIAL_BOOTSTRAP_SEED = FACTORIAL_SEED
# Not stated by the paper (§17, §19 give no seed for the edits): vlaudit seeds the edit shuffles, the
# annotation batches and the edit intervals with the factorial seed, so earlier outputs reproduce.
EDIT_SEED = FACTORIAL_SEED
EDIT_MIN_GAP = 0.05  # VCA §17: post-swap centre gap ≥ 0.05 of the image extent
EDIT_MAX_IOU = 0.20  # VCA §17: IoU of the two new boxes ≤ 0.20
EDIT_PAD_PX = 4  # VCA §17: source patches removed with 4-pixel padding
EDIT_INPAINT_RADIUS = 3  # VCA §17: Telea inpainting radius 3
EDIT_FEATHER_PX = 3  # VCA §17: patches pasted with a 3-pixel feather
EDIT_REPEAT_FRACTION = 0.10  # VCA §17: 10% repeated items measure within-annotator consistency
FILTER_PRIMARY_COVERAGE = 50.0  # VCA §16: the primary leave-one-model-out coverage (percent)
FILTER_COVERAGES = (25.0, FILTER_PRIMARY_COVERAGE, 75.0)  # VCA §16 (table "held-out filtering"): percent kept

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

# --- vlaudit's own defaults (not paper settings; named here so that no copy drifts) ----------------------------
# The offline demo's bootstrap count: fewer than the papers' BOOTSTRAP_RESAMPLES so `make demo` stays quick.
DEMO_RESAMPLES = 2000
# The HTML report's own VCA of a margins table that has no `vca report` beside it: a quick preview; the
# reported intervals come from `vca report` (BOOTSTRAP_RESAMPLES).
REPORT_PREVIEW_RESAMPLES = 1000

# A prompt longer than this many characters per position of the model's context cannot fit it (no tokenizer
# vlaudit loads spans more characters per token); it is refused without being tokenised.
PROMPT_CHARS_PER_TOKEN_BOUND = 64
