"""Object-swap analyses: the feasibility-selection audit (VCA §17) and edited outcomes by audit stratum (§15).

Edited outcome of one model on one accepted edit, with z(p) = 1 when the model answers yes to probe p (§15):

* Rel.        = (1 − z(q_r, I′)) · z(q_r⁻¹, I′)                         (relation flip recognised)
* +Vis.       = Rel. · z(q_s^pres, I′) · z(q_o^pres, I′)                 (flip + visibility, the primary target)
* strict      = +Vis. · z(q_r, I) · (1 − z(q_r⁻¹, I))                    (adds source-pair correctness)

Strata come from the source benchmark's VCA report: per-item ``items.csv`` (C-U, D-CC of the source true
statement) and per-group ``groups.csv`` (Rel_o, Pair D, Joint of the source group). Rates are percentages of
+Vis. (flip+visibility) within a stratum, per model:

* Joint − overall = rate(+Vis. | Joint) − rate(+Vis.)             (total Joint enrichment, §15)
* Δ_PairD         = rate(+Vis. | Joint) − rate(+Vis. | Rel_o)     (§15 table: Qwen 78.48 − 71.58 = +6.90)
* relation-only within Joint = rate(Rel. | Joint), and its Joint − overall = rate(Rel. | Joint) − rate(Rel.)
  (§15 "Independent edit outcomes by audit stratum": macro 69.47% vs 54.63%, +14.84)

Joint = Rel_o ∧ Pair D, so Δ_PairD is the Pair D stratum measured against all of Rel_o (not against
Rel_o ∧ ¬Pair D). The macro row averages the per-model values (macro Δ_PairD = macro Joint − macro Rel_o).

Intervals (§19): one edit-cluster bootstrap over ALL accepted edit ids, each drawn edit carrying every model
record it holds; per-model and macro Joint − overall and Δ_PairD, and the pooled C-U and D-CC rates, are all
read from the same resamples, as are the relation-only rate within Joint and its Joint − overall.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.errors import InputError
from vlaudit.results.vca.audit import interval, rate
from vlaudit.results.vca.outputs import FeasibilityCheck, PooledRate
from vlaudit.settings import BOOTSTRAP_RESAMPLES, CONFIDENCE_LEVEL, EDIT_SEED
from vlaudit.sources.items import parse_yes_no
from vlaudit.stats.bootstrap import ClusterBootstrap, percentile_intervals

AUDIT_CHARACTERISTICS = (
    ("Horizontal relation", "horizontal"),
    ("Larger-box area", "larger_area"),
    ("Centre gap", "abs_gap"),
    ("Destination slack", "slack"),
)


def _diff_ci(a: np.ndarray, b: np.ndarray, n_resamples: int, seed: int) -> tuple[float, float]:
    """Percentile 95% interval of mean(a) − mean(b), resampling each group of source pairs independently."""
    if len(a) == 0 or len(b) == 0:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    ia = rng.integers(0, len(a), size=(n_resamples, len(a)))
    ib = rng.integers(0, len(b), size=(n_resamples, len(b)))
    diffs = a[ia].mean(axis=1) - b[ib].mean(axis=1)
    lo, hi = np.quantile(diffs, [0.025, 0.975])
    return float(lo), float(hi)


@dataclass(frozen=True)
class EditOutcomes:
    """``records``: one row per (model, accepted edit) (``edit_outcomes.csv``); ``table``: per model and
    ``Macro`` the outcome rates by source stratum with their intervals (percent); the pooled C-U and D-CC
    flip+visibility rates."""

    records: list[dict[str, Any]]
    table: list[dict[str, Any]]
    pooled_cu: PooledRate
    pooled_dcc: PooledRate


def feasibility_audit(candidates: Sequence[Mapping[str, Any]], *,
                      source_dcc: Mapping[str, Mapping[str, float]] | None = None,
                      n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = EDIT_SEED) -> list[FeasibilityCheck]:
    """Feasible vs excluded source pairs (with geometry) on the §17 characteristics, in percent (a mean over
    an empty side is None, and so are its difference and interval).

    ``source_dcc``: model → source_item_id → D-CC (0/1) adds one "source D-CC" row per model. No model
    output enters feasibility; this table only audits what the fixed rule selected.
    """
    rows = [c for c in candidates if c.get("slack") is not None]
    feasible = [c for c in rows if c.get("feasible") in (True, "True", "true", 1)]
    excluded = [c for c in rows if c not in feasible]
    table = []
    columns = [(label, lambda c, k=key: float(c[k]) * 100.0) for label, key in AUDIT_CHARACTERISTICS]
    for model, dcc in sorted((source_dcc or {}).items()):
        columns.append((f"{model} source D-CC",
                        lambda c, d=dcc: 100.0 * float(d[c["source_item_id"]]) if c["source_item_id"] in d
                        else float("nan")))
    for offset, (label, getter) in enumerate(columns):
        a = np.array([getter(c) for c in feasible], dtype=np.float64)
        b = np.array([getter(c) for c in excluded], dtype=np.float64)
        a, b = a[~np.isnan(a)], b[~np.isnan(b)]
        lo, hi = _diff_ci(a, b, n_resamples, seed + offset)
        mean_a = float(a.mean()) if len(a) else float("nan")
        mean_b = float(b.mean()) if len(b) else float("nan")
        table.append(FeasibilityCheck(characteristic=label, feasible=rate(mean_a), excluded=rate(mean_b),
                                      difference=rate(mean_a - mean_b), ci=interval((lo, hi)), n_feasible=len(a),
                                      n_excluded=len(b)))
    return table


def _flag(value: Any) -> int | None:
    label = parse_yes_no(value) if not (isinstance(value, float) and np.isnan(value)) else None
    return None if label is None else int(label == "yes")


def _by_model(rows: Sequence[Mapping[str, Any]], key: str, interface: str | None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        if interface is not None and row.get("interface") not in (None, interface):
            continue
        out.setdefault(str(row.get("model", "model")), {})[str(row[key])] = row
    return out


def edit_outcomes(probe_items: Sequence[Mapping[str, Any]], accepted: Sequence[str],
                  edit_report_items: Sequence[Mapping[str, Any]],
                  source_items: Sequence[Mapping[str, Any]], source_groups: Sequence[Mapping[str, Any]], *,
                  interface: str | None = "yesno", n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = EDIT_SEED,
                  source_path: str | Path | None = None) -> EditOutcomes:
    """Per-record outcomes and the by-stratum table (see module docstring).

    ``source_path`` names the source report's items table in error messages.
    """
    probes = {str(p["item_id"]): p for p in probe_items}
    by_edit: dict[str, dict[str, str]] = {}
    for item_id, p in probes.items():
        by_edit.setdefault(str(p["edit_id"]), {})[str(p["probe"])] = item_id
    preds = _by_model(edit_report_items, "item_id", interface)
    src_items = _by_model(source_items, "item_id", interface)
    src_groups = _by_model(source_groups, "group_id", interface)
    records: list[dict[str, Any]] = []
    for model, model_preds in sorted(preds.items()):
        if not any(item in model_preds for edit in accepted for item in by_edit.get(edit, {}).values()):
            continue  # the edit report holds other runs too; a model without edit probes is skipped
        for edit_id in accepted:
            ids = by_edit.get(edit_id)
            if ids is None:
                raise InputError(f"accepted edit '{edit_id}' has no probes in the edits ITEMS table",
                                 field="edit_id")
            z: dict[str, int] = {}
            for probe, item_id in ids.items():
                if item_id not in model_preds:
                    raise InputError(f"model '{model}' has no prediction for probe '{item_id}'", field="pred")
                flag = _flag(model_preds[item_id].get("pred"))
                if flag is None:
                    raise InputError(f"model '{model}' has an empty prediction for probe '{item_id}'",
                                     record=item_id, field="pred")
                z[probe] = flag
            rel = (1 - z["edit-r"]) * z["edit-inv"]
            flip_vis = rel * z["edit-subj"] * z["edit-obj"]
            source_item = probes[ids["src-r"]]["source_item_id"]
            source_group = probes[ids["src-r"]]["source_group_id"]
            if str(source_item) not in src_items.get(model, {}):
                raise InputError(f"model '{model}' has no row for source item '{source_item}' in the source "
                                 "report (is --report the `vca report` of the benchmark the edits came from, "
                                 "scored by the same model name? An item missing a headline control is "
                                 "excluded there: see excluded_items in its vca.json)", path=source_path,
                                 record=edit_id, field="item_id")
            item_row = src_items[model][str(source_item)]
            group_row = src_groups.get(model, {}).get(str(source_group), {})
            records.append({
                "model": model, "edit_id": edit_id, "rel": rel, "flip_vis": flip_vis,
                "strict": flip_vis * z["src-r"] * (1 - z["src-inv"]),
                "cu": _flag(item_row.get("cu")), "dcc": _flag(item_row.get("dcc")),
                "rel_o": _flag(group_row.get("rel_o")), "pair_d": _flag(group_row.get("pair_d")),
                "joint": _flag(group_row.get("joint")),
                # the source true statement, so `vca validity|proxies --edits` can join its scores (§15)
                "source_item_id": str(source_item), "source_group_id": str(source_group),
            })
    if not records:
        raise InputError("no model in the edit report has predictions for the accepted edits", field="item_id")
    table = [_stratum_row(model, [r for r in records if r["model"] == model])
             for model in sorted({r["model"] for r in records})]
    macro: dict[str, Any] = {"model": "Macro"}
    for key in table[0]:
        if key == "model":
            continue
        values = [row[key] for row in table if row[key] is not None and not np.isnan(row[key])]
        macro[key] = int(np.sum(values)) if key == "n" or key.startswith("n_") else (
            float(np.mean(values)) if values else None)
    table.append(macro)
    intervals = edit_cluster_intervals(records, n_resamples=n_resamples, seed=seed)
    for row in table:
        for name, (lo, hi) in intervals[row["model"]].items():
            row[f"{name}_lo"], row[f"{name}_hi"] = lo, hi
    return EditOutcomes(records=records, table=table, pooled_cu=intervals["pooled"]["cu"],
                        pooled_dcc=intervals["pooled"]["dcc"])


def _rate(records: Sequence[Mapping[str, Any]], key: str) -> float | None:
    """Success rate in %, or None for an empty stratum (its n, 0, is reported beside it)."""
    return 100.0 * float(np.mean([r[key] for r in records])) if records else None


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _stratum_row(model: str, records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    rel_o = [r for r in records if r["rel_o"] == 1]
    joint = [r for r in records if r["joint"] == 1]
    cu = [r for r in records if r["cu"] == 1]
    dcc = [r for r in records if r["dcc"] == 1]
    overall, rate_rel_o, rate_joint = (_rate(records, "flip_vis"), _rate(rel_o, "flip_vis"),
                                       _rate(joint, "flip_vis"))
    return {
        "model": model, "n": len(records), "rel": _rate(records, "rel"), "flip_vis": overall,
        "strict": _rate(records, "strict"), "n_rel_o": len(rel_o), "rel_o": rate_rel_o,
        "n_joint": len(joint), "joint": rate_joint,
        "joint_minus_overall": _minus(rate_joint, overall), "delta_pair_d": _minus(rate_joint, rate_rel_o),
        "rel_joint": _rate(joint, "rel"), "rel_joint_minus_overall": _minus(_rate(joint, "rel"), _rate(records, "rel")),
        "n_cu": len(cu), "cu": _rate(cu, "flip_vis"), "n_dcc": len(dcc), "dcc": _rate(dcc, "flip_vis"),
    }


def edit_cluster_intervals(records: Sequence[Mapping[str, Any]], *, n_resamples: int = BOOTSTRAP_RESAMPLES,
                           seed: int = EDIT_SEED, level: float = CONFIDENCE_LEVEL) -> dict[str, Any]:
    """Edit-cluster percentile intervals (VCA §19), in percentage points.

    One plan resamples every accepted edit id with replacement; a drawn edit brings all of its model records
    (so strata with few records, e.g. C-U, are resampled as they fall in the drawn edits, not on their own).
    Returns ``{model: {"joint_minus_overall" | "delta_pair_d" | "rel_joint" | "rel_joint_minus_overall":
    (lo, hi)}}`` for every model and
    ``"Macro"`` (the mean of the per-model values within each resample), and ``"pooled"``: the pooled C-U and
    D-CC flip+visibility rates ``{"n", "rate", "ci"}`` over all models' records.
    """
    models = sorted({r["model"] for r in records})
    if not records:
        empty = PooledRate(n=0, rate=None, ci=None)
        return {"Macro": {}, "pooled": {"cu": empty, "dcc": empty}}
    vis = np.array([r["flip_vis"] for r in records], dtype=np.float64)

    def flag(key: str) -> np.ndarray:
        return np.array([r[key] == 1 for r in records], dtype=np.float64)

    joint, rel_o, cu, dcc = flag("joint"), flag("rel_o"), flag("cu"), flag("dcc")
    rel = np.array([r["rel"] for r in records], dtype=np.float64)
    # per model, (success, stratum) columns: +Vis. overall, in Joint, in Rel_o; Rel. overall, in Joint;
    # then the pooled C-U and D-CC strata
    nums, dens = [], []
    for model in models:
        mine = np.array([r["model"] == model for r in records], dtype=np.float64)
        for success, stratum in ((vis, mine), (vis, mine * joint), (vis, mine * rel_o), (rel, mine),
                                 (rel, mine * joint)):
            nums.append(success * stratum)
            dens.append(stratum)
    nums += [vis * cu, vis * dcc]
    dens += [cu, dcc]
    plan = ClusterBootstrap.draw(len(records), clusters=[str(r["edit_id"]) for r in records],
                                 n_resamples=n_resamples, seed=seed)
    rates = 100.0 * plan.ratios(np.column_stack(nums), np.column_stack(dens))
    out: dict[str, Any] = {}
    per_model = []
    names = ("joint_minus_overall", "delta_pair_d", "rel_joint", "rel_joint_minus_overall")
    for k in range(len(models)):
        overall, in_joint, in_rel_o, rel_overall, rel_joint = (rates[:, 5 * k + j] for j in range(5))
        per_model.append(np.column_stack([in_joint - overall, in_joint - in_rel_o, rel_joint,
                                          rel_joint - rel_overall]))
    stacked = np.stack(per_model)  # (models, resamples, quantities)
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        # a resample with no Joint (or Rel_o) record of some model has no macro value: NaN, ignored below
        warnings.simplefilter("ignore", RuntimeWarning)
        macro = stacked.mean(axis=0)
    for model, samples in (*zip(models, stacked, strict=True), ("Macro", macro)):
        ci = percentile_intervals(samples, level)
        # an interval over a stratum empty in every resample is not computable: None, never NaN
        out[model] = {name: (None, None) if np.isnan(ci[j, 0]) else (float(ci[j, 0]), float(ci[j, 1]))
                      for j, name in enumerate(names)}
    pooled: dict[str, PooledRate] = {}
    for j, (name, stratum) in enumerate((("cu", cu), ("dcc", dcc))):
        n = int(stratum.sum())
        if n == 0:
            pooled[name] = PooledRate(n=0, rate=None, ci=None)
            continue
        lo, hi = percentile_intervals(rates[:, 5 * len(models) + j], level)[0]
        pooled[name] = PooledRate(n=n, rate=100.0 * float((vis * stratum).sum() / n), ci=interval((lo, hi)))
    out["pooled"] = pooled
    return out
