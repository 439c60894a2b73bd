"""The resampling unit of a margins run (VCA §19; :mod:`vlaudit.stats.clusters`).

By default the unit is what the items declare: the margins' ``cluster`` column (copied by ``vca score`` from
the ITEMS file: a factorial stem, an edit, an image) named by ``cluster_unit``; without one, the relation
group where the run has groups, else the item. ``--cluster COLUMN`` overrides it with any margins column
(``image`` is the source image file's sha256, ``item_id`` each item alone, ``group_id`` the relation group);
an item with no value in the column is its own cluster; an override finer than the declared unit is warned
about (:func:`override_warning`). Relation groups are always kept whole, and when
several runs are compared their clusters are merged until every run's clusters nest in them, so one
resample draws the same records for every model.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from vlaudit.errors import InputError
from vlaudit.sources.margins import MarginRun
from vlaudit.stats.clusters import GROUP_UNIT, ResamplingUnit, item_unit, labels_or_items, nest_groups

#: ``--cluster`` names that are not margins columns
CLUSTER_ALIASES = {"image": "source_sha256"}


def _declared(run: MarginRun) -> ResamplingUnit | None:
    values = run.extra.get("cluster")
    if values is None or all(v is None or str(v) == "" for v in values):
        return None
    units = sorted({str(u) for u in run.extra.get("cluster_unit", np.array([], dtype=object)) if u is not None})
    return ResamplingUnit(labels_or_items(values, run.item_ids, "c"), "/".join(units) or "cluster", "cluster")


def run_unit(run: MarginRun, column: str | None = None) -> ResamplingUnit:
    """The clusters of ``run``'s items (see the module docstring); relation groups kept whole."""
    unit: ResamplingUnit | None
    if column is None:
        unit = _declared(run)
        if unit is None and run.has_groups and run.group_ids is not None:
            unit = ResamplingUnit(labels_or_items(run.group_ids, run.item_ids, "g"), GROUP_UNIT, "group_id")
        unit = unit or item_unit(run.item_ids)
    elif column == "item_id":
        unit = item_unit(run.item_ids)
    elif column == "group_id":
        if not run.has_groups or run.group_ids is None:
            raise InputError(f"--cluster group_id: {run.name} has no relation groups", path=run.source,
                             field="cluster")
        unit = ResamplingUnit(labels_or_items(run.group_ids, run.item_ids, "g"), GROUP_UNIT, "group_id")
    else:
        name = CLUSTER_ALIASES.get(column, column)
        if name not in run.extra:
            known = sorted({"item_id", "group_id", *CLUSTER_ALIASES, *run.extra})
            raise InputError(f"--cluster {column}: {run.name} has no such column; it has {', '.join(known)}",
                             path=run.source, field="cluster")
        unit = ResamplingUnit(labels_or_items(run.extra[name], run.item_ids, "c"), column, name)
    return _keep_groups_whole(unit, run)


def override_warning(run: MarginRun, column: str | None) -> str | None:
    """One line when ``--cluster column`` is finer than the unit ``run``'s items declare (None otherwise): it
    splits declared clusters, so records the items declare dependent are resampled and permuted as
    independent — intervals too narrow, p-values too small (a stem-level p of 0.005 can read 1.5e-4)."""
    if column is None:
        return None
    declared, override = run_unit(run), run_unit(run, column)
    spans: dict[str, set[str]] = {}
    for d, o in zip(declared.labels.astype(str).tolist(), override.labels.astype(str).tolist(), strict=True):
        spans.setdefault(d, set()).add(o)
    split = sum(len(parts) > 1 for parts in spans.values())
    if not split:
        return None
    return (f"{run.name}: --cluster {column} ({override.describe()}) is finer than the unit the items declare "
            f"({declared.describe()}): it splits {split} of them, so records the items declare dependent are "
            "resampled and permuted as independent (intervals too narrow, p-values too small)")


#: VCA §19's resampling unit per benchmark (dataset name prefix): GSR intervals resample relation-pair ids,
#: VSR groups by sample id (each query alone); (paper unit, the ``--cluster`` column that follows the paper)
PAPER_UNITS = {"gsr": ("relation-pair ids", "group_id"), "vsr": ("sample ids (each query alone)", "item_id")}


def paper_departure(run: MarginRun, unit: ResamplingUnit, column: str | None = None) -> str | None:
    """One line when the default unit of a VSR or GSR-COCO run is not the one VCA §19 resamples (None where it
    is, where ``--cluster`` chose the unit, or for another benchmark). vlaudit's builders declare the image
    for both: questions about one image are not independent draws, so the image is the honest unit; the
    paper's unit is printed beside it, with the option that follows it."""
    if column is not None:
        return None
    name = run.dataset.lower()
    key = "gsr" if name.startswith("gsr") else "vsr" if name.startswith("vsr") and not run.has_groups else None
    if key is None:
        return None
    paper, option = PAPER_UNITS[key]
    if unit.source == option:
        return None
    return (f"{run.name}: VCA §19 resamples {paper}; vlaudit resamples {unit.describe()} (the unit the items "
            f"declare: questions about one image are not independent), so its intervals can be wider than the "
            f"paper's; --cluster {option} follows the paper")


def _keep_groups_whole(unit: ResamplingUnit, run: MarginRun) -> ResamplingUnit:
    if not run.has_groups or unit.source == "group_id":
        return unit
    merged = nest_groups(unit.labels, run.group_ids)
    return ResamplingUnit(merged, unit.unit if unit.source != "item_id" else GROUP_UNIT, unit.source)


def shared_unit(runs: Sequence[MarginRun], column: str | None = None) -> ResamplingUnit:
    """One unit for runs over the same items (aligned by item id): each run's clusters, merged until every
    run's clusters lie inside one shared cluster (the unit named by the first run).

    Each cluster is labelled by its smallest item id: the labels do not depend on the records' order or on
    how the input named the clusters, and with clusters of one item each the labels are the item ids, so
    the clustered comparison is bit for bit the item-level one."""
    units = [run_unit(run, column) for run in runs]
    labels = units[0].labels
    for other in units[1:]:
        labels = nest_groups(labels, other.labels)
    smallest: dict[str, str] = {}
    for label, item in zip(labels.tolist(), runs[0].item_ids.astype(str).tolist(), strict=True):
        smallest[label] = min(smallest.get(label, item), item)
    names = list(dict.fromkeys(u.unit for u in units))
    return ResamplingUnit(np.array([smallest[label] for label in labels.tolist()], dtype=object), "/".join(names),
                          units[0].source)
