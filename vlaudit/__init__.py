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
:func:`audit_pairs` for any benchmark's negatives;
:func:`build_benchmark_items` reads a published benchmark (POPE, MME, MMStar, ...) into ITEMS. Compositionality
suites (ARO, VALSE, COLA, ...): :func:`suites`, :func:`read_suite`, :func:`evaluate_suite` → :class:`SuiteResult`. The demo and report: :func:`run_demo`, :func:`write_report`.
Visual Credit Audit:
:func:`load_model`, :func:`score_margins`, :func:`score_dual_margins`, :func:`vca_report`, :func:`factorial`,
the §18 wording diagnostics :func:`build_wording_items` → :func:`wording_diagnostics`;
:func:`render_mcq_scenes` writes the multiple-choice known-answer benchmark.
Run specs, shared with the CLI: :class:`ScoreSpec`, :class:`DualScoreSpec`, :class:`FeaturesSpec`,
:class:`CycleScoreSpec` (:func:`score_cycles_mllm` takes the last), built from parts: :class:`ModelRef` (a
model spec and its backend's :class:`HfOptions`, :class:`VllmOptions`, :class:`DualOptions`,
:class:`PlantedOptions` or :class:`EndpointOptions`),
:class:`RunOptions` and :class:`RayOptions`. Errors:
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
    "load_seed_inputs": "vlaudit.api.experiment_inputs:load_seed_inputs",
    "run_diagnostics": "vlaudit.analysis.cycles.diagnostics:run_diagnostics",
    "run_rank_sweep": "vlaudit.analysis.cycles.rank_sweep:run_rank_sweep",
    "run_oe": "vlaudit.analysis.cycles.oe:run_oe",
    "run_transfer": "vlaudit.analysis.cycles.transfer:run_transfer",
    "audit_pairs": "vlaudit.metrics.pair_audit:audit_pairs",
    "build_benchmark_items": "vlaudit.api.benchmarks:build_benchmark_items",
    "run_demo": "vlaudit.demo.pipeline:run_demo",
    "write_report": "vlaudit.report.html:write_report",
    "score_margins": "vlaudit.api.runs:score_margins",
    "score_dual_margins": "vlaudit.api.runs:score_dual_margins",
    "score_cycles_mllm": "vlaudit.api.runs:score_cycles_mllm",
    "ScoreSpec": "vlaudit.scoring.run_spec:ScoreSpec",
    "DualScoreSpec": "vlaudit.scoring.run_spec:DualScoreSpec",
    "FeaturesSpec": "vlaudit.scoring.run_spec:FeaturesSpec",
    "CycleScoreSpec": "vlaudit.scoring.run_spec:CycleScoreSpec",
    "ModelRef": "vlaudit.backends.registry:ModelRef",
    "model_ref": "vlaudit.backends.model_options:model_ref",
    "HfOptions": "vlaudit.backends.options:HfOptions",
    "EndpointOptions": "vlaudit.backends.options:EndpointOptions",
    "DualOptions": "vlaudit.backends.options:DualOptions",
    "PlantedOptions": "vlaudit.backends.options:PlantedOptions",
    "VllmOptions": "vlaudit.backends.options:VllmOptions",
    "RunOptions": "vlaudit.backends.options:RunOptions",
    "RayOptions": "vlaudit.scoring.run_parts:RayOptions",
    "vca_report": "vlaudit.api.vca:vca_report",
    "render_mcq_scenes": "vlaudit.builders.mcq_scenes:render_mcq_scenes",
    "compare_vca": "vlaudit.api.compare:compare_vca",
    "compare_cycles": "vlaudit.api.compare:compare_cycles",
    "factorial": "vlaudit.api.vca:factorial",
    "build_wording_items": "vlaudit.api.wording:build_wording_items",
    "wording_diagnostics": "vlaudit.api.wording:wording_diagnostics",
    "measure_stability": "vlaudit.api.stability:measure_stability",
    "generate_check": "vlaudit.api.stability:generate_check",
    "Result": "vlaudit.api.results:Result",
    "InputError": "vlaudit.errors:InputError",
    "VlauditError": "vlaudit.errors:VlauditError",
    # the command line's twins: each command of vlaudit/commands/ calls one of these
    "audit_cycles": "vlaudit.api.cycle_files:audit_cycles",
    "audit_pair_files": "vlaudit.api.cycle_files:audit_pair_files",
    "benchmark_giveaway": "vlaudit.api.giveaway:benchmark_giveaway",
    "write_zero_shot_scores": "vlaudit.api.cycle_files:write_zero_shot_scores",
    "GeometryRules": "vlaudit.builders.cycles.rules:GeometryRules",
    "GQA_SWAP_REASONS": "vlaudit.builders.cycles.gqa_rules:REASONS",
    "build_vsr_items": "vlaudit.api.data:build_vsr_items",
    "build_vsr_inverse_items": "vlaudit.api.data:build_vsr_inverse_items",
    "build_gsr_coco_items": "vlaudit.api.data:build_gsr_coco_items",
    "build_whatsup_items": "vlaudit.api.data:build_whatsup_items",
    "render_scenes": "vlaudit.builders.scenes:render_scenes",
    "build_factorial": "vlaudit.builders.factorial:build_factorial",
    "build_edits": "vlaudit.api.edits:build_edits",
    "export_annotations": "vlaudit.api.edits:export_annotations",
    "import_annotations": "vlaudit.api.edits:import_annotations",
    "analyze_edits": "vlaudit.api.edits:analyze_edits",
    "vca_validity": "vlaudit.api.analyses:vca_validity",
    "vca_filter": "vlaudit.api.analyses:vca_filter",
    "vca_proxies": "vlaudit.api.analyses:vca_proxies",
    "build_tiny_model": "vlaudit.api.models:build_tiny_model",
    "model_registry": "vlaudit.api.model_registry:model_registry",
    "verbalizers": "vlaudit.api.models:verbalizers",
    "train_reference": "vlaudit.api.models:train_reference",
    "run_experiment": "vlaudit.api.experiments:run_experiment",
    "ExperimentRun": "vlaudit.api.experiments:ExperimentRun",
    "CycleBuildSummary": "vlaudit.results.cycles:CycleBuildSummary",
    "CycleAudit": "vlaudit.results.cycles:CycleAudit",
    "DemoScorer": "vlaudit.results.demo:DemoScorer",
    "ExperimentConfig": "vlaudit.analysis.cycles.experiment:ExperimentConfig",
    "synthetic_controls": "vlaudit.api.experiments:synthetic_controls",
    "SyntheticConfig": "vlaudit.analysis.cycles.synthetic:SyntheticConfig",
    "DemoConfig": "vlaudit.demo.config:DemoConfig",
    "backend_kind": "vlaudit.backends.registry:backend_kind",
    # console rendering (80 columns) of the results above
    "print_table": "vlaudit.report.console:print_table",
    "print_cycle_table": "vlaudit.report.console:print_cycle_table",
    "print_unavailable": "vlaudit.report.console:print_unavailable",
    "print_benchmark_tables": "vlaudit.report.console:print_benchmark_tables",
    "print_validity": "vlaudit.report.vca_analyses:print_validity",
    "print_filter": "vlaudit.report.vca_analyses:print_filter",
    "print_proxies": "vlaudit.report.vca_analyses:print_proxies",
    "print_giveaway": "vlaudit.report.giveaway:print_giveaway",
    # checks the command line applies as an option is parsed (light modules: `vlaudit --help` loads them)
    "check_folder_target": "vlaudit.files:check_folder_target",
    "check_file_target": "vlaudit.files:check_file_target",
    "normalize_context": "vlaudit.sources.margins:normalize_context",
    "parse_dtype": "vlaudit.backends.dtypes:parse_dtype",
    "DTYPE_HELP": "vlaudit.backends.dtypes:DTYPE_HELP",
    "TINY_FAMILIES": "vlaudit.backends.tiny_families:TINY_FAMILIES",
    "family_label": "vlaudit.builders.cycles.build_steps:family_label",
    "CocoCaps": "vlaudit.builders.cycles.coco:CocoCaps",
    # the compositionality suites
    "suites": "vlaudit.api.suites:suites",
    "read_suite": "vlaudit.api.suites:read_suite",
    "evaluate_suite": "vlaudit.api.suites:evaluate_suite",
    "load_suite_result": "vlaudit.api.suites:load_suite_result",
    "SuiteResult": "vlaudit.results.suites:SuiteResult",
    "print_suites": "vlaudit.report.suites:print_suites",
    "print_suite_result": "vlaudit.report.suites:print_suite_result",
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
    "build_benchmark_items",
    "run_demo",
    "write_report",
    "score_margins",
    "score_dual_margins",
    "score_cycles_mllm",
    "ScoreSpec",
    "DualScoreSpec",
    "FeaturesSpec",
    "CycleScoreSpec",
    "ModelRef",
    "model_ref",
    "HfOptions",
    "EndpointOptions",
    "DualOptions",
    "PlantedOptions",
    "VllmOptions",
    "RunOptions",
    "RayOptions",
    "vca_report",
    "render_mcq_scenes",
    "compare_vca",
    "compare_cycles",
    "factorial",
    "build_wording_items",
    "wording_diagnostics",
    "measure_stability",
    "generate_check",
    "Result",
    "InputError",
    "VlauditError",
    "audit_cycles",
    "audit_pair_files",
    "benchmark_giveaway",
    "write_zero_shot_scores",
    "GeometryRules",
    "GQA_SWAP_REASONS",
    "build_vsr_items",
    "build_vsr_inverse_items",
    "build_gsr_coco_items",
    "build_whatsup_items",
    "render_scenes",
    "build_factorial",
    "build_edits",
    "export_annotations",
    "import_annotations",
    "analyze_edits",
    "vca_validity",
    "vca_filter",
    "vca_proxies",
    "build_tiny_model",
    "model_registry",
    "verbalizers",
    "train_reference",
    "run_experiment",
    "ExperimentRun",
    "CycleBuildSummary",
    "CycleAudit",
    "DemoScorer",
    "ExperimentConfig",
    "synthetic_controls",
    "SyntheticConfig",
    "DemoConfig",
    "backend_kind",
    "print_table",
    "print_cycle_table",
    "print_unavailable",
    "print_benchmark_tables",
    "print_validity",
    "print_filter",
    "print_proxies",
    "print_giveaway",
    "check_folder_target",
    "check_file_target",
    "normalize_context",
    "parse_dtype",
    "DTYPE_HELP",
    "TINY_FAMILIES",
    "family_label",
    "CocoCaps",
    "suites",
    "read_suite",
    "evaluate_suite",
    "load_suite_result",
    "SuiteResult",
    "print_suites",
    "print_suite_result",
]

