"""The tutorials run end to end, every command of every ``bash`` block in the order the page
gives it: "Is MMStar credited to the image?", "Is model A better than B?" and "Is this decision
above the noise?". A command that needs the Hub or a GPU runs on a planted or tiny model instead: the swaps
are listed per page (whole arguments only), as are the inputs a page assumes the reader already has."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from pairs_files import pairs_rows

from vlaudit.commands._introspect import shell_commands

REPO = Path(__file__).resolve().parents[1]
TUTORIALS = REPO / "docs" / "tutorials"
SAMPLE = "docs/samples/mmstar-sample.parquet"


def _cycles_and_scores(root: Path) -> None:
    """compare.md's "Cycles" section starts from cycles already scored by two models (its own words)."""
    (root / "cycles.jsonl").write_text("".join(json.dumps(
        {"cycle_id": f"c{k}", "family": "left of" if k % 2 else "above", "image_1": f"u{2 * k}",
         "caption_1": f"v{2 * k}", "image_2": f"u{2 * k + 1}", "caption_2": f"v{2 * k + 1}"}) + "\n"
        for k in range(64)))
    for name, strength in (("clip", 0.9), ("siglip", 0.2)):
        lines = ["image_id,caption_id,score"]
        for k in range(64):
            bump = strength if k % 3 else -strength
            for i in (2 * k, 2 * k + 1):
                for j in (2 * k, 2 * k + 1):
                    lines.append(f"u{i},v{j},{(bump if i == j else 0.0) + 0.01 * ((i * 7 + j) % 5)}")
        (root / f"{name}_scores.csv").write_text("\n".join(lines) + "\n")


def _python_block(page: str, index: int = 0) -> str:
    """The ``index``-th ``python`` block of a tutorial page."""
    text = (TUTORIALS / page).read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)[index]


def _suite_files(root: Path) -> None:
    """compositionality-suites.md starts by running its first Python block: it draws the images and writes the
    suite file the commands read."""
    exec(compile(_python_block("compositionality-suites.md"), "compositionality-suites.md", "exec"), {})  # noqa: S102


