"""``vlaudit cycles audit-pairs``: how far a labelled pair benchmark is from exact cycles (marginal TVs,
signed degrees, completable cycles; :mod:`vlaudit.metrics.pair_audit`)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import cycles_app
from vlaudit.commands._options import out_folder_option
from vlaudit.commands._render import print_table
from vlaudit.commands._say import say, warn


@cycles_app.command("audit-pairs")
def audit_pairs(
    pairs: list[Path] = typer.Argument(..., help="Labelled pair files (SugarCrepe JSON, What's Up JSON, a cycles "
                                                 "file, or a table with image_id, caption_id|caption, label)."),
    out: Path = out_folder_option(help="Folder for audit_pairs.json and audit_pairs.csv."),
    fmt: str = typer.Option("auto", "--format", help="auto, table, sugarcrepe, whatsup-controlled, "
                                                     "whatsup-spatial or cycles (one for all files)."),
    weighting: str = typer.Option("mean", "--weighting", help="Signed weights of the degrees: mean (+1/n_pos, "
                                                              "−1/n_neg: the pooled positive-mean minus "
                                                              "negative-mean comparison, Theorem 1; its "
                                                              "imbalance equals the TV by identity), the only "
                                                              "one: count (±1) only restated the class ratio "
                                                              "and was dropped."),
) -> None:
    """Image/caption/length TV between positives and negatives, signed-degree imbalance per side, exact-cycle
    completion."""
    audit = vlaudit.audit_pair_files(pairs, out=out, fmt=fmt, weighting=weighting)
    rows, warnings = audit.rows, audit.warnings

    def cell(value: object) -> object:
        return "0" if value == 0 else value

    print_table(f"Pair audit: positives vs negatives ({weighting} weighting; exact cycles: all 0)",
                ["file", "+ / −", "TV img", "TV cap", "TV len", "imb img", "imb cap"],
                [[Path(r.file).stem, f"{r.positives}/{r.negatives}", cell(r.tv_image), cell(r.tv_caption),
                  cell(r.tv_caption_length), cell(r.degree_imbalance_image), cell(r.degree_imbalance_caption)]
                 for r in rows], digits=3)
    say(textwrap.fill(
        "+ / −: positive and negative entries; TV: total variation of the image, caption and caption-length "
        f"marginals; imb img / imb cap: signed-degree imbalance of the images / captions, {weighting} weighting "
        "(0: additive scores of that side cancel; 1: none on both sides) — Theorem 1's form of TV img / TV cap, "
        "equal to them by identity", width=80))
    print_table("Exact-cycle completion (exact cycles: every distinct pair)",
                ["file", "positives in cycles", "negatives in cycles"],
                [[Path(r.file).stem, f"{r.positives_in_cycles}/{r.distinct_positives}",
                  f"{r.negatives_in_cycles}/{r.distinct_negatives}"] for r in rows])
    for warning in warnings:
        warn(warning)
    say(f"wrote {out / 'audit_pairs.json'} and {out / 'audit_pairs.csv'}")
