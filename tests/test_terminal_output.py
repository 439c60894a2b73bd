"""What a terminal shows: tables keep identifiers whole at 80 columns, library log records reach the
user as vlaudit's own one-line warnings, and a missing open_clip checkpoint offline says what is missing and how
to provide it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

FAMILIES = ("coco-object-matched", "gqa-attribute-cross-noun", "coco-strict-above-below")


def _cycles_and_scores(root: Path) -> tuple[Path, Path]:
    cycles, scores = [], []
    for family in FAMILIES:
        for split in ("train", "val", "test"):
            for k in range(2):
                u1, u2, v1, v2 = (f"{family}{split}{k}-{x}" for x in ("u1", "u2", "v1", "v2"))
                cycles.append({"cycle_id": f"{family}/{split}/{k}", "family": family, "split": split,
                               "image_1": u1, "caption_1": v1, "image_2": u2, "caption_2": v2})
                scores += [{"image_id": u1, "caption_id": v1, "score": 1.0 + k},
                           *({"image_id": u, "caption_id": v, "score": 0.0} for u, v in ((u2, v2), (u1, v2), (u2, v1)))]
    (root / "cycles.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cycles))
    (root / "scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores))
    return root / "cycles.jsonl", root / "scores.jsonl"


def test_cycles_eval_table_keeps_family_names_whole_at_80_columns(tmp_path, cli, monkeypatch) -> None:
    _cycles_and_scores(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)  # relative paths: the width checked is the command's, not the temp folder's
    code, out, err = cli("cycles", "eval", "--cycles", "cycles.jsonl", "--scores", "scores.jsonl", "--out", "eval.json",
                         "--min-cycles", "1", "--resamples", "50", "--no-plot")
    assert code == 0, err
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80
    for family in FAMILIES:
        rows = [line for line in lines if family in line.split()]
        assert len(rows) == 3, (family, out)  # one whole row per split, never "coco-object-matche / d"
        for split, row in zip(("train", "val", "test"), rows, strict=True):
            # the CI is whole on the same row ("—" where it is zero-width: an artefact, docs/concepts/statistics.md)
            assert row.split()[1] == split and row.rstrip().endswith(("]", "—"))


def test_a_table_too_wide_for_the_terminal_prints_one_block_per_row(capsys, monkeypatch) -> None:
    from vlaudit.commands._render import print_table

    monkeypatch.setenv("COLUMNS", "80")
    columns = ["name", *(f"a-long-column-header-{i}" for i in range(6))]
    print_table("wide [bold]title[/bold]", columns, [["id-[with]-brackets", *range(6)]], droppable=("absent",))
    out = capsys.readouterr().out
    assert max(map(len, out.splitlines())) <= 80
    flat = " ".join(out.split())
    assert "wide [bold]title[/bold]" in flat and "id-[with]-brackets" in out.splitlines()[1]
    assert all(f"a-long-column-header-{i} {i}" in flat for i in range(6))
    # the block breaks only between whole "column value" pairs
    assert all(f"a-long-column-header-{i} {i}" in out for i in range(6))
    assert all(line.startswith("  a-long-column-header-") for line in out.splitlines()[2:] if line.strip())


def test_library_log_records_print_as_one_line_warnings(capsys) -> None:
    """A library's ``logging.error`` (open_clip logs this way) reaches the terminal as a vlaudit ``warning:``
    line, not Python's ``ERROR:root:``; the handler is gone afterwards."""
    import logging

    from vlaudit.cli import _library_logs_as_warnings

    before = list(logging.getLogger().handlers)
    with _library_logs_as_warnings():
        logging.error("Model config for ViT-X not found\nsecond line")
        logging.getLogger("open_clip.factory").warning("weights missing")
        logging.getLogger("open_clip.factory").info("not shown")
    err = capsys.readouterr().err
    assert err.splitlines() == ["warning: Model config for ViT-X not found; second line",
                                "warning: open_clip.factory: weights missing"]
    assert logging.getLogger().handlers == before


