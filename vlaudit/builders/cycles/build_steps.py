"""Shared cycle-building machinery: seeded image-disjoint splits, candidate pairing, complete-block output.

Construction principle (cycle paper §D.1): both matched pairs satisfy the family predicate, both exchanged
pairs violate it, and every block reuses its two images and two captions on both sides, so the matched and
swapped marginals are identical (§4, §A.5). A family with fewer than ``min_cycles`` blocks in the validation
split (every split when there is none), or with none in another split, is withdrawn whole: reported as
unavailable with its per-split counts and not emitted (§D.5).

Pairing never compares all images with all images: candidates (one or more per image) carry a *bucket*
key, are shuffled within buckets with a seeded generator and paired with their neighbour (or, with a
``side``, rank-matched against the other side of the bucket); a vectorised check accepts or rejects each
pair, and rejected candidates are re-shuffled for a few rounds. Each image is used at most once per family
and split by default (``image_uses``; COCO: ``--image-uses``), so a family's blocks never share an image — a
vlaudit choice, not a paper setting.
"""

from __future__ import annotations

import hashlib
import itertools
import time
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from vlaudit.errors import InputError
from vlaudit.files import atomic_write, write_result
from vlaudit.metrics.cycles import withdraw_small_families
from vlaudit.results.columns import CYCLES
from vlaudit.results.cycles import CycleBuildFailure, CycleBuildMeta
from vlaudit.settings import NOT_IN_PAPER_FAMILIES, NOT_IN_PAPER_LABEL

CheckFn = Callable[[np.ndarray, np.ndarray], np.ndarray]
DEFAULT_SPLITS = "train=0.8,val=0.2"  # the split fractions of a COCO or pairs build without --splits
BASE_COLUMNS = CYCLES.names  # the written column order (vlaudit.results.columns.CYCLES)


def rng_for(seed: int, *names: str) -> np.random.Generator:
    """A generator derived from the user's seed and stable names (family, split): order-independent."""
    return np.random.default_rng(np.random.SeedSequence([seed, *(zlib.crc32(n.encode()) for n in names)]))


def family_label(family: str) -> str:
    """The family's name as printed: families the cycle paper does not have carry "(not in the paper)"."""
    return f"{family} ({NOT_IN_PAPER_LABEL})" if family in NOT_IN_PAPER_FAMILIES else family


def select_families(families: Sequence[str] | None, allowed: Sequence[str], source: str = "") -> list[str]:
    """The requested families, all of ``allowed`` when none are given; one not in ``allowed`` is an InputError
    (``unknown {source} families [...]; choose from [...]``)."""
    chosen = list(families or allowed)
    unknown = [f for f in chosen if f not in allowed]
    if unknown:
        what = f"{source} families" if source else "families"
        raise InputError(f"unknown {what} {unknown}; choose from {list(allowed)}", field="families")
    return chosen


