"""Failing well: bad paths and options give one red line naming the file and option, exit 2, no
traceback, and nothing half-written — checked on every command the app has, found by walking it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from vlaudit.cli import app
from vlaudit.commands._options import FILE, FOLDER
from vlaudit.errors import InputError

REPO = Path(__file__).resolve().parents[1]


def _walk(group: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """(command path, click command) of every leaf command (typer vendors its own click: duck-typed)."""
    found = []
    for name, command in sorted(group.commands.items()):
        if hasattr(command, "commands"):
            found += _walk(command, (*path, name))
        else:
            found.append(((*path, name), command))
    return found


COMMANDS = _walk(typer.main.get_command(app))
OUT_COMMANDS = [(path, param.metavar) for path, command in COMMANDS for param in command.params
                if "--out" in getattr(param, "opts", ())]


def _id(case: tuple) -> str:
    return " ".join(case[0])


def test_every_command_and_every_option_has_help_text() -> None:
    missing = [f"{' '.join(path)} {'/'.join(getattr(param, 'opts', ())) or param.name}"
               for path, command in COMMANDS for param in command.params
               if not (getattr(param, "help", None) or "").strip()]
    missing += [" ".join(path) for path, command in COMMANDS if not (command.help or "").strip()]
    assert not missing, f"without help text: {missing}"


def test_the_walk_finds_the_commands_of_the_issue() -> None:
    names = {" ".join(path) for path, _ in OUT_COMMANDS}
    assert {"vca score", "vca report", "features", "data scenes", "cycles eval", "demo"} <= names


@pytest.mark.parametrize("case", OUT_COMMANDS, ids=_id)
def test_every_out_option_refuses_the_wrong_kind_of_path_before_running(case, tmp_path) -> None:
    """``--out`` is the shared option of ``commands/_options.py`` (FOLDER or FILE) on every command: an existing
    file where a folder is expected (or the reverse) is one InputError naming the path and ``--out``."""
    path, kind = case
    assert kind in (FOLDER, FILE), f"{' '.join(path)}: use out_folder_option / out_file_option for --out"
    existing_file = tmp_path / "taken.txt"
    existing_file.write_text("keep me\n")
    existing_folder = tmp_path / "folder"
    existing_folder.mkdir()
    wrong = [existing_file, existing_file / "sub"] if kind == FOLDER else [existing_folder, existing_file / "x.json"]
    for target in wrong:
        # --out first: it is parsed (and refused) before the other, missing, options are even looked at
        result = CliRunner().invoke(app, [*path, "--out", str(target)])
        assert isinstance(result.exception, InputError), (path, target, result.output)
        message = str(result.exception)
        assert str(target) in message and "'--out'" in message
        assert "not a folder" in message or "is a file" in message or "is a folder" in message
    assert existing_file.read_text() == "keep me\n" and list(existing_folder.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "taken.txt"]


def _cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
                   **(env or {})}
    return subprocess.run([sys.executable, "-m", "vlaudit.cli", *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=300)


def _one_red_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    return lines[0]


def test_vca_score_out_file_is_one_line_and_no_model_is_loaded(tmp_path) -> None:
    (tmp_path / "items.jsonl").write_text('{"item_id": "a", "image": "a.png", "question": "Is it?"}\n')
    (tmp_path / "images").mkdir()
    (tmp_path / "run").write_text("a file\n")
    cache = tmp_path / "vlaudit-cache"
    line = _one_red_line(_cli("vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", "items.jsonl",
                              "--images", "images", "--out", "run", cwd=tmp_path, env={"VLAUDIT_CACHE": str(cache)}))
    assert "run" in line and "'--out'" in line and "not a folder" in line
    assert not cache.exists()  # refused before the reference model was built or loaded
    assert (tmp_path / "run").read_text() == "a file\n"


# ------------------------------------------------------------------------------------------------ vca score


@pytest.fixture(scope="session")
def _ref_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("vlaudit-cache")


@pytest.fixture
def ref_cache(_ref_root, monkeypatch) -> Path:
    """One folder of reference models for this session (built on first use, offline)."""
    monkeypatch.setenv("VLAUDIT_CACHE", str(_ref_root))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return _ref_root


def test_vca_score_missing_images_folder_is_refused_before_the_model_loads(toy_items, tmp_path) -> None:
    toy_items(tmp_path)
    cache = tmp_path / "vlaudit-cache"
    line = _one_red_line(_cli("vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", "items.jsonl",
                              "--images", "no/such/images", "--out", "run", cwd=tmp_path,
                              env={"VLAUDIT_CACHE": str(cache)}))
    assert "no/such/images" in line and "'--images'" in line and "not found" in line
    assert not cache.exists() and not (tmp_path / "run").exists()


def test_vca_score_where_every_record_fails_exits_nonzero_with_counts(toy_items, cli, tmp_path, ref_cache, capsys,
                                                                     monkeypatch) -> None:
    items = toy_items(tmp_path / "bench", n_images=2)
    empty = tmp_path / "elsewhere"
    empty.mkdir()  # an existing folder without the images: every record fails
    run = tmp_path / "run"
    code, _, err = cli(*["vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", str(items), "--images",
                          str(empty), "--out", str(run), "--contexts", "original,text"])
    assert code == 2 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    line = err.strip()
    assert err.count("error:") == 1 and "no record could be scored" in line
    assert "8 failed (image file not found: 8)" in line and str(run / "failures.jsonl") in line
    assert not (run / "margins.parquet").exists() and not (run / "summary.json").exists()
    assert len((run / "failures.jsonl").read_text().splitlines()) == 8


def test_vca_score_always_prints_failures_by_reason_and_their_file(toy_items, cli, tmp_path, ref_cache, capsys,
                                                                  monkeypatch) -> None:
    items = toy_items(tmp_path / "bench", n_images=2, missing=1)
    run = tmp_path / "run"
    code, out, err = cli(*["vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", str(items), "--images",
                            str(tmp_path / "bench" / "images"), "--out", str(run), "--contexts",
                            "original,text,irre", "--min-coverage", "0"])  # a third lost: accepted
    assert code == 0, err
    flat = " ".join(out.split())
    assert "records not scored: 6 failed (image file not found: 6), 4 skipped (context irre: 4)" in flat
    assert f"listed in {run / 'failures.jsonl'}" in flat
    summary = __import__("json").loads((run / "summary.json").read_text())
    assert summary["failures_by_reason"] == {"image file not found": 6}  # 2 items x 3 contexts
    assert summary["skipped_by_context"] == {"irre": 4}


# ------------------------------------------------------------------------------------------------ model specs


@pytest.mark.parametrize("command", ["vca score", "features"])
def test_a_missing_model_folder_is_named_not_a_repo_id_error(toy_items, cli, command, tmp_path, capsys, monkeypatch,
                                                            no_network) -> None:
    items = toy_items(tmp_path / "bench")
    (tmp_path / "cycles.jsonl").write_text('{"cycle_id": "c", "family": "toy", "image_1": "img0.png", "image_2": "img1.png", '
                                           '"caption_1": "a", "caption_2": "b", "text_1": "x", "text_2": "y"}\n')
    args = (["vca", "score", "--benchmark", str(items), "--model", "hf:/no/such/dir"] if command == "vca score"
            else ["features", "--cycles", str(tmp_path / "cycles.jsonl"), "--model", "hf-clip:/no/such/dir"])
    code, _, err = cli(*[*args, "--images", str(tmp_path / "bench" / "images"), "--out", str(tmp_path / "o")])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "/no/such/dir" in err and "'--model'" in err and "folder does not exist" in err
    assert "Repo id" not in err and not (tmp_path / "o").exists()


def test_an_uncached_hub_id_offline_is_refused_at_once(toy_items, cli, tmp_path, capsys, monkeypatch, no_network) -> None:
    items = toy_items(tmp_path / "bench")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    code, _, err = cli(*["vca", "score", "--model", "hf:vlaudit-tests/never-downloaded", "--benchmark", str(items),
                          "--images", str(tmp_path / "bench" / "images"), "--out", str(tmp_path / "o")])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "'vlaudit-tests/never-downloaded' is not in the local Hugging Face cache" in err
    assert "HF_HUB_OFFLINE" in err and not (tmp_path / "o").exists()


def test_model_source_accepts_folders_cached_hub_ids_and_online_hub_ids(tmp_path, monkeypatch) -> None:
    from huggingface_hub import constants

    from vlaudit.backends.hf.model_source import check_model_source

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    repo = tmp_path / "hub" / "models--org--cached"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("abc123")
    (repo / "snapshots" / "abc123").mkdir(parents=True)
    (repo / "snapshots" / "abc123" / "config.json").write_text("{}")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    check_model_source("hf", "org/cached")  # in the cache: loads offline
    check_model_source("hf", str(tmp_path))  # an existing folder
    with pytest.raises(InputError, match="not in the local Hugging Face cache"):
        check_model_source("hf", "org/cached", revision="other")
    with pytest.raises(InputError, match="not a file"):
        check_model_source("hf", str(repo / "refs" / "main"))
    for folder in ("./rel/model", "~/nowhere/model", "a/b/c", "../up"):
        with pytest.raises(InputError, match="folder does not exist"):
            check_model_source("hf", folder)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    from vlaudit.sources import hub_access

    monkeypatch.setattr(hub_access, "hub_reachable", lambda: None)  # a machine that reaches the hub
    check_model_source("hf", "org/not-cached")  # online: transformers downloads it


# ------------------------------------------------------------------------------------------------ features


def _cycles(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    import json

    path.write_text("".join(json.dumps({"cycle_id": cid, "family": "toy", "image_1": a, "image_2": b,
                                        "caption_1": f"{cid}-1", "caption_2": f"{cid}-2",
                                        "text_1": f"a photo {cid} one", "text_2": f"a photo {cid} two"}) + "\n"
                        for cid, a, b in rows))
    return path


def test_features_corrupt_image_names_its_cycle_and_leaves_nothing_behind(toy_items, cli, tmp_path, ref_cache, capsys,
                                                                          monkeypatch) -> None:
    toy_items(tmp_path / "bench", n_images=3)
    images = tmp_path / "bench" / "images"
    (images / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    good = _cycles(tmp_path / "good.jsonl", [("c1", "img0.png", "img1.png"), ("c2", "img1.png", "img2.png")])
    bad = _cycles(tmp_path / "bad.jsonl", [("c1", "img0.png", "img1.png"), ("c2", "broken.png", "img2.png")])
    args = ["features", "--model", "ref:tiny-open-clip", "--images", str(images), "--batch-size", "2"]
    code, _, err = cli(*[*args, "--cycles", str(bad), "--out", str(tmp_path / "new")])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{bad}, record row 2 (cycle c2), field 'image_1'" in err and "'broken.png'" in err
    assert not (tmp_path / "new").exists()  # no empty or half-written features folder
    code, _, err = cli(*[*args, "--cycles", str(good), "--out", str(tmp_path / "feats")])
    assert code == 0, err
    before = {p.name: p.read_bytes() for p in (tmp_path / "feats").iterdir()}
    code, _, err = cli(*[*args, "--cycles", str(bad), "--out", str(tmp_path / "feats"), "--overwrite"])
    # other cycles: without --overwrite, a refusal before any image is read
    assert code == 2 and "cycle c2" in err
    assert {p.name: p.read_bytes() for p in (tmp_path / "feats").iterdir()} == before  # the old run is intact


# ------------------------------------------------------------------------------------------------ reruns


def test_vca_score_rerun_with_other_arguments_needs_overwrite(toy_items, cli, tmp_path, ref_cache, capsys, monkeypatch) -> None:
    import json

    items = toy_items(tmp_path / "bench", n_images=2)
    run = tmp_path / "run"
    base = ["vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", str(items), "--images",
            str(tmp_path / "bench" / "images"), "--out", str(run)]
    code, _, err = cli(*[*base, "--contexts", "original,text,blank"])
    assert code == 0, err
    margins = (run / "margins.parquet").read_bytes()
    # the same run again (another batch size: operational only; context order: rows are sorted) is a resume
    code, _, err = cli(*[*base, "--contexts", "blank,original,text", "--batch-size", "3"])
    assert code == 0, err
    assert (run / "margins.parquet").read_bytes() == margins
    code, _, err = cli(*[*base, "--contexts", "original,text", "--seed", "4"])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{run}, field '--out': holds a run with other arguments" in err and "--overwrite" in err
    assert "contexts: ['blank', 'original', 'text'] → ['original', 'text']" in err and "seed: 0 → 4" in err
    assert (run / "margins.parquet").read_bytes() == margins  # nothing replaced
    code, _, err = cli(*[*base, "--contexts", "original,text", "--overwrite"])
    assert code == 0, err
    summary = json.loads((run / "summary.json").read_text())
    assert summary["n_units_scored_now"] == 0 and summary["n_units_from_cache"] == summary["n_unique_units"]
    assert summary["contexts"] == {"original": 4, "text": 4}


def test_vca_score_survives_damaged_cache_chunks_bit_identically(toy_items, cli, tmp_path, ref_cache, capsys, monkeypatch) -> None:
    """A finished run whose cache was damaged (one chunk truncated, one with a changed digit) reruns with a
    warning naming each chunk, rescores just those, and writes byte-identical margins.parquet."""
    import json

    items = toy_items(tmp_path / "bench", n_images=4)
    run = tmp_path / "run"
    command = ["vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", str(items), "--images",
               str(tmp_path / "bench" / "images"), "--out", str(run), "--contexts", "original,text,blank",
               "--interface", "yesno,truefalse", "--batch-size", "3", "--chunk-size", "4"]
    code, _, err = cli(*command)
    assert code == 0, err
    reference = {name: (run / name).read_bytes() for name in ("margins.parquet", "failures.jsonl")}
    chunks = sorted((run / "cache").glob("chunk-*.jsonl"))
    assert len(chunks) >= 4
    sizes = [len(path.read_text().splitlines()) - 1 for path in chunks]  # records (less the seal line)
    data = chunks[1].read_bytes()
    chunks[1].write_bytes(data[: len(data) // 3])
    text = chunks[3].read_text()
    nll = str(json.loads(text.splitlines()[0])["nll_yes"])
    chunks[3].write_text(text.replace(nll, nll[:-1] + ("1" if nll[-1] != "1" else "2"), 1))
    code, out, err = cli(*command)
    assert code == 0, err
    assert "Traceback" not in err and "invalid JSON" not in err
    for path in (chunks[1], chunks[3]):
        assert f"cache chunk {path} is damaged" in " ".join(err.split()), err
        assert (run / "cache" / "damaged" / path.name).exists()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["n_units_scored_now"] == sizes[1] + sizes[3]
    assert [d["chunk"] for d in summary["damaged_cache_chunks"]] == [str(chunks[1]), str(chunks[3])]
    for name, expected in reference.items():
        assert (run / name).read_bytes() == expected, name


@pytest.mark.parametrize(("args", "said"), [
    (["vca", "score", "--contexts", "original,txt,blank"], "unknown context 'txt' (did you mean 'text'?)"),
    (["vca", "score", "--interface", "yes-no"], "unknown interface 'yes-no' (did you mean 'yesno'?)"),
    (["vca", "score-dual", "--contexts", "original,blnk"], "unknown context 'blnk' (did you mean 'blank'?)"),
    (["vca", "stability", "run", "--perturbations", "batch1"], "unknown perturbation 'batch1' (did you mean "
                                                                "'batch-1'?)"),
], ids=["contexts", "interface", "dual-contexts", "perturbations"])
def test_a_misspelled_name_is_refused_before_any_model_loads(args, said, cli, tmp_path, monkeypatch,
                                                             one_error_line) -> None:
    """A typo in a name surfaced after the model loaded (23–34 s); now it is one line with the
    closest name, and nothing was built, loaded or written."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    (tmp_path / "images").mkdir()
    (tmp_path / "items.jsonl").write_text('{"item_id": "a", "image": "x.png", "question": "Is it?", '
                                          '"label": "yes", "group_id": "g", "statement": "true"}\n')
    model = "ref:tiny-open-clip" if args[1] == "score-dual" else "ref:tiny-qwen2-vl"
    extra = [] if args[1] == "stability" else ["--model", model, "--benchmark", "items.jsonl", "--images", "images",
                                               "--out", "out"]
    line = one_error_line(*cli(*args, *extra))
    assert said in line
    assert not (tmp_path / "cache").exists() and not (tmp_path / "out").exists()
