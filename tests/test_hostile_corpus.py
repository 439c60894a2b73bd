"""The hostile corpus: every command that reads a file, run on the nastiest inputs found.

``tests/data/hostile/<reader>__<case>.<ext>`` holds one small file per case. Each file is run through every
command that reads that kind of file, in a temporary folder, through the real entry point. The bar: no
traceback and no Python warning text; a refused input exits 2 with one ``error:`` line naming the file (and
the field, where the case names one) and leaves nothing in the output folder; an input that can still mean
what it says exits 0 with one ``warning:`` line naming the records.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "data" / "hostile"

# reader → the commands that read its files; {f} is the corpus file, companions are written by _companions
COMMANDS: dict[str, list[list[str]]] = {
    "vsr": [["data", "vsr", "{f}", "--out", "out/items.jsonl"],
            ["data", "vsr-inverse", "{f}", "--entities", "any", "--out", "out/inverse.jsonl"]],
    "meta": [["data", "vsr", "vsr.jsonl", "--meta", "{f}", "--out", "out/items.jsonl"]],
    "items": [["vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", "{f}", "--images", "images",
               "--out", "out/run"],
              ["vca", "score-dual", "--model", "ref:tiny-open-clip", "--benchmark", "{f}", "--images", "images",
               "--out", "out/run"]],
    "gqa": [["cycles", "build", "gqa", "--scene-graphs", "{f}", "--out", "out/cycles.jsonl"]],
    "pairs": [["cycles", "build", "jsonl", "--pairs", "{f}", "--splits", "test", "--min-cycles", "1", "--out",
               "out/cycles.jsonl"]],
    "coco_instances": [["cycles", "build", "coco", "--instances", "{f}", "--out", "out/cycles.jsonl"]],
    "sugarcrepe": [["cycles", "audit-pairs", "{f}", "--out", "out/audit"]],
    "labelled_table": [["cycles", "audit-pairs", "{f}", "--out", "out/audit"]],
    "whatsup_spatial": [["data", "gsr-coco", "{f}", "--out", "out/items.jsonl"],
                        ["cycles", "audit-pairs", "{f}", "--out", "out/audit"]],
    "whatsup_controlled": [["data", "whatsup-controlled", "{f}", "--out", "out/items.jsonl"],
                           ["cycles", "audit-pairs", "{f}", "--out", "out/audit"]],
    "scores": [["cycles", "eval", "--cycles", "cycles.jsonl", "--scores", "{f}", "--min-cycles", "1",
                "--resamples", "10", "--no-plot", "--out", "out/eval.json"]],
    "cycles": [["cycles", "eval", "--cycles", "{f}", "--scores", "scores.csv", "--min-cycles", "1",
                "--resamples", "10", "--no-plot", "--out", "out/eval.json"],
               ["cycles", "audit-pairs", "{f}", "--format", "cycles", "--out", "out/audit"]],
    "margins": [["vca", "report", "{f}", "--resamples", "10", "--no-plot", "--out", "out/report"]],
    "mmbench": [["data", "items", "--format", "mmbench", "{f}", "--out", "out/items.jsonl"]],
    "hallusionbench": [["data", "items", "--format", "hallusionbench", "{f}", "--out", "out/items.jsonl"]],
    "pope": [["data", "items", "--format", "pope", "{f}", "--out", "out/items.jsonl"]],
}

# what each refused case's one line must also say (the record or the field); every other case names the file
ERROR_DETAIL = {
    "vsr__caption_list": "field 'caption': expected a string, got list",
    "vsr__relation_number": "field 'relation': expected a string, got int",
    "vsr__truncated": "record line 2",
    "vsr__not_utf8": "record line 1",
    "vsr__empty": "no rows",
    "vsr__label_two": "unparsable label 2",
    "meta__no_colon": "record line 2",
    "items__question_number": "record row 2, field 'question': expected a string, got float 3.5",
    "items__negative_box": "negative width or height",
    "items__duplicate_id": "duplicate item_id",
    "gqa__dangling_relation": "object 1, field 'relations': relation 'to the left of' points to object '777'",
    "gqa__negative_width": "object 1, field 'w'",
    "pairs__box_outside": "field 'box'",
    "coco_instances__negative_bbox": "field 'bbox'",
    "sugarcrepe__caption_null": "record entry 1, field 'caption'",
    "labelled_table__label_maybe": "record row 2, field 'label'",
    "whatsup_spatial__float_image_id": "record entry 1, field 'image_id'",
    "whatsup_controlled__option_number": "field 'caption_options'",
    "whatsup_controlled__true_among_false": "record entry 0, field 'caption_options': option 2 (false) is option 0",
    "whatsup_spatial__false_is_true": "record entry 0, field 'false_caption': the false caption is the true caption",
    "scores__edge_of_float64": "overflows float64, first cycle 'c1'",
    "scores__nan": "record row 1, field 'score'",
    "cycles__same_images": "two different images",
    "margins__nan_margin": "field 'margin'",
    "mmbench__answer_not_an_option": "record row 1, field 'answer': answer 'E' is none of the options",
    "hallusionbench__image_missing": "record entry 1, field 'filename': visual_input 1 needs an image",
    "pope__category_not_in_file_name": "record line 1, field 'category': expected a category random, popular",
    "margins__repeated_row": "record row 2, field 'item_id': duplicate (model, dataset, item_id, context, interface)",
    "margins__inf_margin": "record row 1, field 'margin': non-finite value inf",
    "margins__header_only": "no rows in file",
    "scores__inf": "record row 1, field 'score': score 'inf' is not a finite number",
    "scores__duplicate_pair": "record row 2, field 'score': duplicated (image_id, caption_id)",
    "gqa__truncated": "invalid JSON: unexpected end of data",
    "coco_instances__gzipped": "is compressed, not JSON: gzip (gunzip it first)",
    "vsr__gzipped": "is compressed, not JSON: gzip (gunzip it first)",
    "sugarcrepe__empty_object": "unknown JSON pair format",
    "whatsup_controlled__empty_list": ": ",
    "whatsup_spatial__bool_image_id": "record entry 0, field 'image_id': image id True is not an integer",
    "labelled_table__header_only": "no rows",
    "items__nan_box": "record line 1: invalid JSON",
    "cycles__empty": "no cycles in file",
    "pairs__object_name_number": "field 'name': each object needs a non-empty string 'name'",
}
# cases that still mean something: exit 0 and this one warning line
WARNING = {
    "vsr__duplicate_rows": "2 duplicate row(s) (same image and caption), each counted as an item: line 3 "
                           "repeats line 1, line 4 repeats line 2",
    "sugarcrepe__negative_equals_caption": "entry 1: field 'negative_caption' equals 'caption'",
    "scores__rounding_exceeds_tol": "scores reach 2e+09: float64 rounding of the cycle contrast",
    "pairs__mention_not_in_image": "an object their own image lacks",
    "whatsup_controlled__repeated_entry": "1 duplicate entry (same image and captions), each counted as a group: "
                                          "entry 1 repeats entry 0",
    "whatsup_spatial__repeated_entry": "1 duplicate entry (same image and captions), each counted as a group: "
                                       "entry 2 repeats entry 0",
}
CASES = sorted(p.name for p in CORPUS.iterdir() if "__" in p.name)
RUNS = [(name, k) for name in CASES for k in range(len(COMMANDS[name.split("__")[0]]))]


def _companions(root: Path) -> None:
    """The valid files a command needs beside the hostile one."""
    row = {"image": "000000000001.jpg", "caption": "The cat is left of the dog.", "label": 1, "relation": "left of"}
    (root / "vsr.jsonl").write_text(json.dumps(row) + "\n")
    (root / "cycles.jsonl").write_text("".join(json.dumps(
        {"cycle_id": f"c{k}", "family": "f", "image_1": f"u{2 * k - 1}", "caption_1": f"v{2 * k - 1}",
         "image_2": f"u{2 * k}", "caption_2": f"v{2 * k}"}) + "\n" for k in (1, 2)))
    (root / "scores.csv").write_text("image_id,caption_id,score\n" + "".join(
        f"u{i},v{j},{0.5 if i == j else 0.25}\n" for i in (1, 2) for j in (1, 2)))
    (root / "images").mkdir()


def test_every_reader_of_the_corpus_has_its_commands() -> None:
    assert CASES, "the corpus is empty"
    assert {name.split("__")[0] for name in CASES} <= set(COMMANDS)
    assert set(ERROR_DETAIL) | set(WARNING) == {name.rsplit(".", 1)[0] for name in CASES}


@pytest.mark.parametrize(("name", "k"), RUNS, ids=[f"{n.rsplit('.', 1)[0]}-{k}" for n, k in RUNS])
def test_hostile_file_gives_one_line_and_no_traceback(cli, files_under, name, k, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("VLAUDIT_HF_IMAGES", str(tmp_path / "hf-images"))
    monkeypatch.setenv("COLUMNS", "80")
    _companions(tmp_path)
    shutil.copy(CORPUS / name, tmp_path / name)
    args = [a.replace("{f}", name) for a in COMMANDS[name.split("__")[0]][k]]
    code, out, err = cli(*args)
    assert "Traceback" not in out + err and "Warning:" not in err and "warnings.warn" not in err, err
    case = name.rsplit(".", 1)[0]
    lines = err.strip().splitlines()
    if case in WARNING:
        assert code == 0, err
        # the case's own warning, one line naming the file; a small-sample note may stand beside it (2 cycle
        # clusters are below the minimum), each a whole line of its own
        assert all(line.startswith("warning: ") for line in lines), err
        assert [line for line in lines if WARNING[case] in line and name in line], err
        # the warning is also kept with the result, in the JSON the command writes
        kept = [w for path in (tmp_path / "out").rglob("*.json")
                for w in json.loads(path.read_text()).get("warnings", [])]
        assert any(WARNING[case] in w for w in kept), kept
    else:
        assert code == 2, (code, out, err)
        assert len(lines) == 1 and lines[0].startswith("error: "), err
        assert name in lines[0] and ERROR_DETAIL[case] in lines[0], lines[0]
        assert not (tmp_path / "out").exists() or files_under(tmp_path / "out") == []
    assert not (tmp_path / "cache").exists()  # refused before any model was built or loaded


def test_a_python_warning_prints_as_one_line(capsys) -> None:
    """No Python warning text (category, source file, source line) reaches the terminal through the CLI."""
    import warnings

    from vlaudit.cli import _warnings_as_one_line

    with warnings.catch_warnings():  # restores the default printer afterwards
        warnings.simplefilter("always")
        _warnings_as_one_line()
        warnings.warn("overflow encountered\n  in add", RuntimeWarning, stacklevel=1)
    assert capsys.readouterr().err == "warning: overflow encountered in add\n"


# ----------------------------------------------------------------------------------------------------------
# The new commands: published-benchmark readers, letter margins, both compares, the report's
# folders, images PIL refuses. Each case writes its files and gives (argv, expected, detail, corrected argv):
# expected "error" is exit 2 with one error line holding ``detail`` and nothing in out/; "ok" is exit 0; the
# corrected command (when given) then runs into the same --out with exit 0: nothing left blocks it.

def _letter_rows(n_options: int, *, label: str = "A", logp: float = -1.0, model: str = "m",
                 dataset: str = "mmstar") -> list[dict]:
    return [{"model": model, "dataset": dataset, "item_id": f"q{k}", "context": context, "interface": "letter",
             "margin": 0.0, "label": label, "logp_options": [logp] + [-2.0] * (n_options - 1)}
            for k in range(4) for context in ("original", "text", "blank")]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _yes_no_rows(model: str, ids: range, *, dataset: str = "toy", flip: bool = False) -> list[dict]:
    return [{"model": model, "dataset": dataset, "item_id": f"q{k}", "context": context,
             "margin": (1.0 if (k % 2) != flip else -1.0) * (2.0 if context == "original" else 0.25 * (k % 3)),
             "label": "yes" if k % 2 else "no", "source_sha256": f"img{k}"}
            for k in ids for context in ("original", "text", "blank")]


def _mmbench(root: Path, **edits: object) -> Path:
    from benchmark_releases import mmbench_tsv

    path = mmbench_tsv(root)
    text = path.read_text()
    if edits.get("bom_crlf"):
        path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    if edits.get("latin1"):
        path.write_bytes(text.replace("color", "colour é").encode("latin-1"))
    if edits.get("garbled"):
        path.write_bytes(bytes(range(256)) * 8)
    if edits.get("duplicate"):
        lines = text.splitlines()
        path.write_text("\n".join([*lines, lines[1].replace("What is the color", "Which colour")]) + "\n")
    if edits.get("one_option"):
        lines = text.splitlines()
        cells = lines[1].split("\t")
        cells[4:7] = ["", "", ""]
        path.write_text("\n".join([lines[0], "\t".join(cells)]) + "\n")
    return path


def _mmstar(root: Path, *, truncate: bool = False, answer: str | None = None,
            image_bytes: bytes | None = None) -> Path:
    import pyarrow.parquet as pq
    from benchmark_releases import mmstar

    path = mmstar(root)
    if image_bytes is not None:  # row 2's Hub image cell holds these bytes under a .png path
        import pyarrow as pa

        table = pq.read_table(path)
        cells = table.column("image").to_pylist()
        cells[1] = {"bytes": image_bytes, "path": "images/1.png"}
        table = table.set_column(table.schema.get_field_index("image"), "image",
                                 pa.array(cells, type=table.schema.field("image").type))
        pq.write_table(table, path)
    if answer is not None:
        table = pq.read_table(path)
        table = table.set_column(table.schema.get_field_index("answer"), "answer",
                                 __import__("pyarrow").array([answer, "B"]))
        pq.write_table(table, path)
    if truncate:
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    return path


def _bomb_png(path: Path, side: int = 20000) -> Path:
    """A 1-bit side×side PNG of zeros, written row by row (a few kB on disk, 400 M pixels decoded)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    packer = zlib.compressobj(9)
    row = b"\x00" * (1 + (side + 7) // 8)
    body = b"".join(packer.compress(row) for _ in range(side)) + packer.flush()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0))
                     + chunk(b"IDAT", body) + chunk(b"IEND", b""))
    return path


