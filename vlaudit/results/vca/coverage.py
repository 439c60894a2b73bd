"""Scoring coverage: how many of the records a run asked for were scored, per dataset, context and interface.

A run's numbers are computed on the records it scored; when most were lost (the wrong ``--images`` folder, a
corrupt copy, prompts longer than the model's context) those numbers describe almost nothing. Every VCA result
record carries its coverage so that such a run cannot look like a result (``vca score``'s ``summary.json``,
``vca report``'s ``vca.json``, ``headline.csv``, the console headline and the HTML report):

* ``asked`` — the records the run asked for: item × context × interface;
* ``not_applicable`` — records whose context cannot be built for the item by design (no boxes for
  ``rele``/``irre``, no mismatch donor, a text-only item under an image context): listed in
  ``failures.jsonl`` as ``skipped`` and shown, but they do not lower coverage;
* ``failed`` — records that should have been scored and were not (image missing, corrupt or outside
  ``--images``; prompt too long), counted by reason in ``failed_by_reason``;
* ``coverage = scored / (asked − not_applicable)`` (None when nothing applicable was asked), and ``lowest``:
  the smallest coverage over the cells. A run whose ``lowest`` is below the threshold
  (:data:`vlaudit.settings.MIN_COVERAGE`, ``--min-coverage``) is not a result: ``vca score`` and ``vca report``
  exit with :data:`vlaudit.errors.EXIT_CHECK_FAILED` after writing their files (which say so).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class CoverageCell:
    """One (dataset, context, interface) cell of a scoring run: records asked, scored, failed (by reason) and
    not applicable; ``coverage = scored / (asked − not_applicable)`` (None when that is 0)."""

    dataset: str
    context: str
    interface: str
    asked: int
    scored: int
    failed: int
    not_applicable: int
    coverage: float | None
    failed_by_reason: dict[str, int]


@dataclass(frozen=True)
class ScoringCoverage:
    """A scoring run's coverage (or the part of it one report run reads): the totals over ``cells``, the
    total ``coverage`` and the ``lowest`` coverage of any cell (the figure the threshold is applied to)."""

    asked: int
    scored: int
    failed: int
    not_applicable: int
    coverage: float | None
    lowest: float | None
    failed_by_reason: dict[str, int]
    cells: list[CoverageCell]

    def below(self, min_coverage: float) -> bool:
        """Whether the lowest cell falls below ``min_coverage`` (a run that asked for nothing applicable has no
        coverage and is not below)."""
        return self.lowest is not None and self.lowest < min_coverage

    def shortfall(self, name: str, min_coverage: float) -> str:
        """The one-line verdict on a run below the threshold, with the way out."""
        images = any("image" in reason for reason in self.failed_by_reason)
        fix = ("give --images the folder the items' image paths are relative to" if images
               else "fix what failed")
        return (f"{name}: {self.line()} — below --min-coverage {100 * min_coverage:g}%, so its numbers are not a "
                f"result; {fix} (the run's failures.jsonl lists every record not scored) and rescore, or pass "
                "--min-coverage 0 to accept the run as it is")

    def line(self) -> str:
        """``6 of 17558 records scored (0.0%); 17552 failed (image file not found: 17552)`` (+ the lowest cell
        when it differs, + the records not applicable when there are any)."""
        applicable = self.asked - self.not_applicable
        text = f"{self.scored} of {applicable} records scored ({_pct(self.coverage)})"
        if self.failed:
            reasons = ", ".join(f"{k}: {n}" for k, n in sorted(self.failed_by_reason.items()))
            text += f"; {self.failed} failed ({reasons})"
        low = lowest_cell(self)
        if low is not None and low.coverage != self.coverage:
            text += f"; lowest {low.context}/{low.interface}" + (f" of {low.dataset}" if low.dataset else "") + \
                f": {low.scored} of {low.asked - low.not_applicable} ({_pct(low.coverage)})"
        if self.not_applicable:
            text += f"; {self.not_applicable} not applicable (context unavailable, not counted)"
        return text


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _rate(scored: int, applicable: int) -> float | None:
    return scored / applicable if applicable > 0 else None


def cell_of(dataset: str, context: str, interface: str, statuses: Iterable[tuple[str, str | None]]) -> CoverageCell:
    """The cell of the records whose (status, reason) are ``statuses``: ``ok``, ``failed`` (reason: the fixed
    prefix of its error) or ``skipped`` (not applicable)."""
    scored = failed = skipped = 0
    by_reason: dict[str, int] = {}
    for status, reason in statuses:
        if status == "ok":
            scored += 1
        elif status == "skipped":
            skipped += 1
        else:
            failed += 1
            key = reason or "failed"
            by_reason[key] = by_reason.get(key, 0) + 1
    asked = scored + failed + skipped
    return CoverageCell(dataset=dataset, context=context, interface=interface, asked=asked, scored=scored,
                        failed=failed, not_applicable=skipped, coverage=_rate(scored, asked - skipped),
                        failed_by_reason=dict(sorted(by_reason.items())))


def coverage_of(cells: Sequence[CoverageCell]) -> ScoringCoverage:
    """The totals over ``cells`` (in the order given) and their lowest coverage."""
    by_reason: dict[str, int] = {}
    for cell in cells:
        for reason, n in cell.failed_by_reason.items():
            by_reason[reason] = by_reason.get(reason, 0) + n
    asked, scored = sum(c.asked for c in cells), sum(c.scored for c in cells)
    skipped = sum(c.not_applicable for c in cells)
    rates = [c.coverage for c in cells if c.coverage is not None]
    return ScoringCoverage(asked=asked, scored=scored, failed=sum(c.failed for c in cells), not_applicable=skipped,
                           coverage=_rate(scored, asked - skipped), lowest=min(rates) if rates else None,
                           failed_by_reason=dict(sorted(by_reason.items())), cells=list(cells))


def lowest_cell(coverage: ScoringCoverage) -> CoverageCell | None:
    """The first cell with the lowest coverage (None without an applicable cell)."""
    cells = [c for c in coverage.cells if c.coverage is not None]
    return min(cells, key=lambda c: c.coverage or 0.0) if cells else None


def part_of(coverage: ScoringCoverage, *, dataset: str, interface: str) -> ScoringCoverage:
    """The cells of one report run (its dataset and interface), totalled."""
    return coverage_of([c for c in coverage.cells if c.dataset == dataset and c.interface == interface])
