"""``vlaudit experiment diagnostics|rank-sweep|oe|transfer``: the cycle-paper experiments (§5.2–5.6).

Thin shells over :mod:`vlaudit.analysis.cycles.diagnostics`, ``cycle_rank_sweep``, ``cycle_oe`` and
``cycle_transfer``. Inputs, shared by all four: one cycles file per seed (``--cycles``, repeated in ``--seeds``
order) or a build command's arguments (``--build "coco --instances … --splits train=0.6,val=0.2,test=0.2"``,
run once per seed with ``--seed S``), and frozen features (``--features DIR`` from ``vlaudit features``, or
``--model SPEC --images DIR`` to extract them here once for all seeds). ``--min-cycles`` (default 30) applies the
per-family minimum of §D.5 to each seed's validation cycles. Probe settings per kind default to the paper's
(:mod:`vlaudit.settings`: §E.3 interaction probes, §E.4 additive audit and shortcut probes) and are written to
the run's JSON as ``probe_settings``. Every run's JSON also sorts its settings into the paper's, departures
from the paper and vlaudit's own (``settings``) and records each seed's cycle build (``cycle_builds``: the
pool seed and the split seed); the console prints the departures and vlaudit's own settings.
"""

from __future__ import annotations

import shlex
import textwrap
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from typer.main import get_command

import vlaudit
from vlaudit import settings as paper
from vlaudit.commands._apps import app, experiment_app
from vlaudit.commands._options import out_folder_option
from vlaudit.commands._render import print_table
from vlaudit.commands._say import say
from vlaudit.commands.synthetic import parse_seeds
from vlaudit.errors import EXIT_CHECK_FAILED

_CTX = {"allow_extra_args": True, "ignore_unknown_options": True}
_OUT = out_folder_option(help="Output folder: JSON, CSV, PNG (and built cycles/features).")
_SEEDS = typer.Option(None, "--seeds", show_default=False, help="Seeds: '--seeds 0 1 2' or '0,1,2' (default 0 1 2, §E.3); "
                                                               "each runs on its own cycle split.")
_CYCLES = typer.Option(None, "--cycles", help="Cycles file of one seed; repeat once per seed, in --seeds order "
                                            "(default: none; give --cycles or --build).")
_BUILD = typer.Option(None, "--build", help="Arguments of 'vlaudit cycles build …' (without --seed/--out), run once "
                                            "per seed, e.g. \"coco --instances I.json --captions C.json --splits "
                                            "train=0.6,val=0.2,test=0.2\" (default: none; give --cycles or --build).")
_TEST_CYCLES = typer.Option(None, "--test-cycles", help="The paper's COCO protocol: the test cycles file of one "
                                                      "seed (a val2017 build with --splits test), beside its "
                                                      "--cycles (train/val from train2017); repeat per seed.")
_TEST_BUILD = typer.Option(None, "--test-build", help="The paper's COCO protocol: arguments of 'vlaudit cycles build "
                                                    "coco …' for the test split (val2017, --splits test; without "
                                                    "--seed/--out/--validation-from), run per seed with "
                                                    "--validation-from that seed's --build/--cycles metadata.")
_TEST_IMAGES = typer.Option(None, "--test-images", help="Images folder of the test builds (default: --images).")
_FEATURES = typer.Option(None, "--features", help="Features folder (vlaudit features) covering every seed's cycles "
                                                  "(default: none; give --features or --model).")
_MODEL = typer.Option(None, "--model", help="Dual encoder to extract the features here (default: none; give --features "
                                            "or --model).")
_IMAGES = typer.Option(None, "--images", help="Images folder (with --model; default: none).")
_FAMILIES = typer.Option(None, "--families", help="Comma-separated families (default: all in the cycles).")
_EPOCHS = typer.Option(paper.PROBE_EPOCHS, "--epochs", min=1, help="Interaction probe epochs (§E.3: 8).")
_BATCH = typer.Option(paper.PROBE_BATCH_SIZE, "--batch-size", min=1,
                      help="Cycles or pairs per step (§E.3: 512); smaller on a training set of fewer than "
                           "batch × ⌈min-steps / epochs⌉ units, so a probe takes --min-steps steps (continuous in "
                           "the set's size; each probe's batch and steps are in probe_runs).")