def _case_items_csv(root: Path):
    f = _mmbench(root)
    cmd = ["data", "items", "--format", "mmbench", str(f), "--images", "imgs"]
    return [*cmd, "--out", "out/items.csv"], "error", ".jsonl or .parquet", [*cmd, "--out", "out/items.jsonl"]


def _reader(kind: str, detail: str | None, expected: str = "error", **edits: object):
    def build(root: Path):
        f = _mmbench(root, **edits) if kind == "mmbench" else _mmstar(root, **edits)  # type: ignore[arg-type]
        return (["data", "items", "--format", kind, str(f), "--images", "imgs", "--out", "out/items.jsonl"],
                expected, detail or (f.name if expected == "error" else "2 items kept"), None)
    return build


def _report(rows: list[dict], detail: str, expected: str = "error", *, parquet: bool = False):
    def build(root: Path):
        if parquet:  # JSON has no NaN or inf: a Parquet file can hold them
            import pyarrow as pa
            import pyarrow.parquet as pq

            f = root / "margins.parquet"
            pq.write_table(pa.Table.from_pylist(rows), f)
        else:
            f = _jsonl(root / "margins.jsonl", rows)
        return ["vca", "report", str(f), "--resamples", "10", "--no-plot", "--out", "out/report"], expected, detail, \
            None
    return build


