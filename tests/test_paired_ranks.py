"""Leaderboards rank from paired comparisons: a model outranks another when their paired,
multiplicity-adjusted comparison says so; overlapping own intervals no longer tie two models the paired
comparison separates, and a model without a value is unranked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import vlaudit
from vlaudit.analysis.compare.ranks import ranked
from vlaudit.files import write_jsonl
from vlaudit.results.compare import VcaComparison, VcaLeaderboardRow
from vlaudit.stats.ranking import paired_ranks

NAN = float("nan")


def outranks_from_intervals(intervals: np.ndarray) -> np.ndarray:
    """(A test helper.) ``outranks[b, a]`` from the ``(m, m, 2)`` intervals of the paired differences values[b] − values[a]:
    the interval lies wholly above 0 (a NaN interval separates nothing)."""
    iv = np.asarray(intervals, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return iv[:, :, 0] > 0


def own_interval_ranks(intervals: np.ndarray) -> list[int]:
    """The old rule, re-expressed from vlaudit.stats.paired.rank_with_ties: 1 + #{models whose own interval
    lies wholly above this one's}; a NaN interval ranked 1."""
    lo, hi = intervals[:, 0], intervals[:, 1]
    with np.errstate(invalid="ignore"):
        return [int(1 + np.sum(lo > hi[i])) for i in range(len(intervals))]


def _antisymmetric(pairs: dict[tuple[int, int], tuple[float, float]], m: int) -> np.ndarray:
    iv = np.zeros((m, m, 2))
    for (a, b), (lo, hi) in pairs.items():
        iv[a, b], iv[b, a] = (lo, hi), (-hi, -lo)
    return iv


def test_the_three_model_example_ranks_a_above_c() -> None:
    """A, B, C with overlapping own intervals; the paired interval of A − C is [0.025, 0.45], the others hold 0."""
    values = np.array([0.70, 0.60, 0.46])
    own = np.array([[0.50, 0.88], [0.40, 0.80], [0.25, 0.66]])
    paired = _antisymmetric({(0, 1): (-0.08, 0.30), (0, 2): (0.025, 0.45), (1, 2): (-0.05, 0.33)}, 3)
    assert own_interval_ranks(own) == [1, 1, 1]  # what the leaderboard said before
    assert paired_ranks(values, outranks_from_intervals(paired)) == [1, 1, 2]


def _comparison(a: str, b: str, difference: float, ci: tuple[float, float], survives: bool) -> VcaComparison:
    return VcaComparison(dataset="d", interface="yesno", family="all", metric="acc", model_a=a, model_b=b, n=40,
                         unit="item", n_clusters=40, holm_family="d/yesno/all/headline", value_a=None, value_b=None, difference=difference, ci=ci, test="mcnemar", p=0.01,
                         p_holm=0.01 if survives else 0.2, survives=survives)


def _board(values: dict[str, float | None]) -> list[VcaLeaderboardRow]:
    return [VcaLeaderboardRow(dataset="d", interface="yesno", family="all", metric="acc", model=name, n=40,
                              value=value, ci=None, rank=None) for name, value in values.items()]


def _cell(row: Any) -> tuple[str, str, str, str]:
    return row.dataset, row.interface, row.family, row.metric


def test_the_table_ranks_a_above_c_when_their_comparison_survives_with_the_interval_agreeing() -> None:
    board = _board({"A": 0.70, "B": 0.60, "C": 0.46})
    table = [_comparison("A", "B", 0.10, (-0.08, 0.30), False), _comparison("A", "C", 0.24, (0.025, 0.45), True),
             _comparison("C", "B", -0.14, (-0.33, 0.05), False)]
    assert [r.rank for r in ranked(board, table, _cell)] == [1, 1, 2]
    # the other way round (C − A) says the same; an interval that holds 0 or a comparison that does not
    # survive separates nothing
    flipped = [table[0], _comparison("C", "A", -0.24, (-0.45, -0.025), True), table[2]]
    assert [r.rank for r in ranked(board, flipped, _cell)] == [1, 1, 2]
    holds_zero = [table[0], _comparison("A", "C", 0.24, (-0.01, 0.45), True), table[2]]
    assert [r.rank for r in ranked(board, holds_zero, _cell)] == [1, 1, 1]


