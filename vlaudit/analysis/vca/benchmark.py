"""The benchmarks' own figures of one run, beside its audit (``vca.json`` ``runs[].benchmark``).

From the run's headline items (:class:`vlaudit.analysis.vca.events.RunEvents`) and the metadata the
benchmark readers carry into the margins table (``category``, MME's ``image_pair``, CircularEval's
``circular_id`` and ``rotation``), with the definitions of :mod:`vlaudit.metrics.vca.benchmark_figures`:

* ``mmstar``: Acc with the image, Acc under the ``text`` context and MG = their difference (MMStar §4); with
  a text-only run of a base LLM on the same dataset and interface in the table (only ``text`` rows), its
  accuracy ``acc_llm`` and the leakage ML = max(0, Acc_text − acc_llm) (:func:`add_leakage`);
* ``categories``: n, Acc, Dep, D-CC, C-U per category (VCA §12 within each);
* ``pope`` (categorised yes/no runs): accuracy, precision, recall, F1, yes-ratio, overall and per category;
* ``mme`` (categorised yes/no runs with image pairs): acc, acc+ and score, overall and per category (MME subtask);
* ``circular`` (runs with rotations): CircularEval accuracy and "credited in every rotation".

Each figure is present only when the run has what it needs (labels, a text context, the metadata).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from vlaudit.analysis.vca import choice_run
from vlaudit.analysis.vca.events import RunEvents
from vlaudit.metrics.vca import benchmark_figures as figures
from vlaudit.metrics.vca import choice, support
from vlaudit.sources.margins import MarginRun


def _column(ev: RunEvents, name: str) -> np.ndarray | None:
    values = ev.run.extra.get(name)
    if values is None or all(v is None for v in values):
        return None
    return np.array([None if v is None else v for v in values], dtype=object)


def text_correct(ev: RunEvents) -> np.ndarray | None:
    """Whether the model's answer under the ``text`` context is the gold one (None without either)."""
    run = ev.run
    if ev.correct is None or "text" not in run.margins or not run.available("text").all():
        return None
    if run.choices is not None:
        return choice.predicted_option(run.choices.logp["text"]) == choice_run.gold_index(run.choices)
    assert run.labels is not None
    return support.correctness(support.prediction_direction(run.margins["text"]), run.labels)


def benchmark_figures(ev: RunEvents) -> dict[str, Any]:
    """Every benchmark figure the run supports (see the module docstring)."""
    out: dict[str, Any] = {}
    correct = ev.correct
    blind = text_correct(ev)
    if correct is not None and blind is not None:
        acc, acc_text = float(correct.mean()), float(blind.mean())
        out["mmstar"] = {"acc_image": acc, "acc_text": acc_text, "mg": figures.multimodal_gain(acc, acc_text)}
    categories = _column(ev, "category")
    if categories is not None:
        named = np.array(["(none)" if c is None else str(c) for c in categories], dtype=object)
        out["categories"] = figures.category_credit(named, correct, ev.dep)
    else:
        named = None
    if ev.run.choices is None and correct is not None and named is not None:  # POPE, MME: categorised yes/no
        assert ev.run.labels is not None
        predicted_yes, gold = ev.direction > 0, ev.run.labels
        out["pope"] = [{"category": "all"} | figures.yes_no_figures(predicted_yes, gold)]
        if named is not None:
            out["pope"] += [{"category": c} | figures.yes_no_figures(predicted_yes[named == c], gold[named == c])
                            for c in sorted(set(named.tolist()))]
        pairs = _column(ev, "image_pair")
        if pairs is not None:
            assert correct is not None
            out["mme"] = [{"category": "all"} | figures.mme_figures(correct, pairs)]
            if named is not None:
                out["mme"] += [{"category": c} | figures.mme_figures(correct[named == c], pairs[named == c])
                               for c in sorted(set(named.tolist()))]
    bases, rotations = _column(ev, "circular_id"), _column(ev, "rotation")
    if correct is not None and bases is not None and rotations is not None:
        out["circular"] = figures.circular_figures(bases, [int(r or 0) for r in rotations], correct, ev.dep)
    return out


def is_text_only(run: MarginRun) -> bool:
    """A run scored without images at all (a base LLM): only the ``text`` context."""
    return tuple(run.margins) == ("text",)


def blind_accuracy(run: MarginRun) -> float | None:
    """Accuracy of a text-only run's answers (None without labels)."""
    if run.choices is not None:
        if run.choices.gold is None:
            return None
        predicted = choice.predicted_option(run.choices.logp["text"])
        return float((predicted == choice_run.gold_index(run.choices)).mean())
    if run.labels is None:
        return None
    return float(support.correctness(support.prediction_direction(run.margins["text"]), run.labels).mean())


def add_leakage(figures_of_run: dict[str, Any], run: MarginRun, text_llms: Sequence[MarginRun]) -> None:
    """MMStar's ML = max(0, Acc_text − Acc_LLM) into the run's ``benchmark.mmstar`` figures when a text-only
    run of the same dataset and interface exists (MMStar §4); the first such run is the base LLM."""
    gain = figures_of_run.get("mmstar")
    llm = next((r for r in text_llms if (r.dataset, r.interface) == (run.dataset, run.interface)), None)
    acc_llm = None if llm is None else blind_accuracy(llm)
    if gain is not None and llm is not None and acc_llm is not None:
        gain |= {"llm": llm.model, "acc_llm": acc_llm, "ml": figures.multimodal_leakage(gain["acc_text"], acc_llm)}
