"""What does this benchmark give away? (``vlaudit giveaway``): text lints, the order-blind ceiling,
blind baselines under the benchmark's own metric, the blind-filtered subset, and a model's metric on full vs
filtered.

Formats (``fmt``): a registered compositionality suite's name (its reader and official metric), the labelled
pair formats of :mod:`vlaudit.sources.labelled_pairs` (``auto``, ``table``, ``sugarcrepe``,
``whatsup-controlled``, ``whatsup-spatial``, ``cycles``), the 2×2 benchmarks (``winoground``, ``naturalbench``,
``blocks``), ``vl-checklist`` (the release's ``[path, {POS, NEG}]`` items) and ``items`` (vlaudit's items JSONL,
:mod:`vlaudit.sources.items_jsonl`, what the filtered subset is written as; ``auto`` recognises it by its keys). Sources without a suite metric are
scored with the default (each positive above each negative of its image, strict ``>``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from vlaudit.analysis.giveaway.audit import BlindScores, blind_from_text_scores
from vlaudit.analysis.giveaway.audit import benchmark_giveaway as _benchmark
from vlaudit.analysis.giveaway.vca_blind import vca_blind_readings
from vlaudit.analysis.stats_options import StatsOptions, spreads_stats
from vlaudit.analysis.suites.registry import SUITES
from vlaudit.api.input_records import margins_file
from vlaudit.errors import InputError
from vlaudit.files import write_jsonl, write_result, write_table
from vlaudit.metrics.giveaway.metric import DEFAULT_METRIC, ItemMetric
from vlaudit.records import SuiteItem
from vlaudit.report.giveaway import csv_rows
from vlaudit.results.giveaway import GiveawayResult
from vlaudit.scoring.lm_texts import score_texts
from vlaudit.settings import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED
from vlaudit.sources.items_jsonl import is_items_jsonl, item_line, read_items_jsonl
from vlaudit.sources.labelled_pairs import FORMATS as PAIR_FORMATS
from vlaudit.sources.margins import read_margins
from vlaudit.sources.suite_items import block_items, pair_items, pair_scores, vl_checklist_items
from vlaudit.sources.two_by_two import BENCHMARKS as TWO_BY_TWO
from vlaudit.sources.two_by_two import read_two_by_two

if TYPE_CHECKING:  # torch and transformers load only when an LM is asked for
    from vlaudit.backends.hf.lm import CausalLmScorer

OTHER_FORMATS = ("vl-checklist", "items")


def giveaway_formats() -> tuple[str, ...]:
    """Every ``--format`` name: the pair formats, the 2×2 benchmarks, the others, the registered suites."""
    return (*PAIR_FORMATS, *TWO_BY_TWO, *OTHER_FORMATS, *SUITES)


def read_giveaway_items(path: str | Path, fmt: str = "auto", *, warnings: list[str] | None = None
                        ) -> tuple[str, list[SuiteItem], ItemMetric]:
    """(format, items, metric) of a benchmark file in ``fmt`` (see the module docstring)."""
    if fmt == "auto" and is_items_jsonl(path):
        fmt = "items"
    if fmt in SUITES:
        suite = SUITES[fmt]
        read = suite.read_file(path)
        if warnings is not None:
            warnings.extend(f"{path}: {note}" for note in read.notes)
        return fmt, list(read.items), ItemMetric(suite.name, suite.tie_rule, suite.outcomes, suite.aggregate)
    if fmt in TWO_BY_TWO:
        return fmt, block_items(read_two_by_two(fmt, path).blocks), DEFAULT_METRIC
    if fmt == "vl-checklist":
        return fmt, vl_checklist_items(path), DEFAULT_METRIC
    if fmt == "items":
        return fmt, read_items_jsonl(path), DEFAULT_METRIC
    if fmt in PAIR_FORMATS:
        detected, items = pair_items(path, fmt, warnings=warnings)
        return detected, items, DEFAULT_METRIC
    raise InputError(f"unknown format {fmt!r}; choose from {', '.join(giveaway_formats())}", field="--format")


def _lm_readings(items: Sequence[SuiteItem], lm: str | CausalLmScorer, *, out: Path, batch_size: int,
                 device: str) -> list[BlindScores]:
    texts = sorted({text for item in items for text in item.texts})
    scored = score_texts(lm, texts, cache=out / "lm_cache", batch_size=batch_size, device=device)
    spec = lm if isinstance(lm, str) else lm.spec
    raw = {t: s.logprob for t, s in zip(texts, scored, strict=True)}
    norm = {t: s.logprob / max(s.tokens, 1) for t, s in zip(texts, scored, strict=True)}
    return [blind_from_text_scores(items, raw, name="LM log p", kind="lm",
                                   description=f"{spec}: Σ log p(caption tokens)"),
            blind_from_text_scores(items, norm, name="LM log p / token", kind="lm",
                                   description=f"{spec}: mean log p per token (VALSE's perplexity rule)")]


def _stem(path: str | Path, taken: set[str]) -> str:
    stem = Path(str(path)).stem or "benchmark"
    name, k = stem, 1
    while name in taken:
        k += 1
        name = f"{stem}-{k}"
    taken.add(name)
    return name


@spreads_stats(resamples="resamples", seed="seed")
def benchmark_giveaway(files: Sequence[str | Path], *, out: str | Path, fmt: str = "auto",
                       lm: str | CausalLmScorer | None = None, vca: Sequence[str | Path] = (),
                       classifier: bool = True, folds: int = 5, scores: str | Path | None = None,
                       batch_size: int = 16, device: str = "cpu", seed: int = BOOTSTRAP_SEED,
                       resamples: int = BOOTSTRAP_RESAMPLES,
                       stats: StatsOptions | None = None) -> GiveawayResult:
    """What each benchmark file gives away (see the module docstring). Writes into ``out``: ``giveaway.json``
    (:class:`~vlaudit.results.giveaway.GiveawayResult`), ``giveaway.csv`` (one row per file), and per file
    ``STEM.items.csv`` (which reading solves each item, why it is flagged, whether it is kept) and
    ``STEM.filtered.jsonl`` (the blind-filtered subset, vlaudit's items JSONL) when a blind baseline ran
    (``classifier``, or ``lm``: an ``hf-lm:`` causal LM spec, or one loaded already). ``scores`` (one file
    only): a model's scores table, reported on the full set vs the filtered subset, paired. ``vca``: ``vca
    score`` run folders or margins files of an MLLM benchmark, whose ``text`` context is read as its blind
    reading (:mod:`vlaudit.analysis.giveaway.vca_blind`).
    ``stats``: ``resamples``, ``seed`` as one :class:`~vlaudit.StatsOptions` record instead (checked as built;
    its fields, defaults included, replace those keywords; giving both is refused)."""
    if not files and not vca:
        raise InputError("give a benchmark file or a VCA run (--vca)", field="FILES")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if scores is not None and len(files) != 1:
        raise InputError("a scores table goes with one benchmark file", field="--scores")
    warnings: list[str] = []
    benchmarks = []
    taken: set[str] = set()
    for path in files:
        detected, items, metric = read_giveaway_items(path, fmt, warnings=warnings)
        if not items:
            raise InputError("no items", path=path)
        stem = _stem(path, taken)
        blind = _lm_readings(items, lm, out=out, batch_size=batch_size, device=device) if lm else []
        model = (str(scores), pair_scores(items, scores)) if scores is not None else None
        filtered_name = f"{stem}.filtered.jsonl"
        notes = [] if classifier or lm else ["no blind baseline ran (--classifier, --lm): no filtered subset"]
        result = _benchmark(items, file=str(path), fmt=detected, metric=metric, classifier=classifier, folds=folds,
                            blind=blind, model_scores=model, filtered_path=filtered_name, seed=seed,
                            n_resamples=resamples, notes=notes)
        write_table(out / f"{stem}.items.csv", result.rows)
        if result.record.filtered is not None:
            write_jsonl(out / filtered_name, (item_line(it) for it, k in zip(items, result.kept, strict=True) if k))
        benchmarks.append(result.record)
    readings = []
    for run in vca:
        found, notes = vca_blind_readings(read_margins(margins_file(run)), source=str(run), n_resamples=resamples,
                                          seed=seed)
        readings += found
        warnings += notes
    record = GiveawayResult(benchmarks=benchmarks, resamples=resamples, seed=seed, warnings=warnings,
                            vca=readings)
    write_result(out / "giveaway.json", record)
    write_table(out / "giveaway.csv", csv_rows(record))
    return record
