"""Object-swap edits (VCA §17): build the edited probes, export blinded annotation batches, import the answers
into a consensus, and analyse the edited outcomes by source audit stratum.

Each function writes exactly the files of the matching ``vlaudit data edits …`` command and returns what it
computed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from vlaudit.analysis.stats_options import StatsOptions, spreads_stats
from vlaudit.analysis.vca.edits import edit_outcomes, feasibility_audit
from vlaudit.builders.annotation import export_batches, write_consensus
from vlaudit.builders.annotation import import_annotations as consensus_of
from vlaudit.builders.edits import EditParams
from vlaudit.builders.edits import build_edits as render_edits
from vlaudit.files import read_records, write_result, write_table
from vlaudit.results.missing import Missing
from vlaudit.results.vca.edits import EditStratumRow
from vlaudit.results.vca.outputs import (
    AnnotationConsensusSummary,
    AnnotationExportSummary,
    EditBuildSummary,
    EditOutcomesSummary,
)
from vlaudit.results.versioned import record_from_dict, to_json
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
from vlaudit.sources.items import read_items, write_items


@dataclass(frozen=True)
class EditBuild:
    """An edits build: ``summary`` is ``summary.json``; ``written_items`` whether any edit was rendered
    (then ``items.jsonl`` and ``edits.csv`` were written beside ``candidates.csv``)."""

    summary: EditBuildSummary
    written_items: bool


@dataclass(frozen=True)
class EditConsensus:
    """The annotators' consensus: ``summary`` is ``summary.json``; ``rows`` the per-edit consensus
    (``consensus.csv``: each field's decision and votes, and the edit's ``decision``)."""

    summary: AnnotationConsensusSummary
    rows: list[dict[str, object]]


@dataclass(frozen=True)
class EditAnalysis:
    """The edited outcomes: ``summary`` is ``summary.json``; ``records`` one row per (model, accepted edit)
    (``edit_outcomes.csv``)."""

    summary: EditOutcomesSummary
    records: list[dict[str, object]]


@spreads_stats(resamples="resamples", seed="seed")
def build_edits(items: str | Path, *, images: str | Path, out: str | Path, seed: int = EDIT_SEED,
                min_gap: float = EDIT_MIN_GAP, max_iou: float = EDIT_MAX_IOU, pad: int = EDIT_PAD_PX,
                radius: int = EDIT_INPAINT_RADIUS, feather: int = EDIT_FEATHER_PX, limit: int | None = None,
                resamples: int = BOOTSTRAP_RESAMPLES, stats: StatsOptions | None = None) -> EditBuild:
    """Seeded shuffle of the positive groups, fixed geometry feasibility, inpaint + feathered swap, six probes
    per edit; the feasibility-selection audit compares feasible and excluded groups (VCA §17).
    ``stats``: ``resamples``, ``seed`` as one :class:`~vlaudit.StatsOptions` record instead (checked as built;
    its fields, defaults included, replace those keywords; giving both is refused)."""
    out = Path(out)
    params = EditParams(min_gap=min_gap, max_iou=max_iou, pad=pad, radius=radius, feather=feather)
    result = render_edits(read_items(items), images, out, seed=seed, params=params, limit=limit)
    audit = feasibility_audit(result["candidates"], n_resamples=resamples, seed=seed)
    n_feasible = sum(bool(c.get("feasible")) for c in result["candidates"])
    summary = EditBuildSummary(
        items=str(items), seed=seed, params=params,
        n_candidates=len(result["candidates"]), n_feasible=n_feasible,
        n_infeasible=len(result["candidates"]) - n_feasible, n_edits=result["n_edits"],
        n_probes=len(result["items"]), excluded_by_reason=dict(result["excluded"]), feasibility_audit=audit)
    if result["items"]:
        write_items(out / "items.jsonl", result["items"])
        write_table(out / "edits.csv", result["edits"])
    write_table(out / "candidates.csv", result["candidates"])
    write_result(out / "summary.json", summary)
    return EditBuild(summary, bool(result["items"]))


def export_annotations(build_dir: str | Path, *, out: str | Path, annotators: Sequence[str],
                       repeat: float = EDIT_REPEAT_FRACTION, seed: int = EDIT_SEED) -> AnnotationExportSummary:
    """Blinded annotation batches (``out/batches/NAME/``) and the private ``out/key.csv``; returns the export
    summary (``export_summary.json``)."""
    build_dir, out = Path(build_dir), Path(out)
    edits = read_records(build_dir / "edits.csv", required=("edit_id", "source_image", "edited_image"))
    summary = AnnotationExportSummary.from_dict(
        export_batches(edits, build_dir / "images", out, list(annotators), repeat_fraction=repeat, seed=seed))
    write_result(out / "export_summary.json", summary)
    return summary


def import_annotations(export_dir: str | Path, *, out: str | Path,
                       answers: Mapping[str, str | Path] | None = None,
                       items: str | Path | None = None) -> EditConsensus:
    """Annotators' answers (NAME → tasks.csv; default: every annotator's batch in ``export_dir``) → the
    per-edit consensus (``consensus.csv``, ``summary.json``; with ``items``, ``accepted_items.jsonl``).
    Returns the consensus counts, pairwise and repeat agreement and missing tasks (``rows``: the consensus)."""
    export_dir, out = Path(export_dir), Path(out)
    key = export_dir / "key.csv"
    files = {name: Path(path) for name, path in (answers or {}).items()}
    if not files:
        names = sorted({str(r["annotator"]) for r in read_records(key, required=("annotator",))})
        files = {name: export_dir / "batches" / name / "tasks.csv" for name in names}
    result = consensus_of(key, files)
    write_consensus(out / "consensus.csv", result["rows"])
    summary = {k: v for k, v in result.items() if k != "rows"}
    if items is not None:
        accepted = {r["edit_id"] for r in result["rows"] if r["decision"] == "accepted"}
        kept = [i for i in read_items(items) if i.extra.get("edit_id") in accepted]
        if kept:
            write_items(out / "accepted_items.jsonl", kept)
        summary["n_accepted_probes"] = len(kept)
    record = AnnotationConsensusSummary.from_dict(to_json(summary))
    write_result(out / "summary.json", record)
    return EditConsensus(record, result["rows"])


@spreads_stats(resamples="resamples", seed="seed")
def analyze_edits(build_dir: str | Path, *, consensus: str | Path, report: str | Path, out: str | Path,
                  edit_report: str | Path | None = None, interface: str = "yesno",
                  resamples: int = BOOTSTRAP_RESAMPLES, seed: int = EDIT_SEED,
                  stats: StatsOptions | None = None) -> EditAnalysis:
    """Flip+visibility outcomes of the accepted edits by source audit stratum (C-U, D-CC, Rel_o, Joint; VCA
    §15, §17, §19); writes ``edit_outcomes.csv`` and ``summary.json``. Returns the summary (``n_accepted``,
    ``table``, ``pooled_cu``, ``pooled_dcc``, ``feasibility_audit``) and the per-record ``records``.
    ``stats``: ``resamples``, ``seed`` as one :class:`~vlaudit.StatsOptions` record instead (checked as built;
    its fields, defaults included, replace those keywords; giving both is refused)."""
    build_dir, report, out = Path(build_dir), Path(report), Path(out)
    accepted = [str(r["edit_id"]) for r in read_records(consensus, required=("edit_id", "decision"))
                if r["decision"] == "accepted"]
    probes = read_records(build_dir / "items.jsonl", required=("item_id", "edit_id", "probe"))
    source_items = read_records(report / "items.csv", required=("item_id",))
    source_groups = read_records(report / "groups.csv", required=("group_id",))
    edit_items = read_records(Path(edit_report or report) / "items.csv", required=("item_id", "pred"))
    result = edit_outcomes(probes, accepted, edit_items, source_items, source_groups, interface=interface,
                           n_resamples=resamples, seed=seed, source_path=report / "items.csv")
    dcc: dict[str, dict[str, float]] = {}
    for row in source_items:
        if row.get("dcc") is not None and row.get("interface", interface) == interface:
            dcc.setdefault(str(row.get("model", "model")), {})[str(row["item_id"])] = float(bool(row["dcc"]))
    audit = feasibility_audit(read_records(build_dir / "candidates.csv"), source_dcc=dcc, n_resamples=resamples,
                              seed=seed)
    write_table(out / "edit_outcomes.csv", result.records)
    summary = EditOutcomesSummary(
        n_accepted=len(accepted), table=[_stratum_row(row) for row in result.table], pooled_cu=result.pooled_cu,
        pooled_dcc=result.pooled_dcc, feasibility_audit=audit)
    write_result(out / "summary.json", summary)
    return EditAnalysis(summary, result.records)


def _stratum_row(row: Mapping[str, object]) -> EditStratumRow:
    """A table row as its record: a rate, difference or interval bound that is not computable (None or NaN:
    its stratum has no record) is Missing with that reason."""
    empty = Missing("empty stratum")
    written = {str(key): to_json(value) for key, value in row.items()}
    values = {key: empty if value is None else value for key, value in written.items()}
    return record_from_dict(EditStratumRow, values, path="edit outcomes", name=f"table[{row.get('model')}]")
