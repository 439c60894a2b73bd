"""The scoring runner behind ``vlaudit vca score``: yes/no margins under matched contexts, resumable.

Outputs in RUN_DIR (all written atomically):

* ``margins.parquet`` — one row per scored (item, context, interface), columns :data:`MARGIN_COLUMNS`, sorted by
  (dataset, item_id, context, interface) so that the file does not depend on scoring order. Only scored rows
  (``status == "ok"``); the VCA report reads it (schema: :mod:`vlaudit.sources.margins`).
  ``image_sha256`` is the sha256 of the context image's pixels as the model received them (null for text);
  ``source_sha256`` that of the item's image file; ``donor_image`` the mismatch donor's path;
  :data:`GEOMETRY_COLUMNS` the item's erasure geometry (VCA Table 11) when the run has ``rele``/``irre``.
  ``censored`` names the answer words whose log-prob is only a bound (a served model's top-k log-probs
  without them; :mod:`vlaudit.backends.openai.endpoint`): null on an exact row, counted in the summary.
* ``failures.jsonl`` — failed (missing/corrupt/out-of-tree image) and skipped (context unavailable) records
  with the reason. When no record at all can be scored, the run stops with an :class:`InputError` giving
  the counts by reason and leaves no run behind: no manifest, no margins, no lock (see
  :func:`refuse_empty_run`).
* ``manifest.json`` — see :mod:`vlaudit.scoring.run.manifest`; ``summary.json`` — counts, failures, items/s.
* ``cache/`` — the chunk cache (:mod:`vlaudit.scoring.run.cache`); a restarted run with the same arguments
  reuses it and produces a bit-identical ``margins.parquet``.

A run starts by removing the previous results (they are rebuilt from the cache) and writes ``summary.json``
last, so a killed run leaves either no results or complete ones, and ``summary.json`` marks a finished run.
The folder's lifecycle (refuse another run's folder, lock, clean partial files, write the manifest and the
summary) is :class:`~vlaudit.scoring.run.folder.RunFolder`'s; the cache serves a replacing run too, since its keys
name everything that determines a margin.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol, TypedDict

import pyarrow as pa

from vlaudit.backends.base import (
    YesNoBackend,
    decision_of,
    description_of,
    images_per_query,
    require_protocol,
)
from vlaudit.backends.prompt.letters import LETTER_INTERFACE, item_question, max_options, require_letters
from vlaudit.backends.registry import parse_spec_or_none
from vlaudit.contexts.image_contexts import CONTEXTS, context_parameters
from vlaudit.errors import InputError
from vlaudit.files import (
    write_jsonl,
    write_parquet,
)
from vlaudit.hashing import sha256_json
from vlaudit.results import columns
from vlaudit.results.scoring_record import ScoringRunRecord
from vlaudit.results.vca.coverage import ScoringCoverage, cell_of, coverage_of
from vlaudit.results.vca.outputs import ScoringSummary
from vlaudit.results.versioned import JsonValue, to_json
from vlaudit.scoring.run.cache import ChunkCache
from vlaudit.scoring.run.executors import LocalExecutor
from vlaudit.scoring.run.folder import OpenRun, RunFolder
from vlaudit.scoring.run.manifest import RunManifest, local_weights_identity, model_fingerprint
from vlaudit.scoring.run.plan import Record, Unit, chunk_units, plan_run
from vlaudit.scoring.run.shards import IncompleteRunError, Shard, ShardDone, ShardFailure, UnitTask
from vlaudit.sources.images import ImageStore
from vlaudit.sources.items import BenchmarkItem, option_letters

#: the item's erasure geometry in % of the image area (VCA Table 11), on every row of an item scored with
#: rele or irre and boxes; null elsewhere (see :func:`vlaudit.contexts.image_contexts.erasure_geometry`)
GEOMETRY_COLUMNS = columns.GEOMETRY_COLUMNS
#: the margins table's columns in the order written (one definition: :data:`vlaudit.results.columns.MARGINS`)
MARGIN_COLUMNS = columns.MARGINS.names

#: one row of ``margins.parquet`` or ``failures.jsonl`` as built here (the columns of :data:`MARGIN_COLUMNS`)
Row = dict[str, object]


class ScoringExecutor(Protocol):
    """Where a run's forward passes run (:class:`~vlaudit.scoring.run.executors.LocalExecutor`,
    :class:`~vlaudit.scoring.run.ray_executor.RayExecutor`): what it records in the manifest, and the shards
    it scores, handing each finished one to ``on_shard_done``; the shards that failed come back."""

    def describe(self) -> Mapping[str, object]: ...

    def run(self, shards: Sequence[Shard], *, backend: YesNoBackend, store: ImageStore, seed: int,
            on_shard_done: ShardDone) -> Sequence[ShardFailure]: ...


class ProblemCounts(TypedDict):
    """The records not scored, counted (:func:`problem_counts`)."""

    n_failed: int
    n_skipped: int
    failures_by_reason: dict[str, int]
    skipped_by_context: dict[str, int]


def margins_schema() -> pa.Schema:
    """The Arrow schema of ``margins.parquet`` (:data:`vlaudit.results.columns.MARGINS`)."""
    return columns.MARGINS.arrow_schema()


def _item_fields(record: Record, model: str) -> Row:
    item = record.item
    return {"model": model, "dataset": item.dataset or "", "item_id": item.item_id, "context": record.context,
            "interface": record.interface, "label": item.label, "group_id": item.group_id,
            "statement": item.statement, "relation": None if item.relation is None else str(item.relation),
            "subject": None if item.subject is None else str(item.subject),
            "object": None if item.object is None else str(item.object), "split": item.split,
            "donor_image": record.donor_image, "source_sha256": record.source_sha256,
            **{name: (record.geometry or {}).get(name) for name in GEOMETRY_COLUMNS},
            "category": item.category, "image_pair": _text_or_none(item.extra.get("image_pair")),
            "circular_id": _text_or_none(item.extra.get("circular_id", item.extra.get("source_index"))),
            "rotation": item.extra.get("rotation"), "l2_category": _text_or_none(item.extra.get("l2_category")),
            "cluster": item.cluster, "cluster_unit": item.cluster_unit}


def _text_or_none(value: object) -> str | None:
    return None if value is None else str(value)


def example_prompts(prompt_of: Callable[[str, str, bool], str], interfaces: Sequence[str],
                    item: BenchmarkItem) -> dict[str, str]:
    """One stored example prompt per template (interface × with/without image)."""
    return {f"{interface}/{'image' if with_image else 'text'}":
            prompt_of(item_question(item, interface), interface, with_image)
            for interface in interfaces for with_image in (True, False)}


def run_scoring(backend: YesNoBackend, items: Sequence[BenchmarkItem], *, images_dir: str | Path, out_dir: str | Path,
                contexts: Sequence[str], interfaces: Sequence[str], seed: int = 0, strict: bool = False,
                model_name: str | None = None, chunk_size: int = 64, arguments: Mapping[str, object] | None = None,
                on_plan: Callable[[int, int], None] | None = None,
                on_progress: Callable[[int], None] | None = None,
                on_warning: Callable[[str], None] | None = None, executor: ScoringExecutor | None = None,
                command: str = "vca score", model_files: Mapping[str, object] | None = None) -> dict[str, object]:
    """Score every (item, context, interface) with ``backend`` and write the run directory; returns the summary.

    ``on_plan(n_units_total, n_units_cached)`` and ``on_progress(n_units_done_now)`` drive a progress bar;
    ``on_warning(message)`` hears of damaged cache chunks moved aside (default: :func:`warnings.warn`).
    ``executor``: where the forward passes run — :class:`~vlaudit.scoring.run.executors.LocalExecutor` (default)
    or :class:`~vlaudit.scoring.run.ray_executor.RayExecutor` (then ``backend`` is its planning proxy); either way
    the cache, the shards and ``margins.parquet`` are the same. ``model_files``: what identifies the model
    without loading it (:func:`vlaudit.scoring.run.folder.model_files`), recorded so that a rerun of the
    finished run need not load it.
    With ``strict`` a failed record raises :class:`InputError` before any scoring.
    """
    unknown = [c for c in contexts if c not in CONTEXTS]
    if unknown:
        raise InputError(f"unknown context(s) {unknown}; available: {', '.join(CONTEXTS)}", field="contexts")
    out = Path(out_dir)
    model = model_name or backend.spec
    require_protocol(backend, YesNoBackend)
    if LETTER_INTERFACE in interfaces:
        check_letter_items(backend, items)
    refused = too_many_images(items, images_per_query(backend), backend.spec)
    if refused is not None:
        raise refused
    # run-shape decisions taken before planning (shared image-prefix reuse): recorded as prepare() returns them
    decision = decision_of(backend.prepare(items, images_dir, list(interfaces)))
    description = description_of(backend)
    facts = description.to_dict()
    parsed = parse_spec_or_none(backend.spec)  # a test double's spec names no registered prefix
    weights = None if parsed is None else local_weights_identity(parsed.name)
    fingerprint = model_fingerprint(facts, weights)
    per_interface = {interface: model_fingerprint(facts, weights, interface) for interface in interfaces}
    store = ImageStore(images_dir)
    backend.prefetch_prompts(items, interfaces)  # a remote backend renders every prompt in one round trip
    records, units = plan_run(items, store, contexts, interfaces, seed, per_interface, backend.prompt,
                              getattr(backend, "prompt_too_long", None))
    failed = [r for r in records if r.status == "failed"]
    if strict and failed:
        first = failed[0]
        raise InputError(f"{first.error} ({len(failed)} failed record(s); --strict)", record=first.item.item_id,
                         field="image")
    template = {"template": facts.get("template"), "chat_template_sha256": facts.get("chat_template_sha256")}
    record = ScoringRunRecord.of(
        model=model, spec=backend.spec, backend=description, model_fingerprint=fingerprint,
        model_fingerprint_by_interface=per_interface, prompt_template_sha256=sha256_json(template),
        example_prompts=example_prompts(backend.prompt, interfaces, items[0]), contexts=contexts,
        interfaces=interfaces, context_parameters=context_parameters(), seed=seed, n_items=len(items),
        executor=(executor or LocalExecutor()).describe(), prefix_cache=decision, model_files=model_files)
    manifest = RunManifest(command=command, arguments=dict(arguments or {}), record=record)
    if not any(r.status == "ok" for r in records):
        refuse_empty_run(records, model, out, images_dir)
    with RunFolder(out).open(outputs=OUTPUT_FILES) as run:
        run.write_manifest(manifest)
        return _score_and_write(backend, items, records, units, run=run, model=model, contexts=contexts,
                                store=store, seed=seed, chunk_size=chunk_size, on_plan=on_plan,
                                on_progress=on_progress, on_warning=on_warning or _warn, executor=executor)


def _scored_fields(hit: Mapping[str, JsonValue]) -> Row:
    """The answer columns of one cached result: the yes/no NLLs and margin, or the option letters' log-probs."""
    censored = ",".join(str(word) for word in _listed(hit["censored"])) if hit.get("censored") else None
    if "logp_options" in hit:
        logps = [_number(v) for v in _listed(hit["logp_options"])]
        return {"nll_yes": None, "nll_no": None, "margin": None, "yes_token_id": None, "no_token_id": None,
                "option_letters": "".join(option_letters(len(logps))), "logp_options": logps,
                "option_token_ids": [int(_number(i)) for i in _listed(hit["option_token_ids"])],
                "censored": censored}
    nll_yes, nll_no = _number(hit["nll_yes"]), _number(hit["nll_no"])
    return {"nll_yes": nll_yes, "nll_no": nll_no, "margin": nll_no - nll_yes, "yes_token_id": hit["yes_token_id"],
            "no_token_id": hit["no_token_id"], "censored": censored}


