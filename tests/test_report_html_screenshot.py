"""The report as a reader sees it: a multiple-choice audit (the MMStar sample scored by the planted
``ref:scene-mcq-mixture``) and a comparison rendered by headless Chromium, screenshotted, and checked for what
the console prints: the MCQ gallery's question, options, log p(letter) per context and verdict, the credit bar
and tables in percent, the warning of a run that gave no answer, the comparison's files and pairwise plot.

Chromium (Debian's ``chromium``, the conftest's ``chromium`` fixture) and playwright as in
``test_report_html_browser.py``; without them only this module skips. The screenshots are written under the
test's temporary folder (``report-mcq.png``, ``report-pope.png``, ``report-compare.png``) for a person to
look at.
"""

from __future__ import annotations

from pathlib import Path

import benchmark_releases
import pytest

import vlaudit
from vlaudit.report.html import write_report

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "docs" / "samples" / "mmstar-sample.parquet"
def _letter_run(root: Path, model: str) -> Path:
    """The MMStar sample scored by a planted multiple-choice model through the letter interface."""
    items = root / "mmstar.jsonl"
    if not items.is_file():
        vlaudit.build_benchmark_items("mmstar", SAMPLE, out=items, images=root / "mmstar-images")
    run = root / model.removeprefix("ref:")
    vlaudit.score_margins(vlaudit.ScoreSpec.of(model=model, benchmark=items, images=root / "mmstar-images",
                                               out=run, interfaces=("letter",),
                                               contexts=("original", "text", "blank")))
    return run


def _render(chromium: tuple[str, list[str]], html: Path, shot: Path
            ) -> tuple[str, list[str], list[tuple[str, bool, int]]]:
    """(visible text, console problems, images as (alt, complete, natural width)) of ``html`` in ``chromium``
    (the conftest fixture); ``shot`` the full-page screenshot."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the dev extra)")
    problems: list[str] = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium[0], headless=True, args=chromium[1])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
                    if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.goto(html.as_uri(), wait_until="load")
            text = page.inner_text("body")
            images = page.evaluate("Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth])")
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return text, problems, [tuple(i) for i in images]


@pytest.fixture(scope="module")
def mcq_page(chromium, tmp_path_factory: pytest.TempPathFactory
             ) -> tuple[str, list[str], list[tuple[str, bool, int]]]:
    """The report of a ``vca report`` folder inside a letter run, rendered (text, problems, images)."""
    root = tmp_path_factory.mktemp("mcq")
    run = _letter_run(root, "ref:scene-mcq-mixture")
    vlaudit.vca_report(run / "margins.parquet", n_resamples=200).save(run / "report")
    return _render(chromium, write_report(run / "report"), root / "report-mcq.png")


@pytest.fixture(scope="module")
def pope_page(chromium, tmp_path_factory: pytest.TempPathFactory
              ) -> tuple[str, list[str], list[tuple[str, bool, int]]]:
    """A POPE release (its published schema) scored by ``ref:scene-vqa-grounded``, which was built for scene
    statements, not POPE's questions: every margin is 0. The report of its run folder, rendered."""
    root = tmp_path_factory.mktemp("pope")
    vlaudit.build_benchmark_items("pope", benchmark_releases.pope(root), out=root / "pope.jsonl",
                                  images=root / "pope-images")
    run = root / "run"
    vlaudit.score_margins(vlaudit.ScoreSpec.of(model="ref:scene-vqa-grounded", benchmark=root / "pope.jsonl",
                                               images=root / "pope-images", out=run))
    vlaudit.vca_report(run / "margins.parquet", n_resamples=200).save(run / "report")
    return _render(chromium, write_report(run), root / "report-pope.png")


@pytest.mark.slow  # scores a small run and launches headless chromium
def test_the_mcq_gallery_shows_the_question_options_log_probs_and_verdict(mcq_page) -> None:
    text, problems, images = mcq_page
    assert problems == []
    assert [alt for alt, complete, width in images if not complete or width <= 0] == []
    assert "Where is the" in text and "relative to the" in text
    for option in ("A. left", "B. right", "C. above", "D. below"):
        assert option in text
    assert "option\toriginal\ttext\tblank" in text  # one log-prob column per context
    assert "-2.341" in text and "-0.341" in text  # the mechanism's log-softmax over four options
    assert "correct but uncredited: G_img = +0.000" in text and "gold · predicted" in text
    assert "margins not found" not in text and "Margin m = NLL(no) − NLL(yes)" not in text
    # the headline in percent, as the console prints it (50.0 = 12 of 24 correct, 33.3 = 8 credited)
    assert "50.0" in text and "33.3" in text


@pytest.mark.slow  # the benchmark tables the console prints are on the page too
def test_the_mmstar_table_appears(mcq_page) -> None:
    text, _, _ = mcq_page
    assert "Acc text" in text and "MG" in text and "29.2" in text  # MG = 50.0 − 20.8 (the tutorial's numbers)


@pytest.mark.slow
def test_the_pope_table_appears(pope_page) -> None:
    text, _, _ = pope_page
    # the tie rule answers yes to all 3 items (1 yes, 2 no): precision 33.3, recall 100.0, F1 50.0
    assert "F1" in text and "33.3" in text and "100.0" in text


@pytest.mark.slow  # scores a small run and launches headless chromium
def test_a_run_that_gave_no_answer_is_named_on_the_page(pope_page) -> None:
    text, problems, _ = pope_page
    assert problems == []
    assert "warning: ref:scene-vqa-grounded · pope · yesno: 3 of 3 items have margin m = 0 in every context" in text
    assert "`vlaudit models list` says which items it understands" in text


@pytest.mark.slow  # scores two small runs and launches headless chromium
def test_the_comparison_lists_its_files_and_draws_the_pairwise_plot(chromium, tmp_path: Path) -> None:
    mixture = _letter_run(tmp_path, "ref:scene-mcq-mixture")
    grounded = _letter_run(tmp_path, "ref:scene-mcq-grounded")
    vlaudit.compare_vca([mixture, grounded], out=tmp_path / "compare", n_resamples=200, n_permutations=200)
    text, problems, images = _render(chromium, write_report(tmp_path / "compare"), tmp_path / "report-compare.png")
    assert problems == []
    assert any(alt == "paired differences" and complete and width > 0 for alt, complete, width in images)
    assert "Paired differences A − B" in text
    assert "Files read" in text and mixture.name in text and grounded.name in text
    # percent and percentage points, as in the tables elsewhere: Acc 50.0 vs 100.0, A − B −50.0 [−70.8, −29.2]
    assert "100.0" in text and "-50.0" in text and "0.500" not in text