def _compare(*runs: list[dict], expected: str = "ok", detail: str = ""):
    def build(root: Path):
        paths = [str(_jsonl(root / f"run{k}" / "margins.jsonl", rows)) for k, rows in enumerate(runs)]
        return ["compare", "vca", *paths, "--resamples", "10", "--permutations", "10", "--no-plot",
                "--out", "out/compare"], expected, detail, None
    return build


def _out_occupied(command: str):
    def build(root: Path):
        margins = str(_jsonl(root / "margins.jsonl", _yes_no_rows("m", range(8))))
        (root / "out").write_text("a file where the folder must go\n")
        tail = {"report": ["vca", "report", margins, "--resamples", "10", "--no-plot"],
                "compare": ["compare", "vca", margins, margins, "--resamples", "10", "--no-plot"]}[command]
        return [*tail, "--out", "out/result"], "error", "out", None
    return build


def _circular_rows(rotations: dict[str, list[int]]) -> list[dict]:
    """Letter rows of CircularEval groups: question → the rotations it has (4 options each, always right)."""
    return [{"model": "m", "dataset": "mmbench", "item_id": f"{q}~r{j}", "context": context, "interface": "letter",
             "margin": 0.0, "label": "ABCD"[(4 - j) % 4], "circular_id": q, "rotation": j,
             "logp_options": [-1.0 if k == (4 - j) % 4 else -3.0 for k in range(4)]}
            for q, js in rotations.items() for j in js for context in ("original", "text", "blank")]


