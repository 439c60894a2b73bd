"""``vca generate-check``: greedy generation under the run's own prompts, against the run's margin decisions.

The sample is drawn as in :mod:`vlaudit.scoring.stability` (seeded items, every context and interface; the
run re-planned over all its items so that each unit has the run's cache key, and its margin is read from the
run's cache). Every sampled unit is decoded greedily twice: with the scoring prompt (ending in "Answer:")
and without that prefix (``prompt`` = ``with-prefix`` / ``without-prefix``). Answers are parsed with the
interface's answer words (:mod:`vlaudit.metrics.vca.generation`); every raw text is kept in
``generations.jsonl``. Generations are cached in ``OUT/generate-cache/`` (sealed chunks keyed by sha256(unit,
prompt form, max_new_tokens)) under a lock on OUT, so a killed run resumes; ``generate_check.json`` is written
atomically into OUT and the run folder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from vlaudit.backends.base import ANSWER_WORDS, GeneratingBackend
from vlaudit.errors import InputError
from vlaudit.files import write_jsonl, write_result
from vlaudit.hashing import sha256_json
from vlaudit.metrics.vca.generation import agreement_summary, margin_decision, parse_answer
from vlaudit.results.vca.checks import GenerateSample
from vlaudit.results.vca.outputs import GenerateCheckResult, GenerationCheck
from vlaudit.results.versioned import record_from_dict, to_json
from vlaudit.scoring.run.cache import ChunkCache
from vlaudit.scoring.run.folder import run_lock
from vlaudit.scoring.run.shards import UnitTask, render_requests
from vlaudit.scoring.stability import answer_margin, check_same_model, plan_sample, top_option
from vlaudit.sources.images import ImageStore
from vlaudit.sources.items import BenchmarkItem, option_letters

GENERATE_FILE = "generate_check.json"
CACHE_DIR = "generate-cache"
PROMPT_FORMS = {"with-prefix": True, "without-prefix": False}


def answer_words(interface: str, item: BenchmarkItem) -> tuple[str, ...]:
    """The answers of an (item, interface): the interface's two answer words (yes/no, true/false), or the
    item's option letters under the letter interface."""
    if interface in ANSWER_WORDS:
        return ANSWER_WORDS[interface]
    return tuple(option_letters(len(item.options or ())))


def margin_answer(hit: Mapping[str, Any], answers: Sequence[str]) -> tuple[str, float]:
    """(the run's decision, its margin) from a cache record (:func:`vlaudit.scoring.stability.answer_margin`):
    the positive word iff m ≥ 0 (VCA §3), or the letter of the largest log p."""
    margin = answer_margin(hit)
    top = top_option(hit)
    if top is not None:
        return answers[top], margin
    return margin_decision(margin, answers[0], answers[1]), margin


def _key(unit_key: str, form: str, max_new_tokens: int) -> str:
    return sha256_json({"unit": unit_key, "prompt": form, "max_new_tokens": max_new_tokens})


def run_generate_check(backend: Any, items: Sequence[BenchmarkItem], manifest: Mapping[str, Any], *,
                       run_dir: str | Path, images_dir: str | Path, out_dir: str | Path, sample: int | None,
                       seed: int, max_new_tokens: int, chunk_size: int = 64,
                       on_progress: Callable[[str, int, int], None] | None = None) -> GenerateCheckResult:
    """Decode, parse and compare (see the module docstring); ``sample=None`` checks every item."""
    generates = isinstance(backend, GeneratingBackend)  # kept apart: narrowing would hide the rest of its members
    if not generates:
        raise InputError(f"{backend.spec} cannot generate text (it scores margins only, as the planted ref: "
                         "models do); generate-check needs a model that decodes, e.g. hf:DIR", field="--model")
    window = backend.context_length()
    if window is not None and max_new_tokens > window:  # refused, not run for hours
        raise InputError(f"{max_new_tokens} new tokens cannot fit {backend.spec}'s window of {window} positions; "
                         f"give at most {window} (the answer word comes first: the default is 8)",
                         field="--max-new-tokens")
    run, out = Path(run_dir), Path(out_dir)
    interfaces = list(manifest["interfaces"])
    backend.prepare(items, images_dir, interfaces)
    check_same_model(backend, manifest, interfaces, run)
    store = ImageStore(images_dir)
    chosen, records, units, hits = plan_sample(backend, items, manifest, store, run,
                                                  len(items) if sample is None else sample, seed)
    ordered = sorted(units, key=lambda u: (u.image_sha256 or "", u.key))
    with run_lock(out):
        cache = ChunkCache(out / CACHE_DIR)
        cache.load()
        scored = 0
        for form, with_prefix in PROMPT_FORMS.items():
            todo = [u for u in ordered if _key(u.key, form, max_new_tokens) not in cache.records]
            for start in range(0, len(todo), chunk_size):
                chunk = todo[start:start + chunk_size]
                results = backend.generate(render_requests(store, [UnitTask.of(u) for u in chunk],
                                                           int(manifest.get("seed", 0))),
                                           max_new_tokens, answer_prefix=with_prefix)
                cache.append([{"key": _key(r.key, form, max_new_tokens), "unit": r.key, "prompt": form,
                               "text": r.text, "n_new_tokens": r.n_new_tokens} for r in results])
                scored += len(chunk)
                if on_progress:
                    on_progress(form, start + len(chunk), len(todo))
        rows = []
        for record in records:
            answers = answer_words(record.interface, record.item)
            decided, margin = margin_answer(hits[str(record.key)], answers)
            for form in PROMPT_FORMS:
                hit = cache.records[_key(str(record.key), form, max_new_tokens)]
                answer, position = parse_answer(str(hit["text"]), {a: a for a in answers})
                rows.append({"item_id": record.item.item_id, "context": record.context,
                             "interface": record.interface, "prompt": form, "margin": margin,
                             "margin_answer": decided, "answers": list(answers), "text": hit["text"],
                             "generated_answer": answer, "answer_word_index": position})
        rows.sort(key=lambda r: (r["item_id"], r["context"], r["interface"], r["prompt"]))
        result = GenerateCheckResult(
            model=str(manifest.get("model") or backend.spec), spec=backend.spec, run=str(run.resolve()),
            sample=GenerateSample(n_items=len(chosen), seed=seed, requested=sample, n_units=len(units),
                                  n_records=len(records), generated_now=scored),
            max_new_tokens=max_new_tokens,
            checks=[record_from_dict(GenerationCheck, to_json(check), path=out) for check in _checks(rows)])
        write_jsonl(out / "generations.jsonl", rows)
        write_result(out / GENERATE_FILE, result)
    if out.resolve() != run.resolve():
        with run_lock(run):
            write_result(run / GENERATE_FILE, result)
    return result


def _checks(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (context, interface, prompt form): the agreement summary and the disagreements."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["context"], row["interface"], row["prompt"]), []).append(row)
    out = []
    for (context, interface, form), members in sorted(groups.items()):
        answers = list(dict.fromkeys(a for r in members for a in r["answers"]))
        summary = agreement_summary([(r["margin_answer"], r["generated_answer"]) for r in members], answers)
        disagreements = [{"item_id": r["item_id"], "margin": r["margin"], "margin_answer": r["margin_answer"],
                          "generated_answer": r["generated_answer"], "text": r["text"]}
                         for r in members if r["generated_answer"] not in (None, r["margin_answer"])]
        out.append({"context": context, "interface": interface, "prompt": form, **summary,
                    "disagreements": disagreements})
    return out
