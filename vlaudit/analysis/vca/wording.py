"""Agreement of each wording with the canonical one (VCA §18, "Additional fixed-200 VSR wording diagnostics").

Inputs: the runs of ``vca score`` over the wording ITEMS (:mod:`vlaudit.builders.wording`: three items per
drawn VSR row, ``extra.wording`` canonical or synonym, ``extra.source_id`` the row) and, optionally, runs of
the canonical items scored again under another system message (the paper's Qwen System row, scored with
``vca score --system qwen-neutral``). Per item, under the headline controls (VCA §3): the prediction d (the
sign of m_o), Dep (credit: G_img > 0), correctness and D-CC.

* **Paraphrase row** (per model): Acc and D-CC over every scored wording instance ("Paraphrase rows pool 600
  query instances"); **Pred.** = the mean over the two synonyms of the share of rows whose synonym prediction
  equals the canonical prediction; **Credit** the same for Dep ("agreement averages the two synonyms
  against the canonical wording"). Each synonym's own agreement is kept in ``synonyms``.
* **System row** (per model of the second runs): Acc and D-CC of the canonical items under the other system
  message; Pred./Credit = the share of items whose prediction / Dep equals the default run's.

Rows need both the canonical item and the compared item scored (after headline exclusions); n counts them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from vlaudit.analysis.vca.scored_runs import RunScores
from vlaudit.errors import InputError


def _events(scores: RunScores) -> dict[str, tuple[bool, bool, bool | None]]:
    """item id → (predicts yes, Dep, correct) of one run."""
    ev = scores.events
    correct = ev.correct if ev.correct is not None else [None] * len(ev.dep)
    return {str(i): (bool(d > 0), bool(dep), None if c is None else bool(c))
            for i, d, dep, c in zip(ev.run.item_ids, ev.direction, ev.dep, correct, strict=True)}


def _rate(values: Sequence[bool]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def _acc_dcc(events: Sequence[tuple[bool, bool, bool | None]]) -> tuple[float | None, float | None]:
    known = [e for e in events if e[2] is not None]
    return _rate([bool(e[2]) for e in known]), _rate([bool(e[2]) and e[1] for e in known])


def paraphrase_rows(scores: Sequence[RunScores], wording: Mapping[str, tuple[str, str]]) -> list[dict[str, Any]]:
    """One Paraphrase row per run; ``wording`` maps item id → (source id, "canonical" | "synonym")."""
    rows = []
    for s in scores:
        events = {i: e for i, e in _events(s).items() if i in wording}
        if not events:
            continue
        canonical = {wording[i][0]: e for i, e in events.items() if wording[i][1] == "canonical"}
        synonyms: dict[int, list[tuple[tuple[bool, bool, bool | None], tuple[bool, bool, bool | None]]]] = {}
        rank: dict[str, int] = {}
        for i in sorted(events):
            source, kind = wording[i]
            if kind != "synonym" or source not in canonical:
                continue
            k = rank[source] = rank.get(source, 0) + 1
            synonyms.setdefault(k, []).append((events[i], canonical[source]))
        per_synonym = [{"synonym": k, "n": len(pairs), "pred": _rate([a[0] == b[0] for a, b in pairs]),
                        "credit": _rate([a[1] == b[1] for a, b in pairs])} for k, pairs in sorted(synonyms.items())]
        acc, dcc = _acc_dcc(list(events.values()))
        rows.append({"form": "Paraphrase", "model": s.run.model, "dataset": s.run.dataset, "n": len(events),
                     "n_sources": len(canonical), "acc": acc, "dcc": dcc,
                     "pred": _mean([r["pred"] for r in per_synonym]),
                     "credit": _mean([r["credit"] for r in per_synonym]), "synonyms": per_synonym})
    return rows


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


def system_rows(default: Sequence[RunScores], other: Sequence[RunScores],
                wording: Mapping[str, tuple[str, str]]) -> list[dict[str, Any]]:
    """One System row per run of ``other``, against the default run of the same model and dataset."""
    by_key = {(s.run.model, s.run.dataset): s for s in default}
    rows = []
    for s in other:
        base = by_key.get((s.run.model, s.run.dataset))
        if base is None:
            raise InputError(f"model {s.run.model!r} on {s.run.dataset!r} has a system run but no default run",
                             field="model")
        mine, theirs = _events(s), _events(base)
        shared = [i for i in sorted(mine) if i in theirs and wording.get(i, ("", "canonical"))[1] == "canonical"]
        acc, dcc = _acc_dcc([mine[i] for i in shared])
        rows.append({"form": "System", "model": s.run.model, "dataset": s.run.dataset, "n": len(shared),
                     "n_sources": len(shared), "acc": acc, "dcc": dcc,
                     "pred": _rate([mine[i][0] == theirs[i][0] for i in shared]),
                     "credit": _rate([mine[i][1] == theirs[i][1] for i in shared]), "synonyms": []})
    return rows
