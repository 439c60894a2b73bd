"""The papers' settings, in one place: option defaults and API signatures read these names.

A leaf module (imports nothing from vlaudit). Each constant cites the section that states it; where vlaudit
departs from a paper on purpose, the comment says so and why. "cycle" = the counterfactual pairing cycles paper
(``001_…``, appendix §D/§E), "VCA" = the Visual Credit Audit paper (``002_…``).
"""

from __future__ import annotations

# --- shared ------------------------------------------------------------------------------------------------
# VCA §19 (paired, clustered percentile bootstrap). The cycle paper states no bootstrap (its spread is the sd over
# three seeds, §D.5); vlaudit's cycle intervals borrow the VCA paper's count.
BOOTSTRAP_RESAMPLES = 5000
BOOTSTRAP_SEED = 20260719  # VCA §19
CONFIDENCE_LEVEL = 0.95  # VCA §19: two-sided 95% intervals

# --- cycle paper ---------------------------------------------------------------------------------------------
MIN_COVERAGE = 0.95  # vca score / vca report: a run that scored fewer of its records is not a result (--min-coverage)
MIN_CYCLES = 30  # cycle §D.5: a family with fewer validation cycles is reported unavailable
TIE_TOL = 1e-9  # |m| ≤ tol is a tie, no decision: CycleAcc's ½ credit, VCA's Strict, survival and Dep
CYCLE_TIE_TOL = TIE_TOL  # |Δ| ≤ tol counts as a tie (credit ½)
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
SYNTHETIC_RANK_EPOCHS = 40  # cycle §E.5: the synthetic rank control; Table 1's AUROC peaks at rank 8
# Not a paper setting: on a training set of a few hundred units the paper's batch of 512 is a single optimiser
# step per epoch, so a probe would barely move. vlaudit's batch (same epochs) is the paper's 512 on every set of
# at least 512 units and smaller below, without a jump (vlaudit.probes.trainer.effective_batch_size): a set of
# up to 448 units takes at least this many steps; said in ``probe_notes``; every probe's batch and steps are in
# ``probe_runs``.
MIN_OPTIMISER_STEPS = 50
# Not paper settings (the paper states none for them): the synthetic controls' interaction probes (the bilinear
# rows of Table 1 and the binding row); these small problems need a larger step to converge in ~80 updates.
SYNTHETIC_INTERACTION_EPOCHS = 10
SYNTHETIC_INTERACTION_LR = 3e-2
# Not a paper setting: the size of a shortcut marker added to the negatives' features, in sd units of the
# marker direction (synthetic row 2 and the shortcut-bearing negatives of ``experiment diagnostics``).
SHORTCUT_MARKER_SD = 4.0
SYNTHETIC_RANK_PEAK = {1: 0.6725, 8: 0.7658, 16: 0.7575}  # cycle §5.1, Table 1: AUROC by rank (peak at 8)
# Not a paper setting: the seed of the ``--max-images`` pool draw. §D.5 evaluates every seed on one fixed image
# pool ("family estimates share image pools"), so the pool has its own seed, fixed by default, and each cycle seed
# draws its independently constructed splits inside that pool.
CYCLE_POOL_SEED = 0
# The COCO builder's work bounds (``cycles build coco``), none stated by the paper (§D.2 names no caps):
COCO_CAPTIONS_PER_IMAGE = 2  # seeded human captions read per image (bounds the synonym matching)
COCO_CATEGORIES_PER_IMAGE = 6  # seeded eligible categories per image that relation statements may name
COCO_STATEMENTS_PER_IMAGE = 3  # seeded candidate statements per image and relation family
# How many blocks of one family and split may use the same image: 1 keeps a family's blocks image-disjoint
# (vlaudit's choice; the paper does not say whether its blocks share images).
COCO_IMAGE_USES = 1
# Families vlaudit can build that the cycle paper does not have (cross-noun GQA blocks: object presence across
# different nouns). Built only on request (``--extra-families``) and labelled "not in the paper" wherever printed.
NOT_IN_PAPER_FAMILIES = ("gqa-attribute-cross-noun", "gqa-relation-cross-noun")
NOT_IN_PAPER_LABEL = "not in the paper"
GQA_BINDING_VALIDATION_CYCLES = (18, 19)  # cycle §D.3 / Table 2: per seed, below MIN_CYCLES → unavailable