def test_transformers_records_print_as_one_line_warnings_and_its_logger_is_restored(capsys) -> None:
    """transformers' logger has its own stderr handler and does not propagate: inside the block its records
    are vlaudit's one-line warnings (a multi-line table folded, colour codes dropped), never ``[transformers]``
    lines; huggingface_hub's propagating logger prints once; afterwards both loggers are as they were."""
    import logging

    from transformers.utils import logging as hf_logging

    from vlaudit.cli import _library_logs_as_warnings

    library = hf_logging.get_logger("transformers")  # configures it: own handler, no propagation
    before = (list(library.handlers), library.propagate, [list(h.filters) for h in library.handlers])
    with _library_logs_as_warnings():
        hf_logging.get_logger("transformers.modeling_utils").warning(
            "\x1b[1mToy LOAD REPORT\x1b[0m from: /m\nKey    | Status  | \n-------+---------+-\nw.bias | MISSING | \n"
            "\nNotes:\n- MISSING:\tnewly initialized")
        hf_logging.get_logger("transformers.x").info("not shown")
        logging.getLogger("huggingface_hub.file_download").warning("offline: using the cached copy")
    assert capsys.readouterr().err.splitlines() == [
        "warning: transformers.modeling_utils: Toy LOAD REPORT from: /m; Key Status; w.bias MISSING; "
        "Notes: MISSING: newly initialized",
        "warning: huggingface_hub.file_download: offline: using the cached copy"]
    assert (list(library.handlers), library.propagate, [list(h.filters) for h in library.handlers]) == before


def test_a_tiny_model_load_warning_reaches_the_terminal_as_one_line(tmp_path, tiny_model, make_benchmark, cli,
                                                                    monkeypatch, no_network) -> None:
    """A checkpoint that lacks one weight: transformers logs its multi-line LOAD REPORT; ``vca score`` shows it
    as one ``warning:`` line that names the missing weight, and scores."""
    import shutil

    from safetensors.torch import load_file, save_file

    model = tmp_path / "model"
    shutil.copytree(tiny_model("qwen2-vl"), model)
    weights = load_file(model / "model.safetensors")
    del weights["model.layers.0.input_layernorm.weight"]
    save_file(weights, model / "model.safetensors", metadata={"format": "pt"})
    items = make_benchmark(tmp_path / "bench", n_images=2, questions=1)
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = cli("vca", "score", "--model", f"hf:{model}", "--benchmark", items, "--images",
                         tmp_path / "bench" / "images", "--out", tmp_path / "run")
    assert code == 0, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("warning: transformers."), err
    assert "LOAD REPORT" in lines[0] and "layers.0.input_layernorm.weight MISSING" in lines[0]
    assert "\x1b" not in err and "[transformers]" not in err + out
    assert (tmp_path / "run" / "margins.parquet").is_file()


def test_held_log_records_drop_on_failure_and_pass_on_success(capsys) -> None:
    import logging

    from vlaudit.backends.dual.load_logs import held_log_records
    from vlaudit.cli import _library_logs_as_warnings

    with _library_logs_as_warnings():
        with held_log_records():
            logging.error("Failed to download weights")  # the load's InputError says it instead
            logging.getLogger("huggingface_hub.file_download").warning("cannot reach the hub")
            logging.getLogger("transformers.modeling_utils").warning("no such file")
        with held_log_records() as held:
            logging.warning("a loaded model's note")
            logging.getLogger("transformers.modeling_utils").warning("a library's note")
        held.release()
    assert capsys.readouterr().err.splitlines() == ["warning: a loaded model's note",
                                                    "warning: transformers.modeling_utils: a library's note"]
    assert not logging.getLogger().filters


def test_held_log_records_hold_at_every_root_handler_and_pass_each_record_on_once() -> None:
    """Outside the command line too: a library record held at each of the root logger's handlers (a user's own
    among them) reaches each of them once when released, and nothing before."""
    import logging

    from vlaudit.backends.dual.load_logs import held_log_records

    class Kept(logging.Handler):
        def __init__(self) -> None:
            super().__init__(level=logging.WARNING)
            self.messages: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.messages.append(record.getMessage())

    root, handlers = logging.getLogger(), [Kept(), Kept()]
    for handler in handlers:
        root.addHandler(handler)
    try:
        with held_log_records() as held:
            logging.getLogger("huggingface_hub.file_download").warning("a library's note")
        assert [h.messages for h in handlers] == [[], []]
        held.release()
        assert [h.messages for h in handlers] == [["a library's note"], ["a library's note"]]
    finally:
        for handler in handlers:
            root.removeHandler(handler)
    assert all(not h.filters for h in handlers)


@pytest.fixture
def empty_hub_cache(tmp_path, monkeypatch) -> Path:
    """An empty Hugging Face cache, offline: no checkpoint of any tag is there."""
    pytest.importorskip("open_clip")
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tmp_path / "hub"


