"""``vlaudit data edits build|export|import|analyze``: object-swap edits and their blinded annotation (VCA §14–§17).

build → ``DIR/items.jsonl`` (six probes per edit; images relative to ``DIR/images``), ``DIR/edits.csv``,
``DIR/candidates.csv`` (every shuffled source group with its geometry and feasibility), ``DIR/summary.json``.
export → ``DIR/batches/<annotator>/{tasks.csv,images/,INSTRUCTIONS.txt}`` and the private ``DIR/key.csv``.
import → ``DIR/consensus.csv``, ``DIR/summary.json`` and (with ``--items``) ``DIR/accepted_items.jsonl``.
analyze → ``DIR/edit_outcomes.csv``, ``DIR/summary.json``: flip+visibility by source audit stratum.
"""

from __future__ import annotations

from pathlib import Path

import typer

import vlaudit
from vlaudit.commands._apps import data_app, group
from vlaudit.commands._options import in_folder_option, out_folder_option
from vlaudit.commands._render import print_table
from vlaudit.commands._say import say
from vlaudit.commands._stats_options import STATS, stats_options
from vlaudit.errors import InputError
from vlaudit.settings import (
    EDIT_FEATHER_PX,
    EDIT_INPAINT_RADIUS,
    EDIT_MAX_IOU,
    EDIT_MIN_GAP,
    EDIT_PAD_PX,
    EDIT_REPEAT_FRACTION,
    EDIT_SEED,
)

edits_app = group("Object-swap edits: build, blinded annotation export/import, analysis.")
data_app.add_typer(edits_app, name="edits")


def _fmt_ci(ci: tuple[float, float] | None) -> str:
    if ci is None:
        return "—"
    return f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


@edits_app.command("build")
@stats_options("resamples", "seed", defaults={"seed": EDIT_SEED},
               more_help={"seed": "Here also the seed of the shuffle of positive groups."})
