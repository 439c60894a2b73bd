"""One tie convention: |m| ≤ tol is no decision in the yes/no and the K-letter interfaces
alike, so a tied control never makes an item Strict; the report counts the items a tie decides beside Strict
and warns. On main the yes/no reading of a tied control as "yes" made items Strict that the K = 2 letter
reading of the same log-probabilities did not (ref:scene-vqa-grounded: 18 of 144 factorial items)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import vlaudit
from vlaudit.metrics.vca import choice, support
from vlaudit.settings import TIE_TOL

MARGINS = st.sampled_from([-2.0, -0.3, -TIE_TOL / 2, 0.0, TIE_TOL / 2, 0.4, 1.5])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(MARGINS, MARGINS, MARGINS), min_size=1, max_size=20))
def test_strict_and_survival_are_the_same_read_as_yes_no_or_as_two_letters(rows) -> None:
    """Letters A = yes, B = no with ℓ_A − ℓ_B = m: the aligned support of §3 gives the same Strict, survival
    and tie counts as the yes/no margins, ties included."""
    m = {c: np.array([r[k] for r in rows]) for k, c in enumerate(("original", "text", "blank"))}
    logp = {c: np.column_stack([v / 2, -v / 2]) for c, v in m.items()}
    d = choice.predicted_option(logp["original"])
    aligned = {c: choice.option_support(lp, d) for c, lp in logp.items()}
    assert np.array_equal(support.strict_isolation(m), support.strict_isolation(aligned))
    dep = np.ones(len(rows), dtype=bool)
    assert support.decision_survival(m, dep) == support.decision_survival(aligned, dep)
    gap_m, gap_a = support.image_gap(m), support.image_gap(aligned)
    np.testing.assert_allclose(gap_m, gap_a, atol=1e-12)
    assert support.tie_counts(m, gap_m) == support.tie_counts(aligned, gap_a)


def test_a_tied_control_never_makes_an_item_strict_and_is_counted() -> None:
    """The grounded reader's shape: no image gives m_text = 0; the blank decides the other way."""
    m = {"original": np.array([-3.0, -2.0, 2.5, 1.0]), "text": np.zeros(4), "blank": np.array([1.0, 2.0, -1.0, 0.5])}
    assert not support.strict_isolation(m).any()
    assert support.tie_counts(m, support.image_gap(m)) == {"acc": 0, "dep": 0, "strict": 3}
    decided = dict(m, text=np.array([1.0, 0.5, -2.0, -1.0]))
    assert support.strict_isolation(decided).tolist() == [True, True, True, False]
    assert not support.strict_isolation({"original": np.zeros(1), "text": -np.ones(1), "blank": -np.ones(1)})[0]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _tied_rows(n: int, seed: int) -> tuple[list[dict], list[dict]]:
    """Yes/no and 2-letter rows of the same log-probs; the text context is an exact tie on every item."""
    rng = np.random.default_rng(seed)
    yesno, letter = [], []
    for i in range(n):
        gold = bool(i % 2)
        for context in ("original", "text", "blank"):
            a, b = float(-abs(rng.normal(1, 0.7))), float(-abs(rng.normal(1, 0.7)))
            if context == "text":
                a = b
            head = {"model": "m", "dataset": "d", "item_id": f"i{i:03d}", "context": context}
            yesno.append(head | {"interface": "yesno", "logp_yes": a, "logp_no": b, "label": "yes" if gold else "no"})
            letter.append(head | {"interface": "letter", "logp_options": [a, b], "option_letters": "AB",
                                  "label": "A" if gold else "B"})
    return yesno, letter


def test_the_report_counts_and_warns_and_both_interfaces_agree(tmp_path: Path) -> None:
    yesno, letter = _tied_rows(40, seed=2)
    a = vlaudit.vca_report(_write(tmp_path / "y.jsonl", yesno), n_resamples=100).data["runs"][0]
    b = vlaudit.vca_report(_write(tmp_path / "l.jsonl", letter), n_resamples=100).data["runs"][0]
    assert a["strict"] == b["strict"] and a["ties"] == b["ties"]
    assert a["ties"]["strict"] > 0 and a["ties"]["tol"] == TIE_TOL
    assert any(w.startswith("ties decide Strict on") for w in a["warnings"])
    text_same = [[c["same"] for c in r["survival"]["controls"] if c["control"] == "text"] for r in (a, b)]
    assert text_same == [[1.0], [1.0]]  # a tie keeps the decision


def test_compare_vca_warns_when_ties_decide_a_compared_metric(tmp_path: Path) -> None:
    yesno, _ = _tied_rows(30, seed=4)
    other = [dict(r, model="n", logp_yes=r["logp_yes"] + (0.5 if r["context"] == "text" else 0.0)) for r in yesno]
    data = vlaudit.compare_vca([_write(tmp_path / "a.jsonl", yesno), _write(tmp_path / "b.jsonl", other)],
                               n_resamples=50, n_permutations=50).data
    assert [w for w in data["warnings"] if w.startswith("ties decide Strict on 13 of 30") and "model='m'" in w]
    assert not [w for w in data["warnings"] if "model='n'" in w]
