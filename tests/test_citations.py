"""Section citations in vlaudit's docstrings point at sections the VCA paper has (§1–§19, 002_…)."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "vlaudit"
# "VCA §N", "VCA §N–§M", "(§N" after a VCA mention on the same line
VCA_SECTION = re.compile(r"VCA[^§\n]{0,40}§(\d+)")


def test_every_vca_section_cited_exists():
    bad = []
    for path in PACKAGE.rglob("*.py"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for match in VCA_SECTION.finditer(line):
                if not 1 <= int(match.group(1)) <= 19:
                    bad.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
    assert not bad, "\n".join(bad)


def test_contexts_cite_the_sections_that_define_them():
    text = (PACKAGE / "contexts" / "image_contexts.py").read_text(encoding="utf-8")
    assert "VCA §11, Table 10" in text  # Matched Context Construction
    assert "VCA §16" not in text  # §16 is held-out filtering; the mean-colour control is §18
    assert re.search(r"mean colour \(VCA §18", text)