_LR = typer.Option(paper.PROBE_LR, "--lr", min=0.0, help="AdamW learning rate of the interaction probes (§E.3: 1e-3).")
_WD = typer.Option(paper.PROBE_WEIGHT_DECAY, "--weight-decay", min=0.0, help="AdamW weight decay (§E.3: 1e-4).")
_RANK = typer.Option(paper.PROBE_RANK, "--rank", min=1, help="Rank of the low-rank bilinear probe (§5: 64).")
_ADDITIVE_EPOCHS = typer.Option(paper.ADDITIVE_PROBE_EPOCHS, "--additive-epochs", min=1,
                                help="Epochs of the additive audit probe (§E.4: 5).")
_SHORTCUT_EPOCHS = typer.Option(paper.SHORTCUT_PROBE_EPOCHS, "--shortcut-epochs", min=1,
                                help="Epochs of the text-only and image-only shortcut probes (§E.4: 50).")
_SHORTCUT_LR = typer.Option(paper.SHORTCUT_PROBE_LR, "--shortcut-lr", min=0.0,
                            help="Learning rate of the shortcut probes (§E.4: 1e-2).")
_MIN_STEPS = typer.Option(paper.MIN_OPTIMISER_STEPS, "--min-steps", min=0,
                          help="Fewest optimiser steps per probe: a smaller training set gets a smaller batch "
                               "(vlaudit's, not a paper setting; 0 = always --batch-size).")
_THREADS = typer.Option(1, "--threads", min=1, help="torch CPU threads (small probes: 1 is fastest; not a paper setting).")
_DEVICE = typer.Option("cpu", "--device", help="Probe device (cpu is bit-deterministic per seed; not a paper setting).")
_SPLITS = typer.Option("train,val,test", "--split-names", help="Names of the train, val and test splits (not a paper setting).")
_MIN_CYCLES = typer.Option(paper.MIN_CYCLES, "--min-cycles", min=1,
                           help="Per seed, a family with fewer validation cycles than this (or no train or test "
                                "cycle) is withdrawn whole and reported as unavailable with its counts (§D.5: 30).")


def _seeds(ctx: typer.Context, seeds: str | None) -> list[int]:
    extra = list(ctx.args)
    stray = [a for a in extra if a.startswith("-") and not a.lstrip("-").isdigit()]
    if stray:
        raise typer.BadParameter(f"unknown option(s) {' '.join(stray)}")
    return parse_seeds(seeds, extra)


def _build_cycles(build: str, seeds: list[int], out: Path, *, suffix: str = "",
                  validation_from: dict[int, Path] | None = None) -> dict[int, Path]:
    """Run the named ``cycles build`` command once per seed into OUT/cycles/seedS{suffix}.jsonl (a test build:
    with ``--validation-from`` the seed's train build's metadata)."""
    args = shlex.split(build)
    banned = ("--seed", "--out") + (("--validation-from",) if validation_from is not None else ())
    if any(a in banned or a.startswith(tuple(f"{b}=" for b in banned)) for a in args):
        raise typer.BadParameter(f"{'--test-build' if validation_from is not None else '--build'} must not set "
                                 f"{', '.join(banned)} (the experiment sets them per seed)")
    command = get_command(app)
    paths = {}
    for seed in seeds:
        path = out / "cycles" / f"seed{seed}{suffix}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        extra = [] if validation_from is None else ["--validation-from", str(sidecar_meta(validation_from[seed]))]
        code = command.main(["cycles", "build", *args, "--seed", str(seed), "--out", str(path), *extra],
                            prog_name="vlaudit", standalone_mode=False)
        if code not in (None, 0):
            raise typer.Exit(int(code))
        paths[seed] = path
    return paths


def sidecar_meta(cycles: Path) -> Path:
    """The ``CYCLES.meta.json`` a ``cycles build`` writes beside ``cycles`` (``seed0.jsonl`` → ``seed0.meta.json``)."""
    stem = cycles.name[: -len(cycles.suffix)] if cycles.suffix else cycles.name
    return cycles.with_name(f"{stem}.meta.json")


