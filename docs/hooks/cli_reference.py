"""MkDocs hook: pages filled from the live code, so nothing hand-copied can drift.

* ``<!-- cli-reference -->`` → the CLI reference rendered from the command tree;
* ``<!-- docstring: MODULE -->`` → that module's docstring (the documented schemas live there), verbatim.
"""

from __future__ import annotations

import importlib
import re

CLI_MARKER = "<!-- cli-reference -->"
DOCSTRING = re.compile(r"<!-- docstring: ([\w.]+) -->")


def _module_docstring(match: re.Match[str]) -> str:
    doc = (importlib.import_module(match.group(1)).__doc__ or "").strip()
    if not doc:
        raise ValueError(f"module {match.group(1)} has no docstring to include")
    return f"```text\n{doc}\n```"


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ANN001 (mkdocs hook signature)
    if CLI_MARKER in markdown:
        from vlaudit.commands._introspect import render_markdown

        markdown = markdown.replace(CLI_MARKER, render_markdown())
    return DOCSTRING.sub(_module_docstring, markdown)