def _items_jsonl(root: Path, name: str, rows: list[dict]) -> Path:
    return _jsonl(root / name, [{"image": "x.png", "question": "Which colour is the square?", **row} for row in rows])


def _mcq_under_yesno(root: Path):
    items = _items_jsonl(root, "items.jsonl", [{"item_id": "a", "options": ["red", "green"], "label": "A"},
                                               {"item_id": "b", "options": ["red", "green"], "label": "B"}])
    (root / "images").mkdir()
    return (["vca", "score", "--model", "ref:tiny-qwen2-vl", "--benchmark", str(items), "--images", "images",
             "--out", "out/run"], "error", "--interface letter", None)


def _compare_letters(edit: str, detail: str):
    """Two letter runs of the same ids; run 1's item q1 differs in ``edit``: its gold letter, its number of
    options or (with each run's ITEMS file named by its manifest) the order of its options."""
    def build(root: Path):
        paths = []
        for k in range(2):
            rows = _letter_rows(4, model=f"m{k}")
            options = {f"q{i}": ["red", "green", "blue", "pink"] for i in range(4)}
            if k == 1:
                for row in rows:
                    if row["item_id"] == "q1" and edit == "label":
                        row["label"] = "B"
                    if row["item_id"] == "q1" and edit == "count":
                        row["logp_options"] = [-1.0, -2.0, -2.0]
                options["q1"] = ["green", "red", "blue", "pink"] if edit == "order" else options["q1"]
            folder = root / f"run{k}"
            items = _items_jsonl(folder, "items.jsonl", [{"item_id": i, "dataset": "mmstar", "options": o,
                                                          "label": "A"} for i, o in options.items()])
            (folder / "manifest.json").write_text(json.dumps({"arguments": {"benchmark": str(items)}}))
            paths.append(str(_jsonl(folder / "margins.jsonl", rows)))
        return ["compare", "vca", *paths, "--resamples", "10", "--permutations", "10", "--no-plot",
                "--out", "out/compare"], "error", detail, None
    return build


