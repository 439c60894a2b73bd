"""``vlaudit data vsr-wording`` and ``vlaudit vca wording``: the fixed-200 VSR wording diagnostics (VCA §18).

Build the 200 stratified VSR rows × three wordings, score them with ``vca score`` (and the canonical items
again with ``--system qwen-neutral`` for the System row), then compare each wording with the canonical one.
"""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import data_app, vca_app
from vlaudit.commands._options import out_file_option, out_folder_option
from vlaudit.commands._say import say
from vlaudit.settings import WORDING_ITEMS_PER_DIRECTION, WORDING_SEED


def _pct(value: object) -> str:
    """A headline cell as percent; — when not computable."""
    return f"{100 * value:.2f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "—"


@data_app.command("vsr-wording")
def data_vsr_wording(
    split_file: Path = typer.Argument(..., help="VSR split (jsonl), random or zero-shot."),
    out: Path = out_file_option(help="ITEMS table to write (.jsonl or .parquet): three items per drawn row."),
    per_direction: int = typer.Option(WORDING_ITEMS_PER_DIRECTION, "--per-direction", min=1,
                                      help="Rows drawn per direction (above, below, left, right); 50 = the "
                                           "paper's 200."),
    seed: int = typer.Option(WORDING_SEED, "--seed", min=0, help="Seed of the draw (vlaudit's; the paper gives none)."),
    image_prefix: str = typer.Option("", "--image-prefix", help="Prefix added to each image file name."),
) -> None:
    """The fixed-200 VSR wording items (§18): stratified rows, canonical wording plus two synonyms each."""
    result = vlaudit.build_wording_items(split_file, out=out, per_direction=per_direction, seed=seed,
                                         image_prefix=image_prefix)
    for row in result.rows:
        say(f"{row['direction']}: {row['rows']} rows → {row['items']} items")
    say("wordings and the draw are vlaudit's (the paper names neither); the System row scores the canonical "
        "items with `vca score --system qwen-neutral`")
    say(f"wrote {out}")


@vca_app.command("wording")
def vca_wording(
    run_dirs: list[Path] = typer.Argument(..., metavar="RUN", help="`vca score` folders or margins files over "
                                                                  "the wording items (one per model)."),
    items: Path = typer.Option(..., "--items", help="The wording ITEMS (`vlaudit data vsr-wording`)."),
    system_runs: list[Path] = typer.Option(None, "--system-run",
                                           help="A run of the canonical items under another system message "
                                                "(e.g. --system qwen-neutral); repeat per model."),
    out: Path = out_folder_option(help="Output folder (wording.json, wording.csv)."),
    interface: str = typer.Option("yesno", "--interface", help="Answer interface to analyse."),
) -> None:
    """Acc, D-CC and Pred./Credit agreement of each wording with the canonical one (§18)."""
    result = vlaudit.wording_diagnostics(run_dirs, items=items, system_runs=system_runs or None, out=out,
                                         interface=interface)
    say("Wording diagnostics (VCA §18; %; Pred./Credit: agreement with the canonical wording)")
    for row in result.rows:
        say(f"  {row['form']} {row['model']} · n {row['n']} · Acc {_pct(row['acc'])} · D-CC {_pct(row['dcc'])}"
            f" · Pred. {_pct(row['pred'])} · Credit {_pct(row['credit'])}")
    say(f"wrote {out}/wording.json and {out}/wording.csv")
