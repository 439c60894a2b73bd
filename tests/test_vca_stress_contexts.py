"""``blur`` and ``shuffle`` (8×8 patch shuffle): deterministic stress views that never enter the headline (VCA §18)."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image
from vca_fixtures import SUPPORT_LABELS, SUPPORT_MARGINS, rows_from_arrays

from vlaudit.contexts.image_contexts import (
    SHUFFLE_GRID,
    ContextUnavailable,
    render_context,
    shuffle_permutation,
)
from vlaudit.experiments.vca_report import compute_report
from vlaudit.sources.margins import normalize_context, runs_from_rows


def _image(width=67, height=45):
    rng = np.random.default_rng(3)
    return Image.fromarray(rng.integers(0, 255, (height, width, 3), dtype=np.uint8))


def test_patch_shuffle_moves_every_tile_by_one_fixed_permutation():
    perm = shuffle_permutation()
    assert sorted(perm.tolist()) == list(range(SHUFFLE_GRID ** 2))
    assert not (perm == np.arange(perm.size)).any()  # a derangement: no tile stays
    image = _image()
    out = np.asarray(render_context("shuffle", image))
    again = np.asarray(render_context("shuffle", image))
    assert (out == again).all() and out.shape == np.asarray(image).shape
    src = np.asarray(image)
    tw, th = 67 // SHUFFLE_GRID, 45 // SHUFFLE_GRID
    for k, source in enumerate(perm):
        r, c = divmod(k, SHUFFLE_GRID)
        sr, sc = divmod(int(source), SHUFFLE_GRID)
        assert (out[r * th:(r + 1) * th, c * tw:(c + 1) * tw] == src[sr * th:(sr + 1) * th, sc * tw:(sc + 1) * tw]).all()
    # the remainder strips right and bottom stay in place; the pixel multiset is unchanged
    assert (out[:, SHUFFLE_GRID * tw:] == src[:, SHUFFLE_GRID * tw:]).all()
    assert (out[SHUFFLE_GRID * th:] == src[SHUFFLE_GRID * th:]).all()
    assert sorted(out.reshape(-1, 3).tolist()) == sorted(src.reshape(-1, 3).tolist())
    with pytest.raises(ContextUnavailable):
        render_context("shuffle", _image(5, 40))


def test_blur_is_deterministic_same_size_and_smooths():
    image = _image()
    out = render_context("blur", image)
    assert out.size == image.size and np.array_equal(np.asarray(out), np.asarray(render_context("blur", image)))
    assert np.asarray(out).astype(float).std() < 0.5 * np.asarray(image).astype(float).std()


def test_stress_views_never_change_the_headline_and_appear_beside_the_erasures():
    rows = rows_from_arrays(SUPPORT_MARGINS, labels=SUPPORT_LABELS)
    views = {"original": SUPPORT_MARGINS["original"], "blur": [1.0, 1.0, -1.0, 0.5, -3.0, -1.0, -2.0],
             "patch-shuffle": [-1.0] * 7}
    stressed = rows + [r for r in rows_from_arrays(views, labels=SUPPORT_LABELS) if r["context"] != "original"]
    plain = compute_report(runs_from_rows(rows)).runs[0]
    report = compute_report(runs_from_rows(stressed)).runs[0]
    for key in ("acc", "dep", "dcc", "cu", "strict"):
        assert report[key] == plain[key]
    views = {row["context"]: row for row in report["erasure"]}
    assert set(views) == {"blur", "shuffle"}
    # shuffle says "no" everywhere: it keeps exactly the original "no" decisions (items 1, 4, 5)
    assert views["shuffle"]["same"] == pytest.approx(3 / 7) and views["blur"]["n"] == 7
    assert normalize_context("patch-shuffle") == "shuffle"


def test_vca_score_scores_the_stress_views_through_the_runner(tmp_path, tmp_path_factory, no_network,
                                                             one_torch_thread):
    from test_hf_tiny_models import make_benchmark, tiny_model
    from typer.testing import CliRunner

    from vlaudit.cli import app
    from vlaudit.sources.margins import read_margins

    bench = tmp_path / "bench"
    make_benchmark(bench, n_images=2, questions=2)
    model = tiny_model("qwen2-vl", tmp_path_factory)
    result = CliRunner().invoke(app, ["vca", "score", "--model", f"hf:{model}", "--benchmark",
                                      str(bench / "items.jsonl"), "--images", str(bench / "images"), "--out",
                                      str(tmp_path / "run"), "--contexts", "original,text,blank,blur,shuffle",
                                      "--max-pixels", str(56 * 56 * 4)])
    assert result.exit_code == 0, result.output
    run = read_margins(tmp_path / "run" / "margins.parquet")[0]
    assert set(run.margins) == {"original", "text", "blank", "blur", "shuffle"}
    assert not np.isnan(run.margins["shuffle"]).any()
