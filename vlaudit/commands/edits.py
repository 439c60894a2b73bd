"""``vlaudit data edits build|export|import|analyze``: object-swap edits and their blinded annotation (VCA §14–§17).

build → ``DIR/items.jsonl`` (six probes per edit; images relative to ``DIR/images``), ``DIR/edits.csv``,
``DIR/candidates.csv`` (every shuffled source group with its geometry and feasibility), ``DIR/summary.json``.
export → ``DIR/batches/<annotator>/{tasks.csv,images/,INSTRUCTIONS.txt}`` and the private ``DIR/key.csv``.
import → ``DIR/consensus.csv``, ``DIR/summary.json`` and (with ``--items``) ``DIR/accepted_items.jsonl``.
analyze → ``DIR/edit_outcomes.csv``, ``DIR/summary.json``: flip+visibility by source audit stratum.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from vlaudit.commands._apps import data_app, group
from vlaudit.commands._lazy import lazy_module
from vlaudit.commands._options import in_folder_option, out_folder_option
from vlaudit.commands._say import say
from vlaudit.errors import InputError
from vlaudit.settings import (
    BOOTSTRAP_RESAMPLES,
    EDIT_FEATHER_PX,
    EDIT_INPAINT_RADIUS,
    EDIT_MAX_IOU,
    EDIT_MIN_GAP,
    EDIT_PAD_PX,
    EDIT_REPEAT_FRACTION,
    EDIT_SEED,
)

# The library, loaded on first use so that `vlaudit --help` stays light; mypy reads the real modules
# (see commands/_lazy.py).
if TYPE_CHECKING:
    import vlaudit.analysis.vca.edits as vca_edits
    import vlaudit.builders.annotation as builders_annotation
    import vlaudit.builders.edits as builders_edits
    import vlaudit.report.console as report_console
    import vlaudit.results.vca as results_vca
    import vlaudit.sources.items as sources_items
    import vlaudit.tables as tables
else:
    report_console = lazy_module("vlaudit.report.console")
    builders_annotation = lazy_module("vlaudit.builders.annotation")
    builders_edits = lazy_module("vlaudit.builders.edits")
    sources_items = lazy_module("vlaudit.sources.items")
    results_vca = lazy_module("vlaudit.results.vca")
    tables = lazy_module("vlaudit.tables")
    vca_edits = lazy_module("vlaudit.analysis.vca.edits")

edits_app = group("Object-swap edits: build, blinded annotation export/import, analysis.")
data_app.add_typer(edits_app, name="edits")


def _fmt_ci(ci: list) -> str:
    if ci is None or ci[0] is None or ci[0] != ci[0]:
        return "—"
    return f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


@edits_app.command("build")
def edits_build(
    items_path: Path = typer.Argument(..., metavar="ITEMS", help="ITEMS table with relation groups and boxes."),
    images: Path = in_folder_option("--images", help="Folder the ITEMS image paths are relative to."),
    out: Path = out_folder_option(help="Output folder."),
    seed: int = typer.Option(EDIT_SEED, "--seed", min=0, help="Seed of the shuffle of positive groups."),
    min_gap: float = typer.Option(EDIT_MIN_GAP, "--min-gap", min=0.0, help="Post-swap centre gap (fraction of the extent)."),
    max_iou: float = typer.Option(EDIT_MAX_IOU, "--max-iou", min=0.0, max=1.0, help="Largest IoU of the two new boxes."),
    pad: int = typer.Option(EDIT_PAD_PX, "--pad", min=0, help="Padding (px) of the inpainted source patches."),
    radius: int = typer.Option(EDIT_INPAINT_RADIUS, "--radius", min=0, help="Telea inpainting radius."),
    feather: int = typer.Option(EDIT_FEATHER_PX, "--feather", min=0, help="Feather width (px) of the pasted patches."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Stop after this many feasible edits (default: no limit)."),
    resamples: int = typer.Option(BOOTSTRAP_RESAMPLES, "--resamples", min=1, help="Bootstrap resamples of the feasibility audit."),
) -> None:
    """Seeded shuffle, fixed geometry feasibility, inpaint + feathered swap, six probes per edit."""
    params = builders_edits.EditParams(min_gap=min_gap, max_iou=max_iou, pad=pad, radius=radius, feather=feather)
    result = builders_edits.build_edits(sources_items.read_items(items_path), images, out, seed=seed, params=params, limit=limit)
    audit = vca_edits.feasibility_audit(result["candidates"], n_resamples=resamples, seed=seed)
    n_feasible = sum(bool(c.get("feasible")) for c in result["candidates"])
    summary = {
        "items": str(items_path), "seed": seed, "params": params.__dict__,
        "n_candidates": len(result["candidates"]), "n_feasible": n_feasible,
        "n_infeasible": len(result["candidates"]) - n_feasible, "n_edits": result["n_edits"],
        "n_probes": len(result["items"]), "excluded_by_reason": result["excluded"], "feasibility_audit": audit,
    }
    if result["items"]:
        sources_items.write_items(out / "items.jsonl", result["items"])
        tables.write_table(out / "edits.csv", result["edits"])
    tables.write_table(out / "candidates.csv", result["candidates"])
    tables.write_result(out / "summary.json", results_vca.EditBuildSummary.from_dict(summary))
    rows = [["positive groups (shuffled)", summary["n_candidates"], ""], ["feasible", n_feasible, ""],
            ["edits rendered", result["n_edits"], f"{len(result['items'])} probes"]]
    rows += [["excluded", n, reason] for reason, n in result["excluded"].items()]
    report_console.print_table(f"Object-swap edits — {items_path.name}", ["what", "n", "why"], rows)
    report_console.print_table("Feasibility-selection audit (VCA §17, % of extent/area)",
                ["characteristic", "feasible", "excluded", "difference", "95% CI"],
                [[a["characteristic"], a["feasible"], a["excluded"], a["difference"], _fmt_ci(a["ci"])]
                 for a in audit], digits=2)
    if result["items"]:
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
    edits = tables.read_records(build_dir / "edits.csv", required=("edit_id", "source_image", "edited_image"))
    names = [a.strip() for a in annotators.split(",") if a.strip()]
    summary = builders_annotation.export_batches(edits, build_dir / "images", out, names, repeat_fraction=repeat, seed=seed)
    tables.write_result(out / "export_summary.json", results_vca.AnnotationExportSummary.from_dict(summary))
    report_console.print_table("Annotation export", ["annotator", "tasks", "repeats"],
                [[a, summary["tasks_per_annotator"], summary["n_repeat_per_annotator"]] for a in names])
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
    key = export_dir / "key.csv"
    files: dict[str, Path] = {}
    for spec in answers:
        if "=" not in spec:
            raise InputError(f"expected NAME=FILE, got '{spec}'", field="--answers")
        name, path = spec.split("=", 1)
        files[name] = Path(path)
    if not files:
        names = sorted({str(r["annotator"]) for r in tables.read_records(key, required=("annotator",))})
        files = {name: export_dir / "batches" / name / "tasks.csv" for name in names}
    result = builders_annotation.import_annotations(key, files)
    builders_annotation.write_consensus(out / "consensus.csv", result["rows"])
    summary = {k: v for k, v in result.items() if k != "rows"}
    if items_path is not None:
        accepted = {r["edit_id"] for r in result["rows"] if r["decision"] == "accepted"}
        kept = [i for i in sources_items.read_items(items_path) if i.extra.get("edit_id") in accepted]
        if kept:
            sources_items.write_items(out / "accepted_items.jsonl", kept)
        summary["n_accepted_probes"] = len(kept)
    tables.write_result(out / "summary.json", results_vca.AnnotationConsensusSummary.from_dict(summary))
    n = max(result["n_edits"], 1)
    rows = [[d, c, 100.0 * c / n] for d, c in result["counts"].items()]
    report_console.print_table("Edit consensus (VCA §17)", ["outcome", "N", "rate %"], [["annotated edits", result["n_edits"],
                                                                          100.0]] + rows, digits=2)
    report_console.print_table("Agreement", ["pair / annotator", "n", "agreement %"],
                [[f"pairwise {p}", v["n_edits"], None if v["agreement"] is None else 100 * v["agreement"]]
                 for p, v in result["pairwise"].items()]
                + [[f"repeat {a}", v["n_repeats"], None if v["agreement"] is None else 100 * v["agreement"]]
                   for a, v in result["repeat"].items()], digits=2)
    for annotator, n_missing in result["missing_tasks"].items():
        if n_missing:
            say(f"warning: {annotator} left {n_missing} task(s) unanswered; those edits lack that vote")
    say(f"wrote {out}/consensus.csv and {out}/summary.json")


@edits_app.command("analyze")
def edits_analyze(
    build_dir: Path = typer.Argument(..., help="Folder written by `vlaudit data edits build`."),
    consensus: Path = typer.Option(..., "--consensus", help="consensus.csv from `vlaudit data edits import`."),
    report: Path = typer.Option(..., "--report", help="`vlaudit vca report` folder of the source benchmark."),
    edit_report: Path | None = typer.Option(None, "--edit-report",
                                            help="`vlaudit vca report` folder of the edit probes (default: --report)."),
    out: Path = out_folder_option(help="Output folder."),
    interface: str = typer.Option("yesno", "--interface", help="Answer interface to analyse."),
    resamples: int = typer.Option(BOOTSTRAP_RESAMPLES, "--resamples", min=1, help="Bootstrap resamples of the outcome intervals."),
    seed: int = typer.Option(EDIT_SEED, "--seed", min=0, help="Bootstrap seed."),
) -> None:
    """Flip+visibility outcomes of accepted edits by source audit stratum (C-U, D-CC, Rel_o, Joint)."""
    accepted = [str(r["edit_id"]) for r in tables.read_records(consensus, required=("edit_id", "decision"))
                if r["decision"] == "accepted"]
    probes = tables.read_records(build_dir / "items.jsonl", required=("item_id", "edit_id", "probe"))
    source_items = tables.read_records(report / "items.csv", required=("item_id",))
    source_groups = tables.read_records(report / "groups.csv", required=("group_id",))
    edit_items = tables.read_records((edit_report or report) / "items.csv", required=("item_id", "pred"))
    result = vca_edits.edit_outcomes(probes, accepted, edit_items, source_items, source_groups, interface=interface,
                                     n_resamples=resamples, seed=seed, source_path=report / "items.csv")
    dcc: dict[str, dict[str, float]] = {}
    for row in source_items:
        if row.get("dcc") is not None and row.get("interface", interface) == interface:
            dcc.setdefault(str(row.get("model", "model")), {})[str(row["item_id"])] = float(bool(row["dcc"]))
    audit = vca_edits.feasibility_audit(tables.read_records(build_dir / "candidates.csv"), source_dcc=dcc,
                                        n_resamples=resamples, seed=seed)
    tables.write_table(out / "edit_outcomes.csv", result["records"])
    tables.write_result(out / "summary.json", results_vca.EditOutcomesSummary(
        n_accepted=len(accepted), table=result["table"], pooled_cu=result["pooled_cu"],
        pooled_dcc=result["pooled_dcc"], feasibility_audit=audit))
    title = f"Edited outcomes of {len(accepted)} accepted edits (%)"
    report_console.print_table(title, ["model", "N", "Rel.", "+Vis.", "strict"],
                [[row.get(c) for c in ("model", "n", "rel", "flip_vis", "strict")] for row in result["table"]],
                digits=2)
    cols = ["model", "n_rel_o", "rel_o", "n_joint", "joint", "n_cu", "cu", "n_dcc", "dcc"]
    report_console.print_table("Flip+visibility by source audit stratum (%)",
                ["model", "Rel_o n", "Rel_o", "Joint n", "Joint", "C-U n", "C-U", "D-CC n", "D-CC"],
                [[row.get(c) for c in cols] for row in result["table"]], digits=2)

    def ci(row: dict, name: str) -> str:
        return f"{row[name]:+.2f} [{row[f'{name}_lo']:+.2f}, {row[f'{name}_hi']:+.2f}]"

    report_console.print_table("Joint enrichment, percentage points (95% edit-cluster bootstrap CI, VCA §15/§19)",
                ["model", "Joint − overall", "Δ PairD = Joint − Rel_o"],
                [[row["model"], ci(row, "joint_minus_overall"), ci(row, "delta_pair_d")] for row in result["table"]])
    report_console.print_table("Relation-only success within Joint (%; 95% edit-cluster bootstrap CI, VCA §15)",
                ["model", "Rel. overall", "Rel. in Joint", "Joint − overall"],
                [[row["model"], f"{row['rel']:.2f}", ci(row, "rel_joint").replace("+", ""),
                  ci(row, "rel_joint_minus_overall")] for row in result["table"]])
    cu = result["pooled_cu"]
    say(f"pooled C-U flip+visibility: n={cu['n']} rate={cu['rate']} CI={cu['ci']}")
    say(f"wrote {out}/edit_outcomes.csv and {out}/summary.json")
