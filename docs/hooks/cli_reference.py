"""MkDocs hook: pages filled from the live code, so nothing hand-copied can drift.

* ``<!-- cli-reference -->`` → the CLI reference rendered from the command tree;
* ``<!-- output-schemas -->`` → every typed JSON result and table schema (:mod:`vlaudit.results.catalog`);
* ``<!-- docstring: MODULE -->`` → that module's docstring (the documented schemas live there), verbatim;
* ``<!-- guide: HEADING -->`` → the section under that heading in the guides (``docs/guide/*.md``; to the
  next heading of its level or above; ``guide-intro:`` stops at its first subheading), so a worked example is
  written once, in its guide, and its commands are checked there.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

CLI_MARKER = "<!-- cli-reference -->"
SCHEMAS_MARKER = "<!-- output-schemas -->"
DOCSTRING = re.compile(r"<!-- docstring: ([\w.]+) -->")
GUIDE_SECTION = re.compile(r"<!-- guide(-intro)?: (.+?) -->")
GUIDES = Path(__file__).resolve().parents[1] / "guide"


def _guide_section(match: re.Match[str]) -> str:
    heading = match.group(2).strip()
    for guide in sorted(GUIDES.glob("*.md")):
        section = _section(guide.read_text(encoding="utf-8").splitlines(), heading, bool(match.group(1)))
        if section is not None:
            return section
    raise ValueError(f"no guide in {GUIDES} has the heading {heading!r}")


def _section(lines: list[str], heading: str, intro_only: bool) -> str | None:
    """The lines under ``heading`` (None when absent); ``intro_only``: stop at the first subheading too."""
    in_fence = False
    start = level = None
    for index, line in enumerate(lines):
        if line.startswith("```"):
            in_fence = not in_fence
        if in_fence:
            continue
        hashes = len(line) - len(line.lstrip("#"))
        if start is None and hashes and line[hashes:].strip() == heading:
            start, level = index + 1, hashes
        elif start is not None and hashes and (intro_only or hashes <= level):  # type: ignore[operator]
            return "\n".join(lines[start:index]).strip()
    if start is None:
        return None
    return "\n".join(lines[start:]).strip()


def _module_docstring(match: re.Match[str]) -> str:
    doc = (importlib.import_module(match.group(1)).__doc__ or "").strip()
    if not doc:
        raise ValueError(f"module {match.group(1)} has no docstring to include")
    return f"```text\n{doc}\n```"


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ANN001 (mkdocs hook signature)
    if CLI_MARKER in markdown:
        from vlaudit.commands._introspect import render_markdown

        markdown = markdown.replace(CLI_MARKER, render_markdown())
    if SCHEMAS_MARKER in markdown:
        from vlaudit.results.catalog import render_markdown as render_schemas

        markdown = markdown.replace(SCHEMAS_MARKER, render_schemas())
    markdown = GUIDE_SECTION.sub(_guide_section, markdown)
    return DOCSTRING.sub(_module_docstring, markdown)