def _my_pairs(root: Path) -> None:
    """audit-your-negatives.md: the page's pair table (its ``json`` block) and a bring-your-own captions file."""
    text = (TUTORIALS / "audit-your-negatives.md").read_text(encoding="utf-8")
    (root / "my_pairs.jsonl").write_text(re.findall(r"^```json\n(.*?)^```", text, re.S | re.M)[0])
    rows = pairs_rows()  # tests/pairs_files.py: the bring-your-own rows the build tests use
    (root / "my_captions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _hf_dataset_folder(root: Path) -> None:
    """hf-datasets.md starts by running its Python block: it saves the tiny VSR split with ``save_to_disk``."""
    exec(compile(_python_block("hf-datasets.md"), "hf-datasets.md", "exec"), {})  # noqa: S102


def _vsr_stand_ins(root: Path) -> None:
    """vca-qwen-vsr.md's offline rehearsal starts with its Python block: a VSR split in the real layout and the
    images it names."""
    exec(compile(_python_block("vca-qwen-vsr.md"), "vca-qwen-vsr.md", "exec"), {})  # noqa: S102


# page → (whole-argument swaps, inputs the page assumes, commands not run and why)
PAGES: dict[str, tuple[dict[str, str], Callable[[Path], None] | None, dict[str, str]]] = {
    "mmstar-credit.md": (
        {"mmstar.parquet": SAMPLE,  # the release's file → the sample in its published schema
         "hf-dataset:Lin-Chen/MMStar@val": SAMPLE,  # the Hub → the same rows (no network in the tests)
         "hf:Qwen/Qwen2.5-VL-7B-Instruct": "ref:tiny-qwen2-vl"},  # a 7B model on a GPU → the tiny Qwen2-VL
        None, {}),
    "compare.md": ({}, _cycles_and_scores, {}),
    # every command runs, the demo's dual-encoder block too (score-dual scores the demo's groups and leaves
    # its lone statements out with a counted warning)
    "decisions-above-the-noise.md": ({}, None, {}),
    "compositionality-suites.md": ({}, _suite_files, {
        "vlaudit suite eval aro-vg-relation": "the published ARO file, the Visual Genome images and the hf-clip: "
                                               "weights are not in the test environment (no network)"}),
    "audit-your-negatives.md": ({}, _my_pairs, {}),
    "hf-datasets.md": ({}, _hf_dataset_folder, {}),
    # the rehearsal block runs the tiny model itself; the real steps after it run on the same stand-ins
    "vca-qwen-vsr.md": ({"hf:Qwen/Qwen2.5-VL-7B-Instruct": "ref:tiny-qwen2-vl"}, _vsr_stand_ins, {}),
}


def page_commands(page: str) -> list[str]:
    """Every ``vlaudit`` command of the page's ``bash`` blocks, in page order."""
    text = (TUTORIALS / page).read_text(encoding="utf-8")
    return [line for block in re.findall(r"^```bash\n(.*?)^```", text, re.S | re.M) for line in shell_commands(block)]


def test_every_tutorial_command_is_run_or_skipped_for_a_reason() -> None:
    for page, (swaps, _, skipped) in PAGES.items():
        commands = page_commands(page)
        assert commands, page
        for prefix in skipped:
            assert any(line.startswith(prefix) for line in commands), (page, prefix)
        arguments = {arg for line in commands for arg in shlex.split(line, comments=True)}
        assert set(swaps) <= arguments, (page, set(swaps) - arguments)


@pytest.mark.slow
@pytest.mark.parametrize("page", list(PAGES))
def test_the_tutorial_runs_in_the_order_written(page: str, cli, tmp_path: Path, monkeypatch) -> None:
    swaps, given, skipped = PAGES[page]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    shutil.copytree(REPO / "docs" / "samples", tmp_path / "docs" / "samples")
    if given is not None:
        given(tmp_path)
    ran = 0
    for line in page_commands(page):
        if any(line.startswith(prefix) for prefix in skipped):
            continue
        args = [swaps.get(arg, arg) for arg in shlex.split(line, comments=True)[1:]]
        code, out, err = cli(*args)
        assert code == 0, f"{page}: `{line}` exited {code}:\n{out[-1500:]}\n{err[-1500:]}"
        assert "Traceback" not in err
        if args[:2] == ["vca", "score-dual"] and "runs/demo/vca/items.jsonl" in args:
            said = " ".join(out.split())
            assert "item(s) have no group_id and are left out" in said and "grouped item(s) are scored" in said
        ran += 1
    assert ran >= min(6, len(page_commands(page)))
    if page == "hf-datasets.md":  # the page's numbers: 4 items read back, 2 distinct pictures written once
        assert len((tmp_path / "items" / "vsr_tiny.jsonl").read_text().splitlines()) == 4
        assert len(list((tmp_path / "hf-images").glob("*.png"))) == 2
    if page == "vca-qwen-vsr.md":  # the rehearsal's: 8 items, 4 of them yes, 64 records scored
        items = [json.loads(line) for line in (tmp_path / "items" / "vsr_random.jsonl").read_text().splitlines()]
        assert len(items) == 8 and sum(item["label"] == "yes" for item in items) == 4
        assert (tmp_path / "reports" / "rehearsal" / "vca.json").is_file()


@pytest.mark.slow
def test_the_suites_tutorial_python_api_block_prints_what_it_says(tmp_path: Path, monkeypatch) -> None:
    """compositionality-suites.md's API block (it writes its own one-block suite): the bag-of-words encoder ties
    the cycle exactly (CycleAcc ½) and the strict figures count the tie wrong, as its comments say."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VLAUDIT_CACHE", str(tmp_path / "cache"))
    namespace: dict[str, object] = {}
    exec(compile(_python_block("compositionality-suites.md", 1), "compositionality-suites.md", "exec"), namespace)  # noqa: S102
    result = namespace["result"]
    assert result.cycle_cell("all").cell.cycle_acc == 0.5 and result.cycle_cell("all").cell.n == 1
    assert [f.value for f in result.figures] == [0.0, 0.0, 0.0]
