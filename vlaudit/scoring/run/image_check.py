"""The cheap check of a run's inputs before any model loads: every image file exists and decodes.

A wrong ``--images`` folder used to surface only after the model had loaded (minutes for a 7B model), as a
run of 6 scored records among 17,558 that exited 0. :func:`check_run_images` reads every image the items
name once (a JPEG at reduced scale: :func:`~vlaudit.sources.images.check_image`) and refuses, in one line and
before the model loads,

* a run where no item's image can be used — the same message the runner gives (``no record could be
  scored: …``), with the records listed in ``failures.jsonl``;
* a run where fewer items than ``min_coverage`` can be used (the records of an item whose image fails all
  fail: :mod:`vlaudit.scoring.run.plan`), naming the count, the reasons, the first item and the way out;
* with ``strict``, any such item (as the runner's ``--strict`` does).

What only the model or the rendered contexts decide (a prompt too long, a context that cannot be built) is
counted by the run itself (:mod:`vlaudit.results.vca.coverage`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from vlaudit.errors import InputError
from vlaudit.scoring.run.plan import Record
from vlaudit.scoring.run.runner import list_problems, refuse_empty_run
from vlaudit.sources.images import check_image
from vlaudit.sources.items import BenchmarkItem


def unusable_items(items: Sequence[BenchmarkItem], images_dir: str | Path) -> dict[str, str]:
    """item_id → why its image (the first failing one of several) cannot be used; each file is read once."""
    verdicts: dict[str, str | None] = {}
    errors: dict[str, str] = {}
    for item in items:
        for relative in item.images:
            if relative not in verdicts:
                verdicts[relative] = check_image(images_dir, relative)
            error = verdicts[relative]
            if error is not None:
                errors[item.item_id] = error
                break
    return errors


def check_run_images(items: Sequence[BenchmarkItem], images_dir: str | Path, *, contexts: Sequence[str],
                     interfaces: Sequence[str], model: str, out: str | Path, strict: bool = False,
                     min_coverage: float | None = None) -> None:
    """Refuse the run (see the module docstring) before any model loads; return when its images allow it."""
    errors = unusable_items(items, images_dir)
    if not errors:
        return
    bad = [item for item in items if item.item_id in errors]
    records = [Record(item, context, interface, status="failed", error=errors[item.item_id])
               for item in bad for context in contexts for interface in interfaces]
    if strict:
        first = bad[0]
        raise InputError(f"{errors[first.item_id]} ({len(records)} failed record(s); --strict)",
                         record=first.item_id, field="image")
    if len(bad) == len(items):
        refuse_empty_run(records, model, Path(out), images_dir)
    usable = 1 - len(bad) / len(items)
    if min_coverage is not None and usable < min_coverage:
        by_reason: dict[str, int] = {}
        for error in errors.values():
            by_reason[error.split(":")[0]] = by_reason.get(error.split(":")[0], 0) + 1
        reasons = ", ".join(f"{k}: {n}" for k, n in sorted(by_reason.items()))
        first = bad[0]
        where = list_problems(records, model, Path(out))
        raise InputError(
            f"the images of {len(bad)} of {len(items)} items cannot be used ({reasons}; "
            f"first: {first.item_id}: {errors[first.item_id]}), so at most {100 * usable:.1f}% of the records "
            f"could be scored, below --min-coverage {100 * min_coverage:g}%: give --images the folder the items' "
            f"image paths are relative to, or lower --min-coverage to score the rest; {where}",
            path=images_dir, field="--images")