def _cycles(seeds: list[int], cycles: list[Path] | None, build: str | None, features: Path | None,
            model: str | None, images: Path | None, out: Path, test_cycles: list[Path] | None = None,
            test_build: str | None = None) -> tuple[dict[int, Path], dict[int, Path] | None]:
    """One cycles file per seed (given, or built here with `cycles build`) and, for the paper's COCO protocol,
    one test cycles file per seed (given, or built here with `cycles build … --validation-from` the seed's
    train build); the usage errors of the feature options are raised before any work starts."""
    if bool(cycles) == bool(build):
        raise typer.BadParameter("give either --cycles (one per seed) or --build")
    if test_cycles and test_build:
        raise typer.BadParameter("give either --test-cycles (one per seed) or --test-build, not both")
    if test_cycles and len(test_cycles) != len(seeds):
        raise typer.BadParameter(f"{len(test_cycles)} --test-cycles files for {len(seeds)} seeds {seeds}: give one "
                                 "per seed")
    if (features is None) == (model is None):
        raise typer.BadParameter("give either --features or --model (with --images)")
    if model is not None and images is None:
        raise typer.BadParameter("--model needs --images")
    if cycles:
        if len(cycles) != len(seeds):
            raise typer.BadParameter(f"{len(cycles)} --cycles files for {len(seeds)} seeds {seeds}: give one per seed")
        paths = dict(zip(seeds, cycles, strict=True))
    else:
        paths = _build_cycles(str(build), seeds, out)
    tests = None
    if test_cycles:
        tests = dict(zip(seeds, test_cycles, strict=True))
    elif test_build:
        tests = _build_cycles(test_build, seeds, out, suffix=".test", validation_from=paths)
    return paths, tests


def _config(epochs: int, batch_size: int, lr: float, weight_decay: float, rank: int, device: str, split_names: str,
            min_cycles: int, **probe_kinds: Any) -> vlaudit.ExperimentConfig:
    if not lr > 0 or weight_decay < 0 or not probe_kinds.get("shortcut_lr", 1.0) > 0:
        raise typer.BadParameter(f"need --lr > 0, --shortcut-lr > 0 and --weight-decay ≥ 0, got {lr}, "
                                 f"{probe_kinds.get('shortcut_lr')} and {weight_decay}")
    names = [s.strip() for s in split_names.split(",")]
    if len(names) != 3 or not all(names) or len(set(names)) != 3:
        raise typer.BadParameter("--split-names takes three distinct names: train,val,test")
    return vlaudit.ExperimentConfig(epochs=epochs, batch_size=batch_size, lr=lr, weight_decay=weight_decay, rank=rank,
                                   device=device, train_split=names[0], val_split=names[1], test_split=names[2],
                                   min_cycles=min_cycles, **probe_kinds)


def _families(value: str | None) -> list[str] | None:
    return [f.strip() for f in value.split(",") if f.strip()] if value else None


def _print(title: str, columns: list[str], rows: list[list[Any]]) -> None:
    """The shared console table (``commands._render.print_table``): the first column (family / protocol names)
    stays whole and a value never breaks across rows; a table too wide for the terminal prints one block per
    row. Cells are preformatted text."""
    print_table(title, columns, rows)


def _finish(title: str, run: vlaudit.ExperimentRun) -> None:
    result = run.result
    _print(title, *run.table)
    if run.unavailable is not None:
        _print(f"Unavailable: fewer than {result.min_cycles} validation cycles, or none in train or test "
               "(withdrawn in that seed, §D.5)", *run.unavailable)
    settings = result.probe_settings
    lines = ["probe settings: " + "; ".join(f"{kind} {v.epochs} epochs, lr {v.lr:g} ({v.paper})"
                                            for kind, v in settings.items())] if settings else []
    lines += run.settings
    for line in [*lines, *run.notes]:
        say(textwrap.fill(line, width=80))
    for name, path in result.files.items():
        say(f"wrote {name}: {path}")
    audit = run.additive_audit
    if audit is not None and not audit.ok:
        failures = "; ".join(f"seed {f.seed} {f.family} {f.probe}: CycleAcc {f.cycle_acc}, tie rate {f.tie_rate}"
                             for f in audit.failures[:5])
        Console(stderr=True).print(f"[bold red]ADDITIVE AUDIT FAILED: image-only/text-only/additive probes must score "
                                   f"exactly 0.5 with tie rate 1 on exact cycles; failures: {failures}. "
                                   "The cycles are not complete balanced blocks, or scores are not float64.[/]")
        raise typer.Exit(EXIT_CHECK_FAILED)


