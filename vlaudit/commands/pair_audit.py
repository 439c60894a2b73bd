"""``vlaudit cycles audit-pairs``: how far a labelled pair benchmark is from exact cycles (marginal TVs,
signed degrees, completable cycles; :mod:`vlaudit.metrics.pair_audit`)."""

from __future__ import annotations

from pathlib import Path

import typer

from vlaudit.commands._apps import cycles_app
from vlaudit.commands._options import out_folder_option


@cycles_app.command("audit-pairs")
def audit_pairs(
    pairs: list[Path] = typer.Argument(..., help="Labelled pair files (SugarCrepe JSON, What's Up JSON, a cycles "
                                                 "file, or a table with image_id, caption_id|caption, label)."),
    out: Path = out_folder_option(help="Folder for audit_pairs.json and audit_pairs.csv."),
    fmt: str = typer.Option("auto", "--format", help="auto, table, sugarcrepe, whatsup-controlled, "
                                                     "whatsup-spatial or cycles (one for all files)."),
) -> None:
    """Image/caption/length TV between positives and negatives, signed-degree imbalance, exact-cycle completion."""
    from vlaudit.metrics.pair_audit import audit_pairs as audit
    from vlaudit.report.console import print_table
    from vlaudit.sources.labelled_pairs import read_labelled_pairs
    from vlaudit.tables import write_json, write_table

    rows = []
    warnings: list[str] = []
    for path in pairs:
        detected, records = read_labelled_pairs(path, fmt, warnings=warnings)
        row = {"file": path.name, "format": detected, **audit(records)}
        if row["labelled_both_ways"]:
            warnings.append(f"{path}: {row['labelled_both_ways']} (image, caption) pair(s) labelled both positive "
                            "and negative")
        rows.append(row)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "audit_pairs.json", {"files": [str(p) for p in pairs], "rows": rows, "warnings": warnings})
    write_table(out / "audit_pairs.csv", rows)

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
    for warning in warnings:
        typer.secho(f"warning: {warning}", fg="yellow", err=True)
    typer.echo(f"wrote {out / 'audit_pairs.json'} and {out / 'audit_pairs.csv'}")
