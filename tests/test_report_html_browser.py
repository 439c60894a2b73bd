"""The report in a real browser: headless Chromium (Debian's ``chromium``) driven by playwright's Python API.

Checks that the page loads with no console error and no network request, that every ``<img>`` decodes
(naturalWidth > 0), that a caption containing ``<script>`` renders as text and runs nothing, and takes a
full-page screenshot. ``.ci/run`` installs chromium; without it (or without playwright) only this test skips.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from vlaudit.report.html import write_report


@pytest.mark.slow  # launches headless chromium
def test_report_renders_in_headless_chromium(build_run_folder, chromium, hostile, tmp_path: Path) -> None:
    executable, flags = chromium
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the dev extra)")
    report = write_report(build_run_folder(tmp_path / "run"))
    problems: list[str] = []
    requests: list[str] = []
    with sync_api.sync_playwright() as pw:
        # launch() gives every run a fresh temporary --user-data-dir
        browser = pw.chromium.launch(executable_path=executable, headless=True, args=flags)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
                    if m.type in ("error", "warning") else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(report.as_uri(), wait_until="load")
            images = page.evaluate("Array.from(document.images).map(i => [i.alt, i.complete, i.naturalWidth])")
            body = page.inner_text("body")
            pwned = page.evaluate("window.__pwned === undefined ? null : window.__pwned")
            scripts = page.evaluate("document.scripts.length")
            shot = tmp_path / "report.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert problems == []
    assert [url for url in requests if not url.startswith(("file:", "data:"))] == []
    assert len(images) >= 10
    assert [alt for alt, complete, width in images if not complete or width <= 0] == []
    assert hostile in body  # shown as text, tag and all
    assert pwned is None and scripts == 0
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