# --- VCA paper -----------------------------------------------------------------------------------------------
PRIMARY_CONTROLS = ("text", "blank")  # VCA §3: the text-only and blank controls of the primary dependence audit
VSR_INVERSE_GROUPS = 504  # VCA §18 "Surface-Form Robustness": same-image inverse groups on VSR random_test
VSR_INVERSE_EXCLUDED = 35  # VCA §18: candidates "without structured entities", excluded before scoring
# VCA §4/§9: "Its test split contributes 1,249 queries spanning nine relation types" (667 gold yes, Table 13);
# the nine are not named, and no nine whole relations of either VSR test split give 1,249 rows
VSR_PAPER_QUERIES = 1249
VSR_PAPER_YES = 667
VSR_PAPER_RELATION_TYPES = 9
# VCA §18 "Additional fixed-200 VSR wording diagnostics": 200 VSR items stratified over above, below, left and
# right (50 each), three relation wordings; the Qwen system diagnostic's neutral instruction, by name
WORDING_ITEMS_PER_DIRECTION = 50
WORDING_SEED = 0  # vlaudit's: the paper does not give the draw of its 200 items
NAMED_SYSTEM_MESSAGES = {"qwen-neutral": "Answer the user's question with exactly yes or no."}
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
# No." (`SUFFIX_FOR_VQA` in its naturalbench_vqa.py); adding that suffix too would ask twice.
NATURALBENCH_QUERY = "{caption}"

# --- vlaudit's own defaults (not paper settings; named here so that no copy drifts) ----------------------------
# The offline demo's bootstrap count: fewer than the papers' BOOTSTRAP_RESAMPLES so `make demo` stays quick.
DEMO_RESAMPLES = 2000
# The HTML report's own VCA of a margins table that has no `vca report` beside it: a quick preview; the
# reported intervals come from `vca report` (BOOTSTRAP_RESAMPLES).
REPORT_PREVIEW_RESAMPLES = 1000
# Signed weights of the labelled-pairs audit's degrees (cycle paper §2.2): mean (+1/n_pos, −1/n_neg), the pooled
# comparison. ``count`` (±1) was dropped: it only restated the positive:negative ratio (What's Up 0.500 at TV 0.001).
PAIR_AUDIT_WEIGHTINGS = ("mean",)

# --- benchmark releases read by `vlaudit data items --format NAME` (vlaudit.sources.registry) -----------------
# Not a paper setting: the names of the readers, kept here so that the command's help lists them without
# importing the readers.
BENCHMARK_FORMATS = ("pope", "mme", "hallusionbench", "mmstar", "mmbench", "seed-bench", "scienceqa", "mmmu",
                     "cv-bench", "ai2d")

# --- paired model comparison (vlaudit compare) ---------------------------------------------------------------
# Not a paper setting: the paired cluster permutation test's count (swap the two models' labels within each
# cluster); the p-value's resolution is 1 / (COMPARE_PERMUTATIONS + 1).
COMPARE_PERMUTATIONS = 10000
# Not a paper setting: `compare vca` replaces that Monte Carlo test by the exact cluster sign flip
# (vlaudit.stats.sign_flip, 2^k sign vectors or their lattice count) when a comparison has at most this many
# clusters: 16 stems give the exact p of 2/2^16 = 3.05e-5 where 10,000 flips floor at 1e-4.
EXACT_SIGN_FLIP_CLUSTERS = 20
# Not a paper setting: the family-wise error rate of the Holm step-down adjustment across a comparison table.
COMPARE_FAMILYWISE_ALPHA = 0.05

# A prompt longer than this many characters per position of the model's context cannot fit it (no tokenizer
# vlaudit loads spans more characters per token); it is refused without being tokenised.
PROMPT_CHARS_PER_TOKEN_BOUND = 64

# --- the resampling unit and small samples (vlaudit.stats.clusters; docs/concepts/statistics.md) ----------
# Not a paper setting: below this many clusters every interval is flagged as approximate. The coverage of
# a rate at nominal 95% by the default interval, the expanded percentile cluster bootstrap (9 records per
# cluster, intra-cluster correlation 0.3, 2,000 seeded replicates, `python benchmarks/cluster_coverage.py`),
# is SMALL_SAMPLE_COVERAGE; the plain percentile interval's is PERCENTILE_COVERAGE.
MIN_CLUSTERS = 20
SMALL_SAMPLE_COVERAGE = ((5, 0.91), (10, 0.94), (20, 0.95))
PERCENTILE_COVERAGE = ((5, 0.84), (10, 0.91), (20, 0.93))
# Not a paper setting: with at most this many clusters no paired test can reach p <= 0.05 (an exact sign flip
# over k clusters has p >= 2 / 2^k: 0.0625 at k = 5), which every small-sample warning then says.
NO_SIGNIFICANCE_CLUSTERS = 5
# Not a paper setting: bootstrap resamples per replicate of those coverage simulations (vlaudit.stats.coverage).
COVERAGE_SIMULATION_RESAMPLES = 1000
