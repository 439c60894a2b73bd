"""`vlaudit vca score-dual`: cosine decision margins of dual encoders under the VCA contexts, read by `vca report`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from dual_groups import make_groups
from typer.testing import CliRunner

from vlaudit.cli import app

runner = CliRunner()


class PlantedDual:
    """A dual encoder with a planted answer: the image tower sees which side the red square is on.

    Image: [1, 0, 1] when the red square is left of the blue one, [0, 1, 1] when right, [0, 0, 1] when the image
    has no red/blue layout (blank, mean colour). Text: [1, 0, 1] for "left of", [0, 1, 1] for "right of".
    ``blind=True`` gives every image the same embedding and a text tower that always prefers "left of": a pure
    text prior, never image-dependent.
    """

    spec = "planted:dual"
    batch_size = 8

    def __init__(self, blind: bool = False) -> None:
        self.blind = blind

    def describe(self) -> dict:
        return {"spec": self.spec, "blind": self.blind}

    def encode_images(self, images) -> np.ndarray:
        rows = []
        for image in images:
            pixels = np.asarray(image.convert("RGB"), dtype=np.float64)
            red = np.argwhere((pixels[..., 0] > 200) & (pixels[..., 2] < 50))
            blue = np.argwhere((pixels[..., 2] > 200) & (pixels[..., 0] < 50))
            if self.blind or not len(red) or not len(blue):
                rows.append([0.0, 0.0, 1.0])
            else:
                rows.append([1.0, 0.0, 1.0] if red[:, 1].mean() < blue[:, 1].mean() else [0.0, 1.0, 1.0])
        out = np.asarray(rows, dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def encode_texts(self, texts) -> np.ndarray:
        rows = [[1.0, 0.0, 1.0] if "left of" in t else [0.0, 1.0, 1.0] for t in texts]
        if self.blind:
            rows = [[1.0, 0.0, 1.0] if "left of" in t else [0.5, 0.0, 1.0] for t in texts]
        out = np.asarray(rows, dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def _report(margins: Path):
    from vlaudit.analysis.vca.report import ReportSettings, compute_report
    from vlaudit.sources.margins import read_margins

    return compute_report(read_margins(margins), ReportSettings(n_resamples=100)).runs[0]


def test_grounded_dual_encoder_gets_full_credit(tmp_path: Path) -> None:
    from vlaudit.files import read_records
    from vlaudit.scoring.dual_margins import score_dual
    from vlaudit.sources.items import read_items

    items = make_groups(tmp_path)
    score_dual(PlantedDual(), read_items(items), images_dir=tmp_path / "images", out_dir=tmp_path / "run",
               contexts=["original", "text", "blank", "mean", "mismatch"])
    rows = read_records(tmp_path / "run" / "margins.parquet")
    by = {(r["item_id"], r["context"]): r for r in rows}
    # cos(true) = 1, cos(false) = ½ on the original; blank and the balanced mean image embedding tie exactly
    assert by[("g0-true", "original")]["margin"] == pytest.approx(0.5)
    assert by[("g0-false", "original")]["margin"] == pytest.approx(-0.5)
    assert all(by[(f"g{i}-{s}", c)]["margin"] == pytest.approx(0.0, abs=1e-12)
               for i in range(8) for s in ("true", "false") for c in ("text", "blank"))
    run = _report(tmp_path / "run" / "margins.parquet")
    assert (run.acc, run.dep, run.dcc, run.cu) == (1.0, 1.0, 1.0, 0.0)
    assert run.relation.contexts[0].rel == 1.0 and run.relation.pair_credit == 1.0
    assert run.relation.contexts[0].context == "original"
    # a mismatch donor with the same layout supports the decision (Dep_perm), one with the opposite flips it
    same = [int(by[(f"g{i}-{s}", "mismatch")]["donor_image"][2:-4]) % 2 == i % 2
            for i in range(8) for s in ("true", "false")]
    assert 0 < sum(same) < 16 and run.perm.dep_perm == pytest.approx(sum(same) / 16)
    # the mean-colour canvas has no layout: the text+mean control set credits every item too
    text_mean = next(r for r in run.robustness.control_sets if r.control_set == "text+mean")
    assert text_mean.dep == 1.0 and text_mean.n == 16


def test_text_prior_dual_encoder_gets_no_credit(tmp_path: Path) -> None:
    from vlaudit.files import read_records
    from vlaudit.scoring.dual_margins import score_dual
    from vlaudit.sources.items import read_items

    items = make_groups(tmp_path)
    for no_image in ("mean-image", "zero"):
        out = tmp_path / f"run-{no_image}"
        score_dual(PlantedDual(blind=True), read_items(items), images_dir=tmp_path / "images", out_dir=out,
                   contexts=["original", "text", "blank"], no_image=no_image)
        run = _report(out / "margins.parquet")
        # "left of" always wins: right on half the groups, never image-dependent
        assert (run.acc, run.dep, run.dcc, run.cu) == (0.5, 0.0, 0.0, 0.5)
        text = [r["margin"] for r in read_records(out / "margins.parquet") if r["context"] == "text"]
        assert (all(m == 0.0 for m in text)) == (no_image == "zero")


def test_cli_score_dual_then_vca_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_network) -> None:
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    items = make_groups(tmp_path / "bench")
    run = tmp_path / "run"
    result = runner.invoke(app, ["vca", "score-dual", "--model", "ref:tiny-open-clip", "--benchmark", str(items),
                                 "--images", str(tmp_path / "bench" / "images"), "--out", str(run)])
    assert result.exit_code == 0, result.output
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["no_image"] == "mean-image" and manifest["kind"] == "dual-encoder"
    assert (run / "features" / "manifest.json").is_file()
    report = tmp_path / "report"
    result = runner.invoke(app, ["vca", "report", str(run / "margins.parquet"), "--out", str(report),
                                 "--resamples", "100", "--no-plot"])
    assert result.exit_code == 0, result.output
    summary = json.loads((report / "vca.json").read_text())["runs"][0]
    assert summary["n"] == 16 and summary["relation"]["groups"] == 8
    assert summary["acc"] in {k / 8 for k in range(9)}  # a pair's two items are right or wrong together
    assert summary["dcc"] + summary["cu"] == pytest.approx(summary["acc"])


def test_items_without_groups_are_rejected(tmp_path: Path) -> None:
    from vlaudit.errors import InputError
    from vlaudit.scoring.dual_margins import score_dual
    from vlaudit.sources.items import BenchmarkItem

    items = [BenchmarkItem(item_id="a", image="x.png", question="Is it?")]
    with pytest.raises(InputError, match="group_id"):
        score_dual(PlantedDual(), items, images_dir=tmp_path, out_dir=tmp_path / "r", contexts=["original"])
