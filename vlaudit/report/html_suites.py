"""The report's "Compositionality suites" section: what ``vlaudit suite eval`` wrote (``suite.json``), read back
as :class:`~vlaudit.results.suites.SuiteResult`; nothing is recomputed.

Per suite run: the suite's official figures (value, n, coverage, tie rule, source), then per subset exact
CycleAcc with its cycle count and interval beside the marginal audit (TVs and signed-degree imbalance)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from vlaudit.report.html_page import Safe, esc, note, num, section, table
from vlaudit.results.suites import SuiteResult


def _run(path: Path, result: SuiteResult) -> list[Safe]:
    head = (f"<h3>{esc(result.suite)} — {esc(result.model)}</h3><p>{esc(result.title)}; file "
            f"<code>{esc(result.file)}</code>; records: "
            f"{esc(', '.join(f'{k} {v}' for k, v in result.counts.items()))}</p>")
    body = [Safe(head)]
    body += [note(text) for text in result.notes]
    body.append(table(["Official figure", "Value", "n", "Coverage", "Aggregation", "Tie rule", "Source"],
                      [[f.label, num(f.value), f.n, num(result.coverage(f)), f.aggregation, f.tie_rule, f.source]
                       for f in result.figures], numeric_from=1))
    audit = {cell.subset: cell for cell in result.audit}
    rows = []
    for cell in result.cycles:
        entry = audit.get(cell.subset)
        rows.append([cell.subset, cell.cell.n, cell.within, cell.across, num(cell.cell.cycle_acc, cell.cell.ci),
                     cell.cell.ties, num(None if entry is None else entry.tv_image),
                     num(None if entry is None else entry.tv_caption),
                     num(None if entry is None else entry.degree_imbalance)])
    body.append(table(["Subset", "Cycles", "Within items", "Across items", "CycleAcc", "Ties", "TV image",
                       "TV text", "Imbalance"], rows, numeric_from=1,
                      caption="Exact CycleAcc (½ for ties; an additive scorer gets exactly ½) beside the marginal "
                              "audit of the suite's positives and negatives (0 on an exact-cycle set)"))
    body += [note(text, "warn") for text in result.warnings]
    return body


def suites(found: Sequence[tuple[Path, SuiteResult]]) -> tuple[str, str, Safe] | None:
    """The section, or None when no ``suite.json`` was found."""
    if not found:
        return None
    body: list[Safe] = []
    for path, result in found:
        body += _run(path, result)
    return section("suites", "Compositionality suites", body,
                   lead="Each suite's own number, computed as its official code computes it, beside exact CycleAcc "
                        "over the cycles its items hold and how far its negatives are from exact cycles.")
