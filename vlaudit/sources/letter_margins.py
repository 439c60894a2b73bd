"""Letter-interface rows of a MARGINS table: the option letters' log-probabilities per item and context.

A row of ``interface == "letter"`` carries ``logp_options`` (log p of A, B, ... from one forward, in letter
order; JSON list or Parquet list) and, optionally, ``option_letters`` (``"ABCD"``, which must match the list's
length) and the gold letter in ``label``. :func:`vlaudit.sources.margins.read_margins` collects them into a
:class:`LetterChoices` on the run; the multiple-choice audit
(:mod:`vlaudit.metrics.vca.choice`, :mod:`vlaudit.analysis.vca.choice_run`) turns them into the prediction-aligned support of VCA §3.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from vlaudit.errors import InputError
from vlaudit.sources.items import option_letters

#: options lettered A..Z at most (:func:`~vlaudit.sources.items.option_letters`)
MAX_OPTIONS = 26

LETTER_INTERFACE = "letter"

#: the largest |value| a margin, NLL or log-probability may hold. No model computing in float32, bfloat16 or
#: float16 writes one beyond ±3.4e38 (float32's largest), while values near float64's ±1.8e308 overflow to inf
#: as soon as the report takes a difference (G_img = r_o − max r_c, a letter's lead over the next option) or
#: a sum; 1e100 leaves every such difference, square and sum over any table finite.
MAX_ABS_LOG_VALUE = 1e100


@dataclass(frozen=True)
class LetterChoices:
    """The option log-probs of a letter run, aligned with its items.

    ``logp[c]`` is (n, K) float64 with K the run's largest option count: row i holds log p_c of item i's
    letters and NaN beyond its own ``n_options[i]`` (and on a row whose item lacks context c). ``gold`` holds
    each item's gold letter (None without labels).
    """

    letters: tuple[str, ...]
    n_options: np.ndarray
    logp: Mapping[str, np.ndarray]
    gold: np.ndarray | None = None

    def subset(self, mask: np.ndarray) -> LetterChoices:
        return replace(self, n_options=self.n_options[mask], logp={c: v[mask] for c, v in self.logp.items()},
                       gold=None if self.gold is None else self.gold[mask])


def row_logps(row: Mapping[str, Any], *, path: str | Path, record: str) -> tuple[float, ...]:
    """The finite ``logp_options`` of one letter row (at least two), checked against ``option_letters``."""
    raw = row.get("logp_options")
    values = raw.tolist() if raw is not None and hasattr(raw, "tolist") else raw
    if not isinstance(values, (list, tuple)) or len(values) < 2:
        raise InputError("a letter row needs logp_options: a list of at least two log-probabilities", path=path,
                         record=record, field="logp_options")
    if len(values) > MAX_OPTIONS:
        raise InputError(f"{len(values)} log-probabilities, but at most {MAX_OPTIONS} options are lettered (A–Z)",
                         path=path, record=record, field="logp_options")
    out = []
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise InputError(f"not a finite log-probability: {value!r}", path=path, record=record,
                             field="logp_options")
        if abs(value) > MAX_ABS_LOG_VALUE:
            raise InputError(too_large(value), path=path, record=record, field="logp_options")
        out.append(float(value))
    letters = row.get("option_letters")
    if letters not in (None, "") and str(letters) != "".join(option_letters(len(out))):
        raise InputError(f"option_letters {letters!r} do not match {len(out)} log-probabilities", path=path,
                         record=record, field="option_letters")
    return tuple(out)


def too_large(value: float) -> str:
    """The refusal of a finite value beyond :data:`MAX_ABS_LOG_VALUE` (differences of it would overflow)."""
    return (f"{value!r} is beyond ±{MAX_ABS_LOG_VALUE:g}, where differences overflow float64; no model's log-prob "
            "or margin reaches it (rescale or fix the writer)")


def letter_label(value: object, k: int, *, path: str | Path, record: str) -> str | None:
    """The gold letter of a letter row (None when unlabelled); it must be one of the item's letters."""
    if value is None or (isinstance(value, str) and value.strip() == ""):
        return None
    letter = str(value).strip().upper()
    if letter not in option_letters(k):
        raise InputError(f"label {value!r} is not one of the option letters {''.join(option_letters(k))}",
                         path=path, record=record, field="label")
    return letter


def build_choices(ids: Sequence[str], per_item: Sequence[Mapping[str, tuple[float, ...]]],
                  gold: Sequence[str | None], contexts: Sequence[str], run_name: str, *,
                  path: str | Path) -> LetterChoices:
    """Pivot the items' per-context log-probs into :class:`LetterChoices`; an item whose contexts disagree on
    the number of options, or a run labelled for only some items, is an error."""
    counts = []
    for item_id, logps in zip(ids, per_item, strict=True):
        sizes = {len(v) for v in logps.values()}
        if len(sizes) != 1:
            raise InputError(f"item {item_id!r} of {run_name} has a different number of options per context "
                             f"({sorted(sizes)})", path=path, field="logp_options")
        counts.append(sizes.pop())
    k = max(counts)
    logp = {}
    for context in contexts:
        table = np.full((len(ids), k), np.nan)
        for i, logps in enumerate(per_item):
            if context in logps:
                table[i, :counts[i]] = logps[context]
        logp[context] = table
    labelled = [g is not None for g in gold]
    if any(labelled) and not all(labelled):
        missing = [i for i, ok in zip(ids, labelled, strict=True) if not ok]
        raise InputError(f"label is missing for {len(missing)} of {len(ids)} items of {run_name} (give every "
                         f"item a label or none): {missing[0]!r}", path=path, field="label")
    return LetterChoices(letters=option_letters(k), n_options=np.array(counts, dtype=np.int64), logp=logp,
                         gold=np.array(gold, dtype=object) if any(labelled) else None)