def _compare_cycles_overflow(root: Path):
    (root / "cycles.jsonl").write_text("".join(json.dumps(
        {"cycle_id": f"c{k}", "family": "f", "image_1": f"u{2 * k - 1}", "caption_1": f"v{2 * k - 1}",
         "image_2": f"u{2 * k}", "caption_2": f"v{2 * k}"}) + "\n" for k in (1, 2)))
    for name, big in (("a", 1.7e308), ("b", 1.0)):
        (root / f"{name}.csv").write_text("image_id,caption_id,score\n" + "".join(
            f"u{i},v{j},{(big if i == j else -big) if i < 3 else 0.5 if i == j else 0.25}\n"
            for i, j in ((1, 1), (2, 2), (1, 2), (2, 1), (3, 3), (4, 4), (3, 4), (4, 3))))
    return (["compare", "cycles", "--cycles", "cycles.jsonl", "--scores", "a=a.csv", "--scores", "b=b.csv",
             "--min-cycles", "1", "--resamples", "10", "--permutations", "10", "--no-plot", "--out", "out/compare"],
            "error", "a.csv, record c1, field 'score': the cycle contrast of 1 block(s) overflows float64", None)


def _wording_flipped(root: Path):
    rows = [{"item_id": f"w{k}-{form}", "label": "yes" if k % 2 else "no", "wording": form, "source_id": f"w{k}"}
            for k in range(4) for form in ("canonical", "synonym")]
    items = _items_jsonl(root, "wording.jsonl", rows)
    margins = [{"model": "m", "dataset": "vsr", "item_id": r["item_id"], "context": context, "margin": 1.0,
                "label": ("no" if r["label"] == "yes" else "yes") if r["item_id"] == "w2-synonym" else r["label"]}
               for r in rows for context in ("original", "text", "blank")]
    run = _jsonl(root / "run" / "margins.jsonl", margins)
    return (["vca", "wording", str(run), "--items", str(items), "--out", "out/wording"], "error",
            "record w2-synonym, field 'label'", None)