def parse_splits(spec: str | Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """'train=0.8,val=0.2' → [('train', 0.8), ('val', 0.2)]; a lone name ('test') takes the whole pool."""
    if not isinstance(spec, str):
        parts = [(str(n), float(f)) for n, f in spec]
    else:
        parts = []
        for item in (s.strip() for s in spec.split(",") if s.strip()):
            name, _, frac = item.partition("=")
            try:
                parts.append((name.strip(), float(frac) if frac else 1.0))
            except ValueError as exc:
                raise InputError(f"bad split fraction in '{item}'", field="splits") from exc
    names = [n for n, _ in parts]
    if not parts or any(not n for n in names) or len(set(names)) != len(names):
        raise InputError(f"bad split spec {spec!r}: expected name=fraction,... with distinct names", field="splits")
    fracs = np.array([f for _, f in parts])
    if not np.isfinite(fracs).all() or (fracs <= 0).any() or (fracs > 1).any():
        raise InputError(f"split fractions must lie in (0, 1]: {spec!r}", field="splits")
    # a typo ('train=0.8,val=0.3') would otherwise be rescaled silently into other splits than the ones written
    if abs(fracs.sum() - 1.0) > 1e-6:
        raise InputError(f"split fractions must sum to 1, these sum to {fracs.sum():.6g}: {spec!r}", field="splits")
    return [(n, float(f / fracs.sum())) for n, f in parts]


def assign_splits(n_images: int, splits: Sequence[tuple[str, float]], seed: int) -> np.ndarray:
    """Split index of each image: a seeded permutation cut at the cumulative fractions (image-disjoint)."""
    order = rng_for(seed, "splits").permutation(n_images)
    cuts = np.round(np.cumsum([f for _, f in splits]) * n_images).astype(np.int64)
    cuts[-1] = n_images
    assignment = np.empty(n_images, dtype=np.int64)
    start = 0
    for index, stop in enumerate(cuts):
        assignment[order[start:stop]] = index
        start = stop
    return assignment


def subsample(n_images: int, max_images: int | None, pool_seed: int) -> np.ndarray:
    """Sorted indexes of a seeded subsample of ``max_images`` images (all when None or larger).

    Drawn with the *pool* seed, not the cycle seed: §D.5 builds every seed's independently constructed splits
    inside one fixed image pool ("family estimates share image pools"), so builds that differ only in
    ``seed`` share their pool and differ in their splits and pairings."""
    if max_images is None or max_images >= n_images:
        return np.arange(n_images)
    return np.sort(rng_for(pool_seed, "pool").choice(n_images, size=max_images, replace=False))


def pair_candidates(rng: np.random.Generator, item_image: np.ndarray, bucket: np.ndarray, check: CheckFn, *,
                    side: np.ndarray | None = None, rounds: int = 4, max_pairs: int | None = None,
                    image_uses: int = 1) -> list[tuple[int, int]]:
    """Seeded pairing of candidate items (see module docstring); returns accepted (item_i, item_j).

    ``image_uses``: how many accepted pairs may use one image (1: the blocks are image-disjoint); each item is
    used at most once either way.
    """
    n = len(item_image)
    if n < 2:
        return []
    _, bucket = np.unique(bucket, return_inverse=True)
    bucket = bucket.reshape(-1)
    used = np.zeros(int(item_image.max()) + 1, dtype=np.int64)
    item_used = np.zeros(n, dtype=bool)
    alive = np.arange(n)
    accepted: list[tuple[int, int]] = []
    for _ in range(rounds):
        alive = alive[(used[item_image[alive]] < image_uses) & ~item_used[alive]]
        if len(alive) < 2:
            break
        rand = rng.random(len(alive))
        if side is None:
            ordered = alive[np.argsort(bucket[alive] + rand, kind="stable")]  # by bucket, shuffled within
            half = len(ordered) // 2
            i, j = ordered[0:2 * half:2], ordered[1:2 * half:2]
        else:
            i, j = _rank_match(alive, bucket, side, rand)
        keep = (bucket[i] == bucket[j]) & (item_image[i] != item_image[j])
        i, j = i[keep], j[keep]
        if len(i) == 0:
            continue
        ok = np.asarray(check(i, j), dtype=bool)
        before = len(accepted)
        for a, b in zip(i[ok].tolist(), j[ok].tolist(), strict=True):
            ia, ib = item_image[a], item_image[b]
            if used[ia] >= image_uses or used[ib] >= image_uses or item_used[a] or item_used[b]:
                continue
            used[ia] += 1
            used[ib] += 1
            item_used[a] = item_used[b] = True
            accepted.append((a, b))
        if max_pairs is not None and len(accepted) >= max_pairs:
            break
        if len(accepted) - before < max(1, len(alive) // 200):
            break  # a round that pairs under 1% of the remaining candidates: further rounds add little
    return accepted


def _rank_match(alive: np.ndarray, bucket: np.ndarray, side: np.ndarray, rand: np.ndarray):
    """Pair the k-th shuffled side-0 item of each bucket with the k-th shuffled side-1 item."""
    # one float key sorts by (bucket, side, random): exact while bucket * 2 < 2**52
    order = np.argsort(bucket[alive] * 2.0 + side[alive] + rand, kind="stable")
    items = alive[order]
    group = bucket[items] * 2 + side[items]
    starts = np.concatenate([[0], np.nonzero(group[1:] != group[:-1])[0] + 1])
    lengths = np.diff(np.concatenate([starts, [len(items)]]))
    rank = np.arange(len(items)) - np.repeat(starts, lengths)
    key = bucket[items].astype(np.int64) * (len(items) + 1) + rank
    zero, one = side[items] == 0, side[items] == 1
    key_zero, key_one = key[zero], key[one]  # both ascending: items are sorted by (bucket, side, rank)
    if len(key_zero) == 0 or len(key_one) == 0:
        return items[:0], items[:0]
    pos = np.clip(np.searchsorted(key_one, key_zero), 0, len(key_one) - 1)
    hit = key_one[pos] == key_zero
    return items[zero][hit], items[one][pos[hit]]


def generated_caption_id(text: str) -> str:
    """Stable id of a generated caption: the same text always gets the same id, in every run."""
    return "gen-" + hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


@dataclass
class BuildResult:
    """Blocks per (family, split) plus what the summary reports."""

    blocks: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    captions: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: Counter = field(default_factory=Counter)
    generated: Any = None  # builder-specific cache of generated captions
    # wall-clock per stage or family (summed over splits)
    seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))


