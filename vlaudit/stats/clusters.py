"""The resampling unit: which records a bootstrap or permutation test moves together (VCA §19).

A statistic over records that share an image, a factorial stem or an edit is not a mean of independent
draws: the bootstrap must resample whole clusters and the permutation test must flip whole clusters, else
intervals are too narrow and p-values too small. Every benchmark and builder declares its cluster in the
ITEMS table (``cluster`` holds the cluster's id, ``cluster_unit`` what a cluster is: ``stem``, ``edit``,
``image``, ...), ``vca score`` copies both into the margins, and the analyses take their clusters from there
(``--cluster COLUMN`` overrides). Relation groups (VCA §13) are kept whole inside their cluster
(:func:`nest_groups`): a group-level rate is carried by one record of the group.

With few clusters the percentile cluster bootstrap under-covers; the default expanded percentile interval
(:mod:`vlaudit.stats.bootstrap`) holds its coverage better but is still approximate:
:data:`~vlaudit.settings.MIN_CLUSTERS` is the documented minimum below which every output says so
(:func:`small_sample_warning`), with the coverage measured by ``benchmarks/cluster_coverage.py`` (see
docs/concepts/statistics.md). With at most :data:`~vlaudit.settings.NO_SIGNIFICANCE_CLUSTERS` clusters the
warning adds that no paired test can reach p ≤ 0.05 (an exact sign flip over k clusters has p ≥ 2/2^k).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from vlaudit.settings import MIN_CLUSTERS, NO_SIGNIFICANCE_CLUSTERS, SMALL_SAMPLE_COVERAGE

ITEM_UNIT = "item"
GROUP_UNIT = "relation group"


@dataclass(frozen=True)
class ResamplingUnit:
    """The clusters of a table's records: ``labels[i]`` is record i's cluster, ``unit`` names what a cluster
    is (``stem``, ``image``, ``item``, ...), ``source`` the column the labels came from."""

    labels: np.ndarray
    unit: str
    source: str

    @property
    def n_clusters(self) -> int:
        """The number of distinct clusters."""
        return int(np.unique(self.labels.astype(str)).size) if self.labels.size else 0

    @property
    def independent(self) -> bool:
        """Every cluster holds one record (items are independent: the exact item-level tests apply)."""
        return self.n_clusters == self.labels.size

    def subset(self, mask: np.ndarray) -> ResamplingUnit:
        """The unit of the records in ``mask``."""
        return ResamplingUnit(self.labels[mask], self.unit, self.source)

    def describe(self) -> str:
        """``"16 stem clusters"`` — what every printed interval and p-value names."""
        return cluster_phrase(self.n_clusters, self.unit)


def cluster_phrase(n_clusters: int, unit: str) -> str:
    """``"16 stem clusters"``, ``"1 item cluster"``: the unit and the count, as every output names them."""
    return f"{n_clusters} {unit} cluster{'' if n_clusters == 1 else 's'}"


def item_unit(item_ids: Sequence[object] | np.ndarray) -> ResamplingUnit:
    """Every record its own cluster."""
    ids = np.asarray(item_ids, dtype=object).astype(str)
    return ResamplingUnit(np.array([f"i:{i}" for i in ids], dtype=object), ITEM_UNIT, "item_id")


def labels_or_items(values: Sequence[object] | np.ndarray, item_ids: Sequence[object] | np.ndarray,
                    prefix: str) -> np.ndarray:
    """Cluster labels from a column, a record with no value (None/empty) its own cluster."""
    out = []
    for value, item in zip(np.asarray(values, dtype=object), np.asarray(item_ids, dtype=object), strict=True):
        missing = value is None or (isinstance(value, float) and np.isnan(value)) or str(value) == ""
        out.append(f"i:{item}" if missing else f"{prefix}:{value}")
    return np.array(out, dtype=object)


class _UnionFind:
    """Disjoint sets of labels; each set is named by its smallest label."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        while self.parent.setdefault(x, x) != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def nest_groups(labels: np.ndarray, groups: Sequence[object | None] | np.ndarray | None) -> np.ndarray:
    """Cluster labels in which every relation group lies inside one cluster: clusters that a group spans are
    merged (union-find; the merged cluster takes its smallest label), so a group is never split."""
    labels = np.asarray(labels, dtype=object).astype(str)
    if groups is None:
        return labels.astype(object)
    sets = _UnionFind()
    first: dict[str, str] = {}
    for label, group in zip(labels.tolist(), np.asarray(groups, dtype=object).tolist(), strict=True):
        sets.find(label)
        if group is not None:
            sets.union(label, first.setdefault(str(group), label))
    return np.array([sets.find(label) for label in labels.tolist()], dtype=object)


def linked_components(left: Sequence[object], right: Sequence[object]) -> np.ndarray:
    """Record i links nodes ``left[i]`` and ``right[i]`` (a cycle's two images); each record's label is its
    connected component, so records that share a node, directly or through others, share a label."""
    sets = _UnionFind()
    for a, b in zip(left, right, strict=True):
        sets.union(str(a), str(b))
    return np.array([sets.find(str(a)) for a in left], dtype=object)


def small_sample_warning(n_clusters: int, unit: str, where: str = "") -> str | None:
    """One line when ``n_clusters`` is below :data:`~vlaudit.settings.MIN_CLUSTERS` (None otherwise): the
    cluster bootstrap's intervals are then approximate (the measured coverage of the default expanded
    percentile interval is quoted); with at most :data:`~vlaudit.settings.NO_SIGNIFICANCE_CLUSTERS` clusters
    the line adds that no paired test can reach p ≤ 0.05."""
    if n_clusters >= MIN_CLUSTERS:
        return None
    measured = ", ".join(f"{k} clusters {100 * c:.0f}%" for k, c in SMALL_SAMPLE_COVERAGE)
    prefix = f"{where}: " if where else ""
    line = (f"{prefix}only {cluster_phrase(n_clusters, unit)} (< {MIN_CLUSTERS}): 95% bootstrap intervals "
            f"are approximate (expanded percentile, measured coverage: {measured}); read them as rough")
    if n_clusters <= NO_SIGNIFICANCE_CLUSTERS:
        floor = 2.0 / 2.0 ** max(n_clusters, 0) if n_clusters > 0 else 1.0
        line += (f"; with {n_clusters} cluster{'' if n_clusters == 1 else 's'} no paired test can reach "
                 f"p <= 0.05 (an exact sign flip's smallest p is 2/2^{n_clusters} = {min(floor, 1.0):.4g})")
    return line


def small_sample_cells(counts: Mapping[str, int], unit: str) -> list[str]:
    """One :func:`small_sample_warning` naming every cell (``{where: clusters}``) below
    :data:`~vlaudit.settings.MIN_CLUSTERS`, or none: a table of many cells warns once, not per row."""
    small = {where: k for where, k in counts.items() if k < MIN_CLUSTERS}
    if not small:
        return []
    if len(small) == 1:
        ((where, k),) = small.items()
        return [str(small_sample_warning(k, unit, where))]
    # each cell with its own count: the smallest one's count is not every cell's
    cells = ", ".join(f"{name} {k}" for name, k in small.items())
    measured = ", ".join(f"{k} clusters {100 * c:.0f}%" for k, c in SMALL_SAMPLE_COVERAGE)
    return [f"{len(small)} cell(s) have fewer than {MIN_CLUSTERS} {unit} clusters ({cells}): 95% bootstrap "
            f"intervals under-cover (measured: {measured}); read them as rough"]