@experiment_app.command("diagnostics", context_settings=_CTX)
def diagnostics(ctx: typer.Context, out: Path = _OUT, seeds: str | None = _SEEDS, cycles: list[Path] = _CYCLES,
                build: str | None = _BUILD, test_cycles: list[Path] = _TEST_CYCLES,
                test_build: str | None = _TEST_BUILD, test_images: Path | None = _TEST_IMAGES,
                features: Path | None = _FEATURES, model: str | None = _MODEL,
                images: Path | None = _IMAGES, families: str | None = _FAMILIES, epochs: int = _EPOCHS,
                batch_size: int = _BATCH, lr: float = _LR, weight_decay: float = _WD, rank: int = _RANK,
                threads: int = _THREADS, device: str = _DEVICE, split_names: str = _SPLITS,
                min_cycles: int = _MIN_CYCLES, additive_epochs: int = _ADDITIVE_EPOCHS,
                shortcut_epochs: int = _SHORTCUT_EPOCHS, shortcut_lr: float = _SHORTCUT_LR,
                min_steps: int = _MIN_STEPS) -> None:
    """Table 2/8: additive column (must be exactly 0.5), zero-shot cosine, diagonal, bilinear, rank-r probes."""
    seed_list = _seeds(ctx, seeds)
    config = _config(epochs, batch_size, lr, weight_decay, rank, device, split_names, min_cycles,
                     additive_epochs=additive_epochs, shortcut_epochs=shortcut_epochs, shortcut_lr=shortcut_lr,
                     min_steps=min_steps)
    paths, tests = _cycles(seed_list, cycles, build, features, model, images, out, test_cycles, test_build)
    run = vlaudit.run_experiment("diagnostics", paths, config=config, out=out, features=features, model=model,
                                 images=images, families=_families(families), threads=threads, log=say,
                                 test_cycles=tests, test_images=test_images)
    audit = run.additive_audit
    assert audit is not None  # diagnostics always audits its additive column
    if run.shortcut_table is not None:
        _print(f"Shortcut probes (§E.4, Table 8): pair AUROC on ordinary {config.test_split} pairs with "
               "shortcut-bearing negatives, beside exact CycleAcc", *run.shortcut_table)
    _finish(f"Exact-cycle diagnostics — CycleAcc on {config.test_split} cycles, mean ± sd over seeds "
            f"{', '.join(map(str, seed_list))}", run)
    say(f"additive audit: {audit.checked} probe × family × seed cells, all exactly 0.5 with tie rate 1")


@experiment_app.command("rank-sweep", context_settings=_CTX)
def rank_sweep(ctx: typer.Context, out: Path = _OUT, seeds: str | None = _SEEDS, cycles: list[Path] = _CYCLES,
               build: str | None = _BUILD, test_cycles: list[Path] = _TEST_CYCLES,
                test_build: str | None = _TEST_BUILD, test_images: Path | None = _TEST_IMAGES,
                features: Path | None = _FEATURES, model: str | None = _MODEL,
               images: Path | None = _IMAGES, families: str | None = _FAMILIES,
               ranks: str = typer.Option("1,2,4,8,16,32,64", "--ranks", help="Comma-separated ranks (§5 / Table 3: 1,2,4,8,16,32,64)."),
               epochs: int = _EPOCHS, batch_size: int = _BATCH, lr: float = _LR, weight_decay: float = _WD,
               threads: int = _THREADS, device: str = _DEVICE, split_names: str = _SPLITS,
               min_cycles: int = _MIN_CYCLES, additive_epochs: int = _ADDITIVE_EPOCHS,
               min_steps: int = _MIN_STEPS) -> None:
    """Table 3 / Fig. 2: CycleAcc of rank-r bilinear probes per family; the additive line at exactly ½."""
    seed_list = _seeds(ctx, seeds)
    try:
        rank_list = [int(r) for r in ranks.split(",") if r.strip()]
    except ValueError:
        raise typer.BadParameter(f"ranks must be integers, got {ranks!r}", param_hint="--ranks") from None
    if not rank_list or min(rank_list) < 1:
        raise typer.BadParameter("ranks must be ≥ 1", param_hint="--ranks")
    config = _config(epochs, batch_size, lr, weight_decay, max(rank_list), device, split_names, min_cycles,
                     additive_epochs=additive_epochs, min_steps=min_steps)
    paths, tests = _cycles(seed_list, cycles, build, features, model, images, out, test_cycles, test_build)
    run = vlaudit.run_experiment("rank-sweep", paths, config=config, out=out, features=features, model=model,
                                 images=images, families=_families(families), ranks=rank_list, threads=threads,
                                 log=say, test_cycles=tests, test_images=test_images)
    _finish(f"Rank sweep — CycleAcc on {config.test_split} cycles, mean ± sd over seeds "
            f"{', '.join(map(str, seed_list))}", run)


