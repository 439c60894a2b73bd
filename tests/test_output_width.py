"""Everything a command prints reads whole at 80 columns: with ``COLUMNS=80`` a representative set
of commands, run on tiny inputs, prints no stdout line wider than 80 characters (a one-line ``error:`` or
``warning:`` is exempt: a terminal soft-wraps it by design). Paths are relative, so a line that names one
says nothing about the width of the test's temp folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

WIDTH = 80


def _too_wide(out: str) -> list[str]:
    return [line for line in out.splitlines()
            if len(line) > WIDTH and not line.startswith(("error:", "warning:"))]


@pytest.fixture
def at_80_columns(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_say_wraps_between_words_and_keeps_names_whole(at_80_columns, capsys) -> None:
    from vlaudit.commands._say import say

    name = "a-family-name-" * 7  # wider than the terminal: whole, on a line of its own
    say(f"  checks not met: {'; '.join(['pure_interaction_bilinear_above_chance (seeds 0)'] * 3)} {name}")
    say("warning: " + "w" * 100)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("  checks not met:") and all(line.startswith("    ") for line in lines[1:-1])
    assert lines[-2].strip() == name and lines[-1] == "warning: " + "w" * 100
    assert all(len(line) <= WIDTH for line in lines if line.strip() != name and not line.startswith("warning"))


def test_local_commands_print_at_most_80_columns(at_80_columns, cli, make_benchmark, reference_cache,
                                                 no_network) -> None:
    """``models list`` (long descriptions), ``vca score`` with a tiny reference model and ``vca report`` (its
    coverage line), ``synthetic`` at toy sizes (its "checks not met" line)."""
    make_benchmark(Path("bench"), n_images=2, questions=2)
    runs = [
        ("models", "list"),
        ("vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", "bench/items.jsonl", "--images",
         "bench/images", "--out", "score"),
        ("vca", "report", "score/margins.parquet", "--out", "report", "--resamples", "50", "--no-plot"),
        ("synthetic", "--out", "synthetic", "--seeds", "0", "--n-train", "16", "--n-test", "16", "--epochs", "1",
         "--rank-epochs", "1", "--threads", "1"),
    ]
    for args in runs:
        code, out, err = cli(*args)
        assert code == 0, (args, err)
        assert not _too_wide(out), (args, _too_wide(out))


def test_data_and_cycle_commands_print_at_most_80_columns(at_80_columns, cli, shared_data) -> None:
    """The readers and builders on the real samples: ``cycles build coco|gqa``, ``cycles audit``,
    ``cycles eval`` (GQA family names), ``cycles audit-pairs`` on What's Up and SugarCrepe, ``data vsr``,
    ``data vsr-inverse``, ``data whatsup-controlled``."""
    coco = shared_data / "coco_val2017_sample" / "annotations"
    gqa = shared_data / "gqa" / "train_sceneGraphs_sample.json"
    whatsup = shared_data / "whatsup" / "controlled_images_dataset.json"
    vsr = shared_data / "vsr" / "random_test.jsonl"
    shutil.copy(vsr, "random_test.jsonl")
    runs = [
        ("cycles", "build", "coco", "--instances", coco / "instances_val2017_subset20.json", "--captions",
         coco / "captions_val2017_subset20.json", "--out", "coco.jsonl", "--min-cycles", "1"),
        ("cycles", "build", "gqa", "--scene-graphs", gqa, "--out", "gqa.jsonl", "--min-cycles", "1",
         "--extra-families"),
        ("cycles", "audit", "gqa.jsonl", "--annotations", gqa, "--out", "audit.json"),
        ("cycles", "audit-pairs", whatsup, "--out", "pairs-whatsup"),
        ("cycles", "audit-pairs", shared_data / "sugarcrepe" / "swap_att.json", "--out", "pairs-sugar"),
        ("data", "vsr", "random_test.jsonl", "--out", "vsr.jsonl", "--meta",
         shared_data / "vsr" / "rel_meta_category_dict.txt"),
        ("data", "vsr-inverse", "random_test.jsonl", "--out", "vsr-inverse.jsonl"),
        ("data", "whatsup-controlled", whatsup, "--out", "whatsup.jsonl"),
    ]
    for args in runs:
        code, out, err = cli(*args)
        assert code == 0, (args, err)
        assert not _too_wide(out), (args, _too_wide(out))
    pairs = {(row[f"image_{i}"], row[f"caption_{j}"])
             for row in map(json.loads, Path("gqa.jsonl").read_text().splitlines()) for i in (1, 2) for j in (1, 2)}
    scores = Path("gqa-scores.jsonl")
    scores.write_text("".join(json.dumps({"image_id": image, "caption_id": caption,
                                          "score": float(sum(map(ord, image + caption)) % 7)}) + "\n"
                              for image, caption in sorted(pairs)))
    code, out, err = cli("cycles", "eval", "--cycles", "gqa.jsonl", "--scores", scores, "--out", "eval.json",
                         "--min-cycles", "1", "--resamples", "50", "--no-plot")
    assert code == 0, err
    assert not _too_wide(out), _too_wide(out)
