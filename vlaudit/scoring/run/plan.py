"""Planning a scoring run: which (item, context, interface) records exist, and which unique model calls.

Every record is a pure function of (item, image file, context, seed): the context image is rendered by
:func:`vlaudit.contexts.image_contexts.render_context` and identified by the sha256 of its pixels
(:func:`vlaudit.hashing.pixels_sha256`), so identical inputs — e.g. the gray canvas of one size asked one question — map to one
cache key and are scored once. Records whose image is missing, corrupt or outside ``--images`` are ``failed``;
contexts that cannot be built for an item (no boxes for rele/irre, no donor, a text-only item) are
``skipped``. Both go to ``failures.jsonl``, never to ``margins.parquet``.

An item with several images (MMMU) is one query holding all of them in order (:func:`render_images` says what
each context shows): its prompt has one placeholder per image and its cache key the hash over every image in
order (:func:`images_sha256`), so swapping two images is another query. A single image keeps the key it had.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vlaudit.backends.prompt.letters import item_question
from vlaudit.contexts.image_contexts import (
    BOX_CONTEXTS,
    ContextUnavailable,
    erasure_geometry,
    mismatch_donors,
    render_context,
)
from vlaudit.hashing import pixels_sha256, sha256_json
from vlaudit.scoring.run.cache import cache_key
from vlaudit.sources.images import ImageFailure, ImageStore
from vlaudit.sources.items import BenchmarkItem


@dataclass(frozen=True)
class Record:
    """One output row of the run: an (item, context, interface) and the unit that scores it."""

    item: BenchmarkItem
    context: str
    interface: str
    key: str | None = None
    image_sha256: str | None = None
    source_sha256: str | None = None
    donor_image: str | None = None
    status: str = "ok"
    error: str | None = None
    geometry: dict[str, float | None] | None = None  # the item's erasure geometry (Table 11), with rele/irre


@dataclass
class Unit:
    """One unique model call (several records may share it)."""

    key: str
    question: str
    interface: str
    item: BenchmarkItem
    context: str
    donor: str | None
    image_sha256: str | None
    records: list[Record] = field(default_factory=list)


def donor_key(paths: Sequence[str]) -> str:
    """The mismatch-donor key of an item's images: the path of a single image as it always was, a JSON list of
    the paths of several (so that :func:`~vlaudit.contexts.image_contexts.mismatch_donors` deranges image sets
    and ``donor_image`` names every donor image)."""
    return paths[0] if len(paths) == 1 else json.dumps(list(paths))


def donor_paths(donor: str) -> tuple[str, ...]:
    """The image paths of a :func:`donor_key`."""
    if donor.startswith('["') and donor.endswith('"]'):
        return tuple(json.loads(donor))
    return (donor,)


def render_images(store: ImageStore, item: BenchmarkItem, context: str, donor: str | None,
                  seed: int) -> tuple[Any, ...]:
    """Every context image of one item, in the item's order (empty for text); raises ImageFailure /
    ContextUnavailable.

    With several images (:attr:`~vlaudit.sources.items.BenchmarkItem.images`) each is rendered alone: blank,
    mean, blur and patch-shuffle apply to every image (each at its own size), mismatch shows the donor item's
    images (another item's whole set, :func:`donor_key`), and the erasure views — built around one image's
    subject and object boxes — are unavailable."""
    if context == "text":
        return ()
    paths = item.images
    if not paths:
        raise ContextUnavailable(f"context {context!r} needs an image; item {item.item_id!r} is text-only")
    if len(paths) > 1 and context in BOX_CONTEXTS:
        raise ContextUnavailable(f"context {context!r} erases around one image's boxes; item {item.item_id!r} "
                                 f"has {len(paths)} images")
    images = [store.load(path)[0] for path in paths]
    if context == "mismatch":
        if donor is None:
            raise ContextUnavailable("no mismatch donor for this item")
        return tuple(render_context(context, images[0], donor=store.load(path)[0], seed=seed)
                     for path in donor_paths(donor))
    return tuple(render_context(context, image, boxes=item.boxes, seed=seed) for image in images)


def render(store: ImageStore, item: BenchmarkItem, context: str, donor: str | None, seed: int) -> Any:
    """The context image of a single-image item (None for text); raises ImageFailure / ContextUnavailable."""
    images = render_images(store, item, context, donor, seed)
    return images[0] if images else None


def images_sha256(images: Sequence[Any]) -> str | None:
    """The content hash of a query's context images: None for none, the image's
    :func:`~vlaudit.hashing.pixels_sha256` for one (the key it always had), a hash over every image's in
    order for several (so that a cache key names each image and their order)."""
    if not images:
        return None
    if len(images) == 1:
        return pixels_sha256(images[0])
    return sha256_json({"images": [pixels_sha256(image) for image in images]})


def _source_sha256(store: ImageStore, item: BenchmarkItem) -> str | None:
    """The item's image file hash (None for text-only); over every file in order for several images."""
    hashes = [store.load(path)[1] for path in item.images]
    if not hashes:
        return None
    return hashes[0] if len(hashes) == 1 else sha256_json({"images": hashes})


def item_geometry(store: ImageStore, item: BenchmarkItem, *, disjoint: bool = False) -> dict[str, float | None] | None:
    """The item's erasure geometry (:func:`~vlaudit.contexts.image_contexts.erasure_geometry`; ``disjoint``: of
    the ``irre-disjoint`` view), None without an image or usable boxes."""
    if item.image is None or not item.boxes or len(item.images) > 1:
        return None
    width, height = store.load(item.image)[0].size
    try:
        return erasure_geometry(item.boxes, width, height, disjoint=disjoint)
    except ContextUnavailable:
        return None


def plan_run(items: Sequence[BenchmarkItem], store: ImageStore, contexts: Sequence[str],
             interfaces: Sequence[str], seed: int, fingerprint: str | Mapping[str, str],
             prompt_of: Callable[[str, str, int], str],
             too_long: Callable[[str], str | None] | None = None) -> tuple[list[Record], list[Unit]]:
    """All records (ok, failed, skipped) and the unique units, in a deterministic order.

    ``too_long(prompt)`` says why a prompt cannot fit the model's context (None when it fits): that record
    fails with the reason, and the rest are scored.

    ``fingerprint`` is the model fingerprint, or one per interface (see
    :func:`vlaudit.scoring.run.manifest.model_fingerprint`)."""
    ordered = sorted(items, key=lambda i: (i.image or "", i.item_id))  # items of one image together
    source: dict[str, tuple[str | None, str | None]] = {}  # item_id -> (file sha256, error)
    for item in ordered:
        try:
            source[item.item_id] = (_source_sha256(store, item), None)
        except ImageFailure as exc:
            source[item.item_id] = (None, str(exc))
    donors: dict[str, str] = {}
    donor_error: str | None = None
    if "mismatch" in contexts:
        usable = [i for i in items if source[i.item_id][1] is None]  # a broken image is nobody's donor
        try:
            donors = mismatch_donors([i.item_id for i in usable],
                                     [donor_key(i.images) if i.images else None for i in usable],
                                     [i.split for i in usable], seed)
        except ContextUnavailable as exc:
            donor_error = str(exc)
    records: list[Record] = []
    units: dict[str, Unit] = {}
    hashes: dict[tuple[Any, ...], tuple[str | None, int]] = {}  # memo -> (context images' hash, how many)
    erasing = any(c in BOX_CONTEXTS for c in contexts)
    # the IrrE geometry columns describe the paper's irre view, or irre-disjoint when only that one is scored
    disjoint = "irre-disjoint" in contexts and "irre" not in contexts
    for item in ordered:
        source_sha, item_error = source[item.item_id]
        geometry = item_geometry(store, item, disjoint=disjoint) if erasing and item_error is None else None
        for context in contexts:
            donor = donors.get(item.item_id) if context == "mismatch" else None
            failed = skipped = None
            image_sha, n_images = None, 0
            if item_error is not None:
                failed = item_error
            elif context == "mismatch" and donor_error is not None:
                skipped = donor_error
            else:
                memo = (item.images, context, donor, repr(item.boxes) if context in BOX_CONTEXTS else None)
                try:
                    if memo not in hashes:
                        rendered = render_images(store, item, context, donor, seed)
                        hashes[memo] = (images_sha256(rendered), len(rendered))
                    image_sha, n_images = hashes[memo]
                except ContextUnavailable as exc:
                    skipped = str(exc)
                except ImageFailure as exc:  # e.g. a corrupt donor
                    failed = str(exc)
            for interface in interfaces:
                if failed or skipped:
                    records.append(Record(item, context, interface, source_sha256=source_sha, donor_image=donor,
                                          status="failed" if failed else "skipped", error=failed or skipped,
                                          geometry=geometry))
                    continue
                question = item_question(item, interface)
                # the prompt holds one placeholder per context image (text: none), in order
                prompt = prompt_of(question, interface, n_images)
                overflow = too_long(prompt) if too_long is not None else None
                if overflow is not None:
                    records.append(Record(item, context, interface, source_sha256=source_sha, donor_image=donor,
                                          status="failed", error=overflow, geometry=geometry))
                    continue
                model_key = fingerprint if isinstance(fingerprint, str) else fingerprint[interface]
                key = cache_key(model_key, prompt, image_sha, interface)
                record = Record(item, context, interface, key=key, image_sha256=image_sha,
                                source_sha256=source_sha, donor_image=donor, geometry=geometry)
                records.append(record)
                unit = units.get(key)
                if unit is None:
                    unit = units[key] = Unit(key, question, interface, item, context, donor, image_sha)
                unit.records.append(record)
    return records, list(units.values())


def chunk_units(units: Sequence[Unit], chunk_size: int) -> list[list[Unit]]:
    """Deterministic chunks: units sorted by (context image, key); one image's units stay together
    unless they alone exceed ``chunk_size``. Depends only on the full unit set, never on what is cached,
    so a resumed run scores every chunk with exactly the batches of an uninterrupted one."""
    ordered = sorted(units, key=lambda u: (u.image_sha256 or "", u.key))
    chunks: list[list[Unit]] = []
    current: list[Unit] = []
    index = 0
    while index < len(ordered):
        end = index
        while end < len(ordered) and ordered[end].image_sha256 == ordered[index].image_sha256 \
                and ordered[end].image_sha256 is not None:
            end += 1
        group = ordered[index:max(end, index + 1)]
        if current and len(current) + len(group) > chunk_size:
            chunks.append(current)
            current = []
        for start in range(0, len(group), max(chunk_size, 1)):
            piece = group[start:start + chunk_size]
            if len(piece) == chunk_size:
                chunks.append(piece)
            else:
                current.extend(piece)
        index += len(group)
    if current:
        chunks.append(current)
    return chunks
