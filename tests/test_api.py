"""The public Python API: lazy top level, inputs users hold, typed results equal to the CLI's outputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from vca_fixtures import SUPPORT_LABELS, SUPPORT_MARGINS, rows_from_arrays

import vlaudit


def _cycles(n_per_split: int = 30) -> list[dict]:
    rows = []
    for split in ("train", "test"):
        for i in range(n_per_split):
            rows.append({"cycle_id": f"{split}{i}", "family": "f", "split": split,
                         "image_1": f"{split}u{i}a", "caption_1": f"{split}v{i}a",
                         "image_2": f"{split}u{i}b", "caption_2": f"{split}v{i}b"})
    return rows


def test_import_is_light_and_names_are_documented() -> None:
    code = ("import sys, vlaudit, vlaudit.api; "
            "print(sorted(m for m in ('numpy', 'torch', 'pandas') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    assert vlaudit.__all__ == vlaudit.api.__all__ and "__version__" in vlaudit.__all__
    for name in vlaudit.__all__:
        value = getattr(vlaudit, name)
        assert name == "__version__" or value.__doc__, f"vlaudit.{name} has no docstring"
    with pytest.raises(AttributeError):
        vlaudit.no_such_name  # noqa: B018


def test_additive_callable_scorer_on_a_dataframe_is_exactly_half_with_every_cycle_tied() -> None:
    import pandas as pd

    rng = np.random.default_rng(0)
    image_score, text_score = {}, {}

    def additive(image_ids, caption_ids):
        return np.array([image_score.setdefault(u, rng.normal()) + text_score.setdefault(v, rng.normal())
                         for u, v in zip(image_ids, caption_ids, strict=True)])

    result = vlaudit.evaluate_cycles(pd.DataFrame(_cycles()), additive, n_resamples=200)
    frame = result.to_frame()
    assert set(frame["split"]) == {"train", "test"}
    assert (frame["cycle_acc"] == 0.5).all() and (frame["tie_rate"] == 1.0).all()
    assert "0.5000 [0.5000, 0.5000]" in result._repr_html_()


def test_splits_are_never_pooled_and_restrictable() -> None:
    scores = {}
    for row in _cycles():
        plus = 1.0 if row["split"] == "train" else 0.0  # train cycles Δ > 0, test cycles Δ = 0
        scores[(row["image_1"], row["caption_1"])] = plus
        scores[(row["image_2"], row["caption_2"])] = 0.0
        scores[(row["image_1"], row["caption_2"])] = 0.0
        scores[(row["image_2"], row["caption_1"])] = 0.0
    result = vlaudit.evaluate_cycles(_cycles(), scores, n_resamples=100)
    by_split = {r["split"]: r["cycle_acc"] for r in result.rows}
    assert by_split == {"train": 1.0, "test": 0.5}
    only_test = vlaudit.evaluate_cycles(_cycles(), scores, splits=["test"], n_resamples=100)
    assert [r["split"] for r in only_test.rows] == ["test"]


def test_features_from_torch_tensors_feed_zero_shot_and_evaluation() -> None:
    import torch

    cycles = _cycles(2)
    image_ids = sorted({r[k] for r in cycles for k in ("image_1", "image_2")})
    caption_ids = sorted({r[k] for r in cycles for k in ("caption_1", "caption_2")})
    # Each image's embedding equals its own caption's: matched cosine 1, swapped cosine 0 → CycleAcc 1.
    basis = torch.eye(len(image_ids), dtype=torch.float32)
    feats = vlaudit.features_from_arrays(image_ids, basis, [i.replace("u", "v") for i in image_ids], basis)
    assert sorted(feats.caption_ids) == caption_ids
    scores = vlaudit.zero_shot_scores(feats, cycles)
    result = vlaudit.evaluate_cycles(cycles, scores, min_cycles=1, n_resamples=50)
    assert all(r["cycle_acc"] == 1.0 for r in result.rows)


def test_vca_report_from_a_dataframe_matches_the_cli(tmp_path: Path) -> None:
    import pandas as pd
    from typer.testing import CliRunner

    import vlaudit.cli  # noqa: F401  (registers every command)
    from vlaudit.commands._apps import app

    rows = rows_from_arrays(SUPPORT_MARGINS, labels=SUPPORT_LABELS)
    result = vlaudit.vca_report(pd.DataFrame(rows), n_resamples=300, seed=1)
    assert result.rows[0]["acc"] == pytest.approx(result.rows[0]["dcc"] + result.rows[0]["cu"])
    written = result.save(tmp_path / "api")
    assert (tmp_path / "api" / "vca.json") in written
    pd.DataFrame(rows).to_csv(tmp_path / "margins.csv", index=False)
    cli = CliRunner().invoke(app, ["vca", "report", str(tmp_path / "margins.csv"), "--out", str(tmp_path / "cli"),
                                   "--resamples", "300", "--seed", "1", "--no-plot"])
    assert cli.exit_code == 0, cli.output
    api_json = json.loads((tmp_path / "api" / "vca.json").read_text())
    cli_json = json.loads((tmp_path / "cli" / "vca.json").read_text())
    assert api_json["runs"] == cli_json["runs"]


def test_bad_rows_raise_the_cli_input_error() -> None:
    with pytest.raises(vlaudit.InputError, match="item_id"):
        vlaudit.vca_report([{"model": "m", "dataset": "d", "context": "original", "margin": 1.0}])
    with pytest.raises(vlaudit.InputError, match="row 1"):
        vlaudit.evaluate_cycles([{"cycle_id": "c", "family": "f"}], {})


def test_html_repr_escapes_data_text() -> None:
    result = vlaudit.Result({}, [{"family": "<script>alert(1)</script>", "n": 1}], title="t")
    assert "<script>" not in result._repr_html_() and "&lt;script&gt;" in result._repr_html_()


@pytest.mark.usefixtures("one_torch_thread")
def test_score_margins_then_report_on_a_tiny_model(make_benchmark, tiny_model, tmp_path: Path, tmp_path_factory, no_network) -> None:
    bench = tmp_path / "bench"
    make_benchmark(bench, n_images=2, questions=2)
    model = tiny_model("qwen2-vl")
    margins = vlaudit.score_margins(vlaudit.ScoreSpec.of(model=f"hf:{model}", benchmark=bench / "items.jsonl",
                                                         images=bench / "images", out=tmp_path / "run",
                                                         options={"max_pixels": 56 * 56 * 4}))
    frame = margins.to_frame()
    assert set(frame["context"]) == {"original", "text", "blank"} and len(frame) == 12
    report = vlaudit.vca_report(margins, n_resamples=100)
    assert report.rows and report.rows[0]["n"] == 4