def edits_build(
    items_path: Path = typer.Argument(..., metavar="ITEMS", help="ITEMS table with relation groups and boxes."),
    images: Path = in_folder_option("--images", help="Folder the ITEMS image paths are relative to."),
    out: Path = out_folder_option(help="Output folder."),
    stats: vlaudit.StatsOptions = STATS,
    min_gap: float = typer.Option(EDIT_MIN_GAP, "--min-gap", min=0.0, help="Post-swap centre gap (fraction of the extent)."),
    max_iou: float = typer.Option(EDIT_MAX_IOU, "--max-iou", min=0.0, max=1.0, help="Largest IoU of the two new boxes."),
    pad: int = typer.Option(EDIT_PAD_PX, "--pad", min=0, help="Padding (px) of the inpainted source patches."),
    radius: int = typer.Option(EDIT_INPAINT_RADIUS, "--radius", min=0, help="Telea inpainting radius."),
    feather: int = typer.Option(EDIT_FEATHER_PX, "--feather", min=0, help="Feather width (px) of the pasted patches."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Stop after this many feasible edits (default: no limit)."),
) -> None:
    """Seeded shuffle, fixed geometry feasibility, inpaint + feathered swap, six probes per edit."""
    build = vlaudit.build_edits(items_path, images=images, out=out, stats=stats, min_gap=min_gap, max_iou=max_iou,
                                pad=pad, radius=radius, feather=feather, limit=limit)
    summary, audit = build.summary, build.summary.feasibility_audit
    rows = [["positive groups (shuffled)", summary.n_candidates, ""], ["feasible", summary.n_feasible, ""],
            ["edits rendered", summary.n_edits, f"{summary.n_probes} probes"]]
    rows += [["excluded", n, reason] for reason, n in summary.excluded_by_reason.items()]
    print_table(f"Object-swap edits — {items_path.name}", ["what", "n", "why"], rows)
    print_table("Feasibility-selection audit (VCA §17, % of extent/area)",
                ["characteristic", "feasible", "excluded", "difference", "95% CI"],
                [[a.characteristic, a.feasible, a.excluded, a.difference, _fmt_ci(a.ci)] for a in audit],
                digits=2)
    if build.written_items:
        say(f"wrote {out}/items.jsonl, edits.csv, candidates.csv, summary.json")
    else:
        say(f"no feasible edits: wrote only {out}/candidates.csv and summary.json")


@edits_app.command("export")
def edits_export(
    build_dir: Path = typer.Argument(..., help="Folder written by `vlaudit data edits build`."),
    out: Path = out_folder_option(help="Output folder (batches/ and the private key.csv)."),
    annotators: str = typer.Option("a1,a2,a3", "--annotators", help="Comma-separated annotator names."),
    repeat: float = typer.Option(EDIT_REPEAT_FRACTION, "--repeat", min=0.0, max=1.0, help="Fraction of repeated items per batch."),
    seed: int = typer.Option(EDIT_SEED, "--seed", min=0, help="Seed of the per-annotator shuffles."),
) -> None:
    """Shuffled, blinded batches (CSV + images) per annotator; model outputs and sample ids hidden."""
    names = [a.strip() for a in annotators.split(",") if a.strip()]
    summary = vlaudit.export_annotations(build_dir, out=out, annotators=names, repeat=repeat, seed=seed)
    print_table("Annotation export", ["annotator", "tasks", "repeats"],
                [[a, summary.tasks_per_annotator, summary.n_repeat_per_annotator] for a in names])
    say(f"wrote {out}/batches/ (send these) and {out}/key.csv (keep private)")


@edits_app.command("import")
def edits_import(
    export_dir: Path = typer.Argument(..., help="Folder written by `vlaudit data edits export` (with key.csv)."),
    out: Path = out_folder_option(help="Output folder."),
    answers: list[str] = typer.Option([], "--answers",
                                      help="NAME=FILE for a filled batch; default: batches/NAME/tasks.csv."),
    items_path: Path | None = typer.Option(None, "--items", help="Edits ITEMS table: writes accepted_items (default: none, not written)."),
) -> None:
    """Majority consensus over the four fields → accepted/rejected/no-majority; pairwise and repeat agreement."""
    files: dict[str, Path] = {}
    for spec in answers:
        if "=" not in spec:
            raise InputError(f"expected NAME=FILE, got '{spec}'", field="--answers")
        name, path = spec.split("=", 1)
        files[name] = Path(path)
    result = vlaudit.import_annotations(export_dir, out=out, answers=files, items=items_path).summary
    n = max(result.n_edits, 1)
    rows = [[d, c, 100.0 * c / n] for d, c in result.counts.items()]
    print_table("Edit consensus (VCA §17)", ["outcome", "N", "rate %"], [["annotated edits", result.n_edits,
                                                                  100.0]] + rows, digits=2)
    print_table("Agreement", ["pair / annotator", "n", "agreement %"],
                [[f"pairwise {p}", v.n_edits, None if v.agreement is None else 100 * v.agreement]
                 for p, v in result.pairwise.items()]
                + [[f"repeat {a}", r.n_repeats, None if r.agreement is None else 100 * r.agreement]
                   for a, r in result.repeat.items()], digits=2)
    for annotator, n_missing in result.missing_tasks.items():
        if n_missing:
            say(f"warning: {annotator} left {n_missing} task(s) unanswered; those edits lack that vote")
    say(f"wrote {out}/consensus.csv and {out}/summary.json")


@edits_app.command("analyze")
@stats_options("resamples", "seed", defaults={"seed": EDIT_SEED})
def edits_analyze(
    build_dir: Path = typer.Argument(..., help="Folder written by `vlaudit data edits build`."),
    consensus: Path = typer.Option(..., "--consensus", help="consensus.csv from `vlaudit data edits import`."),
    report: Path = typer.Option(..., "--report", help="`vlaudit vca report` folder of the source benchmark."),
    edit_report: Path | None = typer.Option(None, "--edit-report",
                                            help="`vlaudit vca report` folder of the edit probes (default: --report)."),
    out: Path = out_folder_option(help="Output folder."),
    interface: str = typer.Option("yesno", "--interface", help="Answer interface to analyse."),
    stats: vlaudit.StatsOptions = STATS,
) -> None:
    """Flip+visibility outcomes of accepted edits by source audit stratum (C-U, D-CC, Rel_o, Joint)."""
    result = vlaudit.analyze_edits(build_dir, consensus=consensus, report=report, edit_report=edit_report, out=out,
                                   interface=interface, stats=stats).summary
    title = f"Edited outcomes of {result.n_accepted} accepted edits (%)"
    print_table(title, ["model", "N", "Rel.", "+Vis.", "strict"],
                [[getattr(row, c) for c in ("model", "n", "rel", "flip_vis", "strict")] for row in result.table],
                digits=2)
    cols = ["model", "n_rel_o", "rel_o", "n_joint", "joint", "n_cu", "cu", "n_dcc", "dcc"]
    print_table("Flip+visibility by source audit stratum (%)",
                ["model", "Rel_o n", "Rel_o", "Joint n", "Joint", "C-U n", "C-U", "D-CC n", "D-CC"],
                [[getattr(row, c) for c in cols] for row in result.table], digits=2)

    def shown(value: object, spec: str = "+.2f") -> str:
        # a rate of an empty Joint or Rel_o stratum is Missing, printed "— (reason)" (its n = 0 is in the table
        # above); None only in a summary written before reasons were recorded
        return format(value, spec) if isinstance(value, float) else "—" if value is None else str(value)

    def ci(row: object, name: str) -> str:
        value, low, high = (getattr(row, name + end) for end in ("", "_lo", "_hi"))
        if not isinstance(value, float):
            return shown(value)
        return f"{shown(value)} [{shown(low)}, {shown(high)}]"

    # the intervals resample the accepted edit ids, each drawn edit bringing every model's record of it
    clusters = f"{result.n_accepted} edit cluster{'' if result.n_accepted == 1 else 's'}"
    print_table(f"Joint enrichment, percentage points (95% bootstrap CI over {clusters}, VCA §15/§19)",
                ["model", "Joint − overall", "Δ PairD = Joint − Rel_o"],
                [[row.model, ci(row, "joint_minus_overall"), ci(row, "delta_pair_d")] for row in result.table])
    print_table(f"Relation-only success within Joint (%; 95% bootstrap CI over {clusters}, VCA §15)",
                ["model", "Rel. overall", "Rel. in Joint", "Joint − overall"],
                [[row.model, shown(row.rel, ".2f"),
                  ci(row, "rel_joint").replace("+", ""),
                  ci(row, "rel_joint_minus_overall")] for row in result.table])
    cu = result.pooled_cu
    rate = "—" if cu.rate is None else f"{cu.rate:.2f}"
    say(f"pooled C-U flip+visibility: n={cu.n} rate={rate} CI={_fmt_ci(cu.ci).replace('+', '')} ({clusters})")
    say(f"wrote {out}/edit_outcomes.csv and {out}/summary.json")
