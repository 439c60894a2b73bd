"""The benchmarks' own figures of one run, beside its audit (``vca.json`` ``runs[].benchmark``).

From the run's headline items (:class:`vlaudit.analysis.vca.events.RunEvents`) and the metadata the
benchmark readers carry into the margins table (``category``, ``l2_category``, MME's ``image_pair``,
CircularEval's ``circular_id`` and ``rotation``), with the definitions of
:mod:`vlaudit.metrics.vca.benchmark_figures`. A benchmark's figures are computed only on that benchmark's runs
(the run's ``dataset`` is the reader's name), so a POPE run never shows MMStar's MG:

* ``mmstar`` (``dataset`` mmstar): Acc with the image, Acc under the ``text`` context and MG = their
  difference (MMStar §4); per capability and l2 axis (``axes``); with ``base_llm`` naming the text-only run of
  the LVLM's base LLM, its accuracy on the LVLM's items ``acc_llm`` and ML = max(0, Acc_text − acc_llm)
  (:func:`add_leakage`), else ML is ``Missing(reason)`` (written as ``ml_reason``);
* ``pope`` (``dataset`` pope): accuracy, precision, recall, F1, yes-ratio, overall and per category;
* ``mme`` (``dataset`` mme, with image pairs): acc, acc+ and score per subtask, the official totals
  Perception and Cognition (sums of subtask scores), and vlaudit's own pooled row (``pooled``);
* ``hallusionbench`` (``dataset`` hallusionbench): aAcc, fAcc, qAcc overall, per category (VD/VS) and per
  subcategory;
* ``circular`` (any run with rotations): CircularEval accuracy, per rotation and per category, and "credited
  in every rotation";
* ``blind`` (any other labelled run with a ``text`` context): vlaudit's own Acc with and without the image;
* ``categories``: n, Acc, Dep, D-CC, C-U per category (VCA §12 within each).

Each section (a record of :mod:`vlaudit.results.vca.benchmark`) is present only when the run has what it needs
(labels, a text context, the metadata); a 0/0 figure in it is ``Missing(reason)`` (:data:`WHY`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from vlaudit.analysis.vca import choice_run
from vlaudit.analysis.vca.events import RunEvents
from vlaudit.errors import InputError
from vlaudit.metrics.vca import benchmark_figures as figures
from vlaudit.metrics.vca import choice, support
from vlaudit.results.missing import Missing
from vlaudit.results.vca.benchmark import (
    POOLED,
    BenchmarkFigures,
    BlindGain,
    CategoryCredit,
    CircularCategory,
    CircularFigures,
    HallusionRow,
    IncompleteQuestion,
    MmeFigures,
    MmeSubtask,
    MmeTotal,
    MmstarAxis,
    MmstarGain,
    RotationFigures,
    YesNoFigures,
)
from vlaudit.sources.margins import MarginRun

#: why a 0/0 figure is not a number, per figure (the benchmarks' own scorers print 0 or fail there)
WHY = {"accuracy": "no questions", "precision": "no \"yes\" answer", "recall": "no \"yes\" question",
       "f1": "no precision or recall", "yes_ratio": "no questions", "acc": "no questions",
       "acc_plus": "no image with both questions", "score": "no acc+", "aacc": "no questions",
       "facc": "no figures", "qacc": "no questions", "circular_acc": "no question with a rotation-0 row",
       "credited_every_rotation": "no question with a rotation-0 row"}


def _figures(row: Mapping[str, Any]) -> dict[str, Any]:
    """A metrics row with each 0/0 figure (None) as Missing saying why."""
    return {k: Missing(WHY[k]) if v is None and k in WHY else v for k, v in row.items()}


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


def _per_category(named: np.ndarray, compute: Any, *arrays: np.ndarray) -> list[dict[str, Any]]:
    return [{"category": c} | compute(*(a[named == c] for a in arrays)) for c in sorted(set(named.tolist()))]


def _mme(correct: np.ndarray, pairs: np.ndarray, named: np.ndarray) -> MmeFigures:
    subtasks = _per_category(named, figures.mme_figures, correct, pairs)
    return MmeFigures(subtasks=[MmeSubtask(**_figures(row)) for row in subtasks],
                      totals=[MmeTotal(**row) for row in figures.mme_totals(
                          {row["category"]: row["score"] for row in subtasks})],
                      pooled=MmeSubtask(**_figures({"category": POOLED} | figures.mme_figures(correct, pairs))))


def _hallusion_keys(ev: RunEvents, named: np.ndarray) -> tuple[list[str], list[str]] | None:
    """Each item's figure (subcategory, set, figure) and question (subcategory, set, question) from the ids the
    HallusionBench reader writes (``hallusionbench-{category}-{subcategory}-{set}-{figure}-{question}``)."""
    figure_keys, question_keys = [], []
    for item_id, category in zip(ev.run.item_ids, named, strict=True):
        prefix = "hallusionbench-" + str(category).replace("/", "-", 1) + "-"
        parts = str(item_id)[len(prefix):].split("-") if str(item_id).startswith(prefix) else []
        if len(parts) != 3:
            return None
        subcategory = str(category).split("/", 1)[-1]
        figure_keys.append(f"{subcategory}_{parts[0]}_{parts[1]}")
        question_keys.append(f"{subcategory}_{parts[0]}_{parts[2]}")
    return figure_keys, question_keys


def _hallusion(ev: RunEvents, correct: np.ndarray, named: np.ndarray) -> list[HallusionRow] | None:
    keys = _hallusion_keys(ev, named)
    if keys is None:
        return None
    fig, que = np.array(keys[0], dtype=object), np.array(keys[1], dtype=object)
    top = np.array([str(c).split("/", 1)[0] for c in named], dtype=object)
    sub = np.array([str(c).split("/", 1)[-1] for c in named], dtype=object)
    rows = [{"split": "Overall", "level": "overall"} | figures.hallusion_figures(correct, fig, que)]
    for level, names in (("category", top), ("subcategory", sub)):
        rows += [{"split": c, "level": level} | figures.hallusion_figures(correct[names == c], fig[names == c],
                                                                          que[names == c])
                 for c in sorted(set(names.tolist()))]
    return [HallusionRow(**_figures(row)) for row in rows]


def _circular(ev: RunEvents, named: np.ndarray | None) -> CircularFigures | None:
    bases, rotations = _column(ev, "circular_id"), _column(ev, "rotation")
    if ev.correct is None or bases is None or rotations is None:
        return None
    n_options = None if ev.run.choices is None else ev.run.choices.n_options
    c = figures.circular_figures(bases, [_rotation(r) for r in rotations], ev.correct, ev.dep, named, n_options)
    per_category = c.get("per_category")
    return CircularFigures(
        n_items=c["n_items"], n_dropped=c["n_dropped"], dropped=c["dropped"], n_incomplete=c["n_incomplete"],
        incomplete=[IncompleteQuestion(**g) for g in c["incomplete"]],
        circular_acc=_figures(c)["circular_acc"], credited_every_rotation=_figures(c)["credited_every_rotation"],
        per_rotation=[RotationFigures(**r) for r in c["per_rotation"]],
        per_category=None if per_category is None else [
            CircularCategory(**_figures(r)) for r in per_category])


def benchmark_figures(ev: RunEvents) -> BenchmarkFigures:
    """Every benchmark figure the run supports (see the module docstring); MMStar's ML is Missing until
    :func:`add_leakage` adds it."""
    out: dict[str, Any] = {}
    dataset, correct, blind = ev.run.dataset, ev.correct, text_correct(ev)
    if correct is not None and blind is not None:
        acc, acc_text = float(correct.mean()), float(blind.mean())
        mg = figures.multimodal_gain(acc, acc_text)
        out |= ({"mmstar": MmstarGain(acc_image=acc, acc_text=acc_text, mg=mg)} if dataset == "mmstar"
                else {"blind": BlindGain(acc_image=acc, acc_text=acc_text, mg=mg)})
    categories = _column(ev, "category")
    named = None if categories is None else np.array(["(none)" if c is None else str(c) for c in categories],
                                                     dtype=object)
    if named is not None:
        out["categories"] = [CategoryCredit(**row) for row in figures.category_credit(named, correct, ev.dep)]
    axes = _column(ev, "l2_category")
    if dataset == "mmstar" and correct is not None and named is not None and axes is not None:
        out["mmstar_axes"] = [MmstarAxis(**row) for row in figures.mmstar_axes(
            correct, named, ["(none)" if a is None else a for a in axes])]
    if ev.run.choices is None and correct is not None and named is not None:
        assert ev.run.labels is not None
        predicted_yes, gold = ev.direction > 0, ev.run.labels
        if dataset == "pope":
            out["pope"] = [YesNoFigures(**_figures(row)) for row in (
                [{"category": "all"} | figures.yes_no_figures(predicted_yes, gold)]
                + _per_category(named, figures.yes_no_figures, predicted_yes, gold))]
        pairs = _column(ev, "image_pair")
        if dataset == "mme" and pairs is not None:
            out["mme"] = _mme(correct, pairs, named)
        if dataset == "hallusionbench":
            out["hallusionbench"] = _hallusion(ev, correct, named)
    out["circular"] = _circular(ev, named)
    return BenchmarkFigures(**out)


def _rotation(value: object) -> int | None:
    """A rotation cell as a whole number; an empty one (None, NaN from a CSV) is no rotation."""
    if isinstance(value, (int, float, np.integer, np.floating)) and np.isfinite(value):
        return int(value)
    return int(value) if isinstance(value, str) and value.strip().isdigit() else None


def is_text_only(run: MarginRun) -> bool:
    """A run scored without images at all (a base LLM): only the ``text`` context."""
    return tuple(run.margins) == ("text",)


def _text_answers_correct(run: MarginRun) -> np.ndarray | None:
    """Per item, whether a text-only run's answer is the gold one (None without labels)."""
    if run.choices is not None:
        if run.choices.gold is None:
            return None
        return choice.predicted_option(run.choices.logp["text"]) == choice_run.gold_index(run.choices)
    if run.labels is None:
        return None
    return support.correctness(support.prediction_direction(run.margins["text"]), run.labels)