def _features(cli, root: Path, model: str) -> tuple[int, str, str]:
    from PIL import Image

    (root / "images").mkdir(exist_ok=True)
    for name in ("a.png", "b.png"):
        Image.new("RGB", (8, 8), (10, 200, 30)).save(root / "images" / name)
    (root / "cycles.jsonl").write_text(json.dumps({"cycle_id": "c", "family": "toy", "image_1": "a.png",
                                                   "image_2": "b.png", "caption_1": "a", "caption_2": "b",
                                                   "text_1": "a dog", "text_2": "a cat"}) + "\n")
    return cli("features", "--cycles", root / "cycles.jsonl", "--images", root / "images", "--out",
               root / "feats", "--model", model)


def test_open_clip_weights_missing_offline_say_what_and_how(tmp_path, empty_hub_cache, cli, no_network) -> None:
    """The architecture exists, only the weights are missing: the error says so (not "available
    architectures …"), names the cache and the offline switch, and how to provide the weights."""
    code, out, err = _features(cli, tmp_path, "open_clip:ViT-B-32/laion2b_s34b_b79k")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    flat = " ".join(err.split())
    assert "ERROR:root" not in flat and "available" not in flat
    assert "the weights of ViT-B-32 'laion2b_s34b_b79k' are not in the local cache" in flat
    assert str(empty_hub_cache) in flat and "HF_HUB_OFFLINE=1" in flat and "HF_HOME" in flat
    assert "--model open_clip:ViT-B-32//PATH/TO/WEIGHTS.bin" in flat
    assert not (tmp_path / "feats").exists()


@pytest.mark.parametrize(("model", "message"), [
    ("open_clip:ViT-B-32/no-such-tag", "ViT-B-32 has no pretrained tag 'no-such-tag'; its tags: openai, "),
    ("open_clip:ViT-B-32//no/such/ckpt.pt", "checkpoint file '/no/such/ckpt.pt' not found"),
    ("open_clip:ViT-Nope-1", "unknown open_clip architecture 'ViT-Nope-1'; available include "),
])
def test_open_clip_load_errors_name_what_is_missing(model, message, tmp_path, empty_hub_cache, cli) -> None:
    code, _, err = _features(cli, tmp_path, model)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert message in " ".join(err.split()) and "ERROR:root" not in err


@given(st.text())
def test_one_line_never_breaks_a_line_and_keeps_every_plain_word(text) -> None:
    from vlaudit.commands._logs import one_line

    folded = one_line(text)
    assert len(folded.splitlines()) <= 1
    plain = [word for word in text.split() if word.isalnum()]
    assert all(word in folded for word in plain)


def test_report_prose_wraps_between_words_at_80_columns(capsys, monkeypatch) -> None:
    """The analyses' summary lines (e.g. ``vca proxies``' control-set stability) wrap at the terminal's width,
    never inside a number or a range, and keep brackets as text."""
    from vlaudit.commands._render import print_wrapped

    monkeypatch.setenv("COLUMNS", "80")
    text = ("stable across all sets: 498/558 (89.25%); C-U intersection 152, union 209; headline C-U in the "
            "intersection: 100.00%; per-run stable 77.17–100.00%, C-U retention [100.00–100.00%]")
    print_wrapped(text)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) > 1 and max(map(len, lines)) <= 80
    assert all(line.startswith("  ") for line in lines[1:]) and " ".join(" ".join(lines).split()) == text


def test_an_error_line_wraps_between_words_in_a_terminal_and_stays_one_line_when_piped() -> None:
    """In a terminal the error wraps at word boundaries (no "percep/tion"); piped it is one
    physical line, so a log keeps one line per error."""
    import io

    from rich.console import Console

    from vlaudit.cli import _error_line

    message = ("data/mmstar.jsonl, record mmstar-12, field 'category': expected one of coarse perception, "
               "fine-grained perception, instance reasoning, logical reasoning")
    screen = io.StringIO()
    _error_line(message, Console(file=screen, force_terminal=True, width=40, color_system=None))
    lines = screen.getvalue().splitlines()
    assert len(lines) > 2 and all(len(line) <= 40 for line in lines)
    words = set(("error: " + message).split())
    assert all(word in words for line in lines for word in line.split()), lines  # no word cut in two
    piped = io.StringIO()
    _error_line(message, Console(file=piped, force_terminal=False, width=40))
    assert piped.getvalue() == f"error: {message}\n"
