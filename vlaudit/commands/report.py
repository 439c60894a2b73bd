"""``vlaudit report RUN_DIR``: one self-contained ``RUN_DIR/report.html`` from whatever audit outputs it holds."""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import app
from vlaudit.commands._say import say


@app.command("report")
def report(
    run_dir: Path = typer.Argument(..., help="A run folder: `vlaudit demo` output, `vca score`/`vca report`/"
                                              "`cycles eval` outputs, or any folder holding them."),
) -> None:
    """Write RUN_DIR/report.html: tables with intervals, plots, galleries and the run manifest, in one file
    that opens offline in any browser (images embedded, no scripts, no network)."""
    say(f"wrote {vlaudit.write_report(run_dir, require_results=True)}")