if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names resolve lazily below
    from vlaudit.analysis.cycles.diagnostics import run_diagnostics
    from vlaudit.analysis.cycles.experiment import ExperimentConfig
    from vlaudit.analysis.cycles.oe import run_oe
    from vlaudit.analysis.cycles.rank_sweep import run_rank_sweep
    from vlaudit.analysis.cycles.synthetic import SyntheticConfig, run_synthetic
    from vlaudit.analysis.cycles.transfer import run_transfer
    from vlaudit.api.analyses import vca_filter, vca_proxies, vca_validity
    from vlaudit.api.benchmarks import build_benchmark_items
    from vlaudit.api.compare import compare_cycles, compare_vca
    from vlaudit.api.cycle_files import audit_cycles, audit_pair_files, write_zero_shot_scores
    from vlaudit.api.cycles import (
        build_cycles,
        evaluate_cycles,
        features_from_arrays,
        load_model,
        zero_shot_scores,
    )
    from vlaudit.api.data import (
        build_gsr_coco_items,
        build_vsr_inverse_items,
        build_vsr_items,
        build_whatsup_items,
    )
    from vlaudit.api.edits import analyze_edits, build_edits, export_annotations, import_annotations
    from vlaudit.api.experiment_inputs import load_seed_inputs
    from vlaudit.api.experiments import ExperimentRun, run_experiment, synthetic_controls
    from vlaudit.api.giveaway import benchmark_giveaway
    from vlaudit.api.model_registry import model_registry
    from vlaudit.api.models import build_tiny_model, train_reference, verbalizers
    from vlaudit.api.results import Result
    from vlaudit.api.runs import extract_features, score_cycles_mllm, score_dual_margins, score_margins
    from vlaudit.api.stability import generate_check, measure_stability
    from vlaudit.api.suites import evaluate_suite, load_suite_result, read_suite, suites
    from vlaudit.api.vca import factorial, vca_report
    from vlaudit.api.wording import build_wording_items, wording_diagnostics
    from vlaudit.backends.dtypes import DTYPE_HELP, parse_dtype
    from vlaudit.backends.model_options import model_ref
    from vlaudit.backends.options import (
        DualOptions,
        EndpointOptions,
        HfOptions,
        PlantedOptions,
        RunOptions,
        VllmOptions,
    )
    from vlaudit.backends.registry import ModelRef, backend_kind
    from vlaudit.backends.tiny_families import TINY_FAMILIES
    from vlaudit.builders.cycles.build_steps import family_label
    from vlaudit.builders.cycles.coco import CocoCaps
    from vlaudit.builders.cycles.gqa_rules import REASONS as GQA_SWAP_REASONS
    from vlaudit.builders.cycles.rules import GeometryRules
    from vlaudit.builders.factorial import build_factorial
    from vlaudit.builders.mcq_scenes import render_mcq_scenes
    from vlaudit.builders.scenes import render_scenes
    from vlaudit.demo.config import DemoConfig
    from vlaudit.demo.pipeline import run_demo
    from vlaudit.errors import InputError, VlauditError
    from vlaudit.files import check_file_target, check_folder_target
    from vlaudit.metrics.cycles import cycle_acc, cycle_contrast, cycle_credit
    from vlaudit.metrics.pair_audit import audit_pairs
    from vlaudit.report.console import (
        print_benchmark_tables,
        print_cycle_table,
        print_table,
        print_unavailable,
    )
    from vlaudit.report.giveaway import print_giveaway
    from vlaudit.report.html import write_report
    from vlaudit.report.suites import print_suite_result, print_suites
    from vlaudit.report.vca_analyses import print_filter, print_proxies, print_validity
    from vlaudit.results.cycles import CycleAudit, CycleBuildSummary
    from vlaudit.results.demo import DemoScorer
    from vlaudit.results.suites import SuiteResult
    from vlaudit.scoring.run_parts import RayOptions
    from vlaudit.scoring.run_spec import CycleScoreSpec, DualScoreSpec, FeaturesSpec, ScoreSpec
    from vlaudit.sources.cycle_tables import read_cycles
    from vlaudit.sources.margins import normalize_context


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
