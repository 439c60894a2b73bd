"""Analysis of the 3×3 evidence-source factorial (VCA §10, Tables 5–8; intervals §19).

Notation: m(v, t) is the original-context margin (NLL(no) − NLL(yes)) of a stem's item with visual state v
and text state t ∈ {+, −, ∅}; m_text(t), m_blank(t) are its no-image controls; s = +1 for + and −1 for −.

* **Agreement decisions**: the cells (+, +) (gold yes) and (−, −) (gold no): 2 per stem, 400 per model.
  correct = decision (m ≥ 0 ⇔ yes) equals gold; VCA credit = G_img > 0 with G_img = r_o − max(r_t, r_b),
  r_c = d·m_c (§3); **C-U** = correct ∧ ¬credit, reported as a fraction of correct decisions.
* **Responsive** (relation reversal, same text): s·(m(s, s) − m(−s, s)) > 0, i.e. Δ_V(t = s) > 0.
* **Answer flip**: the binary decision at (−s, s) differs from the one at (s, s).
* **Neutral-control exceedance (N+)**: s·(m(s, s) − m(∅, s)) > 0 — the relation image supports the answer
  more than the object-preserving aligned image with the same objects and text.
  Responsive, flip and N+ are conditioned on C-U; responsive and nonresponsive *mass* use all correct
  decisions as denominator (Table 5).
* **Conditional source effects** (Table 7): Δ_V(t) = m(+, t) − m(−, t) per text state; Δ_T(v) =
  m(v, +) − m(v, −) per visual state (and under the text-only and blank controls); interaction =
  Δ_V(+) − Δ_V(−). Means over stems with stem-bootstrap intervals.
* **Nested source-only validation** (Table 8): image-source cells (±, ∅) and text-source cells (∅, ±), each
  with the answer its one relation source supports. TPR = P(credit | image source), FPR = P(credit | text
  source); among correct decisions, source AUROC of G_img (VCA) and of |m_o| (confidence) for "image source".

Intervals: model-level two-sided 95% Wilson intervals for conditional proportions (VCA §19), design-effect
corrected over the stems (:func:`vlaudit.stats.intervals.clustered_wilson_interval`: a stem's two agreement
decisions share objects, layout and texts, so the interval's unit is the stem, like every other interval
here; the paper's item-level Wilson treats them as independent); pooled (micro) rates with expanded
percentile intervals (:data:`~vlaudit.stats.bootstrap.EXPANDED`, the small-k correction) from 5,000
resamples of stem ids (seed 20260724) that keep every model's records of a drawn stem. Δ_V/Δ_T means use the
same stem resamples within model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from vlaudit.builders.factorial import IMAGE_SOURCE_CELLS, STATES, TEXT_SOURCE_CELLS, cell_label
from vlaudit.errors import InputError
from vlaudit.files import write_result, write_table
from vlaudit.metrics.vca.support import image_gap
from vlaudit.results.cells import csv_rows as cell_rows
from vlaudit.results.missing import Missing, known
from vlaudit.results.vca.outputs import FactorialResult
from vlaudit.results.versioned import to_json
from vlaudit.settings import BOOTSTRAP_RESAMPLES, FACTORIAL_BOOTSTRAP_SEED
from vlaudit.sources.factorial_runs import FactorialInputs
from vlaudit.sources.items import BenchmarkItem
from vlaudit.sources.margins import require_contexts
from vlaudit.stats.bootstrap import EXPANDED, ClusterBootstrap, percentile_intervals
from vlaudit.stats.clusters import small_sample_warning
from vlaudit.stats.intervals import clustered_wilson_bounds
from vlaudit.stats.ranking import auroc

SIGN = (1.0, -1.0)
MAGNITUDES = (0.1, 0.5, 1.0)
# (name, numerator key, denominator key) of the conditional proportions reported per model and pooled
PROPORTIONS = (
    ("cu_rate", "cu", "correct"),
    ("responsive_rate", "cu_responsive", "cu"),
    ("neutral_exceed_rate", "cu_neutral_exceed", "cu"),
    ("flip_rate", "cu_flip", "cu"),
    ("responsive_mass", "cu_responsive", "correct"),
    ("nonresponsive_mass", "cu_nonresponsive", "correct"),
    ("responsive_rate_all_correct", "correct_responsive", "correct"),
)


def factorial_cells(items: Sequence[BenchmarkItem], *, path: str | Path = "<items>") -> tuple[list[str], dict]:
    """Stems (sorted) and item_id → (stem index, visual index, text index); checks all nine cells per stem."""
    cells: dict[str, tuple[str, int, int]] = {}
    for row, item in enumerate(items, start=1):
        extra = item.extra
        for name in ("stem_id", "visual_state", "text_state"):
            if extra.get(name) is None:
                raise InputError("missing factorial column", path=path, record=f"row {row}", field=name)
        for name in ("visual_state", "text_state"):
            if extra[name] not in STATES:
                raise InputError(f"unknown state {extra[name]!r} (expected one of {STATES})", path=path,
                                 record=f"row {row}", field=name)
        cells[item.item_id] = (str(extra["stem_id"]), STATES.index(extra["visual_state"]),
                               STATES.index(extra["text_state"]))
    stems = sorted({c[0] for c in cells.values()})
    index = {s: k for k, s in enumerate(stems)}
    seen = np.zeros((len(stems), 3, 3), dtype=np.int64)
    out = {}
    for item_id, (stem, v, t) in cells.items():
        out[item_id] = (index[stem], v, t)
        seen[index[stem], v, t] += 1
    bad = np.argwhere(seen != 1)
    if bad.size:
        k, v, t = bad[0]
        raise InputError(f"stem {stems[k]} has {seen[k, v, t]} items for cell (V={STATES[v]}, T={STATES[t]})",
                         path=path, field="stem_id")
    return stems, out


def margin_tensors(run: Any, cells: Mapping[str, tuple[int, int, int]], n_stems: int, *,
                   path: str | Path = "<margins>") -> dict[str, np.ndarray]:
    """(stems, 3, 3) float64 margins per context (original, text, blank) of one run, item by item."""
    position = {str(iid): k for k, iid in enumerate(run.item_ids)}
    missing = [iid for iid in cells if iid not in position]
    if missing:
        raise InputError(f"run {run.model}/{run.dataset} lacks {len(missing)} factorial items "
                         f"(e.g. {', '.join(sorted(missing)[:3])})", path=path, field="item_id")
    for context in ("original", "text", "blank"):
        if context not in run.margins:
            raise InputError(f"run {run.model}/{run.dataset} has no '{context}' context", path=path,
                             field="context")
    idx = np.array([position[iid] for iid in cells])
    require_contexts(run, ("original", "text", "blank"), idx)  # a partly scored context is NaN in a run
    where = np.array(list(cells.values()))
    out = {}
    for context in ("original", "text", "blank"):
        tensor = np.full((n_stems, 3, 3), np.nan)
        tensor[where[:, 0], where[:, 1], where[:, 2]] = np.asarray(run.margins[context], dtype=np.float64)[idx]
        out[context] = tensor
    return out


def agreement_records(m: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per-stem (stems, 2) boolean/float arrays of the agreement decisions (+,+) and (−,−)."""
    o, t, b = m["original"], m["text"], m["blank"]
    sign = np.array(SIGN)
    diag = np.stack([o[:, 0, 0], o[:, 1, 1]], axis=1)
    rev = np.stack([o[:, 1, 0], o[:, 0, 1]], axis=1)
    neutral = np.stack([o[:, 2, 0], o[:, 2, 1]], axis=1)
    gap = image_gap({"original": diag, "text": np.stack([t[:, 0, 0], t[:, 1, 1]], axis=1),
                     "blank": np.stack([b[:, 0, 0], b[:, 1, 1]], axis=1)})
    correct = (diag >= 0) == (sign > 0)
    credited = gap > 0
    cu = correct & ~credited
    response = sign * (diag - rev)
    responsive = response > 0
    return {"correct": correct, "credited": credited, "cu": cu, "gap": gap, "response": response,
            "cu_responsive": cu & responsive, "cu_nonresponsive": cu & ~responsive,
            "cu_flip": cu & ((rev >= 0) != (diag >= 0)), "cu_neutral_exceed": cu & (sign * (diag - neutral) > 0),
            "correct_responsive": correct & responsive, "neutral_excess": sign * (diag - neutral)}


