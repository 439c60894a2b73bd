"""The cross-model ranking ρ of the §18 per-run proxies (VCA §18): per dataset, Spearman ρ
between the models' ranking by a proxy (Perceptual Score, Visual Dependence, Acc) and by D-CC."""

from __future__ import annotations

import pytest

from vlaudit.analysis.vca.proxies import model_ranking_rows
from vlaudit.results.missing import Missing
from vlaudit.results.vca.proxies import ProxyAggregate


def _run(model: str, dataset: str, ps: float, vd: float, acc: float, dcc: float) -> ProxyAggregate:
    return ProxyAggregate(model, dataset, 100, acc, ps, 100, vd, 100, dcc=dcc)


def test_spearman_rho_across_models_by_hand() -> None:
    # Perceptual Score ranks the models 1, 2, 3, 4; D-CC ranks them 1, 2, 4, 3: Σd² = 2, ρ = 1 − 6·2/(4·15) = 0.8
    runs = [_run("a", "vsr", 0.1, 0.4, 0.7, 0.5), _run("b", "vsr", 0.2, 0.3, 0.8, 0.6),
            _run("c", "vsr", 0.3, 0.2, 0.9, 0.8), _run("d", "vsr", 0.4, 0.1, 0.95, 0.7),
            _run("a", "gsr", 0.1, 0.1, 0.5, 0.2), _run("b", "gsr", 0.2, 0.1, 0.6, 0.3)]
    rows = {(r.dataset, r.proxy): r for r in model_ranking_rows(runs)}
    assert rows[("vsr", "Perceptual Score")].rho == pytest.approx(0.8)
    assert rows[("vsr", "Perceptual Score")].models == ["a", "b", "c", "d"]
    assert rows[("vsr", "Visual Dependence")].rho == pytest.approx(-0.8)  # the reverse order
    assert rows[("vsr", "Acc")].rho == pytest.approx(0.8) and rows[("vsr", "Acc")].against == "D-CC"
    assert rows[("gsr", "Acc")].rho == Missing("2 model(s) with Acc and D-CC; a ranking ρ needs 3")
    constant = [_run(m, "x", 0.1, 0.2, 0.5, d) for m, d in (("a", 0.1), ("b", 0.2), ("c", 0.3))]
    assert {r.proxy: r.rho for r in model_ranking_rows(constant)}["Perceptual Score"] == Missing("a constant column")


def test_a_proxy_missing_for_a_model_leaves_it_out() -> None:
    runs = [_run(m, "vsr", 0.1 * k, 0.1, 0.5, 0.1 * k) for k, m in enumerate("abcd", start=1)]
    runs[1] = ProxyAggregate("b", "vsr", 100, 0.5, Missing("no mismatch context"), 0, 0.1, 100, dcc=0.2)
    row = next(r for r in model_ranking_rows(runs) if r.proxy == "Perceptual Score")
    assert row.models == ["a", "c", "d"] and row.rho == pytest.approx(1.0)
