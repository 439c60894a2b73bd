"""vlaudit: does a vision-language model use the *pairing* of image and text, or only its parts?

Data flow (one folder per stage; each imports only the stages before it, see docs/architecture.md):
sources (file formats) → builders (cycles, pairs, factorial, edits) → contexts → backends (models)
→ scoring (runner, cache) → metrics and stats → analysis (the papers' experiments, the VCA report engine)
→ report (rendering); reference (planted models), demo, api; ``cli.py`` is a thin shell.

The public API below is imported lazily: ``import vlaudit`` loads neither numpy nor torch; each name loads its
module on first use. Cycles (cycle paper): :func:`cycle_contrast`, :func:`cycle_credit`, :func:`cycle_acc`,
:func:`evaluate_cycles`, :func:`build_cycles`, :func:`read_cycles`, :func:`extract_features`,
:func:`features_from_arrays`, :func:`zero_shot_scores`, :func:`run_synthetic`; the cycle-paper experiments
:func:`load_seed_inputs` → :func:`run_diagnostics`, :func:`run_rank_sweep`, :func:`run_oe`, :func:`run_transfer`;
:func:`audit_pairs` for any benchmark's negatives. The demo and report: :func:`run_demo`, :func:`write_report`.
Visual Credit Audit:
:func:`load_model`, :func:`score_margins`, :func:`score_dual_margins`, :func:`vca_report`, :func:`factorial`.
Run specs, shared with the CLI: :class:`ScoreSpec`, :class:`DualScoreSpec`, :class:`FeaturesSpec`,
:class:`CycleScoreSpec` (:func:`score_cycles_mllm` takes the last). Errors:
:class:`InputError` (bad input, naming file, record and field), :class:`VlauditError`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from vlaudit.version import __version__

# public name -> "module:attribute"
_EXPORTS: dict[str, str] = {
    "cycle_contrast": "vlaudit.metrics.cycles:cycle_contrast",
    "cycle_credit": "vlaudit.metrics.cycles:cycle_credit",
    "cycle_acc": "vlaudit.metrics.cycles:cycle_acc",
    "evaluate_cycles": "vlaudit.api.cycles:evaluate_cycles",
    "build_cycles": "vlaudit.api.cycles:build_cycles",
    "read_cycles": "vlaudit.sources.cycle_tables:read_cycles",
    "load_model": "vlaudit.api.cycles:load_model",
    "extract_features": "vlaudit.api.runs:extract_features",
    "features_from_arrays": "vlaudit.api.cycles:features_from_arrays",
    "zero_shot_scores": "vlaudit.api.cycles:zero_shot_scores",
    "run_synthetic": "vlaudit.analysis.cycles.synthetic:run_synthetic",
    "load_seed_inputs": "vlaudit.analysis.cycles.inputs:load_seed_inputs",
    "run_diagnostics": "vlaudit.analysis.cycles.diagnostics:run_diagnostics",
    "run_rank_sweep": "vlaudit.analysis.cycles.rank_sweep:run_rank_sweep",
    "run_oe": "vlaudit.analysis.cycles.oe:run_oe",
    "run_transfer": "vlaudit.analysis.cycles.transfer:run_transfer",
    "audit_pairs": "vlaudit.metrics.pair_audit:audit_pairs",
    "run_demo": "vlaudit.demo.pipeline:run_demo",
    "write_report": "vlaudit.report.html:write_report",
    "score_margins": "vlaudit.api.runs:score_margins",
    "score_dual_margins": "vlaudit.api.runs:score_dual_margins",
    "score_cycles_mllm": "vlaudit.api.runs:score_cycles_mllm",
    "ScoreSpec": "vlaudit.scoring.run_spec:ScoreSpec",
    "DualScoreSpec": "vlaudit.scoring.run_spec:DualScoreSpec",
    "FeaturesSpec": "vlaudit.scoring.run_spec:FeaturesSpec",
    "CycleScoreSpec": "vlaudit.scoring.run_spec:CycleScoreSpec",
    "vca_report": "vlaudit.api.vca:vca_report",
    "compare_vca": "vlaudit.api.compare:compare_vca",
    "compare_cycles": "vlaudit.api.compare:compare_cycles",
    "factorial": "vlaudit.api.vca:factorial",
    "Result": "vlaudit.api.results:Result",
    "InputError": "vlaudit.errors:InputError",
    "VlauditError": "vlaudit.errors:VlauditError",
}

__all__ = [
    "__version__",
    "cycle_contrast",
    "cycle_credit",
    "cycle_acc",
    "evaluate_cycles",
    "build_cycles",
    "read_cycles",
    "load_model",
    "extract_features",
    "features_from_arrays",
    "zero_shot_scores",
    "run_synthetic",
    "load_seed_inputs",
    "run_diagnostics",
    "run_rank_sweep",
    "run_oe",
    "run_transfer",
    "audit_pairs",
    "run_demo",
    "write_report",
    "score_margins",
    "score_dual_margins",
    "score_cycles_mllm",
    "ScoreSpec",
    "DualScoreSpec",
    "FeaturesSpec",
    "CycleScoreSpec",
    "vca_report",
    "compare_vca",
    "compare_cycles",
    "factorial",
    "Result",
    "InputError",
    "VlauditError",
]

if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names resolve lazily below
    from vlaudit.analysis.cycles.diagnostics import run_diagnostics
    from vlaudit.analysis.cycles.inputs import load_seed_inputs
    from vlaudit.analysis.cycles.oe import run_oe
    from vlaudit.analysis.cycles.rank_sweep import run_rank_sweep
    from vlaudit.analysis.cycles.synthetic import run_synthetic
    from vlaudit.analysis.cycles.transfer import run_transfer
    from vlaudit.api.compare import compare_cycles, compare_vca
    from vlaudit.api.cycles import (
        build_cycles,
        evaluate_cycles,
        features_from_arrays,
        load_model,
        zero_shot_scores,
    )
    from vlaudit.api.results import Result
    from vlaudit.api.runs import extract_features, score_cycles_mllm, score_dual_margins, score_margins
    from vlaudit.api.vca import factorial, vca_report
    from vlaudit.demo.pipeline import run_demo
    from vlaudit.errors import InputError, VlauditError
    from vlaudit.metrics.cycles import cycle_acc, cycle_contrast, cycle_credit
    from vlaudit.metrics.pair_audit import audit_pairs
    from vlaudit.report.html import write_report
    from vlaudit.scoring.run_spec import CycleScoreSpec, DualScoreSpec, FeaturesSpec, ScoreSpec
    from vlaudit.sources.cycle_tables import read_cycles


def __getattr__(name: str) -> Any:
    target = _EXPORTS.get(name)
    if target is None:
        raise AttributeError(f"module 'vlaudit' has no attribute {name!r}")
    module_name, attribute = target.split(":")
    value = getattr(importlib.import_module(module_name), attribute)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
