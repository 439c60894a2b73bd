"""Cycle files from a notebook, as the commands write them: the Table-5 audit of a cycles file, the labelled
pairs audit of any benchmark's negatives, and zero-shot cosine scores of a features folder (cycle paper §2.2,
§4, §5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from vlaudit.builders.cycles.audit import audit_cycles_file
from vlaudit.files import write_result, write_table
from vlaudit.metrics.pair_audit import audit_pairs, check_weighting
from vlaudit.results.cycles import CycleAudit, CycleScoreRow, PairAuditResult, PairAuditRow
from vlaudit.results.versioned import record_from_dict, to_json
from vlaudit.scoring.features import cosine_rows as cosine
from vlaudit.scoring.features import read_features
from vlaudit.sources.cycle_tables import read_cycles
from vlaudit.sources.labelled_pairs import read_labelled_pairs


def audit_cycles(cycles: str | Path, annotations: Sequence[str | Path], *, out: str | Path) -> CycleAudit:
    """Table 5 of a cycles file: marginal TVs (must be 0), max |signed degree| (0) and the validity violations
    re-checked from ``annotations`` (0); writes the audit JSON ``out`` and returns it."""
    result = CycleAudit.from_dict(audit_cycles_file(cycles, list(annotations)), path=cycles)
    write_result(Path(out), result)
    return result


def audit_pair_files(pairs: Sequence[str | Path], *, out: str | Path, fmt: str = "auto",
                     weighting: str = "mean") -> PairAuditResult:
    """Image/caption/length TV between positives and negatives, signed-degree imbalance per side and exact-cycle
    completion of each labelled pairs file (cycle paper §2.2); writes ``audit_pairs.json`` and
    ``audit_pairs.csv`` into ``out``. ``weighting``: ``"mean"``, the only one (``"count"`` was dropped: an
    InputError says why, :data:`vlaudit.metrics.pair_audit.COUNT_DROPPED`)."""
    check_weighting(weighting)
    rows: list[PairAuditRow] = []
    warnings: list[str] = []
    for path in pairs:
        detected, records = read_labelled_pairs(path, fmt, warnings=warnings)
        row = record_from_dict(PairAuditRow, {"file": Path(path).name, "format": detected,
                                              **audit_pairs(records, weighting)}, path=path, name="audit")
        if row.labelled_both_ways:
            warnings.append(f"{path}: {row.labelled_both_ways} (image, caption) pair(s) labelled both positive "
                            "and negative")
        if not row.positives or not row.negatives:
            missing = "negatives" if row.positives else "positives"
            warnings.append(f"{path}: no {missing} (label {0 if row.positives else 1}): the TVs between positives "
                            "and negatives are undefined (shown as —, null in audit_pairs.json)")
        rows.append(row)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    result = PairAuditResult(files=[str(p) for p in pairs], weighting=weighting, rows=rows, warnings=warnings)
    write_result(out / "audit_pairs.json", result)
    write_table(out / "audit_pairs.csv", [to_json(row) for row in rows])
    return result


@dataclass(frozen=True)
class ZeroShotScores:
    """Zero-shot cosine scores written as a ``cycles eval`` scores table: ``rows`` (image_id, caption_id,
    score), ``n_cycles`` and the features' ``model`` spec."""

    rows: list[CycleScoreRow]
    n_cycles: int
    model: str


def write_zero_shot_scores(cycles: str | Path, features: str | Path, *, out: str | Path) -> ZeroShotScores:
    """s(u, v) = cos(f(u), g(v)) in float64 for every pair the cycles use (cycle paper §5), written to ``out``
    (CSV, JSONL or Parquet) as ``vlaudit cycles zero-shot`` does."""
    cycle_list = read_cycles(cycles)
    feats = read_features(features)
    rows = cosine(feats, cycle_list, source=cycles)
    write_table(Path(out), rows)
    scores = [CycleScoreRow(image_id=str(r["image_id"]), caption_id=str(r["caption_id"]), score=float(r["score"]))
              for r in rows]
    return ZeroShotScores(rows=scores, n_cycles=len(cycle_list), model=str(feats.manifest["model"].get("spec", "?")))
