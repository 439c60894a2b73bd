"""``vlaudit synthetic``: the synthetic controls of the cycle paper (§5.1, Table 1, Table 8)."""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import app
from vlaudit.commands._options import out_folder_option
from vlaudit.commands._render import print_table
from vlaudit.commands._say import say
from vlaudit.settings import CYCLE_SEEDS, SYNTHETIC_INTERACTION_EPOCHS, SYNTHETIC_RANK_EPOCHS

DEFAULT_SEEDS = ",".join(map(str, CYCLE_SEEDS))


def parse_seeds(first: str | None, extra: list[str]) -> list[int]:
    """Seeds from ``--seeds 0 1 2`` (typer keeps the first, the rest arrive as extra args) or ``--seeds 0,1,2``.

    Without ``--seeds`` the default 0, 1, 2 is used and a stray positional argument is an error rather than
    silently becoming an extra seed.
    """
    if first is None:
        if extra:
            raise typer.BadParameter(f"unexpected argument(s) {' '.join(extra)!r}; seeds go after --seeds")
        first = DEFAULT_SEEDS
    tokens = [t for part in [first, *extra] for t in part.replace(",", " ").split()]
    try:
        seeds = [int(t) for t in tokens]
    except ValueError:
        raise typer.BadParameter(f"seeds must be integers, got {' '.join(tokens)!r}", param_hint="--seeds") from None
    if not seeds:
        raise typer.BadParameter("give at least one seed", param_hint="--seeds")
    if min(seeds) < 0:
        raise typer.BadParameter(f"seeds must be non-negative, got {seeds}", param_hint="--seeds")
    if len(set(seeds)) != len(seeds):
        raise typer.BadParameter(f"duplicated seeds {seeds}", param_hint="--seeds")
    return seeds


@app.command("synthetic", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def synthetic(
    ctx: typer.Context,
    out: Path = out_folder_option(help="Output folder (created if needed); synthetic.json is written there."),
    seeds: str | None = typer.Option(None, "--seeds", show_default=False,
                              help="Seeds: '--seeds 0 1 2' or '--seeds 0,1,2' (default: 0 1 2)."),
    n_train: int = typer.Option(2000, "--n-train", min=1, help="Training pairs per class and diagnostic."),
    n_test: int = typer.Option(1000, "--n-test", min=2, help="Test pairs per class (validation: half of this)."),
    epochs: int = typer.Option(SYNTHETIC_INTERACTION_EPOCHS, "--epochs", min=1,
                               help="Training epochs of the interaction probes (bilinear, binding; not a paper "
                                    "setting: the paper states none). The marginal probes train at §E.4's settings."),
    rank_epochs: int = typer.Option(SYNTHETIC_RANK_EPOCHS, "--rank-epochs", min=1,
                                    help="Training epochs of the rank-control probes (cycle §E.5: 40)."),
    threads: int = typer.Option(1, "--threads", min=1, help="torch CPU threads (tiny problems: 1 is fastest)."),
) -> None:
    """Synthetic controls: AUROC of marginal, additive and interaction probes; exact CycleAcc of additive ones."""
    extra = list(ctx.args)
    stray = [a for a in extra if a.startswith("-") and not a.lstrip("-").isdigit()]
    if stray:
        raise typer.BadParameter(f"unknown option(s) {' '.join(stray)}")
    seed_list = parse_seeds(seeds, extra)

    try:
        config = vlaudit.SyntheticConfig(n_train=n_train, n_val=max(2, n_test // 2), n_test=n_test, epochs=epochs,
                                         rank_epochs=rank_epochs)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    run = vlaudit.synthetic_controls(seed_list, config=config, out=out, threads=threads)
    result = run.result
    print_table(f"Synthetic controls — seeds {', '.join(map(str, seed_list))}",
                ["diagnostic", "probe", "metric", "mean", "sd", "expected"], run.rows)
    failed = []
    for name, ok in result.checks.items():
        if not ok:
            seeds_failing = [s for s, checks in result.checks_per_seed.items() if not checks.get(name, True)]
            failed.append(f"{name} (seeds {', '.join(seeds_failing)})" if seeds_failing else f"{name} (mean)")
    say("probe settings: " + "; ".join(f"{kind} {v.epochs} epochs, lr {v.lr:g} "
                                       f"({v.paper or 'not a paper setting'})" for kind, v in result.settings.items()))
    if run.rank_peaks:
        say(run.rank_peaks)
    say("all checks pass on the mean and on every seed (the rank control: on the mean)" if not failed
        else f"checks not met: {'; '.join(failed)}")
    say(f"wrote {out / 'synthetic.json'}")