def source_effects(m: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per-stem conditional effects: Δ_V per text state, Δ_T per visual state and control, interaction."""
    o = m["original"]
    out = {f"delta_v_{t}": o[:, 0, j] - o[:, 1, j] for j, t in enumerate(STATES)}
    out.update({f"delta_t_{v}": o[:, i, 0] - o[:, i, 1] for i, v in enumerate(STATES)})
    out["delta_t_text_only"] = m["text"][:, 2, 0] - m["text"][:, 2, 1]
    out["delta_t_blank"] = m["blank"][:, 2, 0] - m["blank"][:, 2, 1]
    out["interaction"] = out["delta_v_pos"] - out["delta_v_neg"]
    return out


#: why a nested rate or AUROC is not computable (Table 8)
NO_CORRECT_IMAGE = "no correct decision on an image-source cell"
NO_CORRECT_TEXT = "no correct decision on a text-source cell"
ONE_SOURCE_CORRECT = "correct decisions of one source only"


def nested_validation(m: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """Image-source (±, ∅) vs text-source (∅, ±) cells: credit TPR/FPR and source AUROC (Table 8); a rate
    or AUROC without its decisions (no correct decision of a source, one source only) is Missing(reason).

    A decision is correct when it gives the cell's label, :func:`vlaudit.builders.factorial.cell_label`.
    """
    o, t, b = m["original"], m["text"], m["blank"]
    # (visual index, text index, sign of the supported answer, image source?) from the builder's definition
    cells = [(STATES.index(v), STATES.index(tx), 1.0 if cell_label(v, tx) == "yes" else -1.0, image)
             for image, group in ((True, IMAGE_SOURCE_CELLS), (False, TEXT_SOURCE_CELLS)) for v, tx in group]
    mo = np.concatenate([o[:, v, j] for v, j, _, _ in cells])
    gap = image_gap({"original": mo, "text": np.concatenate([t[:, v, j] for v, j, _, _ in cells]),
                     "blank": np.concatenate([b[:, v, j] for v, j, _, _ in cells])})
    n = o.shape[0]
    supported = np.concatenate([np.full(n, s) for _, _, s, _ in cells])
    image_source = np.concatenate([np.full(n, img) for _, _, _, img in cells])
    credited = gap > 0
    correct = (mo >= 0) == (supported > 0)
    c = correct
    return {"n_image": int(image_source.sum()), "n_text": int((~image_source).sum()),
            "image_tpr": known(_mean(credited[image_source]), "no image-source cell"),
            "text_fpr": known(_mean(credited[~image_source]), "no text-source cell"),
            "n_correct_image": int((c & image_source).sum()), "n_correct_text": int((c & ~image_source).sum()),
            "image_tpr_correct": known(_mean(credited[c & image_source]), NO_CORRECT_IMAGE),
            "text_fpr_correct": known(_mean(credited[c & ~image_source]), NO_CORRECT_TEXT),
            "auroc_vca_correct": known(auroc(gap[c], image_source[c]), ONE_SOURCE_CORRECT),
            "auroc_confidence_correct": known(auroc(np.abs(mo[c]), image_source[c]), ONE_SOURCE_CORRECT),
            "auroc_vca_all": known(auroc(gap, image_source), "one source only")}


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values)) if values.size else float("nan")


def _proportions(counts: Mapping[str, int], per_stem: np.ndarray, names: Sequence[str]) -> dict[str, Any]:
    """Each conditional proportion and its Wilson interval, design-effect corrected over the stems
    (``per_stem``: ``(stems, len(names))`` event counts per stem)."""
    out: dict[str, Any] = {}
    for name, num, den in PROPORTIONS:
        k, n = int(counts[num]), int(counts[den])
        out[name] = k / n if n else float("nan")
        lo, hi = clustered_wilson_bounds(per_stem[:, names.index(num)], per_stem[:, names.index(den)])
        out[f"{name}_ci"] = [float(lo), float(hi)]
    return out


def analyze_factorial(runs: Sequence[Any], items: Sequence[BenchmarkItem], *, n_resamples: int = BOOTSTRAP_RESAMPLES,
                      seed: int = FACTORIAL_BOOTSTRAP_SEED, items_path: str | Path = "<items>",
                      margins_path: str | Path = "<margins>",
                      run_paths: Sequence[str | Path] | None = None) -> dict[str, Any]:
    """Every factorial quantity per model and pooled over models (see the module docstring).

    ``run_paths`` (one per run) names the margins file of each run in error messages.
    """
    if not runs:
        raise InputError("no margin runs to analyse", path=margins_path)
    stems, cells = factorial_cells(items, path=items_path)
    plan = ClusterBootstrap.draw(len(stems), n_resamples=n_resamples, seed=seed)
    models: list[dict[str, Any]] = []
    pooled_num: list[np.ndarray] = []
    names = sorted({num for _, num, _ in PROPORTIONS} | {den for _, _, den in PROPORTIONS})
    for k, run in enumerate(runs):
        m = margin_tensors(run, cells, len(stems), path=run_paths[k] if run_paths else margins_path)
        rec = agreement_records(m)
        counts = {k: int(rec[k].sum()) for k in names}
        per_stem = np.stack([rec[k].sum(axis=1) for k in names], axis=1).astype(np.float64)
        pooled_num.append(per_stem)
        effects = source_effects(m)
        keys = list(effects)
        values = np.stack([effects[k] for k in keys], axis=1)
        boot = plan.resample_cluster_values(values) / plan.counts.sum(axis=1, keepdims=True)
        ci = percentile_intervals(boot, n_clusters=plan.n_clusters, method=EXPANDED)
        cu = rec["cu"]
        cu_response = rec["response"][cu]
        reuse = max(float(np.nanmax(np.ptp(m[c], axis=1))) for c in ("text", "blank"))
        models.append({
            "model": run.model, "dataset": run.dataset, "interface": run.interface, "stems": len(stems),
            "agreement_decisions": int(rec["correct"].size), **counts, **_proportions(counts, per_stem, names),
            "cu_response_exceeds": {str(x): _mean(cu_response > x) for x in MAGNITUDES},
            "neutral": {"cu_mean_excess": _mean(rec["neutral_excess"][cu]),
                        "cu_median_excess": float(np.median(rec["neutral_excess"][cu])) if cu.any() else float("nan")},
            "effects": {k: {"mean": float(values[:, j].mean()), "ci": ci[j].tolist(),
                            "positive_share": float((values[:, j] > 0).mean())} for j, k in enumerate(keys)},
            "nested": nested_validation(m),
            "control_reuse_max_abs_diff": reuse,
        })
    stacked = np.sum(pooled_num, axis=0)  # (stems, names): every model's records of a stem stay together
    boot = plan.resample_cluster_values(stacked)
    pooled: dict[str, Any] = {k: int(stacked[:, j].sum()) for j, k in enumerate(names)}
    for name, num, den in PROPORTIONS:
        i, j = names.index(num), names.index(den)
        with np.errstate(invalid="ignore", divide="ignore"):
            samples = boot[:, i] / boot[:, j]
        pooled[name] = pooled[num] / pooled[den] if pooled[den] else float("nan")
        pooled[f"{name}_ci"] = percentile_intervals(samples, n_clusters=plan.n_clusters, method=EXPANDED)[0].tolist()
        rates = [mm[name] for mm in models if mm[den]]
        pooled[f"{name}_macro"] = float(np.mean(rates)) if rates else float("nan")
    small = small_sample_warning(len(stems), "stem", "factorial pooled intervals and source effects")
    return {"unit": "stem", "warnings": [small] if small else [],
            "items": str(items_path), "margins": str(margins_path), "stems": len(stems),
            "n_resamples": n_resamples, "seed": seed, "level": 0.95, "models": models, "pooled": pooled,
            "definitions": {
                "agreement": "cells (V+,T+) gold yes and (V-,T-) gold no",
                "cu": "correct and G_img = r_o - max(r_text, r_blank) <= 0 (VCA §3)",
                "responsive": "s*(m(V_s,T_s) - m(V_-s,T_s)) > 0 (relation reversal, same text)",
                "flip": "decision at (V_-s,T_s) differs from decision at (V_s,T_s)",
                "neutral_exceed": "s*(m(V_s,T_s) - m(V_0,T_s)) > 0 (object-preserving aligned image)",
                "delta_v": "m(V+,t) - m(V-,t)", "delta_t": "m(v,T+) - m(v,T-)",
                "interaction": "delta_v(T+) - delta_v(T-)",
                "intervals": "model: Wilson 95%, design-effect corrected over the stems (unit: stem; the paper's "
                             "Wilson is item-level); pooled and effects: expanded percentile over stem-id resamples "
                             "keeping all models"}}


def csv_rows(result: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Flat rows for factorial_models.csv (one per model + pooled) and factorial_effects.csv."""
    models = []
    for entry in [*result["models"], {"model": "pooled", **result["pooled"]}]:
        row = {"model": entry["model"], "dataset": entry.get("dataset"), "correct": entry["correct"],
               "cu": entry["cu"], "cu_responsive": entry["cu_responsive"], "cu_flip": entry["cu_flip"],
               "cu_neutral_exceed": entry["cu_neutral_exceed"]}
        for name, _, _ in PROPORTIONS:
            row[name] = entry[name]
            row[f"{name}_lo"], row[f"{name}_hi"] = entry[f"{name}_ci"] or (None, None)
        if "nested" in entry:
            row.update({f"nested_{k}": _missing_read(v) for k, v in entry["nested"].items()})
        models.append(row)
    effects = [{"model": e["model"], "effect": k, "mean": v["mean"], "lo": v["ci"][0], "hi": v["ci"][1],
                "positive_share": v["positive_share"]} for e in result["models"] for k, v in e["effects"].items()]
    # a Missing cell is its reason, so its column is written as text (results.cells.csv_rows)
    return cell_rows(models), effects


def _missing_read(value: Any) -> Any:
    """A JSON value with ``{"missing": reason}`` read back as :class:`Missing`."""
    return Missing(str(value["missing"])) if isinstance(value, Mapping) and set(value) == {"missing"} else value


def run_factorial_analysis(inputs: FactorialInputs, *, out_dir: str | Path, interface: str = "yesno",
                           n_resamples: int = BOOTSTRAP_RESAMPLES, seed: int = FACTORIAL_BOOTSTRAP_SEED) -> dict[str, Any]:
    """Analyse the runs and items read by :func:`vlaudit.sources.factorial_runs.read_factorial_inputs` (one
    ``vlaudit vca score`` run per model, pooled as in VCA §10) and write factorial.json + two CSV files."""
    result = analyze_factorial(inputs.runs, inputs.items, n_resamples=n_resamples, seed=seed,
                               items_path=inputs.items_path, margins_path=inputs.margins_label,
                               run_paths=inputs.run_paths)
    result["interface"] = interface
    result["files"] = [str(path) for path in write_factorial_files(out_dir, result)]
    return result


def write_factorial_files(out_dir: str | Path, result: Mapping[str, Any]) -> list[Path]:
    """``OUT/factorial.json`` (the :class:`FactorialResult`; the returned ``files`` list is not part of it)
    and the two CSV tables, ``factorial_models.csv`` and ``factorial_effects.csv``, each atomically: what
    ``vca factorial`` writes and ``vlaudit.factorial(...).save(OUT)`` writes."""
    out = Path(out_dir)
    # the JSON values (not computable: None, never NaN), so the CSV cells agree with the JSON file
    written = cast(dict[str, Any], to_json({k: v for k, v in result.items() if k != "files"}))
    record = FactorialResult.from_dict(written)
    model_rows, effect_rows = csv_rows(written)
    return [write_result(out / "factorial.json", record), write_table(out / "factorial_models.csv", model_rows),
            write_table(out / "factorial_effects.csv", effect_rows)]
