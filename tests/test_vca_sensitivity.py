"""VCA §18 Table 28: Dep, Strict T/B, Dep+M and Strict+M (each its own column) and mean G_img."""

from __future__ import annotations

import pytest
from vca_fixtures import rows_from_arrays

from vlaudit.analysis.vca.report import ReportSettings, compute_report
from vlaudit.report.vca_files import sensitivity_rows
from vlaudit.sources.margins import runs_from_rows

# model, data, n, Dep, Strict T/B, Dep+M, Strict+M, mean G_img — as printed in Table 28
TABLE_28 = [
    ("Qwen", "VSR", 1249, 71.10, 48.68, 62.21, 47.72, 2.476),
    ("Qwen", "GSR-COCO", 880, 81.82, 42.84, 74.89, 40.23, 2.953),
    ("InternVL", "VSR", 1249, 57.01, 6.57, 50.52, 3.36, 0.297),
    ("InternVL", "GSR-COCO", 880, 42.84, 10.45, 37.73, 8.07, -0.264),
    ("LLaVA", "VSR", 1249, 76.38, 21.54, 75.58, 20.58, 1.072),
    ("LLaVA", "GSR-COCO", 880, 64.55, 5.91, 59.66, 5.45, 0.651),
    ("Ministral", "VSR", 1249, 63.33, 13.93, 52.12, 5.44, 0.898),
    ("Ministral", "GSR-COCO", 880, 59.77, 24.43, 45.00, 6.82, 0.605),
]


def table_28_margins(n: int, dep: float, strict: float, dep_m: float, strict_m: float, gap_mean: float,
                     k: float = 10.0) -> dict[str, list[float]]:
    """Margins (original, text, blank, mismatch) with the printed rates as counts of five item kinds:

    A strict under every control and the mismatch (o=k; t, b, m = −1; G = k+1); B strict T/B only, the mismatch
    agreeing weakly (m=+1); C Dep and Dep+M, not strict (t=+1; G = k−1); D Dep but not Dep+M (m = k+1);
    E not Dep (o=1, t=1+e, G = −e), e solving the printed mean G_img.
    """
    counts = [round(x * n / 100) for x in (dep, strict, dep_m, strict_m)]
    n_dep, n_strict, n_dep_m, n_strict_m = counts
    kinds = {"A": n_strict_m, "B": n_strict - n_strict_m, "C": n_dep_m - n_strict, "D": n_dep - n_dep_m,
             "E": n - n_dep}
    assert min(kinds.values()) >= 0
    e = ((k + 1) * n_strict + (k - 1) * (n_dep - n_strict) - gap_mean * n) / kinds["E"]
    assert e >= 0
    rows = {"A": (k, -1.0, -1.0, -1.0), "B": (k, -1.0, -1.0, 1.0), "C": (k, 1.0, -1.0, 1.0),
            "D": (k, 1.0, -1.0, k + 1), "E": (1.0, 1.0 + e, 0.0, 0.0)}
    items = [rows[kind] for kind, count in kinds.items() for _ in range(count)]
    return {c: [item[j] for item in items] for j, c in enumerate(("original", "text", "blank", "mismatch"))}


def test_sensitivity_table_reproduces_table_28() -> None:
    rows = []
    for model, data, n, *values in TABLE_28:
        rows += rows_from_arrays(table_28_margins(n, *values), model=model, dataset=data,
                                 item_ids=[f"{k:05d}" for k in range(n)])
    report = compute_report(runs_from_rows(rows), ReportSettings(n_resamples=20, control_sets=()))
    table = {(r["model"], r["dataset"]): r for r in sensitivity_rows(report.runs)}
    for model, data, n, dep, strict, dep_m, strict_m, gap_mean in TABLE_28:
        row = table[(model, data)]
        assert (row["n"], row["n_m"], row["n_m_excluded"]) == (n, n, 0)
        printed = [round(100 * row[k], 2) for k in ("dep", "strict", "dep_m", "strict_m")]
        assert printed == pytest.approx([dep, strict, dep_m, strict_m], abs=1e-9), (model, data)
        assert round(row["gap_mean"], 3) == pytest.approx(gap_mean, abs=1e-9)
        assert row["strict_m_lo"] <= row["strict_m"] <= row["strict_m_hi"]


def test_strict_m_is_its_own_column_beside_dep_m() -> None:
    """Strict+M requires opposite-answer isolation under text, blank AND mismatch; Dep+M only a positive gap."""
    margins = {"original": [2.0, 2.0, 2.0], "text": [-1.0, -1.0, 1.0], "blank": [-1.0, -1.0, -1.0],
               "mismatch": [-1.0, 1.0, 1.0]}
    (run,) = compute_report(runs_from_rows(rows_from_arrays(margins)), ReportSettings(n_resamples=20)).runs
    sens = run.sensitivity
    assert (sens.dep, sens.strict, sens.dep_m, sens.strict_m) == pytest.approx((1, 2 / 3, 1, 1 / 3))
    (row,) = sensitivity_rows([run])
    columns = list(row)
    assert columns.index("strict_m") == columns.index("dep_m") + 1
