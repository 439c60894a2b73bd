"""The cycle-paper experiments cite the paper's own sections, and the OE marker is quoted with its period.
With the paper under ../shared/seeds the section titles are checked against it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import vlaudit.api.experiments as experiments
from vlaudit.analysis.cycles.oe import MARKER

REPO = Path(__file__).resolve().parents[1]
PAPER = next(iter(sorted((REPO.parent / "shared" / "seeds").glob("001_*.txt"))), None) \
    if (REPO.parent / "shared" / "seeds").is_dir() else None
#: what api/experiments.py cites, and the words of the paper's section title there
CITES = {"diagnostics (§5.2)": ("5.2", "Exact-cycle diagnostics"), "rank sweep (§5.4)": ("5.4", "Rank sweeps"),
         "OE (§5.5, Table 4)": ("5.5", "outlier exposure"), "transfer (§5.6)": ("5.6", "Transfer alignment"),
         "synthetic controls (§5.1, Table 1)": ("5.1", "Sanity checks")}


def test_the_experiments_module_cites_the_papers_sections() -> None:
    doc = " ".join((experiments.__doc__ or "").split())
    for cite in CITES:
        assert cite in doc, cite
    assert "§6" not in doc and "§7" not in doc and "(§3)" not in doc
    assert "(cycle paper §5.1, Table 1)" in (experiments.synthetic_controls.__doc__ or "")


@pytest.mark.skipif(PAPER is None, reason="the cycle paper is not under ../shared/seeds")
def test_those_sections_are_the_papers() -> None:  # pragma: no cover - needs the paper's text
    assert PAPER is not None
    headings = dict(re.findall(r"^(\d\.\d) (.+)$", PAPER.read_text(encoding="utf-8"), flags=re.MULTILINE))
    for number, words in CITES.values():
        assert words.lower() in headings[number].lower(), (number, headings.get(number))


def test_every_quote_of_the_oe_marker_keeps_its_period() -> None:
    assert MARKER == "this is an out of distribution negative example. "
    quoted = 0
    for path in [*REPO.joinpath("docs").rglob("*.md"), *REPO.joinpath("vlaudit").rglob("*.py"), REPO / "README.md"]:
        text = path.read_text(encoding="utf-8")
        for match in re.finditer("out of distribution negative example", text):
            quoted += 1
            assert text[match.end()] == ".", f"{path}: {text[match.start() - 20:match.end() + 5]!r}"
    assert quoted >= 3