def test_a_model_without_a_value_is_unranked_and_separates_nothing() -> None:
    values = np.array([0.7, NAN, 0.5])
    paired = _antisymmetric({(0, 1): (NAN, NAN), (0, 2): (0.1, 0.3), (1, 2): (NAN, NAN)}, 3)
    assert paired_ranks(values, outranks_from_intervals(paired)) == [1, None, 2]
    assert own_interval_ranks(np.array([[0.6, 0.8], [NAN, NAN], [0.4, 0.55]]))[1] == 1  # the old rule ranked it 1
    assert paired_ranks(np.array([0.7, 0.6]), outranks_from_intervals(_antisymmetric({(0, 1): (NAN, NAN)}, 2))) \
        == [1, 1]
    board = _board({"A": 0.7, "B": None})
    assert [r.rank for r in ranked(board, [_comparison("A", "B", 0.3, (0.1, 0.5), True)], _cell)] == [1, None]


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 5), st.integers(0, 2**31 - 1), st.randoms(use_true_random=False))
def test_ranks_follow_the_models_when_they_are_reordered(m: int, seed: int, shuffle: Any) -> None:
    rng = np.random.default_rng(seed)
    values = rng.random(m)
    centre = values[:, None] - values[None, :]
    half = rng.random((m, m)) * 0.3
    half = (half + half.T) / 2
    beats = outranks_from_intervals(np.stack([centre - half, centre + half], axis=-1))
    order = list(range(m))
    shuffle.shuffle(order)
    ranks = paired_ranks(values, beats)
    moved = paired_ranks(values[order], beats[np.ix_(order, order)])
    assert moved == [ranks[k] for k in order]
    assert ranks[int(np.argmax(values))] == 1  # the best value is never outranked by a lower one here


def _margin_file(folder: Path, model: str, correct: np.ndarray) -> Path:
    """A run whose original decision is right exactly on ``correct`` (labels alternate), controls at 0.1."""
    labels = np.arange(correct.size) % 2 == 0
    says_yes = labels == correct
    rows = [{"model": model, "dataset": "toy", "item_id": f"q{k:03d}", "context": c, "label": "yes" if labels[k]
             else "no", "source_sha256": f"img{k}", "margin": (1.0 if says_yes[k] else -1.0) if c == "original"
             else 0.1} for k in range(correct.size) for c in ("original", "text", "blank")]
    folder.mkdir(parents=True)
    write_jsonl(folder / "margins.jsonl", rows)
    return folder / "margins.jsonl"


def test_compare_vca_ranks_a_model_above_another_that_it_beats_on_the_same_items(tmp_path: Path) -> None:
    """C right on 120 of 200 items, B on those and 8 more, A on those and 16 more: own intervals overlap, and
    A − C (+0.08, every discordant item in A's favour) survives Holm while A − B and B − C (+0.04) do not."""
    n = 200
    base = np.zeros(n, dtype=bool)
    base[:120] = True
    b, a = base.copy(), base.copy()
    b[120:128] = True
    a[120:136] = True
    paths = [_margin_file(tmp_path / name, name, events) for name, events in (("a", a), ("b", b), ("c", base))]
    data = vlaudit.compare_vca(paths, n_resamples=1000, n_permutations=200).data
    board = {r["model"]: r for r in data["leaderboard"] if r["metric"] == "acc" and r["family"] == "all"}
    rows = {(r["model_a"], r["model_b"]): r for r in data["comparisons"]
            if r["metric"] == "acc" and r["family"] == "all"}
    assert board["a"]["ci"][0] < board["c"]["ci"][1]  # their own intervals overlap (the old rule: both rank 1)
    assert rows[("a", "c")]["survives"] and not rows[("a", "b")]["survives"] and not rows[("b", "c")]["survives"]
    assert [board[k]["rank"] for k in ("a", "b", "c")] == [1, 1, 2]
