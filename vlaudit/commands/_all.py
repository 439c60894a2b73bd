"""Every command module: importing this one registers all commands on the groups of :mod:`vlaudit.commands._apps`.

The entry point (:mod:`vlaudit.cli`) and the command-tree reader (:mod:`vlaudit.commands._introspect`) both
import it, so neither imports the other.
"""

from __future__ import annotations

from vlaudit.commands import (  # noqa: F401  (imported for their command registrations)
    compare,
    cycles_build,
    cycles_build_2x2,
    cycles_eval,
    cycles_score_mllm,
    data_inputs,
    data_items,
    data_mcq,
    data_scenes,
    demo,
    edits,
    experiment,
    factorial,
    features,
    giveaway,
    models,
    pair_audit,
    report,
    suite,
    synthetic,
    vca_analyses,
    vca_generate_check,
    vca_report,
    vca_score,
    vca_score_dual,
    vca_stability,
    wording,
)
