"""`vlaudit compare cycles` / `vlaudit.compare_cycles`: ΔCycleAcc per family and split, the exact sign-flip test
on ½ credits, tie rates, and Winoground metric differences on 2×2 cycles."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import vlaudit
from vlaudit.cli import app
from vlaudit.errors import InputError
from vlaudit.files import read_json, write_jsonl
from vlaudit.records import Cycle
from vlaudit.stats.sign_flip import sign_flip_test


def _cycles(n: int = 40, winoground: bool = False) -> list[Cycle]:
    out = []
    for k in range(n):
        extra = {"benchmark": "wino", "benchmark_metrics": "winoground"} if winoground else {}
        out.append(Cycle(f"c{k}", "left" if k % 2 else "above", f"u{k}a", f"v{k}a", f"u{k}b", f"v{k}b",
                         split="test" if k < n * 3 // 4 else "val", extra=extra))
    return out


def _scores(cycles: list[Cycle], seed: int, signal: float, ties: int = 0) -> dict[tuple[str, str], float]:
    rng = np.random.default_rng(seed)
    scores = {}
    for k, c in enumerate(cycles):
        s11, s22, s12, s21 = rng.normal(0, 1, 4) + np.array([signal, signal, 0, 0])
        if k < ties:
            s11, s22, s12, s21 = 1.0, 1.0, 1.0, 1.0
        scores |= {(c.image_1, c.caption_1): s11, (c.image_2, c.caption_2): s22,
                   (c.image_1, c.caption_2): s12, (c.image_2, c.caption_1): s21}
    return scores


def test_delta_cycle_acc_per_family_and_split_with_sign_test_and_ties() -> None:
    cycles = _cycles()
    a, b = _scores(cycles, 0, 3.0, ties=4), _scores(cycles, 1, 0.0)
    data = vlaudit.compare_cycles(cycles, {"a": a, "b": b}, min_cycles=5, n_resamples=300,
                                  n_permutations=200).data
    cells = {(r["split"], r["family"]) for r in data["comparisons"]}
    assert cells == {("test", "all"), ("test", "above"), ("test", "left"), ("val", "all"), ("val", "above"),
                     ("val", "left")}
    row = next(r for r in data["comparisons"] if (r["split"], r["family"]) == ("test", "all"))
    assert row["test"] == "sign-flip" and row["n"] == 30 and row["tie_rate_a"] == pytest.approx(4 / 30)
    assert row["tie_rate_b"] == 0.0 and row["difference"] > 0.3 and row["ci"][0] > 0
    # the exact sign-flip test on the per-cycle credit differences (a tie's ½ credit as it is), cycle clusters
    from vlaudit.metrics.cycles import block_scores, cycle_contrast, cycle_credit

    test = [c for c in cycles if c.split == "test"]
    credit = [cycle_credit(cycle_contrast(*block_scores(test, s).T)) for s in (a, b)]
    assert row["p"] == sign_flip_test(credit[0] - credit[1], [c.cycle_id for c in test]).p
    assert {r["family"] for r in data["skipped"]} == set()
    swapped = vlaudit.compare_cycles(cycles, {"b": b, "a": a}, min_cycles=5, n_resamples=300,
                                     n_permutations=200).data
    for x, y in zip(data["comparisons"], swapped["comparisons"], strict=True):
        assert x["difference"] == -y["difference"] and x["ci"] == [-y["ci"][1], -y["ci"][0]] and x["p"] == y["p"]


def test_small_families_are_skipped_and_identical_scores_give_zero() -> None:
    cycles = _cycles(20)
    a = _scores(cycles, 2, 1.0)
    data = vlaudit.compare_cycles(cycles, {"a": a, "copy": dict(a)}, min_cycles=8, n_resamples=100,
                                  n_permutations=100).data
    assert any(r["split"] == "val" for r in data["skipped"])
    for row in data["comparisons"]:
        assert row["difference"] == 0.0 and row["ci"] == [0.0, 0.0] and row["p"] == 1.0
    with pytest.raises(InputError, match="at least two"):
        vlaudit.compare_cycles(cycles, {"a": a})


def test_winoground_differences_and_the_command(tmp_path: Path) -> None:
    cycles = _cycles(40, winoground=True)
    write_jsonl(tmp_path / "cycles.jsonl", [{"cycle_id": c.cycle_id, "family": c.family, "image_1": c.image_1,
                                             "caption_1": c.caption_1, "image_2": c.image_2,
                                             "caption_2": c.caption_2, "split": c.split, **c.extra}
                                            for c in cycles])
    for name, seed, signal in (("good", 3, 3.0), ("poor", 4, 0.0)):
        write_jsonl(tmp_path / f"{name}.jsonl", [{"image_id": u, "caption_id": v, "score": s}
                                                 for (u, v), s in _scores(cycles, seed, signal).items()])
    result = CliRunner().invoke(app, ["compare", "cycles", "--cycles", str(tmp_path / "cycles.jsonl"),
                                      "--scores", f"good={tmp_path / 'good.jsonl'}",
                                      "--scores", f"poor={tmp_path / 'poor.jsonl'}", "--min-cycles", "5",
                                      "--resamples", "200", "--permutations", "200", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    data = read_json(tmp_path / "o" / "compare_cycles.json")
    wino = [r for r in data["comparisons"] if r["benchmark"] == "wino"]
    assert {r["metric"] for r in wino} == {"text", "image", "group"}
    assert all(r["test"] == "mcnemar" for r in wino)
    group = next(r for r in wino if r["metric"] == "group" and r["split"] == "test" and r["family"] == "all")
    assert group["difference"] > 0 and group["survives"]
    assert "CycleAcc / test" in result.output


@pytest.mark.slow  # ~5 s: three models evaluated, compared and reported
def test_three_models_get_a_leaderboard_pairwise_matrices_and_a_report_section(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    cycles = _cycles(40, winoground=True)
    write_jsonl(tmp_path / "cycles.jsonl", [{"cycle_id": c.cycle_id, "family": c.family, "image_1": c.image_1,
                                             "caption_1": c.caption_1, "image_2": c.image_2,
                                             "caption_2": c.caption_2, "split": c.split, **c.extra}
                                            for c in cycles])
    names = ("model-with-a-long-name-good", "model-with-a-long-name-mid", "model-with-a-long-name-poor")
    for name, seed, signal in zip(names, (5, 6, 7), (3.0, 1.0, 0.0), strict=True):
        write_jsonl(tmp_path / f"{name}.jsonl", [{"image_id": u, "caption_id": v, "score": s}
                                                 for (u, v), s in _scores(cycles, seed, signal).items()])
    out = tmp_path / "o"
    result = CliRunner().invoke(app, ["compare", "cycles", "--cycles", str(tmp_path / "cycles.jsonl"),
                                      *[a for n in names for a in ("--scores", f"{n}={tmp_path / (n + '.jsonl')}")],
                                      "--min-cycles", "5", "--resamples", "100", "--permutations", "100",
                                      "--out", str(out)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    # every line fits 80 columns, except a path alone on its line (a word that cannot be broken)
    assert not [line for line in result.output.splitlines() if len(line) > 80 and len(line.split()) > 1]
    assert "CycleAcc / test: leaderboard" in result.output
    pngs = sorted(p.name for p in out.glob("pairwise_*.png"))
    assert pngs == ["pairwise_cycles_test.png", "pairwise_cycles_val.png", "pairwise_wino_test.png",
                    "pairwise_wino_val.png"]
    assert all((out / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    good_first = [r for r in read_json(out / "compare_cycles.json")["leaderboard"]
                  if (r["benchmark"], r["split"], r["family"], r["metric"]) == (None, "test", "all", "cycle_acc")]
    assert next(r["rank"] for r in good_first if r["model"] == names[0]) == 1
    assert CliRunner().invoke(app, ["report", str(out)]).exit_code == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="comparison"' in page and "Leaderboard" in page and "pairwise_wino_test.png" in page
    assert "<th>Split</th>" in page or ">Split<" in page
    no_plot = tmp_path / "np"
    vlaudit.compare_cycles(tmp_path / "cycles.jsonl", {n: tmp_path / f"{n}.jsonl" for n in names}, out=no_plot,
                           min_cycles=5, n_resamples=20, n_permutations=20, plot=False)
    assert not list(no_plot.glob("pairwise_*.png"))