@experiment_app.command("oe", context_settings=_CTX)
def oe(ctx: typer.Context, out: Path = _OUT, seeds: str | None = _SEEDS, cycles: list[Path] = _CYCLES,
       build: str | None = _BUILD, test_cycles: list[Path] = _TEST_CYCLES,
                test_build: str | None = _TEST_BUILD, test_images: Path | None = _TEST_IMAGES,
                features: Path | None = _FEATURES, model: str | None = _MODEL,
       images: Path | None = _IMAGES,
       marked_features: Path | None = typer.Option(
           None, "--marked-features", help="Features folder holding the marked captions (matched by content: "
                                           "sha256 of MARKER + caption); default: in --features, or encoded by --model."),
       families: str | None = _FAMILIES, epochs: int = _EPOCHS, batch_size: int = _BATCH, lr: float = _LR,
       weight_decay: float = _WD, rank: int = _RANK, threads: int = _THREADS, device: str = _DEVICE,
       split_names: str = _SPLITS, min_cycles: int = _MIN_CYCLES, shortcut_epochs: int = _SHORTCUT_EPOCHS,
       shortcut_lr: float = _SHORTCUT_LR, min_steps: int = _MIN_STEPS) -> None:
    """Tables 4 and 7: Shortcut OE (marked negatives, AUROC-selected) vs Cycle OE vs four-entry BCE vs text-only."""
    seed_list = _seeds(ctx, seeds)
    config = _config(epochs, batch_size, lr, weight_decay, rank, device, split_names, min_cycles,
                     shortcut_epochs=shortcut_epochs, shortcut_lr=shortcut_lr, min_steps=min_steps)
    paths, tests = _cycles(seed_list, cycles, build, features, model, images, out, test_cycles, test_build)
    run = vlaudit.run_experiment("oe", paths, config=config, out=out, features=features, model=model, images=images,
                                 marked_features=marked_features, families=_families(families), threads=threads,
                                 log=say, test_cycles=tests, test_images=test_images)
    assert run.seed_table is not None  # the OE reports each seed (Table 7)
    _print(f"Per seed (Table 7): exact CycleAcc on unmarked {config.test_split} cycles", *run.seed_table)
    _finish(f"Shortcut-contaminated OE (Table 4) — rank {rank} + additive heads, mean ± sd over seeds", run)


@experiment_app.command("transfer", context_settings=_CTX)
def transfer(ctx: typer.Context, out: Path = _OUT, seeds: str | None = _SEEDS, cycles: list[Path] = _CYCLES,
             build: str | None = _BUILD, test_cycles: list[Path] = _TEST_CYCLES,
                test_build: str | None = _TEST_BUILD, test_images: Path | None = _TEST_IMAGES,
                features: Path | None = _FEATURES, model: str | None = _MODEL,
             images: Path | None = _IMAGES, families: str | None = _FAMILIES, epochs: int = _EPOCHS,
             batch_size: int = _BATCH, lr: float = _LR, weight_decay: float = _WD, rank: int = _RANK,
             threads: int = _THREADS, device: str = _DEVICE, split_names: str = _SPLITS,
             min_cycles: int = _MIN_CYCLES, min_steps: int = _MIN_STEPS) -> None:
    """§5.6: rank-r probe trained on family i, exact CycleAcc on family j; alignment (val) vs transfer (test)."""
    seed_list = _seeds(ctx, seeds)
    config = _config(epochs, batch_size, lr, weight_decay, rank, device, split_names, min_cycles,
                     min_steps=min_steps)
    paths, tests = _cycles(seed_list, cycles, build, features, model, images, out, test_cycles, test_build)
    run = vlaudit.run_experiment("transfer", paths, config=config, out=out, features=features, model=model,
                                 images=images, families=_families(families), threads=threads, log=say,
                                 test_cycles=tests, test_images=test_images)
    _finish(f"Transfer — rank-{rank} probes, CycleAcc on {config.test_split} cycles; alignment on "
            f"{config.val_split} cycles", run)
    say(f"correlation(alignment, transfer) within seed: {run.correlation_per_seed}; mean ± sd {run.correlation}")