def _vsr_no_relation(root: Path):
    row = {"image": "000000000001.jpg", "caption": "The cat is left of the dog.", "label": 1, "relation": "left of"}
    split = _jsonl(root / "vsr.jsonl", [row])
    return (["data", "vsr", str(split), "--relations", "", "--out", "out/items.jsonl"], "error",
            "--relations takes a comma-separated list of this split's relations: left of",
            ["data", "vsr", str(split), "--relations", "left of", "--out", "out/items.jsonl"])


def _bomb_score(root: Path):
    _bomb_png(root / "images" / "bomb.png")
    items = _jsonl(root / "items.jsonl", [{"item_id": "a", "image": "bomb.png", "question": "Is it red?",
                                           "label": "yes"}])
    return (["vca", "score", "--model", "ref:scene-vqa-grounded", "--benchmark", str(items), "--images", "images",
             "--strict", "--out", "out/run"], "error", "image too large to decode safely", None)


NEW_CASES = {
    "data-items-csv-out-list-column": _case_items_csv,
    "mmbench-garbled-tsv": _reader("mmbench", None, garbled=True),
    "mmbench-bom-crlf": _reader("mmbench", None, "ok", bom_crlf=True),
    "mmbench-latin-1": _reader("mmbench", None, latin1=True),
    "mmbench-duplicate-index-other-content": _reader("mmbench", "repeats row 1", duplicate=True),
    "mmbench-one-option": _reader("mmbench", None, one_option=True),
    "mmstar-truncated-parquet": _reader("mmstar", None, truncate=True),
    "mmstar-letter-outside-options": _reader("mmstar", "answer", answer="E"),
    "letter-27-options": _report(_letter_rows(27), "field 'logp_options': 27 log-probabilities"),
    "letter-1-option": _report(_letter_rows(1), "field 'logp_options'"),
    "letter-label-outside-options": _report(_letter_rows(4, label="F"), "field 'label'"),
    "letter-nan-logp": _report(_letter_rows(4, logp=float("nan")), "field 'logp_options'", parquet=True),
    "letter-inf-logp": _report(_letter_rows(4, logp=float("-inf")), "field 'logp_options'", parquet=True),
    "letter-nan-logp-jsonl": _report(_letter_rows(4, logp=float("nan")), "invalid JSON"),
    "compare-disjoint": _compare(_yes_no_rows("a", range(0, 8)), _yes_no_rows("b", range(8, 16)),
                                 expected="error", detail="nothing was compared"),
    "compare-partial": _compare(_yes_no_rows("a", range(0, 12)), _yes_no_rows("b", range(6, 18), flip=True)),
    "compare-three-runs": _compare(_yes_no_rows("a", range(12)), _yes_no_rows("b", range(12), flip=True),
                                   _yes_no_rows("c", range(12))),
    "compare-another-benchmark": _compare(_yes_no_rows("a", range(8), dataset="mmstar"),
                                          _yes_no_rows("b", range(8), dataset="pope"),
                                          expected="error", detail="nothing was compared"),
    "compare-same-id-other-label": _compare(_yes_no_rows("a", range(8)),
                                            [{**r, "label": "no"} if r["item_id"] == "q1" else r
                                             for r in _yes_no_rows("b", range(8))],
                                            expected="error", detail="q1"),
    "report-out-occupied": _out_occupied("report"),
    "compare-out-occupied": _out_occupied("compare"),
    "score-decompression-bomb-png": _bomb_score,
    # the silent cases: each was accepted without a word before
    "mmstar-image-cell-not-an-image": _reader("mmstar", "record row 2, field 'image': the image cell's 22 bytes "
                                              "are not an image", image_bytes=b"<html>not found</html>"),
    "mmstar-image-cell-empty": _reader("mmstar", "record row 2, field 'image': the image cell holds no bytes",
                                       image_bytes=b""),
    "circular-rotation-missing": _report(
        _circular_rows({"g1": [0, 1, 2, 3], "g2": [0, 1, 3], "g3": [1, 2, 3]}),
        "CircularEval: 1 question(s) lack some of their rotations and count over those they have (as VLMEvalKit "
        "counts them), so 'every' is fewer rotations there: g2 (3 of 4)", "ok"),
    "score-mcq-items-under-yesno": _mcq_under_yesno,
    "margins-edge-of-float64": _report([{**r, "margin": 1.7e308 if r["item_id"] == "q1" else r["margin"]}
                                        for r in _yes_no_rows("m", range(8))],
                                       "record row 4, field 'margin': 1.7e+308 is beyond ±1e+100"),
    "letter-logp-edge-of-float64": _report(_letter_rows(4, logp=-1.7e308),
                                           "record row 1, field 'logp_options': -1.7e+308 is beyond ±1e+100"),
    "compare-cycles-edge-of-float64": _compare_cycles_overflow,
    "compare-letters-other-gold-letter": _compare_letters("label", "record q1, field 'label'"),
    "compare-letters-other-option-count": _compare_letters("count", "record q1, field 'logp_options': the item's "
                                                                    "number of options differs"),
    "compare-letters-other-option-order": _compare_letters("order", "record q1, field 'options': the item's "
                                                                    "options (texts, in order) differs"),
    "wording-labels-flipped-against-items": _wording_flipped,
    "vsr-relations-empty": _vsr_no_relation,
}


