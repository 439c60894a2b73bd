"""The per-item and per-group rows of the VCA report (``items.csv``, ``groups.csv``; VCA §3, §13), which the
edits analysis and the HTML galleries read."""

from __future__ import annotations

from typing import Any

import numpy as np

from vlaudit.analysis.vca import choice_run
from vlaudit.analysis.vca.events import RunEvents


def item_rows(ev: RunEvents) -> list[dict[str, Any]]:
    """``items.csv`` rows: model, dataset, interface, item_id, group_id, label, pred, correct, g_img, dep, dcc,
    cu, wrong_dep (label-dependent fields empty without labels), then statement and relation."""
    run, rows = ev.run, []
    predicted = None if run.choices is None else choice_run.predicted_letters(run.choices)
    gold = None if run.choices is None else run.choices.gold
    for i in range(run.n):
        c = None if ev.correct is None else bool(ev.correct[i])
        dep = bool(ev.dep[i])
        rows.append({
            "model": run.model, "dataset": run.dataset, "interface": run.interface,
            "item_id": str(run.item_ids[i]), "group_id": None if run.group_ids is None else run.group_ids[i],
            "label": (None if gold is None else str(gold[i])) if run.choices is not None else
            (None if run.labels is None else ("yes" if run.labels[i] else "no")),
            "pred": str(predicted[i]) if predicted is not None else ("yes" if ev.direction[i] > 0 else "no"),
            "correct": c, "g_img": float(ev.gap[i]),
            "dep": dep, "dcc": None if c is None else c and dep, "cu": None if c is None else c and not dep,
            "wrong_dep": None if c is None else (not c) and dep,
            "statement": None if run.group_ids is None or run.group_ids[i] is None or run.statements is None
            else ("true" if run.statements[i] else "false"),
            "relation": None if run.relations is None else run.relations[i],
        })
    return rows


def group_rows(ev: RunEvents) -> list[dict[str, Any]]:
    """``groups.csv`` rows: model, dataset, interface, group_id, h_o, h_t, h_b, g_int, rel_o, pair_credit,
    pair_d, joint (h_t/h_b empty when text/blank is not a control)."""
    g, run = ev.groups, ev.run
    if g is None:
        return []
    nan = np.full(g.n_groups, np.nan)
    h_t, h_b = g.h.get("text", nan), g.h.get("blank", nan)
    return [{"model": run.model, "dataset": run.dataset, "interface": run.interface,
             "group_id": str(g.group_ids[k]), "h_o": float(g.h["original"][k]), "h_t": float(h_t[k]),
             "h_b": float(h_b[k]), "g_int": float(g.g_int[k]), "rel_o": bool(g.rel["original"][k]),
             "pair_credit": bool(g.pair_credit[k]), "pair_d": bool(g.pair_d[k]), "joint": bool(g.joint[k])}
            for k in range(g.n_groups)]