@contextmanager
def timed(seconds: defaultdict[str, float], stage: str) -> Iterator[None]:
    """Add the wall-clock time of the block to ``seconds[stage]`` (the build summary's ``seconds``, never written:
    outputs stay identical across runs)."""
    start = time.perf_counter()
    try:
        yield
    finally:
        seconds[stage] += time.perf_counter() - start


VALIDATION_SPLIT_NAME = "val"


def validation_counts_from(meta_path: str | Path | None, seed: int) -> dict[str, dict[str, int]] | None:
    """The validation counts of another build of the same seed (its ``CYCLES.meta.json``), for a build without a
    validation split (COCO's test from val2017): ``{family: {"val": n}}``; None without ``meta_path``."""
    if meta_path is None:
        return None
    try:
        meta = orjson.loads(Path(meta_path).read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise InputError(f"cannot read a cycles metadata file: {exc}", path=meta_path) from exc
    if not isinstance(meta, dict) or VALIDATION_SPLIT_NAME not in meta.get("splits", {}):
        raise InputError(f"the build has no '{VALIDATION_SPLIT_NAME}' split to count", path=meta_path, field="splits")
    if meta.get("seed") != seed:
        raise InputError(f"built with seed {meta.get('seed')}, this build uses seed {seed}: the validation cycles "
                         "must come from the same seed's build", path=meta_path, field="seed")
    cells = {**meta.get("counts", {}), **meta.get("unavailable", {})}
    return {family: {VALIDATION_SPLIT_NAME: int(c.get(VALIDATION_SPLIT_NAME, 0))} for family, c in cells.items()}


def counted_split(splits: Sequence[str], validation_from: str | Path | None = None) -> str:
    """Which cycles the minimum counts (§D.5 counts validation cycles): "val", "val of PATH" (another build's),
    or, in a build without a validation split, the split(s) it has ("test")."""
    if validation_from is not None:
        return f"{VALIDATION_SPLIT_NAME} of {validation_from}"
    return VALIDATION_SPLIT_NAME if VALIDATION_SPLIT_NAME in splits else ", ".join(splits)


def finalize(result: BuildResult, *, families: Sequence[str], splits: Sequence[tuple[str, float]], seed: int,
             min_cycles: int, max_cycles_per_family: int | None, file_names: dict[str, str],
             validation_counts: dict[str, dict[str, int]] | None = None
             ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Cap, dedup and id the blocks; withdraw families under ``min_cycles``; return rows and the Table-6 counts.

    The minimum-cycle rule is per family (§D.5, :func:`~vlaudit.metrics.cycles.withdraw_small_families`): a
    family with fewer than ``min_cycles`` blocks in the ``val`` split (or in every split when there is no
    ``val``), or with none in another split, is withdrawn whole — no row of it is written — and listed under
    ``unavailable`` as ``{split: count}``.
    ``counts`` holds the families that are written. ``validation_counts`` (another build's val counts of the same
    seed, :func:`validation_counts_from`) applies the paper's rule to a build without a validation split: a family
    is withdrawn when that build has fewer than ``min_cycles`` val cycles of it (or this build none), and its
    ``unavailable`` entry carries that val count beside this build's; ``validation_counts`` ``{family: n}`` (the
    val count of every family) is then returned too, so that ``cycles eval`` counts what the build counted.
    """
    kept: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for family in families:
        kept[family] = {}
        for split, _ in splits:
            blocks = result.blocks.get((family, split), [])
            images = {b["image_1"] for b in blocks} | {b["image_2"] for b in blocks}
            if len(images) == 2 * len(blocks):
                blocks, unique = [], blocks  # no image repeats, so no block can repeat: skip the key loop
            else:
                unique = []
            seen: set[tuple] = set()
            for block in blocks:
                first, second = (block["image_1"], block["caption_1"]), (block["image_2"], block["caption_2"])
                key = (first, second) if first <= second else (second, first)
                if key in seen:
                    result.warnings["duplicate blocks dropped"] += 1
                    continue
                seen.add(key)
                unique.append(block)
            if max_cycles_per_family is not None and len(unique) > max_cycles_per_family:
                keep = np.sort(rng_for(seed, "cap", family, split).choice(len(unique), max_cycles_per_family,
                                                                          replace=False))
                unique = [unique[k] for k in keep.tolist()]
            kept[family][split] = unique
    all_counts = {family: {split: len(blocks) for split, blocks in cells.items()} for family, cells in kept.items()}
    names = [split for split, _ in splits]
    if validation_counts is not None and VALIDATION_SPLIT_NAME not in names:
        merged = {family: {**cells, VALIDATION_SPLIT_NAME: validation_counts.get(family, {}).get(
            VALIDATION_SPLIT_NAME, 0)} for family, cells in all_counts.items()}
        unavailable = withdraw_small_families(merged, [*names, VALIDATION_SPLIT_NAME], min_cycles,
                                              validation_split=VALIDATION_SPLIT_NAME)
    else:
        unavailable = withdraw_small_families(all_counts, names, min_cycles)
    rows: list[dict[str, Any]] = []
    for family, cells in kept.items():
        if family in unavailable:
            continue
        for split, unique in cells.items():
            prefix = f"{family}/{split}/"
            for k, block in enumerate(unique):
                if "cycle_id" in block:
                    row = block
                else:
                    row = new_row(block["image_1"], block["caption_1"], block["image_2"], block["caption_2"],
                                  block["text_1"], block["text_2"], file_names.get(block["image_1"]),
                                  file_names.get(block["image_2"]))
                    row.update(block)
                row["cycle_id"], row["family"], row["split"] = f"{prefix}{k:06d}", family, split
                rows.append(row)
    counts = {family: cells for family, cells in all_counts.items() if family not in unavailable}
    table: dict[str, Any] = {"counts": counts, "unavailable": unavailable}
    if validation_counts is not None and VALIDATION_SPLIT_NAME not in names:
        # what the minimum counted, for every family: ``cycles eval`` of this file counts the same (§D.5)
        table["validation_counts"] = {family: int(validation_counts.get(family, {}).get(VALIDATION_SPLIT_NAME, 0))
                                      for family in all_counts}
    return rows, table


def new_row(image_1: str, caption_1: str, image_2: str, caption_2: str, text_1: str, text_2: str,
            file_name_1: str | None = None, file_name_2: str | None = None) -> dict[str, Any]:
    """A block in the output column order (cycle_id, family and split are filled by :func:`finalize`)."""
    return {"cycle_id": None, "family": None, "split": None, "image_1": image_1, "caption_1": caption_1,
            "image_2": image_2, "caption_2": caption_2, "text_1": text_1, "text_2": text_2,
            "file_name_1": file_name_1, "file_name_2": file_name_2}


def sidecar_paths(out: str | Path) -> tuple[Path, Path]:
    """The captions table and the metadata file written beside a cycles file."""
    out = Path(out)
    stem = out.name[: -len(out.suffix)] if out.suffix else out.name
    return out.with_name(f"{stem}.captions.jsonl"), out.with_name(f"{stem}.meta.json")


def write_rows_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> None:
    """Compact JSONL via orjson (byte-stable for the same rows), written atomically."""
    rows = iter(rows)
    with atomic_write(path, "wb") as handle:
        while chunk := list(itertools.islice(rows, 10_000)):
            handle.write(jsonl_bytes(chunk))


def jsonl_bytes(rows: list[dict[str, Any]]) -> bytes:
    """The rows as compact JSON lines: exactly ``b"".join(orjson.dumps(row) + b"\n" for row in rows)``.

    One ``orjson.dumps`` of the whole list is ~5x faster than one call per row; the list's text is cut into
    lines at the n − 1 places ``},{"<first key>":``. That is safe only when every row starts with the same
    key and the pattern occurs exactly n − 1 times (each row boundary is one; a nested occurrence would
    make more), so anything else takes the one-call-per-row path.
    """
    if not rows:
        return b""
    # all(rows) first: no row is empty, so next() below never raises inside map (which would end it early)
    first_keys = set(map(next, map(iter, rows))) if all(rows) else set()
    first = first_keys.pop() if len(first_keys) == 1 else None
    if isinstance(first, str):
        key = orjson.dumps(first) + b":"
        blob = orjson.dumps(rows)
        if blob.count(b"},{" + key) == len(rows) - 1:
            return blob[1:-1].replace(b"},{" + key, b"}\n{" + key) + b"\n"
    newline = orjson.OPT_APPEND_NEWLINE
    return b"".join(orjson.dumps(row, option=newline) for row in rows)


def failure_report_path(out: str | Path) -> Path:
    """``CYCLES.failed.json``: where a build that kept no family writes its Table-6 counts instead."""
    out = Path(out)
    stem = out.name[: -len(out.suffix)] if out.suffix else out.name
    return out.with_name(f"{stem}.failed.json")


def write_outputs(out: str | Path, rows: list[dict[str, Any]], captions: dict[str, dict[str, Any]],
                  meta: dict[str, Any]) -> dict[str, str]:
    """Write CYCLES.jsonl, the captions table of the captions it uses, and the metadata (all atomically).

    A build that kept no family (every one under ``min_cycles``, §D.5) writes no cycles, captions or metadata
    file, which a later command would take for a result: only ``CYCLES.failed.json`` with the counts (a file
    already at ``out`` is left as it was). A build that writes cycles removes a stale failure report.
    """
    failed = failure_report_path(out)
    if not rows:
        write_result(failed, CycleBuildFailure.from_dict(
            {**meta, "failed": f"no family reached min_cycles ({meta.get('min_cycles_counted', 'val')} cycles); "
                               "no cycles written"}))
        return {"failed": str(failed)}
    captions_path, meta_path = sidecar_paths(out)
    used = sorted(set(map(itemgetter("caption_1"), rows)) | set(map(itemgetter("caption_2"), rows)))
    write_rows_jsonl(captions_path, map(captions.__getitem__, used))
    meta = {**meta, "cycles_file": str(out), "captions_file": str(captions_path)}
    write_result(meta_path, CycleBuildMeta.from_dict(meta))
    write_rows_jsonl(out, rows)
    failed.unlink(missing_ok=True)
    return {"cycles": str(out), "captions": str(captions_path), "meta": str(meta_path)}
