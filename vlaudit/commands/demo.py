"""``vlaudit demo``: the offline known-answer run of both audits on models with planted behaviour."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

import vlaudit
from vlaudit.commands._apps import app
from vlaudit.commands._options import out_folder_option
from vlaudit.commands._render import print_table
from vlaudit.errors import EXIT_CHECK_FAILED


def rich_bars(progress: Progress) -> Callable[[str, int], Callable[[int], None]]:
    """``bars(description, total)`` → ``advance(n)`` on a rich Progress; a finished bar becomes one log line."""
    def bars(description: str, total: int) -> Callable[[int], None]:
        task = progress.add_task(description, total=max(1, total))
        started = time.perf_counter()
        done = [0]

        def advance(n: int) -> None:
            done[0] += n
            progress.advance(task, n)
            if done[0] >= total:
                seconds = time.perf_counter() - started
                progress.update(task, visible=False)
                rate = f"{done[0] / seconds:.0f} items/s" if seconds > 0 else ""
                progress.console.print(f"  [dim]{description}: {done[0]} items in {seconds:.1f} s ({rate})[/]")

        return advance

    return bars


def progress_display(console: Console) -> Progress:
    """A rich Progress with description, bar, done/total, items/s and elapsed time."""
    class Speed(ProgressColumn):
        def render(self, task: Task) -> Text:
            return Text(f"{task.speed:.1f} items/s" if task.speed else "", style="cyan")

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), Speed(),
                    TimeElapsedColumn(), console=console)


@app.command("demo")
def demo(
    out: Path = out_folder_option(Path("runs/demo"), help="Output folder."),
    quick: bool = typer.Option(False, "--quick", help="A smaller run (one seed, fewer scenes; what the tests use)."),
    seed: int = typer.Option(0, "--seed", min=0, help="First demo seed (scenes, cycles, splits, probes)."),
    model: list[str] = typer.Option([], "--model", help="A model to audit beside the reference ones (repeatable): "
                                    "a dual encoder (open_clip:…, hf-clip:…) on the cycles, a multimodal LLM "
                                    "(hf:…) in the VCA stage (default: the reference models only)."),
) -> None:
    """Known-answer demo: synthetic controls, exact cycles on procedural scenes for the planted reference
    encoders (zero-shot, additive, rank-R probes, rank sweep), the VCA stage, checks, report. Exits 1 if a
    known-answer check fails."""
    kinds = {spec: vlaudit.backend_kind(spec) for spec in model}  # an unknown prefix fails here, before any work
    console = Console()
    config = vlaudit.DemoConfig.quick_config() if quick else vlaudit.DemoConfig()
    config = config.with_seed(seed)
    if model:
        config = dataclasses.replace(config, models=tuple(s for s in model if kinds[s] == "features"),
                                     vca_models=tuple(s for s in model if kinds[s] == "yesno"))
    with progress_display(console) as progress:
        summary = vlaudit.run_demo(out, config, log=lambda message: progress.console.print(f"[bold cyan]›[/] {message}"),
                                         bars=rich_bars(progress))
    probe = f"probe-rank-{config.probe_rank}"
    rows = []
    for spec, entry in summary.cycles.encoders.items():
        zero_shot = entry.scorers.get("zero-shot")
        for family in zero_shot.families if zero_shot else {}:
            rows.append([spec.removeprefix("ref:"), family] + [_test_acc(entry.scorers.get(s), family)
                                                               for s in ("additive", "zero-shot", probe)])
    # one table at 80 columns: the probe's column is named in the title, not by its long scorer name
    print_table(f"Exact CycleAcc, test split (mean over seeds; probe = {probe})",
                ["encoder", "family", "additive", "zero-shot", "probe"], rows, identifiers=2)
    checks = [[row.check, "pass" if row.passed else "FAIL", row.expected, observed_text(row.observed)]
              for row in summary.known_answers]
    print_table("Known answers", ["check", "result", "expected", "observed"], checks)
    console.print(f"\nResults are in [bold]{out}[/]: summary.json" + "".join(f", {p}" for p in summary.files.values()))
    failed = [row.check for row in summary.known_answers if not row.passed]
    if failed:
        console.print(f"[bold red]{len(failed)} known-answer check(s) failed:[/] " + "; ".join(failed))
        raise typer.Exit(EXIT_CHECK_FAILED)
    console.print(f"[bold green]Demo finished: all {len(checks)} known-answer checks passed.[/]")


def _test_acc(scorer: vlaudit.DemoScorer | None, family: str) -> float | None:
    """The scorer's test-split CycleAcc on ``family`` (None when it has no such cell)."""
    cell = None if scorer is None else scorer.families.get(family, {}).get("test")
    return None if cell is None else cell.cycle_acc


#: how the demo's known-answer checks name the numbers they observe (VCA's own abbreviations)
OBSERVED_NAMES = {"acc": "Acc", "dep": "Dep", "dcc": "D-CC", "cu": "C-U", "delta_v_mean": "mean Δ_V",
                  "responsive_share": "responsive share", "ratio_to_grounded": "ratio to grounded's"}


def observed_text(observed: object) -> str:
    """What a known-answer check observed, as a reader writes it: a number with 4 decimals, an interval as
    ``[low, high]`` after the value it belongs to, named numbers as ``D-CC 0.4133 [0.3333, 0.4867]``
    (not a raw dict); a flag or a text as it is."""
    def number(value: object) -> str:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return str(value)
        return f"{value:.4f}"

    def interval(value: object) -> str:
        return "[" + ", ".join(number(v) for v in value) + "]" if isinstance(value, list | tuple) else number(value)

    if isinstance(observed, dict):
        parts: list[str] = []
        for key, value in observed.items():
            if key == "ci" and parts:
                parts[-1] += f" {interval(value)}"
            else:
                parts.append(f"{OBSERVED_NAMES.get(key, key.replace('_', ' '))} {interval(value)}")
        return ", ".join(parts)
    if isinstance(observed, list | tuple):
        return interval(observed)
    return "—" if observed is None else number(observed)
