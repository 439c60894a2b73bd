"""``vlaudit demo``: the full offline audit on the embedded default (procedural scenes + reference models)."""

from __future__ import annotations

from pathlib import Path

import typer

from vlaudit.commands._apps import app
from vlaudit.commands._options import out_folder_option


@app.command("demo")
def demo(
    out: Path = out_folder_option(Path("runs/demo"), help="Output folder."),
    quick: bool = typer.Option(False, "--quick", help="A smaller run (what the tests use)."),
    seed: int = typer.Option(0, "--seed", help="Seed of scenes, cycles, splits and contexts."),
) -> None:
    """Synthetic controls, exact cycles (build → audit → score → eval), VCA and the factorial, offline."""
    import dataclasses

    from rich.console import Console

    from vlaudit.experiments.demo import DemoConfig, run_demo
    from vlaudit.report.console import print_table

    console = Console()
    config = dataclasses.replace(DemoConfig.quick() if quick else DemoConfig(), seed=seed)
    summary = run_demo(out, config, log=lambda message: console.print(f"[bold cyan]›[/] {message}"))
    rows = [[f"{name} · {family}", value] for name, families in summary["cycles"]["cycle_acc"].items()
            for family, value in families.items()]
    print_table("Exact CycleAcc, test split (demo scenes)", ["scorer · family", "CycleAcc"], rows)
    console.print(f"\n[bold green]Demo finished.[/] Results are in [bold]{out}[/]:")
    for name, relative in summary["files"].items():
        console.print(f"  {name:<10} {out / relative}")
    console.print(f"  summary    {out / 'summary.json'}")
