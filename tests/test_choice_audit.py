"""The multiple-choice audit: VCA §3 over K option letters, and its identity with the yes/no audit at K = 2.

A yes/no benchmark is written both ways from the same log-probabilities — yes/no rows (logp_yes, logp_no)
and 2-option letter rows (options yes, no; logp_options [yes, no]; gold letter) — and every number of
``vca report`` must come out equal, bit for bit, once the letters are read as the words.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

CONTEXTS = ("original", "text", "blank", "mismatch")


def _rows(n: int, seed: int) -> tuple[list[dict], list[dict]]:
    rng = np.random.default_rng(seed)
    yesno, letter = [], []
    for i in range(n):
        gold = bool(rng.random() < 0.5)
        image_effect = rng.normal(0, 2)
        for context in CONTEXTS:
            shift = image_effect if context in ("original", "mismatch") else 0.0
            logp_yes = float(-abs(rng.normal(1.0, 0.7)) + shift * (0.5 if context == "mismatch" else 1.0))
            logp_no = float(-abs(rng.normal(1.0, 0.7)))
            head = {"model": "m", "dataset": "d", "item_id": f"i{i:03d}", "context": context}
            yesno.append(head | {"interface": "yesno", "logp_yes": logp_yes, "logp_no": logp_no,
                                 "label": "yes" if gold else "no"})
            letter.append(head | {"interface": "letter", "logp_options": [logp_yes, logp_no],
                                  "option_letters": "AB", "label": "A" if gold else "B"})
    return yesno, letter


def _as_words(value):
    """A letter report read with A = yes and B = no (the interface named as the yes/no one)."""
    if isinstance(value, dict):
        return {{"A": "yes", "B": "no"}.get(k, k): _as_words(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_words(v) for v in value]
    return {"letter": "yesno", "A": "yes", "B": "no"}.get(value, value) if isinstance(value, str) else value


def _report(cli, tmp_path, name: str, rows: list[dict]) -> dict:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / f"{name}-report"
    code, stdout, stderr = cli("vca", "report", path, "--out", out, "--resamples", 300, "--no-plot")
    assert code == 0, stderr
    report = json.loads((out / "vca.json").read_text(encoding="utf-8"))
    report["items_csv"] = (out / "items.csv").read_text(encoding="utf-8")
    assert report.pop("margins_files") == [str(path)]  # where the report was read from: the one field that differs
    return report


def test_two_option_letter_report_equals_the_yes_no_report(cli, tmp_path) -> None:
    yesno, letter = _rows(60, seed=3)
    a = _report(cli, tmp_path, "yesno", yesno)
    b = _report(cli, tmp_path, "letter", letter)
    items_a, items_b = a.pop("items_csv"), b.pop("items_csv")
    assert _as_words(b) == a  # every number of vca.json: rates, CIs, strata, survival, permutation, gaps
    as_words = items_b.replace('"letter"', '"yesno"').replace('"A"', '"yes"').replace('"B"', '"no"')
    assert as_words == items_a
    run = a["runs"][0]
    assert 0 < run["dcc"] < run["acc"] and run["perm"]["delta_dcc"] is not None  # a non-trivial audit


def test_four_option_audit_by_hand() -> None:
    """d, r_c, G_img, Dep, correctness and Strict of three items computed by hand (VCA §3)."""
    from vlaudit.analysis.vca.report import run_events
    from vlaudit.sources.margins import runs_from_rows

    logp = {  # item -> context -> log p(A..D)
        "credited": {"original": [-0.1, -3.0, -4.0, -5.0], "text": [-1.4, -1.3, -1.5, -1.6],
                     "blank": [-1.0, -1.2, -2.0, -2.0]},
        "prior": {"original": [-2.0, -0.5, -3.0, -3.0], "text": [-2.0, -0.4, -3.0, -3.0],
                  "blank": [-2.0, -0.6, -3.0, -3.0]},
        "wrong": {"original": [-3.0, -3.0, -0.2, -2.5], "text": [-1.0, -2.0, -2.0, -2.0],
                  "blank": [-1.0, -2.0, -2.0, -2.0]},
    }
    gold = {"credited": "A", "prior": "B", "wrong": "D"}
    rows = [{"model": "m", "dataset": "d", "item_id": item, "context": c, "interface": "letter",
             "logp_options": values, "label": gold[item]} for item, by in logp.items() for c, values in by.items()]
    [run] = runs_from_rows(rows)
    ev = run_events(run)
    by_id = {str(i): k for k, i in enumerate(ev.run.item_ids)}
    # credited: d = A, r_o = −0.1 − (−3.0) = 2.9, r_t = −1.4 − (−1.3) = −0.1, r_b = −1.0 − (−1.2) = 0.2
    k = by_id["credited"]
    assert ev.gap[k] == pytest.approx(2.9 - 0.2) and ev.dep[k] and ev.correct[k] and not ev.strict[k]
    # prior: d = B everywhere with r_o = 1.5, r_t = 1.6: not Dep, correct
    k = by_id["prior"]
    assert ev.gap[k] == pytest.approx(1.5 - 1.6) and not ev.dep[k] and ev.correct[k]
    # wrong: d = C (gold D), both controls prefer A: r_t = r_b = −2.0 + 1.0 → G = 2.3 + 1.0, Strict
    k = by_id["wrong"]
    assert ev.gap[k] == pytest.approx(2.3 + 1.0) and ev.dep[k] and not ev.correct[k] and ev.strict[k]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.floats(-20, 0), min_size=2, max_size=6), min_size=1, max_size=8), st.integers(0, 5))
def test_aligned_support_is_the_margin_to_the_best_other_option(rows, pick) -> None:
    from vlaudit.metrics.vca.choice import option_support, predicted_option

    width = max(len(r) for r in rows)
    logp = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        logp[i, :len(r)] = r
    d = predicted_option(logp)
    r_o = option_support(logp, d)
    for i, values in enumerate(rows):
        assert values[d[i]] == max(values) and d[i] == values.index(max(values))  # earliest maximiser
        assert r_o[i] == values[d[i]] - max(v for k, v in enumerate(values) if k != d[i]) and r_o[i] >= 0
    other = np.minimum(d + 1, [len(r) - 1 for r in rows]) if pick else d
    assert (option_support(logp, other) <= r_o).all()
