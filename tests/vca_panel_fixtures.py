"""Multi-model MARGINS tables with planted answers for the §15/§16/§18 analyses (not a test module).

:func:`panel_rows` builds one relation-group benchmark scored by several models. Group g has a true statement
``g<g>-t`` (gold yes) and a false one ``g<g>-f`` (gold no) and a latent strength v_g ∈ (0, 1]:

* true statement: m_o = s·(0.5 + v_g), m_t = s·0.2, m_b = −s·0.3 → G_img = s·(0.3 + v_g) > 0, increasing in v_g
* false statement: m_o = −s·(0.5 + v_g) when v_g > ½ (rejected: Rel_o holds) else +s·0.1 (accepted)
* ``mean``/``mismatch``/``rele``/``irre`` contexts as given by ``extra`` (default: none)

s is a per-model scale, so raw gaps are not comparable across models while within-model ranks are.
:func:`edit_rows` plants edit outcomes that the source true statement's gap ranks perfectly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

MODELS = ("alpha", "beta", "gamma", "delta")
SCALES = {"alpha": 1.0, "beta": 3.0, "gamma": 0.5, "delta": 7.0}


def strengths(n_groups: int, seed: int = 0) -> np.ndarray:
    """Distinct latent strengths in (0, 1], shuffled over groups."""
    rng = np.random.default_rng(seed)
    return rng.permutation(np.arange(1, n_groups + 1) / n_groups)


def panel_rows(n_groups: int = 12, models: Sequence[str] = MODELS, *, dataset: str = "gsr", seed: int = 0,
               strength: Callable[[str, np.ndarray], np.ndarray] | None = None,
               extra: Callable[[str, np.ndarray, float], dict[str, tuple[float, float]]] | None = None,
               relations: Sequence[str] = ("left of", "above"), split: str | None = None) -> list[dict[str, Any]]:
    """Long MARGINS rows (see the module docstring); ``strength(model, v)`` may alter v per model and
    ``extra(model, v_g, scale)`` returns {context: (true margin, false margin)} for more contexts."""
    v_all = strengths(n_groups, seed)
    rows = []
    for model in models:
        s = SCALES.get(model, 1.0)
        v = v_all if strength is None else strength(model, v_all)
        for g in range(n_groups):
            true_m = {"original": s * (0.5 + v[g]), "text": s * 0.2, "blank": -s * 0.3}
            false_m = {"original": -s * (0.5 + v[g]) if v[g] > 0.5 else s * 0.1, "text": -s * 0.2, "blank": -s * 0.3}
            if extra is not None:
                for c, (mt, mf) in extra(model, v[g], s).items():
                    true_m[c], false_m[c] = mt, mf
            for suffix, label, statement, m in (("t", "yes", "true", true_m), ("f", "no", "false", false_m)):
                for context, margin in m.items():
                    rows.append({"model": model, "dataset": dataset, "item_id": f"g{g:03d}-{suffix}",
                                 "context": context, "interface": "yesno", "margin": float(margin), "label": label,
                                 "group_id": f"g{g:03d}", "statement": statement,
                                 "relation": relations[g % len(relations)]} | ({} if split is None else {"split": split}))
    return rows


def edit_rows(n_groups: int = 12, models: Sequence[str] = MODELS, *, seed: int = 0,
              outcome: Callable[[float], bool] | None = None) -> list[dict[str, Any]]:
    """One ``edit_outcomes.csv`` row per (model, group): flip_vis = strict = v_g > ½ by default."""
    v = strengths(n_groups, seed)
    outcome = outcome or (lambda x: x > 0.5)
    return [{"model": model, "edit_id": f"e{g:03d}", "source_item_id": f"g{g:03d}-t",
             "rel": int(outcome(v[g])), "flip_vis": int(outcome(v[g])), "strict": int(outcome(v[g]) and v[g] > 0.5),
             "rel_o": int(v[g] > 0.5)}
            for model in models for g in range(n_groups)]
