"""What a cycle-paper experiment records about its own settings and inputs (cycle paper §D.5, §E.3–§E.5).

Every run's JSON records the probe kinds it trains, every setting sorted into the paper's, departures from the
paper and vlaudit's own, the families the paper does not have, and each seed's cycle build (:func:`cycle_builds`:
the image pool all seeds share and the seed of the splits drawn inside it, §D.5); :func:`settings_lines` prints
it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vlaudit.analysis.cycles.seed_inputs import SeedInputs
from vlaudit.results.cycle_experiments import CycleBuilds, CycleExperimentResult, SeedBuild
from vlaudit.results.cycles import Setting
from vlaudit.results.missing import Missing
from vlaudit.settings import (
    ADDITIVE_PROBE_EPOCHS,
    MIN_CYCLES,
    PROBE_BATCH_SIZE,
    PROBE_EPOCHS,
    PROBE_LR,
    PROBE_RANK,
    PROBE_WEIGHT_DECAY,
    SHORTCUT_PROBE_EPOCHS,
    SHORTCUT_PROBE_LR,
)

# The settings the cycle paper states, with the section: ExperimentConfig.settings_provenance sorts a run's
# settings into the paper's, departures from it and vlaudit's own.
PAPER_VALUES: dict[str, tuple[Setting, str]] = {
    "epochs": (PROBE_EPOCHS, "cycle §E.3"), "batch_size": (PROBE_BATCH_SIZE, "cycle §E.3"),
    "lr": (PROBE_LR, "cycle §E.3"), "weight_decay": (PROBE_WEIGHT_DECAY, "cycle §E.3"),
    "rank": (PROBE_RANK, "cycle §E.3"), "additive_epochs": (ADDITIVE_PROBE_EPOCHS, "cycle §E.4"),
    "shortcut_epochs": (SHORTCUT_PROBE_EPOCHS, "cycle §E.4"), "shortcut_lr": (SHORTCUT_PROBE_LR, "cycle §E.4"),
    "min_cycles": (MIN_CYCLES, "cycle §D.5"),
}


def settings_lines(result: CycleExperimentResult) -> list[str]:
    """Console lines of a run's settings block: which settings depart from the paper and which are vlaudit's
    own, and the image pool the seeds' splits were drawn in."""
    lines = []
    departs = result.settings.departs
    if departs:
        lines.append("departs from the paper: " + "; ".join(
            f"{name} {_setting(cell.value)} (paper {_setting(cell.paper)}, {cell.section})"
            for name, cell in departs.items()))
    own = result.settings.not_in_paper
    if own:
        lines.append("not paper settings (vlaudit's): " + ", ".join(f"{name} {value}" for name, value in own.items()))
    first = next((b for b in result.cycle_builds.per_seed.values() if isinstance(b, SeedBuild)), None)
    if first is not None:
        shared = "shared by every seed" if result.cycle_builds.shared_pool is True else "NOT the same pool in every seed"
        lines.append(f"image pool: {first.images_in_pool} images (pool seed {first.pool_seed}), "
                     f"{shared}; each seed draws its own splits inside it (§D.5)")
    tests = result.cycle_builds.test_per_seed
    if tests:
        built = {seed: b for seed, b in tests.items() if isinstance(b, SeedBuild)}
        where = ", ".join(sorted({b.instances for b in built.values() if b.instances})) or "(not recorded)"
        counted = "; ".join(sorted({b.min_cycles_counted for b in built.values() if b.min_cycles_counted}))
        lines.append(f"test split: a second build per seed (the paper's COCO protocol) from {where}; its minimum "
                     f"counted {counted or '(not recorded)'}")
    unknown = [seed for seed, b in result.cycle_builds.per_seed.items() if isinstance(b, Missing)]
    if unknown:
        reason = result.cycle_builds.per_seed[unknown[0]]
        lines.append(f"cycles build of seed {', '.join(unknown)}: {reason}")
    return lines


def _setting(value: Setting) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


# What a run records of each seed's cycles build (from its CYCLES.meta.json): the pool every seed shares (§D.5)
# and the seed of the splits drawn inside it.
BUILD_PROVENANCE = ("source", "pool_seed", "seed", "max_images", "images_in_pool", "splits", "instances",
                    "min_cycles_counted")


def cycle_builds(inputs: Mapping[int, SeedInputs], seeds: Sequence[int]) -> CycleBuilds:
    """Per seed, how its cycles were built (:data:`BUILD_PROVENANCE`; :class:`Missing` for cycles without a
    metadata file), and whether every seed drew its splits inside one image pool (same pool seed and pool
    size, §D.5)."""
    per_seed: dict[str, Missing | SeedBuild] = {
        str(s): inputs[s].build or Missing("no CYCLES.meta.json beside its cycles file") for s in seeds}
    pools = {(b.source, b.pool_seed, b.max_images, b.images_in_pool)
             for b in per_seed.values() if isinstance(b, SeedBuild)}
    shared = len(pools) == 1 if pools else Missing("no seed's cycles build is known")
    if not any(inputs[s].test_source for s in seeds):
        return CycleBuilds(per_seed=per_seed, shared_pool=shared)
    tests: dict[str, Missing | SeedBuild] = {
        str(s): inputs[s].test_build or Missing("no CYCLES.meta.json beside its test cycles file") for s in seeds}
    files = {str(s): {"train": inputs[s].source, "test": inputs[s].test_source} for s in seeds}
    return CycleBuilds(per_seed=per_seed, shared_pool=shared, test_per_seed=tests, files=files)