@pytest.mark.parametrize("case", sorted(NEW_CASES))
def test_new_commands_on_hostile_input(case, cli, files_under, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "80")
    args, expected, detail, corrected = NEW_CASES[case](tmp_path)
    code, out, err = cli(*args)
    assert "Traceback" not in out + err and "Warning:" not in err and "warnings.warn" not in err, err
    if expected == "ok":
        assert code == 0, (code, out, err)
        assert detail in " ".join((out + err).split()), out + err  # the notice the case needs, in the console
        return
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: "), (code, out, err)
    assert detail in lines[0], lines[0]
    out_dir = tmp_path / "out"
    assert not out_dir.is_dir() or files_under(out_dir) == []
    if corrected is not None:
        code, out, err = cli(*corrected)
        assert code == 0, (code, out, err)


def test_the_corpus_counts_its_new_cases() -> None:
    assert len(NEW_CASES) == 34


def test_an_incomplete_circular_group_is_listed_in_the_json(cli, tmp_path, monkeypatch) -> None:
    """CircularEval counts a question over the rotations it has (as VLMEvalKit does) and vca.json lists each
    question short of its K rotations, and each dropped one (no rotation-0 row), by id."""
    monkeypatch.chdir(tmp_path)
    margins = _jsonl(tmp_path / "margins.jsonl", _circular_rows({"g1": [0, 1, 2, 3], "g2": [0, 3], "g3": [1, 2]}))
    code, _, err = cli("vca", "report", str(margins), "--resamples", "10", "--no-plot", "--out", "out")
    assert code == 0, err
    circular = json.loads((tmp_path / "out" / "vca.json").read_text())["runs"][0]["benchmark"]["circular"]
    assert (circular["n_items"], circular["n_incomplete"], circular["n_dropped"]) == (2, 1, 1)
    assert circular["incomplete"] == [{"circular_id": "g2", "rotations": [0, 3], "of": 4}]
    assert circular["dropped"] == ["g3"]

