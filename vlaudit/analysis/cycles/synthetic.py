"""Synthetic controls (cycle paper §5.1, Table 1, Table 8): ``run_synthetic``.

Four unblocked two-sample diagnostics, reported as test AUROC of probes trained with pair BCE on frozen
synthetic features (generators and why their outcome follows from construction:
:mod:`vlaudit.analysis.cycles.synthetic_generators`):

1. ``pure_interaction`` — negatives recombine valid pairs, marginals identical: image-only, text-only and additive
   probes ≈ 0.5; a full bilinear interaction probe well above 0.5 (the paper omits the latter; we show it).
2. ``marginal_shortcut`` — the same data with a marker added to the negatives' captions: text-only and additive
   ≈ 1.0, image-only ≈ 0.5.
3. ``rank_sweep`` — an interaction spread over K = 8 directions of decaying strength; low-rank bilinear probes
   at ranks 1, 2, 4, 8, 16, trained for §E.5's 40 epochs: AUROC rises to a peak at a middle rank and dips
   after it (paper: 0.6725 @1, 0.7658 @8, 0.7575 @16; here, seeds 0/1/2 mean: 0.654 @1, 0.748 @8,
   0.744 @16).
4. ``binding`` — two-object scenes with attribute binding; one bilinear probe on bag versus pair-aware features:
   bag ≈ 0.5, pair-aware well above.

The marginal probes train at §E.4's settings (image-only and text-only 50 epochs at lr 1e-2; additive 5 epochs);
the interaction probes of rows 1 and 4 at vlaudit's own (the paper states none); the rank control at §E.5's 40
epochs. The rank control's known answer is the rise of Table 1: the three-seed mean AUROC climbs to rank 8
(above every lower rank, > 0.03 over rank 1). Whether it then *peaks* at 8 — Table 1's 0.7658 @8 over 0.7575
@16, a difference of 0.0083 — is reported, not checked: ``rank_peaks.difference`` holds rank 8 minus rank 16
per seed with its mean and sd over seeds, and the peak is called resolved only when the mean exceeds that sd.
On seeds 0/1/2 it is +0.0037 ± 0.0055 (0.0080, 0.0055, −0.0025; seeds 6–8 peak at 16): inside the spread, so
the run prints that the peak is not resolved, beside each seed's peak rank. (The learning rate, 1e-2, was
chosen on seeds 0–2; §E.5 states none.)

And ``exact_cycles`` (Table 8): the image-only, text-only and additive probes *trained on the shortcut data of
row 2* score clean exact cycles from the same generator with CycleAcc exactly 0.5 and every cycle a tie
(``tie_rate`` = 1: |Δ| ≤ tol, Δ evaluated in float64 with the fixed tolerance); a bilinear probe trained with
the cycle loss and selected on validation cycles is shown for contrast.

Every random draw comes from ``numpy.random.default_rng([seed, diagnostic])`` and probe seeds equal ``seed``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch

from vlaudit.analysis.cycles import synthetic_generators as gen
from vlaudit.analysis.cycles.across_seeds import mean_sd
from vlaudit.files import write_result
from vlaudit.metrics.cycles import DEFAULT_TOL, cycle_acc
from vlaudit.probes.trainer import (
    ProbeData,
    TrainConfig,
    cycle_contrasts,
    evaluate_auroc,
    evaluate_cycle_acc,
    fit_probe,
)
from vlaudit.results.cycles import (
    RankDifference,
    RankPeaks,
    SyntheticProbeSetting,
    SyntheticResult,
    SyntheticRow,
)
from vlaudit.settings import (
    ADDITIVE_PROBE_EPOCHS,
    CYCLE_SEEDS,
    PROBE_BATCH_SIZE,
    PROBE_WEIGHT_DECAY,
    SHORTCUT_MARKER_SD,
    SHORTCUT_PROBE_EPOCHS,
    SHORTCUT_PROBE_LR,
    SYNTHETIC_INTERACTION_EPOCHS,
    SYNTHETIC_INTERACTION_LR,
    SYNTHETIC_RANK_EPOCHS,
    SYNTHETIC_RANK_PEAK,
    SYNTHETIC_RANKS,
)

RANKS = SYNTHETIC_RANKS


@dataclass(frozen=True)
class SyntheticConfig:
    """Sizes and optimisation settings of the synthetic controls (small enough to run in seconds on a CPU)."""

    n_train: int = 2000          # pairs per class for training
    n_val: int = 500             # pairs per class for model selection
    n_test: int = 1000           # pairs per class for the reported AUROC
    dim: int = 16                # feature dimension of the coupled-Gaussian rows (rank 16 = full rank here)
    interaction_strength: float = 0.5    # ρ of each of the 4 directions of rows 1, 2 and the cycles
    # Rank sweep: 8 directions of decaying strength. The oracle rank-r parts of A give population AUROC
    # ≈ 0.67, 0.71, 0.75, 0.77 at r = 1, 2, 4, 8 — the shape of the paper's sweep; trained probes sit a little lower.
    rank_strengths: tuple[float, ...] = (0.65, 0.5, 0.42, 0.35, 0.3, 0.25, 0.2, 0.15)
    shortcut_delta: float = SHORTCUT_MARKER_SD  # marker size in sd units: Φ(4/√2) ≈ 0.998 for a linear probe
    binding_noise: float = 0.35
    # The marginal rows of Table 1 and Table 8 at §E.4's settings: the text-only and image-only probes for 50
    # epochs at lr 1e-2, the additive audit probe for §E.4's 5 epochs. §E.4 gives that probe no lr; here it takes
    # §E.4's 1e-2 too (at §E.3's 1e-3 five epochs reach AUROC ≈ 0.83 on the shortcut row, not Table 1's
    # "perfect"), while `experiment diagnostics` trains it at §E.3's.
    additive_epochs: int = ADDITIVE_PROBE_EPOCHS
    additive_lr: float = SHORTCUT_PROBE_LR
    shortcut_epochs: int = SHORTCUT_PROBE_EPOCHS
    shortcut_lr: float = SHORTCUT_PROBE_LR
    # The interaction rows (bilinear, binding): not paper settings (the paper states none for them); these small
    # problems need a larger step to converge in ~80 updates.
    epochs: int = SYNTHETIC_INTERACTION_EPOCHS
    batch_size: int = PROBE_BATCH_SIZE
    lr: float = SYNTHETIC_INTERACTION_LR
    weight_decay: float = PROBE_WEIGHT_DECAY
    # The rank control: §E.5's 40 epochs. §E.5 states no learning rate; 1e-2 (§E.4's shortcut-probe rate) was
    # chosen on seeds 0/1/2, where the mean rises to rank 8 and is lower at 16 by less than its spread over seeds.
    rank_epochs: int = SYNTHETIC_RANK_EPOCHS
    rank_lr: float = SHORTCUT_PROBE_LR

    def __post_init__(self) -> None:
        if self.dim < max(4, len(self.rank_strengths)):
            raise ValueError(f"dim must be ≥ max(4, number of rank directions), got {self.dim}")
        if min(self.n_train, self.n_val, self.n_test) < 2:
            raise ValueError("n_train, n_val and n_test must be ≥ 2 (pairs per class)")
        epochs = (self.epochs, self.rank_epochs, self.additive_epochs, self.shortcut_epochs, self.batch_size)
        if min(epochs) < 1 or not min(self.lr, self.rank_lr, self.additive_lr, self.shortcut_lr) > 0 \
                or self.weight_decay < 0:
            raise ValueError("need every epochs and batch_size ≥ 1, every lr > 0 and weight_decay ≥ 0")

    def settings(self, kind: str) -> tuple[int, float]:
        """(epochs, lr) of a probe kind: image/text (§E.4 shortcut probes), additive (§E.4 audit), the rank
        control (§E.5) or any interaction probe (vlaudit's)."""
        if kind in ("image", "text"):
            return self.shortcut_epochs, self.shortcut_lr
        if kind == "additive":
            return self.additive_epochs, self.additive_lr
        if kind == "rank":
            return self.rank_epochs, self.rank_lr
        return self.epochs, self.lr


def _config_for(config: SyntheticConfig, seed: int, select: str, loss: str = "pair_bce", *,
                kind: str = "bilinear") -> TrainConfig:
    epochs, lr = config.settings(kind)
    return TrainConfig(epochs=epochs, batch_size=config.batch_size, lr=lr, weight_decay=config.weight_decay,
                       seed=seed, loss=loss, select=select)


def _probe_data(sample: gen.PairSample, name: str) -> ProbeData:
    n = len(sample.labels)
    pairs = np.stack([np.arange(n), np.arange(n)], axis=1)
    return ProbeData(sample.image_features, sample.text_features, pairs=pairs, labels=sample.labels, name=name)


def _splits(make: Callable[[int], gen.PairSample], config: SyntheticConfig, name: str
            ) -> tuple[ProbeData, ProbeData, ProbeData]:
    """Independent train / validation / test draws of ``make(pairs_per_class)``."""
    return (_probe_data(make(config.n_train), f"{name}/train"), _probe_data(make(config.n_val), f"{name}/val"),
            _probe_data(make(config.n_test), f"{name}/test"))


def _auroc(kind: str, data: Sequence[ProbeData], config: SyntheticConfig, seed: int, rank: int | None = None,
           *, rank_control: bool = False) -> tuple[float, Any]:
    train, val, test = data
    result = fit_probe(kind, train, val, _config_for(config, seed, "auroc", kind="rank" if rank_control else kind),
                       rank=rank)
    return evaluate_auroc(result.scorer, test), result.scorer


def seed_results(seed: int, config: SyntheticConfig | None = None) -> list[dict[str, Any]]:
    """All rows for one seed: dicts with diagnostic, probe, metric, value, expected."""
    config = config or SyntheticConfig()
    rows: list[dict[str, Any]] = []

    def add(diagnostic: str, probe: str, metric: str, value: float, expected: str) -> None:
        rows.append({"diagnostic": diagnostic, "probe": probe, "metric": metric, "value": float(value),
                     "expected": expected})

    # 1 + 2 + Table 8 share one generator: the same coupling A, with and without the marker.
    rng = np.random.default_rng([seed, 1])
    a = gen.coupling(rng, config.dim, np.full(4, config.interaction_strength))
    marker = rng.standard_normal(config.dim)
    clean = _splits(lambda n: gen.interaction_sample(rng, n, a), config, "pure_interaction")
    for kind, label in (("image", "image-only"), ("text", "text-only"), ("additive", "additive"),
                        ("bilinear", "bilinear")):
        value, _ = _auroc(kind, clean, config, seed)
        add("pure_interaction", label, "auroc", value, "> 0.5" if kind == "bilinear" else "≈ 0.5")

    shortcut = tuple(
        # pair data from _probe_data always carries its labels
        _probe_data(gen.inject_shortcut(gen.PairSample(d.image_features, d.text_features, cast(np.ndarray, d.labels)), marker,
                                        config.shortcut_delta), d.name.replace("pure_interaction", "shortcut"))
        for d in clean
    )
    cycles_data = []
    for part, n in (("train", config.n_train), ("val", config.n_val), ("test", config.n_test)):
        x, y = gen.coupled_pairs(rng, 2 * n, a)
        cycles_data.append(ProbeData(x, y, cycles=gen.pair_cycles(2 * n), name=f"cycles/{part}"))
    shortcut_probes = {}
    for kind, label in (("image", "image-only"), ("text", "text-only"), ("additive", "additive")):
        value, shortcut_probes[label] = _auroc(kind, shortcut, config, seed)
        add("marginal_shortcut", label, "auroc", value, "≈ 0.5" if kind == "image" else "≈ 1.0")
    for label, scorer in shortcut_probes.items():
        # Table 8 says more than CycleAcc = ½ on average: every single cycle is a tie (|Δ| ≤ tol).
        delta = cycle_contrasts(scorer, cycles_data[2])
        add("exact_cycles", label, "cycle_acc", cycle_acc(delta, DEFAULT_TOL), "= 0.5 exactly")
        add("exact_cycles", label, "tie_rate", float(np.mean(np.abs(delta) <= DEFAULT_TOL)), "= 1 exactly")
    cyc = fit_probe("bilinear", cycles_data[0], cycles_data[1],
                    _config_for(config, seed, "cycle_acc", "cycle", kind="bilinear"))
    add("exact_cycles", "bilinear/cycle", "cycle_acc", evaluate_cycle_acc(cyc.scorer, cycles_data[2]),
        "> 0.5")

    # 3: one coupling over K directions of decaying strength; rank-r probes see at most r of them.
    rng = np.random.default_rng([seed, 3])
    a_rank = gen.coupling(rng, config.dim, np.asarray(config.rank_strengths))
    spread = _splits(lambda n: gen.interaction_sample(rng, n, a_rank), config, "rank_sweep")
    for rank in RANKS:
        value, _ = _auroc("lowrank", spread, config, seed, rank=rank, rank_control=True)
        add("rank_sweep", f"rank {rank}", "auroc", value, "peak mid-rank")

    # 4: the same bilinear probe on bag versus pair-aware features of the same kind of scenes.
    rng = np.random.default_rng([seed, 4])
    for representation, expected in (("bag", "≈ 0.5"), ("pair", "> 0.5")):
        def scenes(n: int, r: str = representation) -> gen.PairSample:
            return gen.binding_scenes(rng, n, noise=config.binding_noise, representation=r)

        data = _splits(scenes, config, "binding")
        value, _ = _auroc("bilinear", data, config, seed)
        add("binding", f"{representation}{'-aware' if representation == 'pair' else ''}", "auroc", value,
            expected)
    return rows


PAPER_PEAK_RANK = max(SYNTHETIC_RANK_PEAK, key=lambda r: SYNTHETIC_RANK_PEAK[r])  # Table 1: rank 8
PAPER_AFTER_RANK = max(SYNTHETIC_RANK_PEAK)  # Table 1: rank 16, lower than the peak
#: the rank control's check (on the mean): the rise of Table 1 up to its peak rank; the peak itself (rank 8 above
#: rank 16) is reported with its spread over seeds (:class:`~vlaudit.results.cycles.RankDifference`), not checked
RANK_PEAK_CHECK = f"rank_mean_rises_to_rank_{PAPER_PEAK_RANK}"


def peak_rank(values: Mapping[int, float]) -> int:
    """The rank with the highest AUROC (the smaller rank on a tie)."""
    return min(values, key=lambda r: (-values[r], r))


def _checks(values: dict[tuple[str, str, str], float], *, mean: bool) -> dict[str, bool]:
    """Whether ``values`` — (diagnostic, probe, metric) → one seed's value or the mean — show the behaviour the
    construction predicts (loose bands, not the paper's numbers). The rank control is checked on the mean only
    (``mean``): Table 1's shape is the mean over seeds peaking at the paper's rank 8 and lower at 16."""
    v = {(d, p): x for (d, p, m), x in values.items() if m != "tie_rate"}
    chance = [v[("pure_interaction", p)] for p in ("image-only", "text-only", "additive")]
    rank = {r: v[("rank_sweep", f"rank {r}")] for r in RANKS}
    marginal = ("image-only", "text-only", "additive")
    below = [r for r in RANKS if r < PAPER_PEAK_RANK]
    rank_check = {RANK_PEAK_CHECK: all(rank[r] < rank[PAPER_PEAK_RANK] for r in below)
                  and rank[PAPER_PEAK_RANK] > rank[min(RANKS)] + 0.03} if mean else {}
    return {
        "pure_interaction_marginals_at_chance": all(abs(x - 0.5) < 0.06 for x in chance),
        "pure_interaction_bilinear_above_chance": v[("pure_interaction", "bilinear")] > 0.6,
        "shortcut_text_and_additive_near_one": min(v[("marginal_shortcut", "text-only")],
                                                   v[("marginal_shortcut", "additive")]) > 0.97,
        **rank_check,
        "binding_bag_at_chance": abs(v[("binding", "bag")] - 0.5) < 0.06,
        "binding_pair_aware_above_chance": v[("binding", "pair-aware")] > 0.6,
        "exact_cycles_additive_exactly_half": all(v[("exact_cycles", p)] == 0.5 for p in marginal)
        and all(values[("exact_cycles", p, "tie_rate")] == 1.0 for p in marginal),
    }


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Temporarily use ``n`` torch CPU threads (None: leave the caller's setting), restoring it afterwards."""
    if n is None:
        yield
        return
    previous = torch.get_num_threads()
    torch.set_num_threads(max(1, int(n)))
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def run_synthetic(seeds: Sequence[int] = CYCLE_SEEDS, out_dir: Path | None = None,
                  config: SyntheticConfig | None = None, *, num_threads: int | None = None) -> SyntheticResult:
    """Run every diagnostic for every seed; return (and write ``out_dir/synthetic.json``) per-row results.

    Result (typed, :class:`~vlaudit.results.cycles.SyntheticResult`): ``seeds``, ``config``, ``rows`` (one
    :class:`~vlaudit.results.cycles.SyntheticRow` per diagnostic, probe and metric: value per seed, mean and
    sample sd across seeds, None for one seed), ``checks`` and ``checks_per_seed`` (a check is true only when it
    holds on the mean and on every seed), ``rank_peaks`` and the probe ``settings``.

    ``num_threads``: torch CPU threads for the duration of the call (restored afterwards); None keeps the
    caller's setting. These matrices are tiny, so 1 thread is fastest: on a loaded 2-core machine the default
    3-seed run took ≈10 s with 1 thread and ≈2 min with 2 (thread hand-off dominates).
    """
    config = config or SyntheticConfig()
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("need at least one seed")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"duplicated seeds: {seeds}")
    with torch_threads(num_threads):
        per_seed = {seed: seed_results(seed, config) for seed in seeds}
    rows: list[SyntheticRow] = []
    for index, template in enumerate(per_seed[seeds[0]]):
        values = {str(seed): float(per_seed[seed][index]["value"]) for seed in seeds}
        mean, sd, _ = mean_sd(values.values())
        assert mean is not None  # every seed has every row
        rows.append(SyntheticRow(diagnostic=str(template["diagnostic"]), probe=str(template["probe"]),
                                 metric=str(template["metric"]), expected=str(template["expected"]),
                                 per_seed=values, mean=mean, sd=sd))
    per_seed_checks = {str(seed): _checks({(str(r["diagnostic"]), str(r["probe"]), str(r["metric"])): float(r["value"])
                                           for r in per_seed[seed]}, mean=False)
                       for seed in seeds}
    mean_checks = _checks({(r.diagnostic, r.probe, r.metric): r.mean for r in rows}, mean=True)
    # A check passes only if it holds for the mean *and* for every seed on its own (the rank control: the mean).
    checks = {name: ok and all(c.get(name, True) for c in per_seed_checks.values())
              for name, ok in mean_checks.items()}
    sweep = [r for r in rows if r.diagnostic == "rank_sweep"]
    rank_of = {r.probe: int(r.probe.split()[1]) for r in sweep}
    by_rank = {rank_of[r.probe]: r for r in sweep}
    rank_peaks = RankPeaks(paper=PAPER_PEAK_RANK, mean=peak_rank({rank_of[r.probe]: r.mean for r in sweep}),
                           per_seed={str(seed): peak_rank({rank_of[r.probe]: r.per_seed[str(seed)] for r in sweep})
                                     for seed in seeds},
                           difference=rank_difference(by_rank[PAPER_PEAK_RANK].per_seed,
                                                      by_rank[PAPER_AFTER_RANK].per_seed))
    result = SyntheticResult(seeds=seeds, config=_config_values(config), rows=rows, checks=checks,
                             checks_per_seed=per_seed_checks, rank_peaks=rank_peaks,
                             settings=synthetic_settings(config))
    if out_dir is not None:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        write_result(out_dir / "synthetic.json", result)
    return result


def _config_values(config: SyntheticConfig) -> dict[str, int | float | list[float]]:
    """The sizes and settings as ``synthetic.json`` writes them (``config``)."""
    return {name: list(value) if isinstance(value, tuple) else value for name, value in asdict(config).items()}


def synthetic_settings(config: SyntheticConfig) -> dict[str, SyntheticProbeSetting]:
    """Epochs and lr per probe kind of the synthetic controls, with the section that states them (None: vlaudit's
    own, the paper states none)."""
    sections = {"image/text-only": ("text", "cycle §E.4"), "additive": ("additive", "cycle §E.4"),
                "rank control": ("rank", "cycle §E.5 (epochs; lr vlaudit's)"), "interaction": ("bilinear", None)}
    out = {}
    for name, (kind, section) in sections.items():
        epochs, lr = config.settings(kind)
        out[name] = SyntheticProbeSetting(epochs=epochs, lr=lr, paper=section)
    return out


def rank_difference(peak: Mapping[str, float], after: Mapping[str, float]) -> RankDifference:
    """AUROC at rank 8 minus rank 16 per seed (``peak``, ``after``: each rank's value per seed), mean, sample
    sd and whether the mean exceeds that sd (:class:`~vlaudit.results.cycles.RankDifference`)."""
    per_seed = {seed: float(peak[seed] - after[seed]) for seed in peak}
    mean, sd, _ = mean_sd(per_seed.values())
    assert mean is not None  # every seed has both ranks
    paper = SYNTHETIC_RANK_PEAK[PAPER_PEAK_RANK] - SYNTHETIC_RANK_PEAK[PAPER_AFTER_RANK]
    return RankDifference(peak=PAPER_PEAK_RANK, after=PAPER_AFTER_RANK, paper=round(paper, 10), per_seed=per_seed,
                          mean=mean, sd=sd, resolved=sd is not None and mean > sd)


def rank_peak_line(result: SyntheticResult) -> str | None:
    """The rank control's peak, said only when it is resolved: 'rank control: rank 8 − rank 16 = +0.0037 ±
    0.0055 over seeds (0: +0.0080, …; paper +0.0083) — inside the spread, so no peak at 8 is claimed; the
    mean's highest rank: 8 (paper: 8); per seed: 0 → 8, 1 → 8, 2 → 16'."""
    peaks = result.rank_peaks
    if peaks is None:
        return None
    per_seed = ", ".join(f"{seed} → {rank}" for seed, rank in peaks.per_seed.items())
    tail = f"the mean's highest rank: {peaks.mean} (paper: {peaks.paper}); per seed: {per_seed}"
    diff = peaks.difference
    if diff is None:
        return f"rank control: {tail}"
    spread = "" if diff.sd is None else f" ± {diff.sd:.4f}"
    values = ", ".join(f"{seed}: {value:+.4f}" for seed, value in diff.per_seed.items())
    verdict = (f"larger than its spread: the peak at {diff.peak} is resolved" if diff.resolved else
               f"inside the spread over seeds, so no peak at {diff.peak} is claimed" if diff.sd is not None else
               "one seed, no spread: no peak is claimed")
    return (f"rank control: rank {diff.peak} − rank {diff.after} = {diff.mean:+.4f}{spread} over seeds ({values}; "
            f"paper {diff.paper:+.4f}) — {verdict}; {tail}")


def table_rows(result: SyntheticResult) -> list[list[object]]:
    """Rows for the console table: diagnostic, probe, metric, mean, sd, expected."""
    short = {"auroc": "AUROC", "cycle_acc": "CycleAcc", "tie_rate": "ties"}
    return [[r.diagnostic, r.probe, short.get(r.metric, r.metric), r.mean, r.sd, r.expected] for r in result.rows]
