"""Stress probes `blur` and `patch-shuffle` (VCA §18): deterministic constructions that never enter the headline."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from vlaudit.backends.base import YesNoBackendBase
from vlaudit.cli import app
from vlaudit.contexts.image_contexts import (
    PATCH_GRID,
    STRESS_CONTEXTS,
    context_parameters,
    patch_permutation,
    patch_shuffle,
    render_context,
)

runner = CliRunner()


def _tiles_image(width: int = 8 * 6 + 3, height: int = 8 * 5 + 2) -> Image.Image:
    """Every 6×5 tile of the 8×8 grid a distinct flat colour; 3- and 2-pixel remainder strips in white."""
    pixels = np.full((height, width, 3), 255, dtype=np.uint8)
    for k in range(PATCH_GRID * PATCH_GRID):
        r, c = divmod(k, PATCH_GRID)
        pixels[r * 5:(r + 1) * 5, c * 6:(c + 1) * 6] = (k * 3, 255 - k * 3, (k * 7) % 256)
    return Image.fromarray(pixels)


def test_patch_shuffle_is_a_fixed_derangement_of_equal_tiles() -> None:
    perm = patch_permutation()
    assert sorted(perm.tolist()) == list(range(64)) and not (perm == np.arange(64)).any()
    image = _tiles_image()
    shuffled = patch_shuffle(image)
    again = render_context("patch-shuffle", image, seed=123)  # the seed does not change the construction
    assert np.array_equal(np.asarray(shuffled), np.asarray(again))
    before, after = np.asarray(image), np.asarray(shuffled)
    for k, target in enumerate(perm):
        sr, sc = divmod(k, PATCH_GRID)
        tr, tc = divmod(int(target), PATCH_GRID)
        assert np.array_equal(after[tr * 5:(tr + 1) * 5, tc * 6:(tc + 1) * 6],
                              before[sr * 5:(sr + 1) * 5, sc * 6:(sc + 1) * 6])
    assert np.array_equal(after[40:], before[40:]) and np.array_equal(after[:, 48:], before[:, 48:])
    assert sorted(map(tuple, after.reshape(-1, 3))) == sorted(map(tuple, before.reshape(-1, 3)))
    tiny = Image.new("RGB", (5, 5), (1, 2, 3))
    assert np.array_equal(np.asarray(patch_shuffle(tiny)), np.asarray(tiny))


def test_blur_is_strong_deterministic_and_keeps_flat_images() -> None:
    rng = np.random.default_rng(0)
    noise = Image.fromarray(rng.integers(0, 256, size=(40, 60, 3), dtype=np.uint8))
    blurred = render_context("blur", noise)
    assert blurred.size == noise.size and blurred.mode == "RGB"
    assert np.asarray(blurred, dtype=float).std() < 0.25 * np.asarray(noise, dtype=float).std()
    assert np.array_equal(np.asarray(blurred), np.asarray(render_context("blur", noise)))
    flat = Image.new("RGB", (30, 20), (10, 200, 30))
    assert np.array_equal(np.asarray(render_context("blur", flat)), np.asarray(flat))
    params = context_parameters()
    assert {"blur_fraction", "patch_grid", "patch_shuffle_seed"} <= set(params)


def _margin_rows(with_stress: bool) -> list[dict]:
    """Eight true/false groups with planted margins: the image supports the true statement on 6 of them."""
    rows = []
    for g in range(8):
        for statement, sign in (("true", 1.0), ("false", -1.0)):
            item = f"g{g}-{statement}"
            base = {"model": "m", "dataset": "d", "item_id": item, "group_id": f"g{g}", "statement": statement,
                    "label": "yes" if statement == "true" else "no"}
            margins = {"original": sign * (2.0 if g < 6 else -0.5), "text": sign * 0.5 * (g % 2),
                       "blank": -0.25 * sign}
            if with_stress:
                margins |= {"blur": sign * (1.5 if g < 4 else -1.0), "patch-shuffle": 0.1 * sign}
            rows += [base | {"context": c, "margin": m} for c, m in margins.items()]
    return rows


def test_stress_rows_never_change_the_headline(tmp_path: Path) -> None:
    from vlaudit.files import write_table

    reports = {}
    for with_stress in (False, True):
        margins = tmp_path / f"m{with_stress}.jsonl"
        write_table(margins, _margin_rows(with_stress))
        out = tmp_path / f"r{with_stress}"
        result = runner.invoke(app, ["vca", "report", str(margins), "--out", str(out), "--resamples", "200",
                                     "--no-plot"])
        assert result.exit_code == 0, result.output
        reports[with_stress] = json.loads((out / "vca.json").read_text())["runs"][0]
    plain, stressed = reports[False], reports[True]
    for key in ("acc", "dep", "dcc", "cu", "strict", "ci", "relation", "robustness", "taxonomy", "gap"):
        assert stressed[key] == plain[key], key
    assert plain["stress"] == [] and [r["context"] for r in stressed["stress"]] == list(STRESS_CONTEXTS)
    blur = stressed["stress"][0]
    # decision survives blur on groups 0–3 and 6–7 (blur agrees with the original's sign there): 12 of 16
    assert (blur["n"], blur["n_excluded"], blur["same"]) == (16, 0, pytest.approx(12 / 16))
    assert {r["contexts"] for r in stressed["coverage"]} >= {"blur", "patch-shuffle"}
    stress_csv = (tmp_path / "rTrue" / "stress.csv").read_text().splitlines()
    assert len(stress_csv) == 3 and "patch-shuffle" in stress_csv[2]


def test_stress_contexts_are_refused_as_controls(tmp_path: Path) -> None:
    from vlaudit.files import write_table

    write_table(tmp_path / "m.jsonl", _margin_rows(True))
    for controls in ("text,blur", "patch_shuffle"):
        result = runner.invoke(app, ["vca", "report", str(tmp_path / "m.jsonl"), "--out", str(tmp_path / "r"),
                                     "--controls", controls])
        assert result.exit_code != 0 and "stress probes" in str(result.exception)


class _BrightnessBackend(YesNoBackendBase):
    """A fake yes/no model: margin = mean pixel value / 255 − ½ (text-only: 0)."""

    spec = "fake:bright"
    verbalizer_ids = {"yesno": (1, 2)}

    def describe(self) -> dict:
        return {"spec": self.spec}

    def prompt(self, question: str, interface: str, with_image: bool) -> str:
        return f"{'<image>' if with_image else ''}{question}"

    def score(self, requests):
        from vlaudit.backends.base import YesNoResult

        out = []
        for r in requests:
            m = 0.0 if r.image is None else float(np.asarray(r.image, dtype=float).mean() / 255.0 - 0.5)
            out.append(YesNoResult(r.key, 0.0, m, m, 1, 2, r.question, "h", 3))
        return out


def test_vca_score_renders_the_stress_contexts(tmp_path: Path) -> None:
    from vlaudit.files import read_records
    from vlaudit.hashing import pixels_sha256
    from vlaudit.scoring.run.runner import run_scoring
    from vlaudit.sources.items import BenchmarkItem

    (tmp_path / "images").mkdir()
    _tiles_image().save(tmp_path / "images" / "a.png")
    items = [BenchmarkItem(item_id=f"q{i}", image="a.png", question=f"Q{i}?", group_id="g",
                           statement="true" if i == 0 else "false", label="yes" if i == 0 else "no")
             for i in range(2)]
    run_scoring(_BrightnessBackend(), items, images_dir=tmp_path / "images", out_dir=tmp_path / "run",
                contexts=["original", "text", "blank", *STRESS_CONTEXTS], interfaces=["yesno"])
    rows = {(r["item_id"], r["context"]): r for r in read_records(tmp_path / "run" / "margins.parquet")}
    image = _tiles_image()
    for context in STRESS_CONTEXTS:
        assert rows[("q0", context)]["image_sha256"] == pixels_sha256(render_context(context, image))
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["context_parameters"]["patch_grid"] == PATCH_GRID
