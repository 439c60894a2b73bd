"""A demo over an earlier one, Ctrl-C in a command that does not resume, and cycle builds
replaced with another seed; ``--min-cycles`` of the build read at eval."""

from __future__ import annotations

import json

from pairs_files import write_flip_pairs

from vlaudit.cli import INTERRUPTED, interrupted_line
from vlaudit.demo.pipeline import clear_stale_seeds


def test_a_quick_demo_over_a_full_one_removes_the_full_runs_other_seeds_and_says_so(tmp_path) -> None:
    for name in ("seed-0", "seed-1", "seed-2", "seed-notes"):
        (tmp_path / "cycles" / name).mkdir(parents=True)
        (tmp_path / "cycles" / name / "eval.json").write_text("{}")
    said: list[str] = []
    removed = clear_stale_seeds(tmp_path, (0,), said.append)
    assert [p.name for p in removed] == ["seed-1", "seed-2"]
    assert sorted(p.name for p in (tmp_path / "cycles").iterdir()) == ["seed-0", "seed-notes"]
    assert said == [f"removed seed-1, seed-2 in {tmp_path / 'cycles'}: left by an earlier demo with other seeds "
                    "(this run's: 0)"]
    assert clear_stale_seeds(tmp_path, (0,), said.append) == [] and len(said) == 1  # nothing more to say


def test_ctrl_c_says_rerun_to_resume_only_where_the_command_resumes(cli, monkeypatch, tmp_path) -> None:
    import vlaudit

    assert interrupted_line(["vca", "score", "--model", "x"]) == INTERRUPTED
    assert "resume" not in interrupted_line(["demo", "--out", "runs/demo", "--quick"])

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(vlaudit, "run_demo", interrupted)
    code, _, err = cli("demo", "--out", tmp_path / "demo", "--quick")
    assert code == 130 and err.strip().splitlines() == [
        "error: interrupted; nothing half-written is left, and the same command starts over when rerun"], err


def test_cycles_build_refuses_to_replace_another_seeds_file_and_eval_reads_its_min_cycles(
        cli, one_error_line, tmp_path) -> None:
    pairs, out = write_flip_pairs(tmp_path / "pairs.jsonl"), tmp_path / "c.jsonl"
    build = ["cycles", "build", "jsonl", "--pairs", pairs, "--out", out, "--splits", "test", "--min-cycles", "1"]
    code, _, err = cli(*build, "--seed", "0")
    assert code == 0, err
    built = out.read_bytes()
    line = one_error_line(*cli(*build, "--seed", "1"))
    assert f"{out}, field '--seed': holds cycles built with --seed 0 (c.meta.json); this build uses --seed 1" \
        in line and "--overwrite" in line
    assert out.read_bytes() == built  # nothing replaced
    code, _, err = cli(*build, "--seed", "0")  # the same seed rebuilds as before
    assert code == 0, err
    code, _, err = cli(*build, "--seed", "1", "--overwrite")
    assert code == 0, err
    assert json.loads((tmp_path / "c.meta.json").read_text())["seed"] == 1

    # eval without --min-cycles: the build's 1, not the default 30 (which would withdraw the only family)
    (cycle,) = [json.loads(row) for row in out.read_text().splitlines()]
    scores = tmp_path / "scores.csv"
    scores.write_text("image_id,caption_id,score\n" + "".join(
        f"{u},{v},{1.0 if (u, v) in {(cycle['image_1'], cycle['caption_1']), (cycle['image_2'], cycle['caption_2'])} else 0.0}\n"
        for u in (cycle["image_1"], cycle["image_2"]) for v in (cycle["caption_1"], cycle["caption_2"])))
    code, _, err = cli("cycles", "eval", "--cycles", out, "--scores", scores, "--out", tmp_path / "eval.json",
                       "--resamples", "20", "--no-plot")
    assert code == 0, err
    result = json.loads((tmp_path / "eval.json").read_text())
    assert result["min_cycles"] == 1 and result["families"]
    code, _, err = cli("cycles", "eval", "--cycles", out, "--scores", scores, "--out", tmp_path / "eval30.json",
                       "--resamples", "20", "--no-plot", "--min-cycles", "30")
    assert code == 2 and "--min-cycles 30" in err  # given on the command line, it still wins
