"""``vlaudit report RUN_DIR``: one self-contained ``RUN_DIR/report.html`` from whatever audit outputs it holds."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from vlaudit.commands._apps import app
from vlaudit.commands._lazy import lazy_module
from vlaudit.commands._say import say

# The library, loaded on first use so that `vlaudit --help` stays light; mypy reads the real modules
# (see commands/_lazy.py).
if TYPE_CHECKING:
    import vlaudit.report.html as report_html
else:
    report_html = lazy_module("vlaudit.report.html")


@app.command("report")
def report(
    run_dir: Path = typer.Argument(..., help="A run folder: `vlaudit demo` output, `vca score`/`vca report`/"
                                              "`cycles eval` outputs, or any folder holding them."),
) -> None:
    """Write RUN_DIR/report.html: tables with intervals, plots, galleries and the run manifest, in one file
    that opens offline in any browser (images embedded, no scripts, no network)."""
    say(f"wrote {report_html.write_report(run_dir)}")