def _listed(value: JsonValue) -> list[JsonValue]:
    """A cached result's list field (a TypeError when the sealed chunk holds something else)."""
    if not isinstance(value, list):
        raise TypeError(f"a cached result's list field holds {type(value).__name__}")
    return value


def _number(value: JsonValue) -> float:
    """A cached result's number as a float (a TypeError when the sealed chunk holds something else)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"a cached result's number field holds {type(value).__name__}")
    return float(value)


def check_yes_no_items(items: Sequence[BenchmarkItem], interfaces: Sequence[str]) -> None:
    """Before any model loads: a yes/no interface asks "Is it ...?", so an item with options (its label a
    letter) under it would be written as a yes/no row labelled with that letter; refused with the way out."""
    yes_no = [name for name in interfaces if name != LETTER_INTERFACE]
    choice = [item for item in items if item.options]
    if yes_no and choice:
        first = choice[0]
        raise InputError(f"{len(choice)} of {len(items)} item(s) are multiple-choice (options "
                         f"{''.join(option_letters(len(first.options or ())))}, label {first.label!r}); "
                         f"--interface {','.join(yes_no)} asks yes/no questions: score them with --interface letter",
                         record=first.item_id, field="interface")


#: the way out of :func:`too_many_images` for a yes/no run (``vca score``)
SEVERAL_IMAGES_WAY_OUT = ("score them with a model that takes several (hf: Qwen-VL, LLaVA-OneVision, InternVL, "
                          "Gemma 3; openai:) or leave them out with --skip-multi-image")


def too_many_images(items: Sequence[BenchmarkItem], capacity: int, model: str,
                    way_out: str = SEVERAL_IMAGES_WAY_OUT) -> InputError | None:
    """The one-line refusal of items with more images than ``model`` takes in one query (None when every item
    fits): it names the model, how many items and one of them, and ``way_out``."""
    over = [item for item in items if len(item.images) > capacity]
    if not over:
        return None
    first = over[0]
    return InputError(f"{model} takes {capacity} image{'s' if capacity > 1 else ''} per query; {len(over)} of "
                      f"{len(items)} items have more (e.g. {first.item_id}: {len(first.images)} images): "
                      f"{way_out}", field="benchmark")


def check_letter_items(backend: YesNoBackend, items: Sequence[BenchmarkItem]) -> None:
    """Before any scoring: every item has options, and each of their letters is one token for ``backend``."""
    plain = [item.item_id for item in items if not item.options]
    if plain:
        raise InputError(f"{len(plain)} item(s) have no options; --interface letter scores multiple-choice items",
                         record=plain[0], field="options")
    k = max_options(items)
    resolved = len(getattr(backend, "letter_ids", ()) or ())
    if resolved == 0:
        raise InputError(f"model {backend.spec} does not read option letters: --interface letter needs a backend "
                         "loaded with it (hf:, ref:tiny-*, ref:scene-mcq-*)", field="interface")
    if k > resolved:
        refused = dict(getattr(backend, "refused_letters", {}) or {})
        refused.setdefault(option_letters(k)[resolved], "not resolved by this backend")
        require_letters(backend.spec, refused, k)


def refuse_empty_run(records: Sequence[Record], model: str, out: Path, images_dir: str | Path) -> None:
    """Nothing to score: raise an :class:`InputError` with the counts by reason, leaving no run to protect.

    No manifest (a corrected rerun into the same folder must not be refused as "other arguments"), no
    margins and no lock. The failures go to ``failures.jsonl`` when the folder holds no run; a run already
    there is left exactly as it was (its ``failures.jsonl`` belongs to its margins), and the message names
    the first failure instead.
    """
    counts = problem_counts(records)
    raise InputError(f"no record could be scored: {failure_line(counts)}; {list_problems(records, model, out)}",
                     path=images_dir if counts["n_failed"] else None)


def list_problems(records: Sequence[Record], model: str, out: Path) -> str:
    """Write the records not scored to ``out/failures.jsonl`` when ``out`` holds no run (a run there keeps its
    own) and say where to read them: ``see OUT/failures.jsonl``, or the first one."""
    problems = _problems(records, model)
    if (out / "manifest.json").is_file():
        return f"first: {problems[0]['item_id']}: {problems[0]['error']}; the run in {out} is left as it was"
    with RunFolder(out).lock():
        write_jsonl(out / "failures.jsonl", problems)
    return f"see {out / 'failures.jsonl'}"


OUTPUT_FILES = ("manifest.json", "margins.parquet", "failures.jsonl", "summary.json")


def _score_and_write(backend: YesNoBackend, items: Sequence[BenchmarkItem], records: list[Record], units: list[Unit], *,
                     run: OpenRun, model: str, contexts: Sequence[str], store: ImageStore, seed: int,
                     chunk_size: int, on_plan: Callable[[int, int], None] | None,
                     on_progress: Callable[[int], None] | None, on_warning: Callable[[str], None],
                     executor: ScoringExecutor | None = None) -> dict[str, object]:
    out = run.path
    cache = ChunkCache(out / "cache", warn=on_warning)
    cached = cache.load()
    chunks = chunk_units(units, chunk_size)
    n_cached = sum(1 for u in units if u.key in cached)
    if on_plan:
        on_plan(len(units), n_cached)
    shards = [Shard(index, tuple(UnitTask.of(u) for u in chunk if u.key not in cache.records))
              for index, chunk in enumerate(chunks)]
    shards = [shard for shard in shards if shard.tasks]
    started = time.perf_counter()
    n_scored = 0

    def on_shard_done(shard: Shard, rows: list[dict[str, JsonValue]]) -> None:
        nonlocal n_scored
        cache.append(rows)
        n_scored += len(shard.tasks)
        if on_progress:
            on_progress(len(shard.tasks))

    failures = (executor or LocalExecutor()).run(shards, backend=backend, store=store, seed=seed,
                                                  on_shard_done=on_shard_done)
    if failures:
        listed = "; ".join(f"{f.shard_id}: {f.error}" for f in failures[:5])
        more = f" (+{len(failures) - 5} more)" if len(failures) > 5 else ""
        raise IncompleteRunError(
            f"{len(failures)} of {len(shards)} shards failed ({listed}{more}); the {len(shards) - len(failures)} "
            f"finished ones are cached in {out / 'cache'} — rerun the same command to score the rest")
    elapsed = time.perf_counter() - started

    rows = []
    for record in records:
        if record.status != "ok":
            continue
        hit = cache.records[record.key]  # type: ignore[index]  # an ok record has its cache key
        rows.append({**_item_fields(record, model), **_scored_fields(hit), "prompt_hash": hit["prompt_hash"],
                     "n_prompt_tokens": hit["n_prompt_tokens"], "image_sha256": record.image_sha256,
                     "status": "ok", "error": None})
    rows.sort(key=lambda r: (r["dataset"], r["item_id"], r["context"], r["interface"]))
    write_parquet(out / "margins.parquet", pa.Table.from_pylist(rows, schema=margins_schema()))
    write_jsonl(out / "failures.jsonl", _problems(records, model))
    counts = problem_counts(records)
    censored = [r for r in rows if r["censored"] is not None]
    summary = {
        "model": model, "n_items": len(items), "n_records": len(records), "n_scored_rows": len(rows),
        "n_censored": len(censored),
        "censored_by_context": {c: sum(1 for r in censored if r["context"] == c) for c in contexts if censored},
        "n_failed": counts["n_failed"], "n_skipped": counts["n_skipped"],
        "n_unique_units": len(units), "n_units_from_cache": n_cached, "n_units_scored_now": n_scored,
        "n_chunks": len(chunks), "damaged_cache_chunks": cache.damaged, "seconds": elapsed,
        "units_per_second": (n_scored / elapsed) if elapsed > 0 and n_scored else None,
        "records_per_second": (len(rows) / elapsed) if elapsed > 0 and n_scored else None,
        "failures_by_reason": counts["failures_by_reason"], "skipped_by_context": counts["skipped_by_context"],
        "contexts": {c: sum(1 for r in rows if r["context"] == c) for c in contexts},
        "coverage": to_json(records_coverage(records)),
    }
    run.write_summary(ScoringSummary.from_dict(summary))
    return summary


def _warn(message: str) -> None:
    warnings.warn(message, stacklevel=3)


def _problems(records: Sequence[Record], model: str) -> list[Row]:
    """The rows of ``failures.jsonl``: every failed or skipped record with its reason, in a fixed order."""
    problems = [{**_item_fields(r, model), "status": r.status, "error": r.error} for r in records if r.status != "ok"]
    problems.sort(key=lambda r: (r["dataset"], r["item_id"], r["context"], r["interface"]))
    return problems


def problem_counts(records: Sequence[Record]) -> ProblemCounts:
    """Failed records by reason (the fixed prefix of :class:`~vlaudit.sources.images.ImageFailure` messages) and
    skipped records by context (their reasons are per-item details)."""
    by_reason: dict[str, int] = {}
    by_context: dict[str, int] = {}
    for record in records:
        if record.status == "failed":
            reason = (record.error or "").split(":")[0]
            by_reason[reason] = by_reason.get(reason, 0) + 1
        elif record.status == "skipped":
            by_context[record.context] = by_context.get(record.context, 0) + 1
    return {"n_failed": sum(by_reason.values()), "n_skipped": sum(by_context.values()),
            "failures_by_reason": by_reason, "skipped_by_context": by_context}


def records_coverage(records: Sequence[Record]) -> ScoringCoverage:
    """Scored / asked per (dataset, context, interface) in first-seen order, failures by reason
    (:mod:`vlaudit.results.vca.coverage`)."""
    cells: dict[tuple[str, str, str], list[tuple[str, str | None]]] = {}
    for record in records:
        reason = None if record.status != "failed" else (record.error or "").split(":")[0]
        cells.setdefault((record.item.dataset or "", record.context, record.interface), []).append(
            (record.status, reason))
    return coverage_of([cell_of(*key, statuses) for key, statuses in cells.items()])


def failure_line(counts: ProblemCounts) -> str:
    """``3 failed (image file not found: 3), 2 skipped (context irre: 2)`` from :func:`problem_counts`."""
    def detail(mapping: Mapping[str, int], prefix: str = "") -> str:
        return f" ({', '.join(f'{prefix}{k}: {n}' for k, n in sorted(mapping.items()))})" if mapping else ""

    return (f"{counts['n_failed']} failed{detail(counts['failures_by_reason'])}, "
            f"{counts['n_skipped']} skipped{detail(counts['skipped_by_context'], 'context ')}")