def base_llm_of(run: MarginRun, base_llms: Mapping[str, str]) -> str | None:
    """The base LLM named for ``run``'s model (``base_llms``: LVLM → LLM, ``"*"`` for every LVLM)."""
    return base_llms.get(run.model, base_llms.get("*"))


def check_base_llms(base_llms: Mapping[str, str], runs: Sequence[MarginRun], text_llms: Sequence[MarginRun]) -> None:
    """Refuse a base LLM that no text-only run is, or an LVLM the margins do not hold (one line each)."""
    llms = sorted({r.model for r in text_llms})
    lvlms = {r.model for r in runs}
    for lvlm, llm in base_llms.items():
        if llm not in llms:
            raise InputError(f"base LLM {llm!r} is no text-only run in the margins (text-only runs: "
                             f"{', '.join(llms) or 'none'})", field="base_llm")
        if lvlm != "*" and lvlm not in lvlms:
            raise InputError(f"{lvlm!r} is no model in the margins (models: {', '.join(sorted(lvlms))})",
                             field="base_llm")


def add_leakage(figures_of_run: BenchmarkFigures, run: MarginRun, text_llms: Sequence[MarginRun],
                base_llms: Mapping[str, str]) -> BenchmarkFigures:
    """The run's figures with MMStar's ML = max(0, S_wv − S_t) (MMStar §4), S_t the accuracy of the base LLM
    named for this LVLM (``base_llms``) on the LVLM's own items (same dataset and interface); without one, or
    when it lacks some of the items, ML is Missing saying why. Figures without ``mmstar`` are returned as
    they are."""
    gain = figures_of_run.mmstar
    if gain is None:
        return figures_of_run
    name = base_llm_of(run, base_llms)
    if name is None:
        return replace(figures_of_run, mmstar=replace(gain, ml=Missing(
            "ML needs the base LLM's text-only run: name it with --base-llm"
            + (f" (text-only runs here: {', '.join(sorted({r.model for r in text_llms}))})" if text_llms else ""))))
    llm = next((r for r in text_llms if r.model == name and (r.dataset, r.interface) == (run.dataset, run.interface)),
               None)
    correct = None if llm is None else _text_answers_correct(llm)
    if llm is None or correct is None:
        return replace(figures_of_run, mmstar=replace(gain, ml=Missing(
            f"{name} has no labelled text-only run on {run.dataset} ({run.interface})")))
    where = {item: k for k, item in enumerate(llm.item_ids)}
    missing = [item for item in run.item_ids if item not in where]
    if missing:
        return replace(figures_of_run, mmstar=replace(gain, ml=Missing(
            f"{name} scored {run.n - len(missing)} of the LVLM's {run.n} items (e.g. {missing[0]})")))
    acc_llm = float(correct[[where[item] for item in run.item_ids]].mean())
    return replace(figures_of_run, mmstar=replace(gain, llm=name, acc_llm=acc_llm,
                                                  ml=figures.multimodal_leakage(gain.acc_text, acc_llm)))
