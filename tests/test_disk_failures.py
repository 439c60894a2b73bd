"""A disk that refuses: every command that writes, on a full disk, an unwritable folder or a cache path that is a
file, prints one ``error:`` line naming the path and what to do and exits 2 — no traceback, no temporary file
left — and a run stopped by a full disk or by Ctrl-C resumes from its cache when rerun."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pairs_files import pairs_rows

from vlaudit import errors

REPO = Path(__file__).resolve().parents[1]


def _main(*args: str | Path) -> int:
    from vlaudit.cli import main

    saved = sys.argv
    sys.argv = ["vlaudit", *map(str, args)]
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    finally:
        sys.argv = saved
    return 0


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, toy_items) -> Path:
    """Valid inputs for every writing command, a finished ``vca score`` run, and the reference models built."""
    root = tmp_path_factory.mktemp("disk")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    saved = os.environ.get("VLAUDIT_CACHE")
    os.environ["VLAUDIT_CACHE"] = str(root / "cache")
    try:
        toy_items(root / "bench", n_images=2)
        (root / "vsr.jsonl").write_text(json.dumps({"image": "000000000001.jpg", "caption": "The cat is left of the dog.",
                                                     "label": 1, "relation": "left of"}) + "\n")
        (root / "margins.csv").write_text("model,dataset,item_id,context,margin,label\n" + "".join(
            f"m,d,i{k},{c},{m},{'yes' if k % 2 else 'no'}\n" for k in range(8)
            for c, m in (("original", 0.3123456789 * (k - 3.5)), ("text", 0.1123456789 * (k - 3.5)), ("blank", 0.0123456789 * (k - 3.5)))))
        (root / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in pairs_rows()))
        (root / "cycles.jsonl").write_text("".join(json.dumps(
            {"cycle_id": f"c{k}", "family": "f", "image_1": f"img{k}.png", "caption_1": f"v{k}",
             "image_2": f"img{k + 1}.png", "caption_2": f"v{k + 1}", "text_1": "a photo", "text_2": "a cat"}) + "\n"
            for k in (0,)))
        (root / "scores.csv").write_text("image_id,caption_id,score\n" + "".join(
            f"img{i}.png,v{j},{0.7123456789012345 if i == j else 0.1234567890123457}\n" for i in (0, 1) for j in (0, 1)))
        assert _main(*_VCA_SCORE(root, root / "run")) == 0
        assert _main("features", "--model", "ref:tiny-open-clip", "--cycles", root / "cycles.jsonl", "--images",
                     root / "bench" / "images", "--out", root / "feats-warm") == 0
    finally:
        if saved is None:
            os.environ.pop("VLAUDIT_CACHE")
        else:
            os.environ["VLAUDIT_CACHE"] = saved
    return root


def _VCA_SCORE(root: Path, out: Path) -> list[str | Path]:
    return ["vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", root / "bench" / "items.jsonl",
            "--images", root / "bench" / "images", "--out", out, "--contexts", "original,text"]


# every command that writes, with its output under OUT
WRITERS = {
    "cycles build": lambda w, out: ["cycles", "build", "jsonl", "--pairs", w / "pairs.jsonl", "--splits", "test",
                                    "--min-cycles", "1", "--out", out / "cycles.jsonl"],
    "cycles eval": lambda w, out: ["cycles", "eval", "--cycles", w / "cycles.jsonl", "--scores", w / "scores.csv",
                                   "--min-cycles", "1", "--resamples", "10", "--no-plot", "--out", out / "eval.json"],
    "data vsr": lambda w, out: ["data", "vsr", w / "vsr.jsonl", "--out", out / "items.jsonl"],
    "features": lambda w, out: ["features", "--model", "ref:tiny-open-clip", "--cycles", w / "cycles.jsonl",
                                "--images", w / "bench" / "images", "--out", out / "feats"],
    "vca score": lambda w, out: _VCA_SCORE(w, out / "run"),
    "vca report": lambda w, out: ["vca", "report", w / "margins.csv", "--resamples", "10",
                                  "--no-plot", "--out", out / "report"],
}


def _temporary_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.endswith(".tmp") or ".tmp." in p.name]


@contextmanager
def _no_file_may_grow(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process at a file-size limit of zero bytes (``ulimit -f 0``), writing no bytecode caches meanwhile
    (``_vlaudit`` says why)."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_a_full_disk_is_one_line_and_leaves_no_temporary_file(command, workspace, tmp_path, cli, monkeypatch) -> None:
    """The file-size limit at zero bytes (what ``ulimit -f 0`` sets): every write fails as on a full disk."""
    monkeypatch.setenv("VLAUDIT_CACHE", str(workspace / "cache"))
    args = WRITERS[command](workspace, tmp_path / "out")
    with _no_file_may_grow(monkeypatch):
        code, out, err = cli(*args)
    assert code == errors.EXIT_BAD_INPUT, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in out + err, err
    assert "file too large" in lines[0] and "ulimit -f" in lines[0] and str(tmp_path / "out") in lines[0], lines[0]
    assert _temporary_files(tmp_path) == []


def test_report_on_a_full_disk_is_one_line(workspace, tmp_path, cli, monkeypatch) -> None:
    import shutil

    shutil.copytree(workspace / "run", tmp_path / "run", ignore=shutil.ignore_patterns("cache"))
    with _no_file_may_grow(monkeypatch):
        code, _, err = cli("report", tmp_path / "run")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "report.html" in err and "file too large" in err, err
    assert not (tmp_path / "run" / "report.html").exists() and _temporary_files(tmp_path) == []


def _unwritable_folder(tmp_path: Path) -> Path:
    """A folder this user cannot write into: a read-only one, or (as root, who may write anywhere) sysfs."""
    if os.geteuid() != 0:
        folder = tmp_path / "read-only"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    if os.access("/sys", os.W_OK) and Path("/sys/kernel").is_dir():
        return Path("/sys")  # sysfs refuses a new folder even to root
    pytest.skip("no unwritable folder for this user")


@pytest.mark.parametrize("command", sorted(WRITERS))
def test_an_unwritable_out_folder_is_one_line(command, workspace, tmp_path, cli, monkeypatch) -> None:
    monkeypatch.setenv("VLAUDIT_CACHE", str(workspace / "cache"))
    folder = _unwritable_folder(tmp_path)
    code, out, err = cli(*WRITERS[command](workspace, folder / "vlaudit-out"))
    assert code == errors.EXIT_BAD_INPUT, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in out + err, err
    assert str(folder) in lines[0] and ("permission denied" in lines[0] or "not permitted" in lines[0]), lines[0]


def test_a_cache_that_is_a_file_is_one_line_naming_the_variable(workspace, tmp_path, cli, monkeypatch) -> None:
    (tmp_path / "cache").write_text("not a folder\n")
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    code, out, err = cli(*_VCA_SCORE(workspace, tmp_path / "run"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert f"$VLAUDIT_CACHE={tmp_path / 'cache'} must be a writable folder" in err and "is a file" in err


def test_each_operating_system_refusal_says_what_to_do() -> None:
    import errno

    for code, words in [(errno.EACCES, "permission denied"), (errno.EROFS, "read-only"), (errno.ENOSPC, "no space"),
                        (errno.EFBIG, "ulimit -f"), (errno.ENOTDIR, "is a file, not a folder")]:
        line = errors.describe_os_error(OSError(code, os.strerror(code), "/data/out"))
        assert line.startswith("/data/out: ") and words in line, line
    assert "resumes from its cache" in errors.describe_os_error(OSError(errno.ENOSPC, "full", "x"))


# ------------------------------------------------------------------------------ real processes, real limits


def _vlaudit(args: list[str | Path], *, cwd: Path, env: dict[str, str], limit_kib: int | None = None
             ) -> subprocess.CompletedProcess:
    prefix = f"ulimit -f {limit_kib}; " if limit_kib is not None else ""
    line = " ".join(f"'{a}'" for a in [sys.executable, "-m", "vlaudit", *map(str, args)])
    # Python 3.11 writes a bytecode cache cut at the limit and keeps it (CPython gh-126606, fixed from 3.12):
    # every later import of that module in the venv would fail, so a limited process writes none
    no_bytecode = {"PYTHONDONTWRITEBYTECODE": "1"} if limit_kib is not None else {}
    return subprocess.run(["bash", "-c", prefix + "exec " + line], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", **no_bytecode, **env},
                          timeout=300)


def _bytecode_cut_at(size: int, *, since: float) -> list[Path]:
    """The bytecode caches of this venv and the package written since ``since`` that are exactly ``size`` bytes:
    the mark of one cut at a file-size limit."""
    roots = [Path(sys.prefix), REPO / "vlaudit"]
    return [p for root in roots for p in root.rglob("*.pyc") if (st := p.stat()).st_size == size
            and st.st_mtime >= since]


@pytest.mark.slow
def test_a_disk_full_mid_run_keeps_the_cache_and_the_rerun_resumes(workspace, tmp_path, toy_items, cli, monkeypatch,
                                                                    one_torch_thread) -> None:
    """``ulimit -f 8`` (8 KiB): the cache chunks (small, ``--chunk-size 4``) are written, margins.parquet is not;
    the rerun without the limit scores nothing again and writes the margins of an uninterrupted run (the rerun
    and the uninterrupted run through the real entry point in this process: only the limit needs its own)."""
    toy_items(tmp_path / "bench", n_images=6)
    env = {"VLAUDIT_CACHE": str(workspace / "cache")}
    run = tmp_path / "run"
    command = [*_VCA_SCORE(tmp_path, run), "--chunk-size", "4"]
    started = time.time()
    done = _vlaudit(command, cwd=tmp_path, env=env, limit_kib=8)
    assert done.returncode == 2, done.stderr
    assert _bytecode_cut_at(8 * 1024, since=started) == []  # the venv still imports after the limited run
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "margins.parquet" in lines[0] and "ulimit -f" in lines[0], done.stderr
    assert not (run / "margins.parquet").exists() and _temporary_files(tmp_path) == []
    chunks = sorted((run / "cache").glob("chunk-*.jsonl"))
    assert chunks
    monkeypatch.setenv("VLAUDIT_CACHE", str(workspace / "cache"))
    code, _, err = cli(*command)
    assert code == 0, err
    summary = json.loads((run / "summary.json").read_text())
    assert summary["n_units_scored_now"] == 0 and summary["n_units_from_cache"] == summary["n_unique_units"]
    reference = tmp_path / "reference"
    code, _, err = cli(*_VCA_SCORE(tmp_path, reference), "--chunk-size", "4")
    assert code == 0, err
    assert (run / "margins.parquet").read_bytes() == (reference / "margins.parquet").read_bytes()


@pytest.mark.slow
def test_ctrl_c_exits_130_even_from_a_background_job_and_the_rerun_resumes(workspace, tmp_path, toy_items, cli,
                                                                          monkeypatch, one_torch_thread) -> None:
    """A shell starts ``vlaudit … &`` with SIGINT ignored; ``kill -INT`` must still stop it: exit 130, one line,
    no result written, and the rerun finishes with the margins of an uninterrupted run (both through the real
    entry point in this process: only the interrupted run needs its own)."""
    toy_items(tmp_path / "bench", n_images=6)
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "VLAUDIT_CACHE": str(workspace / "cache")}
    run = tmp_path / "run"
    def command_into(out: Path) -> list[str]:
        return [sys.executable, "-m", "vlaudit", *map(str, _VCA_SCORE(tmp_path, out)), "--chunk-size", "2"]

    command = command_into(run)
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    time.sleep(2.0)  # inside the imports or the model load: either way the command has not finished
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == errors.EXIT_INTERRUPTED, err
    assert err.strip().splitlines() == ["error: interrupted; rerun the same command to resume"], err
    assert not (run / "margins.parquet").exists() and _temporary_files(tmp_path) == []
    monkeypatch.setenv("VLAUDIT_CACHE", str(workspace / "cache"))
    for out in (run, tmp_path / "reference"):
        code, _, err = cli(*command_into(out)[3:])
        assert code == 0, err
    assert (run / "margins.parquet").read_bytes() == (tmp_path / "reference" / "margins.parquet").read_bytes()


def _models_list_with(tmp_path: Path, entry: list[str], sitecustomize: str) -> subprocess.CompletedProcess[str]:
    """``vlaudit models list`` as its own process through ``entry``, with ``sitecustomize`` run at start-up
    (Python imports a ``sitecustomize`` it finds on the path before anything else)."""
    (tmp_path / "sitecustomize.py").write_text(sitecustomize)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([*entry, "models", "list"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("entry", [[sys.executable, "-m", "vlaudit"], [str(Path(sys.executable).parent / "vlaudit")]],
                         ids=["python -m vlaudit", "the vlaudit script"])
def test_an_interrupt_inside_an_exec_still_exits_130(entry, tmp_path) -> None:
    """A Ctrl-C that falls inside an ``exec`` (imports run many) ended a ``python -m`` process by SIGINT (−2, not
    130) though vlaudit had caught it (:func:`vlaudit.cli.run` says why); here it falls there every time, through
    both entry points users run."""
    result = _models_list_with(tmp_path, entry,
                               "import vlaudit\n"
                               "vlaudit.ConsoleTable = lambda *args, **kwargs: exec('raise KeyboardInterrupt')\n")
    assert (result.returncode, result.stderr.strip().splitlines()) == (
        errors.EXIT_INTERRUPTED, ["error: interrupted; nothing half-written is left, and the same command starts over when rerun"]), result.stderr


def test_an_interrupt_that_python_drops_still_stops_the_command(tmp_path) -> None:
    """Raised inside a ``__del__`` or a weakref callback (the import system runs such callbacks), a
    KeyboardInterrupt is printed as "Exception ignored" and dropped: the command ran to the end and exited 0. It
    must stop the command like any Ctrl-C: 130, the one line, nothing of the table printed."""
    site = (
        "import time\n"
        "import vlaudit\n"
        "class DroppedInterrupt:\n"
        "    def __del__(self):\n"
        "        raise KeyboardInterrupt\n"
        "def console_table(*args, **kwargs):\n"
        "    DroppedInterrupt()\n"
        "    for _ in range(500):  # a command at work\n"
        "        time.sleep(0.01)\n"
        "    print('the table')\n"
        "vlaudit.ConsoleTable = console_table\n")
    result = _models_list_with(tmp_path, [sys.executable, "-m", "vlaudit"], site)
    assert (result.returncode, result.stdout, result.stderr.strip().splitlines()) == (
        errors.EXIT_INTERRUPTED, "", ["error: interrupted; nothing half-written is left, and the same command starts over when rerun"]), result.stderr


def test_an_end_of_file_inside_a_command_is_bad_input_not_an_interrupt(cli, monkeypatch) -> None:
    """click turns an EOFError into the same abort as Ctrl-C; a truncated file is bad input (2), not 130."""
    import vlaudit

    def truncated(*args, **kwargs):
        raise EOFError("Ran out of input")

    monkeypatch.setattr(vlaudit, "ConsoleTable", truncated)  # the name the command calls, through the facade
    code, _, err = cli("models", "list")
    assert code == errors.EXIT_BAD_INPUT, err
    assert err.strip().splitlines() == ["error: a file or the input ended early (EOFError: Ran out of input); is a "
                                        "file truncated or empty?"]
