"""Each command writes exactly what its API twin writes: the command's body is one call of that function through
the facade, so the files are the same bytes. (The run commands, `cycles eval`, `vca report`, `cycles build`
and `vca factorial` are compared in tests/test_run_spec.py.)"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from tiny_cycles import two_cycles

import vlaudit


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _same_bytes(api_run: Callable[[], object], cli_run: Callable[[], tuple[int, str, str]], folder: Path) -> None:
    """The API's files in ``folder``, then (the folder emptied) the command's: the same names and bytes."""
    api_run()
    api = _files(folder)
    assert api, "the API wrote nothing"
    shutil.rmtree(folder)
    folder.mkdir()
    code, _, err = cli_run()
    assert code == 0, err
    assert _files(folder) == api


def test_audit_pairs(tmp_path, cli) -> None:
    cycles = two_cycles(tmp_path / "data")
    out = tmp_path / "out"
    out.mkdir()
    _same_bytes(lambda: vlaudit.audit_pair_files([cycles], out=out, weighting="mean"),
                lambda: cli("cycles", "audit-pairs", cycles, "--out", out, "--weighting", "mean"), out)
    assert json.loads((out / "audit_pairs.json").read_text())["rows"][0]["tv_image"] == 0


def test_zero_shot(tmp_path, cli) -> None:
    cycles = two_cycles(tmp_path / "data")
    feats, out = tmp_path / "feats", tmp_path / "out"
    vlaudit.extract_features(vlaudit.FeaturesSpec.of(model="ref:tiny-open-clip", cycles=cycles,
                                                     images=tmp_path / "data" / "images", out=feats))
    out.mkdir()
    _same_bytes(lambda: vlaudit.write_zero_shot_scores(cycles, feats, out=out / "scores.csv"),
                lambda: cli("cycles", "zero-shot", "--features", feats, "--cycles", cycles, "--out",
                            out / "scores.csv"), out)


def test_data_scenes(tmp_path, cli) -> None:
    out = tmp_path / "scenes"
    out.mkdir()
    _same_bytes(lambda: vlaudit.render_scenes(out, 3, 1),
                lambda: cli("data", "scenes", "--out", out, "--images", "3", "--seed", "1"), out)


def test_data_vsr_and_whatsup(tmp_path, cli, shared_data) -> None:
    out = tmp_path / "items"
    out.mkdir()
    split = shared_data / "vsr" / "random_test.jsonl"
    _same_bytes(lambda: vlaudit.build_vsr_items(split, out=out / "vsr.jsonl"),
                lambda: cli("data", "vsr", split, "--out", out / "vsr.jsonl"), out)
    controlled = shared_data / "whatsup" / "controlled_images_dataset.json"
    shutil.rmtree(out)
    out.mkdir()
    _same_bytes(lambda: vlaudit.build_whatsup_items(controlled, out=out / "controlled.jsonl"),
                lambda: cli("data", "whatsup-controlled", controlled, "--out", out / "controlled.jsonl"), out)
