"""One benchmark's giveaway: lints, the order-blind ceiling, blind baselines under its metric, the blind filter.

:func:`benchmark_giveaway` takes the items (any source, as :class:`~vlaudit.records.SuiteItem`), the metric
(a registered suite's, or :data:`~vlaudit.metrics.giveaway.metric.DEFAULT_METRIC`), the blind per-pair scores
computed elsewhere (a causal LM's log p, a VCA text-only reading) and optionally a model's scores, and returns
the typed record plus the per-item table and the filtered mask. The **blind-filtered subset** is the items that
no blind *baseline* (the cross-fitted classifier, the LM readings, any given blind scores) solves; the
order-blind ceiling and the in-sample rules are lints, not baselines, and do not filter.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from vlaudit.analysis.giveaway.classifier import classifier_scores
from vlaudit.metrics.giveaway import lints
from vlaudit.metrics.giveaway.metric import DEFAULT_METRIC, ItemMetric, Rate, item_rates, paired_difference
from vlaudit.metrics.giveaway.table import PairTable
from vlaudit.records import SuiteItem
from vlaudit.results.giveaway import (
    BenchmarkGiveaway,
    BlindBaseline,
    FilteredSubset,
    FlaggedItem,
    GiveawayLints,
    GiveawayRate,
    ModelOnFiltered,
    SideTokenRow,
    WordShift,
)
from vlaudit.results.missing import Missing
from vlaudit.settings import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

NO_OUTCOME = "no item has an outcome under the metric"
SHOWN_IDS = 20


@dataclass(frozen=True)
class BlindScores:
    """A blind reading computed outside (a causal LM, a VCA text-only context): per-pair scores."""

    name: str
    kind: str
    description: str
    scores: np.ndarray


@dataclass(frozen=True)
class Giveaway:
    """The record, the per-item rows (id, subset, solved by each reading, flags, kept) and the kept mask."""

    record: BenchmarkGiveaway
    rows: list[dict[str, object]]
    kept: np.ndarray


def _float(value: float) -> float | Missing:
    return value if math.isfinite(value) else Missing(NO_OUTCOME)


def rate_record(rate: Rate) -> GiveawayRate:
    """A :class:`Rate` as its record (NaN → Missing)."""
    if not math.isfinite(rate.value):
        return GiveawayRate(Missing(NO_OUTCOME), Missing(NO_OUTCOME), rate.n)
    interval = ((rate.low, rate.high) if math.isfinite(rate.low) and math.isfinite(rate.high)
                else Missing("no interval"))
    return GiveawayRate(rate.value, interval, rate.n)


def _lints_record(table: PairTable, metric: ItemMetric, rates: Sequence[Rate]) -> tuple[GiveawayLints, list]:
    bow = lints.bow_identical(table)
    tv = lints.unigram_tv(table)
    length = lints.length_difference(table)
    tokens = lints.one_side_tokens(table)
    dup = lints.duplicates(table)
    record = GiveawayLints(
        negatives=bow.negatives, bow_flagged=bow.flagged, bow_design=bow.design, bow_items_flagged=bow.items_flagged,
        unigram_tv=tv.tv, positive_words=[WordShift(w, s) for w, s in tv.positive_words],
        negative_words=[WordShift(w, s) for w, s in tv.negative_words],
        length_comparisons=length.comparisons, length_mean=_float(length.mean),
        length_quantiles=[q if math.isfinite(q) else None for q in length.quantiles],
        length_longer=_float(length.longer), length_shorter=_float(length.shorter),
        length_equal=_float(length.equal), length_histogram={str(k): v for k, v in length.histogram.items()},
        side_tokens=[SideTokenRow(t.token, t.side, t.pairs, t.share) for t in tokens],
        side_token_rule=rate_record(rates[0]), longer_wins=rate_record(rates[1]), shorter_wins=rate_record(rates[2]),
        duplicate_items=dup.duplicate_items, identical_positive_negative=dup.identical,
        labelled_both_ways=dup.labelled_both_ways)
    return record, bow.flags + dup.flags


def _flag_record(table: PairTable, flag: lints.Flag) -> FlaggedItem:
    item = table.items[flag.item]
    positive = item.texts[flag.positive] if flag.positive >= 0 else ""
    negative = item.texts[flag.negative] if flag.negative >= 0 else ""
    return FlaggedItem(item.item_id, item.subset, positive, negative, flag.why)


def benchmark_giveaway(items: Sequence[SuiteItem], *, file: str, fmt: str, metric: ItemMetric = DEFAULT_METRIC,
                       classifier: bool = True, folds: int = 5, blind: Sequence[BlindScores] = (),
                       model_scores: tuple[str, np.ndarray] | None = None, filtered_path: str | None = None,
                       seed: int = BOOTSTRAP_SEED, n_resamples: int = BOOTSTRAP_RESAMPLES,
                       flagged_shown: int = 200, notes: Sequence[str] = ()) -> Giveaway:
    """See the module docstring. ``blind`` and ``model_scores`` hold per-pair scores in the
    :class:`~vlaudit.metrics.giveaway.table.PairTable` order of ``items``."""
    table = PairTable.from_items(items)
    tokens = lints.one_side_tokens(table)
    lengths = lints.word_lengths(table)
    readings: list[BlindScores] = [BlindScores("order-blind ceiling", "ceiling", "oracle constant on (image, bag "
                                               "of words) classes", lints.order_blind_oracle(table))]
    if classifier:
        readings.append(BlindScores("caption classifier", "classifier", f"BoW + length logistic regression, "
                                    f"{folds}-fold cross-fitted over items", classifier_scores(table, folds=folds,
                                                                                               seed=seed)))
    readings += list(blind)
    rules = [table.text_scores(lints.side_token_scores(table, tokens)), table.text_scores(lengths),
             table.text_scores(-lengths)]
    solved = np.stack([metric.solved(table, s) for s in [r.scores for r in readings] + rules], axis=1)
    rates = item_rates(solved, n_resamples=n_resamples, seed=seed)
    lint_record, flags = _lints_record(table, metric, rates[len(readings):])
    baselines = []
    for c, reading in enumerate(readings):
        hit = np.flatnonzero(solved[:, c] == 1.0)
        baselines.append(BlindBaseline(reading.name, reading.kind, reading.description, rate_record(rates[c]),
                                       metric.official(table, reading.scores), int(hit.size),
                                       [items[k].item_id for k in hit[:SHOWN_IDS]]))
    filtering = [c for c, r in enumerate(readings) if r.kind != "ceiling"]
    kept = ~np.any(solved[:, filtering] == 1.0, axis=1) if filtering else np.ones(len(items), dtype=bool)
    filtered = None
    if filtering and filtered_path is not None:
        filtered = FilteredSubset(filtered_path, int(kept.sum()), int((~kept).sum()),
                                  [readings[c].name for c in filtering])
    model = None
    if model_scores is not None:
        values = metric.solved(table, model_scores[1])
        full, kept_rate, diff = paired_difference(values, kept, n_resamples=n_resamples, seed=seed)
        model = ModelOnFiltered(model_scores[0], rate_record(full), rate_record(kept_rate), rate_record(diff),
                                metric.official(table, model_scores[1]),
                                metric.official(table, model_scores[1], kept))
    why_of: dict[int, list[str]] = {}
    for flag in flags:
        why_of.setdefault(flag.item, []).append(flag.why)
    rows: list[dict[str, object]] = [{"id": it.item_id, "subset": it.subset,
             **{f"solved_{r.kind if r.kind != 'lm' else r.name}": _cell(solved[k, c]) for c, r in enumerate(readings)},
             "flags": "; ".join(why_of.get(k, [])), "kept": bool(kept[k])} for k, it in enumerate(items)]
    record = BenchmarkGiveaway(
        file=file, format=fmt, metric=metric.name, tie_rule=metric.tie_rule, items=len(items), pairs=table.n_pairs,
        positives=int((table.label == 1).sum()), negatives=int((table.label == 0).sum()), lints=lint_record,
        baselines=baselines, flagged=[_flag_record(table, f) for f in flags[:flagged_shown]],
        flagged_total=len(flags), notes=list(notes), filtered=filtered, model=model)
    return Giveaway(record, rows, kept)


def _cell(value: float) -> int | None:
    return None if math.isnan(value) else int(value)


def blind_from_text_scores(items: Sequence[SuiteItem], per_text: Mapping[str, float], *, name: str, kind: str,
                           description: str) -> BlindScores:
    """A text-only reading given as a score per text as written (an LM's log p): per-pair scores."""
    table = PairTable.from_items(items)
    flat = np.array([per_text[text] for item in items for _ in item.images for text in item.texts],
                    dtype=np.float64)
    if flat.size != table.n_pairs:  # pragma: no cover - the row-major layout is the table's
        raise AssertionError("pair layout mismatch")
    return BlindScores(name, kind, description, flat)
