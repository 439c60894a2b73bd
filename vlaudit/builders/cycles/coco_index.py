"""Per-image indexes of a COCO instances file used by the cycle families (cycle paper §4, §D.2).

* presence[i, c]: image i has at least one instance of category c (crowd and small ones included) — the
  object families' invalidity ("no annotation at all in the target image");
* per-(image, category) box extremes (:class:`~vlaudit.builders.cycles.rules.CategoryStats`) for the
  separable relation rules;
* every *valid* relation statement (image, subject, relation, object) over eligible instances.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vlaudit.builders.cycles.rules import CategoryStats, GeometryRules, category_stats, holds
from vlaudit.sources.coco import CocoInstances


@dataclass
class CocoIndex:
    instances: CocoInstances
    rules: GeometryRules
    n_categories: int
    group_key: np.ndarray  # sorted image * C + category of every (image, category) with an instance
    stats: CategoryStats
    presence: np.ndarray  # (n_images, C) bool
    group_table: np.ndarray  # (n_images, C) int32: row of (image, category) in the stats, −1 if none

    def group(self, image: np.ndarray, category: np.ndarray) -> np.ndarray:
        """Row of (image, category) in the stats, −1 where the image has no instance of the category."""
        return self.group_table[image, category]

    def invalid(self, image: np.ndarray, subject: np.ndarray, code: np.ndarray, obj: np.ndarray) -> np.ndarray:
        """The statement is certainly false in ``image``: a category is absent or no pair satisfies it."""
        return ~holds(self.stats, self.group(image, subject), self.group(image, obj), code, self.rules,
                      eligible=False)

    def valid(self, image: np.ndarray, subject: np.ndarray, code: np.ndarray, obj: np.ndarray) -> np.ndarray:
        return holds(self.stats, self.group(image, subject), self.group(image, obj), code, self.rules,
                     eligible=True)

    def prepare_statements(self, images: np.ndarray, rng: np.random.Generator | None = None,
                           max_categories_per_image: int = 6) -> None:
        """Compute the valid (image, subject, code, object), subject ≠ object, among ``images`` once.

        An image with more eligible categories contributes a seeded subset of ``max_categories_per_image``
        of them: k·(k−1) ordered pairs grow fast, and pairing needs only a few candidates per image.
        """
        C = self.n_categories
        g_image = self.group_key // C
        in_pool = np.zeros(len(self.instances.image_ids), dtype=bool)
        in_pool[images] = True
        rows = np.nonzero(in_pool[g_image] & (self.stats.n_elig > 0))[0]
        if rng is not None and len(rows):
            # rows are sorted by image; shuffle within images and keep the first few of each
            order = np.argsort(g_image[rows] + rng.random(len(rows)), kind="stable")
            shuffled_image = g_image[rows][order]
            first = np.concatenate([[0], np.nonzero(shuffled_image[1:] != shuffled_image[:-1])[0] + 1])
            rank = np.arange(len(rows)) - np.repeat(first, np.diff(np.concatenate([first, [len(rows)]])))
            rows = np.sort(rows[order[rank < max_categories_per_image]])
        keys = ("image", "subject", "code", "object")
        if len(rows) == 0:
            self._statements = {k: np.zeros(0, dtype=np.int64) for k in keys}
            return
        img = g_image[rows]
        starts = np.concatenate([[0], np.nonzero(img[1:] != img[:-1])[0] + 1])
        lengths = np.diff(np.concatenate([starts, [len(rows)]]))
        per_row_len = np.repeat(lengths, lengths)
        per_row_start = np.repeat(starts, lengths)
        a = np.repeat(np.arange(len(rows)), per_row_len)
        offset = np.arange(len(a)) - np.repeat(np.cumsum(per_row_len) - per_row_len, per_row_len)
        b = np.repeat(per_row_start, per_row_len) + offset
        keep = a != b
        ga, gb = rows[a[keep]], rows[b[keep]]
        out: dict[str, list] = {k: [] for k in keys}
        for code in range(6):
            ok = holds(self.stats, ga, gb, np.full(len(ga), code), self.rules, eligible=True)
            out["image"].append(g_image[ga[ok]])
            out["subject"].append(self.group_key[ga[ok]] % C)
            out["code"].append(np.full(int(ok.sum()), code))
            out["object"].append(self.group_key[gb[ok]] % C)
        self._statements = {k: np.concatenate(v).astype(np.int64) for k, v in out.items()}

    def statements(self, images: np.ndarray, codes: tuple[int, ...], rng: np.random.Generator | None = None,
                   per_image: int | None = None) -> dict[str, np.ndarray]:
        """Valid statements with a relation in ``codes`` among ``images`` (from :meth:`prepare_statements`).

        With ``per_image``, keep a seeded random subset of at most that many per image: pairing needs only a
        few candidates per image, and this bounds the work on images with many categories.
        """
        if getattr(self, "_statements", None) is None:
            self.prepare_statements(images)
        st = self._statements
        in_images = np.zeros(len(self.instances.image_ids), dtype=bool)
        in_images[images] = True
        mask = in_images[st["image"]] & np.isin(st["code"], codes)
        result = {k: v[mask] for k, v in st.items()}
        if per_image is not None and rng is not None and len(result["image"]):
            order = np.argsort(result["image"] + rng.random(len(result["image"])), kind="stable")
            image = result["image"][order]
            starts = np.concatenate([[0], np.nonzero(image[1:] != image[:-1])[0] + 1])
            lengths = np.diff(np.concatenate([starts, [len(image)]]))
            rank = np.arange(len(image)) - np.repeat(starts, lengths)
            keep = np.sort(order[rank < per_image])
            result = {k: v[keep] for k, v in result.items()}
        return result


def build_index(instances: CocoInstances, rules: GeometryRules) -> CocoIndex:
    """Group instances by (image, category) and compute the extremes the relation rules need."""
    C = len(instances.category_names)
    key = instances.ann_image.astype(np.int64) * C + instances.ann_cat.astype(np.int64)
    # one stable sort gives the groups (np.unique would sort again) and the order category_stats needs
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    new_group = np.concatenate([[True], sorted_key[1:] != sorted_key[:-1]]) if len(key) else np.zeros(0, bool)
    group_key = sorted_key[new_group]
    group = np.empty(len(key), dtype=np.int64)
    group[order] = np.cumsum(new_group) - 1
    w, h = instances.bbox[:, 2], instances.bbox[:, 3]
    image_w = instances.width[instances.ann_image]
    image_h = instances.height[instances.ann_image]
    eligible = ~instances.iscrowd & (w * h >= rules.min_area * image_w * image_h)
    size = np.stack([image_w, image_h], axis=1)
    stats = category_stats(group, len(group_key), instances.bbox, eligible, size, order=order)
    presence = np.zeros((len(instances.image_ids), C), dtype=bool)
    presence[group_key // C, group_key % C] = True
    group_table = np.full((len(instances.image_ids), C), -1, dtype=np.int32)
    group_table[group_key // C, group_key % C] = np.arange(len(group_key), dtype=np.int32)
    return CocoIndex(instances=instances, rules=rules, n_categories=C, group_key=group_key, stats=stats,
                     presence=presence, group_table=group_table)
