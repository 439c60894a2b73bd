"""``vlaudit cycles audit-pairs``: how far a labelled pair benchmark is from exact cycles (marginal TVs,
signed degrees, completable cycles; :mod:`vlaudit.metrics.pair_audit`)."""

from __future__ import annotations

from pathlib import Path

import typer

from vlaudit.commands._apps import cycles_app
from vlaudit.commands._lazy import lazy_module
from vlaudit.commands._options import out_folder_option
from vlaudit.report.console import print_table

# The library, loaded on first use so that `vlaudit --help` stays light (see commands/_lazy.py).
metrics_pair_audit = lazy_module("vlaudit.metrics.pair_audit")
sources_labelled_pairs = lazy_module("vlaudit.sources.labelled_pairs")
tables = lazy_module("vlaudit.tables")


@cycles_app.command("audit-pairs")
def audit_pairs(
    pairs: list[Path] = typer.Argument(..., help="Labelled pair files (SugarCrepe JSON, What's Up JSON, a cycles "
                                                 "file, or a table with image_id, caption_id|caption, label)."),
    out: Path = out_folder_option(help="Folder for audit_pairs.json and audit_pairs.csv."),
    fmt: str = typer.Option("auto", "--format", help="auto, table, sugarcrepe, whatsup-controlled, "
                                                     "whatsup-spatial or cycles (one for all files)."),
) -> None:
    """Image/caption/length TV between positives and negatives, signed-degree imbalance, exact-cycle completion."""
    rows = []
    for path in pairs:
        detected, records = sources_labelled_pairs.read_labelled_pairs(path, fmt)
        rows.append({"file": path.name, "format": detected, **metrics_pair_audit.audit_pairs(records)})
    out.mkdir(parents=True, exist_ok=True)
    tables.write_json(out / "audit_pairs.json", {"files": [str(p) for p in pairs], "rows": rows})
    tables.write_table(out / "audit_pairs.csv", rows)

    def cell(value: object) -> object:
        return "0" if value == 0 else value

    print_table("Pair audit: positives vs negatives (exact cycles: TVs 0, imbalance 0, all in cycles)",
                ["file", "+ / −", "TV img", "TV cap", "TV len", "deg imb", "+ in cyc", "− in cyc"],
                [[Path(r["file"]).stem, f"{r['positives']}/{r['negatives']}", cell(r["tv_image"]), cell(r["tv_caption"]),
                  cell(r["tv_caption_length"]), cell(r["degree_imbalance"]),
                  f"{r['positives_in_cycles']}/{r['distinct_positives']}",
                  f"{r['negatives_in_cycles']}/{r['distinct_negatives']}"] for r in rows], digits=3)
    typer.echo("+ / −: positive and negative entries; TV: total variation of the image, caption and caption-length "
               "marginals; deg imb: signed-degree imbalance (0 = balanced, 1 = no image or caption on both sides); "
               "in cyc: distinct pairs that lie in an exact cycle of the table")
    typer.echo(f"wrote {out / 'audit_pairs.json'} and {out / 'audit_pairs.csv'}")
